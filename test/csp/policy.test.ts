/** The policy of each page: sources, hashes of inline blocks (as written, and as indented), declarations, settings. */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { serve, type Served } from '../helpers.js';
import { browserHash, diagnosticsOf, inlineBlocks, M, parsePolicy } from './helpers.js';

const BASELINE =
  "default-src 'none'; script-src 'none'; style-src 'none'; img-src 'self'; font-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'self'; object-src 'none'; frame-ancestors 'self'";

/** Every inline block of `html` is allowed by a hash in the header, and nothing inline is allowed otherwise. */
function assertBlocksAllowed(html: string, header: string | string[] | undefined, algorithm: 'sha256' | 'sha384' = 'sha256'): void {
  const policy = parsePolicy(header);
  const { scripts, styles } = inlineBlocks(html);
  for (const s of scripts) assert.ok(policy.get('script-src')!.includes(browserHash(s, algorithm)), `script ${JSON.stringify(s)} is not allowed by ${header}`);
  for (const s of styles) assert.ok(policy.get('style-src')!.includes(browserHash(s, algorithm)), `style ${JSON.stringify(s)} is not allowed by ${header}`);
  assert.doesNotMatch(String(header), /unsafe-inline|unsafe-eval|nonce-/);
}

describe('page policies', () => {
  let s: Served;
  before(async () => {
    s = await serve({
      '/empty.html': `${M}<p>nothing</p>\n`,
      '/plain.html': '<!doctype html><link rel="stylesheet" href="https://cdn.example.com/x.css" integrity="sha384-abc" crossorigin="anonymous"><script src="/app.js"></script><p>plain</p>\n',
      '/app.js': 'void 0;\n',
      '/static.html': `${M}<style>p { color: red; }</style>\n<script>\n  document.title = 'a';\n</script>\n<p>x</p>\n`,
      '/📤/Q.js': "import {name} from '&'\nconst Name = name ?? 'nobody'\nconst Evil = '<script>alert(1)</script>'\nexport {Name, Evil}",
      '/values.html': `${M}{{% import {Name} from '📤' }}<script type="application/json" id="d">{"who": "{{Name}}"}</script><script data-who="{{Name}}">var fixed = 1;</script><style>p::after { content: attr(data-who); }</style>\n`,
      '/crlf.html': `${M}<script>\r\nvar a = 1;\r\nvar b = 2;\r\n</script>\r\n`,
      '/data.html': `${M}{{% import {Evil, Card} from '📤' }}<p>{{Evil}}</p>{{{Card}}}\n`,
      '/📤/Card.html': `${M}<div class="card"><script>window.fromSupplier = 1;</script></div>`,
      '/extra.html': `${M}<script src="/app.js" data-connect-src="https://api.example.com wss://live.example.com" data-frame-src="https://www.youtube-nocookie.com" data-img-src="https://img.example.com" data-font-src="https://fonts.gstatic.com"></script>\n<link rel="stylesheet" href="/site.css" data-style-src="https://fonts.googleapis.com">\n`,
      '/site.css': 'p{}',
      '/declared.html': `${M}<main>\n<link itemprop="content-security-policy" data-connect-self="false" data-form-self="false" data-img-src-data="true">\n<p>declared</p></main>\n`,
      '/_layout.html': `${M}{{% partial /_tail }}\n<html><body>{{$main}}{{/main}}\n  {{> tail}}\n{{$js}}{{/js}}</body></html>\n`,
      '/_tail.html': `${M}<script>\n  var indented = true;\n</script>\n`,
      '/child.html': `${M}{{% partial /_layout }}{{<layout}}{{$main}}<h1>child</h1>{{/main}}{{$js}}<script>var fromChild = 1;</script>{{/js}}{{/layout}}\n`,
      '/_icons/dot.svg': '<svg xmlns="http://www.w3.org/2000/svg"><style>circle { fill: red; }</style><circle r="1"/></svg>',
      '/icon.html': `${M}{{% svg /_icons/ as i }}<p>{{> i-dot}}</p>\n`,
      '/auth-form.html': `${M}<main>\n<link itemprop="content-security-policy" data-form-self="false" data-form-action-auth="true">\n<form method="post" action="/x"></form></main>\n`,
      '/mixed.html': `${M}<script src="/js/{{x}}.js"></script><img src="https://img.example.com/a.png" alt=""><video src="/v.mp4"></video>\n`,
    });
  });
  after(() => s.close());

  test("data-form-action-auth without a configured provider still limits forms to 'self'", async () => {
    const p = parsePolicy((await s.get('/auth-form')).headers['content-security-policy']);
    assert.deepEqual(p.get('form-action'), ["'self'"]);
  });

  test('a page without scripts or styles gets the baseline policy', async () => {
    assert.equal((await s.get('/empty')).headers['content-security-policy'], BASELINE);
  });

  test('script src and stylesheet href become sources: same origin as \'self\', external as the URL', async () => {
    const r = await s.get('/plain');
    const p = parsePolicy(r.headers['content-security-policy']);
    assert.deepEqual(p.get('script-src'), ["'self'"]);
    assert.deepEqual(p.get('style-src'), ['https://cdn.example.com/x.css']);
    assert.equal(p.get('default-src')![0], "'none'");
  });

  test('static inline blocks are hashed exactly as the browser hashes them', async () => {
    const r = await s.get('/static');
    const p = parsePolicy(r.headers['content-security-policy']);
    assert.deepEqual(p.get('style-src'), [browserHash('p { color: red; }')]);
    assert.deepEqual(p.get('script-src'), [browserHash("\n  document.title = 'a';\n")]);
    assertBlocksAllowed(r.text, r.headers['content-security-policy']);
  });

  test('values reach scripts through data blocks and data-* attributes; the policy never depends on them', async () => {
    const a = await s.get('/values?name=Ada');
    const b = await s.get('/values?name=Grace%20%22H%22%3C%2Fscript%3E');
    assert.match(a.text, /\{"who": "Ada"\}/);
    assert.match(b.text, /\{"who": "Grace \\"H\\"\\u003c\/script\\u003e"\}/);
    assert.match(b.text, /data-who="Grace &quot;H&quot;&lt;\/script&gt;"/);
    assert.equal(a.headers['content-security-policy'], b.headers['content-security-policy']);
    const p = parsePolicy(a.headers['content-security-policy']);
    // The JSON block does not run, so it has no hash: only the script that runs has one.
    assert.deepEqual(p.get('script-src'), [browserHash('var fixed = 1;')]);
    assert.deepEqual(p.get('style-src'), [browserHash('p::after { content: attr(data-who); }')]);
    assert.deepEqual(JSON.parse(/<script type="application\/json" id="d">(.*?)<\/script>/.exec(b.text)![1]!), { who: 'Grace "H"</script>' });
  });

  test('CR LF inside a block is hashed as LF, like the browser', async () => {
    const r = await s.get('/crlf');
    assert.deepEqual(parsePolicy(r.headers['content-security-policy']).get('script-src'), [browserHash('\nvar a = 1;\nvar b = 2;\n')]);
    assert.ok(r.text.includes('\r\n'));
  });

  test('script elements arriving in data are never hashed', async () => {
    const r = await s.get('/data');
    assert.match(r.text, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
    assert.match(r.text, /<script>window.fromSupplier = 1;<\/script>/);
    assert.equal(r.headers['content-security-policy'], BASELINE);
  });

  test('an HTML supplier writing an inline block is warned about', () => {
    const lines = diagnosticsOf({ '/📤/Card.html': `${M}<div><script>x()</script></div>`, '/a.html': `${M}{{% import {Card} from '📤' }}{{{Card}}}` }, 'LW_CSP');
    assert.deepEqual(lines.map((l) => l.replace(/:.*\[/, ' [')), ['📤/Card.html [LW_CSP_SUPPLIER_INLINE]']);
  });

  test('data-*-src attributes of scripts and stylesheet links add sources', async () => {
    const p = parsePolicy((await s.get('/extra')).headers['content-security-policy']);
    assert.deepEqual(p.get('script-src'), ["'self'"]);
    assert.deepEqual(p.get('style-src'), ["'self'", 'https://fonts.googleapis.com']);
    assert.deepEqual(p.get('connect-src'), ["'self'", 'https://api.example.com', 'wss://live.example.com']);
    assert.deepEqual(p.get('frame-src'), ['https://www.youtube-nocookie.com']);
    assert.deepEqual(p.get('img-src'), ["'self'", 'https://img.example.com']);
    assert.deepEqual(p.get('font-src'), ["'self'", 'https://fonts.gstatic.com']);
  });

  test('the itemprop="content-security-policy" link sets the switches and is removed from the output', async () => {
    const r = await s.get('/declared');
    const p = parsePolicy(r.headers['content-security-policy']);
    assert.equal(p.has('connect-src'), false);
    assert.equal(p.has('form-action'), false);
    assert.deepEqual(p.get('img-src'), ["'self'", 'data:']);
    assert.doesNotMatch(r.text, /itemprop/);
    assert.match(r.text, /<main>\n\n<p>declared<\/p><\/main>/);
  });

  test('blocks of layouts, partials and block overrides are allowed as rendered, indentation included', async () => {
    const r = await s.get('/child');
    assert.match(r.text, /\n  <script>\n    var indented = true;\n  <\/script>\n/);
    assert.match(r.text, /<script>var fromChild = 1;<\/script>/);
    assertBlocksAllowed(r.text, r.headers['content-security-policy']);
  });

  test('a <style> of an inlined SVG icon is hashed', async () => {
    const r = await s.get('/icon');
    assert.deepEqual(parsePolicy(r.headers['content-security-policy']).get('style-src'), [browserHash('circle { fill: red; }')]);
  });

  test('a src with a literal path prefix is same-origin; images and media from elsewhere are allowed where written', async () => {
    const p = parsePolicy((await s.get('/mixed?x=a')).headers['content-security-policy']);
    assert.deepEqual(p.get('script-src'), ["'self'"]);
    assert.deepEqual(p.get('img-src'), ["'self'", 'https://img.example.com']);
    assert.deepEqual(p.get('media-src'), ["'self'"]);
  });

  test('built-in error pages carry a policy that allows nothing', async () => {
    const r = await s.get('/missing');
    assert.equal(r.status, 404);
    assert.equal(r.headers['content-security-policy'], "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'self'");
  });
});

describe('files compiled before the page pass', () => {
  test('a partial shared with an HTML supplier (compiled first) escapes its JSON data block in both', async () => {
    const s = await serve({
      '/_shared/data.html': `${M}<script type="application/json">{"year": {{%year}}, "q": "{{q}}", "v": {{q}}}</script>`,
      '/📤/Q.js': "import {q} from '&'\nconst Q = q\nexport {Q}",
      '/📤/Box.html': `${M}{{% partial /_shared/data }}{{% import {Q} from '📤' }}{{#Q as q}}<div>{{> data}}</div>{{/Q}}`,
      '/index.html': `${M}{{% import {Box, Q} from '📤' }}{{% partial /_shared/data }}{{#Q as q}}{{> data}}{{/Q}}{{{Box}}}\n`,
    });
    try {
      const r = await s.get('/?q=%3C%2Fscript%3E%22');
      const blocks = [...r.text.matchAll(/<script type="application\/json">(.*?)<\/script>/g)].map((m) => m[1]!);
      assert.equal(blocks.length, 2);
      for (const b of blocks) {
        assert.match(b, /^\{"year": \d{4}, "q": "\\u003c\/script\\u003e\\"", "v": "\\u003c\/script\\u003e\\""\}$/);
        assert.deepEqual(Object.keys(JSON.parse(b)), ['year', 'q', 'v']);
      }
      assert.doesNotMatch(r.headers['content-security-policy'] as string, /sha256/);
    } finally {
      await s.close();
    }
  });
});

describe('settings from /🎛.yaml', () => {
  test('csp: hash, report-only and report-uri', async () => {
    const s = await serve({
      '/🎛.yaml': 'name: t\ncsp:\n  hash: sha384\n  report-only: true\n  report-uri: /csp-report\n',
      '/index.html': `${M}<script data-x="{{x}}">var a = 1;</script><style>p{}</style>\n`,
    });
    try {
      const r = await s.get('/');
      assert.equal(r.headers['content-security-policy'], undefined);
      const header = r.headers['content-security-policy-report-only'];
      assertBlocksAllowed(r.text, header, 'sha384');
      const p = parsePolicy(header);
      assert.deepEqual(p.get('report-uri'), ['/csp-report']);
      assert.deepEqual(p.get('report-to'), ['laneway-csp']);
      assert.equal(r.headers['reporting-endpoints'], 'laneway-csp="/csp-report"');
    } finally {
      await s.close();
    }
  });

  test('csp: false (measurements only) sends the same pages without a policy', async () => {
    const files = { '/_x.js': 'var x = 1;', '/index.html': `${M}<script src="/_x.js"></script><script type="application/json">"{{x}}"</script>\n`, '/plain.html': '<p>p</p>' };
    const off = await serve(files, { csp: false });
    const on = await serve(files);
    try {
      const [a, b] = [await off.get('/'), await on.get('/')];
      assert.equal(a.text, b.text);
      assert.equal(a.text, '<script>var x = 1;</script><script type="application/json">""</script>\n');
      assert.equal(a.headers['content-security-policy'], undefined);
      assert.equal((await off.get('/plain')).headers['content-security-policy'], undefined);
      assert.ok(b.headers['content-security-policy']);
    } finally {
      await off.close();
      await on.close();
    }
  });

  test('malformed settings are build errors on /🎛.yaml', () => {
    assert.deepEqual(diagnosticsOf({ '/🎛.yaml': 'name: t\ncsp:\n  hash: md5\n  report-uri: "javascript:x"\n  nonce: true\n' }, 'LW_CSP'), [
      "🎛.yaml:2:1: csp.hash is sha256, sha384 or sha512, not \"md5\" [LW_CSP_SETTINGS]",
      '🎛.yaml:2:1: csp.report-uri is a path of the app (/csp-report) or an https:// URL without spaces, ";", "," or quotes; found "javascript:x" [LW_CSP_SETTINGS]',
      '🎛.yaml:2:1: unknown key csp.nonce: use hash, report-only or report-uri [LW_CSP_SETTINGS]',
    ]);
  });
});

describe('declared sources', () => {
  test("'unsafe-inline' keeps working: hashes are left out of that directive, with a warning", async () => {
    const files = { '/index.html': `${M}<script data-script-src="'unsafe-inline'">var a = 1;</script><style>p{}</style>\n` };
    assert.deepEqual(diagnosticsOf(files, 'LW_CSP').map((l) => l.replace(/: .*\[/, ' [')), ['index.html:2:26 [LW_CSP_UNSAFE_INLINE]']);
    const s = await serve(files);
    try {
      const p = parsePolicy((await s.get('/')).headers['content-security-policy']);
      assert.deepEqual(p.get('script-src'), ["'unsafe-inline'"]);
      assert.deepEqual(p.get('style-src'), [browserHash('p{}')]);
    } finally {
      await s.close();
    }
  });

  test('bad sources, dynamic sources and nonces are build errors at their position', () => {
    assert.deepEqual(
      diagnosticsOf(
        {
          '/index.html': `${M}<script src="/a.js" data-connect-src="https://ok.example.com bad;value 'nonce-abc'"></script>\n<script src="{{cdn}}/x.js"></script>\n<link rel="stylesheet" href="/s.css" data-style-src="{{x}}">\n`,
          '/a.js': '',
          '/s.css': '',
        },
        'LW_CSP',
      ).map((l) => l.replace(/: [^[]*\[/, ' [')),
      ['index.html:2:62 [LW_CSP_BAD_SOURCE]', 'index.html:2:72 [LW_CSP_BAD_SOURCE]', 'index.html:3:14 [LW_CSP_DYNAMIC_SOURCE]', 'index.html:4:54 [LW_CSP_DYNAMIC_SOURCE]'],
    );
  });

  test('an external script or stylesheet without integrity is a warning', () => {
    const lines = diagnosticsOf(
      {
        '/index.html': `${M}<script src="https://cdn.example.com/a.js"></script>\n<script src="https://cdn.example.com/b.js" integrity="sha384-x" crossorigin="anonymous"></script>\n<link rel="stylesheet" href="https://cdn.example.com/c.css">\n`,
      },
      'LW_CSP',
    );
    assert.deepEqual(lines.map((l) => l.replace(/: [^[]*\[/, ' [')), ['index.html:2:9 [LW_CSP_NO_INTEGRITY]', 'index.html:4:24 [LW_CSP_NO_INTEGRITY]']);
  });

  test('inline blocks must open and close in one section and be closed; a data block holds no unescaped output', () => {
    const lines = diagnosticsOf(
      {
        '/a.html': `${M}{{#x}}<script>{{/x}}var a;</script>\n`,
        '/b.html': `${M}<p>\n<style>p{}\n`,
        '/c.html': `${M}{{% import {Card} from '📤' }}<script type="application/json">"{{{Card}}}"</script>\n`,
        '/📤/Card.html': `${M}<b>x</b>`,
      },
      'LW_CSP',
    );
    assert.deepEqual(lines.map((l) => l.replace(/: [^[]*\[/, ' [')), ['a.html:2:7 [LW_CSP_INLINE_SPLIT]', 'b.html:3:1 [LW_CSP_INLINE_UNCLOSED]', 'c.html:2:63 [LW_CSP_RAW_IN_INLINE]']);
  });

  test('an inlined SVG with style= or a handler is warned about (browsers will block those parts)', () => {
    const lines = diagnosticsOf({ '/_i/x.svg': '<svg><path style="fill:red" onclick="x()"/></svg>', '/a.html': `${M}{{% svg /_i/x as x }}{{> x}}` }, 'LW_CSP');
    assert.deepEqual(lines.map((l) => l.replace(/: [^[]*\[/, ' [')), ['_i/x.svg:1:12 [LW_CSP_SVG_INLINE]', '_i/x.svg:1:29 [LW_CSP_SVG_INLINE]']);
  });
});
