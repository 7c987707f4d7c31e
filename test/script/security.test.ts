/**
 * Security corpus (docs/scripting.md "How it is enforced"): hostile scripts and inputs, each
 * rejected at build or harmless at run time. After every case the host is checked: no prototype
 * polluted, no global set, no unhandled rejection, and the script never obtained a host function or
 * object.
 */
import { after, afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { compileScript, outcomeToResponse, type RunOutcome } from '../../src/script/index.js';
import { DiagnosticList } from '../../src/diag/index.js';
import { compile, context, describe as show, run } from './helpers.js';

const REQUEST = { method: 'GET', path: '/app/here', acceptsJson: true, ajax: false };

const OBJECT_PROTO_NAMES = Object.getOwnPropertyNames(Object.prototype).sort().join();
const ARRAY_MAP = Array.prototype.map;
const FUNCTION = Function;
let unhandled = 0;
const onUnhandled = (): void => {
  unhandled++;
};
process.on('unhandledRejection', onUnhandled);
after(() => process.off('unhandledRejection', onUnhandled));

function hostIsIntact(): void {
  assert.equal(Object.getOwnPropertyNames(Object.prototype).sort().join(), OBJECT_PROTO_NAMES, 'Object.prototype unchanged');
  assert.equal(({} as Record<string, unknown>).polluted, undefined, 'no polluted property');
  assert.equal((globalThis as Record<string, unknown>).pwned, undefined, 'no global set');
  assert.equal(Array.prototype.map, ARRAY_MAP, 'host Array.prototype.map unchanged');
  assert.equal(Object.getPrototypeOf(() => 0).constructor, FUNCTION);
}

/** No value that came out of a script is a realm function or has a realm Function constructor. */
function noRealmFunctions(v: unknown, seen = new Set<unknown>()): void {
  if (v === null || (typeof v !== 'object' && typeof v !== 'function') || seen.has(v)) return;
  seen.add(v);
  if (typeof v === 'function') assert.ok(v instanceof Function, 'a function coming out is a host function');
  for (const k of Object.keys(v as object)) noRealmFunctions((v as Record<string, unknown>)[k], seen);
}

// ---- rejected at build -----------------------------------------------------------------------

const BUILD: Array<[string, string, string]> = [
  ['this.constructor chain', `this.constructor.constructor('return process')()`, 'LW_SCRIPT_THIS'],
  ['object constructor chain', `({}).constructor.constructor('return process')()`, 'LW_SCRIPT_FORBIDDEN_MEMBER'],
  ['function constructor through a method', `[].map.constructor('return this')()`, 'LW_SCRIPT_FORBIDDEN_MEMBER'],
  ['arrow constructor', `const f = () => 1\nf.constructor('return process')()`, 'LW_SCRIPT_FORBIDDEN_MEMBER'],
  ['granted global constructor', `Object.constructor`, 'LW_SCRIPT_FORBIDDEN_MEMBER'],
  ['Redirect constructor', `Redirect.home().constructor`, 'LW_SCRIPT_FORBIDDEN_MEMBER'],
  ['__proto__ write on input', `import {x} from 'form'\nx.__proto__.polluted = 1`, 'LW_SCRIPT_FORBIDDEN_MEMBER'],
  ['Object.prototype write', `Object.prototype.polluted = 1`, 'LW_SCRIPT_FORBIDDEN_MEMBER'],
  ['Array.prototype patch', `Array.prototype.map = () => 1`, 'LW_SCRIPT_FORBIDDEN_MEMBER'],
  ['Date.prototype', `Date.prototype.getTime`, 'LW_SCRIPT_FORBIDDEN_MEMBER'],
  ['__defineGetter__', `({}).__defineGetter__('x', () => 1)`, 'LW_SCRIPT_FORBIDDEN_MEMBER'],
  ['__lookupGetter__', `({}).__lookupGetter__('x')`, 'LW_SCRIPT_FORBIDDEN_MEMBER'],
  ['caller', `const f = () => 1\nf.caller`, 'LW_SCRIPT_FORBIDDEN_MEMBER'],
  ['bracket __proto__ literal', `const o = {}\no['__proto__']`, 'LW_SCRIPT_FORBIDDEN_MEMBER'],
  ['bracket constructor template', 'const o = {}\no[`constructor`]', 'LW_SCRIPT_FORBIDDEN_MEMBER'],
  ['destructured constructor', `const {constructor: C} = []`, 'LW_SCRIPT_FORBIDDEN_MEMBER'],
  ['__proto__ literal key', `({__proto__: {polluted: 1}})`, 'LW_SCRIPT_FORBIDDEN_MEMBER'],
  ['globalThis', `globalThis.pwned = 1`, 'LW_SCRIPT_FORBIDDEN_GLOBAL'],
  ['process', `process.mainModule.require('child_process')`, 'LW_SCRIPT_FORBIDDEN_GLOBAL'],
  ['require', `require('child_process').execSync('id')`, 'LW_SCRIPT_FORBIDDEN_GLOBAL'],
  ['dynamic import', `import('node:fs')`, 'LW_SCRIPT_DYNAMIC_IMPORT'],
  ['import.meta', `import.meta.resolve('fs')`, 'LW_SCRIPT_DYNAMIC_IMPORT'],
  ['eval', `eval('process')`, 'LW_SCRIPT_FORBIDDEN_GLOBAL'],
  ['Function', `Function('return this')()`, 'LW_SCRIPT_FORBIDDEN_GLOBAL'],
  ['new Function', `new Function('return this')()`, 'LW_SCRIPT_FORBIDDEN_GLOBAL'],
  ['Reflect', `Reflect.getPrototypeOf({})`, 'LW_SCRIPT_FORBIDDEN_GLOBAL'],
  ['Proxy', `new Proxy({}, {get: () => 1})`, 'LW_SCRIPT_FORBIDDEN_GLOBAL'],
  ['Symbol.toPrimitive', `({[Symbol.toPrimitive]: () => 1})`, 'LW_SCRIPT_FORBIDDEN_GLOBAL'],
  ['Promise species', `Promise.resolve(1)`, 'LW_SCRIPT_FORBIDDEN_GLOBAL'],
  ['Error.prepareStackTrace', `Error.prepareStackTrace = (e, frames) => frames`, 'LW_SCRIPT_FORBIDDEN_GLOBAL'],
  ['getter on a returned object', `({get secret() { return 1 }})`, 'LW_SCRIPT_ACCESSOR'],
  ['toString hook', `({toString: () => 'x'})`, 'LW_SCRIPT_FORBIDDEN_MEMBER'],
  ['valueOf hook', `({valueOf: () => 1})`, 'LW_SCRIPT_FORBIDDEN_MEMBER'],
  ['toJSON hook', `({toJSON: () => 'forged'})`, 'LW_SCRIPT_FORBIDDEN_MEMBER'],
  ['thenable completion value', `({then: (resolve) => resolve(1)})`, 'LW_SCRIPT_FORBIDDEN_MEMBER'],
  ['tagged template', 'String.raw`x`', 'LW_SCRIPT_TAGGED_TEMPLATE'],
  ['async function', `const f = async () => 1`, 'LW_SCRIPT_ASYNC'],
  ['async generator (vm2 class)', `const g = async function* () {}`, 'LW_SCRIPT_FUNCTION'],
  ['generator', `function* g() { yield 1 }`, 'LW_SCRIPT_FUNCTION'],
  ['class extends', `class A extends Object {}`, 'LW_SCRIPT_CLASS'],
  ['arguments.callee', `const f = () => arguments.callee`, 'LW_SCRIPT_FORBIDDEN_GLOBAL'],
  ['ReDoS literal', `/(a+)+$/.test('aaaaaaaaaaaaaaaaaaaaaaaaaaaa!')`, 'LW_SCRIPT_REGEXP'],
  ['ReDoS RegExp', `new RegExp('(a+)+$')`, 'LW_SCRIPT_REGEXP'],
  ['fetch', `fetch('http://169.254.169.254/')`, 'LW_SCRIPT_FORBIDDEN_GLOBAL'],
  ['timers', `setTimeout(() => 1, 0)`, 'LW_SCRIPT_FORBIDDEN_GLOBAL'],
  ['generated-code internals', `$lw_S.cur = null`, 'LW_SCRIPT_RESERVED_NAME'],
  ['WebAssembly', `WebAssembly.compile`, 'LW_SCRIPT_FORBIDDEN_GLOBAL'],
  ['mutating a granted global name', `Math = {}`, 'LW_SCRIPT_ASSIGN_CONST'],
];

// ---- harmless at run time --------------------------------------------------------------------

interface RunCase {
  name: string;
  source: string;
  imports?: Record<string, unknown>;
  expect: RunOutcome['kind'];
  code?: string;
  check?(outcome: RunOutcome, imports?: Record<string, unknown>): void;
}

const received: unknown[] = [];
let getterCalls = 0;
const hostile = {
  get secret() {
    getterCalls++;
    return 'read once';
  },
};
const RUN: RunCase[] = [
  { name: 'computed constructor chain', source: `const k = 'constr' + 'uctor';\n[][k][k]('return process')()`, expect: 'error', code: 'LW_SCRIPT_FORBIDDEN_ACCESS' },
  { name: 'computed __proto__ write', source: `const o = {}\no['__pro' + 'to__'] = {polluted: 1}`, expect: 'error', code: 'LW_SCRIPT_FORBIDDEN_ACCESS' },
  { name: 'computed prototype read', source: `const k = ['proto', 'type'].join('')\nObject[k]`, expect: 'error', code: 'LW_SCRIPT_FORBIDDEN_ACCESS' },
  { name: 'computed key object coerced to constructor', source: `const k = ['constructor'];\n({})[k]`, expect: 'error', code: 'LW_SCRIPT_FORBIDDEN_ACCESS' },
  { name: 'forbidden access is not catchable', source: `let r = 'no'\ntry { ({})['constr' + 'uctor'] } catch (e) { r = 'caught' }\nr`, expect: 'error', code: 'LW_SCRIPT_FORBIDDEN_ACCESS' },
  {
    name: '__proto__ in JSON input (form{} / JSON body) does not pollute',
    source: `import {input} from 'form'\nconst copy = Object.assign({}, input);\n({a: copy.a, polluted: copy.polluted, viaInput: input.polluted, keys: Object.keys(copy)})`,
    imports: { input: JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') },
    expect: 'value',
    check: (o) => assert.deepEqual((o as { value: unknown }).value, { a: 1, polluted: undefined, viaInput: undefined, keys: ['a'] }),
  },
  {
    name: 'nested constructor.prototype in input',
    source: `import {input} from 'form'\nconst c = input['constr' + 'uctor']\nc`,
    imports: { input: JSON.parse('{"constructor": {"prototype": {"polluted": true}}}') },
    expect: 'error',
    code: 'LW_SCRIPT_FORBIDDEN_ACCESS',
  },
  {
    name: 'Object.fromEntries with a __proto__ key',
    source: `const o = Object.fromEntries([['__proto__', {polluted: 1}], ['a', 2]]);\n({a: o.a, p: o.polluted})`,
    expect: 'value',
    check: (o) => assert.deepEqual((o as { value: unknown }).value, { a: 2, p: undefined }),
  },
  {
    // Flat arrays (database rows, lists of strings) are copied by a realm-side loop: the copy must
    // be a realm array, not the host array or one made from the host's Array.
    name: 'a flat input array arrives as a realm array, a copy',
    source: `import {tags} from 'form'\nconst before = tags.length\ntags.push('x');\n({isArray: Array.isArray(tags), realm: tags instanceof Array, same: [].concat(tags).length, before, mapped: tags.map((t) => t + '!')})`,
    imports: { tags: ['a', 1, true, null] },
    expect: 'value',
    check: (o, imports) => {
      assert.deepEqual((o as { value: unknown }).value, { isArray: true, realm: true, same: 5, before: 4, mapped: ['a!', '1!', 'true!', 'null!', 'x!'] });
      assert.deepEqual(imports?.tags, ['a', 1, true, null], 'the host array is unchanged');
    },
  },
  {
    // Rows (an array of flat arrays, as a query answers) are copied in one realm-side call: every
    // row must be a realm array, a copy, and the same row twice becomes two copies.
    name: 'rows arrive as realm arrays of realm arrays, copies',
    source: `import {rows} from 'form'\nrows[0].push('x');\nrows.push(['z']);\n({outer: rows instanceof Array, inner: rows.map((r) => r instanceof Array && Array.isArray(r)), lens: rows.map((r) => r.length), shared: rows[0] === rows[1]})`,
    imports: (() => {
      const row = ['a', 1, null, false];
      return { rows: [row, row, [2.5, 'b']] };
    })(),
    expect: 'value',
    check: (o, imports) => {
      assert.deepEqual((o as { value: unknown }).value, { outer: true, inner: [true, true, true, true], lens: [5, 4, 2, 1], shared: false });
      assert.deepEqual(imports?.rows, [['a', 1, null, false], ['a', 1, null, false], [2.5, 'b']], 'the host rows are unchanged');
    },
  },
  { name: 'emitting input with a __proto__ key', source: `import {input} from 'form'\ninput`, imports: { input: JSON.parse('{"__proto__": {"polluted": 1}, "b": 2}') }, expect: 'value', check: (o) => assert.deepEqual(Object.keys((o as { value: object }).value), ['b']) },
  { name: 'computed toString hook', source: `const o = {}\no['to' + 'String'] = () => 'x'\n'' + o`, expect: 'error', code: 'LW_SCRIPT_FORBIDDEN_ACCESS' },
  { name: 'computed then hook in a literal', source: `const k = 'th' + 'en';\n({[k]: (r) => r(1)})`, expect: 'error', code: 'LW_SCRIPT_FORBIDDEN_ACCESS' },
  { name: 'then hook through Object.fromEntries', source: `Object.fromEntries([['then', (r) => r(1)]])`, expect: 'error', code: 'LW_SCRIPT_FORBIDDEN_ACCESS' },
  { name: 'valueOf hook through Object.assign', source: `import {input} from 'form'\nObject.assign({}, {a: 1}, {['value' + 'Of']: 1})`, imports: { input: {} }, expect: 'error', code: 'LW_SCRIPT_FORBIDDEN_ACCESS' },
  { name: 'freezing is respected: Math', source: `Math.max = () => 1`, expect: 'error', code: 'LW_SCRIPT_RUNTIME' },
  { name: 'freezing is respected: JSON', source: `JSON.parse = (s) => s`, expect: 'error', code: 'LW_SCRIPT_RUNTIME' },
  { name: 'freezing is respected: Object façade', source: `Object.keys = () => ['x']`, expect: 'error', code: 'LW_SCRIPT_RUNTIME' },
  { name: 'freezing is respected: Redirect', source: `Redirect.home = () => '//evil'`, expect: 'error', code: 'LW_SCRIPT_RUNTIME' },
  { name: 'no getPrototypeOf on the Object façade', source: `Object.getPrototypeOf([])`, expect: 'error', code: 'LW_SCRIPT_RUNTIME' },
  { name: 'no defineProperty on the Object façade', source: `Object.defineProperty({}, 'x', {get: () => 1})`, expect: 'error', code: 'LW_SCRIPT_RUNTIME' },
  { name: 'no Object.create', source: `Object.create(null)`, expect: 'error', code: 'LW_SCRIPT_RUNTIME' },
  {
    name: 'a host function is only reached through a bridge',
    // Its source text is not Laneway's bridge code (nor the host function's): it reads as native.
    source: `import {f} from 'm';\n({type: typeof f, source: f.toString(), bound: typeof f.bind(null)})`,
    imports: { f: function hostFn() { return 1; } },
    expect: 'value',
    check: (o) => assert.deepEqual((o as { value: unknown }).value, { type: 'function', source: 'function hostFn() { [native code] }', bound: 'function' }),
  },
  { name: 'a bridge hides the host Function constructor', source: `import {f} from 'm'\nf['constr' + 'uctor']`, imports: { f: () => 1 }, expect: 'error', code: 'LW_SCRIPT_FORBIDDEN_ACCESS' },
  {
    name: 'a caught host error is a realm copy (vm2 class: host exceptions)',
    source: `import {boom} from 'm'\nlet r\ntry { boom() } catch (e) { r = {name: e.name, message: e.message, keys: Object.keys(e)} }\nr`,
    imports: { boom: () => { throw new TypeError('host detail'); } },
    expect: 'value',
    check: (o) => assert.deepEqual((o as { value: unknown }).value, { name: 'TypeError', message: 'host detail', keys: [] }),
  },
  { name: 'a caught host error hides its constructor', source: `import {boom} from 'm'\ntry { boom() } catch (e) { e['constr' + 'uctor'] }`, imports: { boom: () => { throw new Error('x'); } }, expect: 'error', code: 'LW_SCRIPT_FORBIDDEN_ACCESS' },
  { name: 'a caught realm error stack is plain text', source: `let s\ntry { null.x } catch (e) { s = typeof e.stack }\ns`, expect: 'value', check: (o) => assert.equal((o as { value: unknown }).value, 'string') },
  {
    name: 'a host getter is read once, at the copy, never by output serialisation',
    source: `import {obj} from 'm';\n({a: obj.secret, b: obj.secret, obj})`,
    imports: { obj: hostile },
    expect: 'value',
    check: (o) => {
      assert.equal(getterCalls, 1);
      assert.deepEqual((o as { value: unknown }).value, { a: 'read once', b: 'read once', obj: { secret: 'read once' } });
    },
  },
  { name: 'functions in the output are dropped, not called', source: `({a: 1, f: () => { throw 'called' }})`, expect: 'value', check: (o) => noRealmFunctions((o as { value: unknown }).value) },
  { name: 'JSON.stringify in the script ignores toJSON of input', source: `import {input} from 'm'\nJSON.stringify(input)`, imports: { input: { a: 1, toJSON: () => 'forged' } }, expect: 'value', check: (o) => assert.equal((o as { value: unknown }).value, '{"a":1}') },
  { name: 'JSON.parse reviver refused', source: `JSON.parse('{}', (k, v) => v)`, expect: 'error', code: 'LW_SCRIPT_RUNTIME' },
  { name: 'JSON.stringify replacer function refused', source: `JSON.stringify({}, (k, v) => v)`, expect: 'error', code: 'LW_SCRIPT_RUNTIME' },
  { name: 'Promise species: a mapped list is never a Promise to the script', source: `const r = [1].map((x) => x);\n({isArray: Array.isArray(r), thenType: typeof r.then})`, expect: 'value', check: (o) => assert.deepEqual((o as { value: unknown }).value, { isArray: true, thenType: 'undefined' }) },
  { name: 'Promise species: constructor of a result', source: `import {get} from 'm'\nget()['constr' + 'uctor']`, imports: { get: async () => ({}) }, expect: 'error', code: 'LW_SCRIPT_FORBIDDEN_ACCESS' },
  { name: 'string match (ReDoS through a string pattern)', source: `'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!'.match('(a+)+$')`, expect: 'error', code: 'LW_SCRIPT_RUNTIME' },
  { name: 'string search', source: `'abc'.search('b')`, expect: 'error', code: 'LW_SCRIPT_RUNTIME' },
  { name: 'string matchAll', source: `[...'abc'.matchAll('b')]`, expect: 'error', code: 'LW_SCRIPT_RUNTIME' },
  { name: 'replace treats the pattern as text', source: `'a.c'.replace('.', '-') + 'abc'.replaceAll('.', '-')`, expect: 'value', check: (o) => assert.equal((o as { value: unknown }).value, 'a-cabc') },
  { name: 'Date is immutable', source: `const d = new Date(0)\nlet r = 'unchanged'\ntry { d.setFullYear(2000) } catch (e) { r = e.message };\n({r, t: d.getTime(), set: typeof d.setTime})`, expect: 'value', check: (o) => assert.deepEqual((o as { value: { t: number; set: string } }).value.t, 0) },
  { name: 'Date fields cannot be added', source: `const d = new Date(0)\nd.x = 1`, expect: 'error', code: 'LW_SCRIPT_RUNTIME' },
  { name: 'CRLF in a Redirect segment is encoded', source: `Redirect.dir('a\\r\\nSet-Cookie: x=1').params({'k\\n': 'v\\r'})`, expect: 'value', check: (o) => assert.equal((o as { value: { location: string } }).value.location, '/a%0D%0ASet-Cookie%3A%20x%3D1/?k%0A=v%0D') },
  { name: 'a Redirect name cannot leave the origin', source: `Redirect.home().name('/evil.example')`, expect: 'value', check: (o) => assert.equal((o as { value: { location: string } }).value.location, '/%2Fevil.example') },
  {
    name: 'arguments passed to the host are copied without __proto__',
    source: `import {save} from 'm'\nconst o = JSON.parse('{"__proto__": {"polluted": 1}, "x": 1}')\nsave(o)`,
    imports: { save: (arg: unknown) => { received.push(arg); return true; } },
    expect: 'value',
    check: () => {
      const arg = received.pop() as object;
      assert.equal(Object.getPrototypeOf(arg), Object.prototype);
      assert.deepEqual(Object.keys(arg), ['x']);
    },
  },
  {
    name: 'callbacks reach the host as host functions',
    source: `import {take} from 'm'\ntake((x) => x + 1)`,
    imports: { take: (f: unknown) => { received.push(f); return typeof f; } },
    expect: 'value',
    check: () => {
      const f = received.pop();
      assert.ok(f instanceof Function);
      assert.equal(Object.getPrototypeOf(f), Function.prototype);
    },
  },
  { name: 'a host async comparator is refused without an unhandled rejection', source: `import {cmp} from 'm'\n[3, 1, 2].sort(cmp)`, imports: { cmp: async () => { throw new Error('late'); } }, expect: 'error', code: 'LW_SCRIPT_RUNTIME' },
  { name: 'an async comparator written in the script works', source: `import {rank} from 'm'\n[3, 1, 2].sort((a, b) => rank(a) - rank(b))`, imports: { rank: async (n: number) => -n }, expect: 'value', check: (o) => assert.deepEqual((o as { value: unknown }).value, [3, 2, 1]) },
  { name: 'deeply nested input does not crash the host', source: `import {deep} from 'm'\n1`, imports: { deep: nested(200000) }, expect: 'error' },
  { name: 'deeply nested output is a limit', source: `let a = []\nArray.from({length: 5000}).forEach(() => { a = [a] })\na`, expect: 'limit', code: 'LW_SCRIPT_DEPTH_LIMIT' },
  { name: 'circular output is refused', source: `const a = {}\na.self = a\na`, expect: 'error', code: 'LW_SCRIPT_BAD_OUTPUT' },
  { name: 'delete works only on plain objects', source: `const d = new Date(0)\ndelete d.x`, expect: 'error', code: 'LW_SCRIPT_RUNTIME' },
  { name: 'delete of a forbidden computed key', source: `const o = {}\ndelete o['__pro' + 'to__']`, expect: 'error', code: 'LW_SCRIPT_FORBIDDEN_ACCESS' },
  { name: 'Function.prototype.call chains stay in the realm', source: `const f = (x) => x\nf.call.call(f, null, 5)`, expect: 'value', check: (o) => assert.equal((o as { value: unknown }).value, 5) },
  { name: 'array-likes through call', source: `[].map.call({length: 2, 0: 'a', 1: 'b'}, (x) => x.toUpperCase())`, expect: 'value', check: (o) => assert.deepEqual((o as { value: unknown }).value, ['A', 'B']) },
  { name: 'huge array-like through call is bounded', source: `[].map.call({length: 1e12}, (x) => x)`, expect: 'limit' },
  { name: 'a shared realm is not changed by a previous run', source: `[1, 2].map((x) => x * 2).join('-') + Math.max(1, 2) + JSON.stringify({a: 1})`, expect: 'value', check: (o) => assert.equal((o as { value: unknown }).value, '2-42{"a":1}') },
  { name: 'an inspect member is plain data', source: `({inspect: 'x', a: 1})`, expect: 'value', check: (o) => assert.deepEqual((o as { value: unknown }).value, { inspect: 'x', a: 1 }) },
];

function nested(depth: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = { v };
  return v;
}

describe('security corpus', () => {
  afterEach(() => hostIsIntact());

  describe('rejected at build', () => {
    for (const [name, source, code] of BUILD) {
      it(`rejects ${name}`, () => {
        const diagnostics = new DiagnosticList();
        assert.equal(compileScript('/app/GET.js', source, { kind: 'endpoint', diagnostics }), undefined);
        assert.ok(diagnostics.errors.some((d) => d.code === code), `${code} expected, got ${diagnostics.errors.map((d) => `${d.code}: ${d.message}`).join('; ')}`);
      });
    }
  });

  describe('harmless at run time', () => {
    for (const c of RUN) {
      it(`neutralises ${c.name}`, async () => {
        const outcome = await run(c.source, { imports: c.imports });
        assert.equal(outcome.kind, c.expect, show(outcome));
        if (c.code) assert.equal((outcome as { error: { code: string } }).error.code, c.code, show(outcome));
        if (outcome.kind === 'value' || outcome.kind === 'thrown') noRealmFunctions(outcome.value);
        c.check?.(outcome, c.imports);
      });
    }
  });

  describe('harmless at run time when the value stays in the realm (RunContext.share)', () => {
    for (const c of RUN) {
      it(`answers ${c.name} as the copying path does`, async () => {
        const copied = await run(c.source, { imports: c.imports });
        const shared = await compile(c.source).run({ ...context({ imports: c.imports }), share: true });
        assert.equal(shared.kind, copied.kind, show(shared));
        if (shared.kind === 'limit' || shared.kind === 'error') {
          assert.equal(shared.error.code, (copied as { error: { code: string } }).error.code);
        } else {
          assert.deepEqual(outcomeToResponse(shared, REQUEST), outcomeToResponse(copied, REQUEST));
        }
      });
    }
  });

  it('has at least 60 cases', () => {
    assert.ok(BUILD.length + RUN.length >= 60, `${BUILD.length + RUN.length} cases`);
  });

  it('left no unhandled rejection behind', async () => {
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(unhandled, 0);
  });

  it('still runs normal scripts afterwards', async () => {
    const outcome = await compileScript('/ok.js', `({ok: [1, 2].map((x) => x + 1)})`, { kind: 'endpoint', diagnostics: new DiagnosticList() })!.run(context());
    assert.deepEqual(outcome, { kind: 'value', value: { ok: [2, 3] } });
  });
});

describe('values shared between runs', () => {
  it('does not share a frozen import whose inside is mutable', async () => {
    const config = Object.freeze({ list: [1] });
    const script = `import {config} from 'm'\nconfig.list.push(2)\nconfig.list.length`;
    assert.deepEqual(await run(script, { imports: { config } }), { kind: 'value', value: 2 });
    assert.deepEqual(await run(script, { imports: { config } }), { kind: 'value', value: 2 });
    assert.deepEqual(config.list, [1]);
  });

  it('shares the deeply frozen util module, which scripts cannot change', async () => {
    const { utilModule } = await import('../../src/script/index.js');
    const outcome = await run(`import {Encoding} from 'util'\nEncoding.html = () => 1`, { imports: utilModule() });
    assert.equal(outcome.kind, 'error');
  });
});
