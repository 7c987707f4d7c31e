/**
 * The error answers of app/endpoint/answers.ts as clients get them: one message per error, whichever part
 * of the server answers it, as JSON or as the HTML page by what the client accepts; on both
 * engines where the store is involved.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { answers, closeAppData, loadApp, openAppData, type App } from '../../src/app/index.js';
import { createServer, type LanewayServer } from '../../src/http/index.js';
import { jsonWithoutId, rawRequest, serve, writeApp, type Response, type Served } from '../helpers.js';
import { StoreError } from '../../src/store/index.js';
import { ENGINES } from '../support/engines.js';

const JSON_H = { accept: 'application/json' };
const FORM_H = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
const json = (r: Response) => jsonWithoutId(r) as Record<string, unknown>;

const APP = {
  '📦/🌐Task.yaml': 'title: string\n',
  '👤.yaml': 'providers: [github]\nauth: optional\n\ndefault: all\n\nEditor: all\n',
  'tasks/POST.js': "import {Task} from '📦';\nimport {title} from 'form';\nlet t = new Task().title(title);\n({id: t.id});\n",
  'tasks/{task}/🔗.yaml': 'field: 📦.Task.id\n',
  'tasks/{task}/GET.js': "import {task} from '🔗';\n({title: task.get().title});\n",
  'members/🖥index.js': '({ok: true});\n',
  'members/🖥index.yaml': '👤:\n  only: Editor\n',
  'members/👤.yaml': 'auth: none\n',
  'private/👤.yaml': 'auth: required\n',
  'private/🖥index.js': '({ok: true});\n',
};

const UNAVAILABLE = 'The database is unavailable; nothing was changed. Try again in a moment.';

for (const engine of ENGINES) {
  describe(`one message for an unavailable database, wherever it is met (${engine.name})`, () => {
    let dir: string;
    let app: App;
    let server: LanewayServer;
    let port: number;
    let id: string;
    const get = (path: string, headers: Record<string, string> = JSON_H) => rawRequest(port, 'GET', path, headers);
    before(async () => {
      dir = writeApp(APP);
      app = loadApp(dir);
      await openAppData(app, await engine.data());
      server = createServer(app, { log: 'off' });
      port = (await server.listen(0, '127.0.0.1')).port;
      const made = await rawRequest(port, 'POST', '/tasks', FORM_H, 'title=one');
      assert.equal(made.status, 200, made.body.toString());
      id = String(json(made).id);
      assert.deepEqual(json(await get(`/tasks/${id}`)), { title: 'one' });
    });
    after(async () => {
      await server.close();
      await closeAppData(app);
      rmSync(dir, { recursive: true, force: true });
    });

    it('a store that fails: the path parameter, the signed-in user and a write answer alike', async () => {
      // A visitor's session: the auth gate reads it from the store.
      const sid = `sid=${app.data!.visitors!.signer.newSid().cookie}`;
      // The engine goes away under the open app: every read and every transaction fails.
      await app.data!.store!.engine.close();
      for (const [path, headers] of [[`/tasks/${id}`, JSON_H], ['/private/', { ...JSON_H, cookie: sid }]] as const) {
        const r = await get(path, headers);
        assert.equal(r.status, 503, `${path}: ${r.body.toString()}`);
        assert.deepEqual(json(r), { error: UNAVAILABLE }, path);
        assert.equal(r.headers['content-type'], 'application/json; charset=utf-8');
      }
      const write = await rawRequest(port, 'POST', '/tasks', FORM_H, 'title=two');
      assert.equal(write.status, 503);
      assert.deepEqual(json(write), { error: UNAVAILABLE });
      // The HTML page says the same, with the request id its log line has.
      const page = await get(`/tasks/${id}`, { accept: 'text/html' });
      assert.equal(page.status, 503);
      assert.match(page.headers['content-type'] as string, /^text\/html/);
      assert.ok(page.body.toString().includes(`<p>${UNAVAILABLE} The error was logged with id ${page.headers['x-request-id']}.</p>`), page.body.toString());
      assert.match(page.headers['content-security-policy'] as string, /default-src 'none'/);
    });

    it('a store that is not open: the path parameter, the roles, the auth gate and a write answer alike', async () => {
      await closeAppData(app);
      for (const path of [`/tasks/${id}`, '/members/', '/private/']) {
        const r = await get(path);
        assert.equal(r.status, 503, path);
        assert.deepEqual(json(r), { error: UNAVAILABLE }, path);
      }
      const write = await rawRequest(port, 'POST', '/tasks', FORM_H, 'title=three');
      assert.deepEqual([write.status, json(write)], [503, { error: UNAVAILABLE }]);
    });
  });
}

describe('one message for a failure, whether a script or a view met it', () => {
  let s: Served;
  before(async () => {
    s = await serve({
      '🖥crash.js': 'const o = null\no.x\n',
      '🖥deep.js': 'const deep = (n) => deep(n + 1)\ndeep(0)\n',
      'page.html': "<!--TEMPLATE mustache-->\n{{% import {Deep} from '📤' }}<p>{{Deep}}</p>\n",
      '📤/Deep.js': 'const deep = (n) => deep(n + 1)\nconst Deep = () => deep(0)\nexport {Deep}\n',
      'broken.html': "<!--TEMPLATE mustache-->\n{{% import {Crash} from '📤' }}<p>{{Crash}}</p>\n",
      '📤/Crash.js': 'const o = null\nconst Crash = () => o.x\nexport {Crash}\n',
    });
  });
  after(() => s.close());
  const logged = (id: unknown) => `The error was logged with id ${String(id)}.`;

  it('an uncaught error: the same 500 message from a script as from a view, naming the request id', async () => {
    const script = await s.get('/crash', JSON_H);
    assert.equal(script.status, 500);
    assert.deepEqual(json(script), { error: `Something went wrong on our side. ${logged(script.headers['x-request-id'])}` });
    const view = await s.get('/broken', JSON_H);
    assert.equal(view.status, 500, view.text);
    assert.deepEqual(json(view), { error: `Something went wrong on our side. ${logged(view.headers['x-request-id'])}` });
  });

  it('a limit: the same 503 message from a script as from a view', async () => {
    const over = (id: unknown) => `This request needed more time or memory than a request may use, and was stopped; try again later. ${logged(id)}`;
    const script = await s.get('/deep', JSON_H);
    assert.equal(script.status, 503, script.text);
    assert.deepEqual(json(script), { error: over(script.headers['x-request-id']) });
    const view = await s.get('/page', JSON_H);
    assert.equal(view.status, 503, view.text);
    assert.deepEqual(json(view), { error: over(view.headers['x-request-id']) });
    // The HTML page says it once, the id included.
    const page = await s.get('/deep', { accept: 'text/html' });
    assert.ok(page.text.includes(`<p>${over(page.headers['x-request-id'])}</p>`), page.text);
  });
});

describe('the catalogue', () => {
  it('a failed store is a 503, anything else is thrown again', () => {
    assert.deepEqual(answers.storeFailed(new StoreError('LW_STORE_UNAVAILABLE', 'gone')), { type: 'error', status: 503, code: 'LW_STORE_UNAVAILABLE', message: UNAVAILABLE });
    const other = new Error('a bug');
    assert.throws(() => answers.storeFailed(other), (e) => e === other);
  });
});
