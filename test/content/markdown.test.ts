/**
 * The rich-text renderer (src/content/markdown.ts): each option alone and together, heading ids,
 * links to repository paths, attribute blocks, plain text, sections and option parsing. Outputs
 * are pinned exactly: they are what views print.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  markdownSections,
  markdownText,
  parseRenderOptions,
  renderMarkdown,
  type MarkdownOptions,
  type RenderContext,
} from '../../src/content/markdown.js';
import { slugify } from '../../src/content/slug.js';

type Row = [source: string, expected: string];

function rows(title: string, options: MarkdownOptions | undefined, table: Row[], context?: RenderContext): void {
  describe(title, () => {
    for (const [source, expected] of table) {
      it(`renders ${JSON.stringify(source)}`, () => assert.equal(renderMarkdown(source, options, context), expected));
    }
  });
}

rows('renderMarkdown without options', undefined, [
  ['# Title\n\nSome *em* and **strong**.', '<h1>Title</h1>\n<p>Some <em>em</em> and <strong>strong</strong>.</p>\n'],
  ['- a\n- b\n\n1. c', '<ul>\n<li>a</li>\n<li>b</li>\n</ul>\n<ol>\n<li>c</li>\n</ol>\n'],
  ['`a < b` ~~gone~~', '<p><code>a &lt; b</code> <s>gone</s></p>\n'],
  ['```js\nlet a = 1 < 2;\n```', '<pre><code class="language-js">let a = 1 &lt; 2;\n</code></pre>\n'],
  ['    indented', '<pre><code>indented\n</code></pre>\n'],
  ['line  \nbreak', '<p>line<br />\nbreak</p>\n'],
  ['<b>raw</b> html', '<p>&lt;b&gt;raw&lt;/b&gt; html</p>\n'],
  ['![a *cat*](cat.png)', '<p>a cat</p>\n'],
  ['| a | b |\n|---|---|\n| 1 | 2 |', '<p>| a | b |\n|---|---|\n| 1 | 2 |</p>\n'],
  ['a\n\n---\n\nb', '<p>a</p>\n\n<p>b</p>\n'],
  ['[t](https://example.com/ "title") [r](a/b)', '<p><a href="https://example.com/">t</a> <a href="a/b">r</a></p>\n'],
  ['<https://example.com/> but not https://example.com/', '<p><a href="https://example.com/">https://example.com/</a> but not https://example.com/</p>\n'],
  ['# No id\n\n## Here', '<h1>No id</h1>\n<h2>Here</h2>\n'],
  ['a -- b --- c', '<p>a -- b --- c</p>\n'],
  ['', ''],
]);

describe('autolink', () => {
  rows('true', { autolink: true }, [
    ['see https://example.com/a?b=1 now', '<p>see <a href="https://example.com/a?b=1">https://example.com/a?b=1</a> now</p>\n'],
    ['mail ann@example.com', '<p>mail <a href="mailto:ann@example.com">ann@example.com</a></p>\n'],
    ['www.example.com and sahara.md stay text', '<p>www.example.com and sahara.md stay text</p>\n'],
    ['ftp://example.com and //example.com stay text', '<p>ftp://example.com and //example.com stay text</p>\n'],
    ['`https://example.com` in code', '<p><code>https://example.com</code> in code</p>\n'],
  ]);
  rows("'blank'", { autolink: 'blank' }, [
    [
      'see https://example.com/',
      '<p>see <a href="https://example.com/" target="_blank" rel="noopener noreferrer">https://example.com/</a></p>\n',
    ],
    [
      '[written](https://a.test/) <https://b.test/> https://c.test/',
      '<p><a href="https://a.test/">written</a> <a href="https://b.test/">https://b.test/</a> <a href="https://c.test/" target="_blank" rel="noopener noreferrer">https://c.test/</a></p>\n',
    ],
  ]);
  rows('false', { autolink: false }, [['see https://example.com/', '<p>see https://example.com/</p>\n']]);
});

describe('minimumHeaderLevel', () => {
  rows('2', { minimumHeaderLevel: 2 }, [
    ['# A\n\n## B\n\n### C', '<h2>A</h2>\n<h3>B</h3>\n<h4>C</h4>\n'],
    ['## Already\n\n### Low', '<h2>Already</h2>\n<h3>Low</h3>\n'],
    ['> # Quoted\n\n## B', '<blockquote>\n<h2>Quoted</h2>\n</blockquote>\n<h3>B</h3>\n'],
    ['Setext\n===', '<h2>Setext</h2>\n'],
    ['no headings', '<p>no headings</p>\n'],
  ]);
  rows('3, capped at h6', { minimumHeaderLevel: 3 }, [
    ['# A\n## B\n### C\n#### D\n##### E\n###### F', '<h3>A</h3>\n<h4>B</h4>\n<h5>C</h5>\n<h6>D</h6>\n<h6>E</h6>\n<h6>F</h6>\n'],
  ]);
  rows('6', { minimumHeaderLevel: 6 }, [['# A\n## B', '<h6>A</h6>\n<h6>B</h6>\n']]);
  rows('1', { minimumHeaderLevel: 1 }, [['# A\n## B', '<h1>A</h1>\n<h2>B</h2>\n']]);
});

describe('generateHeaderId', () => {
  rows('on', { generateHeaderId: true }, [
    ['# Café au lait', '<h1 id="café-au-lait">Café au lait</h1>\n'],
    ['## Intro\n\n## Intro\n\n## Intro', '<h2 id="intro">Intro</h2>\n<h2 id="intro-2">Intro</h2>\n<h2 id="intro-3">Intro</h2>\n'],
    ['# Über *uns* & `code` [link](/x)', '<h1 id="über-uns-code-link">Über <em>uns</em> &amp; <code>code</code> <a href="/x">link</a></h1>\n'],
    ['# 日本語の見出し\n\n# Ελληνικά', '<h1 id="日本語の見出し">日本語の見出し</h1>\n<h1 id="ελληνικά">Ελληνικά</h1>\n'],
    ['# !!!\n\n# ???', '<h1 id="section">!!!</h1>\n<h1 id="section-2">???</h1>\n'],
    ['# Explicit {#top}', '<h1 id="top">Explicit</h1>\n'],
    ['# Top\n\n## Other {#top}', '<h1 id="top-2">Top</h1>\n<h2 id="top">Other</h2>\n'],
    ['## Other {#top}\n\n# Top', '<h2 id="top">Other</h2>\n<h1 id="top-2">Top</h1>\n'],
    ['# A {#x}\n\n# B {#x}', '<h1 id="x">A</h1>\n<h1 id="x-2">B</h1>\n'],
    ['# Note\n\nA paragraph {#note}', '<h1 id="note-2">Note</h1>\n<p id="note">A paragraph</p>\n'],
    ['# Line\nbreak\n\nSetext\nheading\n---', '<h1 id="line">Line</h1>\n<p>break</p>\n<h2 id="setext-heading">Setext\nheading</h2>\n'],
    ['# ![Alt text](a.png)', '<h1 id="alt-text">Alt text</h1>\n'],
  ]);
  it('gives the same id to a title in composed and decomposed form', () => {
    assert.equal(renderMarkdown('# Cafe\u0301', { generateHeaderId: true }), '<h1 id="caf\u00e9">Cafe\u0301</h1>\n');
  });
  it('numbers ids within one document only', () => {
    const once = renderMarkdown('# Intro', { generateHeaderId: true });
    assert.equal(renderMarkdown('# Intro', { generateHeaderId: true }), once);
    assert.equal(once, '<h1 id="intro">Intro</h1>\n');
  });
  rows('off: explicit ids only', { generateHeaderId: false }, [['# A {#a}\n\n# B', '<h1 id="a">A</h1>\n<h1>B</h1>\n']]);
});

describe('slugify', () => {
  const table: Row[] = [
    ['Café au lait', 'café-au-lait'],
    ['Hello, World!', 'hello-world'],
    ['  Über  uns ', 'über-uns'],
    ['2.1 — Les élèves', '2-1-les-élèves'],
    ['日本語の見出し', '日本語の見出し'],
    ['C++ & C#', 'c-c'],
    ["Don't panic", 'don-t-panic'],
    ['snake_case and kebab-case', 'snake-case-and-kebab-case'],
    ['Emoji 🎉 party', 'emoji-party'],
    ['ÉCOLE', 'école'],
    ['Cafe\u0301', 'café'],
    ['!!!', ''],
    ['', ''],
  ];
  for (const [title, slug] of table) it(`makes ${JSON.stringify(slug)} of ${JSON.stringify(title)}`, () => assert.equal(slugify(title), slug));
});

describe('typography', () => {
  rows('on', { typography: true }, [
    ['a -- b, 1--2, a---b, a --- b', '<p>a — b, 1—2, a–b, a – b</p>\n'],
    ['use --verbose or ---- or -----', '<p>use --verbose or ---- or -----</p>\n'],
    ['`a -- b` and\n\n    a -- b', '<p><code>a -- b</code> and</p>\n<pre><code>a -- b\n</code></pre>\n'],
    ['"quotes" \'single\' (c) (tm) ... +-', '<p>"quotes" \'single\' (c) (tm) ... +-</p>\n'],
    ['escaped \\-- stays', '<p>escaped -- stays</p>\n'],
    ['# A -- B', '<h1>A — B</h1>\n'],
  ]);
  rows('with autolink', { typography: true, autolink: true }, [
    ['https://x.test/a--b -- <https://y.test/c--d>', '<p><a href="https://x.test/a--b">https://x.test/a--b</a> — <a href="https://y.test/c--d">https://y.test/c--d</a></p>\n'],
  ]);
});

describe('classes', () => {
  rows(
    'on every element of the tag',
    { classes: { p: 'lead', ul: 'list', ol: 'steps', li: 'item', blockquote: 'quote', strong: 'bold', em: 'it', s: 'gone', a: 'link', br: 'brk' } },
    [
      ['- a\n- b\n\n1. c', '<ul class="list">\n<li class="item">a</li>\n<li class="item">b</li>\n</ul>\n<ol class="steps">\n<li class="item">c</li>\n</ol>\n'],
      ['> q', '<blockquote class="quote">\n<p class="lead">q</p>\n</blockquote>\n'],
      ['**b** *i* ~~s~~ [l](/x)', '<p class="lead"><strong class="bold">b</strong> <em class="it">i</em> <s class="gone">s</s> <a class="link" href="/x">l</a></p>\n'],
      ['a  \nb', '<p class="lead">a<br class="brk" />\nb</p>\n'],
      ['- loose\n\n- list', '<ul class="list">\n<li class="item">\n<p class="lead">loose</p>\n</li>\n<li class="item">\n<p class="lead">list</p>\n</li>\n</ul>\n'],
    ],
  );
  rows('on code and pre', { classes: { code: 'mono', pre: 'block' } }, [
    ['`x`', '<p><code class="mono">x</code></p>\n'],
    ['    x', '<pre class="block"><code class="mono">x\n</code></pre>\n'],
    ['```py\nx\n```', '<pre class="block"><code class="language-py mono">x\n</code></pre>\n'],
    ['```py {.hl}\nx\n```', '<pre class="hl block"><code class="language-py mono">x\n</code></pre>\n'],
  ]);
  rows('after the attribute blocks', { classes: { p: 'lead', h2: 'title is-size-4' } }, [
    ['text {.mine}', '<p class="mine lead">text</p>\n'],
    ['## Heading {.own}', '<h2 class="own title is-size-4">Heading</h2>\n'],
  ]);
  rows('on the shifted headings', { minimumHeaderLevel: 2, classes: { h1: 'one', h2: 'two', h3: 'three' } }, [
    ['# A\n\n## B', '<h2 class="two">A</h2>\n<h3 class="three">B</h3>\n'],
  ]);
  rows('with spaces tidied and unknown elements ignored', { classes: { p: '  a   b ', span: 'x', img: 'y', h1: '' } }, [['# T\n\nx', '<h1>T</h1>\n<p class="a b">x</p>\n']]);
});

describe('options together', () => {
  const options: MarkdownOptions = {
    autolink: 'blank',
    minimumHeaderLevel: 2,
    generateHeaderId: true,
    typography: true,
    classes: { h2: 'title', h3: 'subtitle', a: 'link', p: 'text' },
  };
  const resolveLink = (path: string): string | undefined => (path === '/🗄/Article/places/sahara.md' ? '/places/sahara' : undefined);
  it('applies all of them', () => {
    assert.equal(
      renderMarkdown(
        '# Sahara -- the desert\n\n## Dunes {#dunes .big}\n\nSee https://example.com/ and [the oasis](/🗄/Article/places/sahara.md#oasis) or [gone](/🗄/gone.md).',
        options,
        { resolveLink },
      ),
      '<h2 id="sahara-the-desert" class="title">Sahara — the desert</h2>\n' +
        '<h3 id="dunes" class="big subtitle">Dunes</h3>\n' +
        '<p class="text">See <a class="link" href="https://example.com/" target="_blank" rel="noopener noreferrer">https://example.com/</a> and ' +
        '<a class="link" href="/places/sahara#oasis">the oasis</a> or <a class="is-missing-link link" href="/%F0%9F%97%84/gone.md">gone</a>.</p>\n',
    );
  });
  it('gives the same output every time, whatever was rendered before', () => {
    const source = '# A\n\n# A\n\nhttps://x.test/ -- [d](/🗄/x.md)';
    const first = renderMarkdown(source, options, { resolveLink });
    renderMarkdown(source, { generateHeaderId: true });
    renderMarkdown(source);
    assert.equal(renderMarkdown(source, { ...options }, { resolveLink }), first);
    assert.equal(renderMarkdown(source, { ...options, classes: { p: 'text', a: 'link', h3: 'subtitle', h2: 'title' } }, { resolveLink }), first);
  });
});

describe('links to repository paths', () => {
  const calls: string[] = [];
  const pages: Record<string, string> = {
    '/🗄/Article/places/sahara.md': '/places/sahara',
    '/🗄/Article/places/café.md': '/places/café',
    '/🗄/Article/a b.md': '/a-b',
  };
  const context: RenderContext = {
    resolveLink(path) {
      calls.push(path);
      return pages[path];
    },
  };
  rows(
    'resolved',
    undefined,
    [
      ['[S](/🗄/Article/places/sahara.md)', '<p><a href="/places/sahara">S</a></p>\n'],
      ['[S](/🗄/Article/places/sahara.md#dunes)', '<p><a href="/places/sahara#dunes">S</a></p>\n'],
      ['[S](/%F0%9F%97%84/Article/places/sahara.md#x)', '<p><a href="/places/sahara#x">S</a></p>\n'],
      ['[S](/%f0%9f%97%84/Article/places/sahara.md)', '<p><a href="/places/sahara">S</a></p>\n'],
      ['[C](/🗄/Article/places/caf%C3%A9.md)', '<p><a href="/places/caf%C3%A9">C</a></p>\n'],
      ['[C](</🗄/Article/a b.md>)', '<p><a href="/a-b">C</a></p>\n'],
      ['[S][s]\n\n[s]: /🗄/Article/places/sahara.md', '<p><a href="/places/sahara">S</a></p>\n'],
      ['[S](/🗄/Article/places/sahara.md){.button}', '<p><a class="button" href="/places/sahara">S</a></p>\n'],
    ],
    context,
  );
  rows(
    'missing',
    undefined,
    [
      ['[M](/🗄/Article/missing.md)', '<p><a class="is-missing-link" href="/%F0%9F%97%84/Article/missing.md">M</a></p>\n'],
      ['[M](/🗄/Article/missing.md#part){.button}', '<p><a class="button is-missing-link" href="/%F0%9F%97%84/Article/missing.md#part">M</a></p>\n'],
      // markdown-it escapes the stray `%` of `%A.`; the rest is a UTF-8 sequence cut short, which does not decode.
      ['[M](/%F0%9F%97%84/bad%E0%A4%A.md)', '<p><a class="is-missing-link" href="/%F0%9F%97%84/bad%E0%A4%25A.md">M</a></p>\n'],
    ],
    context,
  );
  rows('other links untouched', undefined, [
    ['[a](/places/sahara) [b](https://example.com/🗄/x.md) [c](🗄/x.md) [d](#top)', '<p><a href="/places/sahara">a</a> <a href="https://example.com/%F0%9F%97%84/x.md">b</a> <a href="%F0%9F%97%84/x.md">c</a> <a href="#top">d</a></p>\n'],
  ], context);
  rows('without a resolver', undefined, [['[M](/🗄/Article/places/sahara.md)', '<p><a class="is-missing-link" href="/%F0%9F%97%84/Article/places/sahara.md">M</a></p>\n']]);
  rows('with a resolver returning what is not a link', undefined, [['[M](/🗄/x.md)', '<p><a class="is-missing-link" href="/%F0%9F%97%84/x.md">M</a></p>\n']], {
    resolveLink: () => 'javascript:alert(1)',
  });
  it('gives the resolver the decoded path without fragment, once per link', () => {
    calls.length = 0;
    renderMarkdown('[a](/🗄/Article/places/caf%C3%A9.md#x) [b](/%F0%9F%97%84/Article/a%20b.md) [c](/other)', undefined, context);
    assert.deepEqual(calls, ['/🗄/Article/places/café.md', '/🗄/Article/a b.md']);
  });
  it('calls the resolver as a method of the context', () => {
    const owner = {
      prefix: '/docs',
      resolveLink(this: { prefix: string }, path: string) {
        return `${this.prefix}${path.slice('/🗄'.length)}`;
      },
    };
    assert.equal(renderMarkdown('[a](/🗄/x.md)', undefined, owner), '<p><a href="/docs/x.md">a</a></p>\n');
  });
});

describe('attribute blocks', () => {
  rows('ids and classes only', undefined, [
    ['# Title {.a .b #x}', '<h1 class="a b" id="x">Title</h1>\n'],
    ['para {#p .c}', '<p id="p" class="c">para</p>\n'],
    ['*em*{.x} [l](/a){.btn}', '<p><em class="x">em</em> <a class="btn" href="/a">l</a></p>\n'],
    ['- item {.i}', '<ul>\n<li class="i">item</li>\n</ul>\n'],
    ['para {onclick=alert(1)}', '<p>para</p>\n'],
    ['para {.a onclick=alert(1) #b}', '<p class="a" id="b">para</p>\n'],
    ['para {style="color:red" data-x=1 title=t}', '<p>para</p>\n'],
    ['[l](/a){href=javascript:alert(1)}', '<p><a href="/a">l</a></p>\n'],
    ['`c`{.k}', '<p><code class="k">c</code></p>\n'],
    ['para {..module}', '<p>para</p>\n'],
  ]);
});

describe('markdownText', () => {
  const table: Row[] = [
    ['# Title {#t}\n\nSome *text* &amp; **more**.', 'Title\nSome text & more.'],
    ['soft\nbreak and hard  \nbreak', 'soft break and hard\nbreak'],
    ['- a\n- b\n\n> quoted', 'a\nb\nquoted'],
    ['![alt *text*](a.png) [link](/x)', 'alt text link'],
    ['```js\nlet a = 1;\nlet b = 2;\n```\n\n    indented', 'let a = 1;\nlet b = 2;\nindented'],
    ['<b>raw</b> \\*escaped\\*', '<b>raw</b> *escaped*'],
    ['a -- b', 'a -- b'],
    ['', ''],
  ];
  for (const [source, text] of table) it(`reads ${JSON.stringify(source)} as ${JSON.stringify(text)}`, () => assert.equal(markdownText(source), text));
});

describe('markdownSections', () => {
  it('lists the top-most level present, with ids and titles', () => {
    assert.deepEqual(markdownSections('Intro\n\n## First *one*\n\n### Detail\n\n## Second {#two}\n\n## First one'), [
      { id: 'first-one', title: 'First one' },
      { id: 'two', title: 'Second' },
      { id: 'first-one-2', title: 'First one' },
    ]);
  });
  it('uses h1 when there is one', () => {
    assert.deepEqual(markdownSections('## a\n\n# B\n\n## c'), [{ id: 'b', title: 'B' }]);
  });
  it('gives the ids renderMarkdown gives', () => {
    const source = '# Top\n\n## Top\n\n# Other {#top}\n\n# Café -- noir\n\n# !!!';
    for (const options of [{}, { typography: true }, { minimumHeaderLevel: 3, classes: { h3: 'x' } }] as MarkdownOptions[]) {
      const html = renderMarkdown(source, { ...options, generateHeaderId: true });
      const sections = markdownSections(source, options);
      const ids = [...html.matchAll(/<h3 id="([^"]*)"|<h1 id="([^"]*)"/g)].map((m) => m[1] ?? m[2]);
      assert.deepEqual(sections.map((s) => s.id), ids, JSON.stringify(options));
    }
    assert.deepEqual(markdownSections(source, { typography: true }), [
      { id: 'top-2', title: 'Top' },
      { id: 'top', title: 'Other' },
      { id: 'café-noir', title: 'Café — noir' },
      { id: 'section', title: '!!!' },
    ]);
  });
  it('reads levels from the source, whatever minimumHeaderLevel does to them', () => {
    assert.deepEqual(markdownSections('# A\n\n## B', { minimumHeaderLevel: 6 }), [{ id: 'a', title: 'A' }]);
  });
  it('is empty without headings', () => assert.deepEqual(markdownSections('just text'), []));
});

describe('parseRenderOptions', () => {
  const good: [Record<string, unknown>, MarkdownOptions][] = [
    [{}, {}],
    [{ autolink: true, minimumHeaderLevel: 2, generateHeaderId: false, typography: true }, { autolink: true, minimumHeaderLevel: 2, generateHeaderId: false, typography: true }],
    [{ autolink: 'blank', minimumHeaderLevel: '3', generateHeaderId: 'true', typography: 'false' }, { autolink: 'blank', minimumHeaderLevel: 3, generateHeaderId: true, typography: false }],
    [{ autolink: 'false' }, { autolink: false }],
    [{ h2: 'title is-size-4', p: 'lead', a: '' }, { classes: { h2: 'title is-size-4', p: 'lead' } }],
    [{ li: '  a   b ' }, { classes: { li: 'a b' } }],
  ];
  for (const [raw, options] of good) it(`reads ${JSON.stringify(raw)}`, () => assert.deepEqual(parseRenderOptions(raw), options));

  const bad: [Record<string, unknown>, string][] = [
    [{ autolink: 'yes' }, 'autolink takes true, false or blank, not "yes"'],
    [{ autolink: 1 }, 'autolink takes true, false or blank, not 1'],
    [{ minimumHeaderLevel: 7 }, 'minimumHeaderLevel takes a whole number from 1 to 6, not 7'],
    [{ minimumHeaderLevel: '0' }, 'minimumHeaderLevel takes a whole number from 1 to 6, not "0"'],
    [{ minimumHeaderLevel: 2.5 }, 'minimumHeaderLevel takes a whole number from 1 to 6, not 2.5'],
    [{ minimumHeaderLevel: 'two' }, 'minimumHeaderLevel takes a whole number from 1 to 6, not "two"'],
    [{ generateHeaderId: 'yes' }, 'generateHeaderId takes true or false, not "yes"'],
    [{ typography: 1 }, 'typography takes true or false, not 1'],
    [{ h2: 'x" onclick="y' }, `h2 takes class names separated by spaces, such as 'h2=lead wide', not "x\\" onclick=\\"y"`],
    [{ p: 3 }, `p takes class names separated by spaces, such as 'p=lead wide', not 3`],
    [{ span: 'x' }, '"span" is not a rendering option; use autolink, minimumHeaderLevel, generateHeaderId, typography, or an element name (p, h1, a…) with class names'],
    [{ autoLink: true }, '"autoLink" is not a rendering option; use autolink, minimumHeaderLevel, generateHeaderId, typography, or an element name (p, h1, a…) with class names'],
    [{ generateHeaderId: 'x'.repeat(100) }, `generateHeaderId takes true or false, not "${'x'.repeat(38)}…`],
  ];
  for (const [raw, message] of bad) it(`refuses ${JSON.stringify(raw).slice(0, 60)}`, () => assert.equal(parseRenderOptions(raw), message));

  it('gives options renderMarkdown applies', () => {
    const options = parseRenderOptions({ minimumHeaderLevel: '2', generateHeaderId: 'true', h2: 'title' });
    assert.equal(typeof options, 'object');
    assert.equal(renderMarkdown('# A', options as MarkdownOptions), '<h2 id="a" class="title">A</h2>\n');
  });
});

describe('robustness', () => {
  const sources = [
    '>'.repeat(10_000) + ' deep',
    '- '.repeat(5_000) + 'deep',
    '*'.repeat(10_000),
    '['.repeat(10_000) + ']('.repeat(10_000),
    '{'.repeat(5_000) + '#x .y' + '}'.repeat(5_000),
    '# {#}\n\n# {.}\n\n{}\n\n{#a}{#b}{.c}',
    '\u0000\uFFFD\uD800 lone surrogate \u202E rtl',
    '[x](/🗄/%E0%A4%A)',
    'a\r\nb\rc',
    '```\nunclosed',
  ];
  const options: MarkdownOptions = { autolink: 'blank', minimumHeaderLevel: 3, generateHeaderId: true, typography: true, classes: { p: 'x' } };
  for (const source of sources) {
    it(`renders ${JSON.stringify(source.slice(0, 40))} without throwing`, () => {
      assert.equal(typeof renderMarkdown(source), 'string');
      assert.equal(typeof renderMarkdown(source, options, { resolveLink: () => undefined }), 'string');
      assert.equal(typeof markdownText(source), 'string');
      assert.ok(Array.isArray(markdownSections(source, options)));
    });
  }
});
