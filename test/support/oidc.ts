/**
 * A real OpenID Connect issuer for tests: `oidc-provider` (9.13.3) on 127.0.0.1, port 0, mounted
 * with node:http. Clients are registered statically (client_secret_basic by default, or
 * client_secret_post), PKCE with S256 is required, ID tokens are signed with generated keys
 * (RS256, or ES256 for a client that asks for it), and the provider's own development interactions
 * are off: the login and consent steps are the small HTML pages below (a form with an `account`
 * field and a submit button; consent is given automatically), which work in a browser and which
 * `login()` drives over plain HTTP.
 *
 * What tests can do besides signing in: make the provider unreachable, failing (503) or hanging
 * and bring it back on the same port (`down()` / `up()`), count the requests each endpoint got,
 * change the registered redirect URIs, add accounts, and rewrite the ID tokens the token endpoint
 * answers (re-signed with the provider's key or with a foreign one) to check that a client refuses
 * them.
 *
 * oidc-provider prints an "Unsupported runtime" warning on Node 20 (it wants Node 22); it works.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { randomBytes } from 'node:crypto';
import { CompactSign, exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';
// @ts-expect-error oidc-provider ships no type declarations; the part used here is typed below.
import ProviderModule from 'oidc-provider';

/** A test user at the provider; every field but `sub` is an optional claim. */
export interface TestAccount {
  sub: string;
  name?: string;
  given_name?: string;
  family_name?: string;
  preferred_username?: string;
  email?: string;
  email_verified?: boolean;
  picture?: string;
}

export type TokenEndpointAuthMethod = 'client_secret_basic' | 'client_secret_post';

/** A client registered at the provider. */
export interface TestClient {
  clientId: string;
  clientSecret: string;
  redirectUris?: string[];
  /** Default `client_secret_basic`. */
  tokenEndpointAuthMethod?: TokenEndpointAuthMethod;
  /** The ID token signing algorithm registered for the client; default RS256. */
  idTokenAlg?: 'RS256' | 'ES256';
}

export interface OidcProviderOptions {
  /** The main client's id (default `laneway-test`) and secret (default random). */
  clientId?: string;
  clientSecret?: string;
  /** The main client's redirect URIs; they can also be set later with `setRedirectUris`. */
  redirectUris?: string[];
  tokenEndpointAuthMethod?: TokenEndpointAuthMethod;
  idTokenAlg?: 'RS256' | 'ES256';
  /** More clients, registered the same way. */
  clients?: TestClient[];
  /** The accounts at the provider; default `DEFAULT_ACCOUNTS`. */
  accounts?: TestAccount[];
  /**
   * Put the profile and e-mail claims in the ID token too (oidc-provider's
   * `conformIdTokenClaims: false`). By default, as the specification has it for the code flow,
   * the ID token holds `sub` and the protocol claims, and the profile comes from userinfo.
   */
  claimsInIdToken?: boolean;
}

/** `ann` has a verified e-mail address and a picture; `bob` an unverified address and no picture. */
export const DEFAULT_ACCOUNTS: readonly TestAccount[] = [
  { sub: 'ann', name: 'Ann Example', email: 'ann@example.com', email_verified: true, picture: 'https://images.example.com/ann.png' },
  { sub: 'bob', name: 'Bob Example', email: 'bob@example.org', email_verified: false },
];

/** How `down()` makes the provider fail: refuse connections, answer 503, or accept and never answer. */
export type DownMode = 'refuse' | 'error' | 'hang';

/** The endpoints whose requests are counted. */
export type Endpoint = 'discovery' | 'jwks' | 'authorization' | 'token' | 'userinfo' | 'interaction' | 'other';

export interface LoginOptions {
  /** The account to sign in as (its `sub`); default `ann`. */
  account?: string;
  /** Press "Cancel" on the login page instead: the provider answers `error=access_denied`. */
  cancel?: boolean;
  /**
   * The provider's cookies (its session). A fresh jar by default, so each login shows the login
   * page; pass the same jar to a second login to find the provider's session already there.
   */
  cookies?: ProviderCookies;
}

