/** Side tables in private fields (slots.ts): the WeakMap contract, without a trace on the key. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BARE, bare, slots } from './slots.js';

test('get, has, set, delete behave as a WeakMap for object and function keys', () => {
  const t = slots<object, string>();
  const a = {};
  const f = () => 1;
  assert.equal(t.get(a), undefined);
  assert.equal(t.has(a), false);
  t.set(a, 'one');
  t.set(f, 'fn');
  assert.equal(t.get(a), 'one');
  assert.equal(t.get(f), 'fn');
  assert.equal(t.has(a), true);
  t.set(a, 'two');
  assert.equal(t.get(a), 'two');
  t.delete(a);
  assert.equal(t.get(a), undefined);
  assert.equal(t.has(a), false);
  t.set(a, 'three');
  assert.equal(t.get(a), 'three');
});

test('keys that are not objects: absent, never an error', () => {
  const t = slots<object, number>();
  for (const k of [null, undefined, 1, 'a', true, Symbol('s')]) {
    assert.equal(t.get(k), undefined);
    assert.equal(t.has(k), false);
    t.delete(k);
  }
});

test('frozen keys take a value; tables are independent; the key shows no new property', () => {
  const t1 = slots<object, number>();
  const t2 = slots<object, number>();
  const key = Object.freeze({ x: 1 });
  t1.set(key, 1);
  assert.equal(t1.get(key), 1);
  assert.equal(t2.get(key), undefined);
  t2.set(key, 2);
  assert.equal(t1.get(key), 1);
  assert.equal(t2.get(key), 2);
  assert.deepEqual(Reflect.ownKeys(key), ['x']);
  assert.equal(JSON.stringify(key), '{"x":1}');
});

test('an undefined value is still a value (has is true)', () => {
  const t = slots<object, undefined>();
  const k = {};
  t.set(k, undefined);
  assert.equal(t.has(k), true);
  assert.equal(t.get(k), undefined);
});

test('a proxy key: no trap runs', () => {
  const t = slots<object, number>();
  let trapped = 0;
  const p = new Proxy({}, { get: () => trapped++, has: () => (trapped++, false), defineProperty: () => (trapped++, false) });
  t.set(p, 5);
  assert.equal(t.get(p), 5);
  assert.equal(trapped, 0);
});

test('bare(): an empty object with nothing inherited, that stays extensible until frozen', () => {
  const o = bare();
  assert.equal(Object.getPrototypeOf(o), BARE);
  assert.equal(Object.getPrototypeOf(BARE), null);
  assert.ok(Object.isFrozen(BARE));
  assert.equal('toString' in o, false);
  assert.equal('constructor' in o, false);
  o.a = 1;
  assert.deepEqual(Object.keys(o), ['a']);
  Object.freeze(o);
  assert.throws(() => {
    'use strict';
    o.b = 2;
  }, TypeError);
});
