/**
 * Rich text in scripts (docs/content.md "Rich text in scripts"): a `markdown` or `html` field
 * read in a script has the members a view's rich-text value has — `html(options)`, `sections()`,
 * `text()`, `markdown()`, `value`, `empty`, `length` — while its JSON stays the rendered HTML and
 * it still passes as safe HTML (concatenation, a supplier's export printed raw, an html field).
 * And `render:` options of `html` fields, in scripts and views, cleaned with the allow-list. On
 * both engines for `📦` models, and for a `🗄` static model (its documents and links).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseFragment, type DefaultTreeAdapterMap } from 'parse5';
import { serve, type Served } from '../helpers.js';
import { ENGINES } from '../support/engines.js';
import { ALLOWED_ELEMENTS, hrefIsSafe } from '../support/safe-html.js';

const J = { accept: 'application/json' };
const json = (r: { status: number; text: string }): Record<string, unknown> => {
  assert.equal(r.status, 200, r.text);
  return JSON.parse(r.text) as Record<string, unknown>;
};

type Node = DefaultTreeAdapterMap['node'];

/** What a browser would find beyond the allow-list in `html` (empty when it is safe). */
function problemsIn(html: string): string[] {
  const problems: string[] = [];
  const walk = (node: Node): void => {
    if (node.nodeName === '#comment') problems.push('comment');
    if ('tagName' in node) {
      if (!ALLOWED_ELEMENTS.has(node.tagName)) problems.push(`element ${node.tagName}`);
      for (const { name, value } of node.attrs) {
        const allowed = name === 'id' || name === 'class' || (node.tagName === 'a' && (name === 'href' || (name === 'target' && value === '_blank') || (name === 'rel' && value === 'noopener noreferrer')));
        if (!allowed) problems.push(`attribute ${name}="${value}" on ${node.tagName}`);
        if (name === 'href' && !hrefIsSafe(value)) problems.push(`href ${JSON.stringify(value)}`);
      }
    }
    if ('childNodes' in node) for (const child of node.childNodes) walk(child);
  };
  walk(parseFragment(html));
  return problems;
}

const BODY = '# Intro\n\nSome *text* -- here.\n\n## Part one\n\nMore.\n\n# Outro\n\nEnd.\n';
const BODY_HTML =
  '<h1 id="intro">Intro</h1>\n<p class="lead">Some <em>text</em> -- here.</p>\n<h2 id="part-one">Part one</h2>\n<p class="lead">More.</p>\n<h1 id="outro">Outro</h1>\n<p class="lead">End.</p>\n';
const BIO = '<h1>About me</h1><p>I write <em>code</em> -- see https://example.com/a--b</p><pre>a -- b</pre>';
const BIO_HTML =
  '<h2 id="about-me">About me</h2><p class="lead">I write <em>code</em> — see <a href="https://example.com/a--b">https://example.com/a--b</a></p><pre>a -- b</pre>';
const NOTE = '<p>plain <strong>note</strong></p>';

/** Hostile HTML for an html field whose `render:` adds classes, ids and links. */
const HOSTILE = [
  '<h2 onclick="alert(1)">&quot;&gt;&lt;img src=x onerror=alert(1)&gt;</h2>',
  '<p style="color:red">see javascript:alert(1) and data:text/html,x and https://ok.example/ok</p>',
  '<p><a href="javascript:alert(1)" target="_top">a</a> <a href="//evil.example/">b</a> <img src=x onerror=alert(1)></p>',
  '<script>alert(1)</script><svg onload="alert(1)"><p>in svg</p></svg>',
  '<h3 id="x" class="a">&lt;/h3&gt;&lt;script&gt;alert(1)&lt;/script&gt;</h3>',
].join('');

/** Explicit and generated heading ids, a list, a line break, entities. */
const OUTLINE = '<h2 id="top">A &amp; B</h2><ul><li class="x">one</li><li>two<br>three</li></ul><h2>A &amp; B</h2><h2>Top</h2><p>  spaced\n  out  </p>';

