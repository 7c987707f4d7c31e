/**
 * Where the sign-in providers named `google` and `github` are (docs/users.md "Providers"): the
 * public services by default, or, from the environment, a company's own — an OpenID Connect
 * issuer standing in for Google (`LANEWAY_AUTH_GOOGLE_ISSUER`, an issuer or the address of its
 * discovery document), a GitHub Enterprise Server (`LANEWAY_AUTH_GITHUB_URL=https://HOST`: the
 * sign-in pages at `https://HOST/login/oauth/…`, the API at `https://HOST/api/v3`, or
 * `LANEWAY_AUTH_GITHUB_API_URL`). Any other provider needs `LANEWAY_AUTH_<NAME>_ISSUER`.
 */
import { GITHUB_API_URL, GITHUB_AUTHORIZE_URL, GITHUB_TOKEN_URL } from './github.js';
import { GOOGLE_ISSUER } from './oidc.js';
import { providerUrl } from './errors.js';

export interface ProviderEndpoints {
  /** The OpenID Connect issuer (or its discovery document's address): Google and other OpenID providers. */
  issuer?: string;
  /** GitHub's three addresses. */
  github?: { authorizeUrl: string; tokenUrl: string; apiUrl: string };
  /** The origins a browser is sent to for the sign-in (the sign-in page's form-action). */
  origins: string[];
}

/**
 * The addresses of provider `name` (of `kind`) from `env`; undefined for an OpenID provider of
 * another name without `_ISSUER`. Throws `LW_AUTH_PROVIDER_CONFIG` for an address that is not an
 * https URL (http only on this machine).
 */
export function providerEndpoints(kind: 'google' | 'github' | 'oidc', name: string, env: NodeJS.ProcessEnv): ProviderEndpoints | undefined {
  const key = `LANEWAY_AUTH_${name.toUpperCase()}`;
  if (kind === 'github') {
    const base = env[`${key}_URL`];
    const api = env[`${key}_API_URL`];
    let authorizeUrl = GITHUB_AUTHORIZE_URL;
    let tokenUrl = GITHUB_TOKEN_URL;
    let apiUrl = GITHUB_API_URL;
    if (base) {
      const root = providerUrl(base, `${key}_URL`).url;
      const at = (path: string): string => new URL(path, root.href.endsWith('/') ? root.href : root.href + '/').href;
      authorizeUrl = at('login/oauth/authorize');
      tokenUrl = at('login/oauth/access_token');
      apiUrl = at('api/v3');
    }
    if (api) apiUrl = providerUrl(api, `${key}_API_URL`).url.href;
    return { github: { authorizeUrl, tokenUrl, apiUrl }, origins: [new URL(authorizeUrl).origin] };
  }
  const issuer = env[`${key}_ISSUER`] || (kind === 'google' ? GOOGLE_ISSUER : undefined);
  if (!issuer) return undefined;
  return { issuer, origins: [providerUrl(issuer, `${key}_ISSUER`).url.origin] };
}
