/**
 * Rich text (html, markdown) and svg-icon values: what views print raw. Every output is read back
 * with parse5, as a browser reads it, and must hold only allowed elements, attributes and links,
 * no comment, and give the same string when serialised and sanitised again (no mutation XSS).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { parseFragment, serialize, type DefaultTreeAdapterMap } from 'parse5';
import { checkFieldValue, checkHtml, checkSvgIcon, renderMarkdown, sanitizeHtml } from '../../src/models/index.js';
import { readModels } from './tree.js';
import { ALLOWED_ELEMENTS, hrefIsSafe } from '../support/safe-html.js';

type Node = DefaultTreeAdapterMap['node'];

const HTML_NS = 'http://www.w3.org/1999/xhtml';

/** Problems found walking the parsed output; empty when it is safe. */
function problemsIn(html: string): string[] {
  const problems: string[] = [];
  const walk = (node: Node): void => {
    if (node.nodeName === '#comment') problems.push('comment');
    if ('tagName' in node) {
      if (node.namespaceURI !== HTML_NS || !ALLOWED_ELEMENTS.has(node.tagName)) problems.push(`element ${node.tagName} (${node.namespaceURI})`);
      for (const { name, value } of node.attrs) {
        if (name === 'href' ? node.tagName !== 'a' : name !== 'id' && name !== 'class') problems.push(`attribute ${name} on ${node.tagName}`);
        if (name === 'href' && !hrefIsSafe(value)) problems.push(`href ${JSON.stringify(value)}`);
      }
    }
    if ('childNodes' in node) for (const child of node.childNodes) walk(child);
  };
  walk(parseFragment(html));
  return problems;
}

/** Safe, and stable: what a browser builds from it serialises and sanitises back to the same string. */
function assertSafe(html: string, from: string): void {
  assert.deepEqual(problemsIn(html), [], `from ${JSON.stringify(from)}: ${JSON.stringify(html)}`);
  assert.equal(sanitizeHtml(serialize(parseFragment(html))), html, `unstable after parsing: ${JSON.stringify(html)}`);
  assert.equal(sanitizeHtml(html), html, `not idempotent: ${JSON.stringify(html)}`);
}

/** Link targets tried as `href`, as Markdown links, reference definitions and autolinks. */
const URL_PAYLOADS = [
  'javascript:alert(1)',
  'JaVaScRiPt:alert(1)',
  'jav&#x09;ascript:alert(1)',
  'jav&#x0A;ascript:alert(1)',
  'java\nscript:alert(1)',
  'java\tscript:alert(1)',
  'jav&Tab;ascript:alert(1)',
  '&#106;avascript:alert(1)',
  '&#x6A;&#x61;&#x76;&#x61;&#x73;&#x63;&#x72;&#x69;&#x70;&#x74;&#x3A;alert(1)',
  '&#0000106&#0000097vascript:alert(1)',
  'javascript&colon;alert(1)',
  'javascript&#58alert(1)',
  '\u0001\u0002 javascript:alert(1)',
  ' &#14; javascript:alert(1)',
  '&#x20;javascript:alert(1)',
  'vbscript:msgbox(1)',
  'VBScript:msgbox(1)',
  'data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==',
  'DATA:text/html,<script>alert(1)</script>',
  'data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+',
  'file:///etc/passwd',
  '//evil.test/',
  ' //evil.test/',
  '\\\\evil.test/',
  '/\\evil.test/',
  '\\/evil.test/',
  '/\t/evil.test/',
  '%6Aavascript:alert(1)',
];

