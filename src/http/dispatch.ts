/**
 * `dispatch`: a request to an app, answered as a Reply, with no socket in sight (handler.ts sends
 * the Reply; inject.ts runs it in tests). Every request goes through these steps, in order:
 *
 *   1. a nested site's requests go to its own app (its prefix taken off the path)
 *   2. split the target into path and query; decode and check the path (400)
 *   3. refuse POST, PUT, PATCH and DELETE sent by pages of other sites (403, cross-origin.ts),
 *      before any body is read or any script runs
 *   4. look the path up in the route table: found / wrong method (405, OPTIONS 204) / nothing (404)
 *   5. refuse bodies over the limit by Content-Length (413), unless the endpoint checks its own
 *   6. an event stream over the app's number of open streams: 503 before its script runs
 *   7. run the endpoint's route (app/request/pipeline.ts: sign-in, path parameters, permissions, the
 *      endpoint, a nested site's rewrite)
 *   8. a 404, of the route table or of the endpoint: the nearest ⚡NotFound.html, unless the client
 *      wants JSON
 *
 * What it throws (or rejects with) is the request function's step "unexpected" (handler.ts).
 */
import type { IncomingHttpHeaders } from 'node:http';
import { answers, EVENT_DEFAULTS, type App, type Reply, type RequestInfo } from '../app/index.js';
import { allowHeader, splitPath, type ParamValue } from '../router/index.js';
import type { ClientInfo } from '../shared/index.js';
import { checkCrossOrigin } from './cross-origin.js';
import { prefersJson } from './error-page.js';

/** A request as `dispatch` takes it: what arrived, and the few things only the connection knows. */
export interface Exchange {
  id: string;
  method: string;
  /** The request target as sent: the path, and `?` and the query when there is one. */
  url: string;
  headers: IncomingHttpHeaders;
  /** Who sent the request (proxy.ts), worked out on first call. */
  client?: (() => ClientInfo) | undefined;
  /** Whether `client` comes from a trusted proxy's headers (else it is the connection and `Host`). */
  forwarded?: boolean;
  /** Reads the body, at most `limit` bytes (rejects with a 413 LanewayError past it). */
  readBody(limit: number): Promise<Buffer>;
  /** The body as it arrives (RequestInfo.bodyStream); absent without a connection. */
  bodyStream?: (() => AsyncIterable<Buffer>) | undefined;
  /** Calls `listener` once the connection closes (the count of open event streams). */
  onClose(listener: () => void): void;
  /** Told the route pattern that answers, once known (a nested site's: with its prefix). */
  seen?: { route: string } | undefined;
}

/** What `dispatch` answered, and which app did (a nested site answers with its own). */
export interface Dispatched {
  reply: Reply | Promise<Reply>;
  app: App;
  /** The request as the app's endpoints saw it. */
  request: RequestInfo;
}

/** What dispatch keeps per app: read from its settings once. */
interface AppState {
  trustedOrigins: ReadonlySet<string>;
  maxStreams: number;
  /** Event streams of this app open now (and being set up), in this process. */
  openStreams: number;
  /** Nested sites: their prefix as it appears in a request path (percent-encoded). */
  children: Array<{ prefix: string; app: App }>;
}

const states = new WeakMap<App, AppState>();

function stateOf(app: App): AppState {
  let state = states.get(app);
  if (!state) {
    state = {
      trustedOrigins: new Set(app.settings.trustedOrigins),
      maxStreams: app.settings.events?.maxStreams ?? EVENT_DEFAULTS.maxStreams,
      openStreams: 0,
      children: app.mounts.map((m) => ({ prefix: m.prefix.split('/').map(encodeURIComponent).join('/'), app: m.app })),
    };
    states.set(app, state);
  }
  return state;
}

