/**
 * The fast paths of a run (docs/scripting.md "How it is enforced"): values kept in the realm
 * between the scripts of a request (`RunContext.share`), plain JSON answers serialised without a
 * copy, callbacks that run synchronously until they meet something that waits, and runs that give
 * their outcome without a Promise. Each must answer exactly what the copying, waiting path answers.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { LanewayError } from '../../src/diag/index.js';
import { WebSafe } from '../../src/shared/index.js';
import {
  DEFAULT_LIMITS,
  ScriptRedirect,
  ScriptValue,
  openScriptValue,
  outcomeToResponse,
  type RunOutcome,
  type ScriptLimits,
} from '../../src/script/index.js';
import { compile, context, delay, describe as show, type RunOptions } from './helpers.js';

const GET = { method: 'GET', path: '/app/here', acceptsJson: true, ajax: false };

/** Runs a supplier with `share` and returns its exports (ScriptValues and primitives). */
async function sharedExports(source: string, options: RunOptions = {}): Promise<Record<string, unknown>> {
  const outcome = await compile(source, { kind: 'supplier' }).run({ ...context(options), share: true });
  assert.equal(outcome.kind, 'value', show(outcome));
  return (outcome as { value: Record<string, unknown> }).value;
}

/** The HTTP answer of an endpoint run with and without `share`: they must be the same. */
async function sameAnswer(source: string, options: RunOptions = {}): Promise<ReturnType<typeof outcomeToResponse>> {
  const script = compile(source);
  const copied = await script.run(context(options));
  const shared = await script.run({ ...context(options), share: true });
  const a = outcomeToResponse(copied, GET);
  const b = outcomeToResponse(shared, GET);
  assert.deepEqual(b, a, `share: ${show(shared)}\ncopy: ${show(copied)}`);
  return a;
}

