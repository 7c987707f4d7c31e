/**
 * The local sources map: where the code an app names by git URL lives on this machine.
 *
 * An app names other repositories by URL: connectors in `/🔌.yaml`
 * (`https://github.com/stacklane-registry/clicky.com.git#!v1.0.1`), nested sites in the `source:`
 * of `/🔌name.yaml`. A self-hosted server never fetches code while it runs, so each URL must be
 * mapped to a local directory by whoever starts the server: `--source URL=DIR` (repeatable), the
 * environment variable `LANEWAY_SOURCES`, or a sources file next to the app
 * (`laneway.sources.yaml` in the app directory's parent, or `--sources FILE`), which the CLI merges
 * (flags > variable > file) into `AppOptions.sources`.
 *
 * Matching (docs/connectors.md):
 * 1. Both sides are normalised: spaces around trimmed, scheme and host lower-cased, a trailing `/`
 *    and a trailing `.git` of the path dropped (`…/clicky.com.git` = `…/clicky.com`).
 * 2. A key with the same fragment (`#!v1.0.1`, `#main`) wins.
 * 3. Otherwise a key without fragment serves every version of that repository. A versioned key
 *    never serves another version, nor an unversioned URL.
 * A value that is a path rather than a URL (no `scheme://`, not `user@host:`) is accepted as is:
 * a directory, relative to the app directory.
 */
import { readdirSync, readFileSync, realpathSync, statSync, type Dirent } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { isMap, isScalar, isSeq, parseDocument, type Node, type Pair } from 'yaml';
import { DiagnosticList, type Diagnostic } from '../diag/index.js';
import { normalizeName } from '../shared/index.js';

/** URL (as written by the user) → directory (absolute, or relative to the app directory). */
export type SourcesMap = Readonly<Record<string, string>>;

/** Where a source URL leads: a directory that exists, or why there is none. */
export type SourceResolution =
  | { found: true; dir: string; via: 'map' | 'path' }
  | { found: false; reason: 'unmapped' }
  | { found: false; reason: 'missing'; dir: string; via: 'map' | 'path' };

const URL_LIKE = /^[a-z][a-z0-9+.-]*:\/\//i;
/** scp-like git addresses: `git@github.com:owner/repo.git`. */
const SCP_LIKE = /^[^@/\s]+@[^:/\s]+:/;

/** Whether a source value is a URL (to look up in the map) rather than a local path. */
export function isSourceUrl(value: string): boolean {
  const v = value.trim();
  return URL_LIKE.test(v) || SCP_LIKE.test(v);
}

/**
 * The comparable form of a source URL and its fragment (the text after `#`, without it; empty
 * when none): `HTTPS://GitHub.com/o/clicky.com.git/#!v1` → `https://github.com/o/clicky.com`, `!v1`.
 */
export function normalizeSourceUrl(url: string): { base: string; fragment: string } {
  const v = url.trim();
  const hash = v.indexOf('#');
  let base = hash === -1 ? v : v.slice(0, hash);
  const fragment = hash === -1 ? '' : v.slice(hash + 1);
  const m = /^([a-z][a-z0-9+.-]*:\/\/)([^/]*)(.*)$/i.exec(base);
  if (m) base = m[1]!.toLowerCase() + m[2]!.toLowerCase() + m[3]!;
  base = base.replace(/\/+$/, '').replace(/\.git$/i, '');
  return { base, fragment };
}

/**
 * The last path segment of a source without `.git` and fragment: the name a connector is
 * expected to have (`…/stacklane-registry/clicky.com.git#!v1.0.1` → `clicky.com`).
 */
export function sourceName(url: string): string {
  const { base } = normalizeSourceUrl(url);
  const last = base.slice(Math.max(base.lastIndexOf('/'), base.lastIndexOf(':')) + 1);
  return last.toLowerCase();
}

