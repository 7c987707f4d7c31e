/**
 * The request budget (docs/scripting.md "The request budget and its limits") and the runtime
 * guarantees listed below, at the level of one compiled script (test/http/budget.test.ts checks the
 * same over HTTP):
 * - one budget per request: CPU time (not wall time; host functions that compute are counted,
 *   host functions that sleep are not), a memory allowance shared by every run of the request,
 *   metered built-ins in straight-line code;
 * - no limit can be caught or swallowed by a `finally`;
 * - no `then` hook can be defined, even by computed keys or built-ins;
 * - nothing of the host leaks (stacks, function texts), run-time errors name file:line:column;
 * - default parameters calling imports; Redirect.dir('') / name('') are errors;
 * - built-ins compute what Node computes, or fail (no holes).
 *
 * No test asserts a duration except generous upper bounds where the point is "does not hang".
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import * as scriptModule from '../../src/script/index.js';
import type { RunOutcome, ScriptLimits } from '../../src/script/index.js';
import { compile, context, delay, describe as show, run, value, type RunOptions } from './helpers.js';

/** The other limits out of reach, so that only the one a case is about can fire on a loaded machine. */
const FOR_CPU: Partial<ScriptLimits> = { maxStringLength: 50_000_000, maxArrayLength: 5_000_000, memoryMb: 4096, maxDepth: 2000 };
const NOT_CPU: Partial<ScriptLimits> = { cpuMs: 60_000 };

type Limited = Extract<RunOutcome, { kind: 'limit' }>;
type Failed = Extract<RunOutcome, { kind: 'error' }>;

/** Runs a script that must end with a limit (503) and returns the limit's code. */
async function limitCode(source: string, options: RunOptions = {}): Promise<string> {
  const outcome = await run(source, options);
  assert.equal(outcome.kind, 'limit', `expected a limit, got ${show(outcome)}`);
  assert.equal((outcome as Limited).error.status, 503);
  return (outcome as Limited).error.code;
}

/** Runs a script that must end with a script error and returns it. */
async function errorOf(source: string, options: RunOptions = {}): Promise<Failed['error']> {
  const outcome = await run(source, options);
  assert.equal(outcome.kind, 'error', `expected an error, got ${show(outcome)}`);
  return (outcome as Failed).error;
}

/** Sleeps in the host without using CPU (a synchronous host call that waits, as on a busy machine). */
const nap = (ms = 300): string => {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
  return 'rested';
};
/** Uses `ms` of the process's CPU time in the host. */
const burnCpu = (ms: number): void => {
  const start = process.cpuUsage();
  for (;;) {
    const used = process.cpuUsage(start);
    if ((used.user + used.system) / 1000 >= ms) return;
  }
};

// ---- One budget per request ---------------------------------------------------------------------

