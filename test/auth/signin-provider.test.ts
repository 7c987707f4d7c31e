/**
 * Signing in through a real OpenID Connect provider (oidc-provider on 127.0.0.1, test/support/oidc.ts)
 * from a nested site, and what the server logs when the provider fails, black-box over HTTP on both
 * engines (docs/users.md "Signing in", "Nested sites").
 *
 * - A nested site's sign-in sends the provider its own callback, `/app/__/auth/handler`: started
 *   from the nested site's sign-in page, the redirects lead back to the nested site, signed in.
 * - A failure at the provider is logged with the provider and the step that failed (discovery,
 *   authorization, token exchange, userinfo), never with the client secret, the code or the state.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { closeAppData, loadApp, openAppData, type App } from '../../src/app/index.js';
import { createLogger, createServer, type LanewayServer } from '../../src/http/index.js';
import { writeApp } from '../helpers.js';
import { ENGINES } from '../support/engines.js';
import { TestVisitor } from '../support/visitor.js';
import { providerEnv, startOidcProvider, type TestOidcProvider } from '../support/oidc.js';

const SIGNIN =
  "<!--TEMPLATE mustache-->\n<!doctype html><html><head><title>Sign in</title>{{% import {Me, Providers} from '👤' }}\n" +
  "<link itemprop='content-security-policy' data-form-action-auth='true'></head><body>\n" +
  '{{^Me}}{{#Providers.all as provider}}<form id="{{provider.type}}" method="post" action="{{provider.authPath}}"><button>{{provider.name}}</button></form>{{/Providers.all}}{{/Me}}\n' +
  '{{#Me}}<p class="me">Signed in as {{Me.name}}</p>{{/Me}}\n</body></html>\n';
const ME_PAGE = (label: string) => `<!--TEMPLATE mustache-->\n<!doctype html><html><head><title>${label}</title>{{% import {Me} from '👤' }}</head><body><p class="me">${label} of {{Me.name}}</p></body></html>\n`;

/** A site with users (public, its sign-in at /auth/) and, at /app/, a private nested site with users of its own. */
function sites(base: string): string {
  writeApp(
    {
      '👤.yaml': 'providers: [corp]\nauth: required\n\ndefault:\n  👤.User.name: read\n',
      'auth/👤.yaml': 'auth: optional\n',
      'auth/index.html': SIGNIN,
      'page.html': ME_PAGE('Nested page'),
    },
    join(base, 'app'),
  );
  return writeApp(
    {
      '👤.yaml': 'providers: [corp]\nauth: optional\n\ndefault:\n  👤.User.name: read\n',
      'auth/index.html': SIGNIN,
      'page.html': ME_PAGE('Parent page'),
      '🔌app.yaml': 'source: ../app\nnamespace: app-users\n',
    },
    join(base, 'site'),
  );
}

/** The action of the provider's form on a sign-in page. */
const formAction = (html: string) => /<form id="corp" method="post" action="([^"]+)"/.exec(html)?.[1]?.replace(/&amp;/g, '&');