/** The map entry for `url` by the rules above, or undefined. */
export function lookupSource(url: string, sources: SourcesMap): string | undefined {
  const want = normalizeSourceUrl(url);
  let unversioned: string | undefined;
  for (const [key, dir] of Object.entries(sources)) {
    const k = normalizeSourceUrl(key);
    if (k.base !== want.base) continue;
    if (k.fragment === want.fragment) return dir;
    if (k.fragment === '' && unversioned === undefined) unversioned = dir;
  }
  return unversioned;
}

/**
 * Resolves a source (a URL of the map, or a path) to a directory; relative directories are taken
 * from `root` (the app directory).
 */
export function resolveSource(value: string, sources: SourcesMap, root: string): SourceResolution {
  const v = value.trim();
  let dir: string;
  let via: 'map' | 'path';
  if (isSourceUrl(v)) {
    const mapped = lookupSource(v, sources);
    if (mapped === undefined) return { found: false, reason: 'unmapped' };
    dir = mapped;
    via = 'map';
  } else {
    dir = v;
    via = 'path';
  }
  const abs = isAbsolute(dir) ? dir : resolve(root, dir);
  let ok = false;
  try {
    ok = statSync(abs).isDirectory();
  } catch {
    // missing: reported by the caller
  }
  return ok ? { found: true, dir: abs, via } : { found: false, reason: 'missing', dir: abs, via };
}

/**
 * One `--source URL=DIR` argument: the URL is everything before the first `=` (git URLs have
 * none), the directory everything after. Returns the pair, or a message saying what is wrong.
 */
export function parseSourceArgument(arg: string): [url: string, dir: string] | string {
  const eq = arg.indexOf('=');
  const url = eq === -1 ? '' : arg.slice(0, eq).trim();
  const dir = eq === -1 ? '' : arg.slice(eq + 1).trim();
  if (eq === -1 || url === '' || dir === '') return `--source takes URL=DIR (a git URL, "=", a local directory), not "${arg}"`;
  if (!isSourceUrl(url)) return `--source ${arg}: "${url}" is not a URL; a path written in the app is used as is and needs no --source`;
  return [url, dir];
}

/**
 * The value of `LANEWAY_SOURCES`: a JSON object `{"URL": "DIR", …}`, or `URL=DIR` pairs separated
 * by `;` (or new lines). Returns the map, or a message saying what is wrong.
 */
export function parseSourcesVariable(value: string): Record<string, string> | string {
  const v = value.trim();
  const out: Record<string, string> = {};
  if (v === '') return out;
  if (v.startsWith('{')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(v);
    } catch (err) {
      return `LANEWAY_SOURCES is not valid JSON: ${(err as Error).message}`;
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return 'LANEWAY_SOURCES is a JSON object of URL → directory';
    for (const [url, dir] of Object.entries(parsed)) {
      if (typeof dir !== 'string' || dir.trim() === '') return `LANEWAY_SOURCES: the directory of ${url} is not a string`;
      if (!isSourceUrl(url)) return `LANEWAY_SOURCES: "${url}" is not a URL`;
      out[url.trim()] = dir.trim();
    }
    return out;
  }
  for (const part of v.split(/[;\n]/)) {
    if (part.trim() === '') continue;
    const pair = parseSourceArgument(part.trim());
    if (typeof pair === 'string') return 'LANEWAY_SOURCES: ' + pair.replace(/^--source /, '');
    out[pair[0]] = pair[1];
  }
  return out;
}

/**
 * The sources map of a command line: the sources file's map (`file`, directories already absolute)
 * first, then `LANEWAY_SOURCES`, then each `--source` (a later entry for the same URL wins);
 * relative directories of the variable and the flags are resolved against `cwd`. Returns the map,
 * or a message saying what is wrong.
 */
