/** Static assets: SCSS, fingerprinted URLs, 📌 pins, private inlining, and their Cache-Control. */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { serve, type Served } from '../helpers.js';
import { browserHash, diagnosticsOf, M, parsePolicy } from './helpers.js';

const hash8 = (body: string | Buffer): string => createHash('sha256').update(body).digest('hex').slice(0, 8);
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]);
const codes = (lines: string[]): string[] => lines.map((l) => l.replace(/: [^[]*\[/, ' ['));

describe('SCSS', () => {
  let s: Served;
  before(async () => {
    s = await serve({
      '/🎨.scss': '/** @category style */\n$brand-color: #336699;\n',
      '/lib/_vars.scss': '$gap: 4px;\n',
      '/lib/vars.scss': '$gap: 999px;\n',
      '/lib/_mixins.scss': '@mixin pad { padding: $gap; }\n',
      '/theme.scss': "@import '/🎨';\n@import \"/lib/vars\";\n@import 'lib/mixins';\n\n.card {\n  color: $brand-color;\n  .title { @include pad; }\n}\n",
    });
  });
  after(() => s.close());

  test('a .scss file is served compiled and minified, with root-absolute imports (_name first) and the properties file', async () => {
    const r = await s.get('/theme.scss');
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], 'text/css; charset=utf-8');
    assert.equal(r.headers['cache-control'], 'no-cache');
    assert.equal(r.text, '.card{color:#369}.card .title{padding:4px}');
  });

  test('private partials of stylesheets are never served', async () => {
    assert.equal((await s.get('/lib/_vars.scss')).status, 404);
  });

  test('a Sass error is a build error with the file and line where it is', () => {
    const lines = diagnosticsOf({ '/a.scss': '@import "/_b";\np { color: red; }\n', '/_b.scss': '\n\np { width: $missing; }\n' }, 'LW_ASSET');
    assert.deepEqual(lines, ['_b.scss:3:12: Sass: Undefined variable. (imported by /a.scss) [LW_ASSET_SCSS]']);
  });

  describe('as lenient as the platform\'s compiler', () => {
    const lenient = {
      '/_media.scss': '@mixin tablet { @media screen and (min-width: 769px) { @content; } }\n',
      '/app.scss': [
        "@import 'media';",
        '/* a note on #{$undefined-name} */',
        '.a { color: red; }',
        '@include tablet() {',
        '  padding: 1rem;',
        '  .b { color: blue; }',
        '}',
        "/* a string '#{$x}' inside */",
        '',
      ].join('\n'),
    };
    test('#{} in a /* */ comment and a declaration at the top level of a media mixin compile, each with a warning at its line', () => {
      const lines = diagnosticsOf(lenient, 'LW_ASSET');
      assert.deepEqual(codes(lines), ['app.scss:2:16 [LW_ASSET_SCSS_LENIENT]', 'app.scss:5:3 [LW_ASSET_SCSS_LENIENT]', 'app.scss:8:16 [LW_ASSET_SCSS_LENIENT]']);
      assert.match(lines[1]!, /the declaration "padding: 1rem" stands outside any style rule/);
    });
    test('the stylesheet is served with everything else in it', async () => {
      const served = await serve(lenient);
      try {
        const r = await served.get('/app.scss');
        assert.equal(r.status, 200);
        assert.equal(r.text, '.a{color:red}@media screen and (min-width: 769px){.b{color:blue}}');
      } finally {
        await served.close();
      }
    });
    test('a real mistake outside a comment stays an error', () => {
      const lines = diagnosticsOf({ '/x.scss': '/* fine */\np { width: $missing; }\n' }, 'LW_ASSET');
      assert.deepEqual(codes(lines), ['x.scss:2:12 [LW_ASSET_SCSS]']);
    });
  });
});