export interface TestOidcProvider {
  /** `http://127.0.0.1:PORT`, the issuer identifier (no trailing slash). */
  readonly issuer: string;
  readonly port: number;
  readonly clientId: string;
  readonly clientSecret: string;
  /** Replaces the redirect URIs registered for a client (the main one by default). */
  setRedirectUris(uris: string[], clientId?: string): Promise<void>;
  users: {
    add(account: TestAccount): void;
    get(sub: string): TestAccount | undefined;
    remove(sub: string): void;
  };
  /**
   * Follows the provider's side of an authorization request over HTTP — the login page (signing in
   * as `account`), the automatic consent — and answers the URL the provider finally redirects to,
   * the client's redirect URI with `code`, `state` and `iss` (or `error`). Throws if the provider
   * answers something else (its error page: a wrong redirect URI, an unknown client…).
   */
  login(authorizationUrl: string | URL, options?: LoginOptions): Promise<URL>;
  /** Makes the provider unreachable (default), failing with 503, or hanging, until `up()`. */
  down(mode?: DownMode): Promise<void>;
  /** Brings the provider back, on the same port. */
  up(): Promise<void>;
  /** Requests received per endpoint (while down too). */
  readonly hits: Record<Endpoint, number>;
  /**
   * From now on, the token endpoint's ID tokens are replaced by `rewrite(claims)` signed with the
   * provider's key (same `kid`), or with a foreign key under the same `kid` when `foreignKey`;
   * `undefined` stops rewriting.
   */
  rewriteIdTokens(rewrite: ((claims: Record<string, unknown>) => Record<string, unknown>) | undefined, options?: { foreignKey?: boolean }): void;
  /** How the client authenticated at each token request, in order. */
  readonly tokenAuthMethods: readonly string[];
  /** Errors the provider reported as its own failures (server_error events); tests expect none. */
  readonly serverErrors: Error[];
  stop(): Promise<void>;
}

/** The server's settings for `provider` as the name of a provider of an app (`LANEWAY_AUTH_<NAME>_…`), to merge into `process.env`. */
export function providerEnv(provider: TestOidcProvider, name: string): Record<string, string> {
  const key = `LANEWAY_AUTH_${name.toUpperCase()}`;
  return { [`${key}_CLIENT_ID`]: provider.clientId, [`${key}_SECRET`]: provider.clientSecret, [`${key}_ISSUER`]: provider.issuer };
}

// ---- the part of oidc-provider used here ----

interface KoaContext {
  path: string;
  method: string;
  status: number;
  body: unknown;
  get(header: string): string;
  oidc?: { params?: Record<string, unknown> };
}
interface InteractionDetails {
  uid: string;
  prompt: { name: string; details: Record<string, unknown> };
  params: Record<string, unknown>;
  session?: { accountId?: string };
  grantId?: string;
}
interface Grant {
  addOIDCScope(scope: string): void;
  addOIDCClaims(claims: string[]): void;
  addResourceScope(indicator: string, scope: string): void;
  save(): Promise<string>;
}
interface Provider {
  callback(): (req: IncomingMessage, res: ServerResponse) => void;
  use(middleware: (ctx: KoaContext, next: () => Promise<void>) => Promise<void>): void;
  on(event: string, listener: (...args: unknown[]) => void): void;
  interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<InteractionDetails>;
  interactionFinished(req: IncomingMessage, res: ServerResponse, result: Record<string, unknown>, options?: { mergeWithLastSubmission?: boolean }): Promise<void>;
  Grant: { new (properties: { accountId: string; clientId: string }): Grant; find(id: string): Promise<Grant | undefined> };
  Client: { find(id: string): Promise<{ redirectUris: string[] } | undefined> };
}
const ProviderClass = ProviderModule as new (issuer: string, configuration: Record<string, unknown>) => Provider;

/** The scopes (and so the claims) the provider knows. */
const CLAIMS = {
  openid: ['sub'],
  profile: ['name', 'given_name', 'family_name', 'preferred_username', 'picture'],
  email: ['email', 'email_verified'],
};

const MINUTE = 60;

