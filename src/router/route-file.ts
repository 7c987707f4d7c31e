/**
 * Which URL a file answers. This is the whole file-name → route rule set (docs/routing.md "File →
 * URL", "Dynamic segments"), as a pure function of an app-relative path. The loader decides first
 * whether a file is public at all.
 */

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** One URL segment of a route: a literal, a `{param}` directory, or a `{param}.html` file. */
export type Segment =
  | { type: 'literal'; value: string }
  | { type: 'param'; name: string; dir: string }
  | { type: 'file-param'; name: string; dir: string }
  /** The rest of the path, one segment or more (last only): the built-in `/__/images/*` and `/__/auth/*`. */
  | { type: 'rest' };

/** What a route answers with; the loader attaches the compiled endpoint. */
export type RouteKind = 'script' | 'view' | 'page' | 'static' | 'service';

/** A file's route: `segments` then an optional trailing slash (`/d/` for index files). */
export interface RouteSpec {
  method: Method;
  segments: Segment[];
  trailingSlash: boolean;
  kind: RouteKind;
  /** Special script flavours: `🖱` click actions and `⏱` event streams (docs/routing.md "File → URL"). */
  flavour?: 'click' | 'events';
  file: string;
}

const VERB_FILE = /^(GET|POST|PUT|DELETE)\.js$/;
const EMOJI_VERBS: Array<[string, Method, RouteSpec['flavour']]> = [
  ['🖥', 'GET', undefined],
  ['📮', 'POST', undefined],
  ['❌', 'DELETE', undefined],
  ['🖱', 'GET', 'click'],
  ['⏱', 'GET', 'events'],
];
const PARAM = /^\{([^{}]*)\}$/;

/** A file name that makes a `.js` file a server script rather than a client asset. */
export function isScriptEndpointName(name: string): boolean {
  if (!name.endsWith('.js')) return false;
  return VERB_FILE.test(name) || EMOJI_VERBS.some(([emoji]) => name.startsWith(emoji) && name.length > emoji.length + 3);
}

/**
 * The script names a `.js` file that is not a script by its name was probably meant to have,
 * best guess first: `get.js` → `GET.js`, `🖥get.js`; `index.js` → `🖥index.js`; `save.js` →
 * `🖥save.js`, `📮save.js` (`📮` first when `posted`, e.g. the file reads a form).
 */
export function scriptNamesFor(name: string, posted = false): string[] {
  // A wrong emoji in front (`📤save.js`) is dropped: the name after it is what matters.
  const base = name.replace(/\.m?js$/i, '').replace(/^[\p{Extended_Pictographic}\u{FE0F}\u{200D}]+/u, '') || 'name';
  const lower = base.toLowerCase();
  if (lower === 'get') return ['GET.js', '🖥get.js'];
  if (lower === 'post') return ['POST.js', '📮post.js'];
  if (lower === 'put') return ['PUT.js'];
  if (lower === 'delete') return ['DELETE.js', '❌delete.js'];
  if (lower === 'patch') return ['PUT.js', 'POST.js'];
  if (lower === 'index') return ['🖥index.js'];
  return posted ? [`📮${base}.js`, `🖥${base}.js`] : [`🖥${base}.js`, `📮${base}.js`];
}

/** HTTP verbs in a case Laneway does not route (`get`, `Post`) and verbs it does not route at all (`PATCH`). */
export function isMiscasedVerbName(name: string): boolean {
  return /^(get|post|put|delete|patch)\.js$/i.test(name) && !VERB_FILE.test(name);
}

/** The name inside `{name}`, or undefined when the segment is not a param. */
export function paramName(segment: string): string | undefined {
  return PARAM.exec(segment)?.[1];
}

function dirSegments(dirParts: string[]): Segment[] {
  const segments: Segment[] = [];
  let dir = '';
  for (const part of dirParts) {
    dir += '/' + part;
    const name = paramName(part);
    segments.push(name === undefined ? { type: 'literal', value: part } : { type: 'param', name, dir });
  }
  return segments;
}

/**
 * The route of a public file, or undefined when the file answers no URL by itself.
 * `kind` is decided by the loader (a `.html` is a view or a page depending on its first line).
 *
 * | file                      | route            |
 * |---------------------------|------------------|
 * | /a/GET.js (POST, PUT…)    | GET /a           |
 * | /a/🖥name.js (📮 ❌ 🖱 ⏱)  | GET /a/name      |
 * | /a/🖥index.js             | GET /a/          |
 * | /a/index.html             | GET /a/          |
 * | /a/name.html              | GET /a/name      |
 * | /a/{p}.html               | GET /a/<value>   |
 * | /a/file.ext               | GET /a/file.ext  |
 */
export function parseRouteFile(path: string, kind: RouteKind): RouteSpec | undefined {
  const spec = routeOf(path, kind);
  // The root has one URL, `/`: `/GET.js` and `/🖥index.js` both answer it (and so conflict).
  if (spec && spec.segments.length === 0) spec.trailingSlash = true;
  return spec;
}

function routeOf(path: string, kind: RouteKind): RouteSpec | undefined {
  const parts = path.split('/').slice(1);
  const name = parts.pop()!;
  const segments = dirSegments(parts);
  const dir = parts.length ? '/' + parts.join('/') : '';

  if (kind === 'script') {
    const verb = VERB_FILE.exec(name);
    if (verb) return { method: verb[1] as Method, segments, trailingSlash: false, kind, file: path };
    for (const [emoji, method, flavour] of EMOJI_VERBS) {
      if (!name.startsWith(emoji)) continue;
      const base = name.slice(emoji.length, -3);
      if (base === 'index') {
        // Only GET has a directory index (docs/routing.md "File → URL": `🖥index.js` answers GET /dir/).
        if (emoji !== '🖥') return undefined;
        return { method, segments, trailingSlash: true, kind, file: path };
      }
      return { method, segments: [...segments, { type: 'literal', value: base }], trailingSlash: false, kind, flavour, file: path };
    }
    return undefined;
  }

  if (kind === 'view' || kind === 'page') {
    const base = name.slice(0, -'.html'.length);
    if (base === 'index') return { method: 'GET', segments, trailingSlash: true, kind, file: path };
    const param = paramName(base);
    if (param !== undefined) {
      return { method: 'GET', segments: [...segments, { type: 'file-param', name: param, dir }], trailingSlash: false, kind, file: path };
    }
    return { method: 'GET', segments: [...segments, { type: 'literal', value: base }], trailingSlash: false, kind, file: path };
  }

  // Static assets are served at their own name; `📌name.ext` at the name without the pin.
  const served = name.startsWith('📌') ? name.slice('📌'.length) : name;
  return { method: 'GET', segments: [...segments, { type: 'literal', value: served }], trailingSlash: false, kind, file: path };
}

/** The URL pattern of a route for display: `/a/{p}/name`, `/d/`. */
export function formatPattern(spec: Pick<RouteSpec, 'segments' | 'trailingSlash'>): string {
  const path = spec.segments.map((s) => (s.type === 'literal' ? s.value : s.type === 'rest' ? '*' : `{${s.name}}`)).join('/');
  if (!path) return '/';
  return '/' + path + (spec.trailingSlash ? '/' : '');
}
