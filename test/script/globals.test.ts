/**
 * Granted globals (Redirect, Date, JSON, Object/Array/Number/String/Boolean façades) and the
 * 'util' module (docs/scripting.md "Granted globals").
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ScriptRedirect, utilModule } from '../../src/script/index.js';
import { WebSafe } from '../../src/shared/index.js';
import { run, value } from './helpers.js';

const util = utilModule();

describe('Redirect builder', () => {
  const cases: Array<[string, string]> = [
    [`Redirect.home()`, '/'],
    [`Redirect.dir('a').dir(1234)`, '/a/1234/'],
    [`Redirect.dir('a').dir(1234).name('settings')`, '/a/1234/settings'],
    [`Redirect.home().dir('sessions').dir('x y')`, '/sessions/x%20y/'],
    [`Redirect.home().name('contact')`, '/contact'],
    [`Redirect.index()`, '/app/'],
    [`Redirect.index().name('other')`, '/app/other'],
    [`Redirect.dir('a').params({k: 'v', n: 2, skip: null, many: [1, 2]})`, '/a/?k=v&n=2&many=1&many=2'],
    [`Redirect.dir('a').hash('top')`, '/a/#top'],
  ];
  for (const [source, location] of cases) {
    it(`${source} → ${location}`, async () => {
      const v = await value(source);
      assert.ok(v instanceof ScriptRedirect);
      assert.equal(v.location, location);
    });
  }

  it('records flash messages of every level for later', async () => {
    const v = (await value(`Redirect.home().success('Saved').info('FYI').warning('Careful').error('Oops')`)) as ScriptRedirect;
    assert.deepEqual(v.messages, [
      { type: 'success', value: 'Saved' },
      { type: 'info', value: 'FYI' },
      { type: 'warning', value: 'Careful' },
      { type: 'error', value: 'Oops' },
    ]);
    assert.equal(v.failed, false);
  });

  it('is failed after .invalid(…), carrying the value', async () => {
    const v = (await value(`Redirect.dir('form').invalid({field: 'title'})`)) as ScriptRedirect;
    assert.equal(v.failed, true);
    assert.deepEqual(v.invalid, { field: 'title' });
  });

  it('exposes .url with the request origin', async () => {
    assert.deepEqual(await value(`const u = Redirect.dir('a').params({q: 1}).url;\n({href: u.href, pathname: u.pathname, search: u.search})`), {
      href: 'https://example.test/a/?q=1',
      pathname: '/a/',
      search: '?q=1',
    });
  });

  it('serialises inside JSON as {path, messages}', async () => {
    const outcome = await run(`JSON.stringify({redirect: Redirect.home().success('Hi')})`);
    assert.deepEqual(outcome, { kind: 'value', value: '{"redirect":{"path":"/","messages":[{"type":"success","value":"Hi"}]}}' });
  });

  it('crosses between scripts (an exported builder stays a builder)', async () => {
    const v = (await value(`import {KeysRedirect} from '📤'\nKeysRedirect.success('Done')`, { imports: { KeysRedirect: new ScriptRedirect({ path: '/keys/' }) } })) as ScriptRedirect;
    assert.equal(v.location, '/keys/');
    assert.deepEqual(v.messages, [{ type: 'success', value: 'Done' }]);
  });
});

describe('Date', () => {
  it('constructs, reads and compares like Date', async () => {
    assert.deepEqual(await value(`const a = new Date(2000)\nconst b = new Date('2020-01-02T03:04:05Z');\n({iso: b.toISOString(), year: b.getUTCFullYear(), diff: b - a > 0, before: a < b, same: new Date(a).getTime()})`), {
      iso: '2020-01-02T03:04:05.000Z',
      year: 2020,
      diff: true,
      before: true,
      same: 2000,
    });
  });

  it('crosses out as a host Date and in as a script Date', async () => {
    const v = await value(`import {when} from 'm'\nnew Date(when.getTime() + 1000)`, { imports: { when: new Date(0) } });
    assert.ok(v instanceof Date);
    assert.equal(v.getTime(), 1000);
  });

  it('has Date.now, Date.parse and Date.UTC', async () => {
    const v = (await value(`[Date.now() > 0, Date.parse('1970-01-01T00:00:01Z'), Date.UTC(1970, 0, 1)]`)) as unknown[];
    assert.deepEqual(v, [true, 1000, 0]);
  });
});

describe('other granted globals', () => {
  it('offers the Object, Array, Number, String, Boolean, JSON and Math helpers', async () => {
    const source = `({
  keys: Object.keys({a: 1, b: 2}),
  entries: Object.entries({a: 1}),
  assigned: Object.assign({a: 1}, {b: 2}),
  from: Array.from('ab'),
  of: Array.of(1, 2),
  isArray: Array.isArray([]),
  num: Number('42') + Number.parseFloat('0.5'),
  int: Number.isInteger(3),
  str: String(12) + String.fromCharCode(65),
  bool: Boolean(''),
  json: JSON.parse(JSON.stringify({a: [1, {b: null}]})),
  pretty: JSON.stringify({a: 1}, null, 2),
  max: Math.max(1, 5, 3),
  parsed: parseInt('12px', 10),
  uri: encodeURIComponent('a b'),
})`;
    assert.deepEqual(await value(source), {
      keys: ['a', 'b'],
      entries: [['a', 1]],
      assigned: { a: 1, b: 2 },
      from: ['a', 'b'],
      of: [1, 2],
      isArray: true,
      num: 42.5,
      int: true,
      str: '12A',
      bool: false,
      json: { a: [1, { b: null }] },
      pretty: '{\n  "a": 1\n}',
      max: 5,
      parsed: 12,
      uri: 'a%20b',
    });
  });

  it('supports spread, destructuring, optional chaining, ?? and template literals', async () => {
    const source = `const {a, b: [x, ...rest], c = 'd'} = {a: 1, b: [2, 3, 4]}
const o = {...{p: 1}, q: [...rest, a]}
const f = (first, ...more) => more.length;
\`\${a}-\${x}-\${c}-\${o.q.join(',')}-\${o.missing?.deep ?? 'none'}-\${f(1, 2, 3)}\``;
    assert.equal(await value(source), '1-2-d-3,4,1-none-2');
  });

  it('hands web-safe HTML through as web-safe', async () => {
    const v = await value(`import {ItemDIV} from '📤'\n({html: ItemDIV({title: 'x'})})`, { imports: { ItemDIV: (a: { title: string }) => new WebSafe(`<div>${a.title}</div>`) } });
    assert.ok((v as { html: unknown }).html instanceof WebSafe);
    assert.equal(((v as { html: WebSafe }).html).html, '<div>x</div>');
  });
});

describe("'util' module", () => {
  it('ID.generate gives URL- and HTML-safe unique ids', async () => {
    const ids = (await value(`import {ID} from 'util'\n[ID.generate(), ID.generate()]`, { imports: util })) as string[];
    assert.match(ids[0]!, /^[A-Za-z0-9_-]{22}$/);
    assert.notEqual(ids[0], ids[1]);
  });

  it('Encoding.base64Url().encode/encodeNum and Encoding.html().escape', async () => {
    const v = await value(`import {Encoding} from 'util';\n[Encoding.base64Url().encode('héllo?'), Encoding.base64Url().encodeNum(0), Encoding.base64Url().encodeNum(64), Encoding.html().escape('<a href="x">&\\'</a>')]`, { imports: util });
    assert.deepEqual(v, [Buffer.from('héllo?').toString('base64url'), 'A', 'BA', '&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;']);
  });

  it('Dates.days and Dates.months give streams of dates, backwards for n < 0', async () => {
    const v = (await value(`import {Dates} from 'util'\nconst d = new Date('2024-01-31T00:00:00Z');\n({days: Dates.days(d, 3).map((x) => x.toISOString().slice(0, 10)), back: Dates.days(d, -2).map((x) => x.getUTCDate()), months: Dates.months(new Date('2024-01-15T00:00:00Z'), 3).map((x) => x.getUTCMonth())})`, { imports: util })) as Record<string, unknown>;
    assert.deepEqual(v, { days: ['2024-01-31', '2024-02-01', '2024-02-02'], back: [31, 30], months: [0, 1, 2] });
  });

  it('Dates.fromNow gives coarse relative text', async () => {
    const now = Date.now();
    assert.equal(util.Dates.fromNow(new Date(now)), 'now');
    assert.equal(util.Dates.fromNow(new Date(now - 3_500)), '3 seconds ago');
    assert.equal(util.Dates.fromNow(new Date(now - 1.4 * 365.25 * 86_400_000 - 1000)), '1.4 years ago');
    assert.equal(util.Dates.fromNow(new Date(now + 5 * 60_000 + 500)), 'in 5 minutes');
    assert.equal(await value(`import {Dates} from 'util'\nDates.fromNow(new Date(Date.now() - 7200000))`, { imports: util }), '2 hours ago');
  });
});
