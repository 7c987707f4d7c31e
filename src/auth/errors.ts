/**
 * What the sign-in clients share (./oidc.ts, ./github.ts): the error they throw, the profile they
 * answer, and the checks of their settings.
 *
 * What a failed sign-in throws: an `AuthError` with one of three codes. Its message is short and
 * meant for people (it may be shown on an error page); `detail` says what failed technically, for
 * the server's log. Neither ever holds a client secret, a code, a token, or a claim of the user:
 * only fixed texts, HTTP statuses, OAuth error codes and the library's own error codes.
 */

export type AuthErrorCode =
  /** The provider could not be reached, timed out, or answered 5xx or 429 (discovery, keys, token, user data). */
  | 'LW_AUTH_PROVIDER_DOWN'
  /** The answer that came back to the callback is not acceptable: wrong state, `error=` from the provider, a code refused (replayed, expired, for another client), an ID token that fails its checks. */
  | 'LW_AUTH_BAD_CALLBACK'
  /** The server's settings for the provider are wrong: an http issuer that is not loopback, a discovery document for another issuer or missing, the client id or secret refused. */
  | 'LW_AUTH_PROVIDER_CONFIG';

/**
 * The step of a sign-in that talked to the provider: reading its settings (discovery), its answer
 * at the callback (authorization), the code exchanged for tokens and the ID token checked (token
 * exchange), the user's profile (userinfo).
 */
export type SignInStep = 'discovery' | 'authorization' | 'token exchange' | 'userinfo';

export class AuthError extends Error {
  readonly code: AuthErrorCode;
  /** A technical line for the log (safe to log: no secret, token, code or user data). */
  readonly detail: string | undefined;
  /** The step that failed, when the provider was involved (for the log). */
  readonly step: SignInStep | undefined;

  constructor(code: AuthErrorCode, message: string, detail?: string, step?: SignInStep) {
    super(message);
    this.name = 'AuthError';
    this.code = code;
    this.detail = detail;
    this.step = step;
  }
}

/** The same user, whichever provider signed them in. */
export interface AuthProfile {
  /** The provider's stable identifier of the user (OIDC `sub`; GitHub's numeric id as a string). */
  subject: string;
  name: string | null;
  email: string | null;
  /** True only when the provider says the address is verified. */
  emailVerified: boolean;
  /** An http(s) URL of the user's picture, or null. */
  picture: string | null;
}

/** What `start()` hands out and `finish()` needs back: keep it in the visitor's session, once. */
export interface SignInChecks {
  state: string;
  /** OpenID Connect only. */
  nonce?: string;
  codeVerifier: string;
}

/** A provider's sign-in, as the HTTP layer uses it. */
export interface SignInClient {
  /** The provider's authorization URL to redirect the visitor to, and the checks to keep. */
  start(): Promise<{ url: string; checks: SignInChecks }>;
  /** Completes the sign-in from the URL the provider redirected back to (only its query is read). */
  finish(callbackUrl: URL, checks: SignInChecks): Promise<AuthProfile>;
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

/**
 * Checks a provider URL from the server's settings: https, or http on a loopback host (a provider
 * on the same machine, as in tests). Answers the parsed URL and whether it is plain http.
 */
export function providerUrl(value: string, what: string): { url: URL; insecure: boolean } {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new AuthError('LW_AUTH_PROVIDER_CONFIG', `The ${what} is not a URL.`);
  }
  if (url.username || url.password || url.hash || url.search) {
    throw new AuthError('LW_AUTH_PROVIDER_CONFIG', `The ${what} must not carry credentials, a query or a fragment.`);
  }
  if (url.protocol === 'https:') return { url, insecure: false };
  if (url.protocol === 'http:') {
    if (LOOPBACK_HOSTS.has(url.hostname)) return { url, insecure: true };
    throw new AuthError('LW_AUTH_PROVIDER_CONFIG', `The ${what} ${url.origin} uses http: only https is allowed, except on this machine (127.0.0.1, ::1, localhost).`);
  }
  throw new AuthError('LW_AUTH_PROVIDER_CONFIG', `The ${what} must be an https URL.`);
}

/** A provider's error code as it may appear in a message: a short token, nothing else. */
export function oauthErrorCode(value: unknown): string | undefined {
  return typeof value === 'string' && /^[\x21-\x7e]{1,64}$/.test(value) && !/["\\]/.test(value) ? value : undefined;
}

/** A picture URL kept only if it is http(s). */
export function pictureUrl(value: unknown): string | null {
  if (typeof value !== 'string' || value.length > 2048) return null;
  try {
    const u = new URL(value);
    return u.protocol === 'https:' || u.protocol === 'http:' ? u.href : null;
  } catch {
    return null;
  }
}

/** The configured callback URL: absolute http(s), without query or fragment. */
export function callbackUrl(value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new AuthError('LW_AUTH_PROVIDER_CONFIG', 'The redirect URI is not an absolute URL.');
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.search || url.hash || url.username || url.password) {
    throw new AuthError('LW_AUTH_PROVIDER_CONFIG', 'The redirect URI must be an http(s) URL without query, fragment or credentials.');
  }
  return url;
}

/** Describes a fetch failure without its URL's query or anything the server sent. */
export function networkFailure(err: unknown): string {
  if (err instanceof Error) {
    if (err.name === 'TimeoutError') return 'timed out';
    if (err.name === 'AbortError') return 'aborted';
    const cause = (err as { cause?: unknown }).cause;
    const code = cause && typeof cause === 'object' ? (cause as { code?: unknown }).code : undefined;
    if (typeof code === 'string' && /^[A-Z_]{2,40}$/.test(code)) return code;
    if (cause instanceof Error && cause.name === 'TimeoutError') return 'timed out';
  }
  return 'network error';
}

/** The default time allowed for one request to a provider. */
export const PROVIDER_TIMEOUT_MS = 10_000;
