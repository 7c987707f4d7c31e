/**
 * What one visitor can leave in the store is bounded (docs/security.md "Bounds on what a visitor
 * can send and store"), on both engines, read from the stored rows themselves:
 * - a refused submission's form state keeps at most each field's own maximum of what was sent
 *   (a title of `max: 80` keeps 80 characters of a 900 KB post), at most 64 KiB of values, and a
 *   visitor keeps at most 10 form states;
 * - a session's flash keeps the 50 newest `Messages.data` values, as it keeps the 50 newest
 *   messages.
 * Before these bounds, 8 refused 900 KB posts reusing one form id stored 7 MB of form states, and
 * 20 posts of 50 `Messages.data` values left a 2 MB session row.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { closeAppData, loadApp, openAppData, type App } from '../../src/app/index.js';
import { createServer } from '../../src/http/index.js';
import { writeApp } from '../helpers.js';
import { ENGINES } from '../support/engines.js';
import { TestVisitor } from '../support/visitor.js';

const APP = {
  '📦/🌐Post.yaml':
    'title:\n  type: string\n  max: 80\nbody?:\n  type: html\n  max: 100\na?:\n  type: markdown\n  max: 20000\nb?:\n  type: markdown\n  max: 20000\nc?:\n  type: markdown\n  max: 20000\nsizes?[3]:\n  type: options\n  values: [s, m, l]\n',
  'index.html':
    "<!--TEMPLATE mustache-->\n{{% import {Post} from '📦' }}\n{{#Post.Form.view as form}}<form action=\"/posts?_form={{form.id}}\" method=\"POST\" data-invalid=\"{{form.invalid}}\">" +
    '{{#form.title}}<input name="{{path}}" {{{input.attributes}}}>{{#message}}<p class="err">{{value}}</p>{{/message}}{{/form.title}}' +
    '{{#form.body}}<textarea name="{{path}}">{{textarea.value}}</textarea>{{/form.body}}</form>{{/Post.Form.view}}\n' +
    '<p id="data">{{Messages.data.last}}|{{Messages.data.k0_0}}|{{Messages.data.k19_48}}</p>\n',
  'posts/POST.js': "import {Post} from '📦';\nconst post = new Post();\ntry {\n  Post.Form.submit(post);\n  Redirect.home();\n} catch ($ModelInvalid) {\n  Redirect.home().invalid($ModelInvalid);\n}\n",
  '📮leave.js':
    "import {n} from 'form';\nArray.from({length: 49}, (_, i) => i).forEach((i) => Messages.data('k' + n + '_' + i, 'x'.repeat(2000)));\nMessages.data('last', 'post ' + n);\nRedirect.home();\n",
};

const formId = (html: string): string => /_form=([^"]+)"/.exec(html)![1]!;
/** The session id of a visitor's `sid` cookie (`id.mac`). */
const sidOf = (v: TestVisitor): string => v.jar.get('sid')!.slice(0, 24);

