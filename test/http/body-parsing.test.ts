/**
 * Request bodies and query strings are parsed in time linear in their size (docs/scripting.md
 * "Request bodies and the query string"): about
 * 1 MB of repeated names, distinct names, long values and bracketed names, as urlencoded,
 * multipart and JSON bodies, answers in well under the 5 s asserted here (the old parser copied a
 * name's value list on every repeat: 17,000 `t=&` took 13 s). Each test also checks what the
 * script received, so a fast wrong answer fails. Past 100,000 values the answer is a 413 with
 * the reason, never a silent cut; malformed JSON is a 400 that quotes nothing of the body.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { LanewayError } from '../../src/diag/index.js';
import { MAX_FIELDS, parseQuery } from '../../src/app/endpoint/request-data.js';
import { serve, type Response, type Served } from '../helpers.js';

const MiB = 1024 * 1024;
/** Generous: the linear parsers take tens of milliseconds; the quadratic one took minutes at this size. */
const WELL_UNDER_MS = 5000;

const APP = {
  // Large imports cross into the script realm: give the scripts room, so only parsing is measured.
  '/🎛.yaml': 'limits: {cpu-ms: 20000, memory-mb: 1024, string-length: 5000000, array-length: 1000000}\n',
  '/api/📮list.js': `import {t} from 'form[]'\n({ n: t.length, first: t[0] ?? null, last: t[t.length - 1] ?? null })`,
  '/api/📮one.js': `import {t} from 'form'\n({ length: t == null ? null : t.length, head: t == null ? null : t.slice(0, 5) })`,
  '/api/📮fields.js': `import {F} from 'form{}'\nconst keys = F.keys();\n({ n: keys.length, first: keys[0] ?? null, last: keys[keys.length - 1] ?? null, firstLength: keys.length ? keys[0].length : 0, bracket: F.values('a[b][c]').length })`,
  '/api/📮camel.js': `import {absentName, lastOne} from 'form'\nimport {F} from 'form{}'\n({ absentName, lastOne, has: F.has('lastOne') })`,
  '/api/🖥query.js': `import * as Q from '&'\nimport {t} from '&'\n({ n: Object.keys(Q).length, t })`,
};

const FORM = 'application/x-www-form-urlencoded';
const JSON_TYPE = 'application/json';
const BOUNDARY = 'laneway-test-boundary-7f3a9c';