const APP = {
  '📦/🌐Post.yaml': [
    'title: string',
    'body:',
    '  type: markdown',
    '  render: {generateHeaderId: true, p: lead}',
    'bio?:',
    '  type: html',
    '  render: {p: lead, minimumHeaderLevel: 2, generateHeaderId: true, autolink: true, typography: true}',
    'note?: html',
    'copy?: markdown',
    'copyHtml?: html',
    'outline?:',
    '  type: html',
    '  render: {generateHeaderId: true, li: item}',
    'hostile?:',
    '  type: html',
    '  max: 5000',
    '  render: {generateHeaderId: true, autolink: blank, a: ext, p: lead}',
    '',
  ].join('\n'),
  'seed/POST.js': [
    "import {Post} from '📦';",
    `const p = new Post().title('first').body(${JSON.stringify(BODY)}).bio(${JSON.stringify(BIO)}).note(${JSON.stringify(NOTE)});`,
    `p.hostile(${JSON.stringify(HOSTILE)});`,
    `p.outline(${JSON.stringify(OUTLINE)});`,
    "new Post().title('blank').body('   \\n').bio('<p> <br></p>');",
    '({id: p.id});',
  ].join('\n'),
  'members/GET.js': [
    "import {Post} from '📦';",
    "const p = Post.title('first').get();",
    '({',
    '  html: p.body.html(),',
    "  shifted: p.body.html({minimumHeaderLevel: 2, h2: 'title is-4'}),",
    '  sections: p.body.sections(),',
    '  text: p.body.text(),',
    '  markdown: p.body.markdown(),',
    '  value: p.body.value,',
    '  empty: p.body.empty,',
    '  length: p.body.length,',
    '  valid: p.body.valid,',
    '  invalid: p.body.invalid,',
    "  blank: Post.title('blank').get().body.empty,",
    "  blankBio: Post.title('blank').get().bio.empty,",
    // Callbacks that read members (their synchronous variants meet the host and start again).
    '  texts: Post.all().asc().filter((x) => !x.body.empty).map((x) => x.body.sections().length),',
    '})',
  ].join('\n'),
  'json/GET.js': [
    "import {Post} from '📦';",
    "const p = Post.title('first').get();",
    "({raw: p.body, bio: p.bio, note: p.note, record: p, stringified: JSON.stringify({b: p.body, n: p.note}), mapped: Post.title('first').map((x) => ({body: x.body}))})",
  ].join('\n'),
  'body/GET.js': "import {Post} from '📦';\nPost.title('first').get().body;\n",
  'safe/GET.js': [
    "import {Post} from '📦';",
    "const p = Post.title('first').get();",
    // Plain concatenation and template literals give the HTML, as SafeHtml did.
    "({concat: '<div>' + p.body + '</div>', literal: `[${p.bio}]`, note: '' + p.note, equal: p.body == p.body.html().toString()})",
  ].join('\n'),
  'copy/POST.js': [
    "import {Post} from '📦';",
    "const p = Post.title('first').get();",
    "const c = new Post().title('copy').body(p.body).bio(p.bio).copy(p.body).copyHtml(p.body);",
    '({body: c.body.value === p.body.value, bio: c.bio.value === p.bio.value, copyHtml: c.copyHtml.value});',
  ].join('\n'),
  'bad/GET.js': [
    "import {Post} from '📦';",
    "const p = Post.title('first').get();",
    'const message = (f) => { try { f(); return null; } catch (e) { return e.name + \': \' + e.message; } };',
    "({unknown: message(() => p.body.html({bogus: 1})), level: message(() => p.body.html({minimumHeaderLevel: 9})), notObject: message(() => p.body.html('h2')), badClass: message(() => p.bio.html({p: 'x\" onclick=\"alert(1)'}))})",
  ].join('\n'),
  'frozen/GET.js': [
    "import {Post} from '📦';",
    "const p = Post.title('first').get();",
    "const attempt = (f) => { try { f(); return 'changed'; } catch (e) { return e.name; } };",
    '({method: attempt(() => { p.body.sections.marker = 1; }), value: attempt(() => { p.body.marker = 1; }), section: attempt(() => { p.body.sections()[0].id = "x"; }), list: attempt(() => { p.body.sections().push(1); }), seen: p.body.sections.marker === undefined && p.body.marker === undefined})',
  ].join('\n'),
  'bio/GET.js': [
    "import {Post} from '📦';",
    "const p = Post.title('first').get();",
    "({call: p.bio.html({p: 'x', h2: 'big'}), sections: p.bio.sections(), text: p.bio.text(), markdown: p.bio.markdown(), value: p.bio.value, noteHtml: p.note.html(), noteCall: p.note.html({p: 'x', generateHeaderId: true}), noteSections: p.note.sections()})",
  ].join('\n'),
  'outline/GET.js': [
    "import {Post} from '📦';",
    "const o = Post.title('first').get().outline;",
    '({html: o.html(), sections: o.sections(), text: o.text(), length: o.length})',
  ].join('\n'),
  'hostile/GET.js': [
    "import {Post} from '📦';",
    "const h = Post.title('first').get().hostile;",
    "({field: h, call: h.html({h3: 'big', minimumHeaderLevel: 3, typography: true, autolink: true}), sections: h.sections()})",
  ].join('\n'),
  'hostile-view.html': [
    '<!--TEMPLATE mustache-->',
    "{{% import {Post} from '📦' }}",
    "{{#Post.title 'first' as p}}<main>{{{p.hostile}}}</main><aside>{{{p.hostile.html p='x\" onclick=\"alert(1)' h3='ok'}}}</aside><nav>{{#p.hostile.sections as s}}<a href=\"#{{s.id}}\">{{s.title}}</a>{{/p.hostile.sections}}</nav>{{/Post.title}}",
  ].join('\n'),
  'view.html': [
    '<!--TEMPLATE mustache-->',
    "{{% import {Post} from '📦' }}",
    "{{#Post.title 'first' as p}}<main>{{{p.bio}}}</main><aside>{{{p.bio.html h2='x' p='y'}}}</aside><ol>{{#p.bio.sections as s}}<li>{{s.id}}={{s.title}}</li>{{/p.bio.sections}}</ol><pre>{{p.bio.text}}</pre><p>{{{p.note}}}|{{p.note}}|{{p.note.length}}</p>{{/Post.title}}",
  ].join('\n'),
  '📤/intro.js': "import {Post} from '📦';\nconst intro = Post.title('first').get().body;\nexport {intro};\n",
  'supplied.html': "<!--TEMPLATE mustache-->\n{{% import {intro} from '📤' }}<main>{{{intro}}}</main><p>{{intro}}</p>",
};