export async function startOidcProvider(options: OidcProviderOptions = {}): Promise<TestOidcProvider> {
  const main: TestClient = {
    clientId: options.clientId ?? 'laneway-test',
    clientSecret: options.clientSecret ?? randomBytes(24).toString('base64url'),
    redirectUris: options.redirectUris,
    tokenEndpointAuthMethod: options.tokenEndpointAuthMethod,
    idTokenAlg: options.idTokenAlg,
  };
  const clients = [main, ...(options.clients ?? [])];
  const accounts = new Map<string, TestAccount>();
  for (const a of options.accounts ?? DEFAULT_ACCOUNTS) accounts.set(a.sub, { ...a });

  // Signing keys: one RSA and one P-256 key, generated for this provider.
  const keys: Record<'RS256' | 'ES256', JWK> = {
    RS256: await privateJwk('RS256', 'rs-1'),
    ES256: await privateJwk('ES256', 'es-1'),
  };

  // Listen first: the issuer identifier holds the port.
  const sockets = new Set<Socket>();
  const held = new Set<ServerResponse>();
  let mode: DownMode | 'up' = 'up';
  let handler: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => void res.writeHead(503).end();
  const hits: Record<Endpoint, number> = { discovery: 0, jwks: 0, authorization: 0, token: 0, userinfo: 0, interaction: 0, other: 0 };
  let server = makeServer();
  const port = await listen(server, 0);
  const issuer = `http://127.0.0.1:${port}`;

  function makeServer(): Server {
    const s = createServer((req, res) => {
      hits[endpointOf(req.url ?? '/')]++;
      if (mode === 'error') {
        res.writeHead(503, { 'content-type': 'text/plain', 'retry-after': '1' }).end('Service Unavailable\n');
        return;
      }
      if (mode === 'hang') {
        held.add(res);
        res.on('close', () => held.delete(res));
        return;
      }
      handler(req, res);
    });
    s.keepAliveTimeout = 1_000;
    s.on('connection', (socket: Socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    return s;
  }

  const provider = new ProviderClass(issuer, {
    clients: clients.map((c) => ({
      client_id: c.clientId,
      client_secret: c.clientSecret,
      // oidc-provider wants at least one; `setRedirectUris` replaces it.
      redirect_uris: c.redirectUris?.length ? c.redirectUris : ['http://127.0.0.1/redirect-uri-not-set'],
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: c.tokenEndpointAuthMethod ?? 'client_secret_basic',
      id_token_signed_response_alg: c.idTokenAlg ?? 'RS256',
    })),
    async findAccount(_ctx: unknown, sub: string) {
      const account = accounts.get(sub);
      if (!account) return undefined;
      return {
        accountId: sub,
        async claims() {
          const found = accounts.get(sub) ?? account;
          return { ...found };
        },
      };
    },
    claims: CLAIMS,
    conformIdTokenClaims: !options.claimsInIdToken,
    responseTypes: ['code'],
    pkce: { required: () => true },
    features: {
      devInteractions: { enabled: false },
      userinfo: { enabled: true },
      rpInitiatedLogout: { enabled: true, logoutSource, postLogoutSuccessSource },
    },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    cookies: { keys: ['laneway-test-oidc-cookie-key-1'] },
    jwks: { keys: [keys.RS256, keys.ES256] },
    ttl: {
      AccessToken: 10 * MINUTE,
      AuthorizationCode: 2 * MINUTE,
      IdToken: 10 * MINUTE,
      Interaction: 10 * MINUTE,
      Session: 60 * MINUTE,
      Grant: 60 * MINUTE,
      RefreshToken: 60 * MINUTE,
      ClientCredentials: 10 * MINUTE,
      DeviceCode: 10 * MINUTE,
      BackchannelAuthenticationRequest: 10 * MINUTE,
      PreAuthorizedCode: 10 * MINUTE,
    },
    // The default pages load a web font from the Internet; tests stay on loopback.
    renderError,
    clientBasedCORS: () => false,
  });

  const serverErrors: Error[] = [];
  provider.on('server_error', (_ctx, err) => void serverErrors.push(err as Error));

  let rewrite: { fn: (claims: Record<string, unknown>) => Record<string, unknown>; foreignKey: boolean } | undefined;
  const tokenAuthMethods: string[] = [];
  provider.use(async (ctx, next) => {
    await next();
    if (ctx.path !== '/token') return;
    tokenAuthMethods.push(/^basic /i.test(ctx.get('authorization')) ? 'client_secret_basic' : ctx.oidc?.params?.client_secret ? 'client_secret_post' : 'none');
    if (!rewrite || ctx.status !== 200) return;
    const body = ctx.body as Record<string, unknown> | null;
    if (!body || typeof body.id_token !== 'string') return;
    body.id_token = await resign(body.id_token, rewrite.fn, rewrite.foreignKey);
  });

  async function resign(jwt: string, fn: (claims: Record<string, unknown>) => Record<string, unknown>, foreignKey: boolean): Promise<string> {
    const [h, p] = jwt.split('.');
    const header = JSON.parse(Buffer.from(h!, 'base64url').toString('utf8')) as { alg: 'RS256' | 'ES256'; kid?: string };
    const claims = fn(JSON.parse(Buffer.from(p!, 'base64url').toString('utf8')) as Record<string, unknown>);
    const jwk = foreignKey ? await privateJwk(header.alg, header.kid ?? 'foreign') : keys[header.alg];
    const key = await importJWK(jwk, header.alg);
    return new CompactSign(Buffer.from(JSON.stringify(claims), 'utf8')).setProtectedHeader(header).sign(key);
  }

  const callback = provider.callback();
  handler = (req, res) => {
    const url = new URL(req.url ?? '/', issuer);
    const m = /^\/interaction\/([^/]+)(\/login)?$/.exec(url.pathname);
    if (!m) return callback(req, res);
    const route = m[2] ? (req.method === 'POST' ? submitLogin : undefined) : req.method === 'GET' ? showInteraction : undefined;
    if (!route) {
      res.writeHead(405, { 'content-type': 'text/plain' }).end('Method Not Allowed\n');
      return;
    }
    route(req, res).catch((err: unknown) => {
      const message = err instanceof Error ? err.message : String(err);
      if (!res.headersSent) res.writeHead(400, { 'content-type': 'text/html; charset=utf-8' });
      res.end(page('Sign-in error', `<h1>Sign-in error</h1><p>${esc(message)}</p>`));
    });
  };

  /** GET /interaction/:uid — the login form, or consent given at once. */
  async function showInteraction(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const details = await provider.interactionDetails(req, res);
    if (details.prompt.name === 'login') {
      sendLogin(res, details, 200);
      return;
    }
    if (details.prompt.name === 'consent') {
      const accountId = details.session?.accountId;
      if (!accountId) throw new Error('consent without a signed-in account');
      const grantId = await grantFor(details, accountId, details.grantId);
      await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
      return;
    }
    throw new Error(`unexpected interaction prompt ${details.prompt.name}`);
  }

  /** POST /interaction/:uid/login — sign in as the account named, consenting at the same time. */
  async function submitLogin(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const form = new URLSearchParams(await readBody(req));
    const details = await provider.interactionDetails(req, res);
    if (details.prompt.name !== 'login') throw new Error(`this interaction is at the ${details.prompt.name} step`);
    if (form.get('action') === 'cancel') {
      await provider.interactionFinished(req, res, { error: 'access_denied', error_description: 'the user cancelled the sign-in' }, { mergeWithLastSubmission: false });
      return;
    }
    const accountId = (form.get('account') ?? '').trim();
    if (!accounts.has(accountId)) {
      sendLogin(res, details, 400, accountId ? `There is no account “${accountId}”.` : 'Enter an account.');
      return;
    }
    const grantId = await grantFor(details, accountId, undefined);
    await provider.interactionFinished(req, res, { login: { accountId }, consent: { grantId } }, { mergeWithLastSubmission: false });
  }

  /** A grant of the requested openid/profile/email scopes (added to `existing` when given). */
  async function grantFor(details: InteractionDetails, accountId: string, existing: string | undefined): Promise<string> {
    const clientId = String(details.params.client_id);
    const grant = (existing ? await provider.Grant.find(existing) : undefined) ?? new provider.Grant({ accountId, clientId });
    const requested = String(details.params.scope ?? '').split(' ').filter((s) => s in CLAIMS);
    grant.addOIDCScope(requested.join(' '));
    const d = details.prompt.details;
    if (Array.isArray(d.missingOIDCScope)) grant.addOIDCScope((d.missingOIDCScope as string[]).filter((s) => s in CLAIMS).join(' '));
    if (Array.isArray(d.missingOIDCClaims)) grant.addOIDCClaims(d.missingOIDCClaims as string[]);
    return grant.save();
  }

  function sendLogin(res: ServerResponse, details: InteractionDetails, status: number, error?: string): void {
    const list = [...accounts.values()].map((a) => `<li><code>${esc(a.sub)}</code> ${esc(a.name ?? '')} ${esc(a.email ?? '')}</li>`).join('');
    const body =
      `<h1>Sign in to the test provider</h1>\n<p>Client: <code>${esc(String(details.params.client_id))}</code></p>\n` +
      (error ? `<p class="error" role="alert">${esc(error)}</p>\n` : '') +
      `<form method="post" action="/interaction/${esc(details.uid)}/login">\n` +
      `<label>Account <input name="account" autocomplete="username" autofocus></label>\n` +
      `<button type="submit" name="action" value="login">Sign in</button>\n` +
      `<button type="submit" name="action" value="cancel">Cancel</button>\n</form>\n<ul>${list}</ul>`;
    res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(page('Sign in', body));
  }

  // ---- the HTTP login helper ----

  async function login(authorizationUrl: string | URL, opts: LoginOptions = {}): Promise<URL> {
    const jar = opts.cookies ?? new ProviderCookies();
    const origin = new URL(issuer).origin;
    let url = new URL(authorizationUrl);
    let init: { method: string; body?: string } = { method: 'GET' };
    for (let hop = 0; hop < 20; hop++) {
      if (url.origin !== origin) throw new Error(`login: ${url.href} is not at the provider ${issuer}`);
      const headers: Record<string, string> = { accept: 'text/html' };
      const cookie = jar.header(url);
      if (cookie) headers.cookie = cookie;
      if (init.body !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded';
      const res = await fetch(url, { ...init, headers, redirect: 'manual', signal: AbortSignal.timeout(30_000) });
      jar.store(url, res.headers.getSetCookie());
      const text = await res.text();
      if (res.status >= 300 && res.status < 400) {
        const next = new URL(res.headers.get('location') ?? '', url);
        if (next.origin !== origin) return next;
        url = next;
        init = { method: 'GET' };
        continue;
      }
      const action = res.status === 200 ? /<form method="post" action="([^"]+)"/.exec(text) : null;
      if (!action) throw new Error(`login: the provider answered ${res.status} at ${url.pathname}: ${textOf(text).slice(0, 300)}`);
      url = new URL(unesc(action[1]!), url);
      init = { method: 'POST', body: new URLSearchParams(opts.cancel ? { action: 'cancel' } : { account: opts.account ?? 'ann', action: 'login' }).toString() };
    }
    throw new Error('login: too many redirects at the provider');
  }

  // ---- up and down ----

  async function down(how: DownMode = 'refuse'): Promise<void> {
    if (mode !== 'up') await up();
    if (how === 'refuse') {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sockets) s.destroy();
      await closed;
    }
    mode = how;
  }

  async function up(): Promise<void> {
    const was = mode;
    mode = 'up';
    for (const res of held) res.destroy();
    if (was === 'refuse') {
      server = makeServer();
      await listen(server, port);
    }
  }

  return {
    issuer,
    port,
    clientId: main.clientId,
    clientSecret: main.clientSecret,
    async setRedirectUris(uris, clientId = main.clientId) {
      for (const u of uris) if (!/^https?:\/\//.test(u) || u.includes('#')) throw new Error(`not a redirect URI: ${u}`);
      const client = await provider.Client.find(clientId);
      if (!client) throw new Error(`no client ${clientId}`);
      // Static clients are built once from the configuration; their redirect URIs are a property.
      client.redirectUris = [...uris];
    },
    users: {
      add: (a) => void accounts.set(a.sub, { ...a }),
      get: (sub) => accounts.get(sub),
      remove: (sub) => void accounts.delete(sub),
    },
    login,
    down,
    up,
    hits,
    rewriteIdTokens(fn, o = {}) {
      rewrite = fn ? { fn, foreignKey: o.foreignKey ?? false } : undefined;
    },
    tokenAuthMethods,
    serverErrors,
    async stop() {
      for (const res of held) res.destroy();
      if (mode === 'refuse') return;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sockets) s.destroy();
      await closed;
      mode = 'refuse';
    },
  };
}

