/**
 * Sign-in with GitHub (src/auth/github.ts) against a stand-in for GitHub on 127.0.0.1 (no real
 * GitHub can run here). The stand-in keeps to what GitHub does and checks what GitHub checks: the
 * authorize page sends the signed-in user back to the registered callback with a one-time code and
 * the state it was given (or `error=access_denied`, or `error=redirect_uri_mismatch` to the
 * registered callback); the token endpoint checks the client id and secret, the code (known,
 * unused, for this client and callback) and the PKCE verifier, answering errors in a 200 as GitHub
 * does; the API wants a User-Agent and a bearer token, and lists the user's addresses.
 *
 * Covered: the flow and the profile (numeric id as subject, primary verified address only, name
 * falling back to the login, addresses unreadable), a wrong or missing state, a code used twice,
 * a wrong verifier, a wrong secret, a cancelled sign-in, GitHub down, failing or hanging at each
 * step (and the same callback completing once it is back), settings refused at creation. No error
 * carries the secret, the code or the token.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { AuthError, type AuthErrorCode } from '../../src/auth/errors.js';
import { createGitHubClient, GITHUB_API_URL, GITHUB_AUTHORIZE_URL, GITHUB_TOKEN_URL, type GitHubClient, type GitHubClientOptions } from '../../src/auth/github.js';

const REDIRECT = 'https://app.example.test/__/auth/handler';

interface FakeUser {
  id: number;
  login: string;
  name: string | null;
  avatar_url: string;
  emails: Array<{ email: string; primary: boolean; verified: boolean; visibility: string | null }> | 'forbidden';
}

const USERS: FakeUser[] = [
  {
    id: 583231,
    login: 'octocat',
    name: 'The Octocat',
    avatar_url: 'https://avatars.githubusercontent.com/u/583231?v=4',
    emails: [
      { email: 'octocat@users.noreply.github.com', primary: false, verified: true, visibility: null },
      { email: 'octocat@github.com', primary: true, verified: true, visibility: 'public' },
    ],
  },
  { id: 42, login: 'hubot', name: null, avatar_url: 'https://avatars.githubusercontent.com/u/42?v=4', emails: [{ email: 'hubot@example.com', primary: true, verified: false, visibility: 'private' }] },
  { id: 7, login: 'monalisa', name: 'Mona Lisa', avatar_url: 'https://avatars.githubusercontent.com/u/7?v=4', emails: 'forbidden' },
];

type Step = 'authorize' | 'token' | 'user' | 'emails';

/** A stand-in for github.com and api.github.com (the API under /api/v3, as on GitHub Enterprise). */
interface FakeGitHub {
  base: string;
  clientId: string;
  clientSecret: string;
  /** Who is signed in at "GitHub" when the authorize page is reached. */
  signedIn: string;
  hits: Record<Step, number>;
  /** Every access token issued (secrets for the tests). */
  tokens: string[];
  /** Visits the authorize URL as the signed-in user (approving, or cancelling) and answers the redirect back. */
  authorize(url: string, options?: { cancel?: boolean }): Promise<URL>;
  /** Makes one step (or all) refuse connections, answer 503, or hang. */
  down(how: 'refuse' | 'error' | 'hang', step?: Step): Promise<void>;
  up(): Promise<void>;
  stop(): Promise<void>;
}