/** Answers a request to `app` (steps 1 to 8 above). `mounted`: the prefix of the nested site `app` is, for `seen`. */
export function dispatch(app: App, ex: Exchange, mounted = ''): Dispatched {
  const state = stateOf(app);
  const url = ex.url;
  const q = url.indexOf('?');
  const rawPath = q === -1 ? url : url.slice(0, q);
  const query = q === -1 ? '' : url.slice(q + 1);
  // 1. Nested sites.
  for (const child of state.children) {
    if (rawPath.startsWith(child.prefix + '/')) return dispatch(child.app, { ...ex, url: url.slice(child.prefix.length) }, mounted + child.prefix);
    if (rawPath === child.prefix) {
      const reply: Reply = { type: 'redirect', status: 301, location: child.prefix + '/' + (q === -1 ? '' : url.slice(q)) };
      return { reply, app, request: requestOf(app, ex, rawPath, query, []) };
    }
  }
  // 2. Path.
  const path = splitPath(rawPath);
  if (!path.ok) return { reply: answers.badPath(path.reason), app, request: requestOf(app, ex, rawPath, query, []) };
  // 3. Cross-site writes.
  const method = ex.method;
  const headers = ex.headers;
  if (method !== 'GET' && method !== 'HEAD') {
    const host = ex.forwarded && ex.client ? ex.client().host : headers.host;
    const verdict = checkCrossOrigin({ method, secFetchSite: headers['sec-fetch-site'], origin: headers.origin, host }, state.trustedOrigins);
    if (!verdict.allowed) return { reply: answers.crossOriginRefused(), app, request: requestOf(app, ex, path.key, query, []) };
  }
  // 4. Route.
  const match = app.router.match(method, path);
  if (match.kind === 'found') {
    const endpoint = match.value;
    if (ex.seen) ex.seen.route = mounted + endpoint.pattern;
    const request = requestOf(app, ex, path.key, query, match.params);
    // 5. Body size known in advance.
    if (!endpoint.ownBodyLimit) tooLarge(app, headers);
    // 6. Event streams.
    if (endpoint.kind === 'events' && !admitStream(state, ex)) return { reply: answers.tooManyStreams(), app, request };
    // 7. Run. Fast path: endpoints with a ready Reply (static files) answer synchronously.
    const reply = endpoint.handle(request);
    return { reply: endpoint.kind === 'service' ? reply : notFoundPage(app, endpoint.dir, request, reply), app, request };
  }
  tooLarge(app, headers);
  const request = requestOf(app, ex, path.key, query, []);
  if (match.kind === 'method') {
    const allow = allowHeader(match.allowed);
    if (method === 'OPTIONS') return { reply: { type: 'body', status: 204, contentType: '', body: '', headers: { Allow: allow } }, app, request };
    return { reply: { ...answers.methodNotAllowed(), headers: { Allow: allow } }, app, request };
  }
  // 8. Nothing answers this path.
  return { reply: notFoundPage(app, match.dir, request, answers.notFound()), app, request };
}

/** Step 5: throws 413 when Content-Length is over the app's body limit. */
function tooLarge(app: App, headers: IncomingHttpHeaders): void {
  const length = headers['content-length'];
  if (length !== undefined && Number(length) > app.options.bodyLimit) throw answers.bodyTooLarge(app.options.bodyLimit);
}

/** The request as endpoints see it: one object, which the route's steps complete (app/request/pipeline.ts). */
function requestOf(app: App, ex: Exchange, path: string, query: string, params: ParamValue[]): RequestInfo {
  let body: Promise<Buffer> | undefined;
  const limit = app.options.bodyLimit;
  // One object literal of a fixed shape (a spread here would make every request's object a slow one).
  return {
    client: ex.client,
    id: ex.id,
    method: ex.method,
    path,
    query,
    headers: ex.headers,
    params,
    acceptsJson: prefersJson(ex.headers.accept),
    readBody: (own?: number) => (body ??= ex.readBody(own ?? limit)),
    bodyStream: ex.bodyStream,
  };
}

/**
 * Step 6: whether an event stream may start (counted from before its script runs until its
 * connection closes): a crowd of clients gets 503s, not a crowd of transactions and polls.
 */
function admitStream(state: AppState, ex: Exchange): boolean {
  if (ex.method === 'HEAD') return true;
  if (state.openStreams >= state.maxStreams) return false;
  state.openStreams++;
  ex.onClose(() => state.openStreams--);
  return true;
}

/** Step 8: a 404 answer becomes the nearest ⚡NotFound.html of `dir`, for a client that does not want JSON. */
function notFoundPage(app: App, dir: string, request: RequestInfo, reply: Reply | Promise<Reply>): Reply | Promise<Reply> {
  if (reply instanceof Promise) return reply.then((r) => notFoundPage(app, dir, request, r));
  if (reply.type !== 'error' || reply.status !== 404 || request.acceptsJson) return reply;
  const page = app.notFoundPage(dir);
  if (!page) return reply;
  // The page runs as a request of its own: not with what the endpoint's steps gave the request.
  const { client, id, method, path, query, headers, params, acceptsJson, readBody } = request;
  return page.render({ client, id, method, path, query, headers, params, acceptsJson, readBody });
}