/** Markup payloads: script, handlers, namespace confusion, raw-text and comment tricks, forms. */
const HTML_PAYLOADS = [
  '<script>alert(1)</script>',
  '<SCRIPT SRC=//evil.test/x.js></SCRIPT>',
  '<scr<script>ipt>alert(1)</scr</script>ipt>',
  '<img src=x onerror=alert(1)>',
  '<img src="x` `<script>alert(1)</script>"` `>',
  '<p onclick="alert(1)" class="a">x</p>',
  '<body onload=alert(1)>x',
  '<svg onload=alert(1)>',
  '<svg><script>alert(1)</script></svg>',
  '<svg><a href="javascript:alert(1)"><text>x</text></a></svg>',
  '<svg><foreignObject><p onclick="alert(1)">x</p></foreignObject></svg>',
  '<svg></p><style><a id="</style><img src=1 onerror=alert(1)>">',
  '<svg><p><style><img src=x onerror=alert(1)></style></p></svg>',
  '<math><mtext><table><mglyph><style><!--</style><img title="--&gt;&lt;img src=1 onerror=alert(1)&gt;">',
  '<math><mi><mglyph><svg><mtext><textarea><path id="</textarea><img onerror=alert(1) src=1>">',
  '<math><annotation-xml encoding="text/html"><img src=x onerror=alert(1)></annotation-xml></math>',
  '<noscript><p title="</noscript><img src=x onerror=alert(1)>"></noscript>',
  '<noscript><style></noscript><img src=x onerror=alert(1)></style></noscript>',
  '<template><script>alert(1)</script></template><p>after</p>',
  '<template><style><!--</style><a rel="--></template><img src=x onerror=alert(1)>">',
  '<select><template><style><!--</style><a rel="--></template></select><img src=x onerror=alert(1)>">',
  '<style><img src=x onerror=alert(1)></style>',
  "<style>@import 'javascript:alert(1)';</style>",
  '<xmp><img src=x onerror=alert(1)></xmp>',
  '<textarea><img src=x onerror=alert(1)></textarea>',
  '<textarea></textarea/><img src=x onerror=alert(1)>',
  '<title></title><img src=x onerror=alert(1)>',
  '<plaintext><img src=x onerror=alert(1)>',
  '<noembed><img src=x onerror=alert(1)></noembed>',
  '<noframes><img src=x onerror=alert(1)></noframes>',
  '<iframe src="javascript:alert(1)"></iframe>',
  '<iframe srcdoc="&lt;script&gt;alert(1)&lt;/script&gt;"></iframe>',
  '<iframe><p>fallback</p><img src=x onerror=alert(1)>',
  '<object data="javascript:alert(1)"></object>',
  '<embed src="data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+">',
  '<!--><img src=x onerror=alert(1)>-->',
  '<!---><img src=x onerror=alert(1)>-->',
  '<!--[if gte IE 4]><script>alert(1)</script><![endif]-->',
  '<!-- --!><img src=x onerror=alert(1)> -->',
  '<![CDATA[<img src=x onerror=alert(1)>]]>',
  '<?xml-stylesheet href="javascript:alert(1)"?><p>x</p>',
  '<a title=\'"><script>alert(1)</script>\' href="/ok">x</a>',
  '<p class="a" "onmouseover=alert(1)">x</p>',
  '<p id=x class=y onmouseover=alert(1)//>x</p>',
  '<a/href="javascript:alert(1)">x</a>',
  '<a href=javascript:alert(1)>x</a>',
  '<a href="/ok" href="javascript:alert(1)">x</a>',
  '<a href="/x" <img src=x onerror=alert(1)>y',
  '<p><a href="https://ok.test/">unclosed',
  '<a href="/a',
  '<div><em><strong>x',
  '<form action="javascript:alert(1)"><input type=submit onfocus=alert(1) autofocus></form>',
  '<button formaction="javascript:alert(1)">x</button>',
  '<input onfocus=alert(1) autofocus>',
  '<base href="javascript:alert(1)//">',
  '<meta http-equiv="refresh" content="0;url=javascript:alert(1)">',
  '<link rel=stylesheet href="javascript:alert(1)">',
  '<img srcset="x 1x, javascript:alert(1) 2x">',
  '<div style="width: expression(alert(1))">x</div>',
  '<div style="background:url(javascript:alert(1))">x</div>',
  '<p style="x:\\65 xpression(alert(1))">x</p>',
  '<a href="https://ok.test/" id="x" class="y" name="z" target="_blank" rel="opener" style="color:red">ok</a>',
  '<a href="mailto:x@y.test?subject=<script>">m</a>',
  '<p>a<div>b</div></p>',
  '<p><em>a<div>b</div>c</em></p>',
  '<p><strong><ul><li>x</li></ul></strong></p>',
  '<a href="/1"><div><a href="/2">x</a></div></a>',
  '<a href="/1"><em><a href="/2">x</a></em></a>',
  '<li><p><li>x</li></p></li>',
  '<li><div><li>x</li></div></li>',
  '<ul><li>x<ul><li>y</ul></ul>',
  '<h1><em><h2>x</h2></em></h1>',
  '<pre>\n\nx</pre>',
  '<pre>\r\nx</pre>',
  '<pre><span></span>\nx</pre>',
  '<a href="http://ok.test/&#13;&#10;">x&#13;y</a>',
  'a\u0000<script>alert(1)</script>b',
  '<scr\u0000ipt>alert(1)</scr\u0000ipt>',
  '<div id="x" class="a b"><p>nested <code>&lt;script&gt;</code> &amp; text</p></div>',
  `${'<div>'.repeat(100)}deep${'</div>'.repeat(100)}`,
];

