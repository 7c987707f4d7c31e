/**
 * Every construct the subset rejects (docs/scripting.md "What is rejected, and what to write
 * instead"): the code, the position of the offending
 * node (‸ marks it in each case), and a message that says what to write instead.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { locate } from '../../src/diag/index.js';
import { rejects } from './helpers.js';
import type { ScriptKind } from '../../src/script/index.js';

interface Case {
  name: string;
  source: string;
  code: string;
  hint: RegExp;
  kind?: ScriptKind;
}

const CASES: Case[] = [
  { name: 'var', source: 'let a = 1\n‸var b = 2', code: 'LW_SCRIPT_VAR', hint: /declare with `let`/ },
  { name: 'function declaration', source: '‸function f() { return 1 }', code: 'LW_SCRIPT_FUNCTION', hint: /arrow function, `const f = /},
  { name: 'function expression', source: 'const f = ‸function () { return 1 }', code: 'LW_SCRIPT_FUNCTION', hint: /arrow function/ },
  { name: 'generator', source: '‸function* g() { yield 1 }', code: 'LW_SCRIPT_FUNCTION', hint: /build an array/ },
  { name: 'object method', source: 'const o = { ‸m() { return 1 } }', code: 'LW_SCRIPT_FUNCTION', hint: /`m: \(…\) => …`/ },
  { name: 'class', source: '‸class A {}', code: 'LW_SCRIPT_CLASS', hint: /literals `\{…\}`/ },
  { name: 'class expression', source: 'const A = ‸class {}', code: 'LW_SCRIPT_CLASS', hint: /literals `\{…\}`/ },
  { name: 'switch', source: 'let x = 1\n‸switch (x) { case 1: x = 2 }', code: 'LW_SCRIPT_SWITCH', hint: /if \(…\)/ },
  { name: 'for', source: '‸for (let i = 0; i < 3; i++) {}', code: 'LW_SCRIPT_LOOP', hint: /forEach, map, filter/ },
  { name: 'for-in', source: 'const o = {}\n‸for (const k in o) {}', code: 'LW_SCRIPT_LOOP', hint: /forEach/ },
  { name: 'for-of', source: '‸for (const v of [1]) {}', code: 'LW_SCRIPT_LOOP', hint: /Array\.from\(\{length: n\}/ },
  { name: 'while', source: '‸while (false) {}', code: 'LW_SCRIPT_LOOP', hint: /reduce/ },
  { name: 'do-while', source: '‸do {} while (false)', code: 'LW_SCRIPT_LOOP', hint: /some, every or find/ },
  { name: 'label', source: '‸outer: { }', code: 'LW_SCRIPT_LABEL', hint: /arrow functions and `return`/ },
  { name: 'async arrow', source: 'const f = ‸async () => 1', code: 'LW_SCRIPT_ASYNC', hint: /waits for results implicitly/ },
  { name: 'await', source: 'import {g} from "m"\nconst x = ‸await g()', code: 'LW_SCRIPT_ASYNC', hint: /call the function directly/ },
  { name: 'eval', source: 'const s = "1"\n‸eval(s)', code: 'LW_SCRIPT_FORBIDDEN_GLOBAL', hint: /write the code directly/ },
  { name: 'Function', source: '‸Function("return 1")', code: 'LW_SCRIPT_FORBIDDEN_GLOBAL', hint: /write an arrow function/ },
  { name: 'arguments', source: 'const f = () => ‸arguments', code: 'LW_SCRIPT_FORBIDDEN_GLOBAL', hint: /rest parameter/ },
  { name: 'this', source: 'const f = () => ‸this.x', code: 'LW_SCRIPT_THIS', hint: /pass the value as a parameter/ },
  { name: 'import()', source: 'const m = ‸import("fs")', code: 'LW_SCRIPT_DYNAMIC_IMPORT', hint: /static `import/ },
  { name: 'import.meta', source: 'const u = ‸import.meta.url', code: 'LW_SCRIPT_DYNAMIC_IMPORT', hint: /'🔗'/ },
  { name: 'new.target', source: 'const f = () => ‸new.target', code: 'LW_SCRIPT_SYNTAX', hint: /fix the syntax/ },
  { name: 'super', source: 'const o = { a: () => ‸super.x }', code: 'LW_SCRIPT_SYNTAX', hint: /fix the syntax/ },
  { name: 'getter', source: 'const o = { ‸get x() { return 1 } }', code: 'LW_SCRIPT_ACCESSOR', hint: /plain property, `x: value`/ },
  { name: 'setter', source: 'const o = { ‸set x(v) {} }', code: 'LW_SCRIPT_ACCESSOR', hint: /plain property/ },
  { name: 'regular expression literal', source: 'const ok = ‸/a+/.test("aaa")', code: 'LW_SCRIPT_REGEXP', hint: /includes, startsWith/ },
  { name: 'RegExp', source: 'const r = new ‸RegExp("a+")', code: 'LW_SCRIPT_REGEXP', hint: /string methods/ },
  { name: 'delete of a variable', source: 'let x = 1\n‸delete x', code: 'LW_SCRIPT_SYNTAX', hint: /fix the syntax/ },
  { name: 'delete of a call', source: 'const f = () => ({})\n‸delete f()', code: 'LW_SCRIPT_DELETE', hint: /`delete obj.key`/ },
  { name: 'member constructor', source: 'const o = {}\no.‸constructor', code: 'LW_SCRIPT_FORBIDDEN_MEMBER', hint: /Array\.isArray/ },
  { name: 'member __proto__', source: 'const o = {}\no.‸__proto__', code: 'LW_SCRIPT_FORBIDDEN_MEMBER', hint: /Object\.assign/ },
  { name: 'member prototype', source: 'Array.‸prototype', code: 'LW_SCRIPT_FORBIDDEN_MEMBER', hint: /object literals|Object\.assign/ },
  { name: 'member __defineGetter__', source: 'const o = {}\no.‸__defineGetter__("x", () => 1)', code: 'LW_SCRIPT_FORBIDDEN_MEMBER', hint: /Object\.assign/ },
  { name: 'bracket constructor', source: 'const o = {}\no[‸"constructor"]', code: 'LW_SCRIPT_FORBIDDEN_MEMBER', hint: /not accessible/ },
  { name: 'bracket template __proto__', source: 'const o = {}\no[‸`__proto__`]', code: 'LW_SCRIPT_FORBIDDEN_MEMBER', hint: /not accessible/ },
  { name: '__proto__ key in a literal', source: 'const o = { ‸__proto__: null }', code: 'LW_SCRIPT_FORBIDDEN_MEMBER', hint: /not accessible/ },
  { name: 'constructor in destructuring', source: 'const { ‸constructor: C } = {}', code: 'LW_SCRIPT_FORBIDDEN_MEMBER', hint: /not accessible/ },
  { name: 'toString defined in a literal', source: 'const o = { ‸toString: () => "x" }', code: 'LW_SCRIPT_FORBIDDEN_MEMBER', hint: /use another name/ },
  { name: 'then assigned', source: 'const o = {}\no.‸then = (r) => r(1)', code: 'LW_SCRIPT_FORBIDDEN_MEMBER', hint: /use another name/ },
  { name: 'undeclared name', source: 'let total = 1\ntotal + ‸totl', code: 'LW_SCRIPT_UNDECLARED', hint: /declare it with `let`\/`const`, import it/ },
  { name: 'globalThis', source: '‸globalThis.x', code: 'LW_SCRIPT_FORBIDDEN_GLOBAL', hint: /no global object/ },
  { name: 'process', source: '‸process.env', code: 'LW_SCRIPT_FORBIDDEN_GLOBAL', hint: /import \{…\} from 'form'/ },
  { name: 'require', source: 'const fs = ‸require("fs")', code: 'LW_SCRIPT_FORBIDDEN_GLOBAL', hint: /import \{name\}/ },
  { name: 'Proxy', source: 'const p = new ‸Proxy({}, {})', code: 'LW_SCRIPT_FORBIDDEN_GLOBAL', hint: /plain objects/ },
  { name: 'Reflect', source: '‸Reflect.ownKeys({})', code: 'LW_SCRIPT_FORBIDDEN_GLOBAL', hint: /Object\.keys/ },
  { name: 'Promise', source: '‸Promise.resolve(1)', code: 'LW_SCRIPT_FORBIDDEN_GLOBAL', hint: /waits for results implicitly/ },
  { name: 'new on a literal type', source: 'const a = ‸new Array(5)', code: 'LW_SCRIPT_NEW', hint: /array literal `\[…\]`/ },
  { name: 'new on a local arrow', source: 'const F = () => 1\nconst x = ‸new F()', code: 'LW_SCRIPT_NEW', hint: /types Laneway provides/ },
  { name: 'tagged template', source: 'const tag = (s) => s\n‸tag`x`', code: 'LW_SCRIPT_TAGGED_TEMPLATE', hint: /f\(`…`\)/ },
  { name: 'with', source: '‸with ({}) {}', code: 'LW_SCRIPT_SYNTAX', hint: /fix the syntax/ },
  { name: 'debugger', source: '‸debugger', code: 'LW_SCRIPT_UNSUPPORTED', hint: /remove it/ },
  { name: 'assignment to const', source: 'const a = 1\n‸a = 2', code: 'LW_SCRIPT_ASSIGN_CONST', hint: /declare it with `let`/ },
  { name: 'assignment to an import', source: 'import {a} from "m"\n‸a = 2', code: 'LW_SCRIPT_ASSIGN_CONST', hint: /copy it into a `let`/ },
  { name: 'reserved name', source: 'let ‸$lw_r = 1', code: 'LW_SCRIPT_RESERVED_NAME', hint: /rename/ },
  { name: 'default import', source: 'import ‸x from "m"\nx', code: 'LW_SCRIPT_IMPORT', hint: /import \{x\} from 'm'/ },
  { name: 'export in an endpoint', source: 'const a = 1\n‸export {a}', code: 'LW_SCRIPT_EXPORT', hint: /last statement/ },
  { name: 'export const in a supplier', source: '‸export const a = 1', code: 'LW_SCRIPT_EXPORT', hint: /`export \{name\}`/, kind: 'supplier' },
  { name: 'statement after the export', source: 'const a = 1\nexport {a}\n‸a + 1', code: 'LW_SCRIPT_EXPORT', hint: /move this statement above/, kind: 'supplier' },
  { name: 'supplier without export', source: '‸const a = 1', code: 'LW_SCRIPT_EXPORT', hint: /must end with `export/, kind: 'supplier' },
  { name: 'function supplier exporting a value', source: 'const a = 1\nexport {‸a}', code: 'LW_SCRIPT_EXPORT', hint: /const a = \(…\) => …/, kind: 'function-supplier' },
  { name: 'computed destructuring key', source: 'const k = "a"\nconst { [‸k]: v } = {}', code: 'LW_SCRIPT_UNSUPPORTED', hint: /obj\[key\]/ },
  { name: 'a line starting with ( after a line without semicolon', source: 'const t = 1\n‸({t})', code: 'LW_SCRIPT_MULTILINE', hint: /end line 1 with `;`/ },
  { name: 'a line starting with [ after a line without semicolon', source: 'const t = [1]\n‸[1, 2].map((x) => x)', code: 'LW_SCRIPT_MULTILINE', hint: /start this line with `;\[`/ },
  { name: 'syntax error', source: 'let x = ‸)', code: 'LW_SCRIPT_SYNTAX', hint: /fix the syntax/ },
];

function position(marked: string): { source: string; line: number; column: number } {
  const offset = marked.indexOf('‸');
  assert.ok(offset >= 0, 'each case marks its position with ‸');
  const source = marked.slice(0, offset) + marked.slice(offset + 1);
  return { source, ...locate(source, offset) };
}

describe('the subset rejects at build time, with position and advice', () => {
  for (const c of CASES) {
    it(`rejects ${c.name} (${c.code})`, () => {
      const { source, line, column } = position(c.source);
      const errors = rejects(source, { kind: c.kind ?? 'endpoint' });
      const hit = errors.find((d) => d.code === c.code);
      assert.ok(hit, `expected ${c.code}, got ${errors.map((d) => `${d.code} ${d.line}:${d.column} ${d.message}`).join('; ')}`);
      assert.deepEqual({ line: hit.line, column: hit.column }, { line, column }, hit.message);
      assert.match(hit.message, c.hint);
      assert.equal(hit.file, '/app/GET.js');
    });
  }

  it('reports every problem, not only the first', () => {
    const errors = rejects('var a = 1\nfunction f() {}\nwhile (true) {}\nundeclared\nclass C {}');
    assert.deepEqual(errors.map((d) => [d.code, d.line]), [
      ['LW_SCRIPT_VAR', 1],
      ['LW_SCRIPT_FUNCTION', 2],
      ['LW_SCRIPT_LOOP', 3],
      ['LW_SCRIPT_UNDECLARED', 4],
      ['LW_SCRIPT_CLASS', 5],
    ]);
  });

  it('reports an import refused by checkImport at the imported name, with its message', () => {
    const source = 'import {Task, Nope as N} from "📦"\n({})';
    const errors = rejects(source, {
      checkImport: (module, name) => (name === 'Nope' ? `'${module}' has no export Nope: check the model name` : true),
    });
    assert.equal(errors.length, 1);
    assert.equal(errors[0]!.code, 'LW_SCRIPT_IMPORT');
    assert.deepEqual([errors[0]!.line, errors[0]!.column], [1, 15]);
    assert.match(errors[0]!.message, /check the model name/);
  });

  it('counts emoji as one column', () => {
    const errors = rejects('const s = "📤"; ‸var x'.replace('‸', ''));
    assert.deepEqual([errors[0]!.line, errors[0]!.column], [1, 16]);
  });
});
