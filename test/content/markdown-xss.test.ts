/**
 * Cross-site scripting through the Markdown path (`renderMarkdown`): raw HTML, hostile link
 * targets in every link syntax, attribute blocks, links to repository paths and what a resolver
 * returns. Every output is parsed (htmlparser2, as HTML) and must hold only allowed elements and
 * attributes and safe links; it must also be stable (what parse5, reading it as a browser does,
 * serialises back to, sanitises to the same string), which rules out mutation XSS.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { DomUtils, parseDocument } from 'htmlparser2';
import { parseFragment, serialize } from 'parse5';
import { renderMarkdown, type MarkdownOptions, type RenderContext } from '../../src/content/markdown.js';
import { sanitizeHtml } from '../../src/models/rich.js';
import { ALLOWED_ELEMENTS, hrefIsSafe } from '../support/safe-html.js';


/** What is wrong with rendered HTML, read as HTML; empty when it is safe. */
function problemsIn(html: string): string[] {
  const problems: string[] = [];
  const document = parseDocument(html, { decodeEntities: true });
  if (DomUtils.filter((node) => node.type !== 'tag' && node.type !== 'text', document.children).length > 0) problems.push('a node other than element or text');
  for (const element of DomUtils.findAll(() => true, document.children)) {
    if (!ALLOWED_ELEMENTS.has(element.name)) problems.push(`element ${element.name}`);
    const { id, class: classes, href, target, rel, ...others } = element.attribs;
    for (const name of Object.keys(others)) problems.push(`attribute ${name} on ${element.name}`);
    if (element.name !== 'a' && (href !== undefined || target !== undefined || rel !== undefined)) problems.push(`link attribute on ${element.name}`);
    if (href !== undefined && !hrefIsSafe(href)) problems.push(`href ${JSON.stringify(href)}`);
    if ((target !== undefined || rel !== undefined) && (target !== '_blank' || rel !== 'noopener noreferrer')) {
      problems.push(`target ${JSON.stringify(target)} with rel ${JSON.stringify(rel)}`);
    }
    void id;
    void classes;
  }
  return problems;
}

function assertSafe(html: string, from: string): void {
  assert.deepEqual(problemsIn(html), [], `from ${JSON.stringify(from)}: ${JSON.stringify(html)}`);
  const blankTargets = { blankTargets: true };
  assert.equal(sanitizeHtml(serialize(parseFragment(html)), blankTargets), html, `unstable after parsing: ${JSON.stringify(html)}`);
  assert.equal(sanitizeHtml(html, blankTargets), html, `not idempotent: ${JSON.stringify(html)}`);
}

describe('the safety check itself', () => {
  const unsafe: [string, string][] = [
    ['<script>x</script>', 'element script'],
    ['<img src=x>', 'element img'],
    ['<p onclick="x">a</p>', 'attribute onclick on p'],
    ['<a href="javascript:alert(1)">a</a>', 'href "javascript:alert(1)"'],
    ['<a href="//evil.test/">a</a>', 'href "//evil.test/"'],
    ['<a href="/x" target="_blank">a</a>', 'target "_blank" with rel undefined'],
    ['<a href="/x" target="_top" rel="noopener noreferrer">a</a>', 'target "_top" with rel "noopener noreferrer"'],
    ['<p href="/x">a</p>', 'link attribute on p'],
    ['<!-- x -->', 'a node other than element or text'],
  ];
  for (const [html, problem] of unsafe) it(`finds ${problem} in ${html}`, () => assert.ok(problemsIn(html).includes(problem), JSON.stringify(problemsIn(html))));
  it('passes allowed markup', () => {
    assert.deepEqual(problemsIn('<h2 id="a" class="b">t</h2><p><a class="x" href="/ok#y" target="_blank" rel="noopener noreferrer">l</a> <a href="mailto:a@b.test">m</a></p>'), []);
  });
});