const payloads = [...HTML_PAYLOADS, ...URL_PAYLOADS.map((url) => `<a href="${url}">x</a>`)];

describe('rich text XSS corpus', () => {
  it(`has at least 40 payloads (${payloads.length})`, () => assert.ok(payloads.length >= 40));
  for (const payload of payloads) {
    const shown = JSON.stringify(payload.length > 70 ? `${payload.slice(0, 70)}…` : payload);
    it(`sanitises ${shown}`, () => assertSafe(sanitizeHtml(payload), payload));
    it(`renders ${shown} in Markdown`, () => {
      assertSafe(renderMarkdown(payload), payload);
      assertSafe(renderMarkdown(`# Title ${payload}\n\n- item ${payload}\n\n> quote *${payload}*\n\n    ${payload}\n`), payload);
    });
  }
  for (const url of URL_PAYLOADS) {
    it(`renders Markdown links to ${JSON.stringify(url)}`, () => {
      for (const source of [`[x](${url})`, `[x](<${url}>)`, `[x][r]\n\n[r]: ${url}`, `<${url}>`, `![x](${url})`]) {
        assertSafe(renderMarkdown(source), source);
      }
    });
  }
});

describe('rich text corpus outputs', () => {
  const rows: [string, string][] = [
    ['<script>alert(1)</script>after', 'after'],
    ['<a href="javascript:alert(1)">x</a>', '<a>x</a>'],
    ['<a href="jav&#x09;ascript:alert(1)">x</a>', '<a>x</a>'],
    ['<a href="java\nscript:alert(1)">x</a>', '<a>x</a>'],
    ['<a href="\u0001javascript:alert(1)">x</a>', '<a>x</a>'],
    ['<a href="//evil.test/">x</a>', '<a>x</a>'],
    ['<a href="\\\\evil.test/">x</a>', '<a>x</a>'],
    ['<a href="/\\evil.test/">x</a>', '<a>x</a>'],
    ['<p onclick="alert(1)" class="a" style="color:red">x</p>', '<p class="a">x</p>'],
    ['<span>a</span><b>b</b><img src=x alt=y><table><tr><td>c</td></tr></table>', 'abc'],
    ['<noscript><p>gone</p></noscript><svg><text>gone</text></svg><math><mi>gone</mi></math>kept', 'kept'],
    ['<!-- note -->x', 'x'],
    ['<p>a<div>b</div></p>', '<p>a</p><div>b</div><p></p>'],
    ['<p><em>a<div>b</div>c</em></p>', '<div><em>a<div>b</div>c</em></div>'],
    ['<a href="/1"><div><a href="/2">x</a></div></a>', '<a href="/1"><div>x</div></a>'],
    ['<li><div><li>x</li></div></li>', '<li><div><div>x</div></div></li>'],
    ['<pre>\n\nx</pre>', '<pre>x</pre>'],
    ['a\r\nb&#13;c', 'a\nb\nc'],
    ['<code>&lt;b&gt; &amp; "q"</code>', '<code>&lt;b&gt; &amp; "q"</code>'],
  ];
  for (const [input, expected] of rows) {
    it(`writes ${JSON.stringify(input)} as ${JSON.stringify(expected)}`, () => assert.equal(sanitizeHtml(input), expected));
  }
});

describe('sanitizeHtml keeps allowed markup', () => {
  const kept = [
    '<p class="x">a <strong>b</strong> <a href="/c">c</a></p>',
    '<h1 id="top">T</h1><h2>a</h2><h3>b</h3><h4>c</h4><h5>d</h5><h6>e</h6>',
    '<div class="note"><blockquote><p>q</p></blockquote></div>',
    '<ul><li>a</li><li>b<ol><li>c</li></ol></li></ul>',
    '<pre><code class="language-js">let a = 1 &lt; 2;\n</code></pre>',
    '<p>a<br />b <em>c</em> <s>d</s> <sub>e</sub><sup>f</sup> <del>g</del><ins>h</ins></p>',
    '<p><a href="https://example.com/a?b=1&amp;c=2#d">x</a> <a href="mailto:a@b.test">m</a> <a href="a/b">r</a> <a href="#x">h</a> <a href="?q">q</a></p>',
  ];
  for (const html of kept) {
    it(`keeps ${JSON.stringify(html)}`, () => {
      assert.equal(sanitizeHtml(html), html);
      assertSafe(html, html);
    });
  }
});

