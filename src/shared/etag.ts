/**
 * The strong ETag of a generated body (docs/routing.md; views and scripts send one too): the SHA-1 of its bytes, in
 * base64url, quoted. One call of `crypto.hash`, which makes no Hash object: about a third cheaper
 * than `createHash` on a page of a few kilobytes.
 */
import { hash } from 'node:crypto';

export function strongEtag(body: string | Buffer): string {
  return '"' + hash('sha1', body, 'base64url') + '"';
}

/** The same digest, unquoted (keys of caches of bodies). */
export function bodyDigest(body: string | Buffer): string {
  return hash('sha1', body, 'base64url');
}
