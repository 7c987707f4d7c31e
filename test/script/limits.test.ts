/**
 * Bounded execution (docs/scripting.md "The request budget and its limits"): CPU budget, string and
 * array caps, call depth. Each ends in a 'limit' outcome (503) that the script cannot catch, and
 * other runs are unaffected.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { compile, context, delay, describe as show, run } from './helpers.js';
import { outcomeToResponse, type RunOutcome, type ScriptLimits } from '../../src/script/index.js';

/**
 * Limits other than the one a case is about, set out of reach (a loaded machine must not make the
 * CPU limit fire first in a test of the array limit).
 */
const OUT_OF_REACH: Record<string, Partial<ScriptLimits>> = {
  LW_SCRIPT_CPU_LIMIT: { maxStringLength: 50_000_000, maxArrayLength: 5_000_000, memoryMb: 4096 },
  default: { cpuMs: 60_000 },
};

async function limitOf(source: string, options: Parameters<typeof run>[1] = {}, expected?: string): Promise<string> {
  const reach = OUT_OF_REACH[expected ?? ''] ?? OUT_OF_REACH.default;
  const outcome = await run(source, { ...options, limits: { ...reach, ...options.limits } });
  assert.equal(outcome.kind, 'limit', show(outcome));
  const { error } = outcome as Extract<RunOutcome, { kind: 'limit' }>;
  assert.equal(error.status, 503);
  assert.match(error.message, /^\/app\/GET\.js: /, 'the log line names the script');
  return error.code;
}

const CASES: Array<[string, string, string]> = [
  ['infinite recursion', 'const f = (n) => f(n + 1)\nf(0)', 'LW_SCRIPT_DEPTH_LIMIT'],
  ['deep recursion', 'const depth = (n) => n === 0 ? 0 : 1 + depth(n - 1)\ndepth(100000)', 'LW_SCRIPT_DEPTH_LIMIT'],
  ['mutual recursion through callbacks', 'const f = (n) => [n].map(f)\nf(0)', 'LW_SCRIPT_DEPTH_LIMIT'],
  ["'x'.repeat(1e9)", "'x'.repeat(1e9)", 'LW_SCRIPT_STRING_LIMIT'],
  ['padStart(1e9)', "'x'.padStart(1e9)", 'LW_SCRIPT_STRING_LIMIT'],
  ['string doubling with +', "Array.from({length: 40}).reduce((s) => s + s, 'xy')", 'LW_SCRIPT_STRING_LIMIT'],
  ['string doubling with a template', "Array.from({length: 40}).reduce((s) => `${s}${s}`, 'xy')", 'LW_SCRIPT_STRING_LIMIT'],
  ['string doubling with +=', "let s = 'ab'\nArray.from({length: 40}).forEach(() => { s += s })", 'LW_SCRIPT_STRING_LIMIT'],
  ['quadratic replaceAll', "'a'.repeat(100000).replaceAll('a', '$`')", 'LW_SCRIPT_STRING_LIMIT'],
  ['Array.from({length: 1e9})', 'Array.from({length: 1e9})', 'LW_SCRIPT_ARRAY_LIMIT'],
  ['index far past the end', 'const a = []\na[1e9] = 1', 'LW_SCRIPT_ARRAY_LIMIT'],
  ['length set to 1e9', 'const a = []\na.length = 1e9', 'LW_SCRIPT_ARRAY_LIMIT'],
  ['concat doubling', 'Array.from({length: 40}).reduce((a) => a.concat(a), [1])', 'LW_SCRIPT_ARRAY_LIMIT'],
  ['spread doubling', 'Array.from({length: 40}).reduce((a) => [...a, ...a], [1])', 'LW_SCRIPT_ARRAY_LIMIT'],
  ['push doubling', 'let a = [1]\nArray.from({length: 40}).forEach(() => { a.push(...a.slice(0, 50000)) })', 'LW_SCRIPT_ARRAY_LIMIT'],
  ['split of a long string', "'x'.repeat(500000).split('')", 'LW_SCRIPT_ARRAY_LIMIT'],
  ['JSON.stringify of a shared-structure bomb', 'let a = [1]\nArray.from({length: 40}).forEach(() => { a = [a, a] })\nJSON.stringify(a)', 'LW_SCRIPT_ARRAY_LIMIT'],
  ['join of a shared-structure bomb', 'let a = [1]\nArray.from({length: 40}).forEach(() => { a = [a, a] })\na.join()', 'LW_SCRIPT_STRING_LIMIT'],
  ['emitting a shared-structure bomb', 'let a = [1]\nArray.from({length: 40}).forEach(() => { a = [a, a] })\na', 'LW_SCRIPT_ARRAY_LIMIT'],
  ['flat(Infinity) of a bomb', 'let a = [1]\nArray.from({length: 40}).forEach(() => { a = [a, a] })\na.flat(Infinity)', 'LW_SCRIPT_ARRAY_LIMIT'],
  ['CPU: a billion callbacks', 'const a = Array.from({length: 1000}, (_, i) => i)\na.map((x) => a.map((y) => a.map((z) => x * y * z)))', 'LW_SCRIPT_CPU_LIMIT'],
];

