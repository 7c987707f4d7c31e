/**
 * Black-box routing tests: a real server on 127.0.0.1, port 0, answering the file → URL rules of
 * docs/routing.md, with every status code the router chooses.
 */
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { serve, type Served } from '../helpers.js';

const page = (text: string) => `<!doctype html><title>${text}</title><p>${text}</p>\n`;

describe('routing', () => {
  let s: Served;
  before(async () => {
    s = await serve({
      '/index.html': page('root index'),
      '/about.html': page('about page'),
      '/docs/index.html': page('docs index'),
      '/docs/guide.html': page('docs guide'),
      '/docs/deep/index.html': page('deep index'),
      '/api/GET.js': `({ file: '/api/GET.js' })`,
      '/api/POST.js': `({ file: '/api/POST.js' })`,
      '/api/PUT.js': `({ file: '/api/PUT.js' })`,
      '/api/DELETE.js': `({ file: '/api/DELETE.js' })`,
      '/api/🖥list.js': `({ file: '/api/🖥list.js' })`,
      '/api/📮create.js': `({ file: '/api/📮create.js' })`,
      '/api/❌remove.js': `({ file: '/api/❌remove.js' })`,
      '/api/🖥index.js': `({ file: '/api/🖥index.js' })`,
      '/📮root-post.js': `({ file: '/📮root-post.js' })`,
      '/items/{item}/🔗.yaml': 'values: [one, two-too]\n',
      '/items/{item}/index.html': page('item index'),
      '/items/{item}/detail.html': page('item detail'),
      '/items/{item}/GET.js': `({ file: '/items/{item}/GET.js' })`,
      '/items/special/index.html': page('literal special'),
      '/tags/{tag}.html': page('tag page'),
      '/tags/{tag}🔗.yaml': 'values: [anything, other]\n',
      '/tags/popular.html': page('popular tags'),
      '/both/GET.js': `({ file: '/both/GET.js' })`,
      '/both/index.html': page('both index'),
      '/css/site.css': 'body { color: red }\n',
      '/js/app.js': 'console.log("client")\n',
      '/js/GET.txt': 'not a script',
      '/img/📌logo.svg': '<svg xmlns="http://www.w3.org/2000/svg"></svg>',
      '/here/⚡NotFound.html': page('here not found'),
      '/⚡NotFound.html': page('root not found'),
      '/_private.html': page('private'),
      '/.well-known/security.txt': 'Contact: mailto:x@example.com\n',
      '/caf\u00e9.html': page('cafe nfc'),
      '/emoji/⚡️deal.html': page('emoji with vs16'),
    });
  });
  after(() => s.close());

  const expectPage = async (path: string, text: string) => {
    const r = await s.get(path);
    assert.equal(r.status, 200, `${path} → ${r.status}`);
    assert.match(r.text, new RegExp(text));
    assert.equal(r.headers['content-type'], 'text/html; charset=utf-8');
  };

  test('index.html answers / and /dir/', async () => {
    await expectPage('/', 'root index');
    await expectPage('/docs/', 'docs index');
    await expectPage('/docs/deep/', 'deep index');
  });

  test('name.html answers /dir/name, not /dir/name.html nor /dir/name/', async () => {
    await expectPage('/about', 'about page');
    await expectPage('/docs/guide', 'docs guide');
    assert.equal((await s.get('/about.html')).status, 404);
    assert.equal((await s.get('/about/')).status, 404);
  });

  test('GET /dir redirects to /dir/ with 308, keeping the query', async () => {
    const r = await s.get('/docs?x=1&y=%20');
    assert.equal(r.status, 308);
    assert.equal(r.headers.location, '/docs/?x=1&y=%20');
    const deep = await s.get('/docs/deep');
    assert.equal(deep.headers.location, '/docs/deep/');
    const head = await s.request('HEAD', '/docs');
    assert.equal(head.status, 308);
  });

  test('a script owning /dir keeps /dir; the view owns /dir/ (no redirect)', async () => {
    const r = await s.get('/both');
    assert.equal(r.status, 200);
    assert.deepEqual(JSON.parse(r.text), { file: '/both/GET.js' });
    await expectPage('/both/', 'both index');
  });

  test('verb files, emoji names and 🖥index.js answer their method and path', async () => {
    for (const [method, path, file] of [
      ['GET', '/api', '/api/GET.js'],
      ['POST', '/api', '/api/POST.js'],
      ['PUT', '/api', '/api/PUT.js'],
      ['DELETE', '/api', '/api/DELETE.js'],
      ['GET', '/api/list', '/api/🖥list.js'],
      ['POST', '/api/create', '/api/📮create.js'],
      ['DELETE', '/api/remove', '/api/❌remove.js'],
      ['GET', '/api/', '/api/🖥index.js'],
      ['POST', '/root-post', '/📮root-post.js'],
    ] as const) {
      const r = await s.request(method, path);
      assert.equal(r.status, 200, `${method} ${path} → ${r.status}`);
      assert.equal(r.headers['content-type'], 'application/json; charset=utf-8');
      assert.deepEqual(JSON.parse(r.text), { file }, `${method} ${path}`);
    }
  });

  test('wrong verb on an existing path: 405 with Allow', async () => {
    const r = await s.request('POST', '/about');
    assert.equal(r.status, 405);
    assert.equal(r.headers.allow, 'GET, HEAD, OPTIONS');
    const r2 = await s.request('GET', '/api/create');
    assert.equal(r2.status, 405);
    assert.equal(r2.headers.allow, 'POST, OPTIONS');
    const r3 = await s.request('PATCH', '/api');
    assert.equal(r3.status, 405);
    assert.equal(r3.headers.allow, 'GET, HEAD, POST, PUT, DELETE, OPTIONS');
    const r4 = await s.request('PUT', '/docs');
    assert.equal(r4.status, 405, 'the implicit redirect of /docs answers GET only');
    assert.equal(r4.headers.allow, 'GET, HEAD, OPTIONS');
  });

  test('OPTIONS answers 204 with Allow', async () => {
    const r = await s.request('OPTIONS', '/api');
    assert.equal(r.status, 204);
    assert.equal(r.headers.allow, 'GET, HEAD, POST, PUT, DELETE, OPTIONS');
    assert.equal(r.body.length, 0);
    const r2 = await s.request('OPTIONS', '/css/site.css');
    assert.equal(r2.headers.allow, 'GET, HEAD, OPTIONS');
  });

  test('HEAD is answered wherever GET is, without a body', async () => {
    const get = await s.get('/about');
    const head = await s.request('HEAD', '/about');
    assert.equal(head.status, 200);
    assert.equal(head.body.length, 0);
    assert.equal(head.headers['content-length'], get.headers['content-length']);
    assert.equal(head.headers.etag, get.headers.etag);
  });

  test('{param} directories match values from 🔗.yaml; literal names win', async () => {
    await expectPage('/items/one/', 'item index');
    await expectPage('/items/two-too/detail', 'item detail');
    assert.equal((await s.get('/items/three/')).status, 404, 'a value outside values: is not found');
    await expectPage('/items/special/', 'literal special');
    assert.deepEqual(JSON.parse((await s.get('/items/one')).text), { file: '/items/{item}/GET.js' }, 'GET.js in the param dir owns /items/one');
    assert.equal((await s.get('/items/special')).status, 308, 'the literal directory redirects to its index');
  });

  test('{param}.html single-file parameters; literal pages win', async () => {
    await expectPage('/tags/anything', 'tag page');
    await expectPage('/tags/popular', 'popular tags');
    assert.equal((await s.get('/tags/a/b')).status, 404);
  });

  test('client-side .js and other assets are served as-is; 📌 files at the name without the pin', async () => {
    const js = await s.get('/js/app.js');
    assert.equal(js.status, 200);
    assert.equal(js.headers['content-type'], 'text/javascript; charset=utf-8');
    assert.equal(js.text, 'console.log("client")\n');
    const txt = await s.get('/js/GET.txt');
    assert.equal(txt.text, 'not a script');
    const svg = await s.get('/img/logo.svg');
    assert.equal(svg.status, 200);
    assert.equal(svg.headers['content-type'], 'image/svg+xml');
    assert.equal((await s.get('/img/%F0%9F%93%8Clogo.svg')).status, 404);
  });

  test('names are matched after NFC normalisation and without U+FE0F', async () => {
    await expectPage('/caf%C3%A9', 'cafe nfc');
    await expectPage('/cafe%CC%81', 'cafe nfc');
    await expectPage('/emoji/%E2%9A%A1deal', 'emoji with vs16');
    await expectPage('/emoji/%E2%9A%A1%EF%B8%8Fdeal', 'emoji with vs16');
  });

  test('the nearest ⚡NotFound.html answers 404s', async () => {
    const here = await s.get('/here/missing');
    assert.equal(here.status, 404);
    assert.match(here.text, /here not found/);
    const root = await s.get('/nowhere/at/all');
    assert.equal(root.status, 404);
    assert.match(root.text, /root not found/);
    const priv = await s.get('/_private.html');
    assert.equal(priv.status, 404);
    assert.equal(priv.text, root.text, 'a private file answers exactly like a missing one');
  });

  test('404 and 405 answer JSON when Accept prefers it', async () => {
    const r = await s.get('/nowhere', { accept: 'application/json' });
    assert.equal(r.status, 404);
    assert.equal(r.headers['content-type'], 'application/json; charset=utf-8');
    assert.ok(typeof JSON.parse(r.text).error === 'string');
    const r2 = await s.request('DELETE', '/about', { accept: 'application/json, text/html;q=0.5' });
    assert.equal(r2.status, 405);
    assert.ok(JSON.parse(r2.text).error);
    const html = await s.get('/nowhere', { accept: 'text/html, application/json;q=0.9' });
    assert.match(html.headers['content-type'] ?? '', /text\/html/);
  });

  test('malformed paths answer 400', async () => {
    for (const path of ['/a%2fb', '/%2e%2e/x', '/a/%00', '/a\\b', '/a//b', '/%E0%A4%A', '/%c0%ae%c0%ae/']) {
      const r = await s.get(path);
      assert.equal(r.status, 400, `${path} → ${r.status}`);
    }
  });

  test('/.well-known/ is public; other dot-files are not', async () => {
    const r = await s.get('/.well-known/security.txt');
    assert.equal(r.status, 200);
    assert.match(r.text, /Contact/);
  });

  test('every response carries nosniff and a referrer policy', async () => {
    for (const path of ['/', '/css/site.css', '/nowhere', '/docs']) {
      const r = await s.get(path);
      assert.equal(r.headers['x-content-type-options'], 'nosniff');
      assert.equal(r.headers['referrer-policy'], 'strict-origin-when-cross-origin');
    }
  });
});
