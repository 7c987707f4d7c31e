/**
 * The fast path of request paths (src/router/request-path.ts; docs/routing.md "Request paths"):
 * a path already canonical is taken as it is, any other goes through decoding and the checks.
 *
 * - The one-pass check answers exactly what the former regular expression answered, on every path
 *   of up to four characters over an alphabet of the characters that matter, and on random
 *   longer ones; splitPath gives the same result either way.
 * - A long path with a bad byte at its end is answered at once: the regular expression backtracked
 *   on it for minutes (40 letters and a `%`), holding the event loop, so a second visitor waited.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { splitPath } from '../../src/router/index.js';
import { serve, type Served } from '../helpers.js';

/** The regular expression of before, run only on short inputs (it backtracks on long ones). */
const FORMER = /^\/(?:[A-Za-z0-9_~!$&'()*+,;=:@-]+(?:\.[A-Za-z0-9_~!$&'()*+,;=:@-]+)*\/?)*$/;

/** What splitPath answers when the path is canonical as sent: its own key and plain split. */
function canonicalAsSent(raw: string): boolean {
  const r = splitPath(raw);
  if (!r.ok || r.key !== raw) return false;
  const trailing = raw.length > 1 && raw.endsWith('/');
  const body = raw.slice(1, trailing ? -1 : undefined);
  return r.trailingSlash === trailing && r.segments.join('/') === body;
}

test('the one-pass check agrees with the former expression on every short path', () => {
  const alphabet = ['a', 'Z', '0', '-', '.', '/', '%', '~', ' ', 'é', '\\', "'", '\u0000'];
  let checked = 0;
  const walk = (s: string, depth: number): void => {
    const plain = FORMER.test(s);
    const r = splitPath(s);
    if (plain) {
      // The fast path keeps the path as it is.
      assert.ok(r.ok && r.key === s, `${JSON.stringify(s)}: canonical, answered ${JSON.stringify(r)}`);
      assert.ok(canonicalAsSent(s), JSON.stringify(s));
    } else if (r.ok) {
      // Taken by the slow path: decoded and checked, never kept as sent when it holds something to decode.
      assert.ok(!/[%]/.test(s) || r.key !== s, `${JSON.stringify(s)}: ${JSON.stringify(r)}`);
    }
    checked++;
    if (depth === 0) return;
    for (const c of alphabet) walk(s + c, depth - 1);
  };
  walk('/', 4);
  assert.ok(checked > 30_000);
});

test('random longer paths: the same answer as the former expression', () => {
  const chars = 'ab.-/%é';
  let seed = 7;
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  for (let i = 0; i < 20_000; i++) {
    let s = '/';
    const len = 1 + rand(14);
    for (let j = 0; j < len; j++) s += chars[rand(chars.length)];
    const r = splitPath(s);
    if (FORMER.test(s)) assert.ok(r.ok && r.key === s, JSON.stringify(s));
  }
});

test('a long path with a bad byte at its end is refused at once', () => {
  for (const tail of ['%', '%zz', 'é', ' ', '\\', '/..', '.']) {
    const raw = '/' + 'a'.repeat(100_000) + tail;
    const started = process.hrtime.bigint();
    const r = splitPath(raw);
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    // Minutes with the expression at 40 letters; one pass here. Generous: a loaded machine.
    assert.ok(ms < 2000, `${tail}: ${ms} ms`);
    if (tail === '%' || tail === '%zz' || tail === '\\' || tail === '/..') assert.equal(r.ok, false, tail);
  }
});

let server: Served;

before(async () => {
  server = await serve({ 'index.html': '<!--TEMPLATE mustache-->\n<p>home</p>\n' });
});

after(() => server.close());

test('over HTTP: a hostile path gets 400 and a second visitor is answered meanwhile', async () => {
  const hostile = server.get(`/${'a'.repeat(4000)}%`);
  const second = server.get('/');
  const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('no answer within 5 s: the path check blocked the server')), 5000).unref());
  const [bad, good] = await Promise.race([Promise.all([hostile, second]), timeout]);
  assert.equal(bad.status, 400);
  assert.equal(good.status, 200);
  assert.match(good.text, /home/);
});
