/**
 * The members of a rich-text value (docs/content.md "Members of a rich-text value") for markdown
 * and html fields of stored records, in views and in scripts, on both engines: `{{field}}` prints
 * the source escaped and `{{{field}}}` the HTML; `value`, `empty` (white space only too),
 * `length`, `valid`/`invalid` (against the field's definition as it is now), `markdown()` (an html
 * field's HTML as Markdown), `text()`, `html(options)` and `sections()`.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { serve, writeApp, type Served } from '../helpers.js';
import { ENGINES } from '../support/engines.js';
import type { DataOptions } from '../../src/app/services/data.js';

const M = '<!--TEMPLATE mustache-->\n';
const FORM = { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' };

const BODY = '# Lamps & <wicks>\n\nSome *oil* here.\n\n## Care\n\nTrim it.';
const NOTE = '<h2 id="n">Note</h2><p>a &amp; <em>b</em> <a href="https://example.com/">link</a></p><ul><li>one</li></ul>';

const app = (max: number) => ({
  '📦/🌐Post.yaml': `title: string\nbody?:\n  type: markdown\n  max: ${max}\nnote?: html\n`,
  'posts/POST.js': "import {Post} from '📦';\nimport {title, body, note} from 'form';\nlet p = new Post().title(title).body(body).note(note);\n({id: p.id});\n",
  'index.html': [
    M + "{{% import {Post} from '📦' }}{{#Post.all as p}}<article id=\"{{p.title}}\">",
    '<pre class="plain">{{p.body}}</pre><div class="raw">{{{p.body}}}</div>',
    '<pre class="value">{{p.body.value}}</pre><i class="m">{{p.body.empty}} {{p.body.length}} {{p.body.valid}} {{p.body.invalid}}</i>',
    '<pre class="text">{{p.body.text}}</pre><div class="opts">{{{p.body.html minimumHeaderLevel=2 h2=\'t\'}}}</div>',
    '<ol>{{#p.body.sections as s}}<li>{{s.id}}={{s.title}}</li>{{/p.body.sections}}</ol>',
    '<pre class="nplain">{{p.note}}</pre><div class="nraw">{{{p.note}}}</div><pre class="nmd">{{p.note.markdown}}</pre>',
    '<b class="as">{{#p.note as a}}{{a}}{{/p.note}}</b><i class="ne">{{p.note.empty}}</i>',
    '</article>{{/Post.all}}',
    '',
  ].join('\n'),
  'read/GET.js': [
    "import {Post} from '📦';",
    'Post.all().map((p) => ({title: p.title, value: p.body.value, empty: p.body.empty, length: p.body.length, valid: p.body.valid, invalid: p.body.invalid,',
    '  markdown: p.body.markdown(), text: p.body.text(), html: String(p.body.html({h1: \'big\'})), sections: p.body.sections(),',
    '  noteValue: p.note.value, noteMarkdown: p.note.markdown(), noteEmpty: p.note.empty, noteText: p.note.text(), noteValid: p.note.valid}));',
    '',
  ].join('\n'),
});

const section = (html: string, title: string, cls: string): string => {
  const article = html.slice(html.indexOf(`<article id="${title}">`));
  const m = new RegExp(`<(\\w+) class="${cls}">([\\s\\S]*?)</\\1>`).exec(article.slice(0, article.indexOf('</article>')));
  assert.ok(m, `${cls} of ${title}`);
  return m[1]!.length ? m[2]! : '';
};

for (const engine of ENGINES) {
  describe(`rich-text members on ${engine.name}`, () => {
    let s: Served;
    let dir: string;
    let data: DataOptions;
    before(async () => {
      data = await engine.data();
      dir = writeApp(app(2000));
      s = await serve(dir, { data });
      const post = async (body: string) => assert.equal((await s.request('POST', '/posts', FORM, body)).status, 200);
      await post(`title=full&body=${encodeURIComponent(BODY)}&note=${encodeURIComponent(NOTE)}`);
      await post(`title=blank&body=${encodeURIComponent('  \n\t ')}&note=${encodeURIComponent('<p> <br /></p>')}`);
    });
    after(async () => {
      await s.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('{{field}} prints the source, escaped; {{{field}}} the HTML', async () => {
      const html = (await s.get('/')).text;
      assert.equal(section(html, 'full', 'plain'), '# Lamps &amp; &lt;wicks&gt;\n\nSome *oil* here.\n\n## Care\n\nTrim it.');
      assert.equal(section(html, 'full', 'raw'), '<h1>Lamps &amp; &lt;wicks&gt;</h1>\n<p>Some <em>oil</em> here.</p>\n<h2>Care</h2>\n<p>Trim it.</p>\n');
      assert.equal(section(html, 'full', 'nplain'), '&lt;h2 id=&quot;n&quot;&gt;Note&lt;/h2&gt;&lt;p&gt;a &amp;amp; &lt;em&gt;b&lt;/em&gt; &lt;a href=&quot;https://example.com/&quot;&gt;link&lt;/a&gt;&lt;/p&gt;&lt;ul&gt;&lt;li&gt;one&lt;/li&gt;&lt;/ul&gt;');
      assert.equal(section(html, 'full', 'nraw'), NOTE);
      assert.equal(section(html, 'full', 'as'), section(html, 'full', 'nplain'), 'the same through a section');
    });

    it('value, empty, length, valid, invalid, text, html(options), sections and markdown in views', async () => {
      const html = (await s.get('/')).text;
      assert.equal(section(html, 'full', 'value'), '# Lamps &amp; &lt;wicks&gt;\n\nSome *oil* here.\n\n## Care\n\nTrim it.');
      assert.equal(section(html, 'full', 'm'), `false ${[...BODY].length} true false`);
      assert.equal(section(html, 'blank', 'm'), 'true 5 true false', 'white space only is empty');
      assert.equal(section(html, 'blank', 'ne'), 'true');
      assert.equal(section(html, 'full', 'ne'), 'false');
      assert.equal(section(html, 'full', 'text'), 'Lamps &amp; &lt;wicks&gt;\nSome oil here.\nCare\nTrim it.');
      assert.equal(section(html, 'full', 'opts'), '<h2 class="t">Lamps &amp; &lt;wicks&gt;</h2>\n<p>Some <em>oil</em> here.</p>\n<h3>Care</h3>\n<p>Trim it.</p>\n');
      assert.match(html, /<ol><li>lamps-wicks=Lamps &amp; &lt;wicks&gt;<\/li><\/ol>/);
      assert.equal(section(html, 'full', 'nmd'), '## Note {#n}\n\na &amp; *b* [link](&lt;https://example.com/&gt;)\n\n- one');
    });

    it('the same members in scripts; an html field reads back as Markdown', async () => {
      const rows = JSON.parse((await s.get('/read', { Accept: 'application/json' })).text) as Array<Record<string, unknown>>;
      const full = rows.find((r) => r.title === 'full')!;
      const blank = rows.find((r) => r.title === 'blank')!;
      assert.deepEqual(
        { ...full },
        {
          title: 'full',
          value: BODY,
          empty: false,
          length: [...BODY].length,
          valid: true,
          invalid: false,
          markdown: BODY,
          text: 'Lamps & <wicks>\nSome oil here.\nCare\nTrim it.',
          html: '<h1 class="big">Lamps &amp; &lt;wicks&gt;</h1>\n<p>Some <em>oil</em> here.</p>\n<h2>Care</h2>\n<p>Trim it.</p>\n',
          sections: [{ id: 'lamps-wicks', title: 'Lamps & <wicks>' }],
          noteValue: NOTE,
          noteMarkdown: '## Note {#n}\n\na & *b* [link](<https://example.com/>)\n\n- one',
          noteEmpty: false,
          noteText: 'Note\na & b link\none',
          noteValid: true,
        },
      );
      assert.equal(blank.empty, true);
      assert.equal(blank.noteEmpty, true);
      assert.equal(blank.noteMarkdown, '');
    });

    it('valid and invalid follow the field as it is defined now: a lowered max makes a stored value invalid', async () => {
      const dir2 = writeApp(app(10));
      const again = await serve(dir2, { data: engine.name === 'sqlite' ? { dataDir: `${dir}/.laneway` } : data });
      try {
        const html = (await again.get('/')).text;
        assert.equal(section(html, 'full', 'm'), `false ${[...BODY].length} false true`);
        assert.equal(section(html, 'blank', 'm'), 'true 5 true false');
        const rows = JSON.parse((await again.get('/read', { Accept: 'application/json' })).text) as Array<Record<string, unknown>>;
        const full = rows.find((r) => r.title === 'full')!;
        assert.equal(full.valid, false);
        assert.equal(full.invalid, true);
      } finally {
        await again.close();
        rmSync(dir2, { recursive: true, force: true });
      }
    });
  });
}

describe('rich-text members of a static document', () => {
  let s: Served;
  before(async () => {
    s = await serve({
      '🗄/📄Note.yaml': 'title: string\nbody:\n  type: document-markdown\nintro?: html\nuid:\n  type: document-uid\n  path: true\n',
      '🗄/Note/lamp.md': "---\ntitle: Lamp\nintro: '<p>Oil &amp; <strong>wick</strong></p>'\n---\n# Oil & <wick>\n\nBurns *long*.\n",
      'notes/index.html': `${M}{{% import {Note} from '🗄' }}{{#Note.all as n}}<pre>{{n.body}}</pre><div>{{{n.body}}}</div><i>{{n.body.length}} {{n.body.empty}} {{n.body.valid}}</i><b>{{n.intro.markdown}}</b>{{/Note.all}}\n`,
    });
  });
  after(() => s.close());

  it('{{field}} prints the Markdown source, escaped; {{{field}}} the HTML; an html field reads as Markdown', async () => {
    const r = await s.get('/notes/');
    assert.equal(r.status, 200);
    assert.match(r.text, /<pre># Oil &amp; &lt;wick&gt;\n\nBurns \*long\*\.\n?<\/pre>/);
    assert.match(r.text, /<div><h1>Oil &amp; &lt;wick&gt;<\/h1>\n<p>Burns <em>long<\/em>\.<\/p>\n<\/div>/);
    assert.match(r.text, /<i>\d+ false true<\/i>/);
    assert.match(r.text, /<b>Oil &amp; \*\*wick\*\*<\/b>/);
  });
});
