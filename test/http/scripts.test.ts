/**
 * Script endpoints over HTTP: the completion value (docs/scripting.md "Completion value →
 * response"), AJAX rerouting, suppliers (docs/suppliers.md) and the request data modules
 * (docs/request.md), against a real listening server.
 */
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { checkApp } from '../../src/app/index.js';
import { formatDiagnostic } from '../../src/diag/index.js';
import { serve, writeApp, type Served } from '../helpers.js';

const json = (r: { text: string }) => JSON.parse(r.text);

describe('script output', () => {
  let s: Served;
  before(async () => {
    s = await serve({
      '/api/🖥object.js': `const n = 2;\n({ a: 1, list: [1, n], nested: { ok: true } })`,
      '/api/🖥internal.js': `'/about'`,
      '/api/🖥external.js': `'https://example.com/x?y=1'`,
      '/api/🖥builder.js': `Redirect.dir('a').dir('1234').name('settings').params({ k: 'v w' }).hash('top')`,
      '/api/🖥index-redirect.js': `Redirect.index().name('other')`,
      '/api/🖥mutated.js': `let r = Redirect.dir('a')\nif (1 > 0) { r.dir('yes') } else { r.name('no') }\nr`,
      '/api/🖥throw-redirect.js': `throw Redirect.home().error('nope')`,
      '/api/🖥throw-string.js': `throw 'InvalidName'`,
      '/api/🖥throw-object.js': `throw ({ error: 'bad', field: 'title' })`,
      '/api/🖥crash.js': `const o = null;\no.missing.deeper`,
      '/api/🖥branch.js': `import {x} from '&';\nif (x == 'a') { ({ took: 'a' }) } else { ({ took: 'else' }) }`,
      '/api/🖥try.js': `try { throw 'e' } catch (e) { ({ caught: e }) }`,
      '/api/🖥bad-redirect.js': `'//evil.example/x'`,
      '/api/🖥forever.js': `const f = (n) => f(n + 1);\nf(0)`,
      '/api/🖥spin.js': `Array.from({ length: 1e6 }, (_, i) => i).map((i) => 'x'.repeat(50)).map((s) => s + s).length`,
      '/api/🖥bomb.js': `'x'.repeat(1e9)`,
      '/api/📮save.js': `import {title} from 'form'\ntitle ? '/items/' + title : '/about'`,
      '/api/PUT.js': `'/api/object'`,
      '/items/{item}/🔗.yaml': 'values: [one, two]\n',
      '/items/{item}/GET.js': `import {item} from '🔗';\n({ item: item.$value, one: item.one, two: item.two })`,
      '/about.html': '<p>about</p>',
    });
  });
  after(() => s.close());

  test('an object literal answers JSON 200 with the same properties', async () => {
    const r = await s.get('/api/object');
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], 'application/json; charset=utf-8');
    assert.deepEqual(json(r), { a: 1, list: [1, 2], nested: { ok: true } });
    assert.equal(r.headers['cache-control'], 'no-cache');
    assert.ok(r.headers.etag);
    assert.equal((await s.get('/api/object', { 'if-none-match': r.headers.etag! })).status, 304);
  });

  test('a string starting with / redirects within the app (302)', async () => {
    const r = await s.get('/api/internal');
    assert.equal(r.status, 302);
    assert.equal(r.headers.location, '/about');
  });

  test('a string starting with http redirects outside (302)', async () => {
    const r = await s.get('/api/external');
    assert.equal(r.status, 302);
    assert.equal(r.headers.location, 'https://example.com/x?y=1');
  });

  test('the Redirect builder redirects: dir, name, params, hash, index, mutation', async () => {
    assert.equal((await s.get('/api/builder')).headers.location, '/a/1234/settings?k=v%20w#top');
    assert.equal((await s.get('/api/index-redirect')).headers.location, '/api/other');
    assert.equal((await s.get('/api/mutated')).headers.location, '/a/yes/');
  });

  test('a thrown Redirect still redirects; thrown strings and objects answer 400 JSON', async () => {
    const r = await s.get('/api/throw-redirect');
    assert.equal(r.status, 302);
    assert.equal(r.headers.location, '/');
    const str = await s.get('/api/throw-string');
    assert.equal(str.status, 400);
    assert.deepEqual(json(str), { error: 'InvalidName' });
    const obj = await s.get('/api/throw-object');
    assert.equal(obj.status, 400);
    assert.deepEqual(json(obj), { error: 'bad', field: 'title' });
  });

  test('an uncaught error answers 500: an HTML page, or JSON when Accept prefers it; no details leak', async () => {
    const html = await s.get('/api/crash');
    assert.equal(html.status, 500);
    assert.match(html.headers['content-type'] ?? '', /text\/html/);
    assert.doesNotMatch(html.text, /missing|deeper|TypeError/);
    const j = await s.get('/api/crash', { accept: 'application/json' });
    assert.equal(j.status, 500);
    assert.equal(typeof json(j).error, 'string');
  });

  test('the completion value follows the branch taken (if/else, try/catch)', async () => {
    assert.deepEqual(json(await s.get('/api/branch?x=a')), { took: 'a' });
    assert.deepEqual(json(await s.get('/api/branch?x=b')), { took: 'else' });
    assert.deepEqual(json(await s.get('/api/try')), { caught: 'e' });
  });

  test('a redirect to another origin written as //host is refused', async () => {
    const r = await s.get('/api/bad-redirect');
    assert.equal(r.status, 500);
    assert.equal(r.headers.location, undefined);
  });

  test('runaway scripts answer 503 while other requests keep being answered', async () => {
    const started = Date.now();
    const results = await Promise.all([
      s.get('/api/forever'),
      s.get('/api/bomb'),
      s.get('/api/object'),
      s.get('/api/spin'),
      s.get('/api/object'),
    ]);
    assert.deepEqual(results.map((r) => r.status), [503, 503, 200, 503, 200]);
    assert.ok(Date.now() - started < 10_000);
    assert.equal((await s.get('/api/object')).status, 200);
  });

  test('AJAX rerouting: POST/PUT + X-Requested-With + an app path answers the GET of that path', async () => {
    const ajax = { 'x-requested-with': 'XMLHttpRequest', 'content-type': 'application/x-www-form-urlencoded' };
    const r = await s.request('POST', '/api/save', ajax, 'title=two');
    assert.equal(r.status, 200);
    assert.deepEqual(json(r), { item: 'two', one: false, two: true });
    const put = await s.request('PUT', '/api', { 'x-requested-with': 'XMLHttpRequest' });
    assert.deepEqual(json(put), { a: 1, list: [1, 2], nested: { ok: true } });
    // Without the header it is a plain redirect.
    const plain = await s.request('POST', '/api/save', { 'content-type': 'application/x-www-form-urlencoded' }, 'title=two');
    assert.equal(plain.status, 302);
    assert.equal(plain.headers.location, '/items/two');
    // GET is never rerouted.
    assert.equal((await s.get('/api/internal', { 'x-requested-with': 'XMLHttpRequest' })).status, 302);
  });

  test('fixed-values path parameters: $value and one boolean switch per option', async () => {
    assert.deepEqual(json(await s.get('/items/one')), { item: 'one', one: true, two: false });
    assert.equal((await s.get('/items/three')).status, 404);
  });
});

