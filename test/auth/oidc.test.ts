/**
 * Sign-in with OpenID Connect (src/auth/oidc.ts) against a real issuer: oidc-provider on
 * 127.0.0.1 (test/support/oidc.ts), driven over plain HTTP through its login page. The full code
 * flow (PKCE S256, state, nonce, the profile from userinfo or from the ID token, both client
 * authentication methods, RS256 and ES256), then everything that must fail and how: a wrong
 * state, a code used twice, a wrong verifier, a cancelled sign-in, ID tokens for another client,
 * nonce or issuer, expired or signed with another key, a provider that is down, failing or
 * hanging at the start and at the finish (and that the client recovers when it is back), settings
 * refused at creation. Every error is checked to carry no secret, code or token. The login page is
 * also used once in headless Chromium (skipped when Chromium is missing).
 *
 * Nothing waits for a duration: the one timeout test gives the client a short timeout against a
 * provider that never answers, and only checks the error.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { AuthError, createGoogleClient, createOidcClient, GOOGLE_ISSUER, type AuthErrorCode, type OidcClient, type OidcClientOptions } from '../../src/auth/oidc.js';
import { ProviderCookies, startOidcProvider, type TestOidcProvider } from '../support/oidc.js';
import { launch, skip as noChromium, type Browser } from '../browser/chromium.js';

const REDIRECT = 'https://app.example.test/__/auth/handler';

/** Everything secret seen in a test, that no error may mention. */
const secrets = new Set<string>();

/** Awaits `p`, expecting an AuthError with `code`; checks it names nothing secret; answers it. */
async function refused(p: Promise<unknown>, code: AuthErrorCode): Promise<AuthError> {
  const err = await p.then(
    () => assert.fail(`expected ${code}, but it succeeded`),
    (e: unknown) => e,
  );
  assert.ok(err instanceof AuthError, `expected an AuthError, got ${String(err)}`);
  assert.equal(err.code, code, `${err.message} [${err.detail}]`);
  const text = `${err.message} ${err.detail ?? ''} ${err.stack ?? ''}`;
  for (const s of secrets) assert.ok(!text.includes(s), `the error mentions a secret: ${text}`);
  assert.equal((err as { cause?: unknown }).cause, undefined, 'no cause is attached (it could hold tokens)');
  return err;
}

/** The callback's code and state, remembered as secrets. */
function remember(callback: URL): URL {
  for (const k of ['code', 'state']) {
    const v = callback.searchParams.get(k);
    if (v) secrets.add(v);
  }
  return callback;
}