describe('sanitizeHtml with blankTargets (autolink: blank)', () => {
  const rows: [string, string][] = [
    ['<a href="/x" target="_blank">a</a>', '<a href="/x" target="_blank" rel="noopener noreferrer">a</a>'],
    ['<a target="_blank" rel="opener" href="/x">a</a>', '<a href="/x" target="_blank" rel="noopener noreferrer">a</a>'],
    ['<a href="/x" target="_blank" rel="noopener">a</a>', '<a href="/x" target="_blank" rel="noopener noreferrer">a</a>'],
    ['<a href="javascript:alert(1)" target="_blank">a</a>', '<a target="_blank" rel="noopener noreferrer">a</a>'],
    ['<a href="/x" target="_top" rel="noopener noreferrer">a</a>', '<a href="/x">a</a>'],
    ['<a href="/x" target="_self">a</a>', '<a href="/x">a</a>'],
    ['<a href="/x" target="_BLANK">a</a>', '<a href="/x">a</a>'],
    ['<a href="/x" target=" _blank">a</a>', '<a href="/x">a</a>'],
    ['<a href="/x" target="evil">a</a>', '<a href="/x">a</a>'],
    ['<a href="/x" rel="opener">a</a>', '<a href="/x">a</a>'],
    ['<p target="_blank" rel="noopener noreferrer">a</p>', '<p>a</p>'],
    ['<code target="_blank">a</code>', '<code>a</code>'],
    ['<a href="/x" target="_blank" onclick="alert(1)" style="x" ping="/p" download>a</a>', '<a href="/x" target="_blank" rel="noopener noreferrer">a</a>'],
    ['<form target="_blank"><a target="_blank">a</a></form>', '<a target="_blank" rel="noopener noreferrer">a</a>'],
  ];
  for (const [input, output] of rows) {
    it(`writes ${input} as ${output}`, () => {
      assert.equal(sanitizeHtml(input, { blankTargets: true }), output);
      assertSafe(output, input);
    });
  }
  it('keeps no target or rel without the option (html fields)', () => {
    assert.equal(sanitizeHtml('<a href="/x" target="_blank" rel="noopener noreferrer">a</a>'), '<a href="/x">a</a>');
    assert.equal(sanitizeHtml('<a href="/x" target="_blank" rel="noopener noreferrer">a</a>', { blankTargets: false }), '<a href="/x">a</a>');
  });
});

const EVERY_OPTION: MarkdownOptions = {
  autolink: 'blank',
  minimumHeaderLevel: 2,
  generateHeaderId: true,
  typography: true,
  classes: { p: 'lead', a: 'link', h2: 'title', code: 'mono', pre: 'block', li: 'item' },
};
const OPTION_SETS: (MarkdownOptions | undefined)[] = [undefined, { autolink: true }, EVERY_OPTION];
const RESOLVER: RenderContext = { resolveLink: (path) => (path === '/🗄/ok.md' ? '/ok' : undefined) };

/** Renders with each option set and checks every output. */
function assertRendersSafely(source: string, context: RenderContext = RESOLVER): void {
  for (const options of OPTION_SETS) assertSafe(renderMarkdown(source, options, context), source);
}

/** Raw HTML typed in Markdown: shown as text (raw HTML is off), never as markup. */
const HTML_PAYLOADS = [
  '<script>alert(1)</script>',
  '<SCRIPT SRC=//evil.test/x.js></SCRIPT>',
  '<img src=x onerror=alert(1)>',
  '<svg onload=alert(1)>',
  '<svg><script>alert(1)</script></svg>',
  '<math><mtext><table><mglyph><style><!--</style><img title="--&gt;&lt;img src=1 onerror=alert(1)&gt;">',
  '<noscript><p title="</noscript><img src=x onerror=alert(1)>"></noscript>',
  '<iframe src="javascript:alert(1)"></iframe>',
  '<a href="javascript:alert(1)">x</a>',
  '<a href="/ok" target="_blank" rel="opener">x</a>',
  '<p onclick="alert(1)">x</p>',
  '<!--><img src=x onerror=alert(1)>-->',
  '<![CDATA[<img src=x onerror=alert(1)>]]>',
  '<style>*{background:url(javascript:alert(1))}</style>',
  '<div\nonclick="alert(1)">multi-line tag</div>',
];

