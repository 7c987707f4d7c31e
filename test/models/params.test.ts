/**
 * Model-backed path parameters (docs/routing.md "Dynamic segments"), on both engines: an id or a uid
 * field names a record; an unknown value answers 404 through the nearest ⚡NotFound.html before
 * any script runs; a contained record must belong to the container on the path; an old uid answers
 * 301 to the current one; `values: 📦.M.options` accepts exactly that field's values; a 🔗.yaml
 * naming a missing model or a field that cannot name a record is a build error.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { serve, type Served } from '../helpers.js';
import { loadApp } from '../../src/app/index.js';
import { writeApp } from '../helpers.js';
import { ENGINES } from '../support/engines.js';

const J = { accept: 'application/json' };
const FORM = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
const json = (r: { body: Buffer }) => JSON.parse(r.body.toString());

const APP = {
  '📦/🌐Article.yaml': 'slug: uid\ntitle: string\nstatus:\n  type: options\n  init: true\n  values:\n    - draft\n    - live\n',
  '📦/🌐List.yaml': 'title: string\n',
  '📦/List/🌐Note.yaml': 'title: string\n',
  '⚡NotFound.html': '<!--TEMPLATE mustache-->\n<p>custom not found</p>',
  'articles/POST.js': "import {Article} from '📦';\nimport {slug, title} from 'form';\nlet a = new Article().slug(slug).title(title);\n({id: a.id});\n",
  'articles/{article}/🔗.yaml': 'field: 📦.Article.slug\n',
  'articles/{article}/GET.js': "import {article} from '🔗';\nlet a = article.get();\n({id: article.id, slug: a.slug, title: a.title});\n",
  'articles/{article}/index.html': '<!--TEMPLATE mustache-->\n{{% import {article} from \'🔗\' }}<h1>{{article.get.title}}</h1>',
  'articles/{article}/📮rename.js': "import {article} from '🔗';\nimport {slug} from 'form';\nlet a = article.get();\na.slug = slug;\n({slug: a.slug});\n",
  'articles/{article}/📮move.js': "import {article} from '🔗';\nimport {slug} from 'form';\nlet a = article.get();\na.title = 'Moved';\na.slug = slug;\n({slug: a.slug});\n",
  'by-id/{art}/🔗.yaml': 'field: 📦.Article.id\n',
  'by-id/{art}/fields/GET.js': "import {art} from '🔗';\n({title: art.title, status: art.status, slug: art.slug});\n",
  'by-id/{art}/📮remove.js': "import {art} from '🔗';\nart.get().remove();\n({removed: art.title});\n",
  'by-id/{art}/📮retitle.js': "import {art} from '🔗';\nconst before = art.title;\nart.get().title = 'Renamed';\n({before: before, after: art.title});\n",
  'lists/{list}/notes/{note}/title/GET.js': "import {note, list} from '🔗';\n({note: note.title, list: list.title});\n",
  'by-id/{art}/GET.js': "import {art} from '🔗';\nart.get().title;\n",
  'status/{s}/🔗.yaml': 'values: 📦.Article.status\n',
  'status/{s}/GET.js': "import {Article} from '📦';\nimport {s} from '🔗';\n({s: s.$value, n: Article.status(s.$value).count()});\n",
  'lists/POST.js': "import {List, Note} from '📦';\nlet l = new List().title('L');\nlet n = new Note(l).title('n');\n({list: l.id, note: n.id});\n",
  'lists/{list}/🔗.yaml': 'field: 📦.List.id\n',
  'lists/{list}/notes/{note}/🔗.yaml': 'field: 📦.Note.id\n',
  'lists/{list}/notes/{note}/GET.js': "import {note} from '🔗';\nnote.get().title;\n",
};

for (const engine of ENGINES) {
  describe(`model-backed path parameters on ${engine.name}`, () => {
    let s: Served;
    before(async () => {
      s = await serve(APP, { data: await engine.data() });
    });
    after(() => s.close());

    it('a uid parameter names its record; the script gets a link with the record id', async () => {
      const made = json(await s.request('POST', '/articles', FORM, 'slug=first-post&title=Hello'));
      const r = await s.request('GET', '/articles/first-post', J);
      assert.equal(r.status, 200);
      assert.deepEqual(json(r), { id: made.id, slug: 'first-post', title: 'Hello' });
      const page = await s.request('GET', '/articles/first-post/');
      assert.equal(page.status, 200);
      assert.match(page.body.toString(), /<h1>Hello<\/h1>/);
      const byId = await s.request('GET', `/by-id/${made.id}`, J);
      assert.equal(byId.status, 200);
      assert.equal(json(byId), 'Hello');
    });

    it('a parameter reads its record\'s fields at once, also after this request changed or removed it', async () => {
      const made = json(await s.request('POST', '/articles', FORM, 'slug=fields-post&title=Field+read'));
      assert.deepEqual(json(await s.request('GET', `/by-id/${made.id}/fields`, J)), { title: 'Field read', status: 'draft', slug: 'fields-post' });
      // In the shape of a delete endpoint whose message names what it deleted.
      const retitled = await s.request('POST', `/by-id/${made.id}/retitle`, J);
      assert.deepEqual(json(retitled), { before: 'Field read', after: 'Renamed' });
      const removed = await s.request('POST', `/by-id/${made.id}/remove`, J);
      assert.equal(removed.status, 200);
      assert.deepEqual(json(removed), { removed: 'Renamed' });
      assert.equal((await s.request('GET', `/by-id/${made.id}/fields`, J)).status, 404);
      const l = json(await s.request('POST', '/lists', FORM, ''));
      assert.deepEqual(json(await s.request('GET', `/lists/${l.list}/notes/${l.note}/title`, J)), { note: 'n', list: 'L' });
    });

    it('an unknown value answers 404 before the script runs, with the nearest ⚡NotFound.html', async () => {
      const html = await s.request('GET', '/articles/no-such-post');
      assert.equal(html.status, 404);
      assert.match(html.body.toString(), /custom not found/);
      const asJson = await s.request('GET', '/articles/no-such-post', J);
      assert.equal(asJson.status, 404);
      assert.equal((await s.request('GET', '/by-id/AAAAAAAAAAAAAAAA', J)).status, 404);
      // A write to an unknown record is not found either (and writes nothing).
      assert.equal((await s.request('POST', '/articles/no-such-post/rename', FORM, 'slug=x-y')).status, 404);
    });

    it('an old uid answers 301 to the current one, keeping the query; the old value then belongs to nobody else', async () => {
      await s.request('POST', '/articles', FORM, 'slug=old-name&title=Renamed');
      const renamed = await s.request('POST', '/articles/old-name/rename', FORM, 'slug=new-name');
      assert.equal(renamed.status, 200, renamed.body.toString());
      const r = await s.request('GET', '/articles/old-name/?x=1');
      assert.equal(r.status, 301);
      assert.equal(r.headers.location, '/articles/new-name/?x=1');
      const api = await s.request('GET', '/articles/old-name', J);
      assert.equal(api.status, 301);
      assert.equal(api.headers.location, '/articles/new-name');
      assert.equal((await s.request('GET', '/articles/new-name', J)).status, 200);
      // A write to the old address keeps its method and body: 308.
      const write = await s.request('POST', '/articles/old-name/rename', FORM, 'slug=newer-name');
      assert.equal(write.status, 308);
      assert.equal(write.headers.location, '/articles/new-name/rename');
    });

    it('an old uid stays its record\'s: another record cannot take it (409, nothing written); the record itself can take it back', async () => {
      const a = json(await s.request('POST', '/articles', FORM, 'slug=kept-a&title=A'));
      assert.equal((await s.request('POST', '/articles/kept-a/rename', FORM, 'slug=kept-b')).status, 200);
      // Creating another record with A's old slug: 409 naming the field and the value.
      const taken = await s.request('POST', '/articles', FORM, 'slug=kept-a&title=B');
      assert.equal(taken.status, 409, taken.body.toString());
      assert.match(json(taken).error, /Slug \("kept-a"\)/);
      let r = await s.request('GET', '/articles/kept-a', J);
      assert.equal(r.status, 301);
      assert.equal(r.headers.location, '/articles/kept-b');
      // Renaming another record to it: 409 too, and the script's other writes roll back.
      const c = json(await s.request('POST', '/articles', FORM, 'slug=kept-c&title=C'));
      const moved = await s.request('POST', '/articles/kept-c/move', FORM, 'slug=kept-a');
      assert.equal(moved.status, 409, moved.body.toString());
      assert.deepEqual(json(await s.request('GET', '/articles/kept-c', J)), { id: c.id, slug: 'kept-c', title: 'C' });
      assert.equal((await s.request('GET', '/articles/kept-a', J)).headers.location, '/articles/kept-b');
      // A live value of another record conflicts as before.
      assert.equal((await s.request('POST', '/articles/kept-c/rename', FORM, 'slug=kept-b')).status, 409);
      // A takes its old slug back; kept-b is now its old one, and redirects.
      const back = await s.request('POST', '/articles/kept-b/rename', FORM, 'slug=kept-a');
      assert.equal(back.status, 200, back.body.toString());
      assert.deepEqual(json(await s.request('GET', '/articles/kept-a', J)), { id: a.id, slug: 'kept-a', title: 'A' });
      r = await s.request('GET', '/articles/kept-b', J);
      assert.equal(r.status, 301);
      assert.equal(r.headers.location, '/articles/kept-a');
      assert.equal((await s.request('POST', '/articles', FORM, 'slug=kept-b&title=D')).status, 409);
      // And once more: the entry A took back is gone, so renaming away and back again still works.
      assert.equal((await s.request('POST', '/articles/kept-a/rename', FORM, 'slug=kept-b')).status, 200);
      assert.equal((await s.request('GET', '/articles/kept-a', J)).headers.location, '/articles/kept-b');
    });

    it('concurrently, a rename and a create of the old value never both succeed: the create answers 409', async () => {
      const n = 30;
      await Promise.all(Array.from({ length: n }, (_, i) => s.request('POST', '/articles', FORM, `slug=race-${i}-a&title=R`)));
      const results = await Promise.all(
        Array.from({ length: n }, (_, i) =>
          Promise.all([s.request('POST', `/articles/race-${i}-a/rename`, FORM, `slug=race-${i}-b`), s.request('POST', '/articles', FORM, `slug=race-${i}-a&title=Other`)]),
        ),
      );
      results.forEach(([renamed, created], i) => {
        assert.equal(renamed.status, 200, `rename ${i}: ${renamed.body.toString()}`);
        assert.equal(created.status, 409, `create ${i}: ${created.body.toString()}`);
      });
      for (let i = 0; i < n; i++) assert.equal((await s.request('GET', `/articles/race-${i}-a`, J)).headers.location, `/articles/race-${i}-b`);
    });

    it('a contained record must belong to the container named on the path', async () => {
      const a = json(await s.request('POST', '/lists', J));
      const b = json(await s.request('POST', '/lists', J));
      assert.equal((await s.request('GET', `/lists/${a.list}/notes/${a.note}`, J)).status, 200);
      assert.equal((await s.request('GET', `/lists/${b.list}/notes/${a.note}`, J)).status, 404);
      assert.equal((await s.request('GET', `/lists/nope/notes/${a.note}`, J)).status, 404);
    });

    it('values: 📦.M.options accepts exactly the option values', async () => {
      const r = await s.request('GET', '/status/draft', J);
      assert.equal(r.status, 200);
      assert.equal(json(r).s, 'draft');
      assert.equal((await s.request('GET', '/status/bogus', J)).status, 404);
    });
  });
}

describe('🔗.yaml naming models: build errors', () => {
  const check = (files: Record<string, string>) => {
    try {
      loadApp(writeApp({ '📦/🌐Task.yaml': 'title: string\nkind:\n  type: options\n  values:\n    - a\n', ...files }));
      return '';
    } catch (e) {
      return String((e as Error).message);
    }
  };
  it('a missing model, a field that cannot name a record, values of a non-options field', () => {
    assert.match(check({ 'x/{t}/🔗.yaml': 'field: 📦.Nope.id\n', 'x/{t}/GET.js': '1;\n' }), /x\/\{t\}\/🔗\.yaml.*no model Nope.*Task/);
    assert.match(check({ 'x/{t}/🔗.yaml': 'field: 📦.Task.title\n', 'x/{t}/GET.js': '1;\n' }), /must name the id or a uid field of Task \(title is a string field\)/);
    assert.match(check({ 'x/{t}/🔗.yaml': 'values: 📦.Task.title\n', 'x/{t}/GET.js': '1;\n' }), /needs an options field/);
    assert.equal(check({ 'x/{t}/🔗.yaml': 'values: 📦.Task.kind\n', 'x/{t}/GET.js': '1;\n' }), '');
  });
});