describe('OpenID Connect sign-in against oidc-provider', () => {
  let op: TestOidcProvider;
  const clients: OidcClient[] = [];

  function client(extra: Partial<OidcClientOptions> = {}): OidcClient {
    const c = createOidcClient({ issuer: op.issuer, clientId: op.clientId, clientSecret: op.clientSecret, redirectUri: REDIRECT, ...extra });
    clients.push(c);
    return c;
  }

  /** start → login at the provider as `account` → the callback URL, with the checks. */
  async function signIn(c: OidcClient, account = 'ann') {
    const { url, checks } = await c.start();
    secrets.add(checks.codeVerifier);
    const callback = remember(await op.login(url, { account }));
    return { url: new URL(url), checks, callback };
  }

  before(async () => {
    op = await startOidcProvider({
      redirectUris: [REDIRECT],
      clients: [
        { clientId: 'post-client', clientSecret: 'post-client-secret-0123456789', redirectUris: [REDIRECT], tokenEndpointAuthMethod: 'client_secret_post' },
        { clientId: 'es-client', clientSecret: 'es-client-secret-0123456789', redirectUris: [REDIRECT], idTokenAlg: 'ES256' },
      ],
    });
    secrets.add(op.clientSecret);
    secrets.add('post-client-secret-0123456789');
    secrets.add('es-client-secret-0123456789');
  });
  after(async () => {
    await op?.stop();
  });

  it('signs in with the authorization code flow: PKCE S256, state and nonce; the profile comes from userinfo', async () => {
    const c = client();
    const { url, checks, callback } = await signIn(c, 'ann');
    const q = url.searchParams;
    assert.equal(url.origin + url.pathname, `${op.issuer}/auth`);
    assert.equal(q.get('response_type'), 'code');
    assert.equal(q.get('client_id'), op.clientId);
    assert.equal(q.get('redirect_uri'), REDIRECT);
    assert.equal(q.get('scope'), 'openid profile email');
    assert.equal(q.get('code_challenge_method'), 'S256');
    assert.match(q.get('code_challenge') ?? '', /^[\w-]{43}$/);
    assert.notEqual(q.get('code_challenge'), checks.codeVerifier);
    assert.equal(q.get('state'), checks.state);
    assert.equal(q.get('nonce'), checks.nonce);
    assert.ok(checks.state && checks.nonce && checks.codeVerifier && new Set([checks.state, checks.nonce, checks.codeVerifier]).size === 3);

    assert.equal(callback.origin + callback.pathname, REDIRECT);
    assert.equal(callback.searchParams.get('state'), checks.state);
    assert.equal(callback.searchParams.get('iss'), op.issuer);

    const userinfoBefore = op.hits.userinfo;
    const profile = await c.finish(callback, checks);
    assert.deepEqual(profile, { subject: 'ann', name: 'Ann Example', email: 'ann@example.com', emailVerified: true, picture: 'https://images.example.com/ann.png' });
    assert.equal(op.hits.userinfo, userinfoBefore + 1, 'the ID token held only sub: userinfo was asked');
    assert.deepEqual(op.serverErrors, []);
  });

  it('an unverified address stays unverified; a missing picture is null', async () => {
    const c = client();
    const { checks, callback } = await signIn(c, 'bob');
    assert.deepEqual(await c.finish(callback, checks), { subject: 'bob', name: 'Bob Example', email: 'bob@example.org', emailVerified: false, picture: null });
  });

  it('uses only the query of the URL it is given: the redirect URI sent to the token endpoint is the configured one', async () => {
    const c = client();
    const { checks, callback } = await signIn(c);
    const seenBehindAProxy = new URL(`http://10.0.0.5:8080/__/auth/handler${callback.search}`);
    assert.equal((await c.finish(seenBehindAProxy, checks)).subject, 'ann');
  });

  it('discovers the issuer once for many sign-ins', async () => {
    const before = op.hits.discovery;
    const c = client();
    await Promise.all([c.start(), c.start(), c.start()]);
    await c.start();
    assert.equal(op.hits.discovery, before + 1);
  });

  it('authenticates at the token endpoint with client_secret_basic by default, or client_secret_post when asked', async () => {
    const basic = client();
    const a = await signIn(basic);
    await basic.finish(a.callback, a.checks);
    assert.equal(op.tokenAuthMethods.at(-1), 'client_secret_basic');

    const post = client({ clientId: 'post-client', clientSecret: 'post-client-secret-0123456789', tokenEndpointAuth: 'client_secret_post' });
    const b = await signIn(post);
    assert.equal((await post.finish(b.callback, b.checks)).subject, 'ann');
    assert.equal(op.tokenAuthMethods.at(-1), 'client_secret_post');
  });

  it('a wrong client secret is LW_AUTH_PROVIDER_CONFIG', async () => {
    const c = client({ clientSecret: 'not-the-secret-0123456789' });
    secrets.add('not-the-secret-0123456789');
    const { checks, callback } = await signIn(c);
    await refused(c.finish(callback, checks), 'LW_AUTH_PROVIDER_CONFIG');
  });

  it('accepts ID tokens signed with ES256 for a client registered so', async () => {
    const c = client({ clientId: 'es-client', clientSecret: 'es-client-secret-0123456789' });
    const { checks, callback } = await signIn(c);
    assert.equal((await c.finish(callback, checks)).subject, 'ann');
  });

  it('a wrong state is LW_AUTH_BAD_CALLBACK, found before the code is spent', async () => {
    const c = client();
    const { checks, callback } = await signIn(c);
    const tokenBefore = op.hits.token;
    const err = await refused(c.finish(callback, { ...checks, state: 'another-state' }), 'LW_AUTH_BAD_CALLBACK');
    assert.match(err.detail ?? '', /state/);
    const noState = new URL(callback);
    noState.searchParams.delete('state');
    await refused(c.finish(noState, checks), 'LW_AUTH_BAD_CALLBACK');
    assert.equal(op.hits.token, tokenBefore, 'the token endpoint was not asked');
    // The code was not spent: the genuine callback still completes.
    assert.equal((await c.finish(callback, checks)).subject, 'ann');
  });

  it('a code used twice is LW_AUTH_BAD_CALLBACK', async () => {
    const c = client();
    const { checks, callback } = await signIn(c);
    await c.finish(callback, checks);
    const err = await refused(c.finish(callback, checks), 'LW_AUTH_BAD_CALLBACK');
    assert.match(err.detail ?? '', /invalid_grant/);
  });

  it('a code with another PKCE verifier, or a made-up code, is LW_AUTH_BAD_CALLBACK', async () => {
    const c = client();
    const { checks, callback } = await signIn(c);
    await refused(c.finish(callback, { ...checks, codeVerifier: 'x'.repeat(43) }), 'LW_AUTH_BAD_CALLBACK');
    const madeUp = new URL(callback);
    madeUp.searchParams.set('code', 'made-up-code');
    await refused(c.finish(madeUp, checks), 'LW_AUTH_BAD_CALLBACK');
  });

  it('a sign-in cancelled at the provider (error=access_denied) is LW_AUTH_BAD_CALLBACK', async () => {
    const c = client();
    const { url, checks } = await c.start();
    const callback = await op.login(url, { cancel: true });
    assert.equal(callback.searchParams.get('error'), 'access_denied');
    const err = await refused(c.finish(callback, checks), 'LW_AUTH_BAD_CALLBACK');
    assert.match(err.detail ?? '', /access_denied/);
  });

  it('no sign-in under way in the session (checks lost or expired) is LW_AUTH_BAD_CALLBACK', async () => {
    const c = client();
    const { checks, callback } = await signIn(c);
    await refused(c.finish(callback, { ...checks, nonce: '' }), 'LW_AUTH_BAD_CALLBACK');
    await refused(c.finish(callback, undefined as never), 'LW_AUTH_BAD_CALLBACK');
  });

  it('refuses an ID token for another nonce', async () => {
    const c = client();
    const first = await signIn(c);
    const second = await c.start();
    const err = await refused(c.finish(first.callback, { ...first.checks, nonce: second.checks.nonce }), 'LW_AUTH_BAD_CALLBACK');
    assert.match(err.detail ?? '', /"nonce"/);
  });

  describe('ID tokens rewritten at the token endpoint', () => {
    after(() => op.rewriteIdTokens(undefined));

    async function withRewrite(rewrite: (claims: Record<string, unknown>) => Record<string, unknown>, foreignKey = false): Promise<AuthError | 'accepted'> {
      const c = client();
      const { checks, callback } = await signIn(c);
      op.rewriteIdTokens(rewrite, { foreignKey });
      try {
        await c.finish(callback, checks);
        return 'accepted';
      } catch (e) {
        return e as AuthError;
      } finally {
        op.rewriteIdTokens(undefined);
      }
    }
    const now = () => Math.floor(Date.now() / 1000);

    it('the same claims re-signed with the provider key pass (so the refusals below are about the change)', async () => {
      assert.equal(await withRewrite((c) => c), 'accepted');
    });

    for (const [what, rewrite, reason] of [
      ['for another client (aud)', (c: Record<string, unknown>) => ({ ...c, aud: 'another-client' }), /"aud"/],
      ['for this client and another (aud, azp)', (c: Record<string, unknown>) => ({ ...c, aud: [String(c.aud), 'another-client'], azp: 'another-client' }), /"azp"/],
      ['from another issuer', (c: Record<string, unknown>) => ({ ...c, iss: 'https://issuer.example.test' }), /"iss"/],
      ['expired an hour ago', (c: Record<string, unknown>) => ({ ...c, iat: now() - 7200, exp: now() - 3600 }), /"exp"/],
      ['without a subject', (c: Record<string, unknown>) => ({ ...c, sub: undefined }), /"sub"/],
    ] as const) {
      it(`refuses an ID token ${what}`, async () => {
        const result = await withRewrite(rewrite);
        assert.ok(result instanceof AuthError, 'refused');
        assert.equal(result.code, 'LW_AUTH_BAD_CALLBACK');
        assert.match(result.detail ?? '', reason);
      });
    }

    it('refuses an ID token signed with another key under the same key id', async () => {
      const result = await withRewrite((c) => c, true);
      assert.ok(result instanceof AuthError, 'refused');
      assert.equal(result.code, 'LW_AUTH_BAD_CALLBACK');
      assert.match(result.detail ?? '', /signature/);
    });
  });

  describe('a provider that is down', () => {
    after(() => op.up());

    for (const mode of ['refuse', 'error'] as const) {
      it(`at the start (${mode === 'refuse' ? 'connection refused' : '503'}): LW_AUTH_PROVIDER_DOWN, and the next start after it is back discovers it`, async () => {
        const c = client();
        await op.down(mode);
        const err = await refused(c.start(), 'LW_AUTH_PROVIDER_DOWN');
        assert.match(err.detail ?? '', mode === 'refuse' ? /^discovery: ECONNREFUSED/ : /^discovery: HTTP 503/);
        await refused(c.start(), 'LW_AUTH_PROVIDER_DOWN');
        await op.up();
        const { url } = await c.start();
        assert.ok(url.startsWith(`${op.issuer}/auth?`));
      });

      it(`at the finish (${mode === 'refuse' ? 'connection refused' : '503'}): LW_AUTH_PROVIDER_DOWN, and the same callback completes once it is back`, async () => {
        const c = client();
        const { checks, callback } = await signIn(c);
        await op.down(mode);
        const err = await refused(c.finish(callback, checks), 'LW_AUTH_PROVIDER_DOWN');
        assert.match(err.message, /not answering/);
        await op.up();
        assert.equal((await c.finish(callback, checks)).subject, 'ann');
      });
    }

    it('that accepts connections and never answers: LW_AUTH_PROVIDER_DOWN after the client’s timeout', async () => {
      const c = client({ timeoutMs: 300 });
      await op.down('hang');
      const err = await refused(c.start(), 'LW_AUTH_PROVIDER_DOWN');
      assert.match(err.detail ?? '', /timed out/);
      await op.up();
      const { checks, callback } = await signIn(c);
      await op.down('hang');
      await refused(c.finish(callback, checks), 'LW_AUTH_PROVIDER_DOWN');
      await op.up();
      assert.equal((await c.finish(callback, checks)).subject, 'ann');
    });
  });

  describe('discovery documents that do not fit', () => {
    let other: Server;
    let otherUrl: string;
    before(async () => {
      other = createServer((req, res) => {
        if (req.url === '/other/.well-known/openid-configuration') {
          // The provider's real document, at another issuer identifier.
          void fetch(`${op.issuer}/.well-known/openid-configuration`).then(async (r) => res.writeHead(200, { 'content-type': 'application/json' }).end(await r.text()));
        } else if (req.url === '/html/.well-known/openid-configuration') {
          res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><p>Welcome</p>');
        } else res.writeHead(404, { 'content-type': 'text/plain' }).end('Not Found');
      });
      await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
      otherUrl = `http://127.0.0.1:${(other.address() as { port: number }).port}`;
    });
    after(() => new Promise<void>((r) => other.close(() => r())));

    for (const [what, path] of [
      ['for another issuer', '/other'],
      ['missing (404)', '/missing'],
      ['not JSON', '/html'],
    ] as const) {
      it(`a discovery document ${what} is LW_AUTH_PROVIDER_CONFIG`, async () => {
        const c = client({ issuer: `${otherUrl}${path}` });
        await refused(c.start(), 'LW_AUTH_PROVIDER_CONFIG');
      });
    }
  });

  it('the login page works in headless Chromium, on loopback only', { skip: noChromium }, async () => {
    // The client's callback: a page on 127.0.0.1 that says it got the answer.
    const app = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>back</title><p>back at the app</p>'));
    await new Promise<void>((r) => app.listen(0, '127.0.0.1', r));
    const redirectUri = `http://127.0.0.1:${(app.address() as { port: number }).port}/__/auth/handler`;
    let browser: Browser | undefined;
    try {
      await op.setRedirectUris([REDIRECT, redirectUri]);
      const c = client({ redirectUri });
      const { url, checks } = await c.start();
      browser = await launch();
      const page = await (await browser.newContext()).newPage();
      const origins = new Set<string>();
      page.on('request', (r) => void origins.add(new URL(r.url()).origin));
      await page.goto(url);
      assert.equal(await page.locator('h1').textContent(), 'Sign in to the test provider');
      await page.fill('input[name=account]', 'nobody');
      await page.click('button[value=login]');
      assert.match((await page.locator('[role=alert]').textContent()) ?? '', /no account/);
      await page.fill('input[name=account]', 'bob');
      await page.click('button[value=login]');
      await page.waitForURL((u) => u.href.startsWith(redirectUri), { timeout: 30_000 });
      const callback = remember(new URL(page.url()));
      assert.deepEqual([...origins].sort(), [op.issuer, new URL(redirectUri).origin].sort(), 'nothing but the provider and the app was asked');
      assert.equal((await c.finish(callback, checks)).subject, 'bob');
    } finally {
      await browser?.close();
      await op.setRedirectUris([REDIRECT]);
      await new Promise<void>((r) => app.close(() => r()));
    }
  });

  it('a redirect URI the provider does not know is refused at the provider, until it is registered', async () => {
    const elsewhere = 'https://elsewhere.example.test/__/auth/handler';
    const c = client({ redirectUri: elsewhere });
    await assert.rejects(op.login((await c.start()).url), /redirect_uri/);
    await op.setRedirectUris([REDIRECT, elsewhere]);
    try {
      const { checks, callback } = await signIn(c);
      assert.equal(callback.origin + callback.pathname, elsewhere);
      assert.equal((await c.finish(callback, checks)).subject, 'ann');
    } finally {
      await op.setRedirectUris([REDIRECT]);
    }
    await assert.rejects(op.login((await c.start()).url), /redirect_uri/);
  });

  it('the provider keeps its own session in the login helper’s cookies: a second sign-in skips the login page, another client only gets the automatic consent', async () => {
    const c = client();
    const cookies = new ProviderCookies();
    const first = await c.start();
    const back1 = remember(await op.login(first.url, { account: 'bob', cookies }));
    assert.equal((await c.finish(back1, first.checks)).subject, 'bob');
    const interactions = op.hits.interaction;
    const second = await c.start();
    const back2 = remember(await op.login(second.url, { account: 'ann', cookies }));
    assert.equal(op.hits.interaction, interactions, 'no login page this time');
    assert.equal((await c.finish(back2, second.checks)).subject, 'bob', 'still signed in as bob at the provider');

    // Another client, same provider session: only the consent step, given at once.
    const other = client({ clientId: 'es-client', clientSecret: 'es-client-secret-0123456789' });
    const third = await other.start();
    const back3 = remember(await op.login(third.url, { account: 'ann', cookies }));
    assert.equal(op.hits.interaction, interactions + 1, 'one interaction: the consent, answered by a redirect');
    assert.equal((await other.finish(back3, third.checks)).subject, 'bob');
  });
});