describe('supplier values kept in the realm (RunContext.share)', () => {
  it('gives ScriptValues for objects and functions, primitives as they are', async () => {
    const exports = await sharedExports(`const list = [{a: 1}]\nconst n = 2\nconst s = 'x'\nconst f = (x) => x + 1\nexport {list, n, s, f}`);
    assert.equal(Object.getPrototypeOf(exports), null);
    assert.ok(exports.list instanceof ScriptValue);
    assert.ok(exports.f instanceof ScriptValue);
    assert.equal(exports.n, 2);
    assert.equal(exports.s, 'x');
    assert.deepEqual((exports.list as ScriptValue).toHost(), [{ a: 1 }]);
    assert.equal(typeof openScriptValue(exports.f), 'function');
    assert.equal(await (openScriptValue(exports.f) as (x: number) => unknown)(41), 42);
  });

  it('passes the same realm value to every script of the request, without a copy', async () => {
    const exports = await sharedExports(`const Items = [{n: 1}, {n: 2}]\nexport {Items}`);
    const consumer = compile(`import {Items} from '📤'\nItems.push({n: 3});\nItems.length`);
    const reader = compile(`import {Items} from '📤'\nItems.map((i) => i.n)`);
    const ctx = { ...context({ imports: exports }), share: true };
    assert.deepEqual(await consumer.run(ctx), { kind: 'value', value: 3 });
    const r = await reader.run(ctx);
    assert.equal(outcomeToResponse(r, GET).kind, 'json');
    assert.equal((outcomeToResponse(r, GET) as { body: string }).body, '[1,2,3]', 'a change by one consumer is seen by the next (as with module exports)');
    assert.deepEqual((exports.Items as ScriptValue).toHost(), [{ n: 1 }, { n: 2 }, { n: 3 }], 'a view sees the value as it is when it reads it');
  });

  it('opens Promises of ScriptValues for views', async () => {
    const exports = await sharedExports(`const A = {b: [1, 2]}\nexport {A}`);
    assert.deepEqual(await openScriptValue(Promise.resolve(exports.A)), { b: [1, 2] });
    assert.equal(openScriptValue(7), 7);
  });

  it('applies the output limits when a view copies the value out, naming the supplier', async () => {
    const exports = await sharedExports(`const Big = Array.from({length: 50}, (_, i) => ({i}))\nexport {Big}`);
    const limits: ScriptLimits = { ...DEFAULT_LIMITS, maxArrayLength: 10 };
    assert.throws(() => (exports.Big as ScriptValue).toHost(limits), (e: unknown) => e instanceof LanewayError && e.code === 'LW_SCRIPT_ARRAY_LIMIT' && e.message.startsWith('/app/GET.js: '));
  });

  it('copies rows out for a view field by field: nested lists and objects, dates', async () => {
    const exports = await sharedExports(
      `const Rows = [
  {id: 1, name: 'a', tags: ['x', 'y'], spec: {w: 2, h: [3, [4]]}, at: new Date(0), gone: undefined},
  [null, true, 2.5, {deep: {deeper: ['z']}}],
  'text'
]
const shared = {n: 1}
const Twice = [shared, {again: shared}]
export {Rows, Twice}`,
    );
    const rows = (exports.Rows as ScriptValue).toHost() as unknown[];
    assert.deepEqual(rows, [
      { id: 1, name: 'a', tags: ['x', 'y'], spec: { w: 2, h: [3, [4]] }, at: new Date(0), gone: undefined },
      [null, true, 2.5, { deep: { deeper: ['z'] } }],
      'text',
    ]);
    const first = rows[0] as Record<string, unknown>;
    assert.ok(first.at instanceof Date, 'a date inside a row is a host Date');
    assert.equal(Object.getPrototypeOf(first), Object.prototype, 'rows are host objects');
    assert.equal(Object.getPrototypeOf(first.tags), Array.prototype, 'lists are host arrays');
    // The same object reached twice is copied twice (it is not circular).
    assert.deepEqual((exports.Twice as ScriptValue).toHost(), [{ n: 1 }, { again: { n: 1 } }]);
  });

  it('refuses rows that contain themselves, nest too deep, or hold too many values or characters', async () => {
    const exports = await sharedExports(
      `const row = {id: 1, list: []}
row.list.push({back: [row]})
const Loop = [row]
const Deep = [[[[[[{a: [[1]]}]]]]]]
const Many = [{a: [1, 2, 3]}, {b: [{c: 1}, {c: 2}]}]
const Long = [{a: 'x'.repeat(40)}, {b: ['y'.repeat(40)]}]
export {Loop, Deep, Many, Long}`,
    );
    const code = (c: string) => (e: unknown) => e instanceof LanewayError && e.code === c;
    assert.throws(() => (exports.Loop as ScriptValue).toHost(), code('LW_SCRIPT_BAD_OUTPUT'));
    assert.throws(() => (exports.Deep as ScriptValue).toHost({ ...DEFAULT_LIMITS, maxDepth: 6 }), code('LW_SCRIPT_DEPTH_LIMIT'));
    assert.deepEqual((exports.Deep as ScriptValue).toHost({ ...DEFAULT_LIMITS, maxDepth: 9 }), [[[[[[{ a: [[1]] }]]]]]]);
    assert.throws(() => (exports.Many as ScriptValue).toHost({ ...DEFAULT_LIMITS, maxArrayLength: 6 }), code('LW_SCRIPT_ARRAY_LIMIT'));
    assert.deepEqual((exports.Many as ScriptValue).toHost({ ...DEFAULT_LIMITS, maxArrayLength: 7 }), [{ a: [1, 2, 3] }, { b: [{ c: 1 }, { c: 2 }] }]);
    assert.throws(() => (exports.Long as ScriptValue).toHost({ ...DEFAULT_LIMITS, maxStringLength: 79 }), code('LW_SCRIPT_STRING_LIMIT'));
    assert.deepEqual((exports.Long as ScriptValue).toHost({ ...DEFAULT_LIMITS, maxStringLength: 80 }), [{ a: 'x'.repeat(40) }, { b: ['y'.repeat(40)] }]);
  });

  it('cannot be made by other code, so it never wraps a host object', () => {
    const Ctor = ScriptValue as unknown as new (...args: unknown[]) => unknown;
    assert.throws(() => new Ctor(Symbol('ScriptValue'), { host: true }, '/x.js'), TypeError);
  });

  it('keeps function suppliers working across scripts', async () => {
    const exports = await sharedExports(`const Title = (t) => t.title.toUpperCase()\nexport {Title}`);
    const outcome = await compile(`import {Title} from '📤'\nTitle({title: 'x'})`).run({ ...context({ imports: exports }), share: true });
    assert.deepEqual(outcome, { kind: 'value', value: 'X' });
  });
});