for (const engine of ENGINES) {
  describe(`rich text in scripts on ${engine.name}`, () => {
    let s: Served;
    before(async () => {
      s = await serve(APP, { data: await engine.data() });
      const seeded = await s.request('POST', '/seed', J);
      assert.equal(seeded.status, 200, seeded.text);
    });
    after(() => s.close());

    it("a markdown field has the members of a view's rich-text value, rendered with the field's render: options", async () => {
      const v = json(await s.get('/members', J));
      assert.equal(v.html, BODY_HTML);
      assert.equal(
        v.shifted,
        '<h2 id="intro" class="title is-4">Intro</h2>\n<p class="lead">Some <em>text</em> -- here.</p>\n<h3 id="part-one">Part one</h3>\n<p class="lead">More.</p>\n<h2 id="outro" class="title is-4">Outro</h2>\n<p class="lead">End.</p>\n',
      );
      assert.deepEqual(v.sections, [
        { id: 'intro', title: 'Intro' },
        { id: 'outro', title: 'Outro' },
      ]);
      assert.equal(v.text, 'Intro\nSome text -- here.\nPart one\nMore.\nOutro\nEnd.');
      assert.equal(v.markdown, BODY);
      assert.equal(v.value, BODY);
      assert.equal(v.length, [...BODY].length);
      assert.deepEqual([v.empty, v.valid, v.invalid, v.blank, v.blankBio], [false, true, false, true, true]);
      assert.deepEqual(v.texts, [2]);
    });

    it('its JSON is the rendered HTML: a completion value, a record, JSON.stringify, a map result', async () => {
      const v = json(await s.get('/json', J));
      assert.equal(v.raw, BODY_HTML);
      assert.equal(v.bio, BIO_HTML);
      assert.equal(v.note, NOTE);
      const record = v.record as Record<string, unknown>;
      assert.deepEqual([record.title, record.body, record.bio, record.note], ['first', BODY_HTML, BIO_HTML, NOTE]);
      assert.equal(v.stringified, JSON.stringify({ b: BODY_HTML, n: NOTE }));
      assert.deepEqual(v.mapped, [{ body: BODY_HTML }]);
      const whole = await s.get('/body', J);
      assert.equal(whole.status, 200, whole.text);
      assert.equal(JSON.parse(whole.text), BODY_HTML);
    });

    it('it passes as safe HTML: concatenation, template literals, a supplier export printed raw by a view', async () => {
      const v = json(await s.get('/safe', J));
      assert.deepEqual(v, { concat: `<div>${BODY_HTML}</div>`, literal: `[${BIO_HTML}]`, note: NOTE, equal: true });
      const page = await s.get('/supplied');
      assert.equal(page.status, 200, page.text);
      assert.ok(page.text.includes(`<main>${BODY_HTML}</main>`), page.text);
      assert.ok(page.text.includes('<p>&lt;h1 id=&quot;intro&quot;&gt;Intro&lt;/h1&gt;'), 'escaped in {{ }}');
    });

    it('a script changes nothing of the value, its members or its sections (shared by every request)', async () => {
      const v = json(await s.get('/frozen', J));
      assert.deepEqual(v, { method: 'TypeError', value: 'TypeError', section: 'TypeError', list: 'TypeError', seen: true });
    });

    it('stored in another field, a value keeps its source in a field of its type and gives its HTML elsewhere', async () => {
      const r = await s.request('POST', '/copy', J);
      assert.deepEqual(json(r), { body: true, bio: true, copyHtml: BODY_HTML });
    });

    it('html(options) with an unknown option or a bad value is a TypeError the script sees (and may catch)', async () => {
      const v = json(await s.get('/bad', J));
      assert.match(v.unknown as string, /^TypeError: html\(options\): "bogus" is not a rendering option/);
      assert.match(v.level as string, /^TypeError: html\(options\): minimumHeaderLevel takes a whole number from 1 to 6/);
      assert.match(v.notObject as string, /^TypeError: html\(options\) takes an object/);
      assert.match(v.badClass as string, /^TypeError: html\(options\): p takes class names separated by spaces/);
    });

    it('an html field applies render: in scripts (per call merged over the field) and a field without render: is as stored', async () => {
      const v = json(await s.get('/bio', J));
      assert.equal(
        v.call,
        '<h2 id="about-me" class="big">About me</h2><p class="x">I write <em>code</em> — see <a href="https://example.com/a--b">https://example.com/a--b</a></p><pre>a -- b</pre>',
      );
      assert.deepEqual(v.sections, [{ id: 'about-me', title: 'About me' }]);
      assert.equal(v.text, 'About me\nI write code -- see https://example.com/a--b\na -- b');
      assert.equal(v.markdown, '# About me\n\nI write *code* -- see https://example.com/a--b\n\n```\na -- b\n```', 'Markdown made from the HTML');
      assert.equal(v.value, BIO);
      assert.equal(v.noteHtml, NOTE);
      assert.equal(v.noteCall, '<p class="x">plain <strong>note</strong></p>');
      assert.deepEqual(v.noteSections, []);
    });

    it("an html field's ids avoid the ids it has, its sections match them, its text has one line per block", async () => {
      const v = json(await s.get('/outline', J));
      assert.equal(
        v.html,
        '<h2 id="top">A &amp; B</h2><ul><li class="x item">one</li><li class="item">two<br />three</li></ul><h2 id="a-b">A &amp; B</h2><h2 id="top-2">Top</h2><p>  spaced\n  out  </p>',
      );
      assert.deepEqual(v.sections, [
        { id: 'top', title: 'A & B' },
        { id: 'a-b', title: 'A & B' },
        { id: 'top-2', title: 'Top' },
      ]);
      assert.equal(v.text, 'A & B\none\ntwo\nthree\nA & B\nTop\nspaced out');
      assert.equal(v.length, [...OUTLINE.replace('<br>', '<br />')].length);
    });

    it('an html field applies render: in views, with per-call options, sections and text', async () => {
      const r = await s.get('/view');
      assert.equal(r.status, 200, r.text);
      assert.ok(r.text.includes(`<main>${BIO_HTML}</main>`), r.text);
      assert.ok(
        r.text.includes(
          '<aside><h2 id="about-me" class="x">About me</h2><p class="y">I write <em>code</em> — see <a href="https://example.com/a--b">https://example.com/a--b</a></p><pre>a -- b</pre></aside>',
        ),
        r.text,
      );
      assert.ok(r.text.includes('<ol><li>about-me=About me</li></ol>'), r.text);
      assert.ok(r.text.includes('<pre>About me\nI write code -- see https://example.com/a--b\na -- b</pre>'), r.text);
      assert.ok(r.text.includes(`<p>${NOTE}|&lt;p&gt;plain &lt;strong&gt;note&lt;/strong&gt;&lt;/p&gt;|${NOTE.length}</p>`), r.text);
    });

    it('an XSS attempt through an html field with render options stays within the allow-list, in scripts and views', async () => {
      const v = json(await s.get('/hostile', J));
      for (const key of ['field', 'call'] as const) {
        const html = v[key] as string;
        assert.deepEqual(problemsIn(html), [], `${key}: ${html}`);
        assert.doesNotMatch(html, /<(script|img|svg)|style=|href="(javascript|data|\/\/)/i, `${key}: ${html}`);
      }
      const field = v.field as string;
      // render: {generateHeaderId, autolink: blank, a: ext, p: lead}: only the link it made opens a new tab.
      assert.match(field, /<a class="ext" href="https:\/\/ok\.example\/ok" target="_blank" rel="noopener noreferrer">https:\/\/ok\.example\/ok<\/a>/);
      assert.match(field, /see javascript:alert\(1\) and data:text\/html,x and <a/, 'other schemes stay text');
      assert.equal(field.match(/target=/g)?.length, 1);
      assert.match(field, /<a class="ext">a<\/a> <a class="ext">b<\/a>/, 'unsafe targets lose their href; target="_top" is gone');
      assert.match(field, /<h2 id="img-src-x-onerror-alert-1">"&gt;&lt;img src=x onerror=alert\(1\)&gt;<\/h2>/);
      assert.match(field, /<h3 id="x" class="a">&lt;\/h3&gt;&lt;script&gt;alert\(1\)&lt;\/script&gt;<\/h3>/);
      // Per call, merged over the field: shifted headings, classes on the final tags, autolink without a new tab.
      assert.match(v.call as string, /^<h3 id="img-src-x-onerror-alert-1" class="big">/);
      assert.match(v.call as string, /<a class="ext" href="https:\/\/ok\.example\/ok">/);
      assert.match(v.call as string, /<h4 id="x" class="a">/);
      assert.deepEqual(v.sections, [{ id: 'img-src-x-onerror-alert-1', title: '"><img src=x onerror=alert(1)>' }]);
      const page = await s.get('/hostile-view');
      assert.equal(page.status, 200, page.text);
      const main = /<main>([\s\S]*)<\/main>/.exec(page.text)![1]!;
      const aside = /<aside>([\s\S]*)<\/aside>/.exec(page.text)![1]!;
      assert.equal(main, field);
      // A bad class value in a view is ignored (views check literal options at build), the rest applies.
      assert.deepEqual(problemsIn(aside), [], aside);
      assert.doesNotMatch(aside, /onclick|x&quot;/);
      assert.match(page.text, /<nav><a href="#img-src-x-onerror-alert-1">&quot;&gt;&lt;img src=x onerror=alert\(1\)&gt;<\/a><\/nav>/);
    });
  });
}

const ARTICLE = [
  'title: string',
  'content:',
  '  type: document-markdown',
  '  render: {generateHeaderId: true, h2: section}',
  'intro?:',
  '  type: html',
  '  render: {p: lead, generateHeaderId: true}',
  'uid:',
  '  type: document-uid',
  '  path: true',
  '',
].join('\n');

const WELCOME = '# Welcome\n\nFirst -- words.\n\n## Start {#go}\n\nGo.\n\n# Next\n\nMore.\n';
const WELCOME_HTML = '<h1 id="welcome">Welcome</h1>\n<p>First -- words.</p>\n<h2 id="go" class="section">Start</h2>\n<p>Go.</p>\n<h1 id="next">Next</h1>\n<p>More.</p>\n';

const STATIC_APP = {
  '🗄/📄Article.yaml': ARTICLE,
  '🗄/Article/welcome.md': `---\ntitle: Welcome\nintro: '<h3>Hi there</h3><p>Hello <em>you</em></p>'\n---\n${WELCOME}`,
  '🗄/Article/guide/deep.md': '---\ntitle: Deep\n---\n## Alpha\n\nA.\n\n## Beta\n\nB.\n',
  'api/GET.js': [
    "import {Article} from '🗄';",
    "const a = Article.get('welcome');",
    '({',
    '  html: a.content.html(),',
    "  viaGet: a.get.content.html({minimumHeaderLevel: 2, h2: 'title'}),",
    '  sections: a.get.content.sections(),',
    '  text: a.content.text(),',
    '  markdown: a.content.markdown(),',
    '  length: a.content.length,',
    '  empty: a.content.empty,',
    '  intro: a.intro,',
    '  introCall: a.intro.html({p: "big", minimumHeaderLevel: 4}),',
    '  introSections: a.intro.sections(),',
    '  introText: a.intro.text(),',
    '  record: a,',
    '  firsts: Article.all().map((x) => x.content.sections()[0].title),',
    '})',
  ].join('\n'),
  'docs/{doc}/🔗.yaml': 'field: 🗄.Article.uid\n',
  'docs/{doc}/GET.js': "import {doc} from '🔗';\n({sections: doc.content.sections(), text: doc.get().content.text(), html: doc.content.html({minimumHeaderLevel: 3}), raw: doc.content})\n",
  '{article}🔗.yaml': 'field: 🗄.Article.uid\n',
  '{article}.html': [
    '<!--TEMPLATE mustache-->',
    "{{% import {article} from '🔗' }}",
    "<header>{{{article.intro}}}</header><aside>{{{article.intro.html p='x'}}}</aside><ol>{{#article.get.content.sections as s}}<li>{{s.id}}</li>{{/article.get.content.sections}}</ol>",
  ].join('\n'),
};

describe('rich text in scripts: static documents (🗄)', () => {
  let s: Served;
  before(async () => {
    s = await serve(STATIC_APP);
  });
  after(() => s.close());

  it("a document's Markdown body has the same members, read from a document and through article.get.content", async () => {
    const v = json(await s.get('/api', J));
    assert.equal(v.html, WELCOME_HTML);
    assert.equal(
      v.viaGet,
      '<h2 id="welcome" class="title">Welcome</h2>\n<p>First -- words.</p>\n<h3 id="go">Start</h3>\n<p>Go.</p>\n<h2 id="next" class="title">Next</h2>\n<p>More.</p>\n',
    );
    assert.deepEqual(v.sections, [
      { id: 'welcome', title: 'Welcome' },
      { id: 'next', title: 'Next' },
    ]);
    assert.equal(v.text, 'Welcome\nFirst -- words.\nStart\nGo.\nNext\nMore.');
    assert.equal(v.markdown, WELCOME);
    assert.equal(v.length, WELCOME.length);
    assert.equal(v.empty, false);
    assert.deepEqual(v.firsts, ['Alpha', 'Welcome']);
    const record = v.record as Record<string, unknown>;
    assert.equal(record.content, WELCOME_HTML);
    assert.equal(record.intro, '<h3 id="hi-there">Hi there</h3><p class="lead">Hello <em>you</em></p>');
  });

  it('an html field of a document applies its render: options', async () => {
    const v = json(await s.get('/api', J));
    assert.equal(v.intro, '<h3 id="hi-there">Hi there</h3><p class="lead">Hello <em>you</em></p>');
    assert.equal(v.introCall, '<h4 id="hi-there">Hi there</h4><p class="big">Hello <em>you</em></p>');
    assert.deepEqual(v.introSections, [{ id: 'hi-there', title: 'Hi there' }]);
    assert.equal(v.introText, 'Hi there\nHello you');
    const page = await s.get('/welcome');
    assert.equal(page.status, 200, page.text);
    assert.ok(page.text.includes('<header><h3 id="hi-there">Hi there</h3><p class="lead">Hello <em>you</em></p></header>'), page.text);
    assert.ok(page.text.includes('<aside><h3 id="hi-there">Hi there</h3><p class="x">Hello <em>you</em></p></aside>'), page.text);
    assert.ok(page.text.includes('<ol><li>welcome</li><li>next</li></ol>'), page.text);
  });

  it('a link to a document (a path parameter) reads the same value', async () => {
    const v = json(await s.get('/docs/welcome', J));
    assert.deepEqual(v.sections, [
      { id: 'welcome', title: 'Welcome' },
      { id: 'next', title: 'Next' },
    ]);
    assert.equal(v.text, 'Welcome\nFirst -- words.\nStart\nGo.\nNext\nMore.');
    // Element classes apply to the final tag: the field's h2 class has no h2 left once shifted to h3.
    assert.equal(v.html, '<h3 id="welcome">Welcome</h3>\n<p>First -- words.</p>\n<h4 id="go">Start</h4>\n<p>Go.</p>\n<h3 id="next">Next</h3>\n<p>More.</p>\n');
    assert.equal(v.raw, WELCOME_HTML);
  });
});
