/**
 * Host capabilities may be asynchronous (models on PostgreSQL): scripts keep synchronous syntax
 * and the compiled code waits implicitly, in plain code and inside callbacks.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { LanewayError } from '../../src/diag/index.js';
import { currentBudgetToken } from '../../src/script/realm.js';
import { compile, context, delay, describe as show, run, value } from './helpers.js';

/** A model-like capability whose every method answers through a Promise. */
function taskModel(log: string[] = []) {
  const rows = [
    { id: 1, title: 'write', done: false },
    { id: 2, title: 'test', done: true },
    { id: 3, title: 'ship', done: false },
  ];
  return {
    get: (id: number) => {
      log.push(`get ${id}`);
      const row = rows.find((r) => r.id === id);
      return row ? delay({ ...row }) : Promise.reject(new LanewayError('LW_HTTP_NOT_FOUND', 'no such task', { status: 404 }));
    },
    all: () => delay(rows.map((r) => ({ ...r }))),
    count: () => delay(rows.length),
    title: (id: number) => delay(rows.find((r) => r.id === id)?.title),
  };
}

describe('implicit waiting for host Promises', () => {
  it('waits in plain code', async () => {
    const v = await value(`import {Task} from '📦'\nconst t = Task.get(2);\n({title: t.title, n: Task.count() + 1})`, { imports: { Task: taskModel() } });
    assert.deepEqual(v, { title: 'test', n: 4 });
  });

  it('waits for an import that is itself a Promise', async () => {
    const v = await value(`import {user} from '📤'\nuser.name`, { importValue: () => delay({ name: 'Ada' }, 5) });
    assert.equal(v, 'Ada');
  });

  it('waits inside map, in order', async () => {
    const log: string[] = [];
    const v = await value(`import {Task} from '📦'\n[3, 1].map((id) => Task.get(id).title)`, { imports: { Task: taskModel(log) } });
    assert.deepEqual(v, ['ship', 'write']);
    assert.deepEqual(log, ['get 3', 'get 1']);
  });

  it('waits inside forEach, filter, reduce, some, every, find, findIndex, flatMap and sort', async () => {
    const source = `import {Task} from '📦'
const ids = [1, 2, 3]
let seen = []
ids.forEach((id) => { seen.push(Task.title(id)) });
({
  seen,
  open: ids.filter((id) => !Task.get(id).done),
  letters: ids.reduce((acc, id) => acc + Task.title(id).length, 0),
  some: ids.some((id) => Task.get(id).done),
  every: ids.every((id) => Task.get(id).done),
  found: ids.find((id) => Task.title(id) === 'ship'),
  index: ids.findIndex((id) => Task.title(id) === 'test'),
  flat: ids.flatMap((id) => [id, Task.title(id)]),
  sorted: ids.slice().sort((a, b) => Task.title(a).localeCompare(Task.title(b))),
  last: ids.findLast((id) => Task.get(id).done === false),
})`;
    const v = await value(source, { imports: { Task: taskModel() } });
    assert.deepEqual(v, {
      seen: ['write', 'test', 'ship'],
      open: [1, 3],
      letters: 13,
      some: true,
      every: false,
      found: 3,
      index: 1,
      flat: [1, 'write', 2, 'test', 3, 'ship'],
      sorted: [3, 2, 1],
      last: 3,
    });
  });

  it('waits in Array.from callbacks, replace callbacks and optional chains', async () => {
    const source = `import {Task} from '📦'
({
  from: Array.from({length: 2}, (_, i) => Task.title(i + 1)),
  replaced: 'a-b'.replaceAll('-', () => Task.title(2)),
  maybe: Task?.get(1)?.title,
  none: Task.missing?.(1),
})`;
    assert.deepEqual(await value(source, { imports: { Task: taskModel() } }), {
      from: ['write', 'test'],
      replaced: 'atestb',
      maybe: 'write',
      none: undefined,
    });
  });

  it('after a caught rejection, the request\'s limits apply again: the string limit', async () => {
    // The catch block runs with the request's budget current (docs/architecture.md, "The request
    // budget"), at the top level and inside an arrow that waits.
    const top = `import {Task} from '📦'\nlet s = ''\ntry { Task.get(9) } catch (e) { s = 'x'.repeat(200) }\ns.length`;
    const inner = `import {Task} from '📦'\nconst f = () => { try { return Task.get(9).title } catch (e) { return 'x'.repeat(200) } }\nf().length`;
    for (const source of [top, inner]) {
      const outcome = await run(source, { imports: { Task: taskModel() }, limits: { maxStringLength: 100 } });
      assert.equal(outcome.kind, 'limit', show(outcome));
      assert.equal((outcome as { error: { code: string } }).error.code, 'LW_SCRIPT_STRING_LIMIT');
    }
  });

  it('after a caught rejection, host calls and later waits run with the request current', async () => {
    const seen: unknown[] = [];
    const source = `import {Task} from '📦'\nimport {probe} from 'm'\nconst f = () => Task.get(9).title\nlet r = []\ntry { f() } catch (e) { r.push(probe(), Task.get(1).title) }\ntry { Task.get(8) } catch (e) { r.push(probe()) }\nr.push(Task.title(3), probe())\nr`;
    const probe = () => {
      seen.push(currentBudgetToken() !== null);
      return 'p';
    };
    assert.deepEqual(await value(source, { imports: { Task: taskModel(), probe } }), ['p', 'write', 'p', 'ship', 'p']);
    assert.deepEqual(seen, [true, true, true]);
  });

  it('lets scripts catch a rejected host Promise', async () => {
    const v = await value(`import {Task} from '📦'\nlet r\ntry { r = Task.get(9).title } catch (e) { r = 'missing: ' + e.message }\nr`, { imports: { Task: taskModel() } });
    assert.equal(v, 'missing: no such task');
  });

  it('reports an uncaught host error with its own status (a 404 stays a 404)', async () => {
    const outcome = await run(`import {Task} from '📦'\nTask.get(9)`, { imports: { Task: taskModel() } });
    assert.equal(outcome.kind, 'error', show(outcome));
    assert.equal((outcome as { error: LanewayError }).error.status, 404);
  });

  it('reports a failing import as LW_SCRIPT_IMPORT_FAILED', async () => {
    const outcome = await run(`import {x} from 'm'\nx`, { importValue: () => { throw new Error('db down'); } });
    assert.equal(outcome.kind, 'error');
    assert.equal((outcome as { error: LanewayError }).error.code, 'LW_SCRIPT_IMPORT_FAILED');
  });

  it('compiles arrows without calls to plain functions (no await on the hot path)', async () => {
    const script = compile(`const double = (n) => n * 2;\n[1, 2].map(double).map((n) => ({n}))`);
    assert.deepEqual(await script.run(context()), { kind: 'value', value: [{ n: 2 }, { n: 4 }] });
  });

  it('runs many requests concurrently, each with its own values', async () => {
    const script = compile(`import {id} from '&'\nimport {Task} from '📦';\n({id, title: Task.title(id)})`);
    const outcomes = await Promise.all([1, 2, 3, 1, 2, 3].map((id) => script.run(context({ imports: { id, Task: taskModel() } }))));
    assert.deepEqual(outcomes.map((o) => (o as { value: unknown }).value), [1, 2, 3, 1, 2, 3].map((id) => ({ id, title: ['write', 'test', 'ship'][id - 1] })));
  });

  it('passes script callbacks to host functions, and waits for their results', async () => {
    const host = { twice: async (f: (n: number) => Promise<number> | number) => (await f(1)) + (await f(2)) };
    assert.equal(await value(`import {twice} from 'm'\ntwice((n) => n * 10)`, { imports: host }), 30);
  });

  it('lets function suppliers cross between scripts and keep working', async () => {
    const supplier = compile(`const Double = (n) => n * 2\nconst Title = (t) => t.title.toUpperCase()\nexport {Double, Title}`, { kind: 'function-supplier' });
    const exported = await supplier.run(context());
    assert.equal(exported.kind, 'value');
    const fns = (exported as { value: Record<string, unknown> }).value;
    assert.equal(typeof fns.Double, 'function');
    const v = await value(`import {Double, Title} from '📤'\n({d: Double(21), t: Title({title: 'x'})})`, { imports: fns });
    assert.deepEqual(v, { d: 42, t: 'X' });
    // Called by host code (a view) later, with a fresh budget each time.
    assert.equal(await (fns.Title as (x: unknown) => unknown)({ title: 'later' }), 'LATER');
  });
});