describe('plain JSON answers serialised without a copy', () => {
  it('sends the JSON of plain data as the copying path does', async () => {
    const answer = await sameAnswer(`({s: 'a"b\\u2028', n: [1, -0, 1.5, NaN, Infinity], b: true, z: null, u: undefined, f: () => 1, list: [undefined, () => 1, {x: [[]]}], '1': 'one', e: {}})`);
    assert.equal(answer.kind, 'json');
  });

  it('keeps the output of imported data, values of other scripts and the request', async () => {
    const exports = await sharedExports(`const P = Array.from({length: 5}, (_, i) => ({id: i, tags: i % 2 ? ['a'] : []}))\nexport {P}`);
    await sameAnswer(`import {P} from '📤'\nimport {q} from '&'\n({q, p: P.filter((p) => p.tags.includes('a')).map((p) => ({id: p.id}))})`, { imports: { ...exports, q: 'x' } });
  });

  it('falls back to the copying path for what it does not handle, with the same answer', async () => {
    const host = {
      when: new Date(0),
      html: new WebSafe('<b>x</b>'),
      big: 10n,
      withToJSON: { a: 1, toJSON: () => 'host toJSON' },
      proto: JSON.parse('{"__proto__": {"x": 1}, "y": 2}'),
      instance: new (class Thing {
        a = 1;
        toJSON(): unknown {
          return { thing: true };
        }
      })(),
      redirect: new ScriptRedirect({ path: '/a/', messages: [{ type: 'info', value: 'm' }] }),
    };
    for (const expr of ['when', 'html', 'big', 'withToJSON', 'proto', 'instance', 'redirect', "JSON.parse('{\"__proto__\": 1, \"k\": 2}')", 'new Date(5)', "Redirect.dir('x').invalid({a: 1})"]) {
      await sameAnswer(`import {when, html, big, withToJSON, proto, instance, redirect} from 'm'\n({v: ${expr}})`, { imports: host });
    }
    await sameAnswer(`let e\ntry { null.x } catch (err) { e = err }\n({e})`);
  });

  it('gives the same limits and errors as the copying path', async () => {
    const limited = async (source: string, limits: Partial<ScriptLimits>, code: string) => {
      const script = compile(source);
      for (const share of [false, true]) {
        const outcome: RunOutcome = await script.run({ ...context({ limits }), share });
        assert.equal(outcome.kind === 'limit' || outcome.kind === 'error' ? outcome.error.code : outcome.kind, code, `share ${share}: ${show(outcome)}`);
      }
    };
    await limited(`Array.from({length: 20}, (_, i) => ({i}))`, { maxArrayLength: 10 }, 'LW_SCRIPT_ARRAY_LIMIT');
    await limited(`({s: 'x'.repeat(50), t: 'y'.repeat(60)})`, { maxStringLength: 100 }, 'LW_SCRIPT_STRING_LIMIT');
    await limited(`let a = []\nArray.from({length: 30}).forEach(() => { a = [a] })\na`, { maxDepth: 20 }, 'LW_SCRIPT_DEPTH_LIMIT');
    await limited(`const a = {}\na.self = a\na`, {}, 'LW_SCRIPT_BAD_OUTPUT');
  });

  it('answers redirects, strings and empty results as before', async () => {
    assert.equal((await sameAnswer(`'/tasks/'`)).kind, 'redirect');
    assert.equal((await sameAnswer(`Redirect.dir('a')`)).kind, 'redirect');
    assert.equal((await sameAnswer(`'text'`)).kind, 'json');
    assert.equal((await sameAnswer(`const a = 1`)).kind, 'json');
    assert.equal((await sameAnswer(`(() => 1)`)).kind, 'error');
  });
});

