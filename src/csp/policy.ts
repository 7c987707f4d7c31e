/**
 * The policy of one page: what its files contributed (FileFacts), merged into directive lists,
 * then joined into header text once at load. Every hash comes from text the developer wrote
 * (template tags are refused inside inline blocks that run), so no response changes a policy.
 */
import * as crypto from 'node:crypto';

export type HashAlgorithm = 'sha256' | 'sha384' | 'sha512';

/** The app's settings, from the `csp:` key of `/🎛.yaml`. */
export interface CspSettings {
  hash: HashAlgorithm;
  /** Send `Content-Security-Policy-Report-Only` instead of enforcing. */
  reportOnly: boolean;
  /** Where browsers send violation reports (`report-uri`, and `report-to` through `Reporting-Endpoints`). */
  reportUri?: string;
  /**
   * Origins of the app's sign-in providers, from the server's settings (never from a request):
   * a page declaring `data-form-action-auth="true"` adds them to `form-action`, since browsers
   * apply it to the redirect a sign-in form's POST answers with.
   */
  formActionAuth?: readonly string[];
}

export const DEFAULT_SETTINGS: CspSettings = Object.freeze({ hash: 'sha256', reportOnly: false });

/** Directives a page may add sources to. */
export type Directive = 'script-src' | 'style-src' | 'img-src' | 'font-src' | 'connect-src' | 'frame-src' | 'media-src' | 'manifest-src';

/** What one file (a template, a plain page, an inlined SVG) contributes to a page's policy. */
export interface FileFacts {
  sources: Map<Directive, Set<string>>;
  /** Hash sources (`'sha256-…'`) of inline blocks. */
  scriptHashes: Set<string>;
  styleHashes: Set<string>;
  /** From `<link itemprop="content-security-policy">`: false drops the directive. */
  connectSelf?: boolean;
  formSelf?: boolean;
  imgData?: boolean;
  /** `data-img-upload="true"`: `img-src blob: data:` and `connect-src 'self'` for image uploads. */
  imgUpload?: boolean;
  /** `data-form-action-auth="true"`: the sign-in providers' origins in `form-action`. */
  formActionAuth?: boolean;
}

export function emptyFacts(): FileFacts {
  return { sources: new Map(), scriptHashes: new Set(), styleHashes: new Set() };
}

export function addSource(facts: FileFacts, directive: Directive, source: string): void {
  let set = facts.sources.get(directive);
  if (set === undefined) facts.sources.set(directive, (set = new Set()));
  set.add(source);
}

/**
 * The text a browser hashes for an inline block: the element's text after the HTML parser's
 * input preprocessing (CR LF and lone CR become LF; NUL becomes U+FFFD in raw text).
 */
export function normalizeInline(text: string): string {
  if (text.includes('\r')) text = text.replace(/\r\n?/g, '\n');
  if (text.includes('\0')) text = text.replace(/\0/g, '\uFFFD');
  return text;
}

/** The hash source of an inline block's text, e.g. `'sha256-…'`. */
export function hashSource(algorithm: HashAlgorithm, text: string): string {
  return `'${algorithm}-${digest(algorithm, normalizeInline(text))}'`;
}

// `crypto.hash` (Node ≥ 20.12) is about 3× faster than createHash for a short text; a page hashes
// an indented block once per indentation, at load.
const oneShot = (crypto as { hash?: (algorithm: string, data: string, encoding: 'base64') => string }).hash;
const digest = oneShot
  ? (algorithm: HashAlgorithm, text: string): string => oneShot(algorithm, text, 'base64')
  : (algorithm: HashAlgorithm, text: string): string => crypto.createHash(algorithm).update(text, 'utf8').digest('base64');

