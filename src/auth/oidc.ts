/**
 * Sign-in with an OpenID Connect provider (Google, or any issuer), through openid-client: the
 * authorization code flow with PKCE (S256), `state` and `nonce`; the issuer's metadata found by
 * discovery; the ID token's signature (keys from the issuer's JWKS), issuer, audience, expiry and
 * nonce checked; the profile read from the ID token, or from userinfo when the ID token lacks it.
 *
 * Pure functions over fetch: nothing here knows Laneway's HTTP layer. `start()` gives the URL to
 * send the visitor to and the checks to keep in their session; `finish()` takes the URL the
 * provider sent them back to, with those checks, and answers who signed in — or throws an
 * `AuthError` (see ./errors.ts).
 */
import { createRequire } from 'node:module';
import type * as Oidc from 'openid-client';
import { AuthError, callbackUrl, networkFailure, oauthErrorCode, pictureUrl, providerUrl, PROVIDER_TIMEOUT_MS, type AuthProfile, type SignInChecks, type SignInClient, type SignInStep } from './errors.js';

export { AuthError, type AuthErrorCode, type AuthProfile, type SignInChecks, type SignInClient, type SignInStep } from './errors.js';

// openid-client (with jose and oauth4webapi) is loaded when the first sign-in client is made: apps
// without users never load it (an ES module, loaded by require as Node 20.19 allows).
let loadedOidc: typeof Oidc | undefined;
const oidc = (): typeof Oidc => (loadedOidc ??= createRequire(import.meta.url)('openid-client') as typeof Oidc);

export type TokenEndpointAuth = 'client_secret_basic' | 'client_secret_post';

export interface OidcClientOptions {
  /** The issuer identifier: https, or http on a loopback host only. */
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The callback URL registered at the provider (absolute, no query or fragment). */
  redirectUri: string;
  /** Default `openid profile email`; `openid` is always asked for. */
  scopes?: string[];
  /**
   * How the client authenticates at the token endpoint. By default: `client_secret_basic` when
   * the issuer supports it (or does not say), else `client_secret_post`.
   */
  tokenEndpointAuth?: TokenEndpointAuth;
  /** The time allowed for each request to the provider; default 10 s. */
  timeoutMs?: number;
}

export interface OidcClient extends SignInClient {
  /** The issuer identifier as configured. */
  readonly issuer: string;
  start(): Promise<{ url: string; checks: { state: string; nonce: string; codeVerifier: string } }>;
}

/** Google's issuer: Google is an OpenID Connect provider like any other. */
export const GOOGLE_ISSUER = 'https://accounts.google.com';

/** Sign-in with Google: `createOidcClient` with Google's issuer. */
export function createGoogleClient(options: Omit<OidcClientOptions, 'issuer'>): OidcClient {
  return createOidcClient({ ...options, issuer: GOOGLE_ISSUER });
}

/**
 * A client for one issuer. Checks the settings at once (throws `LW_AUTH_PROVIDER_CONFIG`);
 * contacts the issuer only at the first `start()` or `finish()`: discovery is done once and kept,
 * and tried again at the next call after a failure.
 */
