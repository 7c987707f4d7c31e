/**
 * A query filter whose value is not of the field's type (NaN, text for a number, a number beyond
 * the 64-bit range, a time or date that is none) is refused before any SQL, with the same
 * LW_MODEL_QUERY error on both engines and never the database's own message; values of the type
 * (numbers as text included) find the same records on both (docs/queries.md).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { serve, type Served } from '../helpers.js';
import { ENGINES } from '../support/engines.js';

const APP = {
  '📦/🌐Item.yaml': 'name: string\nqty?: integer\nscore?: double\nflag?: boolean\nwhen?: timestamp\nday?: date\n',
  'seed/POST.js': "import {Item} from '📦';\nnew Item().name('a').qty(3).score(2.5).flag(true).when(new Date(Date.UTC(2024, 4, 6))).day('2024-05-06');\nnew Item().name('b').qty(7).score(0.5).flag(false);\n({});\n",
  // One filter, given by number, with its value; the answer is the names found, or the error's code and message.
  'q/GET.js': [
    "import {Item} from '📦';",
    "import {n} from '&';",
    'const cases = [',
    '  () => Item.qty(NaN), () => Item.qty("NaN"), () => Item.qty("abc"), () => Item.qty(1e300), () => Item.qty_gt(1.5),',
    '  () => Item.qty(9223372036854775808), () => Item.qty_lt("12345678901234567890"), () => Item.score(NaN), () => Item.score("x"),',
    '  () => Item.score_gt(Infinity), () => Item.flag("yes"), () => Item.when("not a time"), () => Item.when(NaN), () => Item.when_gt(1e300),',
    '  () => Item.day("bad"), () => Item.day("2024-02-30"), () => Item.day_lt("2024-05-06T10:00:00Z"), () => Item.created_gt("soon"),',
    '  () => Item.qty({a: 1}), () => Item.qty([3]),',
    '];',
    'const oks = [',
    '  () => Item.qty(3), () => Item.qty("3"), () => Item.qty_gte(" 4 "), () => Item.score(2.5), () => Item.score_lt("1"),',
    '  () => Item.flag(false), () => Item.flag("true"), () => Item.when(new Date(Date.UTC(2024, 4, 6))), () => Item.when_lt("2025-01-01"),',
    '  () => Item.day("2024-05-06"), () => Item.day_gte("2024-05"), () => Item.qty_lt("-9223372036854775808"),',
    '];',
    "const k = Number(n);",
    "const pick = k < 100 ? cases[k] : oks[k - 100];",
    'let out;',
    'try { const names = []; pick().forEach((i) => { names.push(i.name); }); out = {names}; } catch (e) { out = {error: String(e.message)}; }',
    'out;',
  ].join('\n'),
  // Writes: a time given as milliseconds that are not whole, or beyond a Date's range.
  'write/POST.js': [
    "import {Item} from '📦';",
    "import {ms} from 'form';",
    'let out;',
    "try { const i = new Item().name('w').when(Number(ms)); out = {when: i.when.getTime()}; } catch ($ModelInvalid) { out = {invalid: $ModelInvalid.message}; }",
    'out;',
  ].join('\n'),
  'uncaught/nan/GET.js': "import {Item} from '📦';\nItem.qty(NaN).count();\n",
  'uncaught/text/GET.js': "import {Item} from '📦';\nItem.qty('abc').count();\n",
};

const BAD = 20;
const GOOD = [['a'], ['a'], ['b'], ['a'], ['b'], ['b'], ['a'], ['a'], ['a'], ['a'], ['a'], []];

for (const engine of ENGINES) {
  describe(`query filters with values of the wrong type (${engine.name})`, () => {
    let s: Served;
    before(async () => {
      s = await serve(APP, { data: await engine.data() });
      assert.equal((await s.request('POST', '/seed', { accept: 'application/json' }, '')).status, 200);
    });
    after(() => s.close());

    const one = async (n: number) => {
      const r = await s.get(`/q?n=${n}`, { accept: 'application/json' });
      assert.equal(r.status, 200, r.text);
      return JSON.parse(r.text) as { names?: string[]; error?: string };
    };

    it('every wrong value is refused with a message of its own, never the database\'s', async () => {
      for (let n = 0; n < BAD; n++) {
        const out = await one(n);
        assert.ok(out.error, `case ${n} found ${JSON.stringify(out.names)}`);
        assert.match(out.error, /^Item\.\w+\(.*\): Item\.\w+ is an? \w+ field; pass /, `case ${n}`);
        assert.doesNotMatch(out.error, /syntax|SQL|bigint|out of range for type|postgres/i, `case ${n}`);
      }
      assert.equal((await one(0)).error, 'Item.qty(NaN): Item.qty is an integer field; pass a whole number between -9223372036854775808 and 9223372036854775807 (a number, or its digits as text)');
    });

    it('values of the type find the same records on both engines', async () => {
      for (let n = 0; n < GOOD.length; n++) assert.deepEqual((await one(100 + n)).names?.sort(), GOOD[n], `case ${100 + n}`);
    });

    it('a write of a time refuses milliseconds that are not whole or beyond a Date, on both engines', async () => {
      const write = async (ms: string) => {
        const r = await s.request('POST', '/write', { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded' }, `ms=${ms}`);
        assert.equal(r.status, 200, r.text);
        return JSON.parse(r.text) as Record<string, unknown>;
      };
      assert.deepEqual(await write('1717200000000'), { when: 1717200000000 });
      for (const ms of ['1.5', '1e300', 'NaN']) assert.deepEqual(await write(ms), { invalid: 'When must be a time' }, ms);
    });

    it('uncaught, the refusal is a 500, the same on both engines', async () => {
      for (const path of ['/uncaught/nan', '/uncaught/text']) {
        const r = await s.get(path, { accept: 'application/json' });
        assert.equal(r.status, 500, r.text);
        assert.doesNotMatch(r.text, /syntax|bigint/);
      }
    });
  });
}
