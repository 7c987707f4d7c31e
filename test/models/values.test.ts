/** Per-type value checks: what each accepts (and stores), what it refuses. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  COUNTRY_CODES,
  checkBoolean,
  checkCountry,
  checkDate,
  checkDouble,
  checkFieldValue,
  checkGeo,
  checkHierarchy,
  checkHtmlLength,
  checkInteger,
  checkMap,
  checkMarkdownLength,
  checkOption,
  checkString,
  checkSvgIcon,
  checkTimestamp,
  checkUid,
  type ValueResult,
} from '../../src/models/index.js';
import { readModels } from './tree.js';

type Row = [input: unknown, expected: unknown];

/** Rows whose expected value is `Error` must fail; others must store exactly `expected`. */
function table(name: string, check: (input: unknown) => ValueResult, rows: Row[]): void {
  describe(name, () => {
    for (const [input, expected] of rows) {
      const shown = typeof input === 'bigint' ? `${input}n` : typeof input === 'string' && input.length > 40 ? `${input.slice(0, 40)}…` : JSON.stringify(input);
      it(expected === Error ? `refuses ${shown}` : `stores ${shown}`, () => {
        const r = check(input);
        if (expected === Error) {
          assert.equal(r.ok, false, `accepted: ${JSON.stringify(r.ok && r.value, (_k, v) => (typeof v === 'bigint' ? String(v) : v))}`);
          assert.ok(!r.ok && r.message.length > 5);
        } else {
          assert.deepEqual(r, { ok: true, value: expected });
        }
      });
    }
  });
}

table('string', (v) => checkString(v), [
  ['hello', 'hello'],
  ['', ''],
  ['x'.repeat(100), 'x'.repeat(100)],
  ['x'.repeat(101), Error],
  ['😀'.repeat(100), '😀'.repeat(100)], // characters, not UTF-16 units
  [42, '42'],
  [{}, Error],
  [true, Error],
]);
table('string with min 3, max 5', (v) => checkString(v, { min: 3, max: 5 }), [['ab', Error], ['abc', 'abc'], ['abcdef', Error]]);

table('boolean', checkBoolean, [
  [true, true],
  [false, false],
  ['true', true],
  ['1', true],
  ['false', false],
  ['0', false],
  ['yes', Error],
  ['TRUE', Error],
  [2, Error],
]);

table('integer', (v) => checkInteger(v), [
  [42, 42],
  ['42', 42],
  ['+7', 7],
  [0, 0],
  ['4.0', Error],
  ['4.5', Error],
  [4.5, Error],
  ['1e3', Error],
  ['', Error],
  ['abc', Error],
  [-1, Error], // min defaults to 0
  ['9223372036854775807', 9223372036854775807n],
  ['9223372036854775808', Error],
  [9007199254740991, 9007199254740991],
  [9007199254740992, Error], // not exact as a number: pass it as text
  [12n, 12],
]);
table('integer with min -10, max 10', (v) => checkInteger(v, { min: -10, max: 10 }), [
  ['-10', -10],
  ['-11', Error],
  [10, 10],
  [11, Error],
]);
table('integer in the full 64-bit range', (v) => checkInteger(v, { min: Number.MIN_SAFE_INTEGER }), [
  ['-9223372036854775808', Error], // below the min given
  [Number.MIN_SAFE_INTEGER, Number.MIN_SAFE_INTEGER],
]);

table('double (scale 2, half to even)', (v) => checkDouble(v), [
  [1.5, 1.5],
  ['9.99', 9.99],
  ['2.675', 2.68],
  [2.675, 2.68], // as written, not as the binary double
  ['2.665', 2.66],
  ['2.685', 2.68],
  ['0.125', 0.12],
  ['0.135', 0.14],
  ['0.1251', 0.13],
  ['1.005', 1],
  ['1.015', 1.02],
  ['99.995', 100],
  ['1e2', 100],
  ['1.2345e1', 12.34],
  ['5e-7', 0],
  [0.001, 0],
  ['.5', 0.5],
  [-1, Error], // min defaults to 0
  ['abc', Error],
  ['1,5', Error],
  [Infinity, Error],
  [Number.NaN, Error],
]);
table('double with min -5', (v) => checkDouble(v, { min: -5 }), [
  ['-2.675', -2.68],
  ['-0.001', 0],
  ['-5.004', -5],
  ['-5.01', Error],
]);