const KEYWORDS = new Set(["'self'", "'unsafe-inline'", "'unsafe-eval'", "'wasm-unsafe-eval'", "'unsafe-hashes'", "'strict-dynamic'", "'report-sample'", "'none'"]);
const HASH_SOURCE = /^'sha(256|384|512)-[A-Za-z0-9+/_-]+={0,2}'$/;
const SCHEME_SOURCE = /^[a-z][a-z0-9+.-]*:$/i;
const HOST_SOURCE = /^(?:[a-z][a-z0-9+.-]*:\/\/)?(?:\*|(?:\*\.)?[a-z0-9-]+(?:\.[a-z0-9-]+)*)(?::(?:\d{1,5}|\*))?(?:\/[^\s;,'"]*)?$/i;

/** Why `token` is not a source expression a page may declare, or undefined when it is one. */
export function checkSource(token: string): string | undefined {
  if (KEYWORDS.has(token.toLowerCase()) || HASH_SOURCE.test(token) || SCHEME_SOURCE.test(token) || HOST_SOURCE.test(token)) return undefined;
  if (/^'nonce-/i.test(token)) return 'nonces are per response, and Laneway builds policies at load; use a hash or a URL';
  return 'expected a URL or origin (https://api.example.com), a scheme (https:), a host (*.example.com) or a keyword such as \'self\'';
}

/** A source for a script or stylesheet URL: same-origin → 'self', external → its URL without query. */
export function sourceOfUrl(url: string): string | undefined {
  const u = url.trim();
  if (/^\/(?!\/)/.test(u) || !/^[a-z][a-z0-9+.-]*:|^\/\//i.test(u)) return "'self'";
  let parsed: URL;
  try {
    parsed = new URL(u.startsWith('//') ? 'https:' + u : u);
  } catch {
    return undefined;
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return parsed.protocol === 'data:' ? 'data:' : undefined;
  const path = parsed.pathname.replace(/[;,]/g, (c) => (c === ';' ? '%3B' : '%2C'));
  // A protocol-relative URL keeps the page's scheme: a host-source without scheme does the same.
  return (u.startsWith('//') ? parsed.host : parsed.origin) + path;
}

/** The merged policy of one page, ready to send. */
export interface PagePolicy {
  /** `Content-Security-Policy` or `Content-Security-Policy-Report-Only`. */
  name: string;
  /** The whole header, made once at load. */
  value: string;
  /** Extra headers sent with the policy (`Reporting-Endpoints`). */
  extra: Record<string, string>;
}

const ORDER: Directive[] = ['img-src', 'font-src', 'connect-src', 'media-src', 'manifest-src', 'frame-src'];

/**
 * Merges the facts of a page's files into a policy. Where the developer declared
 * 'unsafe-inline', hashes are left out of that directive (a hash would disable it).
 */
export function buildPolicy(facts: readonly FileFacts[], settings: CspSettings): PagePolicy {
  const sources = new Map<Directive, Set<string>>();
  const scriptHashes = new Set<string>();
  const styleHashes = new Set<string>();
  let connectSelf = true;
  let formSelf = true;
  let imgData = false;
  let imgUpload = false;
  let formAuth = false;
  for (const f of facts) {
    for (const [d, set] of f.sources) {
      let into = sources.get(d);
      if (into === undefined) sources.set(d, (into = new Set()));
      for (const s of set) into.add(s);
    }
    for (const h of f.scriptHashes) scriptHashes.add(h);
    for (const h of f.styleHashes) styleHashes.add(h);
    if (f.connectSelf === false) connectSelf = false;
    if (f.formSelf === false) formSelf = false;
    if (f.imgData) imgData = true;
    if (f.imgUpload) imgUpload = true;
    if (f.formActionAuth) formAuth = true;
  }
  const list = (d: Directive, first: string[] = []): string[] => {
    const set = sources.get(d);
    const out = [...first];
    if (set) {
      // 'self' first, then the rest in a stable order.
      if (set.has("'self'") && !out.includes("'self'")) out.unshift("'self'");
      for (const s of [...set].filter((x) => x !== "'self'").sort()) if (!out.includes(s)) out.push(s);
    }
    return out;
  };
  const scriptUnsafe = sources.get('script-src')?.has("'unsafe-inline'") ?? false;
  const styleUnsafe = sources.get('style-src')?.has("'unsafe-inline'") ?? false;
  const script = [...list('script-src'), ...(scriptUnsafe ? [] : [...scriptHashes].sort())].join(' ');
  const style = [...list('style-src'), ...(styleUnsafe ? [] : [...styleHashes].sort())].join(' ');

  const parts: string[] = ["default-src 'none'", `script-src ${script || "'none'"}`, `style-src ${style || "'none'"}`];
  parts.push(`img-src ${[...list('img-src', ["'self'"]), ...(imgUpload ? ['blob:'] : []), ...(imgData || imgUpload ? ['data:'] : [])].join(' ')}`);
  parts.push(`font-src ${list('font-src', ["'self'"]).join(' ')}`);
  const connect = list('connect-src', connectSelf || imgUpload ? ["'self'"] : []);
  if (connect.length > 0) parts.push(`connect-src ${connect.join(' ')}`);
  for (const d of ORDER.slice(3)) {
    const l = list(d);
    if (l.length > 0) parts.push(`${d} ${l.join(' ')}`);
  }
  const authOrigins = formAuth ? settings.formActionAuth ?? [] : [];
  // data-form-action-auth with no provider configured still limits forms to the site itself.
  if (formSelf || formAuth) parts.push(`form-action ${[...(formSelf || formAuth ? ["'self'"] : []), ...authOrigins].join(' ')}`);
  parts.push("base-uri 'self'", "object-src 'none'", "frame-ancestors 'self'");
  const extra: Record<string, string> = {};
  if (settings.reportUri !== undefined) {
    parts.push(`report-uri ${settings.reportUri}`, 'report-to laneway-csp');
    extra['Reporting-Endpoints'] = `laneway-csp="${settings.reportUri}"`;
  }
  const name = settings.reportOnly ? 'Content-Security-Policy-Report-Only' : 'Content-Security-Policy';
  return { name, value: parts.join('; '), extra };
}