describe('OpenID Connect: the ID token carries the profile', () => {
  let op: TestOidcProvider;
  before(async () => {
    op = await startOidcProvider({ claimsInIdToken: true, redirectUris: [REDIRECT] });
  });
  after(() => op?.stop());

  it('reads name, e-mail and picture from the ID token without asking userinfo', async () => {
    const c = createOidcClient({ issuer: op.issuer, clientId: op.clientId, clientSecret: op.clientSecret, redirectUri: REDIRECT });
    const { url, checks } = await c.start();
    const callback = await op.login(url, { account: 'ann' });
    assert.deepEqual(await c.finish(callback, checks), { subject: 'ann', name: 'Ann Example', email: 'ann@example.com', emailVerified: true, picture: 'https://images.example.com/ann.png' });
    assert.equal(op.hits.userinfo, 0);
  });

  it('builds a name from given and family names, and drops a picture that is not http(s)', async () => {
    op.users.add({ sub: 'cy', given_name: 'Cy', family_name: 'Twombly', email: 'cy@example.com', email_verified: true, picture: 'javascript:alert(1)' });
    const c = createOidcClient({ issuer: op.issuer, clientId: op.clientId, clientSecret: op.clientSecret, redirectUri: REDIRECT, scopes: ['profile', 'email'] });
    const { url, checks } = await c.start();
    const callback = await op.login(url, { account: 'cy' });
    assert.deepEqual(await c.finish(callback, checks), { subject: 'cy', name: 'Cy Twombly', email: 'cy@example.com', emailVerified: true, picture: null });
  });
});

