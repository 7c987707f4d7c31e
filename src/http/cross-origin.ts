/**
 * Cross-site request forgery, refused without tokens (docs/security.md "Cross-site requests").
 * The algorithm is the one Go 1.25's net/http CrossOriginProtection publishes:
 *
 *   1. GET, HEAD and OPTIONS always pass (they must not change anything);
 *   2. with `Sec-Fetch-Site` (every current browser sends it): `same-origin` and `none` (typed
 *      address, bookmark) pass; anything else (`same-site`, `cross-site`) is refused;
 *   3. without it: no `Origin` passes (not a browser, or an old one); an `Origin` whose host and
 *      port equal the `Host` header passes; any other Origin is refused, and so are `null`, an
 *      origin with user information, and one that does not parse;
 *   4. an Origin listed under `trusted-origins:` in /🎛.yaml passes in any case.
 *
 * A pure function of four header values, so the table of cases in its unit test is the whole story.
 */

export interface CrossOriginHeaders {
  method: string;
  /** The `Sec-Fetch-Site` header, undefined when absent. */
  secFetchSite: string | undefined;
  /** The `Origin` header, undefined when absent. */
  origin: string | undefined;
  /** The `Host` header (or a trusted proxy's X-Forwarded-Host: src/http/proxy.ts), undefined when absent. */
  host: string | undefined;
}

export type CrossOriginRule =
  | 'safe-method'
  | 'fetch-site-same-origin'
  | 'no-origin'
  | 'same-host'
  | 'trusted-origin'
  | 'fetch-site-cross'
  | 'origin-other-host'
  | 'origin-invalid';

export interface CrossOriginVerdict {
  allowed: boolean;
  /** Which rule decided; logged and asserted by the tests, never sent to the client. */
  rule: CrossOriginRule;
}

const verdicts = {} as Record<CrossOriginRule, CrossOriginVerdict>;
for (const rule of ['safe-method', 'fetch-site-same-origin', 'no-origin', 'same-host', 'trusted-origin'] as const) verdicts[rule] = Object.freeze({ allowed: true, rule });
for (const rule of ['fetch-site-cross', 'origin-other-host', 'origin-invalid'] as const) verdicts[rule] = Object.freeze({ allowed: false, rule });

/** What an `Origin` header may look like: a scheme, `://`, and a host with an optional port; nothing else. */
const ORIGIN_SHAPE = /^https?:\/\/[^/?#@\\\s]+$/i;
/** The characters a Host header may hold (names, IPv4, bracketed IPv6, a port). */
const HOST_SHAPE = /^[A-Za-z0-9.\-:[\]]+$/;

/**
 * The host and port an Origin names, normalised as the URL parser does (lower case, the scheme's
 * default port dropped); undefined for `null`, user information, a path, or anything unparsable.
 */
function originHost(origin: string): { scheme: string; host: string } | undefined {
  if (!ORIGIN_SHAPE.test(origin)) return undefined;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return undefined;
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password || !url.host) return undefined;
  return { scheme: url.protocol, host: url.host };
}

/** The Host header in the same normal form, for the scheme the Origin names; undefined when malformed. */
function normalHost(host: string, scheme: string): string | undefined {
  if (!HOST_SHAPE.test(host)) return undefined;
  try {
    return new URL(`${scheme}//${host}`).host;
  } catch {
    return undefined;
  }
}

/** Whether a request may go on; `trusted` holds origins exactly as browsers send them (`https://a.example`). */
export function checkCrossOrigin(req: CrossOriginHeaders, trusted: ReadonlySet<string>): CrossOriginVerdict {
  // 1. Safe methods.
  const method = req.method;
  if (method === 'GET' || method === 'HEAD' || method === 'OPTIONS') return verdicts['safe-method'];
  // 4 (checked first: it allows in any case). A trusted origin.
  const origin = req.origin;
  if (origin !== undefined && trusted.has(origin)) return verdicts['trusted-origin'];
  // 2. The browser says where the request comes from.
  const site = req.secFetchSite;
  if (site !== undefined && site !== '') {
    return site === 'same-origin' || site === 'none' ? verdicts['fetch-site-same-origin'] : verdicts['fetch-site-cross'];
  }
  // 3. Older browsers, and clients that are not browsers.
  if (origin === undefined || origin === '') return verdicts['no-origin'];
  const parsed = originHost(origin);
  if (!parsed) return verdicts['origin-invalid'];
  if (req.host !== undefined && normalHost(req.host, parsed.scheme) === parsed.host) return verdicts['same-host'];
  return verdicts['origin-other-host'];
}
