/**
 * The route table: built once from every RouteSpec of an app, then only read.
 *
 * Shape: a tree with one node per URL segment. A node holds the endpoints of the URL that ends
 * there (`exact`) and of the same URL with a trailing slash (`slash`), its literal children, at
 * most one `{param}` directory child, and at most one `{param}.html` file parameter. Paths without
 * parameters are also kept in one Map, so most requests are a single lookup.
 *
 * Precedence (docs/routing.md "Dynamic segments"): literal segment > `{param}` directory >
 * `{param}.html` file. The walk backtracks: when a literal branch leads nowhere, the parameter
 * branch is tried.
 */
import { paramName, type Method, type RouteSpec, type Segment } from './route-file.js';
import type { SplitPath } from './request-path.js';

export type MatchResult<T> =
  | { kind: 'found'; value: T; params: ParamValue[] }
  /** The URL exists, but not for this method: answer 405 (or 204 to OPTIONS) with `allowed`. */
  | { kind: 'method'; allowed: Method[] }
  /** Nothing answers; `dir` is the deepest source directory on the path (for ⚡NotFound.html). */
  | { kind: 'none'; dir: string };

/** A decoded path parameter: `{name}` from source directory `dir` got `value`. */
export interface ParamValue {
  name: string;
  dir: string;
  value: string;
}

/** Checks a raw segment against the parameter's 🔗.yaml (e.g. a fixed `values:` list); for a single-file parameter, `value` may span segments (`a/b`): accept it only for a parameter that takes paths. */
export type ParamAccepts = (dir: string, name: string, value: string, fileParam: boolean) => boolean;

interface Node<T> {
  literal: Map<string, Node<T>>;
  param?: { name: string; dir: string; node: Node<T> };
  fileParam?: { name: string; dir: string; endpoints: Map<Method, T> };
  exact: Map<Method, T>;
  slash: Map<Method, T>;
  /** Endpoints of every path below this node (a `rest` segment): tried after everything else. */
  rest?: Map<Method, T>;
  /** Source directory this node stands for, when it is one. */
  dir?: string;
}

export interface Router<T> {
  match(method: string, path: Extract<SplitPath, { ok: true }>): MatchResult<T>;
  /** Every route, in a stable order (for `laneway routes`). */
  routes(): Array<{ spec: RouteSpec; value: T }>;
}

function newNode<T>(dir?: string): Node<T> {
  return { literal: new Map(), exact: new Map(), slash: new Map(), dir };
}

/**
 * Builds the table. Conflicts are the loader's business (it reports them with both files before
 * building); here a later duplicate simply does not replace the first.
 */
