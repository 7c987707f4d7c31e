/**
 * Static models (docs/content.md): definitions under /🗄/, Markdown and YAML
 * documents read and checked at load, the read-only query API in scripts and views, document-backed
 * path parameters (multi-segment path uids, legacy uids answering 301, unknown values 404 through
 * the nearest ⚡NotFound.html), and the build errors of documents and of writes.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { checkApp, loadApp } from '../../src/app/index.js';
import { serve, writeApp, type Served } from '../helpers.js';

const J = { accept: 'application/json' };
const json = (r: { body: Buffer }) => JSON.parse(r.body.toString());

const ARTICLE = [
  'title: string',
  'short?: string',
  'order:',
  '  type: integer',
  '  order: true',
  '  init: true',
  'content:',
  '  type: document-markdown',
  'uid:',
  '  type: document-uid',
  '  path: true',
  'beta:',
  '  type: boolean',
  '  init: true',
  'tags[]?: string',
  '',
].join('\n');

const APP = {
  '🗄/📄Article.yaml': ARTICLE,
  '🗄/📄Release.yaml': 'date:\n  type: document-date\n  order: true\ncontent: document-text\n',
  '🗄/🌐Example.yaml': 'title:\n  type: string\n  order: true\nsrc: string\n',
  '🗄/Article/guide/start.md': '---\ntitle: Start here\norder: 2\nuid: old/start\ntags: [intro, basics]\n---\n\n# Hello\n\nThe *first* steps.\n',
  '🗄/Article/controllers/js.md': '---\ntitle: JavaScript\norder: 1\nbeta: true\n---\nScripts in *JavaScript*.\n',
  '🗄/Article/controllers/forms.md': '---\ntitle: Forms\norder: 3\nshort: Forms!\n---\nForms.\n',
  '🗄/Release/2020/01-15.md': '- second\n',
  '🗄/Release/2020-01-01.md': '- first\n',
  '🗄/Release/2021-03/02.yaml': 'content: third\n',
  '🗄/Example/zeta.yaml': 'title: Zeta\nsrc: https://example.com/z.git\n',
  '🗄/Example/alpha.yaml': 'title: Alpha\nsrc: https://example.com/a.git\n',
  '⚡NotFound.html': '<!--TEMPLATE mustache-->\n<p>custom not found</p>',
  '{article}🔗.yaml': 'field: 🗄.Article.uid\n',
  '{article}.html': "<!--TEMPLATE mustache-->\n{{% import {article} from '🔗' }}\n<h1>{{article.title}}</h1>{{#article.beta}}<b>beta</b>{{/article.beta}}<main>{{{article.get.content}}}</main>\n",
  'examples.html': "<!--TEMPLATE mustache-->\n{{% import {Example} from '🗄' }}\n<ul>{{#Example.all as e}}<li>{{e.title}}</li>{{/Example.all}}</ul>\n",
  'index.html': "<!--TEMPLATE mustache-->\n{{% import {Article, Release} from '🗄' }}\n<ul>{{#Article.all as a}}<li><a href=\"/{{a.uid}}\">{{a.title}}</a></li>{{/Article.all}}</ul><ol>{{#Release.all.desc as r}}<li>{{r.date}}</li>{{/Release.all.desc}}</ol><p>{{Article.all.count}}</p>\n",
  'api/GET.js': [
    "import {Article, Release} from '🗄';",
    '({',
    '  count: Article.all().count(),',
    '  titles: Article.all().map((a) => a.title),',
    '  desc: Article.all().desc().map((a) => a.uid),',
    "  one: Article.get('controllers/js').title,",
    "  missing: Article.optional('nope'),",
    "  range: Article.uid_gte('controllers/0').uid_lte('controllers/z').map((a) => a.uid),",
    '  betas: Article.beta(true).map((a) => a.uid),',
    '  ordered: Article.order_gte(2).map((a) => a.order),',
    '  filtered: Article.all().filter((a) => a.short !== null).map((a) => a.short),',
    '  limited: Article.all().limit(1).map((a) => a.title),',
    "  tags: Article.get('guide/start').tags,",
    '  releases: Release.all().map((r) => r.date),',
    '  exists: Release.all().exists(),',
    '})',
    '',
  ].join('\n'),
  'docs/GET.js': "import {Article} from '🗄';\nArticle.all().limit(2);\n",
};

describe('static models: queries, views and document-backed parameters', () => {
  let s: Served;
  before(async () => {
    s = await serve(APP);
  });
  after(() => s.close());

  it('scripts query documents with the model query API (order, desc, equality, ranges, filter, limit, count, get)', async () => {
    const r = await s.get('/api', J);
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(json(r), {
      count: 3,
      titles: ['JavaScript', 'Start here', 'Forms'],
      desc: ['controllers/forms', 'guide/start', 'controllers/js'],
      one: 'JavaScript',
      missing: null,
      range: ['controllers/js', 'controllers/forms'],
      betas: ['controllers/js'],
      ordered: [2, 3],
      filtered: ['Forms!'],
      limited: ['JavaScript'],
      tags: ['intro', 'basics'],
      releases: ['2020-01-01', '2020-01-15', '2021-03-02'],
      exists: true,
    });
  });

  it('a query as the answer is JSON of the records, Markdown bodies included as HTML', async () => {
    const r = await s.get('/docs', J);
    assert.equal(r.status, 200, r.text);
    const docs = json(r) as Array<Record<string, unknown>>;
    assert.deepEqual(docs.map((d) => d.id), ['controllers/js', 'guide/start']);
    assert.equal(docs[0]!.title, 'JavaScript');
    assert.match(String(docs[0]!.content), /<em>JavaScript<\/em>/);
  });

  it('views list documents (natural order by the order field; Release.all.desc by document date)', async () => {
    const r = await s.get('/');
    assert.equal(r.status, 200, r.text);
    assert.match(r.text, /<li><a href="\/controllers\/js">JavaScript<\/a><\/li><li><a href="\/guide\/start">Start here<\/a><\/li><li><a href="\/controllers\/forms">Forms<\/a><\/li>/);
    assert.match(r.text, /<ol><li>2021-03-02<\/li><li>2020-01-15<\/li><li>2020-01-01<\/li><\/ol>/);
    assert.match(r.text, /<p>3<\/p>/);
    const ex = await s.get('/examples');
    assert.match(ex.text, /<li>Alpha<\/li><li>Zeta<\/li>/, 'order: true on title');
  });

  it('a path uid parameter matches multi-segment paths; the page reads the fields and the rendered body', async () => {
    const r = await s.get('/controllers/js');
    assert.equal(r.status, 200, r.text);
    assert.match(r.text, /<h1>JavaScript<\/h1><b>beta<\/b><main><p>Scripts in <em>JavaScript<\/em>.<\/p>/);
    const g = await s.get('/guide/start');
    assert.equal(g.status, 200);
    assert.match(g.text, /<h1>Start here<\/h1><main><h1>Hello<\/h1>\n<p>The <em>first<\/em> steps.<\/p>/);
  });

  it('literal routes win over the parameter', async () => {
    const r = await s.get('/examples');
    assert.equal(r.status, 200);
    assert.match(r.text, /Alpha/);
  });

  it('an unknown uid answers 404 through ⚡NotFound.html; a legacy uid answers 301 to the current URL, query kept', async () => {
    for (const path of ['/nope', '/controllers/nope', '/a/b/c']) {
      const r = await s.get(path);
      assert.equal(r.status, 404, path);
      assert.match(r.text, /custom not found/);
    }
    const old = await s.get('/old/start?x=1');
    assert.equal(old.status, 301);
    assert.equal(old.headers.location, '/guide/start?x=1');
  });
});

describe('static models: build errors', () => {
  const errors = (files: Record<string, string>): string => {
    try {
      loadApp(writeApp({ '🗄/📄Article.yaml': ARTICLE, '🗄/Article/ok.md': '---\ntitle: Ok\n---\nbody\n', ...files }));
      return '';
    } catch (e) {
      return String((e as Error).message);
    }
  };

  it('a valid app loads', () => {
    assert.equal(errors({}), '');
  });

  it('a document missing a required field, with an unknown field, or with a wrong value: error at its file and line', () => {
    assert.match(errors({ '🗄/Article/a.md': '---\norder: 1\n---\nx\n' }), /🗄\/Article\/a\.md:2:1: Article document a: Title is required: add `title: …` to the front matter \[LW_CONTENT_DOCUMENT\]/);
    assert.match(errors({ '🗄/Article/b.md': '---\ntitle: B\ntitel: x\n---\nx\n' }), /🗄\/Article\/b\.md:3:1: Article has no field "titel"/);
    assert.match(errors({ '🗄/Article/c.md': '---\ntitle: C\norder: many\n---\nx\n' }), /🗄\/Article\/c\.md:3:8: Article document c: Order/);
    assert.match(errors({ '🗄/Article/d.md': '---\ntitle: [oops\n---\nx\n' }), /🗄\/Article\/d\.md:\d+:\d+: invalid YAML/);
  });

  it('a Markdown body has no length bound; a Markdown file with no front matter where fields are needed is a draft (warning, not served)', () => {
    const long = '---\ntitle: Long\n---\n' + 'word '.repeat(5000) + '\n';
    assert.equal(errors({ '🗄/Article/long.md': long }), '');
    const dir = writeApp({ '🗄/📄Article.yaml': ARTICLE, '🗄/Article/ok.md': '---\ntitle: Ok\n---\nbody\n', '🗄/Article/draft.md': '## Notes\n\nnot ready\n', 'n/GET.js': "import {Article} from '🗄';\nArticle.all().count();\n" });
    const diagnostics = checkApp(dir);
    const draft = diagnostics.find((d) => d.file === '/🗄/Article/draft.md');
    assert.equal(draft?.severity, 'warning');
    assert.match(draft?.message ?? '', /draft\.md has no front matter, so it is not a Article document \(it needs title\)/);
  });

  it('a document-date field needs a date path; documents need a definition; other files are warned about', () => {
    assert.match(
      errors({ '🗄/📄Release.yaml': 'date:\n  type: document-date\ncontent: document-markdown\n', '🗄/Release/not-a-date.md': 'x\n' }),
      /🗄\/Release\/not-a-date\.md:1:1: Release\.date is the date in the document's path, but "not-a-date" is not a date/,
    );
    assert.match(errors({ '🗄/Post/x.md': 'x\n' }), /holds documents of a model that is not defined: add \/🗄\/📄Post\.yaml/);
  });

  it('writes to static models are build errors; document types belong to /🗄/; names are unique across 📦 and 🗄', () => {
    assert.match(errors({ 'x/POST.js': "import {Article} from '🗄';\nnew Article();\n" }), /x\/POST\.js:2:1: Article is a static model .*read-only.*\[LW_MODEL_READ_ONLY\]/);
    assert.match(errors({ 'y/POST.js': "import {Article} from '🗄';\nArticle.all().modify((a) => a.title = 'x');\n" }), /y\/POST\.js:2:15: Article is a static model.*\[LW_MODEL_READ_ONLY\]/);
    assert.match(errors({ 'z/GET.js': "import {Article} from '🗄';\nArticle.titel('x');\n" }), /Article has no field or query "titel"/);
    assert.match(errors({ '📦/🌐Post.yaml': 'body: document-markdown\n' }), /document-markdown belongs to static models: define this model under \/🗄\//);
    assert.match(errors({ '📦/🌐Article.yaml': 'title: string\n' }), /Article is both a model \(\/📦\/\) and a static model \(\/🗄\/\)/);
    assert.match(errors({ 'w/GET.js': "import {Nope} from '🗄';\nNope;\n" }), /there is no static model "Nope" in \/🗄\/; the static models are Article/);
  });

  it('a 🔗.yaml naming a missing static model is a build error', () => {
    assert.match(errors({ '{a}🔗.yaml': 'field: 🗄.Nope.uid\n', '{a}.html': '<!--TEMPLATE mustache-->\nx' }), /no static model Nope in \/🗄\//);
  });
});