for (const engine of ENGINES) {
  describe(`what a visitor stores is bounded (${engine.name})`, () => {
    let app: App;
    let dir: string;
    let port: number;
    let close: () => Promise<void>;
    before(async () => {
      dir = writeApp(APP);
      app = loadApp(dir);
      await openAppData(app, await engine.data());
      const server = createServer(app, { log: 'off' });
      port = (await server.listen(0, '127.0.0.1')).port;
      close = () => server.close();
    });
    after(async () => {
      await close?.();
      if (app) await closeAppData(app);
      rmSync(dir, { recursive: true, force: true });
    });

    /** Stored rows, as text, of a query with no parameters. */
    const rows = async (sql: string): Promise<string[][]> => (await app.data!.store!.engine.reader.all(sql, [])).map((r) => r.map(String));
    const formStates = async (): Promise<Array<{ sid: string; bytes: number; data: Record<string, unknown> }>> =>
      (await rows('SELECT "sid", "data" FROM "lw__form_state"')).map(([sid, data]) => ({ sid: sid!, bytes: Buffer.byteLength(data!, 'utf8'), data: JSON.parse(data!) }));

    it('8 refused 900 KB posts reusing one form id store what the title may hold, not 7 MB', async () => {
      const v = new TestVisitor(port);
      const id = formId((await v.get('/')).text);
      let back = '';
      for (let i = 0; i < 8; i++) {
        const r = await v.post(`/posts?_form=${id}`, { Post_title: `${i}`.repeat(900_000) });
        assert.equal(r.status, 302);
        back = String(r.headers.location);
      }
      const states = (await formStates()).filter((s) => s.sid === sidOf(v));
      assert.equal(states.length, 8);
      for (const s of states) assert.ok(s.bytes < 400, `a stored form state of ${s.bytes} bytes`);
      const total = states.reduce((n, s) => n + s.bytes, 0);
      assert.ok(total < 3200, `${total} bytes of form states`);
      // The view shows the title as far as the field takes it, with the message about all of it.
      const shown = await v.get(back);
      assert.match(shown.text, /data-invalid="true"/);
      assert.match(shown.text, / value="7{80}" /);
      assert.match(shown.text, /Title must be at most 80 characters long \(it has 900000\)/);
    });

    it('each field keeps its own maximum; a form state at most 64 KiB; a visitor at most 10 states', async () => {
      const v = new TestVisitor(port);
      const id = formId((await v.get('/')).text);
      const body = new URLSearchParams([
        ['Post_title', ''],
        ['Post_body', '<b>é</b>'.repeat(1000)],
        ['Post_a', 'é'.repeat(25_000)],
        ['Post_b', 'é'.repeat(20_000)],
        ['Post_c', 'é'.repeat(20_000)],
        ...Array.from({ length: 1000 }, () => ['Post_sizes', 'xl'.repeat(50)] as [string, string]),
      ]).toString();
      const r = await v.request('POST', `/posts?_form=${id}`, body);
      assert.equal(r.status, 302);
      const sid = sidOf(v);
      const [state] = (await formStates()).filter((s) => s.sid === sid);
      const values = (state!.data as { values: Record<string, unknown> }).values;
      assert.equal(values.title, '');
      assert.equal(values.body, '<b>é</b>'.repeat(22) + '<b', 'html: twice its max (200 bytes), cut between characters');
      assert.equal(values.a, 'é'.repeat(20_000), 'Markdown: its max in characters');
      assert.deepEqual(values.sizes, ['x', 'x', 'x'], 'choices: one per option, each as long as the longest option');
      assert.ok(state!.bytes <= 64 * 1024 + 2000, `${state!.bytes} bytes`);
      assert.ok(!('b' in values) && !('c' in values), 'the fields past 64 KiB are left out');
      // Twelve more refused posts of the same visitor: its 10 newest states are kept.
      let last = '';
      for (let i = 0; i < 12; i++) last = String((await v.post(`/posts?_form=${id}`, { Post_title: `try ${i}`, Post_sizes: 'xl' })).headers.location);
      const mine = (await formStates()).filter((s) => s.sid === sid);
      assert.equal(mine.length, 10);
      const titles = mine.map((s) => (s.data as { values: { title: string } }).values.title);
      for (let i = 3; i < 12; i++) assert.ok(titles.includes(`try ${i}`), `try ${i} is kept`);
      assert.ok(!titles.includes('try 0') && !titles.includes(''), 'the oldest are deleted');
      assert.match((await v.get(last)).text, /data-invalid="true"/);
    });

    it('20 posts of 50 Messages.data values each leave the 50 newest, not 2 MB', async () => {
      const v = new TestVisitor(port);
      await v.get('/');
      const sid = sidOf(v);
      for (let n = 0; n < 20; n++) assert.equal((await v.post('/leave', { n: String(n) })).status, 302);
      const [row] = await rows(`SELECT "flash" FROM "lw__session" WHERE "id" = '${sid}'`);
      const bytes = Buffer.byteLength(row![0]!, 'utf8');
      assert.ok(bytes < 110_000, `a flash of ${bytes} bytes`);
      const data = (JSON.parse(row![0]!) as { data: Record<string, string> }).data;
      assert.equal(Object.keys(data).length, 50);
      assert.deepEqual(Object.keys(data).slice(-2), ['k19_48', 'last']);
      // The next page shows the newest; the oldest are gone.
      const page = await v.get('/');
      assert.match(page.text, new RegExp(`<p id="data">post 19\\|\\|${'x'.repeat(2000)}</p>`));
    });
  });
}