describe('raw HTML in Markdown', () => {
  for (const payload of HTML_PAYLOADS) {
    const shown = JSON.stringify(payload.slice(0, 60));
    it(`shows ${shown} as text`, () => {
      for (const source of [payload, `a ${payload} b`, `# ${payload}`, `- ${payload}`, `> ${payload}`, `*${payload}*`, `[${payload}](/x)`, `${payload}\n\n${payload}`]) {
        assertRendersSafely(source);
      }
    });
  }
  it('writes the markup as escaped text', () => {
    assert.equal(renderMarkdown('<img src=x onerror=alert(1)>'), '<p>&lt;img src=x onerror=alert(1)&gt;</p>\n');
    assert.equal(renderMarkdown('<script>\nalert(1)\n</script>'), '<p>&lt;script&gt;\nalert(1)\n&lt;/script&gt;</p>\n');
  });
});

/** Link targets: scripting schemes in every spelling, data:, other schemes, other hosts. */
const URL_PAYLOADS = [
  'javascript:alert(1)',
  'JaVaScRiPt:alert(1)',
  'jav&#x09;ascript:alert(1)',
  'jav&#x0A;ascript:alert(1)',
  'jav&Tab;ascript:alert(1)',
  'java%09script:alert(1)',
  '&#106;avascript:alert(1)',
  '&#x6A;&#x61;&#x76;&#x61;&#x73;&#x63;&#x72;&#x69;&#x70;&#x74;&#x3A;alert(1)',
  'javascript&colon;alert(1)',
  'javascript&#58;alert(1)',
  '\\javascript:alert(1)',
  '&#x20;javascript:alert(1)',
  'vbscript:msgbox(1)',
  'data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==',
  'DATA:text/html,<script>alert(1)</script>',
  'data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+',
  'data:image/png;base64,iVBORw0KGgo=',
  'file:///etc/passwd',
  '//evil.test/',
  '\\\\evil.test/',
  '/\\evil.test/',
  '%6Aavascript:alert(1)',
  '"onmouseover="alert(1)',
  "'onmouseover='alert(1)",
];

describe('hostile link targets', () => {
  for (const url of URL_PAYLOADS) {
    it(`renders links to ${JSON.stringify(url)} safely`, () => {
      for (const source of [
        `[x](${url})`,
        `[x](<${url}>)`,
        `[x](${url} "title")`,
        `[x][r]\n\n[r]: ${url}`,
        `[r]\n\n[r]: <${url}>`,
        `<${url}>`,
        `![x](${url})`,
        `see ${url} here`,
        `[x](${url}){.a}`,
      ]) {
        assertRendersSafely(source);
      }
    });
  }
  const exact: [string, string][] = [
    ['[x](javascript:alert(1))', '<p>[x](javascript:alert(1))</p>\n'],
    // The tab is percent-encoded, and `%` cannot be part of a scheme: a relative link on this origin.
    ['[x](jav&#x09;ascript:alert(1))', '<p><a href="jav%09ascript:alert(1)">x</a></p>\n'],
    ['[x](&#106;avascript:alert(1))', '<p>[x](javascript:alert(1))</p>\n'],
    ['<javascript:alert(1)>', '<p>&lt;javascript:alert(1)&gt;</p>\n'],
    ['[x](data:text/html,hi)', '<p>[x](data:text/html,hi)</p>\n'],
    ['[x](//evil.test/)', '<p><a>x</a></p>\n'],
    ['![x](x.png" onerror="alert(1))', '<p>![x](x.png" onerror="alert(1))</p>\n'],
  ];
  for (const [source, html] of exact) it(`renders ${JSON.stringify(source)} as ${JSON.stringify(html)}`, () => assert.equal(renderMarkdown(source), html));
});