table('timestamp (ISO-8601, partial allowed, UTC)', checkTimestamp, [
  ['2024-05-06T14:30:00Z', '2024-05-06T14:30:00.000Z'],
  ['2024-05-06T14:30:00.5Z', '2024-05-06T14:30:00.500Z'],
  ['2024-05-06T14:30:00+02:00', '2024-05-06T12:30:00.000Z'],
  ['2024-05-06T14:30-0130', '2024-05-06T16:00:00.000Z'],
  ['2024-05-06T14:30', '2024-05-06T14:30:00.000Z'],
  ['2024-05-06T14', '2024-05-06T14:00:00.000Z'],
  ['2024-05-06', '2024-05-06T00:00:00.000Z'],
  ['2024-05', '2024-05-01T00:00:00.000Z'],
  ['2024', '2024-01-01T00:00:00.000Z'],
  ['0099-01-01', '0099-01-01T00:00:00.000Z'],
  [new Date(Date.UTC(2020, 1, 29)), '2020-02-29T00:00:00.000Z'],
  ['2023-02-29', Error],
  ['2024-13-01', Error],
  ['2024-05-06T24:00', Error],
  ['2024-05-06 14:30', Error],
  ['06/05/2024', Error],
  ['2024-05-06Z', Error],
  [1714000000000, Error],
]);

table('date (no time)', checkDate, [
  ['2024-05-06', '2024-05-06'],
  ['2024-02-29', '2024-02-29'],
  ['2024-05', '2024-05-01'],
  ['2024', '2024-01-01'],
  [new Date(Date.UTC(2024, 4, 6, 23, 59)), '2024-05-06'],
  ['2023-02-29', Error],
  ['2024-05-06T10:00Z', Error],
  ['May 6, 2024', Error],
]);

table('options', (v) => checkOption(v, ['active', 'complete', '1']), [
  ['active', 'active'],
  ['complete', 'complete'],
  [1, '1'],
  ['Active', Error],
  ['other', Error],
  [null, Error],
]);

describe('country', () => {
  it('knows the 249 officially assigned ISO 3166-1 alpha-3 codes', () => {
    assert.equal(COUNTRY_CODES.size, 249);
    for (const code of COUNTRY_CODES) assert.match(code, /^[A-Z]{3}$/);
  });
});
table('country', checkCountry, [
  ['FRA', 'FRA'],
  ['usa', 'USA'],
  ['ALA', 'ALA'],
  ['SSD', 'SSD'],
  ['FR', Error],
  ['XKX', Error], // user-assigned, not official
  ['ANT', Error], // withdrawn
  [840, Error],
]);

table('map', checkMap, [
  [{ a: 'x', b: 2, c: true }, { a: 'x', b: 2, c: true }],
  [null, {}],
  [undefined, {}],
  [{ a: { b: 1 } }, Error],
  [{ a: [1] }, Error],
  [{ a: null }, Error],
  [{ a: Infinity }, Error],
  [[1, 2], Error],
  ['x', Error],
]);

table('geo', checkGeo, [
  ['48.8566,2.3522', { latitude: 48.8566, longitude: 2.3522 }],
  [' -33.9 , 151.2 ', { latitude: -33.9, longitude: 151.2 }],
  ['90,-180', { latitude: 90, longitude: -180 }],
  [{ latitude: 1, longitude: 2 }, { latitude: 1, longitude: 2 }],
  ['90.1,0', Error],
  ['0,180.5', Error],
  ['48.8566', Error],
  ['a,b', Error],
]);

table('uid', checkUid, [
  ['my-first-post', 'my-first-post'],
  ['a1', 'a1'],
  ['x'.repeat(100), 'x'.repeat(100)],
  ['x'.repeat(101), Error],
  ['a', Error],
  ['-ab', Error],
  ['ab-', Error],
  ['My-Post', Error],
  ['a_b', Error],
  ['a b', Error],
]);

table('hierarchy', checkHierarchy, [
  ['/0/', '/0/'],
  ['/3.1/', '/3.1/'],
  ['/1/2/', '/1/2/'],
  ['0', Error],
  ['/a/', Error],
  ['//', Error],
]);

