/**
 * The policy of one page: what its files contributed (FileFacts), merged into directive lists,
 * then joined into header text once at load. A page with dynamic inline blocks keeps the text in
 * pieces and splices in the hashes of those blocks' rendered text per response.
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
}

export const DEFAULT_SETTINGS: CspSettings = Object.freeze({ hash: 'sha256', reportOnly: false });

/** Directives a page may add sources to. */
export type Directive = 'script-src' | 'style-src' | 'img-src' | 'font-src' | 'connect-src' | 'frame-src' | 'media-src' | 'manifest-src';

/** What one file (a template, a plain page, an inlined SVG) contributes to a page's policy. */
export interface FileFacts {
  sources: Map<Directive, Set<string>>;
  /** Hash sources (`'sha256-…'`) of static inline blocks. */
  scriptHashes: Set<string>;
  styleHashes: Set<string>;
  /** The file has inline blocks hashed per response. */
  dynamic: boolean;
  /** From `<link itemprop="content-security-policy">`: false drops the directive. */
  connectSelf?: boolean;
  formSelf?: boolean;
  imgData?: boolean;
}

export function emptyFacts(): FileFacts {
  return { sources: new Map(), scriptHashes: new Set(), styleHashes: new Set(), dynamic: false };
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

// `crypto.hash` (Node ≥ 20.12) is about 3× faster than createHash for a short text; this runs per
// response for dynamic blocks.
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
  /** The whole header when the page has no dynamic inline blocks. */
  value: string | undefined;
  /** Extra headers sent with the policy (`Reporting-Endpoints`). */
  extra: Record<string, string>;
  /**
   * The header for one response: splices in the hashes of the dynamic blocks found in `html`
   * through `captured` (RenderOutput.captured). Cheap when `value` is set (returns it).
   */
  header(captured: readonly number[] | undefined, html: string): string;
}

export interface DynamicKinds {
  /** `kinds[k]` is the element of the capture pair (2k, 2k+1). */
  kinds: Array<'script' | 'style'>;
}

const ORDER: Directive[] = ['img-src', 'font-src', 'connect-src', 'media-src', 'manifest-src', 'frame-src'];

/**
 * Merges the facts of a page's files into a policy. `unsafeInline` lists the directives where the
 * developer declared 'unsafe-inline': hashes are left out of them (a hash would disable it).
 */
export function buildPolicy(facts: readonly FileFacts[], settings: CspSettings, dynamic: DynamicKinds): PagePolicy {
  const sources = new Map<Directive, Set<string>>();
  const scriptHashes = new Set<string>();
  const styleHashes = new Set<string>();
  let connectSelf = true;
  let formSelf = true;
  let imgData = false;
  let hasDynamic = false;
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
    if (f.dynamic) hasDynamic = true;
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
  const scriptStatic = [...list('script-src'), ...(scriptUnsafe ? [] : [...scriptHashes].sort())];
  const styleStatic = [...list('style-src'), ...(styleUnsafe ? [] : [...styleHashes].sort())];

  const tail: string[] = [];
  tail.push(`img-src ${[...list('img-src', ["'self'"]), ...(imgData ? ['data:'] : [])].join(' ')}`);
  tail.push(`font-src ${list('font-src', ["'self'"]).join(' ')}`);
  const connect = list('connect-src', connectSelf ? ["'self'"] : []);
  if (connect.length > 0) tail.push(`connect-src ${connect.join(' ')}`);
  for (const d of ORDER.slice(3)) {
    const l = list(d);
    if (l.length > 0) tail.push(`${d} ${l.join(' ')}`);
  }
  if (formSelf) tail.push("form-action 'self'");
  tail.push("base-uri 'self'", "object-src 'none'", "frame-ancestors 'self'");
  const extra: Record<string, string> = {};
  if (settings.reportUri !== undefined) {
    tail.push(`report-uri ${settings.reportUri}`, 'report-to laneway-csp');
    extra['Reporting-Endpoints'] = `laneway-csp="${settings.reportUri}"`;
  }
  const name = settings.reportOnly ? 'Content-Security-Policy-Report-Only' : 'Content-Security-Policy';
  // The header in pieces, so a response with dynamic hashes only concatenates.
  const scriptFixed = scriptStatic.join(' ');
  const styleFixed = styleStatic.join(' ');
  const tailText = tail.join('; ');
  const join = (scripts: readonly string[] | undefined, styles: readonly string[] | undefined): string => {
    const script = scripts === undefined ? scriptFixed : scriptFixed === '' ? scripts.join(' ') : scriptFixed + ' ' + scripts.join(' ');
    const style = styles === undefined ? styleFixed : styleFixed === '' ? styles.join(' ') : styleFixed + ' ' + styles.join(' ');
    return `default-src 'none'; script-src ${script || "'none'"}; style-src ${style || "'none'"}; ${tailText}`;
  };
  const fixed = join(undefined, undefined);
  if (!hasDynamic) return { name, value: fixed, extra, header: () => fixed };

  const algorithm = settings.hash;
  // Headers by the rendered text of the page's dynamic blocks: most responses repeat a text seen
  // before (same data), and a lookup is cheaper than hashing. Bounded; cleared when full.
  const memo = new Map<string, string>();
  return {
    name,
    value: undefined,
    extra,
    header(captured, html) {
      if (captured === undefined || captured.length === 0) return fixed;
      // Pairs (id, offset): id 2k opens block k, 2k+1 closes it. A block written inside another
      // one's text (a partial's <script> inside a dynamic <script>) nests; a failed render can
      // leave openings without their closings, which are skipped.
      const open: number[] = [];
      const blocks: Array<{ kind: 'script' | 'style'; text: string }> = [];
      let key = '';
      for (let i = 0; i < captured.length; i += 2) {
        const id = captured[i]!;
        const at = captured[i + 1]!;
        if ((id & 1) === 0) {
          open.push(id, at);
          continue;
        }
        let j = open.length - 2;
        while (j >= 0 && open[j] !== id - 1) j -= 2;
        if (j < 0) continue;
        const from = open[j + 1]!;
        open.length = j;
        const kind = dynamic.kinds[id >> 1]!;
        if (kind === 'script' ? scriptUnsafe : styleUnsafe) continue;
        const text = html.slice(from, at);
        blocks.push({ kind, text });
        key += (kind === 'script' ? '\u0001' : '\u0002') + text;
      }
      const known = memo.get(key);
      if (known !== undefined) return known;
      let scripts: string[] | undefined;
      let styles: string[] | undefined;
      for (const { kind, text } of blocks) {
        const h = hashSource(algorithm, text);
        if (kind === 'script') {
          if (!scriptHashes.has(h) && !(scripts ??= []).includes(h)) scripts.push(h);
        } else if (!styleHashes.has(h) && !(styles ??= []).includes(h)) styles.push(h);
      }
      const value = scripts === undefined && styles === undefined ? fixed : join(scripts, styles);
      if (key.length <= 4096) {
        if (memo.size >= 256) memo.clear();
        memo.set(key, value);
      }
      return value;
    },
  };
}
