/**
 * Views read models directly (docs/views.md "Models in views": `all` and simple container
 * queries): `{{#Task.all as t}}`, `{{#Release.all.desc}}`, `{{^Post.all}}`,
 * `{{#Note.list list as n}}`, counts, options labels, and fields read through links — on both
 * engines. Queries in views are lazy and read-only.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { serve, type Served } from '../helpers.js';
import { ENGINES } from '../support/engines.js';

const APP = {
  '📦/🌐Task.yaml': 'title: string\nstatus:\n  type: options\n  init: true\n  values:\n    - active\n    - complete\n',
  '📦/🌐List.yaml': 'title: string\n',
  '📦/List/🌐Note.yaml': 'title: string\nauthor?: Task\n',
  '📦/🌐Post.yaml': 'title: string\n',
  '📦/🌐Doc.yaml': 'body?: markdown\nrich?: html\n',
  'docs/POST.js': "import {Doc} from '📦';\nnew Doc().body('# Hi *there*\\n\\n<script>x</script>').rich('<p onclick=x()>ok <strong>b</strong></p>');\n({});\n",
  'docs/GET.js': "import {Doc} from '📦';\nDoc.all().map((d) => ({body: d.body, rich: d.rich}));\n",
  'docs/index.html': "<!--TEMPLATE mustache-->\n{{% import {Doc} from '📦' }}{{#Doc.all as d}}{{{d.body}}}|{{{d.rich}}}|{{d.rich}}{{/Doc.all}}",
  'seed/POST.js': [
    "import {Task, List, Note} from '📦';",
    "let a = new Task().title('a');",
    "new Task().title('b <x>');",
    "let l = new List().title('L1');",
    "new Note(l).title('n1').author(a);",
    "new Note(l).title('n2');",
    "let m = new List().title('L2');",
    "new Note(m).title('m1');",
    '({id: l.id, m: m.id, a: a.id});',
  ].join('\n'),
  'index.html': [
    '<!--TEMPLATE mustache-->',
    "{{% import {Task, List, Note, Post} from '📦' }}",
    '<ul>{{#Task.all as t}}<li>{{t.title}}={{Task.status.optionLabel t.status}}</li>{{/Task.all}}</ul>',
    '<p>count={{Task.all.count}} desc={{#Task.all.desc}}[{{title}}]{{/Task.all.desc}} limit={{#Task.all.limit 1}}({{title}}){{/Task.all.limit}}</p>',
    '<p>{{^Post.all}}no posts{{/Post.all}}{{#Post.all}}posts{{/Post.all}}</p>',
    '{{#List.all as l}}<h2>{{l.title}}</h2>{{#Note.list l as n}}<i>{{n.title}}/{{n.author.get.title}}/{{#n.author.linked}}linked{{/n.author.linked}}</i>{{/Note.list}}{{/List.all}}',
  ].join('\n'),
  'lists/{list}/🔗.yaml': 'field: 📦.List.id\n',
  'lists/{list}/index.html': "<!--TEMPLATE mustache-->\n{{% import {Note} from '📦' }}{{% import {list} from '🔗' }}{{list.get.title}}:{{#Note.list list as n}}<i>{{n.title}}</i>{{/Note.list}}",
  'supplied/index.html': "<!--TEMPLATE mustache-->\n{{% import {recent} from '📤' }}{{#recent.desc as t}}<b>{{t.title}}</b>{{/recent.desc}}",
  '📤/recent.js': "import {Task} from '📦';\nlet recent = Task.all();\nexport {recent};\n",
  // A query from a supplier is not checked at build time (writing Task.all.modify in a view is):
  // at run time a view still reaches none of its writing or callback methods.
  'hostile/index.html': "<!--TEMPLATE mustache-->\n{{% import {recent} from '📤' }}[{{#recent.modify}}x{{/recent.modify}}][{{recent.filter}}][{{recent.constructor}}]",
};

for (const engine of ENGINES) {
  describe(`models in views on ${engine.name}`, () => {
    let s: Served;
    let ids: { id: string; m: string; a: string };
    before(async () => {
      s = await serve(APP, { data: await engine.data() });
    });
    after(() => s.close());

    it('an empty store renders the empty branches', async () => {
      const r = await s.request('GET', '/');
      assert.equal(r.status, 200);
      const html = r.body.toString();
      assert.match(html, /<ul><\/ul>/);
      assert.match(html, /count=0 desc= limit=/);
      assert.match(html, /no posts/);
      assert.doesNotMatch(html, />posts/);
    });

    it('iterates queries, follows links, escapes fields, shows option labels', async () => {
      const seeded = await s.request('POST', '/seed', { accept: 'application/json' });
      assert.equal(seeded.status, 200);
      ids = JSON.parse(seeded.body.toString());
      const r = await s.request('GET', '/');
      assert.equal(r.status, 200);
      const html = r.body.toString();
      assert.match(html, /<ul><li>a=Active<\/li><li>b &lt;x&gt;=Active<\/li><\/ul>/);
      assert.match(html, /count=2 desc=\[b &lt;x&gt;\]\[a\] limit=\(a\)/);
      assert.match(html, /<h2>L1<\/h2><i>n1\/a\/linked<\/i><i>n2\/\/<\/i>/);
      assert.match(html, /<h2>L2<\/h2><i>m1\/\/<\/i>/);
    });

    it('a container parameter selects the records of that container', async () => {
      const r = await s.request('GET', `/lists/${ids.m}/`);
      assert.equal(r.status, 200);
      assert.equal(r.body.toString(), 'L2:<i>m1</i>');
    });

    it('a query exported by a supplier stays lazy until the view orders and iterates it', async () => {
      const r = await s.request('GET', '/supplied/');
      assert.equal(r.status, 200);
      assert.equal(r.body.toString(), '<b>b &lt;x&gt;</b><b>a</b>');
    });

    it('markdown and html fields read back from the store as safe HTML, once rendered', async () => {
      assert.equal((await s.request('POST', '/docs', { accept: 'application/json' })).status, 200);
      const api = await s.request('GET', '/docs', { accept: 'application/json' });
      assert.deepEqual(JSON.parse(api.body.toString()), [{ body: '<h1>Hi <em>there</em></h1>\n<p>&lt;script&gt;x&lt;/script&gt;</p>\n', rich: '<p>ok <strong>b</strong></p>' }]);
      const page = await s.request('GET', '/docs/');
      assert.equal(page.body.toString(), '<h1>Hi <em>there</em></h1>\n<p>&lt;script&gt;x&lt;/script&gt;</p>\n|<p>ok <strong>b</strong></p>|&lt;p&gt;ok &lt;strong&gt;b&lt;/strong&gt;&lt;/p&gt;');
    });

    it('a view cannot call writing or callback methods of a query', async () => {
      const r = await s.request('GET', '/hostile/');
      assert.equal(r.status, 200);
      assert.equal(r.body.toString(), '[][][]');
      const after = await s.request('GET', '/');
      assert.match(after.body.toString(), /count=2 /);
    });
  });
}
