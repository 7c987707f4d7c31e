/**
 * The completion value (docs/scripting.md "Completion value → response"): the value of the last
 * evaluated expression statement, including inside the taken `if`/`else` or `try`/`catch` branch.
 * Each case is also evaluated by V8 itself (a classic script's completion value) to pin the same
 * answer.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import vm from 'node:vm';
import { value, run } from './helpers.js';

const CASES: Array<[string, string, unknown]> = [
  ['last expression', `1; 2; 'three'`, 'three'],
  ['object literal', `let a = 1;\n({a, b: [a, 2]})`, { a: 1, b: [1, 2] }],
  ['declarations do not change it', `'x'; let y = 2; const z = 3`, 'x'],
  ['taken if branch', `let a = 2\nif (a > 1) { 'big' } else { 'small' }`, 'big'],
  ['taken else branch', `let a = 0\nif (a > 1) { 'big' } else { 'small' }`, 'small'],
  ['else if chain', `let a = 1\nif (a === 0) { 'zero' } else if (a === 1) { 'one' } else { 'many' }`, 'one'],
  ['if without a taken branch resets to undefined', `'before'\nif (false) { 'never' }`, undefined],
  ['if whose branch is empty resets to undefined', `'before'\nif (true) { let x = 1 }`, undefined],
  ['statements after the if win', `if (true) { 'a' }\n'b'`, 'b'],
  ['try block value', `try { 'tried' } catch (e) { 'caught' }`, 'tried'],
  ['catch branch value', `try { 'partial'; null.x } catch (e) { 'caught' }`, 'caught'],
  ['empty catch resets to undefined', `'before'\ntry { 'partial'; null.x } catch (e) { }`, undefined],
  ['finally does not change it', `try { 'tried' } finally { 'finally' }`, 'tried'],
  ['catch and finally', `try { null.x } catch { 'caught' } finally { 'finally' }`, 'caught'],
  ['nested blocks', `{ 'a'; { 'b' } }`, 'b'],
  ['empty block keeps the value', `'a'; {}`, 'a'],
  ['value of a caught thrown string', `let m = ''\ntry { throw 'boom' } catch (e) { m = e }\nm`, 'boom'],
  ['assignment expression', `let a\na = 5`, 5],
  ['ternary', `let n = 3\nn > 2 ? 'many' : 'few'`, 'many'],
];

describe('completion value', () => {
  for (const [name, source, expected] of CASES) {
    it(`${name}`, async () => {
      assert.deepEqual(await value(source), expected);
      const v8 = vm.runInNewContext(source);
      assert.deepEqual(JSON.parse(JSON.stringify({ v: v8 })).v, expected, 'V8 agrees');
    });
  }

  it('is an array when a mapped list is emitted at the top level', async () => {
    assert.deepEqual(await value(`[1, 2, 3].map((n) => ({n}))`), [{ n: 1 }, { n: 2 }, { n: 3 }]);
  });

  it('keeps a mutated Redirect builder as the value', async () => {
    const v = await value(`let r = Redirect.dir('a')\nif (true) { r.dir(7) } else { r.name('new') }\nr`);
    assert.equal((v as { location: string }).location, '/a/7/');
  });

  it('is undefined for an empty script', async () => {
    assert.deepEqual(await run(''), { kind: 'value', value: undefined });
  });

  it('returns an object of the exports for a supplier', async () => {
    const outcome = await run(`const a = 1\nconst b = {c: a + 1}\nexport {a, b as B}`, { compile: { kind: 'supplier' } });
    assert.deepEqual(outcome, { kind: 'value', value: { a: 1, B: { c: 2 } } });
  });
});