describe('renderMarkdown', () => {
  const rows: [string, string][] = [
    ['# Title\n\n## Sub', '<h1>Title</h1>\n<h2>Sub</h2>\n'],
    ['- a\n- *b*\n\n1. c\n2. **d**', '<ul>\n<li>a</li>\n<li><em>b</em></li>\n</ul>\n<ol>\n<li>c</li>\n<li><strong>d</strong></li>\n</ol>\n'],
    ['`x < y` and ~~gone~~', '<p><code>x &lt; y</code> and <s>gone</s></p>\n'],
    ['```js\nif (a < b) {}\n```', '<pre><code class="language-js">if (a &lt; b) {}\n</code></pre>\n'],
    ['> quoted', '<blockquote>\n<p>quoted</p>\n</blockquote>\n'],
    ['[site](https://example.com/ "Title") [rel](/a/b) [js](javascript:alert(1)) [pr](//evil.test)', '<p><a href="https://example.com/">site</a> <a href="/a/b">rel</a> [js](javascript:alert(1)) <a>pr</a></p>\n'],
    ['<b>raw</b> <script>x</script>', '<p>&lt;b&gt;raw&lt;/b&gt; &lt;script&gt;x&lt;/script&gt;</p>\n'],
    ['![a *cat*](cat.png)', '<p>a cat</p>\n'],
    ['a\n\n---\n\nb', '<p>a</p>\n\n<p>b</p>\n'],
    ['| a | b |\n|---|---|\n| 1 | 2 |', '<p>| a | b |\n|---|---|\n| 1 | 2 |</p>\n'],
    ['line  \nbreak', '<p>line<br />\nbreak</p>\n'],
  ];
  for (const [source, expected] of rows) {
    it(`renders ${JSON.stringify(source)}`, () => assert.equal(renderMarkdown(source), expected));
  }
});

describe('checkHtml', () => {
  it('stores the sanitised HTML', () => assert.deepEqual(checkHtml('<p onclick="x">hi</p><script>x</script>'), { ok: true, value: '<p>hi</p>' }));
  it('refuses what is not text', () => assert.deepEqual(checkHtml(1), { ok: false, message: 'must be HTML text' }));
  it('bounds the sanitised length at 2000 bytes by default', () => {
    assert.deepEqual(checkHtml('x'.repeat(2000)), { ok: true, value: 'x'.repeat(2000) });
    assert.deepEqual(checkHtml('x'.repeat(2001)), { ok: false, message: 'must be at most 2000 bytes of HTML (it has 2001)' });
    assert.equal(checkHtml(`<span>${'x'.repeat(2000)}</span>`).ok, true); // removed markup does not count
  });
  it('counts bytes, not characters', () => {
    assert.equal(checkHtml('é'.repeat(1000)).ok, true);
    assert.deepEqual(checkHtml('é'.repeat(1001)), { ok: false, message: 'must be at most 2000 bytes of HTML (it has 2002)' });
    assert.deepEqual(checkHtml('😀', { max: 3 }), { ok: false, message: 'must be at most 3 bytes of HTML (it has 4)' });
  });
  it('refuses what is sent over twice max in bytes, or nested more than 64 deep, before cleaning it', () => {
    assert.deepEqual(checkHtml('<div>'.repeat(120_000)), { ok: false, message: 'must be at most 4000 bytes of HTML before it is cleaned (it has 600000)' });
    const removed = (n: number) => `<span>${'x'.repeat(2000)}</span><script>${' '.repeat(n)}</script>`;
    assert.deepEqual(checkHtml(removed(1970)), { ok: true, value: 'x'.repeat(2000) }, '4000 bytes as sent, 2000 once cleaned');
    assert.deepEqual(checkHtml(removed(1971)), { ok: false, message: 'must be at most 4000 bytes of HTML before it is cleaned (it has 4001)' });
    assert.deepEqual(checkHtml('<p>x</p>'.repeat(3)), { ok: true, value: '<p>x</p>'.repeat(3) });
    assert.deepEqual(checkHtml(`${'<div>'.repeat(65)}deep`), { ok: false, message: 'must not nest elements more than 64 deep' });
    assert.deepEqual(checkHtml(`${'<b>'.repeat(64)}deep`), { ok: true, value: `${'<b>'.repeat(64)}deep${'</b>'.repeat(64)}`.replace(/<\/?b>/g, '') });
    // Implied end tags and void elements nest nothing: 1,000 paragraphs are one level deep.
    assert.equal(checkHtml('<p>a'.repeat(1000) + '<br>'.repeat(100), { max: 20000 }).ok, true);
  });
  it('takes max and min', () => {
    assert.deepEqual(checkHtml('<p>abc</p>', { max: 10 }), { ok: true, value: '<p>abc</p>' });
    assert.deepEqual(checkHtml('<p>abcd</p>', { max: 10 }), { ok: false, message: 'must be at most 10 bytes of HTML (it has 11)' });
    assert.deepEqual(checkHtml('<b>a</b>', { min: 2 }), { ok: false, message: 'must be at least 2 bytes of HTML (it has 1)' });
  });
  it('is what checkFieldValue runs for html fields', () => {
    const { schema } = readModels({ '/📦/🌐Page.yaml': 'body: html\nshort:\n  type: html\n  max: 8\n' });
    const field = (name: string) => schema.models.get('Page')!.fields.find((f) => f.name === name)!;
    assert.deepEqual(checkFieldValue(field('body'), '<p onclick="x">hi</p>'), { ok: true, value: '<p>hi</p>' });
    assert.deepEqual(checkFieldValue(field('short'), '<p>hello</p>'), { ok: false, message: 'Short must be at most 8 bytes of HTML (it has 12)' });
  });
});

