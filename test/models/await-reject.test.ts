/**
 * A model call that fails (a caught $ModelNotFound) leaves the request's
 * scope in place: the model calls after the catch, and the write at the end, work the same on both
 * engines (on PostgreSQL every model call is awaited, and a rejected await must restore the scope
 * as a fulfilled one does; docs/architecture.md, "The request budget").
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { serve, type Served } from '../helpers.js';
import { ENGINES } from '../support/engines.js';

const JSON_H = { accept: 'application/json' };
const json = (r: { status: number; text: string }) => {
  assert.equal(r.status, 200, r.text);
  return JSON.parse(r.text);
};

const APP = {
  '📦/🌐Counter.yaml': 'name:\n  type: string\n  unique: true\ncount:\n  type: integer\n  init: 0\n',
  // get-or-create: the record is missing the first time.
  'get-or-create/POST.js': [
    "import {Counter} from '📦';",
    'let c;',
    "try { c = Counter.name('a').get(); } catch ($ModelNotFound) { c = new Counter().name('a'); }",
    'c.count += 1;',
    '({count: c.count, n: Counter.all().count()});',
  ].join('\n'),
  // After a caught failure: every way of asking for a missing record, then a write.
  'after-catch/POST.js': [
    "import {Counter} from '📦';",
    'let caught = false;',
    "try { Counter.get('cnt_missing000000'); } catch ($ModelNotFound) { caught = true; }",
    "const opt = Counter.optional('cnt_missing000000');",
    "const ex = Counter.exists('cnt_missing000000');",
    "const qOpt = Counter.name('nobody').optional();",
    "const qEx = Counter.name('nobody').exists();",
    'let qGet = false;',
    "try { Counter.name('nobody').get(); } catch ($ModelNotFound) { qGet = true; }",
    "new Counter().name('after');",
    "({caught, opt, ex, qOpt, qEx, qGet, n: Counter.name('after').count()});",
  ].join('\n'),
  // The failing call inside a function, with try/finally and a catch further out.
  'nested/POST.js': [
    "import {Counter} from '📦';",
    'let fin = 0;',
    "const find = (name) => { try { return Counter.name(name).get(); } finally { fin += 1; } };",
    "const orNull = (name) => { try { return find(name); } catch ($ModelNotFound) { return Counter.name(name).exists(); } };",
    "const a = orNull('x1');",
    "const b = orNull('x2');",
    "new Counter().name('nested');",
    "({a, b, fin, n: Counter.name('nested').count()});",
  ].join('\n'),
  'count/GET.js': "import {Counter} from '📦';\nCounter.all().map((c) => ({name: c.name, count: c.count}));\n",
};

for (const engine of ENGINES) {
  describe(`model calls after a caught failure, on ${engine.name}`, () => {
    let s: Served;
    before(async () => {
      s = await serve(APP, { data: await engine.data() });
    });
    after(() => s.close());

    it('get-or-create creates, then finds, and writes', async () => {
      assert.deepEqual(json(await s.request('POST', '/get-or-create', JSON_H, '')), { count: 1, n: 1 });
      assert.deepEqual(json(await s.request('POST', '/get-or-create', JSON_H, '')), { count: 2, n: 1 });
    });

    it('M.optional(id), M.exists(id), get()/optional()/exists() of a query after a caught $ModelNotFound, then a write', async () => {
      assert.deepEqual(json(await s.request('POST', '/after-catch', JSON_H, '')), { caught: true, opt: null, ex: false, qOpt: null, qEx: false, qGet: true, n: 1 });
    });

    it('a failing call inside functions, through a finally block, caught further out', async () => {
      assert.deepEqual(json(await s.request('POST', '/nested', JSON_H, '')), { a: false, b: false, fin: 2, n: 1 });
    });

    it('the writes of those requests were committed', async () => {
      const names = (json(await s.get('/count', JSON_H)) as { name: string }[]).map((c) => c.name).sort();
      assert.deepEqual(names, ['a', 'after', 'nested']);
    });
  });
}
