/**
 * A content site end to end (docs/content.md): test/fixtures/content-site is a small handbook
 * shaped like the platform's documentation sites — static models with Markdown documents, a
 * root `{guide}.html` page per document (multi-segment path uids), a `{{% yaml %}}` menu, two
 * levels of layouts, const/default, Request.url, a 📌 asset in `content=`, a private script
 * inlined, two ⚡NotFound.html views (the nearest wins), a legacy uid, and a list by document
 * date. Every page is checked over HTTP (status, content) and in headless Chromium (its inline
 * blocks run, zero CSP violations).
 */
import { after, before, describe, it, test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { launch, skip, violationRecordingPage, type Browser, type Page } from '../browser/chromium.js';
import { serve, type Served } from '../helpers.js';

const SITE = fileURLToPath(new URL('../fixtures/content-site', import.meta.url));

declare const window: { __violations: string[] };
declare const document: { documentElement: { dataset: Record<string, string> }; title: string };

describe('a content site over HTTP', () => {
  let s: Served;
  before(async () => {
    s = await serve(SITE);
  });
  after(() => s.close());

  it('the home page lists the guides (menu from YAML and from the static model) and the notes by date, newest first', async () => {
    const r = await s.get('/');
    assert.equal(r.status, 200);
    assert.match(r.text, /<title>Lantern Handbook · Lantern<\/title>/, 'default title');
    assert.match(r.text, /<li class="menu-label">Getting started<\/li>\s*<li class="menu-label">Going further<\/li>/);
    assert.match(r.text, /<a href="\/basics\/lighting">Lighting the lantern<\/a><\/li>\s*<li><a href="\/advanced\/carrying">Carrying it around<\/a>/);
    assert.match(r.text, /<time>2024-02-14<\/time> <p>A chapter on <strong>carrying<\/strong> the lantern.<\/p>\s*<\/li>\s*<li><time>2023-11-05<\/time>/);
    assert.ok(r.text.includes(`<meta property="og:image" content="${s.url}/images/lantern.svg">`), 'the pinned asset, pin removed, absolute');
    // The page is kept for every visitor (a content page): the origin is written per answer.
    assert.ok((await s.get('/', { host: 'docs.example.test' })).text.includes('<meta property="og:image" content="http://docs.example.test/images/lantern.svg">'));
    assert.ok((await s.get('/')).text.includes(`<meta property="og:image" content="${s.url}/images/lantern.svg">`));
    assert.match(r.text, /<script>document.documentElement.dataset.menu = 'ready';\n<\/script>/, 'the private script, inlined');
    assert.match(r.text, new RegExp(`<body data-url="${s.url.replace(/[.]/g, '\\.')}/">`), 'Request.url');
  });

  it('a guide page per document, at its path uid (two segments), with its fields and rendered body', async () => {
    const r = await s.get('/basics/lighting');
    assert.equal(r.status, 200);
    assert.match(r.text, /<title>Lighting the lantern · Lantern<\/title>/, 'const title from the document');
    assert.match(r.text, /<h1 id="guide-title">Lighting the lantern<\/h1>\s*<p class="summary">Wick, oil and a steady hand.<\/p>/);
    // sections(), then html(options) over the field's render: options (ids, typography).
    assert.match(r.text, /<ol class="toc">\s*<li><a href="#before">Before you start<\/a><\/li>\s*<\/ol>/);
    assert.match(r.text, /<h2 id="before" class="title is-size-4">Before you start<\/h2>/, '{#id}, minimumHeaderLevel=2, h2 classes');
    assert.match(r.text, /<h3 id="the-flame">The flame<\/h3>/, 'generated id, shifted level');
    assert.match(r.text, /Trim the wick \u2014 a few/, 'typography: -- is an em dash, as the platform documents it');
    assert.match(r.text, /<p class="length">171 characters<\/p>/);
    const c = await s.get('/advanced/carrying');
    assert.equal(c.status, 200);
    assert.match(c.text, /Hold the ring, not the glass/);
    assert.match(c.text, /<li><a href="#balance">Balance<\/a><\/li>\s*<li><a href="#wind">Wind<\/a><\/li>/);
  });

  it('links to other documents become their page URLs at load; a link to nothing is marked missing', async () => {
    const r = await s.get('/basics/lighting');
    assert.match(r.text, /<a href="\/advanced\/carrying#balance">carrying it<\/a>/);
    const c = await s.get('/advanced/carrying');
    assert.match(c.text, /<a class="is-missing-link" href="\/%F0%9F%97%84\/Guide\/gone.md">a page that is gone<\/a>/);
  });

  it('a literal page wins over the parameter; a legacy uid redirects; unknown paths answer the nearest ⚡NotFound.html', async () => {
    const ex = await s.get('/examples');
    assert.equal(ex.status, 200);
    assert.match(ex.text, /A literal page wins/);
    const old = await s.get('/start/lighting');
    assert.equal(old.status, 301);
    assert.equal(old.headers.location, '/basics/lighting');
    const missing = await s.get('/basics/nothing');
    assert.equal(missing.status, 404);
    assert.match(missing.text, /No such page in the handbook/);
    const site = await s.get('/site/nothing');
    assert.equal(site.status, 404);
    assert.match(site.text, /No such site/, 'the nearer ⚡NotFound.html');
  });

  it('documents and definitions are never served', async () => {
    for (const p of ['/%F0%9F%97%84/Guide/basics/lighting.md', '/%F0%9F%97%84/%F0%9F%93%84Guide.yaml', '/_nav/menu-items.yaml', '/js/_menu.js']) {
      assert.equal((await s.get(p)).status, 404, p);
    }
  });
});

describe('a content site in Chromium', { skip }, () => {
  let s: Served;
  let browser: Browser;
  let page: Page;
  before(async () => {
    s = await serve(SITE);
    browser = await launch();
    page = await violationRecordingPage(browser);
  });
  after(async () => {
    await browser?.close();
    await s?.close();
  });

  test('every page runs its inline blocks with zero CSP violations', async () => {
    const pages: Array<[string, number, string]> = [
      ['/', 200, 'Lantern Handbook · Lantern'],
      ['/basics/lighting', 200, 'Lighting the lantern · Lantern'],
      ['/advanced/carrying', 200, 'Carrying it around · Lantern'],
      ['/examples', 200, 'Examples · Lantern'],
      ['/start/lighting', 200, 'Lighting the lantern · Lantern'],
      ['/basics/nothing', 404, 'Not found · Lantern'],
    ];
    for (const [path, status, title] of pages) {
      const res = await page.goto(s.url + path, { waitUntil: 'load' });
      await page.evaluate(() => new Promise((r) => setTimeout(r, 30)));
      const got = await page.evaluate(() => ({ violations: window.__violations, menu: document.documentElement.dataset.menu, title: document.title }));
      assert.equal(res?.status(), status, path);
      assert.deepEqual(got.violations, [], path);
      assert.equal(got.menu, 'ready', `${path}: the inlined private script ran`);
      assert.equal(got.title, title, path);
    }
    await page.goto(s.url + '/', { waitUntil: 'load' });
    assert.equal(await page.evaluate(() => document.documentElement.dataset.home), 'ran');
  });
});