describe('the budget is CPU time, and host calls are counted', () => {
  it('does not fail a run whose host call sleeps 300 ms without CPU (budget 100 ms), even when script code runs afterwards', async () => {
    const source = `import {nap} from 'host'\nconst a = nap()\nconst b = [1, 2].map(() => nap())\nconst n = Array.from({length: 500}, (_, i) => i * 2).filter((x) => x % 3 === 0).length\nconst r = {a, b, n}\nr`;
    assert.deepEqual(await value(source, { imports: { nap: () => nap(300) }, limits: { ...FOR_CPU, cpuMs: 100 } }), { a: 'rested', b: ['rested', 'rested'], n: 167 });
  });

  it('counts a host function that uses CPU, also when it is called by a built-in without script code in between', async () => {
    const started = performance.now();
    // Without counting, 2000 calls of 5 ms take 10 s.
    const code = await limitCode(`import {busy} from 'host'\nArray.from({length: 2000}, busy).length`, {
      imports: { busy: () => burnCpu(5) },
      limits: { ...FOR_CPU, cpuMs: 100 },
    });
    assert.equal(code, 'LW_SCRIPT_CPU_LIMIT');
    assert.ok(performance.now() - started < 5000, 'ended long before the work was done');
  });

  it('counts a host sort comparator that uses CPU', async () => {
    const started = performance.now();
    const code = await limitCode(`import {cmp} from 'host'\nArray.from({length: 3000}, (_, i) => (i * 7919) % 3001).sort(cmp).length`, {
      imports: {
        cmp: (x: number, y: number) => {
          burnCpu(1);
          return x - y;
        },
      },
      limits: { ...FOR_CPU, cpuMs: 100 },
    });
    assert.equal(code, 'LW_SCRIPT_CPU_LIMIT');
    assert.ok(performance.now() - started < 5000, 'ended long before the work was done');
  });

  it(
    'counts a few long host calls that use CPU (3 × 300 ms with a 100 ms budget)',
    {},
    async () => {
      const code = await limitCode(`import {busy} from 'host'\nbusy()\nbusy()\nbusy()\n'done'`, { imports: { busy: () => burnCpu(300) }, limits: { ...FOR_CPU, cpuMs: 100 } });
      assert.equal(code, 'LW_SCRIPT_CPU_LIMIT');
    },
  );

  it('meters straight-line built-in calls (no function entry between them)', async () => {
    const sorts = Array.from({ length: 60 }, () => 'big.toSorted()').join('\n');
    const started = performance.now();
    assert.equal(
      await limitCode(`const big = Array.from({length: 100000}, (_, i) => (i * 7919) % 100003)\n${sorts}\nbig.length`, { limits: { ...FOR_CPU, cpuMs: 100 } }),
      'LW_SCRIPT_CPU_LIMIT',
    );
    const replaces = Array.from({ length: 60 }, () => `'ab'.repeat(300000).replaceAll('a', 'bb')`).join('\n');
    assert.equal(await limitCode(`${replaces}\n'done'`, { limits: { ...FOR_CPU, cpuMs: 100 } }), 'LW_SCRIPT_CPU_LIMIT');
    // Unmetered, the two scripts take over 10 s.
    assert.ok(performance.now() - started < 5000, 'ended long before the work was done');
  });

  it('shares one CPU budget between the runs of one request', async () => {
    const { ScriptBudget } = scriptModule;
    assert.equal(typeof ScriptBudget, 'function', 'ScriptBudget is exported');
    // Each run spins 60 ms of the clock: within a 100 ms budget alone, not six of them together.
    const spin = compile(`const t0 = Date.now()\nArray.from({length: 1000}).some(() => Array.from({length: 1000}).some(() => Date.now() - t0 >= 60))`);
    const alone = await spin.run(context({ limits: { ...FOR_CPU, cpuMs: 100 } }));
    assert.equal(alone.kind, 'value', show(alone));
    const budget = new ScriptBudget({ ...scriptModule.DEFAULT_LIMITS, ...FOR_CPU, cpuMs: 100 }, { path: '/app/here', url: 'https://example.test/app/here' });
    const kinds: string[] = [];
    for (let i = 0; i < 8; i++) kinds.push((await spin.run({ ...context(), budget })).kind);
    assert.equal(kinds[0], 'value');
    assert.equal(kinds.at(-1), 'limit', kinds.join());
    assert.equal(budget.exhausted?.code, 'LW_SCRIPT_CPU_LIMIT');
  });
});

describe('the memory allowance', () => {
  it('ends a run whose built-ins make more than the allowance, uncatchably', async () => {
    assert.equal(await limitCode(`Array.from({length: 100}, (_, i) => String(i % 10).repeat(500000)).length`, { limits: NOT_CPU }), 'LW_SCRIPT_MEMORY_LIMIT');
    assert.equal(
      await limitCode(`let r = 'none'\ntry { Array.from({length: 100}, (_, i) => String(i % 10).repeat(500000)) } catch (e) { r = 'caught' }\nr`, { limits: NOT_CPU }),
      'LW_SCRIPT_MEMORY_LIMIT',
    );
    const parses = Array.from({ length: 30 }, () => 'JSON.parse(text)').join('\n');
    assert.equal(await limitCode(`const text = '"' + 'x'.repeat(900000) + '"'\n${parses}\ntext.length`, { limits: NOT_CPU }), 'LW_SCRIPT_MEMORY_LIMIT');
  });

  it('is set by memoryMb', async () => {
    const source = `Array.from({length: 20}, (_, i) => String(i % 10).repeat(500000)).length`; // about 20 MiB
    assert.equal(await value(source, { limits: NOT_CPU }), 20);
    assert.equal(await limitCode(source, { limits: { ...NOT_CPU, memoryMb: 10 } }), 'LW_SCRIPT_MEMORY_LIMIT');
  });

  it('is one allowance for every run of a request', async () => {
    const { ScriptBudget } = scriptModule;
    assert.equal(typeof ScriptBudget, 'function', 'ScriptBudget is exported');
    const build = compile(`Array.from({length: 20}, (_, i) => String(i % 10).repeat(500000)).length`);
    const limits = { ...scriptModule.DEFAULT_LIMITS, ...NOT_CPU };
    // Four runs with budgets of their own: each fits.
    for (let i = 0; i < 4; i++) assert.equal((await build.run(context({ limits }))).kind, 'value');
    const budget = new ScriptBudget(limits, { path: '/app/here', url: 'https://example.test/app/here' });
    const kinds: string[] = [];
    for (let i = 0; i < 4; i++) kinds.push((await build.run({ ...context(), budget })).kind);
    assert.deepEqual(kinds, ['value', 'value', 'value', 'limit']);
    assert.equal(budget.exhausted?.code, 'LW_SCRIPT_MEMORY_LIMIT');
  });
});

