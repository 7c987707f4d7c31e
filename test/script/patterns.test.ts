/**
 * Build-time checks of destructuring targets and of `let` function suppliers (docs/scripting.md
 * "What you can write", "What is rejected, and what to write instead").
 *
 * Every assignment target inside a destructuring pattern defines a member exactly like
 * `o.x = v`, so it gets the same build-time checks: no hook members (`then`, `toJSON`, …), no
 * forbidden members (`__proto__`, `constructor`, …). ‸ marks where each error must be reported.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as acorn from 'acorn';
import { DiagnosticList, locate } from '../../src/diag/index.js';
import { validateScript, type AnyNode } from '../../src/script/validate.js';
import { compile, context, rejects, value } from './helpers.js';

function position(marked: string): { source: string; line: number; column: number } {
  const offset = marked.indexOf('‸');
  assert.ok(offset >= 0, 'each case marks its position with ‸');
  const source = marked.slice(0, offset) + marked.slice(offset + 1);
  return { source, ...locate(source, offset) };
}

const HEAD = 'const o = {}\nconst f = () => 1\nlet x = {};\n';

/** [name, source after HEAD with ‸ at the member name, expected hint]. */
const HOOK_CASES: Array<[string, string]> = [
  ['array element', '[o.‸then] = [f]'],
  ['array element after a hole', '[, o.‸then] = [0, f]'],
  ['array element with a default', '[o.‸then = f] = []'],
  ['array rest', '[...o.‸valueOf] = [f]'],
  ['nested array', '[[o.‸toString]] = [[f]]'],
  ['object property', '({k: o.‸toJSON} = {k: f})'],
  ['object property with a default', '({k: o.‸toJSON = f} = {})'],
  ['object rest', '({...o.‸then} = x)'],
  ['object nested in an object', '({a: {b: o.‸toLocaleString}} = {a: {b: f}})'],
  ['array nested in an object', '({a: [o.‸then]} = {a: [f]})'],
  ['object nested in an array', '[{k: o.‸then}] = [{k: f}]'],
  ['quoted key in the pattern', '({"k": o.‸valueOf} = {k: f})'],
  ['deeper member target', '[o.a.‸then] = [f]'],
  ['pattern in a chained assignment', 'x = [o.‸then] = [f]'],
  ['pattern inside an arrow body', 'const g = () => { [o.‸then] = [f] }'],
  ['pattern in an arrow parameter default', 'const g = (p = [o.‸then] = [f]) => p'],
  ['pattern in a catch parameter default', 'try { x.y() } catch ({message = [o.‸then] = [f]}) { }'],
  ['pattern in a default inside a pattern', '[x = [o.‸toJSON] = [f]] = []'],
  ['pattern in a destructuring declaration default', 'const {q = [o.‸then] = [f]} = {}'],
];

const FORBIDDEN_CASES: Array<[string, string]> = [
  ['__proto__ as an array element', '[o.‸__proto__] = [x]'],
  ['constructor as an object property', '({k: o.‸constructor} = {k: f})'],
  ['prototype in a rest', '[...o.‸prototype] = [1]'],
  ['__defineGetter__ with a default', '[o.‸__defineGetter__ = f] = []'],
  ['__proto__ as an object rest', '({...o.‸__proto__} = x)'],
];