export function createOidcClient(options: OidcClientOptions): OidcClient {
  const { url: issuer, insecure } = providerUrl(options.issuer, 'issuer');
  if (typeof options.clientId !== 'string' || options.clientId === '') throw new AuthError('LW_AUTH_PROVIDER_CONFIG', 'The client id is missing.');
  if (typeof options.clientSecret !== 'string' || options.clientSecret === '') throw new AuthError('LW_AUTH_PROVIDER_CONFIG', 'The client secret is missing.');
  const redirectUri = callbackUrl(options.redirectUri);
  const scopes = ['openid', ...(options.scopes ?? ['profile', 'email']).filter((s) => s !== 'openid')];
  for (const s of scopes) if (!/^[\x21\x23-\x5b\x5d-\x7e]+$/.test(s)) throw new AuthError('LW_AUTH_PROVIDER_CONFIG', 'A scope contains a character a scope cannot hold.');
  const scope = scopes.join(' ');
  const timeoutMs = options.timeoutMs ?? PROVIDER_TIMEOUT_MS;
  const secret = options.clientSecret;

  const basic = oidc().ClientSecretBasic(secret);
  const post = oidc().ClientSecretPost(secret);
  const clientAuth: Oidc.ClientAuth = (as, client, body, headers) => {
    const method = options.tokenEndpointAuth ?? defaultAuthMethod(as.token_endpoint_auth_methods_supported);
    (method === 'client_secret_post' ? post : basic)(as, client, body, headers);
  };

  let discovered: Promise<Oidc.Configuration> | undefined;
  function configuration(): Promise<Oidc.Configuration> {
    discovered ??= oidc()
      .discovery(issuer, options.clientId, { client_secret: secret }, clientAuth, {
        [oidc().customFetch]: providerFetch,
        timeout: timeoutMs / 1000,
        execute: insecure ? [oidc().allowInsecureRequests, oidc().enableNonRepudiationChecks] : [oidc().enableNonRepudiationChecks],
      })
      .catch((err: unknown) => {
        discovered = undefined;
        throw classify(err, 'discovery');
      });
    return discovered;
  }

  return {
    issuer: options.issuer,

    async start() {
      const config = await configuration();
      const codeVerifier = oidc().randomPKCECodeVerifier();
      const state = oidc().randomState();
      const nonce = oidc().randomNonce();
      const url = oidc().buildAuthorizationUrl(config, {
        redirect_uri: redirectUri.href,
        scope,
        response_type: 'code',
        code_challenge: await oidc().calculatePKCECodeChallenge(codeVerifier),
        code_challenge_method: 'S256',
        state,
        nonce,
      });
      return { url: url.href, checks: { state, nonce, codeVerifier } };
    },

    async finish(callback: URL, checks: SignInChecks): Promise<AuthProfile> {
      if (!checks || !nonEmpty(checks.state) || !nonEmpty(checks.nonce) || !nonEmpty(checks.codeVerifier)) {
        throw new AuthError('LW_AUTH_BAD_CALLBACK', 'This sign-in has expired or was started elsewhere; please try again.', 'no sign-in under way in this session');
      }
      const config = await configuration();
      // Only the query of the URL the visitor came back to is read: the redirect URI sent to the
      // token endpoint is the configured one, whatever host or scheme the request arrived with.
      const current = new URL(redirectUri);
      current.search = callback.search;
      let tokens: Awaited<ReturnType<typeof Oidc.authorizationCodeGrant>>;
      try {
        tokens = await oidc().authorizationCodeGrant(config, current, {
          expectedState: checks.state,
          expectedNonce: checks.nonce,
          pkceCodeVerifier: checks.codeVerifier,
          idTokenExpected: true,
        });
      } catch (err) {
        throw classify(err, 'callback');
      }
      const idClaims = tokens.claims();
      if (!idClaims) throw new AuthError('LW_AUTH_BAD_CALLBACK', 'The provider did not confirm who signed in.', 'no ID token in the token response', 'token exchange');
      let claims: Record<string, unknown> = { ...idClaims };
      const wantsProfile = scopes.includes('profile') && (claims.name === undefined || claims.picture === undefined);
      const wantsEmail = scopes.includes('email') && claims.email === undefined;
      if ((wantsProfile || wantsEmail) && config.serverMetadata().userinfo_endpoint) {
        try {
          const info = await oidc().fetchUserInfo(config, tokens.access_token, idClaims.sub);
          claims = { ...info, ...claims };
        } catch (err) {
          throw classify(err, 'userinfo');
        }
      }
      return profileOf(idClaims.sub, claims);
    },
  };
}

/** The profile from OpenID Connect standard claims. */
function profileOf(subject: string, c: Record<string, unknown>): AuthProfile {
  const str = (v: unknown, max = 200) => (typeof v === 'string' && v.trim() !== '' ? v.trim().slice(0, max) : undefined);
  const joined = [str(c.given_name), str(c.family_name)].filter(Boolean).join(' ');
  const email = str(c.email, 320);
  return {
    subject,
    name: str(c.name) ?? (joined || undefined) ?? str(c.preferred_username) ?? null,
    email: email && email.includes('@') ? email : null,
    emailVerified: email !== undefined && (c.email_verified === true || c.email_verified === 'true'),
    picture: pictureUrl(c.picture),
  };
}

function defaultAuthMethod(supported: unknown): TokenEndpointAuth {
  if (!Array.isArray(supported) || supported.includes('client_secret_basic')) return 'client_secret_basic';
  return supported.includes('client_secret_post') ? 'client_secret_post' : 'client_secret_basic';
}

