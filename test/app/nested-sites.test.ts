/**
 * Nested sites (docs/nested-sites.md): `/🔌store.yaml` mounts another site at
 * `/store/`, its source resolved locally (a path, or a git URL through the sources map); the
 * child's answers are written for the mount (links, form actions, *href attributes,
 * data-base-href, redirects) while its inline scripts stay as hashed; its private files and error
 * views are its own; a child with models keeps its data apart under its `namespace:` (on both
 * engines). Build errors: an unresolved source (naming the flag), a site mounting itself, a child
 * with models and no namespace. Mounts below the root (`/docs/🔌api.yaml` at `/docs/api/`), the
 * child's stylesheets written for the mount (`url(/…)`, `@import '/…'`, in .css, compiled .scss
 * and inlined private stylesheets), `keys:` accepted with a warning. And in Chromium: the mounted
 * page runs with zero CSP violations.
 */
import { after, before, describe, it, test } from 'node:test';
import assert from 'node:assert/strict';
import { checkApp } from '../../src/app/index.js';
import { launch, skip, violationRecordingPage, type Browser, type Page } from '../browser/chromium.js';
import { serve, writeApp, type Served } from '../helpers.js';
import { ENGINES } from '../support/engines.js';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const CHILD = {
  'index.html':
    '<!doctype html>\n<html data-base-href="/"><head><title>Store</title><link rel="stylesheet" href="/css/site.css">' +
    '<script>document.documentElement.dataset.inline = "href=\\"/keep\\"";</script></head>' +
    '<body><a href="/about">About</a> <a href="https://example.com/x">ext</a> <a href="//cdn.example/x">cdn</a> <a href="#top">top</a> <a href="rel">rel</a>' +
    '<form action="/subscribe" method="post"></form><span data-get-href="/items"></span><img alt="" srcset="/a.svg 1x, /b.svg 2x" src="/a.svg"></body></html>\n',
  'about.html': '<!--TEMPLATE mustache-->\n<p>about <a href="/">home</a></p>\n',
  'a.svg': '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 1 1"/>\n',
  'b.svg': '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 2 2"/>\n',
  'css/site.css': 'body { color: #333; }\n',
  '_private.html': '<p>secret</p>\n',
  '⚡NotFound.html': '<!--TEMPLATE mustache-->\n<p>store: not found, <a href="/">home</a></p>\n',
  'go/GET.js': "'/about';\n",
};

declare const window: { __violations: string[] };

describe('nested sites', () => {
  let s: Served;
  before(async () => {
    const child = writeApp(CHILD);
    s = await serve({ 'index.html': '<p>parent</p>\n', '🔌store.yaml': `source: ${child}\n`, '⚡NotFound.html': '<!--TEMPLATE mustache-->\n<p>parent: not found</p>\n' });
  });
  after(() => s.close());

  it('serves the child at /store/ (and /store redirects there, query kept); the parent stays at /', async () => {
    assert.match((await s.get('/')).text, /parent/);
    const bare = await s.get('/store?x=1');
    assert.equal(bare.status, 301);
    assert.equal(bare.headers.location, '/store/?x=1');
    const r = await s.get('/store/');
    assert.equal(r.status, 200);
    assert.match(r.text, /<title>Store<\/title>/);
    assert.match((await s.get('/store/about')).text, /<p>about <a href="\/store\/">home<\/a><\/p>/);
    assert.equal((await s.get('/store/css/site.css')).text, 'body { color: #333; }\n');
  });

  it("writes the child's links for the mount: src, srcset, a form's action, every *href, data-base-href; not other URLs or inline scripts", async () => {
    const t = (await s.get('/store/')).text;
    assert.match(t, /<html data-base-href="\/store\/">/);
    assert.match(t, /<link rel="stylesheet" href="\/store\/css\/site\.[0-9a-f]{8}\.css">/);
    assert.match(t, /<a href="\/store\/about">About<\/a>/);
    assert.match(t, /<a href="https:\/\/example\.com\/x">ext<\/a> <a href="\/\/cdn\.example\/x">cdn<\/a> <a href="#top">top<\/a> <a href="rel">rel<\/a>/);
    assert.match(t, /<form action="\/store\/subscribe" method="post">/);
    assert.match(t, /<span data-get-href="\/store\/items">/);
    assert.match(t, /srcset="\/store\/a\.[0-9a-f]{8}\.svg 1x, \/store\/b\.[0-9a-f]{8}\.svg 2x" src="\/store\/a\.[0-9a-f]{8}\.svg"/);
    assert.match(t, /dataset\.inline = "href=\\"\/keep\\"";/, 'inline script text unchanged');
  });

  it("redirects of the child's scripts, its private files and its own ⚡NotFound.html", async () => {
    const go = await s.get('/store/go');
    assert.equal(go.status, 302);
    assert.equal(go.headers.location, '/store/about');
    for (const p of ['/store/_private', '/store/nope']) {
      const r = await s.get(p);
      assert.equal(r.status, 404, p);
      assert.match(r.text, /store: not found, <a href="\/store\/">home<\/a>/, p);
    }
    assert.match((await s.get('/nope')).text, /parent: not found/);
  });
});

