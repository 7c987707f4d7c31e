/**
 * `Identicon` of `'util'` (docs/scripting.md "The `'util'` module"): an inline SVG made here, the
 * same for the same text, shown raw by `{{% show }}` and `{{{ }}}` and escaped by `{{ }}`, with
 * nothing the page's policy must allow.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { serve, type Served } from '../helpers.js';

const M = '<!--TEMPLATE mustache-->\n';
const APP = {
  '📤/Info.js': [
    "import {Identicon} from 'util';",
    "const info = {icon: Identicon.of('handbook'), other: Identicon.of('wicks'), fresh: Identicon.random()};",
    'export {info as Info};',
    '',
  ].join('\n'),
  'index.html': `${M}{{% import {Info} from '📤' }}<div>{{% show Info.icon }}</div><p>{{{Info.other}}}</p><i>{{Info.fresh}}</i>\n`,
  'icons/GET.js': [
    "import {Identicon} from 'util';",
    "import {s} from '&';",
    '({of: String(Identicon.of(s)), again: String(Identicon.of(s)), random: String(Identicon.random()), random2: String(Identicon.random())});',
    '',
  ].join('\n'),
};

const SVG = /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg" class="identicon" width="64" height="64" viewBox="0 0 7 7" role="img" aria-hidden="true"><rect width="7" height="7" fill="#f0f0f0"\/>(<path fill="hsl\(\d+,\d+%,\d+%\)" d="(M\d \dh1v1h-1z)+"\/>)?<\/svg>$/;

/** The 5×5 grid an identicon's path draws, as rows of `#` and `.`. */
function grid(svg: string): string[] {
  const on = new Set([...svg.matchAll(/M(\d) (\d)h1v1h-1z/g)].map((m) => `${m[1]},${m[2]}`));
  return [1, 2, 3, 4, 5].map((y) => [1, 2, 3, 4, 5].map((x) => (on.has(`${x},${y}`) ? '#' : '.')).join(''));
}

describe("'util' Identicon", () => {
  let s: Served;
  before(async () => {
    s = await serve(APP);
  });
  after(() => s.close());

  const icons = async (text: string) => JSON.parse((await s.get(`/icons?s=${encodeURIComponent(text)}`, { Accept: 'application/json' })).text) as Record<string, string>;

  it('Identicon.of(s) is an SVG, the same for the same text, mirrored left to right; other texts differ', async () => {
    const a = await icons('handbook');
    assert.match(a.of!, SVG);
    assert.equal(a.of, a.again);
    assert.equal(a.of, (await icons('handbook')).of, 'the same in another request');
    for (const row of grid(a.of!)) assert.equal(row, [...row].reverse().join(''), 'symmetric');
    const seen = new Set<string>();
    for (const t of ['handbook', 'wicks', 'flame', 'oil', 'lantern', '']) seen.add((await icons(t)).of!);
    assert.ok(seen.size >= 5, `distinct identicons for distinct texts: ${seen.size}`);
  });

  it('Identicon.random() differs from call to call', async () => {
    const a = await icons('x');
    assert.match(a.random!, SVG);
    assert.notEqual(a.random, a.random2);
  });

  it('shows inline in views, raw in {{% show }} and {{{ }}}, escaped in {{ }}, with no change to the policy', async () => {
    const r = await s.get('/');
    assert.equal(r.status, 200);
    assert.equal(r.text.match(/<svg /g)?.length, 2, r.text);
    assert.match(r.text, /<div><svg [^>]*class="identicon"/);
    assert.match(r.text, /<p><svg [^>]*class="identicon"/);
    assert.match(r.text, /<i>&lt;svg /);
    const policy = String(r.headers['content-security-policy']);
    assert.match(policy, /style-src 'none'/, 'presentation attributes only: no style needs allowing');
    assert.match(policy, /img-src 'self'(;|$)/);
  });
});