function multipart(parts: Array<[name: string, value: string]>, boundary = BOUNDARY): Buffer {
  const chunks: string[] = [];
  for (const [name, value] of parts) chunks.push(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`);
  chunks.push(`--${boundary}--\r\n`);
  return Buffer.from(chunks.join(''));
}

function repeat<T>(n: number, f: (i: number) => T): T[] {
  return Array.from({ length: n }, (_, i) => f(i));
}

describe('bodies of about 1 MB parse in linear time', () => {
  let s: Served;
  before(async () => {
    s = await serve(APP);
  });
  after(() => s.close());

  async function post(path: string, type: string, body: string | Buffer, extra: Record<string, string> = {}): Promise<{ r: Response; ms: number }> {
    const t0 = performance.now();
    const r = await s.request('POST', path, { 'content-type': type, accept: 'application/json', ...extra }, body);
    return { r, ms: performance.now() - t0 };
  }

  async function expectJson(path: string, type: string, body: string | Buffer, expected: Record<string, unknown>, extra?: Record<string, string>) {
    assert.ok(body.length > 0.5 * MiB && body.length <= MiB, `the body is about 1 MB (${body.length} bytes)`);
    const { r, ms } = await post(path, type, body, extra);
    assert.equal(r.status, 200, r.text.slice(0, 300));
    assert.deepEqual(JSON.parse(r.text), expected);
    assert.ok(ms < WELL_UNDER_MS, `answered in ${Math.round(ms)} ms`);
  }

  describe('urlencoded', () => {
    test('one name repeated 95,000 times', async () => {
      const body = repeat(95_000, (i) => `t=v${String(i).padStart(7, '0')}`).join('&');
      await expectJson('/api/list', FORM, body, { n: 95_000, first: 'v0000000', last: 'v0094999' });
    });
    test('empty values repeated (the 13-second body, scaled to what the field limit allows)', async () => {
      // `t=&` × 100,000 is the most values a body may hold; one more is the 413 below.
      const body = 't=&'.repeat(MAX_FIELDS - 1) + 'u=1';
      const { r, ms } = await post('/api/list', FORM, body);
      assert.equal(r.status, 200);
      assert.deepEqual(JSON.parse(r.text), { n: MAX_FIELDS - 1, first: '', last: '' });
      assert.ok(ms < WELL_UNDER_MS, `answered in ${Math.round(ms)} ms`);
    });
    test('90,000 distinct names', async () => {
      const body = repeat(90_000, (i) => `k${i}=v`).join('&');
      await expectJson('/api/fields', FORM, body, { n: 90_000, first: 'k0', last: 'k89999', firstLength: 2, bracket: 0 });
    });
    test('75,000 distinct dashed names, looked up by their camelCase form', async () => {
      const body = repeat(75_000, (i) => `name-${i}=v`).join('&') + '&last-one=yes';
      await expectJson('/api/camel', FORM, body, { absentName: null, lastOne: 'yes', has: true });
    });
    test('one very long dashed name (camelCase in one pass; a regular expression backtracked)', async () => {
      await expectJson('/api/camel', FORM, '-'.repeat(800_000) + '=1&last-one=yes', { absentName: null, lastOne: 'yes', has: true });
      await expectJson('/api/camel', JSON_TYPE, JSON.stringify({ ['-'.repeat(800_000)]: 1, 'last-one': 'yes' }), { absentName: null, lastOne: 'yes', has: true });
    });
    test('one long value: plain, percent-encoded, and + for spaces', async () => {
      await expectJson('/api/one', FORM, 't=' + 'x'.repeat(1_000_000), { length: 1_000_000, head: 'xxxxx' });
      await expectJson('/api/one', FORM, 't=' + '%41'.repeat(330_000), { length: 330_000, head: 'AAAAA' });
      await expectJson('/api/one', FORM, 't=' + '%E2%82%AC'.repeat(110_000), { length: 110_000, head: '€€€€€' });
      await expectJson('/api/one', FORM, 't=' + '+'.repeat(1_000_000), { length: 1_000_000, head: '     ' });
    });
    test('bracketed names stay literal names, however many and however long', async () => {
      const body = repeat(80_000, () => 'a[b][c]=1').join('&');
      await expectJson('/api/fields', FORM, body, { n: 1, first: 'a[b][c]', last: 'a[b][c]', firstLength: 7, bracket: 80_000 });
      const deep = 'a' + '[b]'.repeat(330_000) + '=1';
      await expectJson('/api/fields', FORM, deep, { n: 1, first: 'a' + '[b]'.repeat(330_000), last: 'a' + '[b]'.repeat(330_000), firstLength: 990_001, bracket: 0 });
      const open = 'x' + '['.repeat(1_000_000) + '=1';
      await expectJson('/api/fields', FORM, open, { n: 1, first: 'x' + '['.repeat(1_000_000), last: 'x' + '['.repeat(1_000_000), firstLength: 1_000_001, bracket: 0 });
    });
    test('separators only, and names without values', async () => {
      await expectJson('/api/list', FORM, '&'.repeat(1_000_000) + 't=1', { n: 1, first: '1', last: '1' });
      await expectJson('/api/list', FORM, 't&'.repeat(500_000 - 1).slice(0, 2 * (MAX_FIELDS - 1)) + 'x'.repeat(800_000), { n: MAX_FIELDS - 1, first: '', last: '' });
    });
  });

  describe('multipart', () => {
    test('one name repeated 12,000 times', async () => {
      const body = multipart(repeat(12_000, (i) => ['t', `v${i}`]));
      await expectJson('/api/list', `multipart/form-data; boundary=${BOUNDARY}`, body, { n: 12_000, first: 'v0', last: 'v11999' });
    });
    test('12,000 distinct names', async () => {
      const body = multipart(repeat(12_000, (i) => [`k${i}`, 'v']));
      await expectJson('/api/fields', `multipart/form-data; boundary=${BOUNDARY}`, body, { n: 12_000, first: 'k0', last: 'k11999', firstLength: 2, bracket: 0 });
    });
    test('one long value, and a value full of near-boundaries', async () => {
      await expectJson('/api/one', `multipart/form-data; boundary=${BOUNDARY}`, multipart([['t', 'x'.repeat(1_000_000)]]), { length: 1_000_000, head: 'xxxxx' });
      // Lines that start like the boundary but are not it: the boundary search must not go back over them.
      const near = `\r\n--${BOUNDARY.slice(0, -1)}X`.repeat(25_000);
      await expectJson('/api/one', `multipart/form-data; boundary=${BOUNDARY}`, multipart([['t', near]]), { length: near.length, head: near.slice(0, 5) });
      const long = 'b'.repeat(70); // the longest boundary RFC 2046 allows
      const body = multipart([['t', ('a'.repeat(69) + '\r\n--' + 'b'.repeat(69) + 'a').repeat(6_000)]], long);
      const { r, ms } = await post('/api/one', `multipart/form-data; boundary=${long}`, body);
      assert.equal(r.status, 200, r.text);
      assert.equal(JSON.parse(r.text).length, 6_000 * 143);
      assert.ok(ms < WELL_UNDER_MS);
    });
    test('bracketed names stay literal', async () => {
      const body = multipart(repeat(12_000, () => ['a[b][c]', '1']));
      await expectJson('/api/fields', `multipart/form-data; boundary=${BOUNDARY}`, body, { n: 1, first: 'a[b][c]', last: 'a[b][c]', firstLength: 7, bracket: 12_000 });
    });
  });

  describe('JSON', () => {
    test('one name with a list of 95,000 values', async () => {
      const body = JSON.stringify({ t: repeat(95_000, (i) => `v${String(i).padStart(6, '0')}`) });
      await expectJson('/api/list', JSON_TYPE, body, { n: 95_000, first: 'v000000', last: 'v094999' });
    });
    test('80,000 distinct names', async () => {
      const body = JSON.stringify(Object.fromEntries(repeat(80_000, (i) => [`k${i}`, 'v'])));
      await expectJson('/api/fields', JSON_TYPE, body, { n: 80_000, first: 'k0', last: 'k79999', firstLength: 2, bracket: 0 });
    });
    test('the same name written 85,000 times (the last one wins, as in JSON.parse)', async () => {
      const body = '{' + repeat(85_000, (i) => `"t":"${i}"`).join(',') + '}';
      await expectJson('/api/list', JSON_TYPE, body, { n: 1, first: '84999', last: '84999' });
    });
    test('one long value, with escapes', async () => {
      await expectJson('/api/one', JSON_TYPE, JSON.stringify({ t: 'x'.repeat(1_000_000) }), { length: 1_000_000, head: 'xxxxx' });
      await expectJson('/api/one', JSON_TYPE, '{"t":"' + '\\u0041'.repeat(170_000) + '"}', { length: 170_000, head: 'AAAAA' });
    });
    test('deep nesting is a 400, answered quickly', async () => {
      for (const body of ['{"t":' + '['.repeat(450_000) + ']'.repeat(450_000) + '}', '{"t":' + '{"a":'.repeat(150_000) + '1' + '}'.repeat(150_001), '['.repeat(1_000_000)]) {
        const { r, ms } = await post('/api/one', JSON_TYPE, body);
        assert.equal(r.status, 400, r.text);
        assert.ok(ms < WELL_UNDER_MS);
      }
    });
  });

  test('query strings: thousands of names over HTTP (the request line is bounded by the header limit)', async () => {
    const query = repeat(1_000, (i) => `q${i}=${i}`).join('&') + '&t=' + 'x'.repeat(2000) + '&t=second';
    const r = await s.request('GET', '/api/query?' + query, { accept: 'application/json' });
    assert.equal(r.status, 200);
    assert.deepEqual(JSON.parse(r.text), { n: 1_001, t: 'x'.repeat(2000) });
  });
});

describe('the query string parser on 1 MB inputs', () => {
  const timed = <T>(f: () => T): { value: T; ms: number } => {
    const t0 = performance.now();
    const value = f();
    return { value, ms: performance.now() - t0 };
  };
  test('repeated names, distinct names, long values, bracketed names', () => {
    const cases: Array<[query: string, check: (fields: Map<string, string[]>) => void]> = [
      ['t=&'.repeat(MAX_FIELDS), (f) => assert.equal(f.get('t')!.length, MAX_FIELDS)],
      [repeat(95_000, (i) => `k${i}=v`).join('&'), (f) => assert.equal(f.size, 95_000)],
      ['t=' + '%41'.repeat(350_000), (f) => assert.equal(f.get('t')![0]!.length, 350_000)],
      ['a[b][c]=1&'.repeat(95_000), (f) => assert.deepEqual([f.size, f.get('a[b][c]')!.length], [1, 95_000])],
      ['&'.repeat(1_000_000), (f) => assert.equal(f.size, 0)],
    ];
    for (const [query, check] of cases) {
      const { value, ms } = timed(() => parseQuery(query));
      check(value);
      assert.ok(ms < WELL_UNDER_MS, `parsed in ${Math.round(ms)} ms`);
    }
  });
  test('more values than the limit is an error, not a cut', () => {
    assert.throws(
      () => parseQuery('t=&'.repeat(MAX_FIELDS + 1)),
      (e: unknown) => e instanceof LanewayError && e.code === 'LW_HTTP_TOO_MANY_FIELDS' && e.status === 400,
    );
  });
});

describe('too many values: 413 with the reason, for every body type', () => {
  let s: Served;
  before(async () => {
    s = await serve(APP, { bodyLimit: 8 * MiB });
  });
  after(() => s.close());

  const cases: Array<[what: string, type: string, body: () => string | Buffer]> = [
    ['urlencoded, one name', FORM, () => 't=&'.repeat(MAX_FIELDS + 1)],
    ['urlencoded, distinct names', FORM, () => repeat(MAX_FIELDS + 1, (i) => `k${i}`).join('&')],
    ['multipart fields', `multipart/form-data; boundary=B`, () => multipart(repeat(MAX_FIELDS + 1, () => ['t', '']), 'B')],
    ['multipart parts without a name', `multipart/form-data; boundary=B`, () => Buffer.from('--B\r\nX-Nothing: 1\r\n\r\n\r\n'.repeat(MAX_FIELDS + 1) + '--B--\r\n')],
    ['JSON list', JSON_TYPE, () => JSON.stringify({ t: repeat(MAX_FIELDS + 1, () => 1) })],
    ['JSON names', JSON_TYPE, () => JSON.stringify(Object.fromEntries(repeat(MAX_FIELDS + 1, (i) => [`k${i}`, null])))],
  ];
  for (const [what, type, body] of cases) {
    test(what, async () => {
      const t0 = performance.now();
      const r = await s.request('POST', '/api/list', { 'content-type': type, accept: 'application/json' }, body());
      assert.equal(r.status, 413, r.text.slice(0, 300));
      assert.match(JSON.parse(r.text).error, /more than 100000 values/);
      assert.ok(performance.now() - t0 < WELL_UNDER_MS);
    });
  }
  test('at the limit exactly, every value arrives', async () => {
    const r = await s.request('POST', '/api/list', { 'content-type': `multipart/form-data; boundary=B`, accept: 'application/json' }, multipart(repeat(MAX_FIELDS, () => ['t', 'v']), 'B'));
    assert.equal(r.status, 200, r.text.slice(0, 300));
    assert.equal(JSON.parse(r.text).n, MAX_FIELDS);
  });
});

describe('malformed bodies: 400, and the answer quotes nothing of the body', () => {
  let s: Served;
  before(async () => {
    s = await serve(APP);
  });
  after(() => s.close());

  const MARK = 'zq9xk';
  async function bad(type: string, body: string | Buffer, reason: RegExp) {
    for (const accept of ['application/json', 'text/html']) {
      const r = await s.request('POST', '/api/one', { 'content-type': type, accept }, body);
      assert.equal(r.status, 400, `${String(body).slice(0, 60)} → ${r.status} ${r.text}`);
      assert.match(r.text, reason);
      assert.ok(!r.text.toLowerCase().includes(MARK), `the answer quotes the body: ${r.text}`);
    }
  }

  test('JSON that does not parse', async () => {
    for (const body of [`{"${MARK}": ${MARK}}`, `{"t": "${MARK}",}`, `${MARK}`, `{"t": "${MARK}"`, `{'t': '${MARK}'}`, `{"t": "${MARK}\u0001"}`, `\uFEFF\uFEFF{"t": "${MARK}"}`]) {
      await bad(JSON_TYPE, body, /the JSON body does not parse/);
    }
  });
  test('JSON that is not an object, or holds nested objects', async () => {
    for (const body of [`["${MARK}"]`, `"${MARK}"`, '42', 'null']) await bad(JSON_TYPE, body, /must be an object/);
    await bad(JSON_TYPE, `{"a": 1, "<b>${MARK}</b>": {"x": 1}}`, /the 2nd field of the JSON body holds an object/);
    await bad(JSON_TYPE, `{"${MARK}": [["${MARK}"]]}`, /the 1st field of the JSON body holds an object or a nested list/);
  });
  test('JSON that is not valid UTF-8', async () => {
    const utf8 = (hex: string) => Buffer.concat([Buffer.from(`{"${MARK}": "`), Buffer.from(hex, 'hex'), Buffer.from('"}')]);
    for (const hex of ['ff', 'c0af', 'c080', 'eda080', 'f4908080', 'e282', 'e2', '80', 'f8888080']) {
      await bad(JSON_TYPE, utf8(hex), /not valid UTF-8/);
    }
    // A body cut in the middle of a character.
    await bad(JSON_TYPE, Buffer.concat([Buffer.from(`{"t": "${MARK}€`), Buffer.from('"}')]).subarray(0, -3), /not valid UTF-8/);
  });
  test('valid UTF-8 outside ASCII is read as such', async () => {
    const r = await s.request('POST', '/api/one', { 'content-type': JSON_TYPE, accept: 'application/json' }, Buffer.from('{"t": "é€😀x"}'));
    assert.equal(r.status, 200);
    assert.deepEqual(JSON.parse(r.text), { length: 5, head: 'é€😀x' });
  });
  test('broken multipart, file parts and unknown types', async () => {
    await bad('multipart/form-data', multipart([['t', MARK]]), /boundary/);
    await bad(`multipart/form-data; boundary=${BOUNDARY}`, Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${MARK}"\r\n` + 'X'.repeat(20_000)), /malformed multipart body/);
    await bad(`multipart/form-data; boundary=${BOUNDARY}`, Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="t"; filename="${MARK}.txt"\r\n\r\n${MARK}\r\n--${BOUNDARY}--\r\n`), /file uploads are not accepted/);
    await bad('text/plain', `t=${MARK}`, /unsupported body type/);
  });
});