describe("a nested site's properties, with the parent's 🎨: values", () => {
  let s: Served;
  before(async () => {
    const child = writeApp({
      '🎨.scss': "$greeting: 'Hello {0}';\n$show-banner: false;\n$brand-color: #336699;\n$title: 'Shop';\n",
      'index.html': "<!--TEMPLATE mustache-->\n<p>{{🎨.greeting 'you'}}</p>{{#🎨.show-banner}}<p id=\"banner\">sale</p>{{/🎨.show-banner}}<p>{{🎨.brand-color}} {{🎨.title}}</p>\n",
      'api/GET.js': "import * as P from '🎨';\n({greeting: P.greeting('script'), banner: P.showBanner, title: P.title()});\n",
      'css/site.scss': "@import '/🎨';\nbody { color: $brand-color; }\n",
    });
    s = await serve({ '🔌shop.yaml': `source: ${child}\n🎨:\n  greeting: 'Welcome, {0}!'\n  show-banner: true\n  brand-color: aliceblue\n  unknown-one: 1\n` });
  });
  after(() => s.close());

  it('views, scripts and SCSS read the overridden values; the others stay', async () => {
    const page = await s.get('/shop/');
    assert.match(page.text, /<p>Welcome, you!<\/p><p id="banner">sale<\/p><p>aliceblue Shop<\/p>/);
    assert.deepEqual(JSON.parse((await s.get('/shop/api', { accept: 'application/json' })).text), { greeting: 'Welcome, script!', banner: true, title: 'Shop' });
    assert.match((await s.get('/shop/css/site.scss')).text, /color:\s*(aliceblue|#f0f8ff)/);
  });

  it('a name the child does not declare is a warning at the mount file', () => {
    const child = writeApp({ '🎨.scss': "$a: 'x';\n", 'index.html': '<p>x</p>\n' });
    const parent = writeApp({ '🔌shop.yaml': `source: ${child}\n🎨:\n  b: 'y'\n` });
    const w = checkApp(parent).find((d) => d.file === '/🔌shop.yaml');
    assert.equal(w?.severity, 'warning');
    assert.match(w?.message ?? "", /sets "b", which the nested site.s \/🎨\.scss does not declare/);
  });
});

describe('nested sites: build errors', () => {
  it('a git source not in the sources map names the flag; a mapped one loads', () => {
    const child = writeApp({ 'index.html': '<p>x</p>\n' });
    const url = 'https://github.com/example/store.git#!v1.0.0';
    const parent = writeApp({ '🔌store.yaml': `source: ${url}\n` });
    const unmapped = checkApp(parent);
    assert.equal(unmapped[0]?.code, 'LW_APP_NESTED_SITE');
    assert.equal(unmapped[0]?.file, '/🔌store.yaml');
    assert.equal(unmapped[0]?.line, 1);
    assert.match(unmapped[0]!.message, /not in the local sources map: Laneway never fetches code; add --source https:\/\/github\.com\/example\/store\.git#!v1\.0\.0=DIR/);
    assert.deepEqual(checkApp(parent, { sources: { [url]: child } }).filter((d) => d.severity === 'error'), []);
  });

  it("a site mounting itself, a child with models, a malformed mount; the child's own errors at its files", () => {
    const self = writeApp({ 'index.html': '<p>x</p>\n', '🔌again.yaml': 'source: .\n' });
    assert.match(checkApp(self).map((d) => d.message).join('\n'), /already being mounted/);
    const withModels = writeApp({ '📦/🌐Task.yaml': 'title: string\n' });
    const p1 = writeApp({ '🔌tasks.yaml': `source: ${withModels}\n` });
    assert.match(checkApp(p1).map((d) => d.message).join('\n'), /stores data \(\/📦\/\): give it `namespace:`/);
    const p4 = writeApp({ '🔌tasks.yaml': `source: ${withModels}\nnamespace: ab\n` });
    assert.match(checkApp(p4).map((d) => d.message).join('\n'), /`namespace:` takes 4 to 25 lowercase letters/);
    const p5 = writeApp({ '🔌a.yaml': `source: ${withModels}\nnamespace: same-ns\n`, '🔌b.yaml': `source: ${withModels}\nnamespace: same-ns\n` });
    assert.match(checkApp(p5).map((d) => d.message).join('\n'), /the namespace "same-ns" is used by another nested site/);
    const p2 = writeApp({ '🔌x.yaml': 'src: here\n' });
    assert.match(checkApp(p2).map((d) => d.message).join('\n'), /unknown key "src"[\s\S]*needs `source:`/);
    const broken = writeApp({ 'page.html': '<!--TEMPLATE mustache-->\n{{#open}}\n' });
    const p3 = writeApp({ '🔌shop.yaml': `source: ${broken}\n` });
    const d = checkApp(p3).find((x) => x.severity === 'error');
    assert.ok(d && d.file.endsWith('page.html') && d.message.startsWith('(nested site /shop/)'), JSON.stringify(d));
  });
});

/** A child whose stylesheets name root-absolute URLs. */
const STYLED_CHILD = {
  ...CHILD,
  'index.html':
    '<!doctype html>\n<html data-base-href="/"><head><title>API</title><link rel="stylesheet" href="/css/site.css"><link rel="stylesheet" href="/_inline.css"></head>' +
    '<body><a href="/about">About</a></body></html>\n',
  'css/site.css':
    "@import '/css/base.css';\n@import url(\"/css/print.css\") print;\n/* url(/comment) */\nbody { background: url(/img/a.svg) no-repeat; }\n" +
    "@font-face { font-family: f; src: url('/fonts/f.woff2') format('woff2'); }\n" +
    "a { background: url(//cdn.example/x.png), url(https://example.com/y.png), url(rel.png), url(data:image/png;base64,AA==); content: 'url(/text)'; }\n",
  'css/base.css': 'p { margin: 0; }\n',
  'css/print.css': 'p { color: black; }\n',
  'css/theme.scss': '$icon: "/img/b.svg";\n.x { background: url($icon); }\n.y { background-image: url(/img/a.svg); }\n',
  '_inline.css': 'h1 { background: url(/img/a.svg); }\n',
  'img/a.svg': '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 1 1"/>\n',
  'img/b.svg': '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 2 2"/>\n',
};

describe('a nested site mounted below the root: /docs/🔌api.yaml at /docs/api/', () => {
  let s: Served;
  before(async () => {
    const child = writeApp(STYLED_CHILD);
    s = await serve({
      'index.html': '<p>parent</p>\n',
      'docs/index.html': '<p>parent docs</p>\n',
      'docs/guide.html': '<p>parent guide</p>\n',
      'docs/apis.html': '<p>parent apis</p>\n',
      'docs/🔌api.yaml': `source: ${child}\n`,
    });
  });
  after(() => s.close());

  it("serves the child at /docs/api/ (/docs/api → 301, query kept); the parent's /docs/ routes keep answering", async () => {
    const bare = await s.get('/docs/api?x=1');
    assert.equal(bare.status, 301);
    assert.equal(bare.headers.location, '/docs/api/?x=1');
    const r = await s.get('/docs/api/');
    assert.equal(r.status, 200);
    assert.match(r.text, /<title>API<\/title>/);
    assert.match((await s.get('/docs/')).text, /parent docs/);
    assert.match((await s.get('/docs/guide')).text, /parent guide/);
    assert.match((await s.get('/docs/apis')).text, /parent apis/, 'a name that only starts like the mount');
    const docs = await s.get('/docs');
    assert.equal(docs.status, 308);
    assert.equal(docs.headers.location, '/docs/');
  });

  it("writes the child's links, redirects and error pages with the full prefix /docs/api", async () => {
    const t = (await s.get('/docs/api/')).text;
    assert.match(t, /<html data-base-href="\/docs\/api\/">/);
    assert.match(t, /<a href="\/docs\/api\/about">About<\/a>/);
    assert.match(t, /<link rel="stylesheet" href="\/docs\/api\/css\/site\.[0-9a-f]{8}\.css">/);
    assert.match((await s.get('/docs/api/about')).text, /<a href="\/docs\/api\/">home<\/a>/);
    const go = await s.get('/docs/api/go');
    assert.equal(go.status, 302);
    assert.equal(go.headers.location, '/docs/api/about');
    const missing = await s.get('/docs/api/nope');
    assert.equal(missing.status, 404);
    assert.match(missing.text, /store: not found, <a href="\/docs\/api\/">home<\/a>/);
    assert.equal((await s.get('/docs/api/_private')).status, 404);
  });

  it("writes root-absolute url(…) and @import of the child's .css for the mount; other URLs, comments and strings stay", async () => {
    const css = await s.get('/docs/api/css/site.css');
    assert.equal(css.status, 200);
    assert.match(css.headers['content-type'] as string, /^text\/css/);
    assert.equal(
      css.text,
      "@import '/docs/api/css/base.css';\n@import url(\"/docs/api/css/print.css\") print;\n/* url(/comment) */\nbody { background: url(/docs/api/img/a.svg) no-repeat; }\n" +
        "@font-face { font-family: f; src: url('/docs/api/fonts/f.woff2') format('woff2'); }\n" +
        "a { background: url(//cdn.example/x.png), url(https://example.com/y.png), url(rel.png), url(data:image/png;base64,AA==); content: 'url(/text)'; }\n",
    );
    // The same bytes at the fingerprinted URL the page links to, whose hash is that of the bytes served.
    const href = /href="(\/docs\/api\/css\/site\.([0-9a-f]{8})\.css)"/.exec((await s.get('/docs/api/')).text)!;
    const fingerprinted = await s.get(href[1]!);
    assert.equal(fingerprinted.status, 200);
    assert.equal(fingerprinted.text, css.text);
    assert.equal(createHash('sha256').update(fingerprinted.body).digest('hex').slice(0, 8), href[2]);
    // Made once at load: the same validator on every request.
    assert.equal((await s.get('/docs/api/css/site.css')).headers.etag, css.headers.etag);
  });

  it('compiled .scss and an inlined private stylesheet are written for the mount too (the inline one before its hash)', async () => {
    const scss = (await s.get('/docs/api/css/theme.scss')).text;
    assert.match(scss, /url\("?\/docs\/api\/img\/b\.svg"?\)/);
    assert.match(scss, /url\("?\/docs\/api\/img\/a\.svg"?\)/);
    const page = await s.get('/docs/api/');
    const style = /<style>([\s\S]*?)<\/style>/.exec(page.text);
    assert.ok(style, page.text);
    assert.equal(style[1], 'h1 { background: url(/docs/api/img/a.svg); }\n');
    const hash = createHash('sha256').update(style[1]!).digest('base64');
    assert.ok((page.headers['content-security-policy'] as string).includes(`'sha256-${hash}'`), page.headers['content-security-policy'] as string);
  });
});

describe('mounts below the root: build errors', () => {
  const child = writeApp({ 'index.html': '<p>child</p>\n' });
  const errors = (files: Record<string, string>) =>
    checkApp(writeApp(files))
      .filter((d) => d.severity === 'error')
      .map((d) => `${d.file}: ${d.message}`);

  it("a parent route at the mount's path, or under it, is an error at the mount file naming the parent's files", () => {
    const e = errors({ 'docs/🔌api.yaml': `source: ${child}\n`, 'docs/api.html': '<p>x</p>\n', 'docs/api/x.css': 'p{}\n', 'docs/other.html': '<p>y</p>\n' });
    assert.equal(e.length, 1, e.join('\n'));
    assert.match(e[0]!, /^\/docs\/🔌api\.yaml: the nested site mounted at \/docs\/api\/ answers every URL under it and \/docs\/api itself, but this site's own files answer some of them: \/docs\/api\.html \(GET \/docs\/api\), \/docs\/api\/x\.css \(GET \/docs\/api\/x\.css\)/);
    // At the root too: /store.html would never be reached.
    const root = errors({ '🔌store.yaml': `source: ${child}\n`, 'store.html': '<p>x</p>\n' });
    assert.match(root.join('\n'), /^\/🔌store\.yaml: the nested site mounted at \/store\/ [^\n]*\/store\.html \(GET \/store\)/);
  });

  it('a dynamic parent route beside the mount is fine; a mount in a private or dynamic directory, or inside another mount, is an error', () => {
    assert.deepEqual(errors({ 'docs/🔌api.yaml': `source: ${child}\n`, 'docs/{page}.html': '<p>x</p>\n', 'docs/{page}🔗.yaml': 'values: [intro]\n' }), []);
    assert.match(errors({ '_drafts/🔌api.yaml': `source: ${child}\n` }).join('\n'), /🔌api\.yaml cannot mount a site at \/_drafts\/api\/: \/_drafts\/ is a private directory/);
    assert.match(
      errors({ 'items/{item}/🔌api.yaml': `source: ${child}\n`, 'items/{item}/🔗.yaml': 'values: [a]\n' }).join('\n'),
      /cannot mount a site at \/items\/\{item\}\/api\/: the directory \{item\} is dynamic/,
    );
    assert.match(
      errors({ '🔌docs.yaml': `source: ${child}\n`, 'docs/🔌api.yaml': `source: ${child}\n` }).join('\n'),
      /\/docs\/🔌api\.yaml: \/docs\/api\/ is inside the nested site \/docs\/ \(\/🔌docs\.yaml\)/,
    );
  });
});

describe('keys: in a mount file', () => {
  let s: Served;
  before(async () => {
    const child = writeApp({ 'index.html': '<p>shop</p>\n' });
    s = await serve({ '🔌shop.yaml': `source: ${child}\nkeys:\n  - api:stripe.com\n` });
  });
  after(() => s.close());

  it('is accepted with a warning at its line saying it has no effect until REST connectors exist; the site serves', async () => {
    const w = checkApp(s.dir).filter((d) => d.file === '/🔌shop.yaml');
    assert.equal(w.length, 1);
    assert.equal(w[0]!.severity, 'warning');
    assert.equal(w[0]!.code, 'LW_APP_NESTED_SITE');
    assert.equal(w[0]!.line, 2);
    assert.match(w[0]!.message, /`keys:` has no effect yet: it lends credentials to the REST connectors of the nested site, which Laneway does not support yet/);
    const r = await s.get('/shop/');
    assert.equal(r.status, 200);
    assert.match(r.text, /shop/);
  });
});

for (const engine of ENGINES) {
  describe(`a nested site with models on ${engine.name}`, () => {
    let s: Served;
    let dataDir: string;
    before(async () => {
      const tasks = {
        '📦/🌐Task.yaml': 'title: string\n',
        'tasks/POST.js': "import {Task} from '📦';\nimport {title} from 'form';\nnew Task().title(title);\n'/tasks';\n",
        'tasks/GET.js': "import {Task} from '📦';\nTask.all().map((t) => t.title);\n",
      };
      const child = writeApp(tasks);
      dataDir = mkdtempSync(join(tmpdir(), 'laneway-nested-data-'));
      // The parent has a model of the same name: the namespace keeps the two apart.
      s = await serve({ ...tasks, '🔌team.yaml': `source: ${child}\nnamespace: team-tasks\n` }, { data: { ...(await engine.data()), dataDir } });
    });
    after(() => s.close());

    it("keeps the child's records apart from the parent's; redirects are written for the mount", async () => {
      const form = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
      const made = await s.request('POST', '/team/tasks', { 'content-type': 'application/x-www-form-urlencoded' }, 'title=child+task');
      assert.equal(made.status, 302);
      assert.equal(made.headers.location, '/team/tasks');
      assert.equal((await s.request('POST', '/tasks', form, 'title=parent+task')).status, 302);
      assert.deepEqual(JSON.parse((await s.get('/team/tasks', { accept: 'application/json' })).text), ['child task']);
      assert.deepEqual(JSON.parse((await s.get('/tasks', { accept: 'application/json' })).text), ['parent task']);
      if (engine.name === 'sqlite') assert.ok(existsSync(join(dataDir, 'laneway.team-tasks.db')), 'the child has its own SQLite file');
    });
  });
}

describe('a nested site in Chromium', { skip }, () => {
  let s: Served;
  let browser: Browser;
  let page: Page;

  before(async () => {
    const child = writeApp(CHILD);
    s = await serve({ 'index.html': '<p>parent</p>\n', '🔌store.yaml': `source: ${child}\n` });
    browser = await launch();
    page = await violationRecordingPage(browser);
  });
  after(async () => {
    await browser?.close();
    await s?.close();
  });

  test("the mounted page's inline script runs and its stylesheet loads, with zero CSP violations", async () => {
    const res = await page.goto(s.url + '/store/', { waitUntil: 'load' });
    await page.evaluate(() => new Promise((r) => setTimeout(r, 30)));
    assert.equal(res?.status(), 200);
    assert.deepEqual(await page.evaluate(() => window.__violations), []);
    assert.equal(await page.evaluate(() => (globalThis as unknown as { document: { documentElement: { dataset: Record<string, string> } } }).document.documentElement.dataset.inline), 'href="/keep"');
  });
});