describe('limits end the run with a limit outcome (503)', () => {
  for (const [name, source, code] of CASES) {
    it(`stops ${name} with ${code}`, async () => {
      assert.equal(await limitOf(source, {}, code), code);
    });
  }

  it('answers 503', async () => {
    const outcome = await run("'x'.repeat(1e9)");
    assert.deepEqual(outcomeToResponse(outcome, { method: 'GET', path: '/app', acceptsJson: true, ajax: false }).kind, 'error');
    assert.equal((outcomeToResponse(outcome, { method: 'GET', path: '/app', acceptsJson: true, ajax: false }) as { status: number }).status, 503);
  });

  it('cannot be caught by the script', async () => {
    assert.equal(await limitOf(`const f = () => { try { return 'x'.repeat(1e9) } catch (e) { return 'caught' } }\nf()`), 'LW_SCRIPT_STRING_LIMIT');
    assert.equal(await limitOf(`const f = (n) => f(n + 1)\nlet r = 'none'\ntry { f(0) } catch (e) { r = 'caught' }\nr`), 'LW_SCRIPT_DEPTH_LIMIT');
    const burn = 'const a = Array.from({length: 1000}, (_, i) => i)\nconst burn = () => a.map((x) => a.map((y) => a.map((z) => x)))';
    assert.equal(await limitOf(`${burn}\nlet r\ntry { burn() } catch (e) { r = 'caught' }\ntry { burn() } catch (e) { r = 'again' }\nr`, {}, 'LW_SCRIPT_CPU_LIMIT'), 'LW_SCRIPT_CPU_LIMIT');
  });

  it('keeps the CPU budget near the configured value, per endpoint', async () => {
    const source = 'const a = Array.from({length: 1000}, (_, i) => i)\na.map((x) => a.map((y) => a.map((z) => x)))';
    // CPU time, not wall time: a loaded machine makes the wall clock run ahead, not the CPU clock.
    // The limit ends the run within 1.5x the budget of CPU (src/script/realm/20-budgets.js Budget); the bound
    // leaves room for the collector's threads.
    let cpu = process.cpuUsage();
    assert.equal(await limitOf(source, { limits: { cpuMs: 100 } }, 'LW_SCRIPT_CPU_LIMIT'), 'LW_SCRIPT_CPU_LIMIT');
    cpu = process.cpuUsage(cpu);
    assert.ok((cpu.user + cpu.system) / 1000 < 400, `a 100 ms budget ended after ${((cpu.user + cpu.system) / 1000).toFixed(0)} ms of CPU`);
    const started = performance.now();
    assert.equal(await limitOf(source, { compile: { limits: { cpuMs: 200 } } }, 'LW_SCRIPT_CPU_LIMIT'), 'LW_SCRIPT_CPU_LIMIT');
    assert.ok(performance.now() - started >= 190, 'a compile-time budget of 200 ms is used');
  });

  it('does not count time spent waiting for the host', async () => {
    const v = await run(`import {slow} from 'm'\nslow() + slow() + slow()`, { imports: { slow: () => delay(1, 40) }, limits: { cpuMs: 30 } });
    assert.deepEqual(v, { kind: 'value', value: 3 });
  });

  it('stops recursion that waits for the host at every level', async () => {
    assert.equal(await limitOf(`import {tick} from 'm'\nconst f = (n) => { tick(); return f(n + 1) }\nf(0)`, { imports: { tick: () => Promise.resolve(1) } }), 'LW_SCRIPT_DEPTH_LIMIT');
  });

  it('takes smaller caps from the run context', async () => {
    assert.equal(await limitOf(`'x'.repeat(200)`, { limits: { maxStringLength: 100 } }), 'LW_SCRIPT_STRING_LIMIT');
    assert.equal(await limitOf(`[1, 2, 3].concat([4])`, { limits: { maxArrayLength: 3 } }), 'LW_SCRIPT_ARRAY_LIMIT');
    assert.equal(await limitOf(`const f = (n) => n ? f(n - 1) : 0\nf(20)`, { limits: { maxDepth: 10 } }), 'LW_SCRIPT_DEPTH_LIMIT');
  });

  it('lets a concurrent normal run complete, and the process go on', async () => {
    const hog = compile('const f = (n) => f(n + 1)\nf(0)');
    const burner = compile('const a = Array.from({length: 1000}, (_, i) => i)\na.map((x) => a.map((y) => a.map((z) => x)))');
    const bomb = compile("'x'.repeat(1e9)");
    const normal = compile(`import {x} from 'm'\n({ok: x + 1})`);
    const slowImport = { importValue: () => delay(41, 5), request: context().request };
    const results = await Promise.all([
      normal.run(slowImport),
      hog.run(context()),
      burner.run(context()),
      normal.run(slowImport),
      bomb.run(context()),
      normal.run(context({ imports: { x: 1 } })),
    ]);
    assert.deepEqual(results.map((r) => r.kind), ['value', 'limit', 'limit', 'value', 'limit', 'value']);
    assert.deepEqual((results[0] as { value: unknown }).value, { ok: 42 });
    assert.deepEqual((results[5] as { value: unknown }).value, { ok: 2 });
    // The realm is still healthy afterwards.
    assert.deepEqual((await normal.run(context({ imports: { x: 2 } }))), { kind: 'value', value: { ok: 3 } });
  });
});

