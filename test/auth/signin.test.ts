/**
 * Users end to end (docs/users.md "Signing in"), black-box over HTTP with a cookie jar, against a
 * real OpenID Connect provider (oidc-provider on 127.0.0.1) and both engines: an `auth: required`
 * area sends a visitor to `/auth/?next=…` (401 for JSON), the sign-in page lists the configured
 * providers, a sign-in goes to the provider and back, replaces the session id, and lands on the
 * page asked for; `Me` in views and scripts; sign-out; and the error paths (wrong state, a replayed
 * callback, another browser's callback, a tampered sid, a provider that is down).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { serve, type Served } from '../helpers.js';
import { ENGINES } from '../support/engines.js';
import { TestVisitor } from '../support/visitor.js';
import { startOidcProvider, type TestOidcProvider } from '../support/oidc.js';

const APP = {
  '👤.yaml': 'providers: [corp, github]\nauth: required\n\ndefault:\n  👤.User.name: read\n  👤.User.picture: read\n\nEditor: none\n',
  'auth/👤.yaml': 'auth: optional\n',
  'public/👤.yaml': 'auth: none\n',
  'auth/index.html':
    "<!--TEMPLATE mustache-->\n<!doctype html><html><head><title>Sign in</title>{{% import {Me, Providers} from '👤' }}\n" +
    "<link itemprop='content-security-policy' data-form-action-auth='true'></head><body>\n" +
    '{{^Me}}{{#Providers.all as provider}}<form id="{{provider.type}}" method="post" action="{{provider.authPath}}"><button class="brand-{{provider.brand}}">{{provider.name}}</button></form>\n{{/Providers.all}}{{/Me}}\n' +
    '{{#Me}}<p class="me">Signed in as {{Me.name}}</p><form method="post" action="/__/auth/provider/logout"><button>Sign out</button></form>{{/Me}}\n</body></html>\n',
  'index.html': "<!--TEMPLATE mustache-->\n<!doctype html><html><head><title>Home</title>{{% import {Me} from '👤' }}</head><body><p class=\"me\">Hello {{Me.name}} ({{Me.email}})</p>{{{Me.avatar}}}</body></html>\n",
  'reports/GET.js': "import {Me, Role} from '👤';\n({linked: Me.linked, name: Me.name, editor: Role.Editor});\n",
  'auth/whoami/GET.js': "import {Me} from '👤';\n({linked: Me.linked, name: Me.name});\n",
  'public/index.html': '<!--TEMPLATE mustache-->\n<!doctype html><html><head><title>Public</title></head><body><p>open to all</p></body></html>\n',
};

/** The `location` of a response as a URL. */
const located = (r: { headers: Record<string, unknown> }) => new URL(String(r.headers.location), 'http://x');