describe('destructuring assignment targets get the member checks of `o.x = v`', () => {
  for (const [name, marked] of HOOK_CASES) {
    it(`refuses a hook member: ${name}`, () => {
      const { source, line, column } = position(HEAD + marked);
      const errors = rejects(source);
      const hits = errors.filter((d) => d.code === 'LW_SCRIPT_FORBIDDEN_MEMBER');
      assert.equal(hits.length, 1, `expected one LW_SCRIPT_FORBIDDEN_MEMBER, got ${errors.map((d) => `${d.code} ${d.line}:${d.column} ${d.message}`).join('; ')}`);
      assert.deepEqual({ line: hits[0]!.line, column: hits[0]!.column }, { line, column }, hits[0]!.message);
      assert.match(hits[0]!.message, /scripts cannot define `\w+`.*use another name/);
    });
  }

  for (const [name, marked] of FORBIDDEN_CASES) {
    it(`refuses a forbidden member: ${name}`, () => {
      const { source, line, column } = position(HEAD + marked);
      const errors = rejects(source);
      const hits = errors.filter((d) => d.code === 'LW_SCRIPT_FORBIDDEN_MEMBER');
      assert.equal(hits.length, 1, `expected one error, got ${errors.map((d) => `${d.code} ${d.line}:${d.column} ${d.message}`).join('; ')}`);
      assert.deepEqual({ line: hits[0]!.line, column: hits[0]!.column }, { line, column });
      assert.match(hits[0]!.message, /not accessible/);
    });
  }

  it('reports a forbidden plain assignment target once', () => {
    const errors = rejects(HEAD + 'o.__proto__ = x');
    assert.equal(errors.length, 1);
    assert.equal(errors[0]!.code, 'LW_SCRIPT_FORBIDDEN_MEMBER');
  });

  it('keeps refusing computed, optional and length targets in patterns', () => {
    for (const marked of ['[‸o["then"]] = [f]', '[‸o[k]] = [f]', '({a: ‸o["x"]} = {a: 1})', '[‸o.length] = [0]']) {
      const { source, line, column } = position(HEAD + 'const k = "then";\n'.repeat(marked.includes('[k]') ? 1 : 0) + marked);
      const errors = rejects(source);
      const hit = errors.find((d) => d.code === 'LW_SCRIPT_UNSUPPORTED');
      assert.ok(hit, errors.map((d) => d.code).join());
      assert.deepEqual({ line: hit.line, column: hit.column }, { line, column });
    }
  });

  it('still lets patterns read hook members and assign variables of those names', () => {
    // Reading `then` from a value, or naming a variable `then`, defines nothing on any object.
    compile('import {p} from "m"\nlet then = 0\n;({then} = p)\nconst {toJSON: j} = p\nlet o = {}\n;({then: o.t, valueOf: o.v} = p)\n;[then, j]');
  });

  it('still compiles legitimate destructuring assignments', async () => {
    assert.deepEqual(await value('let a = 1\nlet b = 2\n;[a, b] = [b, a]\n;[a, b]'), [2, 1]);
    assert.deepEqual(await value('const o = {}\nconst p = {x: "n"}\n;({x: o.name} = p)\no'), { name: 'n' });
    assert.deepEqual(await value('const o = {in: {}}\n;[o.a = 1, ...o.rest] = [undefined, 2, 3]\n;({k: {m: o.in.deep}} = {k: {m: 4}})\no'), { in: { deep: 4 }, a: 1, rest: [2, 3] });
    assert.deepEqual(await value('const o = {}\n;({...o.others} = {a: 1, b: 2})\no'), { others: { a: 1, b: 2 } });
  });
});