export function createRouter<T>(
  entries: Array<{ spec: RouteSpec; value: T }>,
  accepts: ParamAccepts,
  dirs: string[] = [],
): Router<T> {
  const root = newNode<T>('');
  const staticPaths = new Map<string, Node<T>>();

  // Directories with no endpoint of their own still count for ⚡NotFound.html lookups.
  for (const dir of dirs) {
    let node = root;
    let path = '';
    for (const part of dir.split('/').slice(1)) {
      path += '/' + part;
      const name = paramName(part);
      if (name !== undefined) {
        node.param ??= { name, dir: path, node: newNode<T>(path) };
        node = node.param.node;
      } else {
        let child = node.literal.get(part);
        if (!child) node.literal.set(part, (child = newNode<T>()));
        child.dir ??= path;
        node = child;
      }
    }
  }

  for (const { spec, value } of entries) {
    let node = root;
    let dynamic = false;
    let key = '';
    const last = spec.segments.length - 1;
    spec.segments.forEach((seg: Segment, i) => {
      if (seg.type === 'literal') {
        let child = node.literal.get(seg.value);
        if (!child) node.literal.set(seg.value, (child = newNode<T>()));
        // A literal segment that is not the file itself stands for a source directory.
        if (i < last || spec.trailingSlash) child.dir ??= (node.dir ?? '') + '/' + seg.value;
        node = child;
        key += '/' + seg.value;
      } else if (seg.type === 'param') {
        node.param ??= { name: seg.name, dir: seg.dir, node: newNode<T>(seg.dir) };
        node = node.param.node;
        dynamic = true;
      } else if (seg.type === 'file-param') {
        node.fileParam ??= { name: seg.name, dir: seg.dir, endpoints: new Map() };
        dynamic = true;
      } else {
        node.rest ??= new Map();
        dynamic = true;
      }
    });
    const last_ = spec.segments[last];
    const target =
      last_?.type === 'file-param' ? node.fileParam!.endpoints : last_?.type === 'rest' ? node.rest! : spec.trailingSlash ? node.slash : node.exact;
    if (!target.has(spec.method)) target.set(spec.method, value);
    if (!dynamic) staticPaths.set(spec.trailingSlash && key ? key + '/' : key || '/', node);
  }

  function walk(
    node: Node<T>,
    segments: string[],
    i: number,
    trailingSlash: boolean,
    params: ParamValue[],
  ): { endpoints: Map<Method, T>; params: ParamValue[] } | undefined {
    if (i === segments.length) {
      const endpoints = trailingSlash || i === 0 ? node.slash : node.exact;
      if (endpoints.size) return { endpoints, params };
      return trailingSlash && node.rest ? { endpoints: node.rest, params } : undefined;
    }
    const seg = segments[i]!;
    const child = node.literal.get(seg);
    if (child) {
      const found = walk(child, segments, i + 1, trailingSlash, params);
      if (found) return found;
    }
    if (node.param && accepts(node.param.dir, node.param.name, seg, false)) {
      const found = walk(node.param.node, segments, i + 1, trailingSlash, [
        ...params,
        { name: node.param.name, dir: node.param.dir, value: seg },
      ]);
      if (found) return found;
    }
    const fp = node.fileParam;
    if (fp && i === segments.length - 1 && !trailingSlash && accepts(fp.dir, fp.name, seg, true)) {
      return { endpoints: fp.endpoints, params: [...params, { name: fp.name, dir: fp.dir, value: seg }] };
    }
    // A single-file parameter may take the rest of the path when `accepts` allows a value with
    // slashes (a static document's path uid: /controllers/js). Literal routes were tried first, and
    // a literal directory owns its subtree: /site/x never reaches a root parameter.
    if (fp && i < segments.length - 1 && !trailingSlash && !child) {
      const rest = segments.slice(i).join('/');
      if (accepts(fp.dir, fp.name, rest, true)) return { endpoints: fp.endpoints, params: [...params, { name: fp.name, dir: fp.dir, value: rest }] };
    }
    // A `rest` route takes whatever is left, when nothing more precise did.
    return node.rest ? { endpoints: node.rest, params } : undefined;
  }

  /** The deepest source directory reached by following the path (literal first, then param). */
  function deepestDir(segments: string[]): string {
    let node = root;
    let dir = '';
    for (const seg of segments) {
      const next = node.literal.get(seg) ?? (node.param && accepts(node.param.dir, node.param.name, seg, false) ? node.param.node : undefined);
      if (!next) break;
      node = next;
      if (node.dir !== undefined) dir = node.dir;
    }
    return dir;
  }

  function choose(endpoints: Map<Method, T>, method: string, params: ParamValue[]): MatchResult<T> {
    const value = endpoints.get(method as Method) ?? (method === 'HEAD' ? endpoints.get('GET') : undefined);
    if (value !== undefined && method !== 'OPTIONS') return { kind: 'found', value, params };
    return { kind: 'method', allowed: [...endpoints.keys()] };
  }

  const noParams: ParamValue[] = [];
  return {
    match(method, path) {
      const node = staticPaths.get(path.key);
      if (node) {
        const endpoints = path.trailingSlash || path.segments.length === 0 ? node.slash : node.exact;
        if (endpoints.size) return choose(endpoints, method, noParams);
      }
      const found = walk(root, path.segments, 0, path.trailingSlash, noParams);
      if (found) return choose(found.endpoints, method, found.params);
      return { kind: 'none', dir: deepestDir(path.segments) };
    },
    routes() {
      return entries;
    },
  };
}

/** The `Allow` header for a set of methods: HEAD wherever GET is, OPTIONS always. */
export function allowHeader(methods: readonly Method[]): string {
  const order: Array<Method | 'HEAD' | 'OPTIONS'> = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS'];
  const set = new Set<string>(methods);
  if (set.has('GET')) set.add('HEAD');
  set.add('OPTIONS');
  return order.filter((m) => set.has(m)).join(', ');
}