export function sourcesFromCommandLine(flags: readonly string[], variable: string | undefined, cwd: string, file: SourcesMap = {}): Record<string, string> | string {
  const out: Record<string, string> = {};
  const put = (url: string, dir: string): void => {
    const k = normalizeSourceUrl(url);
    for (const key of Object.keys(out)) {
      const o = normalizeSourceUrl(key);
      if (o.base === k.base && o.fragment === k.fragment) delete out[key];
    }
    out[url] = resolve(cwd, dir);
  };
  for (const [url, dir] of Object.entries(file)) put(url, dir);
  if (variable !== undefined) {
    const env = parseSourcesVariable(variable);
    if (typeof env === 'string') return env;
    for (const [url, dir] of Object.entries(env)) put(url, dir);
  }
  for (const flag of flags) {
    const pair = parseSourceArgument(flag);
    if (typeof pair === 'string') return pair;
    put(pair[0], pair[1]);
  }
  return out;
}

/** The sources file the command line reads from the app directory's parent (next to the app, not in it). */
export const SOURCES_FILE = 'laneway.sources.yaml';

const SOURCES_SHAPE = 'a sources file holds one key, `sources:`, mapping git URLs to local directories (relative to the file\'s directory), such as\n  sources:\n    https://github.com/owner/clicky.com.git#!v1.0.1: vendor/clicky.com';

/**
 * The text of a sources file: `sources: {<git URL>: <dir>}`, each directory relative to `dir` (the
 * file's directory) and required to exist. Returns the map (absolute directories) and every problem
 * (`LW_CONTENT_SOURCES_FILE`, at its line and column), reported at `display` (the file's name as the
 * user should see it). The entries without problems are kept.
 */
export function parseSourcesFile(text: string, dir: string, display: string): { sources: Record<string, string>; diagnostics: Diagnostic[] } {
  const diagnostics = new DiagnosticList();
  const sources: Record<string, string> = {};
  const done = () => ({ sources, diagnostics: diagnostics.sorted() });
  const fail = (message: string, offset: number): void => diagnostics.error('LW_CONTENT_SOURCES_FILE', message, display, text, offset);
  const isEmpty = (n: unknown): boolean => n === null || n === undefined || (isScalar(n) && (n.value === null || n.value === ''));
  const doc = parseDocument(text);
  if (doc.errors.length > 0) {
    for (const err of doc.errors) fail(`invalid YAML: ${err.message.split('\n')[0]}`, err.pos[0]);
    return done();
  }
  const top = doc.contents;
  if (isEmpty(top)) return done();
  if (!isMap(top)) {
    fail(SOURCES_SHAPE, top?.range?.[0] ?? 0);
    return done();
  }
  const seen = new Map<string, string>();
  for (const pair of top.items as Array<Pair<Node | null, Node | null>>) {
    const keyAt = pair.key?.range?.[0] ?? 0;
    if (!isScalar(pair.key) || pair.key.value !== 'sources') {
      fail(`unknown key "${isScalar(pair.key) ? String(pair.key.value) : '?'}": ${SOURCES_SHAPE}`, keyAt);
      continue;
    }
    const map = pair.value;
    if (isEmpty(map)) continue;
    if (!isMap(map)) {
      fail(`\`sources:\` is a map of git URLs to local directories, one per line as \`https://github.com/owner/clicky.com.git#!v1.0.1: vendor/clicky.com\``, map?.range?.[0] ?? keyAt);
      continue;
    }
    for (const entry of map.items as Array<Pair<Node | null, Node | null>>) {
      const at = entry.key?.range?.[0] ?? keyAt;
      const url = isScalar(entry.key) && typeof entry.key.value === 'string' ? entry.key.value.trim() : '';
      if (!isSourceUrl(url)) {
        const written = isScalar(entry.key) ? String(entry.key.value) : 'this key';
        fail(`"${written}" is not a git URL (https://…, ssh://…, git@host:owner/repo.git): a path written in the app is used as is and needs no entry`, at);
        continue;
      }
      const valueAt = entry.value?.range?.[0] ?? at;
      const target = isScalar(entry.value) && typeof entry.value.value === 'string' ? entry.value.value.trim() : '';
      if (target === '') {
        fail(`the directory of ${url} is missing: write \`${url}: DIR\`, DIR a local copy of that repository (relative to the file's directory)`, at);
        continue;
      }
      const n = normalizeSourceUrl(url);
      const id = n.base + '#' + n.fragment;
      const first = seen.get(id);
      if (first !== undefined) {
        fail(`${url} is the same source as ${first}, listed above: keep one entry`, at);
        continue;
      }
      seen.set(id, url);
      const abs = resolve(dir, target);
      let kind: 'directory' | 'other' | 'missing' = 'missing';
      try {
        kind = statSync(abs).isDirectory() ? 'directory' : 'other';
      } catch {
        // missing
      }
      if (kind !== 'directory') {
        fail(`the directory ${target} of ${url} (${abs}) ${kind === 'missing' ? 'does not exist' : 'is not a directory'}: give a local copy of that repository, relative to the file's directory`, valueAt);
        continue;
      }
      sources[url] = abs;
    }
  }
  return done();
}

