/**
 * Users of an app (docs/users.md, "Signing in"), wired to its store and its requests:
 *
 * - `POST /__/auth/provider/<name>?next=/page` starts a sign-in: the provider's client (src/auth/)
 *   makes the state, nonce and PKCE verifier, kept server-side for 10 minutes and bound to the
 *   visitor's session; the answer is a redirect to the provider.
 * - `GET /__/auth/handler` is where the provider sends the visitor back: the attempt is taken
 *   (once) by its state and must belong to this visitor's session; the code is exchanged and the
 *   ID token checked; the account (provider + subject, never merged by e-mail) is signed in under
 *   a new session id, and the visitor goes on to the page they asked for.
 * - `POST /__/auth/provider/logout` ends the sign-in and replaces the session id.
 * - `POST /__/auth/dev/<id>?next=/page` signs in as a test user, without a provider: only when the
 *   development sign-in is on (`laneway serve --dev` with `LANEWAY_AUTH_DEV_USERS`, which calls
 *   `enableDevSignIn`); otherwise nothing answers there but 404.
 *
 * Providers are named by the app (`providers:` in /👤.yaml) and configured by the server's
 * environment, never by the app: `LANEWAY_AUTH_<NAME>_CLIENT_ID`, `_SECRET`, and `_ISSUER` for a
 * generic OpenID Connect provider. A provider without its settings is left out of
 * `Providers.all` (logged once at start).
 */
import {
  AuthError,
  createGitHubClient,
  createGoogleClient,
  createOidcClient,
  providerEndpoints,
  DEV_PATH_PREFIX,
  DEV_PROVIDER,
  DEV_USERS_ENV,
  SIGNIN_TTL_MS,
  UserStore,
  type AuthConfig,
  type DevUser,
  type SignedInUser,
  type SignInClient,
  type SignInStep,
} from '../../auth/index.js';
import { Visitor, type VisitorContext, secureContext } from '../../session/index.js';
import type { IncomingHttpHeaders } from 'node:http';
import type { AuthMode } from '../../auth/index.js';
import { signInFirst, storeFailed, storeUnavailable } from '../endpoint/answers.js';
import { clientOf, type Endpoint, type Reply, type RequestInfo } from '../endpoint/endpoint.js';
import type { ClientInfo } from '../../shared/index.js';
import { parseCookies } from '../endpoint/request-data.js';

/** What the auth endpoints answer (the http layer sends it). */
export type AuthAnswer =
  | { status: 303; location: string; headers: Record<string, string | string[]> }
  /** A limit per visitor refused the start (429: `admit` answered it). */
  | { refused: Reply }
  | { status: number; error: string; code: string; headers?: Record<string, string | string[]>; failure?: SignInFailure };

/**
 * What the log says of a sign-in the provider's part of which failed: the provider, the step, and
 * the client's technical line (AuthError.detail: never a secret, token, code or user data).
 */
export interface SignInFailure {
  provider: string;
  step: SignInStep;
  detail: string | undefined;
}

/**
 * What a nested site takes of the users of the site it is mounted in (docs/users.md "Nested
 * sites"): the parent's mode at the mount point, and the sign-in of the nearest site above with
 * users — its store, and its sign-in page as the browser asks for it (`/auth/`, `/app/auth/`) —
 * which gates a nested site without users of its own mounted in an `auth: required` area.
 */
export interface InheritedAuth {
  mode: AuthMode;
  signIn?: { data: GateData; page: string };
}

/**
 * What the auth gate reads of an app's data (AppData, data.ts) on each request: both are set
 * once the store is open.
 */
export interface GateData {
  readonly auth: AuthService | undefined;
  readonly visitors: VisitorContext | undefined;
}

/** A provider as `Providers.all` shows it. */
export interface ProviderView {
  name: string;
  type: string;
  brand: string;
  authPath: string;
}

interface ConfiguredProvider {
  name: string;
  kind: 'google' | 'github' | 'oidc';
  label: string;
  /** Origins the browser is sent to (a page's form-action with data-form-action-auth). */
  origins: string[];
  client: (redirectUri: string) => SignInClient;
}

const SIGNIN_DAYS = SIGNIN_TTL_MS / 86_400_000;
const START_PATH = /^\/__\/auth\/provider\/([a-z][a-z0-9_]{0,31})$/;
const LABELS: Record<string, string> = { google: 'Google', github: 'GitHub' };

