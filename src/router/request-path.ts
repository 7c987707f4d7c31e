/**
 * Turning the path of a request line into route segments, safely.
 *
 * Each segment is percent-decoded exactly once, then normalised like file names (NFC, U+FE0F
 * removed). Segments that could change the meaning of the path after decoding are rejected:
 * an encoded `/` or `\`, a NUL, `.` and `..`, an empty segment (`//`), and malformed escapes
 * (which includes overlong UTF-8 such as `%C0%AE`, since decodeURIComponent refuses it).
 * The router never touches the file system with these segments; this is the first of two walls.
 */
import { normalizeName } from '../shared/index.js';

export type SplitPath =
  | { ok: true; segments: string[]; trailingSlash: boolean; key: string }
  | { ok: false; reason: string };

/** The characters of a plain segment besides `.`: letters, digits and the sub-delimiters that need no escape. */
const PLAIN_CHAR = new Uint8Array(128);
for (const c of "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_~!$&'()*+,;=:@-") PLAIN_CHAR[c.charCodeAt(0)] = 1;

/**
 * The segments of a path (starting with `/`) that is already canonical: only plain characters,
 * segments not empty, and a `.` only between two plain characters (no `.`/`..` segments); else
 * undefined. One pass over the characters, never more: a regular expression for this shape
 * backtracked, and a long path with a bad byte at its end then held the event loop for minutes
 * (docs/security.md). The segments are cut in the same pass (`split` on a fresh string costs
 * several times as much).
 */
function plainSegments(raw: string): string[] | undefined {
  const segments: string[] = [];
  let prev = 47; // the leading /
  let from = 1;
  for (let i = 1; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (c === 47 /* / */ || c === 46 /* . */) {
      if (prev === 47 || prev === 46) return undefined;
      if (c === 47) {
        segments.push(raw.slice(from, i));
        from = i + 1;
      }
    } else if (c >= 128 || PLAIN_CHAR[c] !== 1) return undefined;
    prev = c;
  }
  if (prev === 46) return undefined;
  if (from < raw.length) segments.push(raw.slice(from));
  return segments;
}

/**
 * Splits the path part of a request target (no query). `key` is the canonical decoded form
 * (`/a/b`, `/a/`), used for the router's table of paths without parameters.
 */
export function splitPath(raw: string): SplitPath {
  if (raw.charCodeAt(0) !== 47 /* / */) return { ok: false, reason: 'the path must start with /' };
  // Fast path: plain ASCII paths with no escapes, no dot segments and no empty segments are
  // already canonical.
  const plain = plainSegments(raw);
  if (plain !== undefined) return { ok: true, segments: plain, trailingSlash: raw.length > 1 && raw.charCodeAt(raw.length - 1) === 47, key: raw };
  if (raw.includes('\\')) return { ok: false, reason: 'backslashes are not allowed in paths' };
  const parts = raw.slice(1).split('/');
  let trailingSlash = false;
  if (parts.length > 1 && parts[parts.length - 1] === '') {
    parts.pop();
    trailingSlash = true;
  }
  if (parts.length === 1 && parts[0] === '') parts.pop();
  const segments: string[] = [];
  for (const part of parts) {
    if (part === '') return { ok: false, reason: 'empty path segment' };
    let decoded: string;
    try {
      decoded = decodeURIComponent(part);
    } catch {
      return { ok: false, reason: 'malformed percent-encoding' };
    }
    if (decoded.includes('/') || decoded.includes('\\')) return { ok: false, reason: 'encoded slash in path' };
    if (decoded.includes('\0')) return { ok: false, reason: 'NUL in path' };
    const name = normalizeName(decoded);
    if (name === '.' || name === '..') return { ok: false, reason: 'dot segment in path' };
    if (name === '') return { ok: false, reason: 'empty path segment' };
    segments.push(name);
  }
  const key = '/' + segments.join('/') + (trailingSlash && segments.length ? '/' : '');
  return { ok: true, segments, trailingSlash: trailingSlash && segments.length > 0, key };
}