/**
 * The provider's cookies for `login()`: name, value and path as the provider set them, sent back
 * to the paths they belong to; cleared cookies are dropped.
 */
export class ProviderCookies {
  private readonly cookies = new Map<string, { name: string; value: string; path: string; expires: number }>();

  store(url: URL, setCookies: string[]): void {
    for (const line of setCookies) {
      const [pair, ...attrs] = line.split(';');
      const eq = pair!.indexOf('=');
      if (eq < 1) continue;
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      let path = url.pathname.replace(/\/[^/]*$/, '') || '/';
      let expires = Infinity;
      for (const attr of attrs) {
        const [k, v = ''] = attr.split('=').map((s) => s.trim());
        const key = k!.toLowerCase();
        if (key === 'path' && v.startsWith('/')) path = v;
        else if (key === 'max-age') expires = Date.now() + Number(v) * 1000;
        else if (key === 'expires' && expires === Infinity) expires = Date.parse(v);
      }
      const id = `${name}\n${path}`;
      if (value === '' || expires <= Date.now()) this.cookies.delete(id);
      else this.cookies.set(id, { name, value, path, expires });
    }
  }

  header(url: URL): string {
    const now = Date.now();
    const out: string[] = [];
    for (const c of this.cookies.values()) {
      if (c.expires <= now) continue;
      if (c.path === '/' || url.pathname === c.path || url.pathname.startsWith(c.path.endsWith('/') ? c.path : c.path + '/')) out.push(`${c.name}=${c.value}`);
    }
    return out.join('; ');
  }
}