function nonEmpty(v: unknown): v is string {
  return typeof v === 'string' && v !== '';
}

// ---- talking to the provider ----

/** Marks a failure to reach the provider (or a 5xx/429 answer), whatever openid-client wraps it in. */
class Unreachable extends Error {
  constructor(readonly why: string) {
    super(`provider unreachable: ${why}`);
  }
}

const providerFetch: Oidc.CustomFetch = async (url, options) => {
  let response: Response;
  try {
    response = await fetch(url, options as RequestInit);
  } catch (err) {
    throw new Unreachable(networkFailure(err));
  }
  if (response.status >= 500 || response.status === 429) {
    await response.body?.cancel().catch(() => {});
    throw new Unreachable(`HTTP ${response.status} from ${new URL(url).pathname}`);
  }
  return response;
};

type Stage = 'discovery' | 'callback' | 'userinfo';

/** Turns whatever openid-client threw into an AuthError; never copies its `cause` (it may hold tokens or claims). */
function classify(err: unknown, stage: Stage): AuthError {
  if (err instanceof AuthError) return err;
  // The callback stage is the provider's answer (authorization), then the code for tokens and the ID token's checks.
  const step: SignInStep = stage === 'callback' ? (err instanceof oidc().AuthorizationResponseError ? 'authorization' : 'token exchange') : stage;
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 6; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof Unreachable) {
      return new AuthError('LW_AUTH_PROVIDER_DOWN', 'The sign-in provider is not answering; please try again later.', `${step}: ${e.why}`, step);
    }
  }
  if (err instanceof oidc().AuthorizationResponseError) {
    const code = oauthErrorCode(err.error) ?? 'error';
    return new AuthError('LW_AUTH_BAD_CALLBACK', code === 'access_denied' ? 'The sign-in was cancelled or refused at the provider.' : `The provider did not sign you in (${code}).`, `authorization response: error=${code}`, step);
  }
  if (err instanceof oidc().ResponseBodyError) {
    const code = oauthErrorCode(err.error) ?? 'error';
    const detail = `${stage === 'userinfo' ? 'userinfo' : 'token endpoint'}: ${code} (HTTP ${err.status})`;
    if (code === 'invalid_client' || code === 'unauthorized_client') {
      return new AuthError('LW_AUTH_PROVIDER_CONFIG', 'The sign-in provider refused this server’s client id or secret.', detail, step);
    }
    return new AuthError('LW_AUTH_BAD_CALLBACK', 'The sign-in could not be completed; please try again.', detail, step);
  }
  if (err instanceof oidc().WWWAuthenticateChallengeError) {
    const code = oauthErrorCode(err.cause[0]?.parameters.error) ?? 'challenge';
    const detail = `${stage === 'userinfo' ? 'userinfo' : 'token endpoint'}: ${code} (HTTP ${err.status})`;
    if (stage !== 'userinfo' && code === 'invalid_client') return new AuthError('LW_AUTH_PROVIDER_CONFIG', 'The sign-in provider refused this server’s client id or secret.', detail, step);
    return new AuthError('LW_AUTH_BAD_CALLBACK', 'The sign-in could not be completed; please try again.', detail, step);
  }
  const what = describeError(err);
  if (stage === 'discovery') {
    return new AuthError('LW_AUTH_PROVIDER_CONFIG', 'The sign-in provider’s settings could not be read; check its issuer URL.', `discovery: ${what}`, step);
  }
  return new AuthError('LW_AUTH_BAD_CALLBACK', 'The sign-in could not be completed; please try again.', `${stage}: ${what}`, step);
}

/**
 * `CODE: message (cause's message)` of an openid-client error. Only messages of Error objects are
 * used: openid-client and oauth4webapi keep values (claims, response bodies) in non-Error causes.
 */
function describeError(err: unknown): string {
  if (!(err instanceof Error)) return 'unknown error';
  const code = (err as { code?: unknown }).code;
  let text = `${typeof code === 'string' ? code : err.name}: ${err.message}`;
  const cause = (err as { cause?: unknown }).cause;
  if (cause instanceof Error && cause.message !== err.message) text += ` (${cause.message})`;
  return text.slice(0, 300);
}
