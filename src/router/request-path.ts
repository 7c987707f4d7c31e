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

const PLAIN_PATH = /^\/(?:[A-Za-z0-9_~!$&'()*+,;=:@-]+(?:\.[A-Za-z0-9_~!$&'()*+,;=:@-]+)*\/?)*$/;

/**
 * Splits the path part of a request target (no query). `key` is the canonical decoded form
 * (`/a/b`, `/a/`), used for the router's table of paths without parameters.
 */
export function splitPath(raw: string): SplitPath {
  if (raw.charCodeAt(0) !== 47 /* / */) return { ok: false, reason: 'the path must start with /' };
  // Fast path: plain ASCII paths with no escapes, no dot segments and no empty segments are
  // already canonical.
  if (PLAIN_PATH.test(raw)) {
    const trailingSlash = raw.length > 1 && raw.endsWith('/');
    const body = raw.slice(1, trailingSlash ? -1 : undefined);
    return { ok: true, segments: body === '' ? [] : body.split('/'), trailingSlash, key: raw };
  }
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