describe('attribute blocks', () => {
  const blocks = [
    '{onclick=alert(1)}',
    '{onclick="alert(1)"}',
    '{style="background:url(javascript:alert(1))"}',
    '{href=javascript:alert(1)}',
    '{src=x onerror=alert(1)}',
    '{target=_blank}',
    '{rel=opener}',
    '{#x onmouseover=alert(1)}',
    '{.a" onclick="alert(1)}',
    '{class="a\\" onclick=\\"alert(1)"}',
    '{id="x\\"><script>alert(1)</script>"}',
    '{#"><img src=x onerror=alert(1)>}',
    '{..module onclick=alert(1)}',
    '{ONCLICK=alert(1) Style=x}',
    '{on\u0000click=alert(1)}',
  ];
  for (const block of blocks) {
    it(`keeps nothing dangerous of ${JSON.stringify(block)}`, () => {
      for (const source of [
        `# Heading ${block}`,
        `paragraph ${block}`,
        `paragraph\n${block}`,
        `[link](/x)${block}`,
        `*em*${block}`,
        `\`code\`${block}`,
        `- item ${block}`,
        `\`\`\`js ${block}\nx\n\`\`\``,
        `> quote ${block}`,
        `![img](x.png)${block}`,
        block,
      ]) {
        assertRendersSafely(source);
      }
    });
  }
  it('drops every attribute but id and class', () => {
    assert.equal(renderMarkdown('para {onclick=alert(1)}'), '<p>para</p>\n');
    assert.equal(renderMarkdown('para {style="color:red"}'), '<p>para</p>\n');
    assert.equal(renderMarkdown('[l](/ok){href=javascript:alert(1) target=_blank rel=opener}'), '<p><a href="/ok">l</a></p>\n');
    assert.equal(renderMarkdown('# T {.a .b #x onmouseover=alert(1)}'), '<h1 class="a b" id="x">T</h1>\n');
  });
  it('keeps hostile id and class values inside their attribute', () => {
    const html = renderMarkdown('para {#x"onclick="alert(1) .a\'b}');
    assert.deepEqual(problemsIn(html), []);
    assert.equal(html, '<p id="x&quot;onclick=&quot;alert(1)" class="a\'b">para</p>\n');
    // With `>` or `<` inside, the block is not an attribute block at all: it stays text.
    assert.equal(renderMarkdown('para {#x"><script>}'), '<p>para {#x"&gt;&lt;script&gt;}</p>\n');
  });
});

describe('links to repository paths', () => {
  const hostilePaths = [
    '/🗄/../../etc/passwd',
    '/🗄/..%2F..%2Fetc%2Fpasswd',
    '/🗄/x.md#"><script>alert(1)</script>',
    '/🗄/x.md#%22%3E%3Cscript%3Ealert(1)%3C/script%3E',
    '/🗄/x.md#javascript:alert(1)',
    '/🗄/%00.md',
    '/🗄/%E0%A4%A.md',
    '/%F0%9F%97%84/%2e%2e/%2e%2e/',
    '/🗄/x.md?"onmouseover="alert(1)',
  ];
  for (const path of hostilePaths) {
    it(`renders a link to ${JSON.stringify(path)} safely, resolved or not`, () => {
      for (const source of [`[x](${path})`, `[x](<${path}>)`, `[x][r]\n\n[r]: ${path}`]) {
        assertRendersSafely(source);
        assertRendersSafely(source, { resolveLink: () => '/resolved' });
        assertRendersSafely(source, {});
      }
    });
  }
  it('marks a traversal path missing and keeps it on this origin', () => {
    const seen: string[] = [];
    const html = renderMarkdown('[x](/🗄/../../etc/passwd)', undefined, { resolveLink: (path) => (seen.push(path), undefined) });
    assert.deepEqual(seen, ['/🗄/../../etc/passwd']);
    assert.equal(html, '<p><a class="is-missing-link" href="/%F0%9F%97%84/../../etc/passwd">x</a></p>\n');
  });
  it('keeps a hostile fragment encoded', () => {
    assert.equal(
      renderMarkdown('[x](/🗄/ok.md#"><script>alert(1)</script>)', undefined, RESOLVER),
      '<p><a href="/ok#%22%3E%3Cscript%3Ealert(1)%3C/script%3E">x</a></p>\n',
    );
  });

  const hostileResults = [
    'javascript:alert(1)',
    ' javascript:alert(1)',
    'java\tscript:alert(1)',
    'JAVASCRIPT:alert(1)',
    'vbscript:msgbox(1)',
    'data:text/html,<script>alert(1)</script>',
    '//evil.test/',
    '\\\\evil.test/',
    '/\\evil.test/',
    '"><script>alert(1)</script>',
    '/ok" onclick="alert(1)',
    "https://ok.test/' onmouseover='alert(1)",
    '/ok#"><img src=x onerror=alert(1)>',
    '\u0000javascript:alert(1)',
    '',
  ];
  for (const result of hostileResults) {
    it(`sanitises what a resolver returns: ${JSON.stringify(result)}`, () => {
      for (const source of ['[x](/🗄/a.md)', '[x](/🗄/a.md#frag)', '# [x](/🗄/a.md)']) {
        assertRendersSafely(source, { resolveLink: () => result });
      }
    });
  }
  it('treats a resolver result that is not a link as missing', () => {
    assert.equal(
      renderMarkdown('[x](/🗄/a.md)', undefined, { resolveLink: () => 'javascript:alert(1)' }),
      '<p><a class="is-missing-link" href="/%F0%9F%97%84/a.md">x</a></p>\n',
    );
    assert.equal(renderMarkdown('[x](/🗄/a.md)', undefined, { resolveLink: () => '/ok" onclick="alert(1)' }), '<p><a href="/ok%22%20onclick=%22alert(1)">x</a></p>\n');
    assert.equal(renderMarkdown('[x](/🗄/a.md)', undefined, { resolveLink: () => '//evil.test/' }), '<p><a>x</a></p>\n');
    // Only JavaScript callers can return something other than a string.
    const untyped = { resolveLink: () => ({ toString: () => 'javascript:alert(1)' }) } as unknown as RenderContext;
    assert.equal(renderMarkdown('[x](/🗄/a.md)', undefined, untyped), '<p><a class="is-missing-link" href="/%F0%9F%97%84/a.md">x</a></p>\n');
  });
});