describe('request data modules', () => {
  let s: Served;
  before(async () => {
    s = await serve({
      '/📮form.js': `import {title, thisThat, absent} from 'form'\nimport {tags} from 'form[]'\nimport {Form} from 'form{}';\n({ title, thisThat, absent, tags, keys: Form.keys(), has: Form.has('title'), hasNot: Form.has('nope') })`,
      '/🖥query.js': `import {q, otherParam as o} from '&'\nimport * as P from '&';\n({ q, o, p: P.q })`,
      '/🖥cookie.js': `import {token, missing} from '🍪';\n({ token, missing })`,
      '/🖥util.js': `import {ID, Encoding} from 'util';\n({ idLength: ID.generate().length > 5, esc: Encoding.html().escape('<a href="x">') })`,
      '/🖥request.js': `import {Request} from '🔗';\n({ url: Request.url, base: Request.base, domain: Request.domain })`,
    });
  });
  after(() => s.close());

  const form = { 'content-type': 'application/x-www-form-urlencoded' };

  test("'form', 'form[]', 'form{}' read urlencoded bodies; dashed names are camelCased; absent is null", async () => {
    const r = await s.request('POST', '/form', form, 'title=Hello&this-that=x&tags=a&tags=b');
    assert.deepEqual(json(r), { title: 'Hello', thisThat: 'x', absent: null, tags: ['a', 'b'], keys: ['title', 'this-that', 'tags'], has: true, hasNot: false });
  });

  test('multipart bodies work the same; file parts are refused with 400', async () => {
    const boundary = 'XyZ';
    const part = (name: string, value: string) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
    const body = part('title', 'Multi') + part('tags', 'one') + `--${boundary}--\r\n`;
    const r = await s.request('POST', '/form', { 'content-type': `multipart/form-data; boundary=${boundary}` }, body);
    assert.equal(r.status, 200);
    assert.equal(json(r).title, 'Multi');
    assert.deepEqual(json(r).tags, ['one']);
    const file = `--${boundary}\r\nContent-Disposition: form-data; name="f"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nhello\r\n--${boundary}--\r\n`;
    const bad = await s.request('POST', '/form', { 'content-type': `multipart/form-data; boundary=${boundary}`, accept: 'application/json' }, file);
    assert.equal(bad.status, 400);
    assert.match(json(bad).error, /file uploads/);
  });

  test('a JSON object body maps to the same modules; malformed bodies answer 400 with a reason', async () => {
    const r = await s.request('POST', '/form', { 'content-type': 'application/json' }, JSON.stringify({ title: 'J', tags: ['x', 'y'], 'this-that': 3 }));
    assert.deepEqual(json(r), { title: 'J', thisThat: '3', absent: null, tags: ['x', 'y'], keys: ['title', 'tags', 'this-that'], has: true, hasNot: false });
    const broken = await s.request('POST', '/form', { 'content-type': 'application/json', accept: 'application/json' }, '{"title":');
    assert.equal(broken.status, 400);
    assert.match(json(broken).error, /JSON/);
    const arr = await s.request('POST', '/form', { 'content-type': 'application/json', accept: 'application/json' }, '[1,2]');
    assert.equal(arr.status, 400);
    const nested = await s.request('POST', '/form', { 'content-type': 'application/json', accept: 'application/json' }, '{"__proto__": {"polluted": "yes"}, "title": "p"}');
    assert.equal(nested.status, 400, 'nested objects are refused');
    const proto = await s.request('POST', '/form', { 'content-type': 'application/json' }, '{"__proto__": "x", "constructor": "y", "title": "p"}');
    assert.equal(json(proto).title, 'p');
    assert.deepEqual(json(proto).keys, ['__proto__', 'constructor', 'title']);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  test("'&' reads the query string, by name, alias and namespace", async () => {
    assert.deepEqual(json(await s.get('/query?q=1&other-param=2')), { q: '1', o: '2', p: '1' });
    assert.deepEqual(json(await s.get('/query')), { q: null, o: null }, 'a namespace has no property for an absent field');
  });

  test("'🍪' reads cookies; a missing one is null", async () => {
    assert.deepEqual(json(await s.get('/cookie', { cookie: 'a=1; token=abc%20d' })), { token: 'abc d', missing: null });
  });

  test("'util' and Request", async () => {
    assert.deepEqual(json(await s.get('/util')), { idLength: true, esc: '&lt;a href=&quot;x&quot;&gt;' });
    const r = json(await s.get('/request', { host: 'example.test:8080' }));
    assert.deepEqual(r, { url: 'http://example.test:8080/request', base: 'http://example.test:8080', domain: 'example.test' });
  });
});

describe('suppliers', () => {
  let s: Served;
  let runs = 0;
  before(async () => {
    s = await serve({
      '/📤/Site.js': `const SiteName = 'Laneway'\nconst Shared = 'root'\nexport {SiteName, Shared}`,
      '/📤/{}Calc.js': `const double = (n) => n * 2\nexport {double}`,
      '/📤/Counter.js': `import {n} from '&'\nconst Counted = (n || '0') + '!'\nexport {Counted}`,
      '/📤/Uses.js': `import {SiteName} from '📤'\nconst Greeting = 'Hello ' + SiteName\nexport {Greeting}`,
      '/🖥root.js': `import {SiteName, Shared, double, Greeting} from '📤'\n({ SiteName, Shared, d: double(21), Greeting })`,
      '/deep/📤/Override.js': `const Shared = 'deep'\nexport {Shared}`,
      '/deep/🖥here.js': `import {Shared, SiteName} from '📤'\n({ Shared, SiteName })`,
      '/deep/📤/special.js': `const Secret = 'only for special'\nexport {Secret}`,
      '/deep/🖥special.js': `import {Secret} from '📤'\n({ Secret })`,
      '/🖥twice.js': `import {Counted} from '📤'\nimport {Greeting} from '📤'\n({ a: Counted, b: Counted, Greeting })`,
      '/wrap/📤/Wrap.js': `import {Shared} from '📤'\nconst Wrapped = '[' + Shared + ']'\nconst Other = 1\nexport {Wrapped, Other}`,
      '/wrap/🖥w.js': `import {Wrapped} from '📤'\n({ Wrapped })`,
    });
  });
  after(() => s.close());
  void runs;

  test('request and function suppliers export values to scripts; suppliers import suppliers', async () => {
    assert.deepEqual(json(await s.get('/root')), { SiteName: 'Laneway', Shared: 'root', d: 42, Greeting: 'Hello Laneway' });
  });

  test('the nearest supplier shadows an ancestor; ancestors stay visible', async () => {
    assert.deepEqual(json(await s.get('/deep/here')), { Shared: 'deep', SiteName: 'Laneway' });
    assert.deepEqual(json(await s.get('/wrap/w')), { Wrapped: '[root]' });
  });

  test('an endpoint-specific supplier (📤/<route>.js) is visible to that endpoint', async () => {
    assert.deepEqual(json(await s.get('/deep/special')), { Secret: 'only for special' });
  });

  test('a supplier runs with the request it serves', async () => {
    assert.deepEqual(json(await s.get('/twice?n=5')), { a: '5!', b: '5!', Greeting: 'Hello Laneway' });
  });
});

describe('supplier build errors', () => {
  test('same-level duplicates, cycles, unknown names and scope violations are reported with their files', () => {
    const dir = writeApp({
      '/📤/A.js': `const X = 1\nexport {X}`,
      '/📤/B.js': `const X = 2\nexport {X}`,
      '/c/📤/P.js': `import {Q} from '📤'\nconst P = Q\nexport {P}`,
      '/c/📤/Q.js': `import {P} from '📤'\nconst Q = P\nexport {Q}`,
      '/🖥missing.js': `import {Nope} from '📤'\n({ Nope })`,
      '/other/📤/Local.js': `const Local = 1\nexport {Local}`,
      '/🖥outside.js': `import {Local} from '📤'\n({ Local })`,
      '/deep/📤/mine.js': `const Mine = 1\nexport {Mine}`,
      '/deep/🖥mine.js': `import {Mine} from '📤'\n({ Mine })`,
      '/deep/🖥notmine.js': `import {Mine} from '📤'\n({ Mine })`,
      '/🖥param.js': `import {id} from '🔗'\n({ id })`,
      '/🖥module.js': `import {Task} from '📦'\n({ Task })`,
    });
    const lines = checkApp(dir).map(formatDiagnostic);
    const has = (re: RegExp) => assert.ok(lines.some((l) => re.test(l)), `missing ${re} in:\n${lines.join('\n')}`);
    has(/^📤\/B\.js:1:1: "X" is exported by both \/📤\/A\.js and \/📤\/B\.js.*\[LW_SUPPLIER_DUPLICATE\]/);
    has(/c\/📤\/[PQ]\.js:1:1: suppliers import each other in a cycle.*\[LW_SUPPLIER_CYCLE\]/);
    has(/^🖥missing\.js:1:\d+: .*no supplier in scope exports "Nope"/);
    has(/^🖥outside\.js:1:\d+: .*no supplier in scope exports "Local"/);
    has(/^deep\/🖥notmine\.js:1:\d+: .*no supplier in scope exports "Mine"/);
    has(/^🖥param\.js:1:\d+: .*"id" is not a path parameter/);
    has(/^🖥module\.js:1:\d+: .*there are no models: define one in \/📦\//);
    assert.ok(!lines.some((l) => l.startsWith('deep/🖥mine.js')), 'the endpoint-specific supplier is visible to its endpoint');
  });
});