describe('sizes refused before the work is done', () => {
  it('normalize that would expand past the string limit', async () => {
    const code = await limitCode(`'\\uFDFA'.repeat(100000).normalize('NFKD').length`, { limits: NOT_CPU });
    assert.ok(code === 'LW_SCRIPT_STRING_LIMIT' || code === 'LW_SCRIPT_MEMORY_LIMIT', code);
  });

  it('encodeURIComponent and encodeURI of a string whose encoding is too long', async () => {
    assert.equal(await limitCode(`encodeURIComponent('é'.repeat(400000)).length`, { limits: NOT_CPU }), 'LW_SCRIPT_STRING_LIMIT');
    assert.equal(await limitCode(`encodeURI('é'.repeat(400000)).length`, { limits: NOT_CPU }), 'LW_SCRIPT_STRING_LIMIT');
  });

  it('JSON.parse of a text with more than 100,000 values, also when no array of it is that long', async () => {
    assert.equal(await limitCode(`JSON.parse('[' + Array.from({length: 100001}, () => '0').join(',') + ']').length`, { limits: NOT_CPU }), 'LW_SCRIPT_ARRAY_LIMIT');
    assert.equal(await limitCode(`JSON.parse('[' + Array.from({length: 60000}, () => '{"a":1,"b":2}').join(',') + ']').length`, { limits: NOT_CPU }), 'LW_SCRIPT_ARRAY_LIMIT');
  });
});

// ---- Limits cannot be caught or swallowed -------------------------------------------------------

const BURN = 'const big = Array.from({length: 1000}, (_, i) => i)\nconst burn = () => big.map((x) => big.map((y) => big.map((z) => x + y + z))).length\n';
const HOOK = "const k = 'th' + 'en'\nconst fn = () => 1\nconst set = () => { const o = {}; o[k] = fn; return o }\n";
const DEEP = 'const deep = (n) => deep(n + 1)\n';
const HUGE = 'const huge = () => Array.from({length: 1e9})\n';
const MEMORY = 'const hog = () => Array.from({length: 100}, (_, i) => String(i % 10).repeat(500000))\n';

/** [name, prelude, the call that passes the limit, expected kind and code, limits]. */
const SWALLOWERS: Array<[string, string, string, 'limit' | 'error', string, Partial<ScriptLimits>]> = [
  ['STRING', '', "'x'.repeat(1e9)", 'limit', 'LW_SCRIPT_STRING_LIMIT', NOT_CPU],
  ['CPU', BURN, 'burn()', 'limit', 'LW_SCRIPT_CPU_LIMIT', { ...FOR_CPU, cpuMs: 100 }],
  ['DEPTH', DEEP, 'deep(0)', 'limit', 'LW_SCRIPT_DEPTH_LIMIT', NOT_CPU],
  ['ARRAY', HUGE, 'huge()', 'limit', 'LW_SCRIPT_ARRAY_LIMIT', NOT_CPU],
  ['MEMORY', MEMORY, 'hog()', 'limit', 'LW_SCRIPT_MEMORY_LIMIT', NOT_CPU],
  ['FORBIDDEN', HOOK, 'set()', 'error', 'LW_SCRIPT_FORBIDDEN_ACCESS', NOT_CPU],
];