describe('sanitizeHtml on random markup', () => {
  const pieces = [
    'a', ' ', '\n', '\r', '\r\n', '\t', '\u0000', '&', '&amp;', '&lt;', '&#13;', '&#x0a;', '&nbsp;', '<', '>', '"', "'", '=', '/', 'é',
    '<p>', '</p>', '<div>', '</div>', '<li>', '</li>', '<ul>', '</ul>', '<ol>', '<h1>', '</h1>', '<h2>', '</h2>', '<pre>', '</pre>',
    '<blockquote>', '<a href="/x">', '<a href="javascript:alert(1)">', '<a href=//e>', '</a>', '<em>', '</em>', '<strong>', '</strong>',
    '<code>', '</code>', '<br>', '</br>', '<s>', '<sub>', '<del>', '<ins>', '<span>', '</span>', '<b>', '<img src=x onerror=alert(1)>',
    '<script>', '</script>', '<style>', '</style>', '<svg>', '</svg>', '<math>', '<mi>', '<noscript>', '</noscript>', '<template>',
    '<textarea>', '</textarea>', '<title>', '<table>', '<td>', '<select>', '<option>', '<!--', '-->', '<!-->', '<![CDATA[', ']]>',
    '<p id="a" class="b" onclick="c">', '<a title="</a><img src=x onerror=alert(1)>">',
  ];
  it('always gives safe, stable output', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...pieces), { maxLength: 40 }), (parts) => {
        const html = parts.join('');
        assertSafe(sanitizeHtml(html), html);
      }),
      { numRuns: 400 },
    );
  });
  it('always renders Markdown to safe, stable output', () => {
    const md = [...pieces, '*', '_', '`', '#', '- ', '> ', '[x](', ')', '](', '![', '1. ', '    ', '\n\n', '|', '---'];
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...md), { maxLength: 40 }), (parts) => {
        const source = parts.join('');
        assertSafe(renderMarkdown(source), source);
      }),
      { numRuns: 300 },
    );
  });
});

