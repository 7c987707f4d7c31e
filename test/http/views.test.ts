/** Mustache views over HTTP: rendering, layouts, suppliers, HTML suppliers, Render-If, errors. */
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { checkApp } from '../../src/app/index.js';
import { formatDiagnostic } from '../../src/diag/index.js';
import { serve, writeApp, type Served } from '../helpers.js';

const M = '<!--TEMPLATE mustache-->\n';

describe('views', () => {
  let s: Served;
  const logged: Array<Record<string, unknown>> = [];
  before(async () => {
    s = await serve(
      {
        '/_layout.html': `${M}{{% default title = 'Default title' }}<html><head><title>{{title}}</title></head><body>{{$main}}empty{{/main}}</body></html>\n`,
        '/index.html': `${M}{{% partial /_layout }}\n{{% const title = 'Home' }}\n{{<layout}}{{$main}}<h1>Hello</h1>{{/main}}{{/layout}}\n`,
        '/plain.html': '<p>{{not mustache}}</p>\n',
        '/📤/Site.js': `const Name = 'Laneway & co'\nconst Items = ['a', 'b', 'c']\nconst Show = false\nconst Secs = 120\nconst Html = '<b>bold</b>'\nexport {Name, Items, Show, Secs, Html}`,
        '/📤/Badge.html': `${M}<span class="badge">{{this.label}}{{#this.n}} ({{.}}){{/this.n}}</span>`,
        '/supplied.html': `${M}{{% import {Name, Items, Badge, Html} from '📤' }}\n<p>{{Name}}</p>\n<ul>{{#Items as i}}<li>{{i}}{{#i$first}}*{{/i$first}}</li>{{/Items}}</ul>\n{{{Badge label='new' n=3}}}\n{{{Html}}}\n`,
        '/fragment.html': `${M}{{% import {Show} from '📤' }}\n{{% Render-If Show }}\n<p>never</p>\n`,
        '/cached.html': `${M}{{% import {Secs} from '📤' }}\n{{% Cache-Control-Seconds Secs }}\n<p>cached</p>\n`,
        '/literal-cache.html': `${M}{{% Cache-Control-Seconds 30 }}\n<p>cached</p>\n`,
        '/📤/{}Boom.js': `const boom = () => { throw 'kaboom' }\nexport {boom}`,
        '/broken.html': `${M}{{% import {boom} from '📤' }}\n<p>before</p>{{boom}}<p>after</p>\n`,
        '/🖥badge.js': `import {Badge} from '📤';\n({ html: Badge({ label: 'x<y' }) })`,
        '/pin/📤/📌page.js': `const Only = 'pinned value'\nexport {Only}`,
        '/pin/page.html': `${M}{{% import {Only} from '📤' }}<p>{{Only}}</p>\n`,
        '/⚡NotFound.html': `${M}{{% partial /_layout }}\n{{% const title = 'Lost' }}\n{{<layout}}{{$main}}<p>custom not found</p>{{/main}}{{/layout}}\n`,
      },
      { log: (message, fields) => logged.push({ message, ...fields }) },
    );
  });
  after(() => s.close());

  test('a view renders with its layout, as text/html; charset=utf-8, without the marker line', async () => {
    const r = await s.get('/');
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal(r.text, '<html><head><title>Home</title></head><body><h1>Hello</h1></body></html>\n');
    assert.equal(r.headers['cache-control'], 'no-cache');
    assert.ok(r.headers.etag);
    assert.equal((await s.get('/', { 'if-none-match': r.headers.etag! })).status, 304);
    const head = await s.request('HEAD', '/');
    assert.equal(head.status, 200);
    assert.equal(head.body.length, 0);
    assert.equal((await s.request('POST', '/')).status, 405);
  });

  test('an .html without the marker is served untouched', async () => {
    assert.equal((await s.get('/plain')).text, '<p>{{not mustache}}</p>\n');
  });

  test('supplier values, iteration with as and $first, HTML suppliers with k=v, escaping', async () => {
    const r = await s.get('/supplied');
    assert.equal(
      r.text,
      '<p>Laneway &amp; co</p>\n<ul><li>a*</li><li>b</li><li>c</li></ul>\n<span class="badge">new (3)</span>\n&lt;b&gt;bold&lt;/b&gt;\n',
    );
  });

  test('an HTML supplier called from a script gives its HTML (escaped inside)', async () => {
    const r = await s.get('/badge');
    assert.deepEqual(JSON.parse(r.text), { html: '<span class="badge">x&lt;y</span>' });
  });

  test('Render-If falsy: 200 with a 0-byte body', async () => {
    const r = await s.get('/fragment');
    assert.equal(r.status, 200);
    assert.equal(r.body.length, 0);
    assert.equal(r.headers['content-length'], '0');
  });

  test('Cache-Control-Seconds sets max-age, from a literal or a supplier value', async () => {
    assert.equal((await s.get('/cached')).headers['cache-control'], 'max-age=120');
    assert.equal((await s.get('/literal-cache')).headers['cache-control'], 'max-age=30');
  });

  test('a pinned supplier is the only source of its view', async () => {
    assert.equal((await s.get('/pin/page')).text, '<p>pinned value</p>\n');
  });

  test('a run-time error answers 500 (never the page cut off) and is logged with file and line; no details in production', async () => {
    const r = await s.get('/broken');
    assert.equal(r.status, 500);
    assert.doesNotMatch(r.text, /before|after|⚠️|<pre>/);
    const entry = logged.find((l) => l.file === '/broken.html');
    assert.ok(entry, JSON.stringify(logged));
    assert.equal(entry.line, 3);
  });

  test('⚡NotFound.html may be a Mustache view with a layout', async () => {
    const r = await s.get('/missing/page');
    assert.equal(r.status, 404);
    assert.equal(r.text, '<html><head><title>Lost</title></head><body><p>custom not found</p></body></html>\n');
  });
});