/** `next`: a path of this site (not `//host`, not `/\host`), else `/`. */
export function safeNext(value: string | null | undefined): string {
  if (!value || value.length > 2000 || !value.startsWith('/') || value.startsWith('//') || value.includes('\\') || /[\u0000-\u001f]/.test(value)) return '/';
  return value;
}

/** The origins the providers of `config` send browsers to, as the environment configures them. */
export function providerOrigins(config: AuthConfig, env: NodeJS.ProcessEnv): string[] {
  const out = new Set<string>();
  for (const p of config.providers) {
    const key = `LANEWAY_AUTH_${p.name.toUpperCase()}`;
    if (!env[`${key}_CLIENT_ID`] || !env[`${key}_SECRET`]) continue; // left out of Providers.all
    try {
      for (const origin of providerEndpoints(p.kind, p.name, env)?.origins ?? []) out.add(origin);
    } catch {
      // A bad address is reported when the store opens (AuthService).
    }
  }
  return [...out];
}

export class AuthService {
  readonly config: AuthConfig;
  readonly users: UserStore;
  readonly #visitors: VisitorContext;
  readonly #providers = new Map<string, ConfiguredProvider>();
  /** Clients by provider and callback URL (the callback follows the Host the visitor used). */
  readonly #clients = new Map<string, SignInClient>();
  /** The test users of the development sign-in, by id; undefined unless `enableDevSignIn` was called. */
  #devUsers: ReadonlyMap<string, DevUser> | undefined;
  /** Where the site is served: `` at the root, `/app` for a nested site (its callback is `/app/__/auth/handler`). */
  readonly #mount: string;

  constructor(config: AuthConfig, users: UserStore, visitors: VisitorContext, env: NodeJS.ProcessEnv, log: (message: string, fields: Record<string, unknown>) => void, mount = '') {
    this.config = config;
    this.users = users;
    this.#visitors = visitors;
    this.#mount = mount;
    for (const p of config.providers) {
      const key = `LANEWAY_AUTH_${p.name.toUpperCase()}`;
      const clientId = env[`${key}_CLIENT_ID`];
      const clientSecret = env[`${key}_SECRET`];
      const issuer = env[`${key}_ISSUER`];
      if (!clientId || !clientSecret || (p.kind === 'oidc' && !issuer)) {
        const missing = [!clientId && `${key}_CLIENT_ID`, !clientSecret && `${key}_SECRET`, p.kind === 'oidc' && !issuer && `${key}_ISSUER`].filter(Boolean).join(', ');
        log(`the sign-in provider ${p.name} is not configured (${missing} missing): it is left out of Providers.all`, { code: 'LW_AUTH_PROVIDER_CONFIG' });
        continue;
      }
      const label = env[`${key}_NAME`] || LABELS[p.name] || p.name.charAt(0).toUpperCase() + p.name.slice(1);
      let origins: string[];
      let make: (redirectUri: string) => SignInClient;
      try {
        // google and github at their public addresses, or where the environment points them (src/auth/endpoints.ts).
        const at = providerEndpoints(p.kind, p.name, env)!;
        origins = at.origins;
        make = at.github
          ? (redirectUri: string) => createGitHubClient({ clientId, clientSecret, redirectUri, ...at.github })
          : p.kind === 'google' && !env[`${key}_ISSUER`]
            ? (redirectUri: string) => createGoogleClient({ clientId, clientSecret, redirectUri })
            : (redirectUri: string) => createOidcClient({ issuer: at.issuer!, clientId, clientSecret, redirectUri });
        make('http://127.0.0.1/__/auth/handler'); // checks the settings now (an http issuer off loopback…)
      } catch (e) {
        log(`the sign-in provider ${p.name} is misconfigured: ${(e as Error).message}`, { code: 'LW_AUTH_PROVIDER_CONFIG' });
        continue;
      }
      this.#providers.set(p.name, { name: p.name, kind: p.kind, label, origins, client: make });
    }
  }