describe('functions of a finished run (function suppliers)', () => {
  it('are charged to the budget of the run that made them: a limit there ends that run for good', async () => {
    const supplier = compile(`const Spin = (n) => n === 0 ? 'done' : Spin(n - 1)\nconst Burn = () => { const a = Array.from({length: 1000}, (_, i) => i); return a.map((x) => a.map((y) => a.map((z) => x))).length }\nexport {Spin, Burn}`, { kind: 'function-supplier' });
    const outcome = await supplier.run(context());
    const { Spin, Burn } = (outcome as { value: Record<string, (...a: unknown[]) => unknown> }).value;
    assert.equal(Spin!(10), 'done');
    await delay(150);
    assert.equal(Spin!(50), 'done', 'time between calls is not counted');
    await assert.rejects(async () => Burn!(), (e: { code?: string }) => e.code === 'LW_SCRIPT_CPU_LIMIT');
    assert.throws(() => Spin!(10), (e: { code?: string }) => e.code === 'LW_SCRIPT_CPU_LIMIT', 'the request that ran out stays out');
    // Another run (another request) of the same supplier is not affected.
    const again = (await supplier.run(context())) as { value: Record<string, (...a: unknown[]) => unknown> };
    assert.equal(again.value.Spin!(10), 'done');
    assert.throws(() => again.value.Spin!(1e6), (e: { code?: string }) => e.code === 'LW_SCRIPT_DEPTH_LIMIT');
  });
});
