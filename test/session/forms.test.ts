/**
 * Forms at run time (docs/forms.md "In scripts and views at run time"), black-box over HTTP
 * on both engines, in the shapes of the public blueprints (own fixtures): a page renders a
 * model's default form with a form-state id bound to the visitor; a POST without a valid state of
 * this visitor is refused with 400 and writes nothing; an invalid submission redirects back with
 * `?_form=` and the view shows the values and messages; a valid one creates the record once (a
 * replay is refused); a JSON API fed by FormData uses a form file with
 * `requirePreviousState: false`.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { serve, type Served } from '../helpers.js';
import { ENGINES } from '../support/engines.js';
import { setCookies, TestVisitor } from '../support/visitor.js';

const APP = {
  '📦/🌐Note.yaml': 'title: string\ndone:\n  type: boolean\n  optional: true\nkind:\n  type: options\n  init: true\n  values: [plain, urgent]\n',
  'index.html':
    '<!--TEMPLATE mustache-->\n<!doctype html><html><head><title>Notes</title>{{% import {Note} from \'📦\' }}</head><body>\n' +
    '{{#Messages.all}}<p class="msg {{this.type}}">{{this.value}}</p>\n{{/Messages.all}}' +
    '{{#Note.Form.view as form}}<form action="/notes?_form={{form.id}}" method="POST" data-invalid="{{form.invalid}}">\n' +
    '{{#form.title}}<input name="{{path}}" {{{input.attributes}}}>{{#message}}<span class="err">{{value}}</span>{{/message}}{{/form.title}}\n' +
    '{{#form.kind}}<select name="{{path}}" {{{selectOne.attributes}}}>{{#selectOne.options}}<option value="{{value}}" {{#selected}}selected{{/selected}}>{{label}}</option>{{/selectOne.options}}</select>{{/form.kind}}\n' +
    '</form>{{/Note.Form.view}}\n<ul>{{#Note.all as n}}<li>{{n.title}}</li>{{/Note.all}}</ul></body></html>\n',
  'notes/POST.js':
    "import {Note} from '📦';\nconst note = new Note();\ntry {\n  Note.Form.submit(note);\n  Redirect.home().success('Added ' + note.title);\n} catch ($ModelInvalid) {\n  Redirect.home().invalid($ModelInvalid);\n}\n",
  'api/📤/⏳NewNote.yaml': '🎛:\n  requirePreviousState: false\n\n📦.Note:\n  - title\n  - kind\n',
  'api/notes/POST.js': "import {Note} from '📦';\nimport {NewNote} from '📤';\nconst note = new Note();\nNewNote.submit(note);\n({title: note.title, kind: note.kind});\n",
  'count/GET.js': "import {Note} from '📦';\n({count: Note.all().count()});\n",
};

const formId = (html: string) => /action="\/notes\?_form=([^"]+)"/.exec(html)?.[1];
const count = async (s: Served) => JSON.parse((await s.get('/count')).text).count as number;

for (const engine of ENGINES) {
  describe(`forms (${engine.name})`, () => {
    let s: Served;
    before(async () => {
      s = await serve(APP, { data: await engine.data() });
    });
    after(() => s?.close());

    it('a page with a form is a single-user page and starts the session', async () => {
      const v = new TestVisitor(s.port);
      const page = await v.get('/');
      assert.equal(page.status, 200);
      assert.equal(page.headers['cache-control'], 'no-cache, no-store, max-age=0, must-revalidate');
      assert.ok(setCookies(page).some((c) => c.startsWith('sid=')));
      assert.ok(formId(page.text));
      assert.match(page.text, /<input name="Note_title" type="text" required maxlength="100">/);
      assert.match(page.text, /<option value="plain" selected>Plain<\/option><option value="urgent" >Urgent<\/option>/);
    });

    it('a page with a fresh form id has no ETag (no two renders are the same); one showing a stored state has one, and 304', async () => {
      const v = new TestVisitor(s.port);
      const first = await v.get('/');
      const second = await v.get('/');
      assert.equal(second.status, 200);
      assert.notEqual(formId(first.text), formId(second.text));
      assert.equal(first.text.replaceAll(formId(first.text)!, 'ID'), second.text.replaceAll(formId(second.text)!, 'ID'), 'the same page but for the id');
      assert.equal(first.headers.etag, undefined);
      assert.equal(second.headers.etag, undefined);
      // Any validator a client makes up gets the page again, with a new id.
      const again = await v.get('/', { 'If-None-Match': '*' });
      assert.equal(again.status, 200);
      assert.ok(formId(again.text));
      // A refused submission's state is the same page every time it is shown (after the flash is gone).
      const bad = await v.post(`/notes?_form=${formId(again.text)}`, { Note_title: 'a'.repeat(120) });
      const back = String(bad.headers.location);
      await v.get(back);
      const shown = await v.get(back);
      assert.match(shown.text, /data-invalid="true"/);
      const etag = shown.headers.etag;
      assert.ok(typeof etag === 'string' && etag.startsWith('"'), 'a stored state shown has an ETag');
      assert.equal((await v.get(back, { 'If-None-Match': etag })).status, 304);
    });

    it('a POST without a form state of this visitor is refused with 400 and writes nothing', async () => {
      const before = await count(s);
      const a = new TestVisitor(s.port);
      const id = formId((await a.get('/')).text)!;
      const none = await a.post('/notes', { Note_title: 'x' });
      assert.equal(none.status, 400);
      const b = new TestVisitor(s.port);
      await b.get('/');
      const stolen = await b.post(`/notes?_form=${id}`, { Note_title: 'x' });
      assert.equal(stolen.status, 400, "another visitor's form id");
      // Altered in its last two characters (never to the same ones: a random id may end in any pair).
      const altered = id.slice(0, -2) + (id.endsWith('xx') ? 'yy' : 'xx');
      const forged = await a.post(`/notes?_form=${altered}`, { Note_title: 'x' });
      assert.equal(forged.status, 400);
      assert.equal(await count(s), before);
    });

    it('an invalid submission comes back with its values and messages; then a valid one is created once', async () => {
      const v = new TestVisitor(s.port);
      const id = formId((await v.get('/')).text)!;
      const bad = await v.post(`/notes?_form=${id}`, { Note_title: '"><script>x</script>' + 'a'.repeat(120), Note_kind: 'urgent' });
      assert.equal(bad.status, 302);
      const back = String(bad.headers.location);
      assert.match(back, /^\/\?_form=s[\w-]{24}$/);
      const shown = await v.get(back);
      assert.match(shown.text, /data-invalid="true"/);
      assert.match(shown.text, /value="&quot;&gt;&lt;script&gt;x&lt;\/script&gt;a+"/);
      assert.match(shown.text, /<span class="err">Title must be at most 100 characters long \(it has 140\)<\/span>/);
      assert.match(shown.text, /<option value="urgent" selected>/);
      assert.doesNotMatch(shown.text, /<script>/);
      // Another visitor cannot read that state: a fresh form.
      const other = new TestVisitor(s.port);
      const theirs = await other.get(back);
      assert.match(theirs.text, /data-invalid="false"/);
      assert.doesNotMatch(theirs.text, /script&gt;/);
      // Resubmitting from the stored state works, once.
      const before = await count(s);
      const again = formId(shown.text)!;
      const ok = await v.post(`/notes?_form=${again}`, { Note_title: 'Milk', Note_kind: 'plain' });
      assert.equal(ok.status, 302);
      assert.equal(ok.headers.location, '/');
      const page = await v.get('/');
      assert.match(page.text, /<p class="msg success">Added Milk<\/p>/);
      assert.equal(await count(s), before + 1);
      const replay = await v.post(`/notes?_form=${again}`, { Note_title: 'Milk', Note_kind: 'plain' });
      assert.equal(replay.status, 400);
      assert.equal(await count(s), before + 1);
    });

    it('only the form fields are read: other body fields never reach the record', async () => {
      const v = new TestVisitor(s.port);
      const id = formId((await v.get('/')).text)!;
      const res = await v.post(`/notes?_form=${id}`, { Note_title: 'T', Note_done: 'true', Note_id: 'zzz' });
      assert.equal(res.status, 302);
    });

    it('a JSON API fed by FormData (multipart) with requirePreviousState: false', async () => {
      const v = new TestVisitor(s.port);
      const boundary = 'x123';
      const body = `--${boundary}\r\nContent-Disposition: form-data; name="Note_title"\r\n\r\nBuy bread\r\n--${boundary}--\r\n`;
      const created = await v.request('POST', '/api/notes', body, { 'Content-Type': `multipart/form-data; boundary=${boundary}` });
      assert.equal(created.status, 200, created.text);
      assert.deepEqual(JSON.parse(created.text), { title: 'Buy bread', kind: 'plain' });
      const bad = await v.post('/api/notes', { Note_title: 'x', Note_kind: 'nope' });
      assert.equal(bad.status, 422);
      assert.deepEqual(JSON.parse(bad.text).messages.map((m: { field: string }) => m.field), ['Note_kind']);
      assert.deepEqual(setCookies(created), [], 'no session for a form without state');
    });
  });
}

describe('an HTML supplier called with a form field', () => {
  it('receives the field as `this` and prints its control', async () => {
    const s = await serve({
      '📦/🌐Contact.yaml': 'firstName: string\nlastName:\n  type: string\n  optional: true\n',
      '📤/InputControl.html': '<!--TEMPLATE mustache-->\n<label>{{this.label}} <input name="{{this.path}}" {{{this.input.attributes}}}></label>\n',
      'index.html':
        "<!--TEMPLATE mustache-->\n<!doctype html><html><head><title>x</title>{{% import {Contact} from '📦' }}{{% import {InputControl} from '📤' }}</head><body>\n" +
        '{{#Contact.Form.view as form}}<form action="/c?_form={{form.id}}" method="POST">{{{ InputControl form.firstName }}}{{{ InputControl form.lastName }}}</form>{{/Contact.Form.view}}\n</body></html>\n',
    });
    try {
      const page = await s.get('/');
      assert.equal(page.status, 200);
      assert.match(page.text, /<label>First Name <input name="Contact_firstName" type="text" required maxlength="100"><\/label>/);
      assert.match(page.text, /<label>Last Name <input name="Contact_lastName" type="text" maxlength="100"><\/label>/);
    } finally {
      await s.close();
    }
  });
});
