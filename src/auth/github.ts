/**
 * Sign-in with GitHub, which is plain OAuth 2, not OpenID Connect: the visitor is sent to
 * GitHub's authorize page with `state` and a PKCE challenge (S256); the code that comes back is
 * exchanged at the token endpoint (client id and secret in the form, `Accept: application/json`);
 * then the user is read from the REST API (`GET /user`) with their primary verified e-mail address
 * (`GET /user/emails`). The subject is GitHub's numeric user id, as a string (logins can change).
 *
 * The three base URLs can be changed (GitHub Enterprise Server, or a local stand-in in tests).
 */
import { timingSafeEqual } from 'node:crypto';
import { createRequire } from 'node:module';
import type * as Oidc from 'openid-client';
import { AuthError, callbackUrl, networkFailure, oauthErrorCode, pictureUrl, providerUrl, PROVIDER_TIMEOUT_MS, type AuthProfile, type SignInChecks, type SignInClient, type SignInStep } from './errors.js';

// openid-client's PKCE helpers, loaded with the first sign-in (an ES module, loaded by require as
// Node 20.19 allows): apps without users never load it.
let loadedOidc: typeof Oidc | undefined;
const pkce = (): typeof Oidc => (loadedOidc ??= createRequire(import.meta.url)('openid-client') as typeof Oidc);

export const GITHUB_AUTHORIZE_URL = 'https://github.com/login/oauth/authorize';
export const GITHUB_TOKEN_URL = 'https://github.com/login/oauth/access_token';
export const GITHUB_API_URL = 'https://api.github.com';

export interface GitHubClientOptions {
  clientId: string;
  clientSecret: string;
  /** The callback URL registered for the OAuth app (absolute, no query or fragment). */
  redirectUri: string;
  /** Default `read:user user:email`. */
  scopes?: string[];
  authorizeUrl?: string;
  tokenUrl?: string;
  /** The REST API's base URL (GitHub Enterprise Server: `https://HOST/api/v3`). */
  apiUrl?: string;
  /** The time allowed for each request to GitHub; default 10 s. */
  timeoutMs?: number;
}

export interface GitHubClient extends SignInClient {
  start(): Promise<{ url: string; checks: { state: string; codeVerifier: string } }>;
}

const USER_AGENT = 'Laneway';
/** The largest answer read from GitHub. */
const MAX_BODY = 1 << 20;