// ---- helpers ----

function endpointOf(path: string): Endpoint {
  const p = path.split('?')[0]!;
  if (p === '/.well-known/openid-configuration') return 'discovery';
  if (p === '/jwks') return 'jwks';
  if (p === '/auth' || p.startsWith('/auth/')) return 'authorization';
  if (p === '/token') return 'token';
  if (p === '/me') return 'userinfo';
  if (p.startsWith('/interaction/')) return 'interaction';
  return 'other';
}

async function privateJwk(alg: 'RS256' | 'ES256', kid: string): Promise<JWK> {
  const { privateKey } = await generateKeyPair(alg, { extractable: true });
  return { ...(await exportJWK(privateKey)), kid, alg, use: 'sig' };
}

function listen(server: Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve((server.address() as { port: number }).port);
    });
  });
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > 16_384) throw new Error('form too large');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function unesc(s: string): string {
  return s.replace(/&#(\d+);/g, (_m, n: string) => String.fromCharCode(Number(n))).replace(/&amp;/g, '&');
}

function textOf(html: string): string {
  return unesc(html.replace(/<[^>]*>/g, ' ')).replace(/\s+/g, ' ').trim();
}

function page(title: string, body: string): string {
  return `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title></head>\n<body>\n${body}\n</body></html>\n`;
}

async function renderError(ctx: { type: string; body: unknown }, out: Record<string, string>): Promise<void> {
  ctx.type = 'html';
  ctx.body = page('Error', `<h1>Error</h1>\n${Object.entries(out).map(([k, v]) => `<p><strong>${esc(k)}</strong>: ${esc(String(v))}</p>`).join('\n')}`);
}

async function logoutSource(ctx: { body: unknown }, form: string): Promise<void> {
  ctx.body = page('Sign out', `<h1>Sign out of the test provider?</h1>\n${form}\n<button type="submit" form="op.logoutForm" value="yes" name="logout">Sign out</button>`);
}

async function postLogoutSuccessSource(ctx: { body: unknown }): Promise<void> {
  ctx.body = page('Signed out', '<h1>Signed out</h1>');
}
