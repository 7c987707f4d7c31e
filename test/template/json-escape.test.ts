// JSON escaping of values inside JSON data blocks (docs/views.md "Values for scripts and styles"),
// as units: the runtime's escapers, and views compiled with the page pass (which marks each tag of
// a data block with its escaping), with plain, Promise and web-safe values. Over HTTP:
// test/csp/contexts.test.ts.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PolicyCompiler } from '../../src/csp/index.js';
import { DiagnosticList, formatDiagnostic } from '../../src/diag/index.js';
import { WebSafe } from '../../src/shared/index.js';
import { compileView } from '../../src/template/index.js';
import { jsonStringBody, jsonValue, scriptSafeJson } from '../../src/template/runtime.js';
import { MARKER, memoryTree } from './helpers.js';

describe('the escapers', () => {
  it('write <, >, &, U+2028 and U+2029 as \\u escapes', () => {
    assert.equal(scriptSafeJson('"</script><!--&\u2028\u2029"'), '"\\u003c/script\\u003e\\u003c!--\\u0026\\u2028\\u2029"');
  });

  it('a string body escapes quotes, backslashes and control characters, without quotes around it', () => {
    assert.equal(jsonStringBody('a"b\\c\nd\te\u0001</'), 'a\\"b\\\\c\\nd\\te\\u0001\\u003c/');
    for (const s of ['', '\\', '"', '\u2028', '😀', '\ud800', '</script>', "'"]) assert.equal(JSON.parse(`"${jsonStringBody(s)}"`), s === '\ud800' ? '\ud800' : s);
  });

  it('a value is its JSON, null when it has none', () => {
    assert.equal(jsonValue('x</script>'), '"x\\u003c/script\\u003e"');
    assert.equal(jsonValue(42), '42');
    assert.equal(jsonValue(true), 'true');
    assert.equal(jsonValue(null), 'null');
    assert.equal(jsonValue(undefined), 'null');
    assert.equal(jsonValue(() => 1), 'null');
    assert.equal(jsonValue({ a: [1, '<b>'], b: undefined }), '{"a":[1,"\\u003cb\\u003e"]}');
    assert.equal(jsonValue(new WebSafe('<b>x</b>')), '"\\u003cb\\u003ex\\u003c/b\\u003e"');
  });
});

/** Compiles /page.html with the page pass, as the loader does; renders with `values`. */
async function render(body: string, values: Record<string, unknown>, files: Record<string, string> = {}): Promise<string> {
  const diagnostics = new DiagnosticList();
  const csp = new PolicyCompiler({ diagnostics });
  const all = { '/page.html': MARKER + body, ...files };
  const view = compileView('/page.html', all['/page.html'], { tree: memoryTree(all), diagnostics, prepare: (t) => csp.prepare(t) });
  assert.ok(view, diagnostics.sorted().map(formatDiagnostic).join('\n'));
  const out = await view.render({ importValue: (_m, n) => values[n], dev: false });
  assert.equal(out.failed, undefined);
  return out.html;
}

describe('views with a JSON data block', () => {
  const body = `{{% import {s, n, o} from '📤' }}<script type="application/json">{"s": "{{s}}", "v": {{s}}, "n": {{n}}, "o": {{o}}, "in": "<{{#o.list}}{{.}},{{/o.list}}>"}</script><p>{{s}}</p>`;
  const values = { s: '"\\</script>', n: 1.5, o: { list: ['a"', 'b'], ok: true } };

  it('escapes each tag for its place, and only inside the block', async () => {
    const html = await render(body, values);
    assert.equal(
      html,
      '<script type="application/json">{"s": "\\"\\\\\\u003c/script\\u003e", "v": "\\"\\\\\\u003c/script\\u003e", "n": 1.5, "o": {"list":["a\\"","b"],"ok":true}, "in": "<a\\",b,>"}</script><p>&quot;\\&lt;/script&gt;</p>',
    );
    const json = /<script type="application\/json">(.*)<\/script>/.exec(html)![1]!;
    assert.deepEqual(JSON.parse(json), { s: values.s, v: values.s, n: 1.5, o: values.o, in: '<a",b,>' });
  });

  it('waits for Promise values, and writes web-safe values as text', async () => {
    const html = await render(body, { s: Promise.resolve(new WebSafe('<i>x</i>')), n: Promise.resolve(2), o: Promise.resolve({ list: ['p'] }) });
    const json = /<script type="application\/json">(.*)<\/script>/.exec(html)![1]!;
    assert.deepEqual(JSON.parse(json), { s: '<i>x</i>', v: '<i>x</i>', n: 2, o: { list: ['p'] }, in: '<p,>' });
  });

  it('escapes choose-string output too', async () => {
    const html = await render(`{{% choose-string-map m *=pre-* }}{{% import {s} from '📤' }}<script type="application/json">["{{% choose-string m s }}"]</script>`, { s: '"</script>' });
    assert.deepEqual(JSON.parse(/<script type="application\/json">(.*)<\/script>/.exec(html)![1]!), ['pre-"</script>']);
  });

  it('escapes a partial\'s data block when the partial is used by a view', async () => {
    const html = await render(`{{% partial /_p/ }}{{% import {s} from '📤' }}{{> data}}`, { s: '</script>' }, { '/_p/data.html': `${MARKER}{{% import {s} from '📤' }}<script type="application/json">"{{s}}"</script>` });
    assert.equal(html, '<script type="application/json">"\\u003c/script\\u003e"</script>');
  });
});
