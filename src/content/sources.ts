/**
 * The local sources map: where the code an app names by git URL lives on this machine.
 *
 * An app names other repositories by URL: connectors in `/🔌.yaml`
 * (`https://github.com/stacklane-registry/clicky.com.git#!v1.0.1`), nested sites in the `source:`
 * of `/🔌name.yaml`. A self-hosted server never fetches code while it runs, so each URL must be
 * mapped to a local directory by whoever starts the server: `--source URL=DIR` (repeatable) or the
 * environment variable `LANEWAY_SOURCES`, which the CLI turns into `AppOptions.sources`.
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
import { statSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';

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
 * The sources map of a command line: `LANEWAY_SOURCES` first, then each `--source` (a later entry
 * for the same URL wins); relative directories are resolved against `cwd`. Returns the map, or a
 * message saying what is wrong.
 */
export function sourcesFromCommandLine(flags: readonly string[], variable: string | undefined, cwd: string): Record<string, string> | string {
  const out: Record<string, string> = {};
  const put = (url: string, dir: string): void => {
    const k = normalizeSourceUrl(url);
    for (const key of Object.keys(out)) {
      const o = normalizeSourceUrl(key);
      if (o.base === k.base && o.fragment === k.fragment) delete out[key];
    }
    out[url] = resolve(cwd, dir);
  };
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
