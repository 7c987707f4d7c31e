/**
 * Visitors, flash messages and cookies (docs/messages.md), black-box over HTTP on both engines: the
 * session is made lazily and signed; a message shows on the visitor's next page only, and to no
 * other visitor; cookies are written only when a POST succeeds, with fixed flags; a forged `sid` is
 * a fresh visitor.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { diagnosticsOf, jsonWithoutId, serve, type Served } from '../helpers.js';
import { ENGINES } from '../support/engines.js';
import { setCookies, TestVisitor } from '../support/visitor.js';

const APP = {
  'index.html':
    '<!--TEMPLATE mustache-->\n<!doctype html><html><head><title>Home</title></head><body>\n' +
    '{{#Messages.all}}<p class="msg {{this.type}}" data-field="{{this.field}}">{{this.value}}</p>\n{{/Messages.all}}' +
    '<p id="data">{{Messages.data.note}}</p></body></html>\n',
  'plain.html': '<!--TEMPLATE mustache-->\n<!doctype html><html><head><title>Plain</title></head><body><p>plain</p></body></html>\n',
  '📮add.js': "import {who} from 'form';\nMessages.data('note', 'from add');\nRedirect.home().success('Added ' + who);\n",
  '📮global.js': "Messages.warning('Careful');\nMessages.info('Noted');\n({ok: true});\n",
  '📮fail.js': "Messages.success('never shown');\nthrow 'no';\n",
  '📮thrownRedirect.js': "throw Redirect.home().error('Could not do it');\n",
  '📮field.js': "throw Messages.fieldError('title', 'Not Good');\n",
  '📮now.js': "Messages.success('one');\nMessages.fieldInfo('name', 'two');\nconst m = Messages.now();\n({messages: m});\n",
  '📮cookie.js': "import {v} from 'form';\nCookie.name('theme').value(v).days(30).submit();\nnew Cookie().name('lang').value('en');\nCookie.name('unsent').value('x');\n({ok: true});\n",
  '📮cookieFail.js': "Cookie.name('theme').value('x').submit();\nthrow 'no';\n",
  '📮forget.js': "Cookie.name('theme').invalidate().submit();\n({ok: true});\n",
  '📮sidCookie.js': "import {n} from 'form';\nCookie.name(n || 'sid').value('x').submit();\n({ok: true});\n",
  '📮badName.js': "import {n} from 'form';\nCookie.name(n || '_x').value('x').submit();\n({ok: true});\n",
  'get/GET.js': "Cookie.name('theme').value('x').submit();\n({ok: true});\n",
  'read/GET.js': "import * as C from '🍪';\nimport {theme, sid} from '🍪';\n({theme: theme, sid: sid, names: Object.keys(C).sort()});\n",
};

for (const engine of ENGINES) {
  describe(`visitors, messages and cookies (${engine.name})`, () => {
    let s: Served;
    before(async () => {
      s = await serve(APP, { data: await engine.data() });
    });
    after(() => s?.close());

    it('a page sets no session cookie until a feature needs one', async () => {
      const v = new TestVisitor(s.port);
      const res = await v.get('/');
      assert.equal(res.status, 200);
      assert.deepEqual(setCookies(res), []);
    });

    it('a redirect message shows on the next page only, escaped, with Messages.data', async () => {
      const v = new TestVisitor(s.port);
      const posted = await v.post('/add', { who: '<b>Ann</b>' });
      assert.equal(posted.status, 302);
      assert.equal(posted.headers.location, '/');
      const sid = setCookies(posted).find((c) => c.startsWith('sid='));
      assert.ok(sid, 'a session cookie');
      assert.match(sid!, /; Path=\/; HttpOnly; SameSite=Lax; Secure$/);
      const page = await v.get('/');
      assert.match(page.text, /<p class="msg success" data-field="">Added &lt;b&gt;Ann&lt;\/b&gt;<\/p>/);
      assert.match(page.text, /<p id="data">from add<\/p>/);
      assert.equal(page.headers['cache-control'], 'no-cache, no-store, max-age=0, must-revalidate');
      const again = await v.get('/');
      assert.doesNotMatch(again.text, /Added/);
      assert.match(again.text, /<p id="data"><\/p>/);
    });

    it("one visitor's messages never reach another visitor", async () => {
      const a = new TestVisitor(s.port);
      const b = new TestVisitor(s.port);
      await a.post('/add', { who: 'Private' });
      await b.post('/global');
      const pageB = await b.get('/');
      assert.doesNotMatch(pageB.text, /Private/);
      assert.match(pageB.text, /Careful/);
      const pageA = await a.get('/');
      assert.match(pageA.text, /Added Private/);
      assert.doesNotMatch(pageA.text, /Careful/);
    });

    it('the next HTML page takes the messages even when it does not show them', async () => {
      const v = new TestVisitor(s.port);
      await v.post('/global');
      assert.equal((await v.get('/plain')).status, 200);
      assert.doesNotMatch((await v.get('/')).text, /Careful/);
    });

    it('a failed request leaves no message; a thrown Redirect still delivers its own', async () => {
      const v = new TestVisitor(s.port);
      const failed = await v.post('/fail');
      assert.equal(failed.status, 400);
      const thrown = await v.post('/thrownRedirect');
      assert.equal(thrown.status, 302);
      const page = await v.get('/');
      assert.doesNotMatch(page.text, /never shown/);
      assert.match(page.text, /<p class="msg error" data-field="">Could not do it<\/p>/);
    });

    it('throw Messages.fieldError answers 422 with the messages', async () => {
      const v = new TestVisitor(s.port);
      const res = await v.post('/field');
      assert.equal(res.status, 422);
      assert.deepEqual(jsonWithoutId(res), { messages: [{ type: 'error', field: 'title', value: 'Not Good' }] });
      assert.doesNotMatch((await v.get('/')).text, /Not Good/);
    });

    it('Messages.now() returns the pending messages and keeps them from the next page', async () => {
      const v = new TestVisitor(s.port);
      const res = await v.post('/now');
      assert.deepEqual(JSON.parse(res.text), { messages: [{ type: 'success', value: 'one' }, { type: 'info', field: 'name', value: 'two' }] });
      assert.doesNotMatch((await v.get('/')).text, /class="msg/);
    });

    it('cookies: written when a POST succeeds, fixed flags, submit() needed for Cookie.name(…)', async () => {
      const v = new TestVisitor(s.port);
      const res = await v.post('/cookie', { v: 'dark; x=1' });
      assert.equal(res.status, 200);
      const lines = setCookies(res);
      const theme = lines.find((c) => c.startsWith('theme='));
      assert.equal(theme, 'theme=dark%3B%20x%3D1; Path=/; HttpOnly; SameSite=Lax; Secure; Max-Age=2592000');
      assert.ok(lines.some((c) => c.startsWith('lang=en; Path=/; HttpOnly; SameSite=Lax; Secure') && !/Max-Age/.test(c)), 'new Cookie() is written, as a session cookie');
      assert.ok(!lines.some((c) => c.startsWith('unsent=')), 'Cookie.name(…) without submit() is not written');
      const read = JSON.parse((await v.get('/read')).text);
      assert.equal(read.theme, 'dark; x=1');
      assert.equal(read.sid, null, 'scripts never see the session id');
      assert.ok(!read.names.includes('sid'));
      const gone = await v.post('/forget');
      assert.ok(setCookies(gone).some((c) => /^theme=; .*Max-Age=0/.test(c)));
    });

    it('no cookie is written by a failed request, a GET script, a reserved or malformed name', async () => {
      const v = new TestVisitor(s.port);
      const failed = await v.post('/cookieFail');
      assert.equal(failed.status, 400);
      assert.deepEqual(setCookies(failed), []);
      for (const [method, path] of [['GET', '/get'], ['POST', '/sidCookie'], ['POST', '/badName']] as const) {
        const res = await v.request(method, path, method === 'POST' ? '' : undefined);
        assert.equal(res.status, 500, path);
        assert.deepEqual(setCookies(res), [], path);
      }
    });

    it('a forged, altered or unknown sid is a fresh visitor, never an error', async () => {
      const v = new TestVisitor(s.port);
      await v.post('/add', { who: 'Real' });
      const real = v.jar.get('sid')!;
      for (const forged of ['x', real.slice(0, -1) + (real.endsWith('A') ? 'B' : 'A'), 'A'.repeat(24) + '.' + 'B'.repeat(32), real + 'x', '']) {
        const res = await s.get('/', { Cookie: `sid=${forged}`, Host: `localhost:${s.port}` });
        assert.equal(res.status, 200);
        assert.doesNotMatch(res.text, /Added Real/);
      }
      assert.match((await v.get('/')).text, /Added Real/, 'the real session still has its message');
    });

    it('Secure only on HTTPS (as a trusted proxy says) and localhost', async () => {
      const other = new TestVisitor(s.port, 'example.test');
      const plain = await other.post('/add', { who: 'x' });
      assert.ok(setCookies(plain).some((c) => c.startsWith('sid=') && !/Secure/.test(c)));
      // No proxy is trusted here: a client's own X-Forwarded-Proto is not believed.
      const spoofed = await new TestVisitor(s.port, 'example.test').post('/add', { who: 'y' }, { 'X-Forwarded-Proto': 'https' });
      assert.ok(setCookies(spoofed).some((c) => c.startsWith('sid=') && !/Secure/.test(c)));
      const behind = await serve(APP, { data: await engine.data(), trustProxy: 'loopback' });
      try {
        const proxied = await new TestVisitor(behind.port, 'example.test').post('/add', { who: 'z' }, { 'X-Forwarded-Proto': 'https' });
        assert.ok(setCookies(proxied).some((c) => c.startsWith('sid=')) && setCookies(proxied).every((c) => /Secure/.test(c)));
      } finally {
        await behind.close();
      }
    });
  });
}

describe('cookie names at build', () => {
  it('a literal reserved or malformed name is a build error at its position', () => {
    const problems = diagnosticsOf({
      '📮a.js': "Cookie.name('sid').value('x').submit();\n",
      '📮b.js': "new Cookie().name('_secret').value('x');\n",
      '📮c.js': "Cookie.name('Bad-Name').value('x').submit();\n",
      '📮ok.js': "Cookie.name('lastVisit').value('x').submit();\n",
    }, 'LW_COOKIE');
    assert.equal(problems.length, 3, problems.join('\n'));
    assert.match(problems.join('\n'), /📮a\.js:1:13: .*"sid" is reserved/);
    assert.match(problems.join('\n'), /📮b\.js:1:19: .*starts with "_"/);
    assert.match(problems.join('\n'), /📮c\.js:1:13: .*not a cookie name/);
  });
});