  /**
   * Turns the development sign-in on (docs/users.md "Development sign-in"): the test users appear
   * in `Providers.all` after the providers, and `POST /__/auth/dev/<id>` signs in as one. Only
   * `laneway serve --dev` calls this. Throws when the app names a provider `dev`: the test users'
   * accounts would be mixed with that provider's.
   */
  enableDevSignIn(users: readonly DevUser[]): void {
    if (this.config.providers.some((p) => p.name === DEV_PROVIDER)) {
      throw new Error(
        `the app's /👤.yaml names a provider "${DEV_PROVIDER}", and the development sign-in keeps its test users' accounts under that name: rename the provider in providers: (and its LANEWAY_AUTH_${DEV_PROVIDER.toUpperCase()}_* settings), or unset ${DEV_USERS_ENV}`,
      );
    }
    this.#devUsers = new Map(users.map((u) => [u.id, u]));
  }

  /** The origins a sign-in form may lead to (CSP form-action with data-form-action-auth). */
  formActionOrigins(): string[] {
    return [...new Set([...this.#providers.values()].flatMap((p) => p.origins))];
  }

  /** `Providers.all` for a page; `next` is the page to come back to (`?next=` of the page). */
  providers(next: string | null): ProviderView[] {
    const q = next === null || safeNext(next) === '/' ? '' : `?next=${encodeURIComponent(safeNext(next))}`;
    const all: ProviderView[] = [...this.#providers.values()].map((p) => Object.freeze({ name: p.label, type: p.name, brand: p.kind === 'oidc' ? p.name : p.kind, authPath: `/__/auth/provider/${p.name}${q}` }));
    // The test users of the development sign-in, one entry each, so that the app's sign-in page lists them unchanged.
    for (const u of this.#devUsers?.values() ?? []) {
      all.push(Object.freeze({ name: `${u.name} (test user)`, type: DEV_PROVIDER, brand: DEV_PROVIDER, authPath: `${DEV_PATH_PREFIX}${encodeURIComponent(u.id)}${q}` }));
    }
    return all;
  }

  /** The signed-in user of a request (undefined for a visitor), from its `sid` cookie: one indexed read. */
  userOf(sid: string | undefined): SignedInUser | undefined | Promise<SignedInUser | undefined> {
    return sid === undefined ? undefined : this.users.userOf(sid);
  }

  /**
   * The answer to `/__/auth/…`. `admit`: the limit of sign-in starts (docs/security.md "Limits per
   * visitor"), asked before a start makes anything; its answer refuses the start.
   */
  async answer(method: string, path: string, query: URLSearchParams, headers: IncomingHttpHeaders, client: ClientInfo = clientOf({ headers }), admit?: () => Reply | undefined | Promise<Reply | undefined>): Promise<AuthAnswer> {
    const visitor = new Visitor(this.#visitors, parseCookies(headers.cookie).get('sid'), secureContext(client));
    if (path === '/__/auth/handler') {
      if (method !== 'GET' && method !== 'HEAD') return { status: 405, code: 'LW_HTTP_METHOD', error: 'The sign-in callback takes GET only.', headers: { Allow: 'GET' } };
      return this.#finish(query, client, visitor);
    }
    if (path === '/__/auth/provider/logout') {
      if (method !== 'POST') return { status: 405, code: 'LW_HTTP_METHOD', error: 'Sign out with a POST.', headers: { Allow: 'POST' } };
      if (visitor.known) await this.users.signOut(visitor.known);
      return { status: 303, location: '/', headers: { 'Set-Cookie': visitor.replaceSession(), 'Cache-Control': 'no-store' } };
    }
    // Without the development sign-in its paths are like any unknown provider's: 404 below.
    if (this.#devUsers && path.startsWith(DEV_PATH_PREFIX)) return this.#devSignIn(method, path.slice(DEV_PATH_PREFIX.length), query, visitor);
    const start = START_PATH.exec(path);
    const provider = start ? this.#providers.get(start[1]!) : undefined;
    if (!provider) return { status: 404, code: 'LW_HTTP_NOT_FOUND', error: 'There is no such sign-in provider.' };
    if (method !== 'POST') return { status: 405, code: 'LW_HTTP_METHOD', error: 'Start a sign-in with a POST (a form on the sign-in page).', headers: { Allow: 'POST' } };
    const refused = await admit?.();
    if (refused) return { refused };
    try {
      const { url, checks } = await this.#client(provider, client).start();
      const sid = visitor.id();
      await this.users.startAttempt(checks.state, { sid, provider: provider.name, nonce: checks.nonce ?? null, verifier: checks.codeVerifier, next: safeNext(query.get('next')) });
      const cookies = visitor.setCookieHeaders();
      return { status: 303, location: url, headers: { 'Cache-Control': 'no-store', ...(cookies && { 'Set-Cookie': cookies }) } };
    } catch (e) {
      return this.#failed(e, provider.name);
    }
  }

  /**
   * `POST /__/auth/dev/<id>`: signs in as a test user as a provider's callback would — a new
   * session id (no fixation), the account `dev` + id through the same UserStore — and goes on to
   * `next`. Nothing is asked of the visitor: anyone who reaches a server in development mode may
   * sign in as any test user, which is why `laneway serve` refuses the test users without `--dev`.
   */
  async #devSignIn(method: string, segment: string, query: URLSearchParams, visitor: Visitor): Promise<AuthAnswer> {
    let id: string | undefined;
    try {
      id = decodeURIComponent(segment);
    } catch {
      // A malformed escape names no test user.
    }
    const user = id === undefined ? undefined : this.#devUsers?.get(id);
    if (!user) {
      const names = [...(this.#devUsers?.values() ?? [])].map((u) => u.name).join(', ');
      return { status: 404, code: 'LW_HTTP_NOT_FOUND', error: `There is no such test user. The test users are ${names} (${DEV_USERS_ENV}); sign in from the site's sign-in page.` };
    }
    if (method !== 'POST') return { status: 405, code: 'LW_HTTP_METHOD', error: 'Sign in as a test user with a POST (a form on the sign-in page).', headers: { Allow: 'POST' } };
    const cookie = visitor.replaceSession(SIGNIN_DAYS);
    await this.users.signIn(visitor.replacedBy!, { provider: DEV_PROVIDER, subject: user.id, name: user.name, email: user.email, picture: null }, visitor.known);
    return { status: 303, location: safeNext(query.get('next')), headers: { 'Set-Cookie': cookie, 'Cache-Control': 'no-store' } };
  }

  async #finish(query: URLSearchParams, client: ClientInfo, visitor: Visitor): Promise<AuthAnswer> {
    const state = query.get('state');
    const attempt = state ? await this.users.takeAttempt(state) : undefined;
    // The attempt must be this visitor's: a callback URL sent to someone else signs nobody in.
    if (!attempt || attempt.sid !== visitor.known) {
      return { status: 400, code: 'LW_AUTH_BAD_CALLBACK', error: 'This sign-in has expired, was used already, or was started in another browser. Sign in again.' };
    }
    const provider = this.#providers.get(attempt.provider);
    if (!provider) return { status: 400, code: 'LW_AUTH_BAD_CALLBACK', error: 'This sign-in provider is not available any more. Sign in again.' };
    try {
      const callback = new URL(`/__/auth/handler?${query.toString()}`, 'http://localhost');
      const profile = await this.#client(provider, client).finish(callback, { state: state!, codeVerifier: attempt.verifier, ...(attempt.nonce !== null && { nonce: attempt.nonce }) });
      const cookie = visitor.replaceSession(SIGNIN_DAYS);
      await this.users.signIn(visitor.replacedBy!, { provider: provider.name, subject: profile.subject, name: profile.name, email: profile.emailVerified ? profile.email : null, picture: profile.picture }, visitor.known);
      return { status: 303, location: attempt.next, headers: { 'Set-Cookie': cookie, 'Cache-Control': 'no-store' } };
    } catch (e) {
      return this.#failed(e, provider.name);
    }
  }

  #client(p: ConfiguredProvider, client: ClientInfo): SignInClient {
    const origin = `${client.proto}://${client.host || 'localhost'}`;
    const key = `${p.name} ${origin}`;
    let c = this.#clients.get(key);
    if (!c) {
      // A nested site's callback is under its mount: the parent does not answer for its sign-ins.
      c = p.client(`${origin}${this.#mount}/__/auth/handler`);
      this.#clients.set(key, c);
    }
    return c;
  }

  #failed(e: unknown, provider: string): AuthAnswer {
    if (e instanceof AuthError) {
      const status = e.code === 'LW_AUTH_PROVIDER_DOWN' ? 502 : e.code === 'LW_AUTH_PROVIDER_CONFIG' ? 500 : 400;
      return { status, code: e.code, error: e.message, ...(e.step && { failure: { provider, step: e.step, detail: e.detail } }) };
    }
    throw e;
  }
}

/**
 * For a nested site without users of its own, gated by the site it is mounted in (InheritedAuth):
 * that site's sign-in page as the browser asks for it (`/auth/`), and the nested site's mount
 * (`/app`), which `next` names the page with. Its redirect is final: the mount does not rewrite it.
 */
export interface SignInFrame {
  page: string;
  prefix: string;
}

/**
 * The sign-in gate of an endpoint (a step of the pipeline, pipeline.ts): the auth mode of its
 * directory. `required`: a visitor who is not signed in is sent to the site's `/auth/` page with
 * the page asked for as `?next=` (a JSON client, or a write, gets 401), and the answer is a
 * single-user page. In a nested site both are written for its mount
 * (`/app/auth/?next=%2Fapp%2Fpage`: mountSignInRedirect, called by mounts.ts); with `frame`, to
 * the sign-in page of the site above (SignInFrame). `required` and `optional`: the signed-in user
 * is read once here (one indexed read) for `Me`. Mode `none` has no gate.
 */
export interface SignInGate {
  required: boolean;
  data: GateData;
  frame?: SignInFrame;
}

/** The gate of an endpoint in an area of mode `mode`; undefined for `none` (users do not apply). */
export function signInGate(mode: AuthMode, data: GateData, frame?: SignInFrame): SignInGate | undefined {
  if (mode === 'none') return undefined;
  return { required: mode === 'required', data, ...(frame && { frame }) };
}

/**
 * Step 1 and 2 of the pipeline: sets `req.user` (and `req.signedInOnly`) and lets the request go
 * on (undefined), or answers (a redirect to the sign-in page, 401, 503).
 */
export function passSignIn(gate: SignInGate, req: RequestInfo): Reply | undefined | Promise<Reply | undefined> {
  const auth = gate.data.auth;
  const visitors = gate.data.visitors;
  if (!auth || !visitors) return storeUnavailable();
  const sid = visitors.signer.readSid(parseCookies(req.headers.cookie).get('sid'));
  try {
    const user = auth.userOf(sid);
    return user instanceof Promise ? user.then((u) => admit(gate, req, u), storeFailed) : admit(gate, req, user);
  } catch (e) {
    return storeFailed(e);
  }
}

function admit(gate: SignInGate, req: RequestInfo, user: SignedInUser | undefined): Reply | undefined {
  if (user) {
    req.user = user;
    req.signedInOnly = gate.required;
    return undefined;
  }
  if (!gate.required) {
    req.user = null;
    return undefined;
  }
  const frame = gate.frame;
  const asked = (frame?.prefix ?? '') + req.path;
  const page = (req.method === 'GET' || req.method === 'HEAD') && !req.acceptsJson && !asked.startsWith(frame?.page ?? '/auth/');
  if (!page) return signInFirst();
  const next = asked + (req.query ? `?${req.query}` : '');
  return frame ? signInAt(frame.page, next) : signInRedirect(next);
}

/**
 * The page asked for, by each redirect to the sign-in page the gate answered. A nested site's
 * answers are written for its mount (mounts.ts): there, `next` must be the page as the browser
 * asked for it too (`/app/page`, not `/page`), since the sign-in sends the visitor back to it as
 * it is. Kept beside the reply rather than parsed back out of its Location, so that only the gate's
 * own redirects are rewritten this way.
 */
const signInNexts = new WeakMap<Reply, string>();

/** `302` to the site's `/auth/` page with `next`, the page asked for (path and query). */
function signInRedirect(next: string): Reply {
  const reply = signInAt('/auth/', next);
  signInNexts.set(reply, next);
  return reply;
}

/** `302` to the sign-in page `page` with `next`. */
function signInAt(page: string, next: string): Reply {
  return { type: 'redirect', status: 302, location: `${page}?next=${encodeURIComponent(next)}`, headers: { 'Cache-Control': 'no-store' } };
}

/**
 * For a nested site mounted at `prefix` (`/app`): the gate's redirect to the sign-in page written
 * for the mount, `/app/auth/?next=%2Fapp%2Fpage`; undefined for any other reply (mountReply writes
 * those its own way).
 */
export function mountSignInRedirect(reply: Reply, prefix: string): Reply | undefined {
  const next = signInNexts.get(reply);
  if (next === undefined || reply.type !== 'redirect') return undefined;
  return { ...reply, location: `${prefix}/auth/?next=${encodeURIComponent(prefix + next)}` };
}