describe('nesting and mutation tricks', () => {
  const sources = [
    '[a [b](/x)](javascript:alert(1))',
    '[https://evil.test/](/ok) https://ok.test/[x](javascript:alert(1))',
    '<https://ok.test/"onmouseover="alert(1)>',
    '<https://ok.test/><script>alert(1)</script>',
    '[x](/ok "title" onclick="alert(1)")',
    '[x](/ok \'a" onclick="b\')',
    '**[x](javascript:alert(1))**',
    '`<script>`alert(1)`</script>`',
    '```html\n<script>alert(1)</script>\n```',
    '    <img src=x onerror=alert(1)>',
    '> - > - [x](javascript:alert(1))',
    '# <a href="javascript:alert(1)">x</a> {#id}',
    '[x\n](javascript:alert(1))',
    '[x](java\nscript:alert(1))',
    '[x](\u0000javascript:alert(1))',
    '&lt;script&gt;alert(1)&lt;/script&gt;',
    '&#60;img src=x onerror=alert(1)&#62;',
    '\\<script>alert(1)\\</script>',
    `${'> '.repeat(200)}<script>alert(1)</script>`,
    `${'['.repeat(200)}x${'](javascript:alert(1))'.repeat(200)}`,
    'https://ok.test/</a><script>alert(1)</script>',
    'mailto:x@evil.test?body=<script>alert(1)</script>',
    'x@evil.test"onmouseover="alert(1)',
    'https://ok.test/"><img src=x onerror=alert(1)>',
  ];
  for (const source of sources) it(`renders ${JSON.stringify(source.slice(0, 60))} safely`, () => assertRendersSafely(source));
});

describe('random Markdown', () => {
  const pieces = [
    'a', ' ', '\n', '\n\n', '\t', '    ', '#', '# ', '>', '- ', '1. ', '*', '_', '`', '```', '~~', '[', ']', '(', ')', '<', '>', '!',
    '{', '}', '{.x}', '{#y}', '{onclick=alert(1)}', '{style=x}', '"', "'", '=', '\\', '&', '&#x09;', '&lt;', '--', '---', '  \n',
    'javascript:', 'alert(1)', 'https://ok.test/', '//evil.test', 'data:text/html,x', '/🗄/ok.md', '/🗄/x.md', '#frag', '/%F0%9F%97%84/',
    '<script>', '</script>', '<img src=x onerror=alert(1)>', '<svg onload=alert(1)>', '<a href="javascript:alert(1)">', 'é', '日本',
  ];
  it('always renders safe, stable HTML', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...pieces), { maxLength: 30 }), fc.constantFrom(...OPTION_SETS), (parts, options) => {
        const source = parts.join('');
        assertSafe(renderMarkdown(source, options, RESOLVER), source);
      }),
      { numRuns: 1500, seed: 20260110 },
    );
  });
});