/** Ways of trying to turn a limit into an answer; `X` is the call that passes the limit. */
const SHAPES: Array<[string, string]> = [
  ['finally that returns', "const f = () => { try { return X } finally { return 'swallowed' } }\nf()"],
  ['catch that returns', "const f = () => { try { return X } catch (e) { return 'caught' } }\nf()"],
  [
    'nested try/catch/finally',
    "const f = () => { try { try { return X } catch (e) { return 'inner' } finally { return 'f1' } } catch (e) { return 'outer' } finally { return 'f2' } }\nf()",
  ],
  ['finally in a callback of map', ";[1, 2].map((i) => { try { return X } finally { return 'swallowed' } })"],
  ['catch in a callback of map', ";[1, 2].map((i) => { try { return X } catch (e) { return 'caught' } })"],
  ['a catch that swallows, then another try', "let r = 'none'\ntry { X } catch (e) { r = 'caught' }\ntry { r = 'second' } finally { r = 'finally' }\nr"],
  ['a top-level finally', "let r = 'none'\ntry { X } finally { r = 'finally' }\nr"],
];

describe('no limit can be caught or swallowed', () => {
  for (const [what, prelude, call, kind, code, limits] of SWALLOWERS) {
    for (const [shape, template] of SHAPES) {
      it(`${what}: ${shape}`, async () => {
        const outcome = await run(prelude + template.replace('X', call), { limits });
        assert.equal(outcome.kind, kind, show(outcome));
        assert.equal((outcome as Limited | Failed).error.code, code);
      });
    }
  }

  it('a finally that returns does not swallow a stack overflow of a built-in (array nested 50,000 deep)', async () => {
    // The caught form is the reference: the overflow becomes LW_SCRIPT_DEPTH_LIMIT.
    const nest = `let o = []\nArray.from({length: 50000}).forEach(() => { o = [o] })\n`;
    assert.equal(await limitCode(`${nest}const f = () => { try { return o.flat(Infinity).length } catch (e) { return 'caught' } }\nf()`, { limits: NOT_CPU }), 'LW_SCRIPT_DEPTH_LIMIT');
  });

  it(
    'a finally that returns does not swallow a stack overflow (flat, join, or deep recursion with a high depth limit)',
    {},
    async () => {
      const nest = `let o = []\nArray.from({length: 50000}).forEach(() => { o = [o] })\n`;
      assert.equal(await limitCode(`${nest}const f = () => { try { return o.flat(Infinity).length } finally { return 'swallowed' } }\nf()`, { limits: NOT_CPU }), 'LW_SCRIPT_DEPTH_LIMIT');
      assert.equal(await limitCode(`${nest}const f = () => { try { return o.join(',').length } finally { return 'swallowed' } }\nf()`, { limits: NOT_CPU }), 'LW_SCRIPT_DEPTH_LIMIT');
      assert.equal(
        await limitCode(`const d = (n) => n === 0 ? 0 : 1 + d(n - 1)\nconst f = () => { try { return d(1e6) } finally { return 'swallowed' } }\nf()`, { limits: { ...NOT_CPU, maxDepth: 10_000_000 } }),
        'LW_SCRIPT_DEPTH_LIMIT',
      );
    },
  );

  it('a limit ends the whole request: later runs of the same budget fail at once', async () => {
    const { ScriptBudget } = scriptModule;
    assert.equal(typeof ScriptBudget, 'function', 'ScriptBudget is exported');
    const budget = new ScriptBudget({ ...scriptModule.DEFAULT_LIMITS, ...NOT_CPU }, { path: '/app/here', url: 'https://example.test/app/here' });
    const first = await compile(`const f = () => { try { return 'x'.repeat(1e9) } finally { return 'swallowed' } }\nf()`).run({ ...context(), budget });
    assert.equal(first.kind, 'limit', show(first));
    const next = await compile(`const g = (x) => x + 1\ng(1)`).run({ ...context(), budget });
    assert.equal(next.kind, 'limit', show(next));
    assert.equal((next as Limited).error.code, 'LW_SCRIPT_STRING_LIMIT');
  });
});

// ---- No hooks, no adoption ----------------------------------------------------------------------

