/**
 * What the `'🔌'` module (the hosting platform's own services) can give without a hosted service,
 * computed here (docs/scripting.md "`'🔌'`"): `Source`, which reads a git repository's address.
 * The platform's other services (`Build`, `Mapping`, `Domain`, `SourceBuilder`, `SourceSession`)
 * and the members of `Source` that would ask a hosted service (`exists()`, `manifest()`, `icon()`)
 * are not here: a script that imports one answers 501 (app/compile.ts), and a call of such a member
 * throws an error that answers 501 when the script does not catch it.
 */
import { LanewayError } from '../diag/index.js';

/** The names of `'🔌'` computed locally; importing any other name makes the script answer 501. */
export const LOCAL_PLATFORM_EXPORTS: ReadonlySet<string> = new Set(['Source']);

/** A repository's address read from a git URL. */
interface SourceInfo {
  /** The repository's name, without `.git`: `docs` for `https://github.com/stacklane/docs.git`. */
  readonly name: string;
  /** The account, organisation or group path that holds it (`stacklane`, `group/subgroup` on GitLab). */
  readonly owner: string;
  /** The host, lower case, without port: `github.com`. */
  readonly host: string;
  /** The URL as written (trimmed). */
  readonly url: string;
  /** The same as `url` (the platform's name for it in its console). */
  readonly value: string;
  /** `GitHub`, `GitLab`, `Bitbucket`, else `Git`. */
  readonly type: string;
  /** Whether the URL is the `git@host:owner/name` (or `ssh://`) form. */
  readonly ssh: boolean;
}

const TYPES: Record<string, string> = { 'github.com': 'GitHub', 'gitlab.com': 'GitLab', 'bitbucket.org': 'Bitbucket' };

// A host name: labels of letters, digits and dashes, or an IPv4 address, with an optional port.
const HOST = /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/i;
const SEGMENT = /^[A-Za-z0-9._~-]+$/;
const MAX_URL = 2048;

/** `path` without its leading and trailing slashes (a scan: `/\/+$/` tries a long run from each slash). */
export function trimSlashes(path: string): string {
  let start = 0;
  let end = path.length;
  while (start < end && path[start] === '/') start++;
  while (end > start && path[end - 1] === '/') end--;
  return path.slice(start, end);
}

function parse(input: unknown): Omit<SourceInfo, 'value' | 'type'> | undefined {
  if (typeof input !== 'string') return undefined;
  const url = input.trim();
  if (url.length === 0 || url.length > MAX_URL || /\s/.test(url)) return undefined;
  let host: string;
  let path: string;
  let ssh = false;
  const scp = /^([A-Za-z0-9._-]+)@([^:/]+):(?!\/)(.+)$/.exec(url);
  if (scp) {
    host = scp[2]!;
    path = scp[3]!;
    ssh = true;
  } else {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return undefined;
    }
    if (!['https:', 'http:', 'ssh:', 'git:'].includes(parsed.protocol) || parsed.search || parsed.hash) return undefined;
    if (parsed.password) return undefined;
    host = parsed.hostname;
    path = decodeURIComponent(parsed.pathname);
    ssh = parsed.protocol === 'ssh:';
  }
  host = host.toLowerCase();
  if (!HOST.test(host) || !host.includes('.') && host !== 'localhost') return undefined;
  const segments = trimSlashes(path).split('/');
  // The web address of a file or branch (`/owner/name/tree/main/…`, `/-/blob/…`) names the repository first.
  const cut = segments.findIndex((s, i) => i >= 2 && (s === '-' || s === 'tree' || s === 'blob' || s === 'src'));
  const repo = cut > 0 ? segments.slice(0, cut) : segments;
  if (repo.length < 2 || !repo.every((s) => SEGMENT.test(s) && s !== '.' && s !== '..')) return undefined;
  // GitHub and Bitbucket have one owner level; GitLab and other hosts may nest groups.
  if ((host === 'github.com' || host === 'bitbucket.org') && repo.length !== 2) return undefined;
  const name = repo[repo.length - 1]!.replace(/\.git$/, '');
  if (name.length === 0) return undefined;
  return { name, owner: repo.slice(0, -1).join('/'), host, url, ssh };
}

function hosted(member: string): () => never {
  return () => {
    throw new LanewayError(
      'LW_SCRIPT_PLATFORM_MODULE',
      `Source.${member}() asks the hosting platform's source service, which this server does not have`,
      { status: 501, expose: true },
    );
  };
}

const Source = Object.freeze({
  /** Whether `url` has the form of a git repository's address (nothing is fetched). */
  isValidURLFormat: (url: unknown): boolean => parse(url) !== undefined,
  /** The repository `url` names; throws when it is not a git repository's address. */
  of: (url: unknown) => {
    const info = parse(url);
    if (info === undefined) throw new TypeError(`Source.of: ${JSON.stringify(String(url)).slice(0, 200)} is not the address of a git repository (https://host/owner/name or git@host:owner/name.git)`);
    return Object.freeze({
      ...info,
      value: info.url,
      type: TYPES[info.host] ?? 'Git',
      exists: hosted('exists'),
      manifest: hosted('manifest'),
      icon: hosted('icon'),
    });
  },
});

const PLATFORM = Object.freeze({ Source });

/** The values of the `'🔌'` module computed locally, by export name. */
export function platformModuleValues(): Readonly<Record<string, unknown>> {
  return PLATFORM;
}
