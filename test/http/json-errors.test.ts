/**
 * Error answers to JSON clients (docs/errors.md "Error answers"): every one names its request id
 * in the body, as `X-Request-Id` does; in development mode (`serve --dev`, `dev`) also the code,
 * the message and where it failed, as the HTML page does for views.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { serve, type Response, type Served } from '../helpers.js';

const JSON_H = { accept: 'application/json' };
const FORM_H = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', 'sec-fetch-site': 'same-origin' };
const body = (r: Response) => JSON.parse(r.text) as Record<string, unknown>;

const APP = {
  '📦/🌐Task.yaml': 'title:\n  type: string\n  unique: true\n',
  'api/🖥crash.js': 'const o = null\nconst n = 1\no.x\n',
  'api/🖥refused.js': "throw 'not today'\n",
  'api/members/🖥index.js': '({ok: true})\n',
  'api/members/🖥index.yaml': '👤:\n  only: Editor\n',
  '👤.yaml': 'providers: [github]\nauth: optional\n\ndefault: all\n\nEditor: all\n',
  'tasks/POST.js': "import {Task} from '📦';\nimport {title} from 'form';\nnew Task().title(title);\n({})\n",
  'tasks/long/POST.js': "import {Task} from '📦';\nnew Task().title('x'.repeat(101));\n({})\n",
  'broken.html': "<!--TEMPLATE mustache-->\n{{% import {Crash} from '📤' }}\n<p>{{Crash}}</p>\n",
  '📤/Crash.js': 'const o = null\nconst Crash = () => o.x\nexport {Crash}\n',
};

for (const dev of [false, true]) {
  describe(`JSON error answers name the request id (${dev ? 'serve --dev' : 'serve'})`, () => {
    let s: Served;
    before(async () => {
      s = await serve(APP, { dev });
      const first = await s.request('POST', '/tasks', FORM_H, 'title=one');
      assert.equal(first.status, 200, first.text);
    });
    after(() => s.close());

    const idOf = (r: Response) => {
      const id = r.headers['x-request-id'];
      assert.equal(typeof id, 'string');
      assert.equal(body(r).id, id, r.text);
      return id;
    };

    it('a missing address, a refused role, a failed script, a failed view: the body has the id', async () => {
      for (const [path, status] of [['/nowhere', 404], ['/api/members/', 403], ['/api/crash', 500], ['/broken', 500]] as const) {
        const r = await s.get(path, JSON_H);
        assert.equal(r.status, status, `${path}: ${r.text}`);
        idOf(r);
        assert.equal(typeof body(r).error, 'string');
      }
    });

    it("Laneway's answers to model errors (422, 409) name the id; a script's own thrown value is its own", async () => {
      const invalid = await s.request('POST', '/tasks/long', FORM_H, '');
      assert.equal(invalid.status, 422, invalid.text);
      idOf(invalid);
      assert.ok(Array.isArray(body(invalid).messages));
      const conflict = await s.request('POST', '/tasks', FORM_H, 'title=one');
      assert.equal(conflict.status, 409, conflict.text);
      idOf(conflict);
      const own = await s.get('/api/refused', JSON_H);
      assert.equal(own.status, 400);
      assert.deepEqual(body(own), { error: 'not today' });
    });

    if (!dev) {
      it('in production the body says no more than the message and the id', async () => {
        for (const path of ['/api/crash', '/broken', '/nowhere']) {
          const r = await s.get(path, JSON_H);
          assert.deepEqual(Object.keys(body(r)), ['error', 'id'], r.text);
          assert.doesNotMatch(r.text, /TypeError|crash\.js|Crash\.js/);
        }
      });
    } else {
      it("a script's failure: the code, the message, the file, line and column", async () => {
        const r = await s.get('/api/crash', JSON_H);
        const b = body(r);
        assert.equal(b.id, r.headers['x-request-id']);
        assert.match(String(b.error), /^Something went wrong on our side/);
        assert.deepEqual([b.code, b.file, b.line, b.column], ['LW_SCRIPT_RUNTIME', '/api/🖥crash.js', 3, 3], r.text);
        assert.equal(b.message, "TypeError: Cannot read properties of null (reading 'x')");
      });

      it("a view's failure: the tag's position and what it ran into", async () => {
        const r = await s.get('/broken', JSON_H);
        const b = body(r);
        assert.deepEqual([b.code, b.file, b.line, b.column], ['LW_SCRIPT_RUNTIME', '/broken.html', 3, 4], r.text);
        assert.equal(b.message, "TypeError: Cannot read properties of null (reading 'x')");
        assert.match(String(b.detail), /> 3 \| <p>\{\{Crash\}\}<\/p>/);
      });

      it('an answer without a failing file has its code', async () => {
        const r = await s.get('/nowhere', JSON_H);
        assert.deepEqual(body(r), { error: 'There is nothing at this address.', id: r.headers['x-request-id'], code: 'LW_HTTP_NOT_FOUND', message: 'There is nothing at this address.' });
      });
    }
  });
}
