/**
 * A second hostile pass: ways around the request budget (docs/scripting.md "The request budget and
 * its limits") and the membrane found after the first fixes. Each case ends with the limit (or the
 * error) JavaScript semantics allow, never a value after seconds of work. Limits a case is not
 * about are set out of reach, except the one the case is about; nothing here asserts a duration.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { run, describe as show } from './helpers.js';
import { utilModule, type RunOutcome } from '../../src/script/index.js';

const UTIL = utilModule() as Record<string, unknown>;
const NO_CPU = { cpuMs: 60_000 };

async function outcome(source: string, limits: Record<string, number> = {}): Promise<RunOutcome> {
  return run(source, { importValue: (_m, n) => UTIL[n], limits });
}

async function limitCode(source: string, limits: Record<string, number> = {}): Promise<string> {
  const o = await outcome(source, limits);
  assert.equal(o.kind, 'limit', show(o));
  return (o as { error: { code: string } }).error.code;
}

async function value(source: string): Promise<unknown> {
  const o = await outcome(source);
  assert.equal(o.kind, 'value', show(o));
  return (o as { value: unknown }).value;
}

describe('work inside built-ins is metered', () => {
  it('JSON.stringify with a long key list over many objects', async () => {
    assert.equal(await limitCode("const keys = Array.from({length: 100000}, (_, i) => 'k' + i)\nconst objs = Array.from({length: 3000}, () => ({}))\nJSON.stringify(objs, keys).length"), 'LW_SCRIPT_CPU_LIMIT');
  });
  it('arrays turned into strings by native code (Math.max of deep arrays, default sort)', async () => {
    const deep = 'const chain = (d) => d === 0 ? [] : [chain(d - 1)]\nconst c = chain(180)\nconst top = Array.from({length: 250}, () => c)\n';
    assert.equal(await limitCode(`${deep}const many = Array.from({length: 3000}, () => top)\nMath.max(...many)`), 'LW_SCRIPT_CPU_LIMIT');
    assert.equal(await limitCode(`${deep}Array.from({length: 20000}, () => top).sort().length`), 'LW_SCRIPT_CPU_LIMIT');
  });
  it('native callbacks with a thisArg', async () => {
    assert.equal(await limitCode("Array.from({length: 100000}, () => 'de').map((1).toLocaleString, 1234567.891).map((1).toLocaleString, 7654321.5).length"), 'LW_SCRIPT_CPU_LIMIT');
  });
});

describe('a string never becomes more keys or elements than the array limit allows', () => {
  for (const [name, source] of [
    ['object spread', "const s = 'x'.repeat(200000)\nconst o = {...s}\n1"],
    ['object rest', "const s = 'x'.repeat(200000)\nconst {...r} = s\n1"],
    ['array rest', "const s = 'x'.repeat(200000)\nconst [...r] = s\nr.length"],
    ['array spread', "const s = 'x'.repeat(200000);\n[...s].length"],
    ['Array.from', "Array.from('x'.repeat(200000)).length"],
    ['Object.keys', "Object.keys('x'.repeat(200000)).length"],
    ['Object.values', "Object.values('x'.repeat(200000)).length"],
    ['Object.entries', "Object.entries('x'.repeat(200000)).length"],
    ['Object.assign', "Object.assign({}, 'x'.repeat(200000))\n1"],
  ]) {
    it(name, async () => assert.equal(await limitCode(source!, NO_CPU), 'LW_SCRIPT_ARRAY_LIMIT'));
  }
  it('but strings within the limit spread as in JavaScript', async () => {
    assert.deepEqual(await value("[...'héllo', ...'😀']"), ['h', 'é', 'l', 'l', 'o', '😀']);
    assert.deepEqual(await value("({...'ab'})"), { 0: 'a', 1: 'b' });
  });
});

describe('strings that grow past the limits in ways the first pass missed', () => {
  it('the HTML methods of old browsers are not available', async () => {
    for (const m of ['anchor', 'big', 'blink', 'bold', 'fixed', 'fontcolor', 'fontsize', 'italics', 'link', 'small', 'strike', 'sub', 'sup']) {
      const o = await outcome(`'x'.${m}('"')`);
      assert.equal(o.kind, 'error', `${m}: ${show(o)}`);
      assert.match((o as { error: Error }).error.message, new RegExp(`${m} is not available`));
    }
  });
  it('normalize refuses a long run of combining marks (quadratic reordering), and works on text', async () => {
    const o = await outcome("('a' + '\\u0301\\u0316'.repeat(30000)).normalize('NFC').length", NO_CPU);
    assert.equal(o.kind, 'error', show(o));
    assert.match((o as { error: Error }).error.message, /combining marks in a row/);
    assert.equal(await value("'e\\u0301'.normalize('NFC')"), 'é');
  });
  it('a host function result counts like a built-in result', async () => {
    assert.equal(await limitCode("import {Encoding} from 'util'\nEncoding.html().escape('\"'.repeat(400000)).length", NO_CPU), 'LW_SCRIPT_STRING_LIMIT');
  });
});

describe('nothing of the host, and JavaScript values', () => {
  it('host code that prints a script function sees no Laneway source', async () => {
    assert.deepEqual(await value("import {Encoding} from 'util'\n({src: Encoding.html().escape((x) => x)})"), { src: 'function () { [native code] }' });
  });
  it('JSON.stringify builds its key list as JavaScript does', async () => {
    const cases = ["JSON.stringify({a: 1, b: 2}, ['b', 'a', 'b'])", "JSON.stringify({'null': 1, 'undefined': 2, '1': 3}, [null, undefined, 1, {}])"];
    for (const c of cases) assert.equal(await value(c), new Function(`return ${c}`)(), c);
  });
});