/** Reads a sources file (parseSourcesFile); a file that cannot be read is a problem too. */
export function readSourcesFile(file: string, display: string): { sources: Record<string, string>; diagnostics: Diagnostic[] } {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const diagnostics = new DiagnosticList();
    diagnostics.error('LW_CONTENT_SOURCES_FILE', `cannot read the sources file: ${(err as Error).message}`, display);
    return { sources: {}, diagnostics: diagnostics.items };
  }
  return parseSourcesFile(text, resolve(file, '..'), display);
}

/**
 * The local directories an app names, for `--watch`: the `source:` of each nested site
 * (`🔌name.yaml`, at any depth), the connectors of `/🔌.yaml`, and in turn those the nested sites
 * name. Only sources that resolve; anything malformed is the loader's to report, so it is skipped
 * here. Dot-directories and `node_modules` are not searched (the loader never reads them).
 */
export function localSourceDirs(appDir: string, sources: SourcesMap): string[] {
  const found = new Set<string>();
  const visited = new Set<string>();
  const visit = (root: string): void => {
    const real = realOrResolved(root);
    if (visited.has(real)) return;
    visited.add(real);
    for (const file of mountFiles(root, '')) {
      const doc = parseYamlFile(join(root, file));
      const source = doc !== undefined && isMap(doc) ? doc.get('source') : undefined;
      if (typeof source !== 'string' || source.trim() === '') continue;
      const r = resolveSource(source, sources, root);
      if (!r.found) continue;
      found.add(r.dir);
      visit(r.dir);
    }
    const name = listDir(root).find((e) => !e.isDirectory() && normalizeName(e.name) === '🔌.yaml')?.name;
    const list = name === undefined ? undefined : parseYamlFile(join(root, name));
    if (list === undefined || !isSeq(list)) return;
    for (const item of list.items) {
      if (!isScalar(item) || typeof item.value !== 'string' || item.value.trim() === '') continue;
      const r = resolveSource(item.value, sources, root);
      if (r.found) found.add(r.dir);
    }
  };
  visit(appDir);
  return [...found];
}

function listDir(dir: string): Dirent[] {
  try {
    return readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
}

/** The `🔌name.yaml` files under `dir` (paths relative to the app directory `root`). */
function mountFiles(root: string, rel: string): string[] {
  const out: string[] = [];
  for (const e of listDir(join(root, rel))) {
    const name = normalizeName(e.name);
    if (e.isDirectory()) {
      if (!name.startsWith('.') && name !== 'node_modules') out.push(...mountFiles(root, join(rel, e.name)));
    } else if (name.startsWith('🔌') && name.endsWith('.yaml') && name !== '🔌.yaml') out.push(join(rel, e.name));
  }
  return out;
}

function parseYamlFile(file: string): Node | null | undefined {
  try {
    const doc = parseDocument(readFileSync(file, 'utf8'));
    return doc.errors.length > 0 ? undefined : doc.contents;
  } catch {
    return undefined;
  }
}

function realOrResolved(dir: string): string {
  try {
    return realpathSync(dir);
  } catch {
    return resolve(dir);
  }
}