async function startFakeGitHub(): Promise<FakeGitHub> {
  const clientId = 'Iv1.' + randomBytes(8).toString('hex');
  const clientSecret = randomBytes(20).toString('hex');
  const codes = new Map<string, { clientId: string; redirectUri: string; challenge: string | null; login: string; used: boolean }>();
  const tokens = new Map<string, string>(); // token → login
  const hits: Record<Step, number> = { authorize: 0, token: 0, user: 0, emails: 0 };
  const sockets = new Set<Socket>();
  const held = new Set<ServerResponse>();
  let failing: { how: 'error' | 'hang'; step: Step | undefined } | undefined;
  let refused = false;

  const json = (res: ServerResponse, status: number, body: unknown) => void res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://github.test');
    const step: Step | undefined =
      url.pathname === '/login/oauth/authorize' ? 'authorize'
      : url.pathname === '/login/oauth/access_token' ? 'token'
      : url.pathname === '/api/v3/user' ? 'user'
      : url.pathname === '/api/v3/user/emails' ? 'emails'
      : undefined;
    if (!step) return json(res, 404, { message: 'Not Found' });
    hits[step]++;
    if (failing && (failing.step === undefined || failing.step === step)) {
      if (failing.how === 'error') return json(res, 503, { message: 'Service Unavailable' });
      held.add(res);
      res.on('close', () => held.delete(res));
      return;
    }

    if (step === 'authorize') {
      const q = url.searchParams;
      if (req.method !== 'GET' || q.get('client_id') !== clientId) return void res.writeHead(404, { 'content-type': 'text/html' }).end('<p>Not Found</p>');
      const state = q.get('state');
      const back = new URL(REDIRECT);
      if (q.get('redirect_uri') !== null && q.get('redirect_uri') !== REDIRECT) {
        // GitHub sends the visitor to the registered callback with the error.
        back.search = new URLSearchParams({ error: 'redirect_uri_mismatch', error_description: 'The redirect_uri MUST match the registered callback URL for this application.', ...(state ? { state } : {}) }).toString();
        return void res.writeHead(302, { location: back.href }).end();
      }
      const challenge = q.get('code_challenge');
      if (challenge !== null && q.get('code_challenge_method') !== 'S256') return void res.writeHead(400, { 'content-type': 'text/html' }).end('<p>unsupported code_challenge_method</p>');
      if (req.headers['x-fake-cancel'] === '1') {
        back.search = new URLSearchParams({ error: 'access_denied', error_description: 'The user has denied your application access.', ...(state ? { state } : {}) }).toString();
        return void res.writeHead(302, { location: back.href }).end();
      }
      const code = randomBytes(10).toString('hex');
      codes.set(code, { clientId, redirectUri: q.get('redirect_uri') ?? REDIRECT, challenge, login: fake.signedIn, used: false });
      back.search = new URLSearchParams({ code, ...(state ? { state } : {}) }).toString();
      return void res.writeHead(302, { location: back.href }).end();
    }

    if (step === 'token') {
      if (req.method !== 'POST') return json(res, 404, { message: 'Not Found' });
      const chunks: Buffer[] = [];
      for await (const c of req as AsyncIterable<Buffer>) chunks.push(c);
      const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
      const answer = (body: Record<string, string>) => {
        if ((req.headers.accept ?? '').includes('application/json')) return json(res, 200, body);
        res.writeHead(200, { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' }).end(new URLSearchParams(body).toString());
      };
      const documented = 'https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors';
      if (form.get('client_id') !== clientId || form.get('client_secret') !== clientSecret) {
        return answer({ error: 'incorrect_client_credentials', error_description: 'The client_id and/or client_secret passed are incorrect.', error_uri: documented });
      }
      const grant = codes.get(form.get('code') ?? '');
      const badCode = () => answer({ error: 'bad_verification_code', error_description: 'The code passed is incorrect or expired.', error_uri: documented });
      if (!grant || grant.used || grant.clientId !== clientId) return badCode();
      grant.used = true;
      if (form.get('redirect_uri') !== null && form.get('redirect_uri') !== grant.redirectUri) {
        return answer({ error: 'redirect_uri_mismatch', error_description: 'The redirect_uri MUST match the registered callback URL for this application.', error_uri: documented });
      }
      if (grant.challenge !== null) {
        const verifier = form.get('code_verifier') ?? '';
        if (createHash('sha256').update(verifier).digest('base64url') !== grant.challenge) return badCode();
      }
      const token = 'gho_' + randomBytes(18).toString('base64url');
      tokens.set(token, grant.login);
      return answer({ access_token: token, token_type: 'bearer', scope: 'read:user,user:email' });
    }

    // The REST API.
    if (!req.headers['user-agent']) return json(res, 403, { message: 'Request forbidden by administrative rules. Please make sure your request has a User-Agent header.' });
    const auth = /^(?:bearer|token) (.+)$/i.exec(req.headers.authorization ?? '');
    const login = auth ? tokens.get(auth[1]!) : undefined;
    const user = USERS.find((u) => u.login === login);
    if (!user) return json(res, 401, { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest' });
    if (step === 'user') return json(res, 200, { login: user.login, id: user.id, node_id: 'MDQ6VXNlcjE=', avatar_url: user.avatar_url, type: 'User', name: user.name, company: null, email: null });
    if (user.emails === 'forbidden') return json(res, 403, { message: 'Resource not accessible by integration' });
    return json(res, 200, user.emails);
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => json(res, 500, { message: String(err) }));
  });
  server.keepAliveTimeout = 1_000;
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  const base = `http://127.0.0.1:${port}`;
  let current = server;

  const fake: FakeGitHub = {
    base,
    clientId,
    clientSecret,
    signedIn: 'octocat',
    hits,
    get tokens() {
      return [...tokens.keys()];
    },
    async authorize(url, options = {}) {
      const res = await fetch(url, { redirect: 'manual', headers: options.cancel ? { 'x-fake-cancel': '1' } : {} });
      await res.text();
      if (res.status !== 302) throw new Error(`authorize answered ${res.status}`);
      return new URL(res.headers.get('location')!);
    },
    async down(how, step) {
      await fake.up();
      if (how === 'refuse') {
        const closed = new Promise<void>((r) => current.close(() => r()));
        for (const s of sockets) s.destroy();
        await closed;
        refused = true;
      } else failing = { how, step };
    },
    async up() {
      failing = undefined;
      for (const r of held) r.destroy();
      if (refused) {
        current = createServer((req, res) => void handle(req, res).catch((err: unknown) => json(res, 500, { message: String(err) })));
        current.keepAliveTimeout = 1_000;
        current.on('connection', (s: Socket) => {
          sockets.add(s);
          s.on('close', () => sockets.delete(s));
        });
        await new Promise<void>((r) => current.listen(port, '127.0.0.1', r));
        refused = false;
      }
    },
    async stop() {
      await fake.up();
      const closed = new Promise<void>((r) => current.close(() => r()));
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
  return fake;
}

describe('GitHub sign-in against a stand-in GitHub', () => {
  let gh: FakeGitHub;
  const secrets = new Set<string>();

  function client(extra: Partial<GitHubClientOptions> = {}): GitHubClient {
    return createGitHubClient({
      clientId: gh.clientId,
      clientSecret: gh.clientSecret,
      redirectUri: REDIRECT,
      authorizeUrl: `${gh.base}/login/oauth/authorize`,
      tokenUrl: `${gh.base}/login/oauth/access_token`,
      apiUrl: `${gh.base}/api/v3`,
      ...extra,
    });
  }

  async function signIn(c: GitHubClient, as = 'octocat') {
    gh.signedIn = as;
    const { url, checks } = await c.start();
    secrets.add(checks.codeVerifier);
    const callback = await gh.authorize(url);
    const code = callback.searchParams.get('code');
    if (code) secrets.add(code);
    return { url: new URL(url), checks, callback };
  }

  async function refused(p: Promise<unknown>, code: AuthErrorCode): Promise<AuthError> {
    const err = await p.then(
      () => assert.fail(`expected ${code}, but it succeeded`),
      (e: unknown) => e,
    );
    assert.ok(err instanceof AuthError, `expected an AuthError, got ${String(err)}`);
    assert.equal(err.code, code, `${err.message} [${err.detail}]`);
    const text = `${err.message} ${err.detail ?? ''} ${err.stack ?? ''}`;
    for (const s of [...secrets, ...gh.tokens]) assert.ok(!text.includes(s), `the error mentions a secret: ${text}`);
    return err;
  }

  before(async () => {
    gh = await startFakeGitHub();
    secrets.add(gh.clientSecret);
  });
  after(() => gh?.stop());

  it('signs in: state and PKCE S256 in the authorize URL; the numeric id as subject and the primary verified address', async () => {
    const c = client();
    const { url, checks, callback } = await signIn(c);
    assert.equal(url.origin + url.pathname, `${gh.base}/login/oauth/authorize`);
    const q = url.searchParams;
    assert.equal(q.get('client_id'), gh.clientId);
    assert.equal(q.get('redirect_uri'), REDIRECT);
    assert.equal(q.get('scope'), 'read:user user:email');
    assert.equal(q.get('state'), checks.state);
    assert.equal(q.get('code_challenge_method'), 'S256');
    assert.equal(q.get('code_challenge'), createHash('sha256').update(checks.codeVerifier).digest('base64url'));
    assert.equal((checks as { nonce?: string }).nonce, undefined, 'no nonce: GitHub is not OpenID Connect');
    assert.deepEqual(await c.finish(callback, checks), {
      subject: '583231',
      name: 'The Octocat',
      email: 'octocat@github.com',
      emailVerified: true,
      picture: 'https://avatars.githubusercontent.com/u/583231?v=4',
    });
  });

  it('a user without a name is named by their login; an unverified primary address is not used', async () => {
    const c = client();
    const { checks, callback } = await signIn(c, 'hubot');
    assert.deepEqual(await c.finish(callback, checks), { subject: '42', name: 'hubot', email: null, emailVerified: false, picture: 'https://avatars.githubusercontent.com/u/42?v=4' });
  });

  it('addresses the token may not read leave the e-mail empty, and the sign-in succeeds', async () => {
    const c = client();
    const { checks, callback } = await signIn(c, 'monalisa');
    assert.deepEqual(await c.finish(callback, checks), { subject: '7', name: 'Mona Lisa', email: null, emailVerified: false, picture: 'https://avatars.githubusercontent.com/u/7?v=4' });
  });

  it('a wrong or missing state is LW_AUTH_BAD_CALLBACK, found before the code is spent', async () => {
    const c = client();
    const { checks, callback } = await signIn(c);
    const tokenBefore = gh.hits.token;
    await refused(c.finish(callback, { ...checks, state: checks.state.slice(0, -1) + (checks.state.endsWith('A') ? 'B' : 'A') }), 'LW_AUTH_BAD_CALLBACK');
    const noState = new URL(callback);
    noState.searchParams.delete('state');
    await refused(c.finish(noState, checks), 'LW_AUTH_BAD_CALLBACK');
    assert.equal(gh.hits.token, tokenBefore);
    assert.equal((await c.finish(callback, checks)).subject, '583231');
  });

  it('a code used twice is LW_AUTH_BAD_CALLBACK', async () => {
    const c = client();
    const { checks, callback } = await signIn(c);
    await c.finish(callback, checks);
    const err = await refused(c.finish(callback, checks), 'LW_AUTH_BAD_CALLBACK');
    assert.match(err.detail ?? '', /bad_verification_code/);
  });

  it('a code with another PKCE verifier, or without a code, is LW_AUTH_BAD_CALLBACK', async () => {
    const c = client();
    const { checks, callback } = await signIn(c);
    await refused(c.finish(callback, { ...checks, codeVerifier: 'z'.repeat(43) }), 'LW_AUTH_BAD_CALLBACK');
    const noCode = new URL(callback);
    noCode.searchParams.delete('code');
    await refused(c.finish(noCode, checks), 'LW_AUTH_BAD_CALLBACK');
  });

  it('a wrong client secret is LW_AUTH_PROVIDER_CONFIG', async () => {
    const c = client({ clientSecret: 'not-the-secret' });
    secrets.add('not-the-secret');
    const { checks, callback } = await signIn(c);
    const err = await refused(c.finish(callback, checks), 'LW_AUTH_PROVIDER_CONFIG');
    assert.match(err.detail ?? '', /incorrect_client_credentials/);
  });

  it('a cancelled sign-in is LW_AUTH_BAD_CALLBACK; a callback GitHub does not know is LW_AUTH_PROVIDER_CONFIG', async () => {
    const c = client();
    const { url, checks } = await c.start();
    const cancelled = await gh.authorize(url, { cancel: true });
    assert.equal(cancelled.searchParams.get('error'), 'access_denied');
    const err = await refused(c.finish(cancelled, checks), 'LW_AUTH_BAD_CALLBACK');
    assert.match(err.message, /cancelled/);

    const elsewhere = client({ redirectUri: 'https://elsewhere.example.test/cb' });
    const started = await elsewhere.start();
    const mismatch = await gh.authorize(started.url);
    assert.equal(mismatch.searchParams.get('error'), 'redirect_uri_mismatch');
    await refused(elsewhere.finish(mismatch, started.checks), 'LW_AUTH_PROVIDER_CONFIG');
  });

  it('no sign-in under way in the session is LW_AUTH_BAD_CALLBACK', async () => {
    const c = client();
    const { callback } = await signIn(c);
    await refused(c.finish(callback, { state: '', codeVerifier: '' }), 'LW_AUTH_BAD_CALLBACK');
  });

  describe('GitHub down', () => {
    after(() => gh.up());

    for (const [how, step] of [
      ['refuse', undefined],
      ['error', 'token'],
      ['error', 'user'],
      ['error', 'emails'],
      ['hang', 'token'],
      ['hang', 'user'],
    ] as const) {
      it(`${how === 'refuse' ? 'refusing connections' : how === 'error' ? 'answering 503' : 'never answering'}${step ? ` at ${step}` : ''}: LW_AUTH_PROVIDER_DOWN; the same callback completes once it is back`, async () => {
        const c = client({ timeoutMs: how === 'hang' ? 300 : undefined });
        const { checks, callback } = await signIn(c);
        await gh.down(how, step);
        const err = await refused(c.finish(callback, checks), 'LW_AUTH_PROVIDER_DOWN');
        assert.match(err.detail ?? '', how === 'refuse' ? /^token: ECONNREFUSED/ : how === 'error' ? new RegExp(`^${step}: HTTP 503`) : new RegExp(`^${step}: timed out`));
        await gh.up();
        if (step === undefined || step === 'token') {
          assert.equal((await c.finish(callback, checks)).subject, '583231');
        }
      });
    }
  });

  it('GitHub’s own addresses are the defaults', () => {
    assert.equal(GITHUB_AUTHORIZE_URL, 'https://github.com/login/oauth/authorize');
    assert.equal(GITHUB_TOKEN_URL, 'https://github.com/login/oauth/access_token');
    assert.equal(GITHUB_API_URL, 'https://api.github.com');
  });

  it('refuses http base URLs that are not on this machine, and missing credentials, at creation', () => {
    const base = { clientId: 'id', clientSecret: 'secret', redirectUri: REDIRECT };
    for (const bad of [
      { authorizeUrl: 'http://github.example.com/login/oauth/authorize' },
      { tokenUrl: 'http://github.example.com/login/oauth/access_token' },
      { apiUrl: 'http://api.github.example.com' },
      { clientId: '' },
      { clientSecret: '' },
      { redirectUri: 'not a url' },
    ]) {
      assert.throws(() => createGitHubClient({ ...base, ...bad }), (e: unknown) => e instanceof AuthError && e.code === 'LW_AUTH_PROVIDER_CONFIG', JSON.stringify(bad));
    }
    assert.doesNotThrow(() => createGitHubClient(base));
    assert.doesNotThrow(() => createGitHubClient({ ...base, apiUrl: 'https://github.example.com/api/v3' }));
  });
});
