// The headers Laneway sends with a JSON answer (src/http/send.ts), for the bare baselines: the two
// servers of a scenario must put the same bytes on the wire.
import { createHash } from 'node:crypto';

export function jsonHeaders(body) {
  const headers = {
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'strict-origin-when-cross-origin',
    'Content-Type': 'application/json; charset=utf-8',
    'Cache-Control': 'no-cache',
    ETag: '"' + createHash('sha1').update(body).digest('base64url') + '"',
  };
  if (body.length >= 1024) headers['Vary'] = 'Accept-Encoding';
  headers['Content-Length'] = body.length;
  return headers;
}