export function createGitHubClient(options: GitHubClientOptions): GitHubClient {
  if (typeof options.clientId !== 'string' || options.clientId === '') throw new AuthError('LW_AUTH_PROVIDER_CONFIG', 'The GitHub client id is missing.');
  if (typeof options.clientSecret !== 'string' || options.clientSecret === '') throw new AuthError('LW_AUTH_PROVIDER_CONFIG', 'The GitHub client secret is missing.');
  const redirectUri = callbackUrl(options.redirectUri).href;
  const authorizeUrl = providerUrl(options.authorizeUrl ?? GITHUB_AUTHORIZE_URL, 'GitHub authorize URL').url;
  const tokenUrl = providerUrl(options.tokenUrl ?? GITHUB_TOKEN_URL, 'GitHub token URL').url;
  const api = providerUrl(options.apiUrl ?? GITHUB_API_URL, 'GitHub API URL').url;
  const apiBase = api.href.endsWith('/') ? api.href : api.href + '/';
  const scope = (options.scopes ?? ['read:user', 'user:email']).join(' ');
  const timeoutMs = options.timeoutMs ?? PROVIDER_TIMEOUT_MS;

  /** One request to GitHub; network failures, timeouts, 5xx and 429 become LW_AUTH_PROVIDER_DOWN. */
  async function call(step: 'token' | 'user' | 'emails', url: URL | string, init: { method?: string; headers: Record<string, string>; body?: string }): Promise<{ status: number; json: unknown }> {
    const stage: SignInStep = step === 'token' ? 'token exchange' : 'userinfo';
    let response: Response;
    let text: string;
    try {
      response = await fetch(url, { ...init, redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) });
      text = await readText(response);
    } catch (err) {
      if (err instanceof AuthError) throw err.step ? err : new AuthError(err.code, err.message, err.detail, stage);
      throw new AuthError('LW_AUTH_PROVIDER_DOWN', 'GitHub is not answering; please try again later.', `${step}: ${networkFailure(err)}`, stage);
    }
    if (response.status >= 500 || response.status === 429) {
      throw new AuthError('LW_AUTH_PROVIDER_DOWN', 'GitHub is not answering; please try again later.', `${step}: HTTP ${response.status}`, stage);
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: response.status, json };
  }

  function apiHeaders(token: string): Record<string, string> {
    return {
      accept: 'application/vnd.github+json',
      authorization: `Bearer ${token}`,
      'x-github-api-version': '2022-11-28',
      'user-agent': USER_AGENT,
    };
  }

  return {
    async start() {
      const { calculatePKCECodeChallenge, randomPKCECodeVerifier, randomState } = pkce();
      const state = randomState();
      const codeVerifier = randomPKCECodeVerifier();
      const url = new URL(authorizeUrl);
      url.search = new URLSearchParams({
        client_id: options.clientId,
        redirect_uri: redirectUri,
        scope,
        state,
        code_challenge: await calculatePKCECodeChallenge(codeVerifier),
        code_challenge_method: 'S256',
      }).toString();
      return { url: url.href, checks: { state, codeVerifier } };
    },

    async finish(callback: URL, checks: SignInChecks): Promise<AuthProfile> {
      if (!checks || typeof checks.state !== 'string' || checks.state === '' || typeof checks.codeVerifier !== 'string' || checks.codeVerifier === '') {
        throw new AuthError('LW_AUTH_BAD_CALLBACK', 'This sign-in has expired or was started elsewhere; please try again.', 'no sign-in under way in this session');
      }
      const params = callback.searchParams;
      const error = params.get('error');
      if (error !== null) {
        const code = oauthErrorCode(error) ?? 'error';
        if (code === 'redirect_uri_mismatch' || code === 'application_suspended') {
          throw new AuthError('LW_AUTH_PROVIDER_CONFIG', 'Sign-in with GitHub is not set up correctly on this server.', `authorization response: error=${code}`, 'authorization');
        }
        throw new AuthError('LW_AUTH_BAD_CALLBACK', code === 'access_denied' ? 'The sign-in was cancelled or refused at GitHub.' : `GitHub did not sign you in (${code}).`, `authorization response: error=${code}`, 'authorization');
      }
      if (!sameString(params.get('state'), checks.state)) {
        throw new AuthError('LW_AUTH_BAD_CALLBACK', 'The sign-in could not be completed; please try again.', 'authorization response: state does not match', 'authorization');
      }
      const code = params.get('code');
      if (!code) throw new AuthError('LW_AUTH_BAD_CALLBACK', 'The sign-in could not be completed; please try again.', 'authorization response: no code', 'authorization');

      // The code for a token.
      const tokenAnswer = await call('token', tokenUrl, {
        method: 'POST',
        headers: { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded', 'user-agent': USER_AGENT },
        body: new URLSearchParams({ client_id: options.clientId, client_secret: options.clientSecret, code, redirect_uri: redirectUri, code_verifier: checks.codeVerifier }).toString(),
      });
      const t = (isObject(tokenAnswer.json) ? tokenAnswer.json : {}) as Record<string, unknown>;
      if (t.error !== undefined || tokenAnswer.status !== 200) {
        const reason = oauthErrorCode(t.error) ?? 'no error code';
        const detail = `token: ${reason} (HTTP ${tokenAnswer.status})`;
        if (reason === 'incorrect_client_credentials' || reason === 'redirect_uri_mismatch' || reason === 'invalid_client' || reason === 'unauthorized_client') {
          throw new AuthError('LW_AUTH_PROVIDER_CONFIG', 'GitHub refused this server’s client id or secret.', detail, 'token exchange');
        }
        throw new AuthError('LW_AUTH_BAD_CALLBACK', 'The sign-in could not be completed; please try again.', detail, 'token exchange');
      }
      const token = t.access_token;
      if (typeof token !== 'string' || token === '' || (typeof t.token_type === 'string' && t.token_type.toLowerCase() !== 'bearer')) {
        throw new AuthError('LW_AUTH_BAD_CALLBACK', 'The sign-in could not be completed; please try again.', 'token: no bearer access token in the answer', 'token exchange');
      }

      // The user.
      const userAnswer = await call('user', new URL('user', apiBase), { headers: apiHeaders(token) });
      const user = userAnswer.json as Record<string, unknown> | undefined;
      if (userAnswer.status !== 200 || !isObject(user) || !Number.isSafeInteger(user.id) || (user.id as number) <= 0) {
        throw new AuthError('LW_AUTH_BAD_CALLBACK', 'GitHub did not say who signed in.', `user: HTTP ${userAnswer.status}${userAnswer.status === 200 ? ', no numeric id' : ''}`, 'userinfo');
      }

      // Their primary verified address (none if the token may not read addresses).
      const emailsAnswer = await call('emails', new URL('user/emails', apiBase), { headers: apiHeaders(token) });
      let email: string | null = null;
      if (emailsAnswer.status === 200 && Array.isArray(emailsAnswer.json)) {
        const primary = (emailsAnswer.json as unknown[]).find((e): e is Record<string, unknown> => isObject(e) && e.primary === true && e.verified === true);
        if (primary && typeof primary.email === 'string' && primary.email.includes('@') && primary.email.length <= 320) email = primary.email;
      }

      const text = (v: unknown) => (typeof v === 'string' && v.trim() !== '' ? v.trim().slice(0, 200) : null);
      return {
        subject: String(user.id),
        name: text(user.name) ?? text(user.login),
        email,
        emailVerified: email !== null,
        picture: pictureUrl(user.avatar_url),
      };
    },
  };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Compares the returned state with the expected one in constant time. */
function sameString(got: string | null, expected: string): boolean {
  if (got === null) return false;
  const a = Buffer.from(got, 'utf8');
  const b = Buffer.from(expected, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Reads an answer's body, refusing one over MAX_BODY. */
async function readText(response: Response): Promise<string> {
  if (!response.body) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.length;
    if (size > MAX_BODY) {
      throw new AuthError('LW_AUTH_BAD_CALLBACK', 'The sign-in could not be completed; please try again.', 'an answer from GitHub was too large');
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