describe('a script value never gets a then (or another hook) at run time', () => {
  /** Expressions that would give a script value a hook function. */
  const HOOK_WRITES: Array<[string, string]> = [
    ['o[k] = f', '(() => { const o = {}; o[k] = f; return o })()'],
    ['o[k] = f in a callback', '[1].map(() => { const o = {}; o[k] = f; return o })'],
    ['a computed key in a literal', '({[k]: f})'],
    ['spread of a literal with a computed key', '({...{[k]: f}})'],
    ['Object.assign', 'Object.assign({}, {[k]: f})'],
    ['Object.fromEntries', 'Object.fromEntries([[k, f]])'],
    ['toJSON', "(() => { const o = {}; o['to' + 'JSON'] = f; return o })()"],
    ['toString', "(() => { const o = {}; o['to' + 'String'] = f; return o })()"],
    ['valueOf', "(() => { const o = {}; o['value' + 'Of'] = f; return o })()"],
  ];
  const prelude = "const k = 'th' + 'en'\nconst f = () => 1\n";
  for (const [name, expression] of HOOK_WRITES) {
    it(`${name} is LW_SCRIPT_FORBIDDEN_ACCESS, also inside try/catch/finally`, async () => {
      assert.equal((await errorOf(`${prelude}const r = ${expression}\nr`)).code, 'LW_SCRIPT_FORBIDDEN_ACCESS');
      const wrapped = `const w = () => { try { return ${expression} } catch (e) { return 'caught' } finally { return 'swallowed' } }\nw()`;
      assert.equal((await errorOf(prelude + wrapped)).code, 'LW_SCRIPT_FORBIDDEN_ACCESS');
    });
  }

  it('a then read from data is a value like any other (no function, nothing adopted)', async () => {
    assert.deepEqual(await value(`const o = JSON.parse('{"then": 1}')\nconst r = {read: o.then, copy: Object.assign({}, o)}\nr`), { read: 1, copy: { then: 1 } });
  });

  it('a waiting script whose completion has a then that is not a function answers with it', async () => {
    const v = await value(`import {later} from 'host'\nconst x = later()\nconst o = JSON.parse('{"then": "not a function"}')\no.x = x\no`, { imports: { later: () => delay(5, 5) } });
    assert.deepEqual(v, { then: 'not a function', x: 5 });
  });
});

// ---- Nothing of one request reaches another ------------------------------------------------------

describe('per-request state', () => {
  it('Redirect.index() after a wait names the request of its own run, not of a run that ran meanwhile', async () => {
    const source = `import {later} from 'host'\nconst ix = Redirect.index\nconst x = later()\n;[x, ix().url.pathname, Redirect.index().url.pathname].join(' ')`;
    const script = compile(source);
    const slow = script.run(context({ path: '/first/page', url: 'https://example.test/first/page', imports: { later: () => delay('slow', 100) } }));
    const fast = await script.run(context({ path: '/second/page', url: 'https://example.test/second/page', imports: { later: () => 'fast' } }));
    assert.deepEqual(fast, { kind: 'value', value: 'fast /second/ /second/' });
    assert.deepEqual(await slow, { kind: 'value', value: 'slow /first/ /first/' });
  });
});

// ---- Nothing of the host leaks ------------------------------------------------------------------

const LEAKS = /file:|node:|dist\/|laneway:realm|laneway-script|<anonymous>|\/src\/|\.ts:|Generator|\$lw_/;

function assertScriptStack(stack: unknown, name: string): void {
  assert.equal(typeof stack, 'string');
  const lines = (stack as string).split('\n');
  assert.match(lines[0]!, new RegExp(`^${name}: `));
  assert.ok(lines.length >= 2, `at least one frame: ${stack}`);
  for (const line of lines.slice(1)) assert.match(line, /^ {4}at \/app\/GET\.js:\d+:\d+$/, `frame of the script only: ${stack}`);
  assert.doesNotMatch(stack as string, LEAKS);
}