describe('fingerprints and pins', () => {
  let s: Served;
  const css = 'p { color: blue; }\n';
  before(async () => {
    s = await serve({
      '/css/site.css': css,
      '/img/a.png': PNG,
      '/img/📌logo.png': PNG,
      '/style.scss': '$c: red; b { color: $c; }',
      '/index.html': `${M}{{% partial /_part }}<link rel="stylesheet" href="/css/site.css"><link rel="stylesheet" href="/style.scss?x=1">\n<img src="img/a.png" srcset="/img/a.png 1x, /img/a.png 2x" alt="">\n<meta property="og:image" content="/img/📌logo.png">\n<a href="/css/site.css#top">css</a><a href="/about">page</a><img src="/img/missing.png" alt="">\n{{> part}}\n`,
      '/_part.html': `${M}<img src="img/a.png" alt=""><img src="/img/a.png" alt="">`,
      '/plain.html': '<link rel="stylesheet" href="css/site.css">\n',
      '/📤/Card.html': `${M}<img alt="{{name}}" src="/img/📌logo.png">`,
      '/sup.html': `${M}{{% import {Card} from '📤' }}<p>{{{Card name='x'}}}</p>\n`,
      '/sup-api/GET.js': "import {Card} from '📤';\n({html: String(Card({name: 'y'}))});\n",
      '/card.html': '<!doctype html><title>Card</title><meta property="og:image" content="/img/📌logo.png"><img alt="" src="/img/📌logo.png?v=2">\n',
    });
  });
  after(() => s.close());

  test('references to the app\'s assets are rewritten to content-hashed URLs', async () => {
    const html = (await s.get('/')).text;
    const png = `/img/a.${hash8(PNG)}.png`;
    assert.ok(html.includes(`href="/css/site.${hash8(css)}.css"`), html);
    assert.ok(html.includes(`href="/style.${hash8('b{color:red}')}.scss?x=1"`), html);
    assert.ok(html.includes(`<img src="${png}" srcset="${png} 1x, ${png} 2x" alt="">`), html);
    assert.ok(html.includes(`<a href="/css/site.${hash8(css)}.css#top">`), html);
    assert.ok(html.includes('<a href="/about">page</a><img src="/img/missing.png" alt="">'), html);
    // In a partial, a relative reference depends on the page that includes it: left alone.
    assert.ok(html.includes(`<img src="img/a.png" alt=""><img src="${png}" alt="">`), html);
    assert.ok((await s.get('/plain')).text.includes(`href="/css/site.${hash8(css)}.css"`));
  });

  test('fingerprinted URLs are cached for a year; original paths revalidate', async () => {
    const fp = await s.get(`/css/site.${hash8(css)}.css`);
    assert.equal(fp.status, 200);
    assert.equal(fp.text, css);
    assert.equal(fp.headers['cache-control'], 'public, max-age=31536000, immutable');
    assert.equal(fp.headers['content-type'], 'text/css; charset=utf-8');
    assert.equal((await s.get('/css/site.css')).headers['cache-control'], 'no-cache');
    const scss = await s.get(`/style.${hash8('b{color:red}')}.scss`);
    assert.equal(scss.text, 'b{color:red}');
    assert.equal(scss.headers['content-type'], 'text/css; charset=utf-8');
    assert.equal((await s.get('/css/site.00000000.css')).status, 404);
  });

  test('a 📌 file is served without the pin for a day, and references to it are unpinned', async () => {
    const r = await s.get('/img/logo.png');
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, PNG);
    assert.equal(r.headers['cache-control'], 'public, max-age=86400');
    assert.equal((await s.get('/img/%F0%9F%93%8Clogo.png')).status, 404);
    assert.ok((await s.get('/')).text.includes(`<meta property="og:image" content="${s.url}/img/logo.png">`));
  });

  test('a reference to a 📌 file is absolute: the origin of the request (its Host, checked), per answer, in views and plain pages', async () => {
    for (const path of ['/', '/card']) {
      const own = (await s.get(path)).text;
      assert.ok(own.includes(`content="${s.url}/img/logo.png"`), own);
      const other = (await s.get(path, { host: 'www.example.test:8080' })).text;
      assert.ok(other.includes('content="http://www.example.test:8080/img/logo.png"'), other);
      // One visitor's Host never reaches another's page (a plain page is kept per origin).
      assert.ok((await s.get(path)).text.includes(`content="${s.url}/img/logo.png"`));
      // A Host that is not a host name is not written into the page.
      const bad = (await s.get(path, { host: 'x.test"><script>alert(1)</script>' })).text;
      assert.ok(bad.includes('content="http://localhost/img/logo.png"'), bad);
      assert.ok(!bad.includes('alert(1)'), bad);
    }
    assert.ok((await s.get('/card')).text.includes(`<img alt="" src="${s.url}/img/logo.png?v=2">`));
  });

  test('an HTML supplier\'s 📌 reference is absolute in the page that calls it, and in the HTML a script gets', async () => {
    const page = await s.get('/sup', { host: 'shop.example.test' });
    assert.ok(page.text.includes('<p><img alt="x" src="http://shop.example.test/img/logo.png"></p>'), page.text);
    const api = await s.get('/sup-api', { host: 'api.example.test', accept: 'application/json' });
    assert.equal(api.status, 200, api.text);
    assert.deepEqual(JSON.parse(api.text), { html: '<img alt="y" src="http://api.example.test/img/logo.png">' });
  });

  test('behind a trusted proxy, the scheme and host the proxy received', async () => {
    const behind = await serve({ '/img/📌logo.png': PNG, '/index.html': `${M}<meta property="og:image" content="/img/📌logo.png">\n` }, { trustProxy: 'loopback' });
    try {
      const r = await behind.get('/', { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'www.example.org' });
      assert.ok(r.text.includes('content="https://www.example.org/img/logo.png"'), r.text);
    } finally {
      await behind.close();
    }
  });
});

