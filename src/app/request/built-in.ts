/**
 * The built-in endpoints of an app with a store, ordinary routes of its route table
 * (docs/architecture.md "A request, step by step"): `/__/images/*`, the images of its records
 * (docs/images.md), and `/__/auth/*`, signing in and out (docs/users.md "Signing in"). Both are
 * answered by services the store's opening makes (AppData `images`, `auth`); until then, or in an
 * app without them, their paths are not found.
 */
import type { Code } from '../../diag/index.js';
import type { Method, RouteSpec } from '../../router/index.js';
import { notFound } from '../endpoint/answers.js';
import type { AppData } from '../services/data.js';
import { clientOf, type Endpoint, type Reply, type RequestInfo } from '../endpoint/endpoint.js';
import { UPLOAD_MAX_BYTES } from '../../images/index.js';
import { checkLimit } from './limits.js';

const METHODS: readonly Method[] = ['GET', 'POST', 'PUT', 'DELETE'];

/** The routes of the built-in endpoints: every method goes to the service, which answers 405 itself. */
export function builtInRoutes(data: AppData): Array<{ spec: RouteSpec; value: Endpoint }> {
  const routes: Array<{ spec: RouteSpec; value: Endpoint }> = [];
  for (const [name, handle] of [
    ['images', (req: RequestInfo) => answerImages(data, req)],
    ['auth', (req: RequestInfo) => answerAuth(data, req)],
  ] as const) {
    const file = `/__/${name}/`;
    for (const method of METHODS) {
      const spec: RouteSpec = { method, segments: [{ type: 'literal', value: '__' }, { type: 'literal', value: name }, { type: 'rest' }], trailingSlash: false, kind: 'service', file };
      routes.push({ spec, value: { kind: 'service', method, pattern: `/__/${name}/`, file, dir: '', ...(name === 'images' && { ownBodyLimit: true as const }), handle } });
    }
  }
  return routes;
}

/** `/__/images/…`: uploads carry their own size limit (docs/images.md). */
async function answerImages(data: AppData, req: RequestInfo): Promise<Reply> {
  const images = data.images;
  if (!images) return notFound();
  const length = req.headers['content-length'];
  // The limit of uploaded bytes (docs/security.md "Limits per visitor"). Their number counted when
  // the script made the address (`newPutUrl`, endpoints.ts): an address takes one PUT.
  const bytes = data.limiter.rule('upload-mb');
  const admit = bytes && ((size: number) => checkLimit(data.limiter, bytes, req, size));
  // The body as it arrives (docs/images.md): a request made without a connection has it whole.
  const body = req.bodyStream ?? (async function* () {
    yield await req.readBody(UPLOAD_MAX_BYTES);
  });
  const a = await images.answer(req.method, req.path, new URLSearchParams(req.query), length === undefined ? undefined : Number(length), body, undefined, admit);
  // Refused before the body was read to its end: the connection cannot carry another request.
  if ('refused' in a) return { ...a.refused, headers: { ...a.refused.headers, Connection: 'close' } };
  if ('error' in a) return { type: 'error', status: a.status, code: 'LW_IMAGE_STORE', message: a.error, ...(a.headers && { headers: a.headers }) };
  if ('image' in a) return { type: 'stored', contentType: a.contentType, stored: a.image, etag: a.etag, headers: a.headers };
  return { type: 'body', status: a.status, contentType: a.contentType, body: a.body, headers: a.headers };
}

/** `/__/auth/…`: a POST starts a sign-in, the provider's callback finishes it, a POST signs out. */
async function answerAuth(data: AppData, req: RequestInfo): Promise<Reply> {
  const auth = data.auth;
  if (!auth) return notFound();
  // The limit of sign-in starts (docs/security.md "Limits per visitor").
  const starts = data.limiter.rule('sign-ins');
  const a = await auth.answer(req.method, req.path, new URLSearchParams(req.query), req.headers, clientOf(req), starts && (() => checkLimit(data.limiter, starts, req)));
  if ('refused' in a) return a.refused;
  if ('location' in a) return { type: 'redirect', status: 303, location: a.location, headers: a.headers };
  // A failure at the provider names it and the step (docs/users.md "Signing in"); the visitor's
  // own mistakes (an expired or replayed callback) are logged at 500 and up only.
  const f = a.failure;
  const log: Extract<Reply, { type: 'error' }>['log'] = f
    ? { level: a.status >= 500 ? 'error' : 'info', message: `sign-in with ${f.provider} failed at ${f.step}: ${a.error}`, fields: { id: req.id, code: a.code, provider: f.provider, step: f.step, detail: f.detail } }
    : a.status >= 500
      ? { level: 'error', message: `sign-in: ${a.error}`, fields: { id: req.id, code: a.code } }
      : undefined;
  return { type: 'error', status: a.status, code: a.code as Code, message: a.error, headers: { ...a.headers, 'Cache-Control': 'no-store' }, ...(log && { log }) };
}