describe('svg-icon', () => {
  const accepted: [string, string][] = [
    ['<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><path d="M0 0h24v24H0z" fill="none"/></svg>', '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><path d="M0 0h24v24H0z" fill="none"/></svg>'],
    ['  <svg width="16" height="16px"><circle cx="8" cy="8" r="4"></circle></svg>\n', '<svg width="16" height="16px"><circle cx="8" cy="8" r="4"/></svg>'],
    ["<SVG viewbox='0,0,10,10'><title>Home &amp; away</title><G fill='#f00'><rect x='1' y='1' width='8' height='8'/></G></SVG>", '<svg viewBox="0,0,10,10"><title>Home &amp; away</title><g fill="#f00"><rect x="1" y="1" width="8" height="8"/></g></svg>'],
    ['<svg viewBox="0 0 24 24" xmlns:xlink="http://www.w3.org/1999/xlink"><defs><clipPath id="c"><rect width="24" height="24"/></clipPath></defs><use xlink:href="#c" clip-path="url(#c)" transform="rotate(45 12 12)" stroke="rgb(0, 0, 0)"/></svg>', '<svg viewBox="0 0 24 24" xmlns:xlink="http://www.w3.org/1999/xlink"><defs><clipPath id="c"><rect width="24" height="24"/></clipPath></defs><use xlink:href="#c" clip-path="url(#c)" transform="rotate(45 12 12)" stroke="rgb(0, 0, 0)"/></svg>'],
    ['<svg viewBox="0 0 2 2"><desc>a &lt; b</desc><polygon points="0,0 2,0 1,2"/></svg>', '<svg viewBox="0 0 2 2"><desc>a &lt; b</desc><polygon points="0,0 2,0 1,2"/></svg>'],
  ];
  for (const [input, stored] of accepted) {
    it(`stores ${JSON.stringify(input.slice(0, 60))}…`, () => assert.deepEqual(checkSvgIcon(input), { ok: true, value: stored }));
  }
  const refused: [string, string][] = [
    ['<svg viewBox="0 0 24 24"><script>alert(1)</script></svg>', 'must not contain scripts, styles, animations or embedded documents'],
    ['<svg viewBox="0 0 24 24"><SCRIPT>alert(1)</SCRIPT></svg>', 'must not contain scripts, styles, animations or embedded documents'],
    ['<svg viewBox="0 0 24 24"><style>path{fill:red}</style></svg>', 'must not contain scripts, styles, animations or embedded documents'],
    ['<svg viewBox="0 0 24 24"><foreignObject><p>x</p></foreignObject></svg>', 'must not contain scripts, styles, animations or embedded documents'],
    ['<svg viewBox="0 0 24 24"><set attributeName="href" to="javascript:alert(1)"/></svg>', 'must not contain scripts, styles, animations or embedded documents'],
    ['<svg viewBox="0 0 24 24"><animateTransform attributeName="transform"/></svg>', 'must not contain scripts, styles, animations or embedded documents'],
    ['<svg viewBox="0 0 24 24" onload="alert(1)"></svg>', 'must not contain event handlers (onclick=…)'],
    ['<svg viewBox="0 0 24 24"><path ONCLICK="alert(1)"/></svg>', 'must not contain event handlers (onclick=…)'],
    ['<svg viewBox="0 0 24 24"/onload=alert(1)></svg>', 'must not contain event handlers (onclick=…)'],
    ['<svg viewBox="0 0 24 24"><path style="fill:red"/></svg>', 'must not contain style attributes; use presentation attributes such as fill="…"'],
    ['<svg viewBox="0 0 24 24"><use href="other.svg#icon"/></svg>', 'must not refer to other files; href may only point inside the icon (#id)'],
    ['<svg viewBox="0 0 24 24"><use xlink:href="&#x68;ttps://x.test/i.svg#a"/></svg>', 'must not refer to other files; href may only point inside the icon (#id)'],
    ['<svg viewBox="0 0 24 24"><rect fill="url(https://x.test/p)"/></svg>', 'must not refer to other files; url() may only point inside the icon (#id)'],
    ['<svg viewBox="0 0 24 24"><rect fill="&#117;rl(//x.test/p)"/></svg>', 'must not refer to other files; url() may only point inside the icon (#id)'],
    ['<svg viewBox="0 0 24 24"><rect fill="url(#a) url(/b)"/></svg>', 'must not refer to other files; url() may only point inside the icon (#id)'],
    ['<svg viewBox="0 0 24 24"><rect mask="java&#x73;cript:alert(1)"/></svg>', 'must not contain javascript:, data: or @import references'],
    ['<svg viewBox="0 0 24 24"><rect fill="expression(alert(1))"/></svg>', 'has a value for fill that is not allowed; use numbers, colours, transforms and url(#id)'],
    ['<svg viewBox="0 0 24 24"><a href="#x"><path/></a></svg>', 'must use only the elements svg, g, path, circle, ellipse, line, polyline, polygon, rect, title, desc, defs, use, symbol, linearGradient, radialGradient, stop, clipPath, mask; <a> is not one of them'],
    ['<svg viewBox="0 0 24 24"><image href="#x"/></svg>', 'must use only the elements svg, g, path, circle, ellipse, line, polyline, polygon, rect, title, desc, defs, use, symbol, linearGradient, radialGradient, stop, clipPath, mask; <image> is not one of them'],
    ['<svg viewBox="0 0 24 24"><title><img src=x onerror=alert(1)></title></svg>', 'must use only the elements svg, g, path, circle, ellipse, line, polyline, polygon, rect, title, desc, defs, use, symbol, linearGradient, radialGradient, stop, clipPath, mask; <img> is not one of them'],
    ['<svg viewBox="0 0 24 24"><path filter="x"/></svg>', 'must use only presentation attributes such as fill, stroke and d; filter is not one of them'],
    ['<svg viewBox="0 0 24 24" xmlns="http://www.w3.org/1999/xhtml"></svg>', 'must declare xmlns="http://www.w3.org/2000/svg" or leave it out'],
    ['<svg viewBox="0 0 24 24"><path d="M0 0" d="M1 1"/></svg>', 'must not repeat the attribute d'],
    ['<svg viewBox="0 0 24 24"><!-- x --></svg>', 'must not contain comments or CDATA sections'],
    ['<svg viewBox="0 0 24 24"><desc><![CDATA[</desc><script>alert(1)</script>]]></desc></svg>', 'must not contain comments or CDATA sections'],
    ['<?xml version="1.0"?><svg viewBox="0 0 24 24"></svg>', 'must be one <svg …>…</svg> element, without an XML declaration or doctype'],
    ['<!DOCTYPE svg [<!ENTITY x "y">]><svg viewBox="0 0 24 24"></svg>', 'must be one <svg …>…</svg> element, without an XML declaration or doctype'],
    ['<svg viewBox="0 0 24 24"></svg><svg viewBox="0 0 24 24"></svg>', 'must be one <svg …>…</svg> element, without an XML declaration or doctype'],
    ['<g><path/></g>', 'must be one <svg …>…</svg> element, without an XML declaration or doctype'],
    ['text<svg viewBox="0 0 24 24"></svg>', 'must be one <svg …>…</svg> element, without an XML declaration or doctype'],
    ['<svg viewBox="0 0 24 24"><g><path/></svg>', 'must be well-formed: close every element it opens, in order'],
    ['<svg viewBox="0 0 24 24"><path/>', 'must be well-formed: close every element it opens, in order'],
    ['<svg viewBox="0 0 24 24"><g>loose text</g></svg>', 'may hold text only in <title> and <desc>'],
    ['<svg viewBox="0 0 24 12"></svg>', 'must be square; its viewBox is 24 × 12'],
    ['<svg width="16" height="12"></svg>', 'must be square; it is 16 × 12'],
    ['<svg viewBox="0 0 a b"></svg>', 'must have a viewBox of four numbers with a positive size, such as viewBox="0 0 24 24"'],
    ['<svg><path/></svg>', 'must say its size: add viewBox="0 0 24 24" (square) to the <svg> element'],
    [`<svg viewBox="0 0 24 24"><path d="${'M0 0'.repeat(500)}"/></svg>`, 'must be at most 2000 bytes (it has 2043)'],
    ['<div>no</div>', 'must use only the elements svg, g, path, circle, ellipse, line, polyline, polygon, rect, title, desc, defs, use, symbol, linearGradient, radialGradient, stop, clipPath, mask; <div> is not one of them'],
  ];
  for (const [input, message] of refused) {
    it(`refuses ${JSON.stringify(input.length > 60 ? `${input.slice(0, 60)}…` : input)}`, () => assert.deepEqual(checkSvgIcon(input), { ok: false, message }));
  }
  it('refuses what is not text', () => assert.deepEqual(checkSvgIcon(42), { ok: false, message: 'must be SVG markup, <svg …>…</svg>' }));
  it('stores icons that parse5 reads as SVG with the same attributes', () => {
    for (const [input] of accepted) {
      const r = checkSvgIcon(input);
      assert.ok(r.ok);
      const svg = parseFragment(r.value).childNodes[0]!;
      assert.ok('tagName' in svg && svg.namespaceURI === 'http://www.w3.org/2000/svg');
      assert.equal(serialize(parseFragment(r.value)).replace(/><\/(path|circle|rect|use|polygon)>/g, '/>'), r.value);
    }
  });
});