describe('OpenID Connect client settings', () => {
  const base = { clientId: 'id', clientSecret: 'secret', redirectUri: REDIRECT };

  it('refuses an http issuer that is not on this machine, at creation', () => {
    for (const issuer of ['http://accounts.example.com', 'http://10.0.0.1:8080', 'http://127.0.0.2:9000', 'ftp://127.0.0.1/', 'not a url', 'https://user:pw@accounts.example.com', 'https://accounts.example.com/?x=1']) {
      assert.throws(
        () => createOidcClient({ ...base, issuer }),
        (e: unknown) => e instanceof AuthError && e.code === 'LW_AUTH_PROVIDER_CONFIG' && !e.message.includes('secret'),
        issuer,
      );
    }
  });

  it('accepts https issuers and http on 127.0.0.1, ::1 and localhost, without contacting them', () => {
    for (const issuer of ['https://accounts.example.com', 'https://login.example.com/tenant/v2', 'http://127.0.0.1:1', 'http://[::1]:1', 'http://localhost:1']) {
      assert.equal(createOidcClient({ ...base, issuer }).issuer, issuer);
    }
  });

  it('refuses a missing client id or secret, and a redirect URI with a query or fragment', () => {
    const issuer = 'https://accounts.example.com';
    for (const bad of [{ clientId: '' }, { clientSecret: '' }, { redirectUri: '/__/auth/handler' }, { redirectUri: `${REDIRECT}?a=1` }, { redirectUri: `${REDIRECT}#x` }]) {
      assert.throws(() => createOidcClient({ ...base, issuer, ...bad }), (e: unknown) => e instanceof AuthError && e.code === 'LW_AUTH_PROVIDER_CONFIG', JSON.stringify(bad));
    }
  });

  it('Google is OpenID Connect with issuer https://accounts.google.com', () => {
    assert.equal(GOOGLE_ISSUER, 'https://accounts.google.com');
    assert.equal(createGoogleClient(base).issuer, GOOGLE_ISSUER);
  });
});