describe('stacks, function texts and error positions', () => {
  it('a caught error has name, message and a stack of script frames only', async () => {
    const [name, message, stack] = (await value(`let r = []\ntry { null.x } catch (e) { r = [e.name, e.message, e.stack] }\nr`)) as string[];
    assert.equal(name, 'TypeError');
    assert.match(message!, /null/);
    assertScriptStack(stack, 'TypeError');
    assert.match(stack!, /^ {4}at \/app\/GET\.js:2:\d+$/m);
  });

  it('errors thrown inside callbacks and built-ins have clean stacks', async () => {
    const sources: Array<[string, string]> = [
      [`let r = ''\ntry { [1].map((x) => x.y.z) } catch (e) { r = e.stack }\nr`, 'TypeError'],
      [`let r = ''\ntry { [3, 1, 2].sort((a, b) => a.q.w) } catch (e) { r = e.stack }\nr`, 'TypeError'],
      [`let r = ''\ntry { JSON.parse('{') } catch (e) { r = e.stack }\nr`, 'SyntaxError'],
      [`let r = ''\ntry { 'abc'.repeat(-1) } catch (e) { r = e.stack }\nr`, 'RangeError'],
      [`let r = ''\ntry { decodeURIComponent('%') } catch (e) { r = e.stack }\nr`, 'URIError'],
    ];
    for (const [source, name] of sources) assertScriptStack(await value(source), name);
  });

  it('an error of a host function, caught by the script, has a clean stack too', async () => {
    const [name, message, stack] = (await value(`import {fail} from 'host'\nlet r = []\ntry { fail() } catch (e) { r = [e.name, e.message, e.stack] }\nr`, {
      imports: {
        fail: () => {
          throw new TypeError('host says no');
        },
      },
    })) as string[];
    assert.deepEqual([name, message], ['TypeError', 'host says no']);
    assertScriptStack(stack, 'TypeError');
  });

  it("String(f), `${f}`, f.toString() and '' + f of a script arrow are the arrow's own text", async () => {
    const text = '(a, {b = 2} = {}) => {\n  return a + b // sum\n}';
    const v = await value(`const f = ${text};\n[String(f), \`\${f}\`, f.toString(), '' + f, String((x) => x * 2)]`);
    assert.deepEqual(v, [text, text, text, text, '(x) => x * 2']);
  });

  it('the text of a granted global or built-in is function name() { [native code] }', async () => {
    const names = ['Math.max', 'JSON.parse', 'JSON.stringify', 'Array', 'Array.from', 'Object', 'Object.keys', 'Number', 'String', 'Boolean', 'parseInt', 'decodeURIComponent', 'Redirect.dir', 'Redirect.index', '[].map', "''.replaceAll", 'Date.now'];
    const v = (await value(`[${names.join(', ')}].map((f) => String(f))`)) as string[];
    names.forEach((n, i) => assert.equal(v[i], `function ${n.replace(/^.*\./, '')}() { [native code] }`, n));
    // A bridge to a host function shows no host code either.
    const bridged = (await value(`import {hostFn} from 'host'\nString(hostFn)`, { imports: { hostFn: () => 'secret host code' } })) as string;
    assert.match(bridged, /^function \w*\(\) \{ \[native code\] \}$/);
  });

  it(
    'the names of Date, encodeURIComponent and encodeURI are those of JavaScript',
    {},
    async () => {
      assert.deepEqual(await value(`[Date.name, encodeURIComponent.name, encodeURI.name]`), ['Date', 'encodeURIComponent', 'encodeURI']);
      assert.deepEqual(await value(`[String(Date), String(encodeURIComponent), String(encodeURI)]`), [
        'function Date() { [native code] }',
        'function encodeURIComponent() { [native code] }',
        'function encodeURI() { [native code] }',
      ]);
    },
  );

  it('an uncaught run-time error names file:line:column', async () => {
    const error = await errorOf(`const o = null\n\n  o.x`);
    assert.equal(error.code, 'LW_SCRIPT_RUNTIME');
    assert.match(error.message, /^\/app\/GET\.js:3:\d+: TypeError: /);
    assert.equal(error.line, 3);
    assert.equal(typeof error.column, 'number');
    const inCallback = await errorOf(`const f = (o) => o.x.y;\n[1, 2].map(f)`);
    assert.match(inCallback.message, /^\/app\/GET\.js:1:\d+: TypeError: /);
  });
});

// ---- Default parameters, empty Redirect segments -----------------------------------------------