for (const engine of ENGINES) {
  describe(`sign-in with an OpenID Connect provider (${engine.name})`, () => {
    let s: Served;
    let op: TestOidcProvider;
    const saved = { ...process.env };

    before(async () => {
      op = await startOidcProvider();
      process.env.LANEWAY_AUTH_CORP_CLIENT_ID = op.clientId;
      process.env.LANEWAY_AUTH_CORP_SECRET = op.clientSecret;
      process.env.LANEWAY_AUTH_CORP_ISSUER = op.issuer;
      process.env.LANEWAY_AUTH_CORP_NAME = 'Corp ID';
      delete process.env.LANEWAY_AUTH_GITHUB_CLIENT_ID; // github stays unconfigured: left out of Providers.all
      s = await serve(APP, { data: await engine.data() });
      await op.setRedirectUris([`http://localhost:${s.port}/__/auth/handler`]);
    });
    after(async () => {
      await s?.close();
      await op?.stop();
      for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
      Object.assign(process.env, saved);
    });

    /** Signs a visitor in as `account` through the sign-in page; answers the final response. */
    async function signIn(v: TestVisitor, account = 'ann', next = '/') {
      const page = await v.get(`/auth/?next=${encodeURIComponent(next)}`);
      const action = /<form id="corp" method="post" action="([^"]+)"/.exec(page.text)![1]!.replace(/&amp;/g, '&');
      const started = await v.post(action);
      assert.equal(started.status, 303);
      const back = await op.login(String(started.headers.location), { account });
      assert.equal(back.origin, `http://localhost:${s.port}`);
      return v.get(back.pathname + back.search);
    }

    it('sends a visitor to /auth/ with the page asked for, and a JSON client gets 401', async () => {
      const v = new TestVisitor(s.port);
      const page = await v.get('/reports?x=1');
      assert.equal(page.status, 302);
      assert.equal(page.headers.location, '/auth/?next=%2Freports%3Fx%3D1');
      const json = await v.get('/reports', { Accept: 'application/json' });
      assert.equal(json.status, 401);
      assert.equal((await v.get('/public/')).status, 200, 'auth: none');
      const optional = await v.get('/auth/whoami', { Accept: 'application/json' });
      assert.deepEqual(JSON.parse(optional.text), { linked: false, name: null });
    });

    it('the sign-in page lists the configured providers with a form-action for them', async () => {
      const v = new TestVisitor(s.port);
      const page = await v.get('/auth/?next=%2Freports');
      assert.equal(page.status, 200);
      assert.match(page.text, /<form id="corp" method="post" action="\/__\/auth\/provider\/corp\?next=%2Freports"><button class="brand-corp">Corp ID<\/button><\/form>/);
      assert.doesNotMatch(page.text, /github/, 'a provider without its settings is not listed');
      assert.match(String(page.headers['content-security-policy']), new RegExp(`form-action 'self' ${op.issuer.replace(/[.:/]/g, '\\$&')}(;|$)`));
      assert.equal(page.headers['cache-control'], 'no-cache, no-store, max-age=0, must-revalidate');
    });

    it('signs in through the provider, replaces the session id, and goes on to the page asked for', async () => {
      const v = new TestVisitor(s.port);
      await v.get('/auth/');
      const before = v.jar.get('sid');
      const done = await signIn(v, 'ann', '/reports?x=1');
      assert.equal(done.status, 303);
      assert.equal(done.headers.location, '/reports?x=1');
      assert.notEqual(v.jar.get('sid'), before, 'a new session id at sign-in');
      assert.match(String([done.headers['set-cookie']].flat()[0]), /^sid=[^;]+; Path=\/; HttpOnly; SameSite=Lax; Secure; Max-Age=2592000$/);
      const me = await v.get('/reports', { Accept: 'application/json' });
      assert.equal(me.status, 200);
      assert.deepEqual(JSON.parse(me.text), { linked: true, name: 'Ann Example', editor: 'Editor' });
      const home = await v.get('/');
      assert.equal(home.status, 200);
      assert.match(home.text, /<p class="me">Hello Ann Example \(ann@example\.com\)<\/p><svg [^>]*aria-label="AE"/);
      assert.equal(home.headers['cache-control'], 'no-cache, no-store, max-age=0, must-revalidate');
      const signedIn = await v.get('/auth/');
      assert.match(signedIn.text, /Signed in as Ann Example/);
      // Another visitor is not signed in.
      assert.equal((await new TestVisitor(s.port).get('/')).status, 302);
      // Sign out: the session id is replaced and the required area sends to /auth/ again.
      const out = await v.post('/__/auth/provider/logout');
      assert.equal(out.status, 303);
      assert.equal(out.headers.location, '/');
      assert.equal((await v.get('/')).status, 302);
    });

    it('an account is keyed by provider and subject; its profile is refreshed at each sign-in', async () => {
      op.users.add({ sub: 'carol', name: 'Carol One', email: 'carol@example.com', email_verified: true });
      const a = new TestVisitor(s.port);
      await signIn(a, 'carol');
      op.users.add({ sub: 'carol', name: 'Carol Two', email: 'carol@example.com', email_verified: true });
      const b = new TestVisitor(s.port);
      await signIn(b, 'carol');
      assert.equal(JSON.parse((await b.get('/reports', { Accept: 'application/json' })).text).name, 'Carol Two');
      // An unverified address is not kept.
      const c = new TestVisitor(s.port);
      await signIn(c, 'bob');
      assert.match((await c.get('/')).text, /Hello Bob[^(]*\(\)/);
    });

    it('refuses a wrong state, a replayed callback, and a callback from another browser', async () => {
      const v = new TestVisitor(s.port);
      await v.get('/auth/');
      const started = await v.post('/__/auth/provider/corp');
      const back = await op.login(String(started.headers.location));
      const wrong = new URL(back);
      wrong.searchParams.set('state', 'not-the-state');
      assert.equal((await v.get(wrong.pathname + wrong.search)).status, 400);
      // Another browser given the callback URL signs nobody in.
      const other = new TestVisitor(s.port);
      await other.get('/auth/');
      const stolen = await other.get(back.pathname + back.search);
      assert.equal(stolen.status, 400);
      assert.match(stolen.text, /expired, was used already, or was started in another browser/);
      assert.equal((await other.get('/')).status, 302);
      // The attempt was taken by the stolen use: the owner must start again.
      assert.equal((await v.get(back.pathname + back.search)).status, 400);
      const done = await signIn(v);
      assert.equal(done.status, 303);
      assert.equal((await v.get(done.headers.location as string)).status, 200);
      const replay = await v.get(back.pathname + back.search);
      assert.equal(replay.status, 400);
    });

    it('a tampered sid is a visitor who is not signed in', async () => {
      const v = new TestVisitor(s.port);
      await signIn(v);
      const sid = v.jar.get('sid')!;
      v.jar.set('sid', sid.slice(0, -1) + (sid.endsWith('A') ? 'B' : 'A'));
      assert.equal((await v.get('/')).status, 302);
    });

    it('a provider that is down gives a clear error page, and sign-in works again once it is back', async () => {
      const v = new TestVisitor(s.port);
      await v.get('/auth/');
      const started = await v.post('/__/auth/provider/corp');
      assert.equal(started.status, 303);
      const back = await op.login(String(started.headers.location));
      await op.down('refuse');
      try {
        const failed = await v.get(back.pathname + back.search);
        assert.equal(failed.status, 502);
        assert.match(failed.text, /<h1>502 Bad Gateway<\/h1>/);
      } finally {
        await op.up();
      }
      const done = await signIn(v);
      assert.equal(done.status, 303);
      assert.equal((await v.get('/')).status, 200);
    });

    it('answers 404 for an unknown provider and 405 for a GET to start', async () => {
      const v = new TestVisitor(s.port);
      assert.equal((await v.post('/__/auth/provider/nobody')).status, 404);
      assert.equal((await v.get('/__/auth/provider/corp')).status, 405);
      assert.equal((await v.post('/__/auth/handler')).status, 405);
    });
  });
}