describe('runs and callbacks that do not wait', () => {
  it('gives the outcome without a Promise when nothing waits, and a Promise when something does', async () => {
    const script = compile(`import {x} from 'm'\n[x].map((v) => v.name.toUpperCase())`);
    const now = script.run(context({ imports: { x: { name: 'a' } } }));
    assert.ok(!(now instanceof Promise));
    assert.deepEqual(now, { kind: 'value', value: ['A'] });
    const later = script.run(context({ importValue: () => delay({ name: 'b' }) }));
    assert.ok(later instanceof Promise);
    assert.deepEqual(await later, { kind: 'value', value: ['B'] });
  });

  it('restarts a callback that meets a waiting call in its waiting form, calling the host once per element', async () => {
    const calls: number[] = [];
    const title = (id: number) => {
      calls.push(id);
      return delay(`t${id}`);
    };
    const v = await compile(`import {title} from 'm'\n[1, 2, 3].map((id) => id > 1 ? title(id).toUpperCase() : 'x'.concat(id))`).run(context({ imports: { title } }));
    assert.deepEqual(v, { kind: 'value', value: ['x1', 'T2', 'T3'] });
    assert.deepEqual(calls, [2, 3]);
  });

  it('restarts before a host conversion hook runs, so the hook runs once', async () => {
    let calls = 0;
    const item = { toString: () => `item${++calls}` };
    const v = await compile(`import {item} from 'm'\n[1, 2].map((n) => 'a'.concat(item, n))`).run(context({ imports: { item } }));
    assert.deepEqual(v, { kind: 'value', value: ['aitem1' + '1', 'aitem2' + '2'] });
    assert.equal(calls, 2);
  });

  it('restarts before calling a replacement function or a script function', async () => {
    const v = await compile(`const up = (s) => s.toUpperCase();\n['a-b', 'c'].map((s) => s.replaceAll('-', () => '+')).map((s) => [s].map(up)[0])`).run(context());
    assert.deepEqual(v, { kind: 'value', value: ['A+B', 'C'] });
  });

  it('sorts with a comparator that calls methods, and with one that waits', async () => {
    const rank = async (n: number) => -n;
    assert.deepEqual(await compile(`['b', 'a', 'c'].sort((x, y) => x.localeCompare(y))`).run(context()), { kind: 'value', value: ['a', 'b', 'c'] });
    assert.deepEqual(await compile(`import {rank} from 'm'\n[1, 3, 2].sort((a, b) => rank(a).toFixed(0) - rank(b).toFixed(0))`).run(context({ imports: { rank } })), { kind: 'value', value: [3, 2, 1] });
  });

  it('reports the script line of an error in a callback that was restarted', async () => {
    // The position is that of the failing member access, in both forms of the callback
    // (the restarted form is written on the callback's last line and mapped back).
    const get = async (id: number) => ({ id });
    const outcome = await compile(`import {get} from 'm'\nconst r = [1].map((id) =>\n  get(id)\n    .missing.deep)\nr`).run(context({ imports: { get } }));
    assert.equal(outcome.kind, 'error', show(outcome));
    assert.match((outcome as { error: LanewayError }).error.message, /^\/app\/GET\.js:4:14: TypeError/);
    const sync = await compile(`const r = [1].map((id) =>\n  id.toFixed(0)\n    .missing.deep)\nr`).run(context());
    assert.match((sync as { error: LanewayError }).error.message, /^\/app\/GET\.js:3:14: TypeError/);
    const later = await compile(`import {get} from 'm'\nconst r = [1].map((id) => {\n  const x = get(id)\n  const y = 1\n  return x.missing.deep\n})\nr`).run(context({ imports: { get } }));
    assert.match((later as { error: LanewayError }).error.message, /^\/app\/GET\.js:5:20: TypeError/);
  });

  it('passes every argument to both forms of a callback (defaults, rest, destructuring)', async () => {
    const title = async (s: string) => s.toUpperCase();
    const source = `import {title} from 'm'
const a = [['x', 'y'], ['z']].map(([first], i, all) => first.concat(i, all.length))
const b = ['p', 'q'].map((s, i = 9, ...rest) => s.repeat(2).concat(i, rest.length))
const c = [{n: 'k'}].map(({n}, i) => title(n).concat(i))
const d = ['u'].map((...xs) => xs.join('/').includes('/0/'))
;({a, b, c, d})`;
    assert.deepEqual(await compile(source).run(context({ imports: { title } })), {
      kind: 'value',
      value: { a: ['x02', 'z12'], b: ['pp01', 'qq11'], c: ['K0'], d: [true] },
    });
  });

  it('passes (value, index) to the Array.from callback, as JavaScript does', async () => {
    assert.deepEqual(await compile(`Array.from({length: 2}, (...args) => args.length)`).run(context()), { kind: 'value', value: [2, 2] });
    assert.deepEqual(await compile(`Array.from('ab', (c, i) => c + i)`).run(context()), { kind: 'value', value: ['a0', 'b1'] });
  });
});
