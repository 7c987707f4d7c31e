/**
 * Nested sites (docs/nested-sites.md "Base URLs"): a 📌 file (or any asset) named in a `content`
 * attribute of the child (`<meta property="og:image" content="/images/📌card.png">`) is written
 * for the mount, and served there; and the child's problems, when its source lies outside the
 * parent's directory, are printed at their paths on disk, starting with `/`.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { checkApp } from '../../src/app/index.js';
import { formatDiagnostic } from '../../src/diag/index.js';
import { serve, writeApp, type Served } from '../helpers.js';

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);

describe('a nested site', () => {
  let s: Served;
  let child: string;
  before(async () => {
    child = writeApp({
      'index.html': '<!--TEMPLATE mustache-->\n<!doctype html><html><head><title>Docs</title><meta name="image" property="og:image" content="/images/social/📌logo.png"><meta name="description" content="Docs of the lantern"></head><body><img alt="" src="/images/social/📌logo.png"></body></html>\n',
      'plain.html': '<!doctype html><html><head><title>P</title><meta property="og:image" content="/images/social/📌logo.png"></head><body></body></html>\n',
      'images/social/📌logo.png': PNG,
    });
    s = await serve({ 'index.html': '<p>parent</p>\n', '🔌docs.yaml': `source: ${child}\n` });
  });
  after(() => s.close());

  it("writes a pinned URL in content= for the mount, as in src= (views and plain pages), absolute, and serves it there", async () => {
    const view = (await s.get('/docs/')).text;
    const url = `${s.url}/docs/images/social/logo.png`;
    assert.ok(view.includes(`<meta name="image" property="og:image" content="${url}">`), view);
    assert.match(view, /<meta name="description" content="Docs of the lantern">/, 'other content= is text, left alone');
    assert.ok(view.includes(`<img alt="" src="${url}">`), view);
    assert.ok((await s.get('/docs/plain')).text.includes(`<meta property="og:image" content="${url}">`));
    assert.ok((await s.get('/docs/plain', { host: 'a.example.test' })).text.includes('<meta property="og:image" content="http://a.example.test/docs/images/social/logo.png">'));
    const png = await s.get('/docs/images/social/logo.png');
    assert.equal(png.status, 200);
  });

  it('outside the parent directory, its problems are printed at their paths on disk, with the leading /', () => {
    const broken = writeApp({ 'page.html': '<!--TEMPLATE mustache-->\n{{#open}}\n' });
    const parent = writeApp({ '🔌shop.yaml': `source: ${broken}\n` });
    const lines = checkApp(parent).filter((d) => d.severity === 'error').map(formatDiagnostic);
    assert.equal(lines.length, 1, lines.join('\n'));
    assert.ok(lines[0]!.startsWith(`${broken}/page.html:2:1: (nested site /shop/) `), lines[0]);
    assert.ok(broken.startsWith('/'));
  });

  it('inside the parent directory, they are app paths, as the parent\'s own', () => {
    const parent = writeApp({ '🔌shop.yaml': 'source: ./shop\n', 'shop/page.html': '<!--TEMPLATE mustache-->\n{{#open}}\n' });
    const lines = checkApp(parent).filter((d) => d.severity === 'error').map(formatDiagnostic);
    assert.ok(lines.some((l) => l.startsWith('shop/page.html:2:1: (nested site /shop/) ')), lines.join('\n'));
  });
});