const ICON = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><path d="M0 0h24v24H0z" fill="none"/></svg>';
table('svg-icon', checkSvgIcon, [
  [ICON, ICON],
  ['<svg width="16" height="16"><circle cx="8" cy="8" r="4"/></svg>', '<svg width="16" height="16"><circle cx="8" cy="8" r="4"/></svg>'],
  ['<svg viewBox="0 0 24 24"><defs><linearGradient id="g"/></defs><rect fill="url(#g)" width="24" height="24"/><use href="#g"/></svg>', '<svg viewBox="0 0 24 24"><defs><linearGradient id="g"/></defs><rect fill="url(#g)" width="24" height="24"/><use href="#g"/></svg>'],
  [`<svg viewBox="0 0 24 24"><path d="${'M0 0'.repeat(500)}"/></svg>`, Error], // over 2000 bytes
  ['<svg viewBox="0 0 24 24"><script>alert(1)</script></svg>', Error],
  ['<svg viewBox="0 0 24 24"><style>path{fill:red}</style></svg>', Error],
  ['<svg viewBox="0 0 24 24" onload="alert(1)"></svg>', Error],
  ['<svg viewBox="0 0 24 24"><path style="fill:red"/></svg>', Error],
  ['<svg viewBox="0 0 24 24"><image href="https://example.com/x.png"/></svg>', Error],
  ['<svg viewBox="0 0 24 24"><use xlink:href="other.svg#icon"/></svg>', Error],
  ['<svg viewBox="0 0 24 24"><rect fill="url(https://x.test/p)"/></svg>', Error],
  ['<svg viewBox="0 0 24 24"><a href="javascript:alert(1)"><path/></a></svg>', Error],
  ['<svg viewBox="0 0 24 24"><foreignObject><p>x</p></foreignObject></svg>', Error],
  ['<svg viewBox="0 0 24 24"><animate attributeName="href" to="x"/></svg>', Error],
  ['<?xml version="1.0"?><svg viewBox="0 0 24 24"></svg>', Error],
  ['<!DOCTYPE svg [<!ENTITY x "y">]><svg viewBox="0 0 24 24"></svg>', Error],
  ['<svg viewBox="0 0 24 12"></svg>', Error], // not square
  ['<svg><path/></svg>', Error], // no size
  ['<div>no</div>', Error],
  [42, Error],
]);

table('html (length only)', (v) => checkHtmlLength(v), [
  ['<p>hi</p>', '<p>hi</p>'],
  ['é'.repeat(1000), 'é'.repeat(1000)],
  ['é'.repeat(1001), Error], // 2002 bytes
  [1, Error],
]);
table('markdown (length only)', (v) => checkMarkdownLength(v, { min: 2, max: 5 }), [
  ['# hi', '# hi'],
  ['😀😀😀😀😀', '😀😀😀😀😀'],
  ['x', Error],
  ['abcdef', Error],
]);

describe('field values by definition', () => {
  const { schema, problems } = readModels({
    '/📦/🌐Task.yaml':
      'title?: string\ncount:\n  type: integer\n  label: How many\ntags[3]: string\nextra: map\ncontact:\n  type:\n    email: string\n    phone?: string\n',
  });
  const field = (name: string) => schema.models.get('Task')!.fields.find((f) => f.name === name)!;
  it('reads its fixture', () => assert.deepEqual(problems, []));
  it('stores null for a missing optional value', () => assert.deepEqual(checkFieldValue(field('title'), ''), { ok: true, value: null }));
  it('names the field when a required value is missing', () => assert.deepEqual(checkFieldValue(field('count'), undefined), { ok: false, message: 'How many is required' }));
  it('names the field in type messages', () => {
    assert.deepEqual(checkFieldValue(field('count'), '1.5'), { ok: false, message: 'How many must be a whole number without a decimal point, such as 42' });
  });
  it('keeps string lists distinct and bounded', () => {
    assert.deepEqual(checkFieldValue(field('tags'), ['a', 'b', 'a']), { ok: true, value: ['a', 'b'] });
    assert.equal(checkFieldValue(field('tags'), ['a', 'b', 'c', 'd']).ok, false);
    assert.deepEqual(checkFieldValue(field('tags'), 'solo'), { ok: true, value: ['solo'] });
  });
  it('stores {} for a missing map', () => assert.deepEqual(checkFieldValue(field('extra'), null), { ok: true, value: {} }));
  it('checks inline embedded values field by field', () => {
    assert.deepEqual(checkFieldValue(field('contact'), { email: 'a@b.c' }, schema), { ok: true, value: { email: 'a@b.c', phone: null } });
    assert.deepEqual(checkFieldValue(field('contact'), { phone: '1' }, schema), { ok: false, message: 'Contact is not valid: Email is required' });
    assert.equal(checkFieldValue(field('contact'), { email: 'a', fax: '2' }, schema).ok, false);
  });
});