for (const engine of ENGINES) {
  describe(`sign-in through the provider from a nested site, and the log of its failures (${engine.name})`, () => {
    let op: TestOidcProvider;
    let app: App;
    let server: LanewayServer;
    let port: number;
    let base: string;
    /** Every line the server logged (JSON), standard output and standard error together. */
    const lines: Array<Record<string, unknown>> = [];
    const raw: string[] = [];
    const saved = { ...process.env };

    before(async () => {
      op = await startOidcProvider();
      Object.assign(process.env, providerEnv(op, 'corp'));
      base = mkdtempSync(join(tmpdir(), 'laneway-signin-provider-'));
      app = loadApp(sites(base));
      await openAppData(app, await engine.data());
      const keep = (line: string) => {
        raw.push(line);
        lines.push(JSON.parse(line) as Record<string, unknown>);
      };
      server = createServer(app, { log: createLogger('json', keep, keep) });
      port = (await server.listen(0, '127.0.0.1')).port;
      // Only the callbacks of this server: the site's own, and the nested site's under its mount.
      await op.setRedirectUris([`http://localhost:${port}/__/auth/handler`, `http://localhost:${port}/app/__/auth/handler`]);
    });
    after(async () => {
      await server?.close();
      if (app) await closeAppData(app);
      await op?.stop();
      for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
      Object.assign(process.env, saved);
      rmSync(base, { recursive: true, force: true });
    });

    it("signing in from the nested site's sign-in page: the provider sends the visitor to the nested site's callback, and on to the nested page", async () => {
      const v = new TestVisitor(port);
      const asked = await v.get('/app/page?tab=2');
      assert.equal(asked.status, 302);
      assert.equal(asked.headers.location, `/app/auth/?next=${encodeURIComponent('/app/page?tab=2')}`);
      const page = await v.get(String(asked.headers.location));
      assert.equal(page.status, 200);
      const action = formAction(page.text);
      assert.equal(action, `/app/__/auth/provider/corp?next=${encodeURIComponent('/app/page?tab=2')}`);

      const started = await v.post(action!);
      assert.equal(started.status, 303);
      const authorization = new URL(String(started.headers.location));
      assert.equal(authorization.origin, op.issuer);
      assert.equal(authorization.searchParams.get('redirect_uri'), `http://localhost:${port}/app/__/auth/handler`);

      const back = await op.login(authorization, { account: 'ann' });
      assert.equal(back.origin, `http://localhost:${port}`);
      assert.equal(back.pathname, '/app/__/auth/handler', "the nested site's callback, not the parent's");
      const before = v.jar.get('sid');
      const done = await v.get(back.pathname + back.search);
      assert.equal(done.status, 303, done.text);
      assert.equal(done.headers.location, '/app/page?tab=2');
      assert.notEqual(v.jar.get('sid'), before, 'a new session id at sign-in');

      const landed = await v.get(String(done.headers.location));
      assert.equal(landed.status, 200);
      assert.match(landed.text, /<p class="me">Nested page of Ann Example<\/p>/);
      assert.match((await v.get('/app/auth/')).text, /Signed in as Ann Example/);
    });

    it("the parent's own sign-in keeps its callback at the root", async () => {
      const v = new TestVisitor(port);
      const page = await v.get('/auth/?next=%2Fpage');
      const started = await v.post(formAction(page.text)!);
      assert.equal(new URL(String(started.headers.location)).searchParams.get('redirect_uri'), `http://localhost:${port}/__/auth/handler`);
      const back = await op.login(String(started.headers.location), { account: 'ann' });
      assert.equal(back.pathname, '/__/auth/handler');
      const done = await v.get(back.pathname + back.search);
      assert.equal(done.status, 303);
      assert.match((await v.get('/page')).text, /Parent page of Ann Example/);
    });

    /** The one line logged since `from` about a failed sign-in. */
    const failure = (from: number): Record<string, unknown> => {
      const found = lines.slice(from).filter((l) => typeof l.message === 'string' && /sign-in/.test(l.message as string) && l.type !== 'access');
      assert.equal(found.length, 1, JSON.stringify(found));
      return found[0]!;
    };
    /** What was logged for `request`, sent while the provider refuses connections, which answers 502. */
    const loggedWhileDown = async (request: () => Promise<{ status: number }>): Promise<Record<string, unknown>> => {
      const from = lines.length;
      await op.down('refuse');
      try {
        assert.equal((await request()).status, 502);
      } finally {
        await op.up();
      }
      return failure(from);
    };

    it('a provider down at discovery and one down at the token exchange log different lines naming the provider and the step', async () => {
      // Discovery: a client made for a new origin (another Host) reads the provider's settings first.
      const first = new TestVisitor(port, `127.0.0.1:${port}`);
      const atDiscovery = await loggedWhileDown(() => first.post('/__/auth/provider/corp'));
      assert.equal(atDiscovery.type, 'error');
      assert.equal(atDiscovery.message, 'sign-in with corp failed at discovery: The sign-in provider is not answering; please try again later.');
      assert.equal(atDiscovery.provider, 'corp');
      assert.equal(atDiscovery.step, 'discovery');
      assert.equal(atDiscovery.code, 'LW_AUTH_PROVIDER_DOWN');
      assert.match(String(atDiscovery.detail), /^discovery: ECONNREFUSED$/);

      // The token exchange: the provider answered the sign-in, then is down when its code is exchanged.
      const v = new TestVisitor(port);
      await v.get('/auth/');
      const started = await v.post('/__/auth/provider/corp');
      assert.equal(started.status, 303);
      const back = await op.login(String(started.headers.location));
      const atExchange = await loggedWhileDown(() => v.get(back.pathname + back.search));
      assert.equal(atExchange.type, 'error');
      assert.equal(atExchange.message, 'sign-in with corp failed at token exchange: The sign-in provider is not answering; please try again later.');
      assert.equal(atExchange.step, 'token exchange');
      assert.equal(atExchange.provider, 'corp');
      assert.match(String(atExchange.detail), /^token exchange: ECONNREFUSED$/);
      assert.notEqual(atExchange.message, atDiscovery.message);

      // Nothing secret in any line: the client secret, the code, the state.
      const text = raw.join('\n');
      assert.ok(!text.includes(op.clientSecret), 'no client secret in the log');
      for (const name of ['code', 'state']) {
        const value = back.searchParams.get(name)!;
        assert.ok(value && !text.includes(value), `no ${name} in the log`);
      }
    });

    it('a refusal at the provider is logged with its step too: the authorization (cancelled) and a code refused at the token exchange', async () => {
      const v = new TestVisitor(port);
      await v.get('/auth/');
      const from = lines.length;
      const cancelled = await op.login(String((await v.post('/__/auth/provider/corp')).headers.location), { cancel: true });
      assert.equal((await v.get(cancelled.pathname + cancelled.search)).status, 400);
      const refused = failure(from);
      assert.equal(refused.type, 'info');
      assert.equal(refused.message, 'sign-in with corp failed at authorization: The sign-in was cancelled or refused at the provider.');
      assert.equal(refused.step, 'authorization');
      assert.equal(refused.detail, 'authorization response: error=access_denied');

      const back = await op.login(String((await v.post('/__/auth/provider/corp')).headers.location));
      const forged = new URL(back);
      forged.searchParams.set('code', 'not-a-code-the-provider-gave');
      const before = lines.length;
      assert.equal((await v.get(forged.pathname + forged.search)).status, 400);
      const exchange = failure(before);
      assert.equal(exchange.step, 'token exchange');
      assert.match(String(exchange.message), /^sign-in with corp failed at token exchange: /);
      assert.match(String(exchange.detail), /invalid_grant/);
      assert.ok(!raw.join('\n').includes('not-a-code-the-provider-gave'), 'no code in the log');
    });
  });
}