describe('default parameters that call imports', () => {
  const imports = { g: (n: number) => n * 10, ag: (n: number) => delay(n * 100, 2) };
  const H = "import {g, ag} from 'host'\n";
  const CASES: Array<[string, unknown]> = [
    ['const f = (x = g(1)) => x\nf()', 10],
    ['const f = (x = g(1)) => x\nf(7)', 7],
    ['const f = ({a = g(2)} = {}) => a\nf()', 20],
    ['const f = ({a = g(2)} = {}) => a\nf({a: 5})', 5],
    ['const f = (x = ag(1)) => x\nf()', 100],
    ['const f = ({a = ag(2)} = {}) => a\nf({})', 200],
    ['const f = ([x = ag(3)] = []) => x\nf()', 300],
    ['const f = (x = ag(1), y = g(x)) => [x, y]\nf()', [100, 1000]],
    ['const f = (x = ag(1)) => x;\n[1, 2].map((v) => f(v === 1 ? undefined : v))', [100, 2]],
  ];
  for (const [source, expected] of CASES) {
    it(source.replace('\n', ' ⏎ '), async () => {
      assert.deepEqual(await value(H + source, { imports }), expected);
    });
  }
});

describe("Redirect.dir('') and Redirect.name('')", () => {
  for (const call of ["Redirect.dir('')", "Redirect.name('')", "Redirect.dir('a').dir('')", "Redirect.home().name('')"]) {
    it(`${call} is a run-time error with its position, not a path with //`, async () => {
      const error = await errorOf(`const ok = 1\n${call}`);
      assert.equal(error.code, 'LW_SCRIPT_RUNTIME');
      assert.match(error.message, /^\/app\/GET\.js:2:\d+: /);
      assert.equal(error.status, 500);
    });
  }

  it('the error can be caught as a TypeError', async () => {
    assert.equal(await value(`let r = ''\ntry { Redirect.dir('') } catch (e) { r = e.name }\nr`), 'TypeError');
  });
});

// ---- Built-ins behave as JavaScript --------------------------------------------------------------

/** What Node computes for the same expression (the script subset is JavaScript). */
function inNode(expression: string, data: Record<string, unknown> = {}): unknown {
  return new Function(...Object.keys(data), `return (${expression})`)(...Object.values(data));
}

describe('built-ins compute what Node computes', () => {
  const SAME: string[] = [
    'Array.from({length: 2.5}, (_, i) => i)',
    'Array.from({length: -1}, (_, i) => i)',
    'Array.from({length: 3})',
    "[3, undefined, 1, 'b', 'a', 10, 2].sort()",
    "[3, undefined, 1, 'b', 'a'].toSorted()",
    '[3, 1, 2].sort((a, b) => b - a)',
    '[[] instanceof Array, ({}) instanceof Object, [] instanceof Object, 5 instanceof Number, "s" instanceof String, new Date(0) instanceof Date, new Date(0) instanceof Object]',
    '[typeof Array, typeof Object, typeof Number, typeof String, typeof Boolean, typeof Date, typeof Math, typeof JSON]',
    "[Array.isArray([]), Array.of(7), Array(1, 2), Number('42'), String(42), Boolean(''), Object(null), Object.keys({b: 1, a: 2})]",
    "[1, [2, [3, [4]]]].flat(Infinity)",
    "[1, 2, 3].flatMap((x) => [x, x * 2])",
    "[1, 2, 3, 4].findLast((x) => x % 2 === 1)",
    "[5, 1, 4].toReversed().with(0, 9)",
    "'a-b-c'.split('-', 2)",
    "'aaa'.replaceAll('a', '$&$&')",
    "'x.y'.replace('.', \"$'$`\")",
    "'ﬁ\\u0065\\u0301'.normalize('NFKC')",
    "encodeURIComponent('é ü/?')",
    "JSON.stringify({a: [1, undefined, 'x'], b: undefined}, null, 2)",
  ];
  for (const expression of SAME) {
    it(expression, async () => {
      assert.deepEqual(await value(`const result = ${expression}\nresult`), inNode(expression));
    });
  }
});

describe('arrays never have holes', () => {
  const HOLES = ['const a = [1]\na.length = 5\na', 'const a = [1, 2]\na[10] = 1\na', 'const a = []\nconst i = 3\na[i] = 1\na', 'const a = []\na[1] = 1\na', 'Array(3)'];
  for (const source of HOLES) {
    it(`${source.replace(/\n/g, ' ⏎ ')} is a RangeError`, async () => {
      const error = await errorOf(source);
      assert.equal(error.code, 'LW_SCRIPT_RUNTIME');
      assert.match(error.message, /RangeError/);
    });
  }

  it('writing at the end or shortening is fine, and a RangeError can be caught', async () => {
    assert.deepEqual(await value('const a = [1, 2, 3]\na[3] = 4\na.length = 2\na'), [1, 2]);
    assert.equal(await value(`const a = [1]\nlet r = 'none'\ntry { a[5] = 1 } catch (e) { r = e.name }\nr`), 'RangeError');
  });
});