test('in development mode the error page of a render error shows where it failed, escaped', async () => {
  const s = await serve({ '/x.html': `${M}{{% import {boom} from '📤' }}a{{boom}}z`, '/📤/{}A.js': "const boom = () => { throw 'kaboom --> <script>' }\nexport {boom}" }, { dev: true, log: () => {} });
  const r = await s.get('/x');
  assert.equal(r.status, 500);
  assert.match(r.text, /<pre>\/x\.html:2:\d+: /);
  assert.doesNotMatch(r.text, /<script>/);
  await s.close();
});

test('view build errors are reported with file:line:column, all in one run', () => {
  const dir = writeApp({
    '/a.html': `${M}{{% partial /_nope }}\n{{> ghost}}\n`,
    '/b.html': `${M}{{#open}}\n`,
    '/c.html': `${M}{{% import {Missing} from '📤' }}\n`,
    '/d.html': `${M}{{#list by 11 as g}}{{/list}}\n`,
    '/pin/📤/📌e.js': `const Only = 1\nexport {Only}`,
    '/pin/📤/Other.js': `const Other = 1\nexport {Other}`,
    '/pin/e.html': `${M}{{% import {Other} from '📤' }}\n`,
  });
  const lines = checkApp(dir).filter((d) => d.severity === 'error').map(formatDiagnostic);
  const has = (re: RegExp) => assert.ok(lines.some((l) => re.test(l)), `missing ${re} in:\n${lines.join('\n')}`);
  has(/^a\.html:2:\d+: .*\[LW_VIEW_MISSING_FILE\]/);
  has(/^b\.html:2:\d+: .*\[LW_VIEW_UNCLOSED_SECTION\]/);
  // A name no supplier of the app exports: the page answers 501 and the rest serves (docs/status.md "What degrades").
  const warnings = checkApp(dir).filter((d) => d.severity === 'warning').map(formatDiagnostic);
  assert.ok(warnings.some((l) => /^c\.html:2:\d+: warning: .*no supplier in scope exports "Missing".*501.*\[LW_APP_NOT_AVAILABLE\]/.test(l)), warnings.join('\n'));
  has(/^d\.html:2:\d+: .*\[LW_VIEW_BY_RANGE\]/);
  has(/^pin\/e\.html:2:\d+: .*"Other".*\[LW_VIEW_IMPORT\]/);
});