describe('private inlining', () => {
  let s: Served;
  const js = "document.documentElement.dataset.inlined = 'yes';\n";
  before(async () => {
    s = await serve({
      '/js/_boot.js': js,
      '/css/_crit.scss': '$w: 2px; main { border: $w solid; }',
      '/css/_print.css': 'p { color: black; }',
      '/index.html': `${M}<script src="/js/_boot.js" defer data-connect-src="https://api.example.com"></script>\n<link rel="stylesheet" href="/css/_crit.scss">\n<link rel="stylesheet" href="css/_print.css" media="print">\n`,
      '/plain.html': '<script src="/js/_boot.js"></script>\n',
    });
  });
  after(() => s.close());

  test('a private script or stylesheet is inlined, compiled when SCSS, and its hash is in the policy', async () => {
    const r = await s.get('/');
    assert.equal(
      r.text,
      `<script data-connect-src="https://api.example.com">${js}</script>\n<style>main{border:2px solid}</style>\n<style media="print">p { color: black; }</style>\n`,
    );
    const p = parsePolicy(r.headers['content-security-policy']);
    assert.deepEqual(p.get('script-src'), [browserHash(js)]);
    assert.deepEqual(p.get('style-src'), [browserHash('p { color: black; }'), browserHash('main{border:2px solid}')].sort());
    assert.deepEqual(p.get('connect-src'), ["'self'", 'https://api.example.com']);
  });

  test('plain pages inline too; the private files themselves are never served', async () => {
    const r = await s.get('/plain');
    assert.equal(r.text, `<script>${js}</script>\n`);
    assert.deepEqual(parsePolicy(r.headers['content-security-policy']).get('script-src'), [browserHash(js)]);
    assert.equal((await s.get('/js/_boot.js')).status, 404);
  });

  test('missing, unsafe and non-asset private files are build errors', () => {
    const lines = diagnosticsOf(
      {
        '/_bad.js': 'var s = "</script><script>evil()";\n',
        '/📤/Secret.js': 'const S = 1\nexport {S}',
        '/index.html': `${M}<script src="/_nope.js"></script>\n<script src="/_bad.js"></script>\n<script src="/📤/Secret.js"></script>\n<script src="/{{x}}/_y.js"></script>\n`,
      },
      'LW_ASSET',
    );
    assert.deepEqual(codes(lines), ['index.html:2:14 [LW_ASSET_INLINE_MISSING]', 'index.html:3:14 [LW_ASSET_INLINE_UNSAFE]', 'index.html:4:14 [LW_ASSET_INLINE_MISSING]']);
  });
});

describe('Cache-Control and common headers', () => {
  let s: Served;
  before(async () => {
    s = await serve({
      '/index.html': `${M}<p>home</p>\n`,
      '/seconds.html': `${M}{{% Cache-Control-Seconds 60 }}<p>x</p>\n`,
      '/messages.html': `${M}{{#Messages.all}}{{.}}{{/Messages.all}}<p>x</p>\n`,
      '/messages-seconds.html': `${M}{{% Cache-Control-Seconds 60 }}{{#Messages.all}}{{.}}{{/Messages.all}}<p>x</p>\n`,
      '/🖥data.js': '({ ok: true })',
      '/docs/index.html': `${M}<p>docs</p>\n`,
      '/a.txt': 'text',
    });
  });
  after(() => s.close());

  test('HTML revalidates with an ETag and answers 304', async () => {
    const r = await s.get('/');
    assert.equal(r.headers['cache-control'], 'no-cache');
    assert.ok(r.headers.etag);
    const again = await s.get('/', { 'if-none-match': r.headers.etag as string });
    assert.equal(again.status, 304);
  });

  test('Cache-Control-Seconds, and single-user pages (flash messages)', async () => {
    assert.equal((await s.get('/seconds')).headers['cache-control'], 'max-age=60');
    assert.equal((await s.get('/messages')).headers['cache-control'], 'no-cache, no-store, max-age=0, must-revalidate');
    assert.equal((await s.get('/messages-seconds')).headers['cache-control'], 'max-age=60, private');
  });

  test('JSON revalidates with an ETag', async () => {
    const r = await s.get('/data');
    assert.equal(r.headers['cache-control'], 'no-cache');
    assert.equal((await s.get('/data', { 'if-none-match': r.headers.etag as string })).status, 304);
  });

  test('nosniff and Referrer-Policy on every kind of response', async () => {
    const answers = [await s.get('/'), await s.get('/data'), await s.get('/a.txt'), await s.get('/docs'), await s.get('/missing'), await s.request('OPTIONS', '/'), await s.request('POST', '/')];
    assert.deepEqual(answers.map((r) => r.status), [200, 200, 200, 308, 404, 204, 405]);
    for (const r of answers) {
      assert.equal(r.headers['x-content-type-options'], 'nosniff');
      assert.equal(r.headers['referrer-policy'], 'strict-origin-when-cross-origin');
    }
  });
});