describe('function suppliers may export arrows bound by `let` when never assigned again', () => {
  const kind = 'function-supplier' as const;

  it('exports a `let` arrow under another name, and it works across scripts', async () => {
    const supplier = compile('let convert = (task) => ({id: task.id, title: task.title.toUpperCase()})\nexport {convert as TaskJson}', { kind });
    const outcome = await supplier.run(context());
    assert.equal(outcome.kind, 'value');
    const fns = (outcome as { value: Record<string, unknown> }).value;
    assert.deepEqual(Object.keys(fns), ['TaskJson']);
    assert.deepEqual(await value(`import {TaskJson} from '📤'\nTaskJson({id: 1, title: 'a'})`, { imports: fns }), { id: 1, title: 'A' });
  });

  it('accepts several `let` arrows, one calling the other, mixed with `const`', async () => {
    const supplier = compile('let twice = (n) => n * 2\nlet quad = (n) => twice(twice(n))\nconst neg = (n) => -n\nexport {quad as Quad, neg as Neg, twice}', { kind });
    const fns = ((await supplier.run(context())) as { value: Record<string, (n: number) => unknown> }).value;
    assert.equal(await fns.Quad!(3), 12);
    assert.equal(await fns.Neg!(3), -3);
  });

  const REFUSED: Array<[string, string, RegExp]> = [
    ['an exported `let` assigned again at the top level', 'let convert = (t) => t\n‸convert = (t) => t.id\nexport {convert as TaskJson}', /`convert` is exported by this function supplier, so it cannot be assigned again/],
    ['an exported `let` assigned again inside an arrow', 'let c = (t) => t\nconst reset = () => { ‸c = (t) => 0 }\nexport {c, reset}', /cannot be assigned again/],
    ['an exported `let` assigned again by destructuring', 'let c = (t) => t\n;[‸c] = [(t) => 0]\nexport {c}', /cannot be assigned again/],
    ['an exported `let` assigned again with ??=', 'let c = (t) => t\n‸c ??= (t) => 0\nexport {c}', /cannot be assigned again/],
    ['a `let` from object destructuring', 'let {‸f} = {f: (t) => t}\nexport {‸f}', /export arrow functions only/],
    ['a `let` from array destructuring', 'let [g] = [(t) => t]\nexport {‸g}', /export arrow functions only/],
    ['a `let` holding a value', 'let n = 1\nexport {‸n}', /export arrow functions only.*or `let`, never assigned again/],
  ];
  for (const [name, marked, hint] of REFUSED) {
    it(`refuses ${name}`, () => {
      // The last ‸ is where the error is; an earlier one only marks the declaration.
      const cleaned = marked.split('‸');
      const last = cleaned.pop()!;
      const { source, line, column } = position(cleaned.join('') + '‸' + last);
      const errors = rejects(source, { kind });
      const hit = errors.find((d) => d.code === 'LW_SCRIPT_EXPORT');
      assert.ok(hit, errors.map((d) => `${d.code} ${d.message}`).join('; '));
      assert.deepEqual({ line: hit.line, column: hit.column }, { line, column }, hit.message);
      assert.match(hit.message, hint);
    });
  }

  it('does not refuse a reassigned `let` that is not exported', async () => {
    const supplier = compile('let pick = (t) => t.a\npick = (t) => t.b\nconst Get = (t) => pick(t)\nexport {Get}', { kind });
    const fns = ((await supplier.run(context())) as { value: Record<string, (t: unknown) => unknown> }).value;
    assert.equal(await fns.Get!({ a: 1, b: 2 }), 2);
  });
});

describe('the "never waits" analysis treats a never-assigned `let` arrow like a `const` one', () => {
  function analyse(source: string) {
    const program = acorn.parse(source, { ecmaVersion: 'latest', sourceType: 'module' });
    const analysis = validateScript(program, { file: '/x.js', source, kind: 'endpoint', diagnostics: new DiagnosticList() });
    assert.ok(analysis);
    const calls: AnyNode[] = [];
    const walk = (n: AnyNode): void => {
      if (!n || typeof n.type !== 'string') return;
      if (n.type === 'CallExpression' && n.callee.type === 'Identifier' && n.callee.name === 'f') calls.push(n);
      for (const v of Object.values(n)) for (const c of Array.isArray(v) ? v : [v]) if (c && typeof c === 'object') walk(c);
    };
    walk(program);
    return calls.map((c) => analysis.syncCalls.has(c));
  }

  it('a call of a `let` arrow that never waits is synchronous', () => {
    assert.deepEqual(analyse('let f = (n) => n + 1\nf(1)'), [true]);
    assert.deepEqual(analyse('const f = (n) => n + 1\nf(1)'), [true]);
  });

  it('a `let` that is assigned again (before or after the call) may hold anything: the call may wait', () => {
    assert.deepEqual(analyse('let f = (n) => n + 1\nf(1)\nf = (n) => n'), [false]);
    assert.deepEqual(analyse('let f = (n) => n + 1\nconst g = () => { f = (n) => n }\nf(2)'), [false]);
    assert.deepEqual(analyse('let f = (n) => n + 1\nf++\nf(2)'), [false]);
  });

  it('a shadowing `let` assigned again leaves the outer one synchronous', () => {
    assert.deepEqual(analyse('let f = (n) => n\nconst g = () => { let f = (n) => n; f = (n) => 2; return f(1) }\nf(3)'), [false, true]);
  });

  it('a reassigned `let` arrow still runs correctly when the new value waits', async () => {
    const v = await value('import {later} from "m"\nlet f = (n) => n\nf = (n) => later(n)\n;[f(1), f(2)]', {
      imports: { later: (n: number) => Promise.resolve(n * 10) },
    });
    assert.deepEqual(v, [10, 20]);
  });
});