describe('property: array and string methods give what Node gives', () => {
  const item = fc.oneof(fc.integer({ min: -20, max: 20 }), fc.constantFrom('a', 'b', 'B', '10', '', 'é'), fc.constant(undefined));
  const text = fc.string({ unit: fc.constantFrom('a', 'b', 'é', 'e\u0301', 'ß', 'ﬁ', '$', '&', "'", '`', '-', ' ', '/', '\uFDFA'), maxLength: 12 });
  const data = fc.record({
    a: fc.array(item, { maxLength: 12 }),
    b: fc.array(fc.integer({ min: -50, max: 50 }), { maxLength: 12 }),
    s: text,
    t: text,
    u: text,
    n: fc.integer({ min: -6, max: 30 }),
  });
  const EXPRESSIONS = [
    '[...a].sort()',
    'a.toSorted()',
    'b.toSorted((x, y) => x - y)',
    'a.slice(n, -2)',
    '[a.indexOf(n), a.lastIndexOf(s), a.includes(n), a.at(n)]',
    'a.concat(b, [n])',
    'a.join(t)',
    'String(a)',
    'a.toReversed()',
    '[b.some((x) => x > n), b.every((x) => x > n), b.find((x) => x > n), b.findIndex((x) => x > n), b.findLast((x) => x < n), b.findLastIndex((x) => x < n)]',
    'b.filter((x) => x > n).map((x, i) => x * i)',
    'b.reduce((x, y) => (x * 31 + y) % 1000003, 7)',
    'b.reduceRight((x, y) => x + "," + y, "")',
    'b.flatMap((x) => x % 2 ? [x, x] : [])',
    '[a, [b, [s]]].flat(n)',
    'Array.from({length: n / 3}, (_, i) => i * 2)',
    'b.with(n, 0)',
    'b.toSpliced(n, 2, s)',
    '((c) => [c.splice(n, 2, s, t), c])([...a])',
    '((c) => [c.push(n), c.unshift(s), c.pop(), c.shift(), c.reverse(), c.fill(0, n)])([...b])',
    'Object.entries(Object.fromEntries(b.map((x, i) => [String(x), i])))',
    's.split(t)',
    's.split(t, n)',
    's.replaceAll(t, u)',
    's.replace(t, u)',
    '[s.padStart(n, t), s.padEnd(n, t)]',
    's.repeat(n)',
    '[s.indexOf(t), s.lastIndexOf(t), s.includes(t), s.startsWith(t), s.endsWith(t)]',
    "[s.normalize('NFD'), s.normalize('NFKC'), s.normalize('NFKD')]",
    '[s.toUpperCase(), s.toLowerCase(), s.trim()]',
    '[encodeURIComponent(s), encodeURI(s), decodeURIComponent(encodeURIComponent(s))]',
    '[s.slice(n, -2), s.substring(n), s.at(n), s.concat(t, n)]',
    '`${s}:${a}:${n}`',
    'JSON.parse(JSON.stringify({s, a, b}))',
  ];
  const names = ['a', 'b', 's', 't', 'u', 'n'];
  for (const expression of EXPRESSIONS) {
    it(expression, async () => {
      const script = compile(`import {${names.join(', ')}} from 'data'\nconst result = ${expression}\nresult`);
      await fc.assert(
        fc.asyncProperty(data, async (d) => {
          const outcome = await script.run(context({ imports: d, limits: NOT_CPU }));
          let expected: unknown;
          let thrown: Error | undefined;
          try {
            expected = inNode(expression, structuredClone(d));
          } catch (e) {
            thrown = e as Error;
          }
          if (thrown) {
            assert.equal(outcome.kind, 'error', `Node threw ${thrown.name}, the script gave ${show(outcome)}`);
            assert.match((outcome as Failed).error.message, new RegExp(`\\b${thrown.name}\\b`));
          } else {
            assert.equal(outcome.kind, 'value', show(outcome));
            assert.deepStrictEqual((outcome as { value: unknown }).value, expected);
          }
        }),
        { numRuns: 40 },
      );
    });
  }
});
