/**
 * The request function. Every request goes through these steps, in order:
 *
 *   1. split the target into path and query; decode and check the path (400)
 *   2. refuse POST, PUT, PATCH and DELETE sent by pages of other sites (403, cross-origin.ts),
 *      before any body is read or any script runs
 *   3. refuse bodies over the limit by Content-Length (413)
 *   4. look the path up in the router: found / wrong method (405, OPTIONS 204) / nothing (404)
 *   5. run the endpoint and send its Reply (an event stream stays open until it ends)
 *   6. anything unexpected: 500, logged with the request id; the process never goes down
 *
 * `laneway dev` adds a step 0 and a last touch through `DevHooks` (src/dev/); without them, as in
 * production, the function is exactly the steps above.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import { answers, EVENT_DEFAULTS, type App, type ErrorReply, type Reply, type RequestInfo } from '../app/index.js';
import { LanewayError } from '../diag/index.js';
import { allowHeader, splitPath, type ParamValue } from '../router/index.js';
import { checkCrossOrigin } from './cross-origin.js';
import { prefersJson, withRequestId, writeError } from './error-page.js';
import type { Logger } from './log.js';
import type { ClientInfo } from '../shared/index.js';
import { COMMON_HEADERS, sendAsset, sendBody, sendRedirect, sendStored } from './send.js';
import { lazyClient, TrustedProxies } from './proxy.js';

export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * Told of each request the function answers itself (server.ts passes it on; the supervisor's
 * in-flight table and the metrics use it): its id, method and path (never the query), and its
 * response, whose 'close' ends the request. The function writes the route pattern that answers
 * into the returned record once it knows it (nested sites: with the mount's prefix). Without an
 * observer, as by default, it costs one `undefined` check per request.
 */
export type RequestObserver = (id: string, method: string, path: string, res: ServerResponse) => ObservedRequest;

/** What the request function tells an observer after the start of a request. */
export interface ObservedRequest {
  route: string;
}

/** The observer of a nested site's requests: paths and routes get the mount's prefix. */
function underMount(observe: RequestObserver, prefix: string): RequestObserver {
  return (id, method, path, res) => {
    const seen = observe(id, method, prefix + path, res);
    return {
      get route() {
        return seen.route;
      },
      set route(route: string) {
        seen.route = prefix + route;
      },
    };
  };
}

const ID_PREFIX = randomBytes(3).toString('hex');
let counter = 0;

/** A new request id (also for answers written before a request exists, see server.ts). */
export function nextRequestId(): string {
  return `${ID_PREFIX}-${(++counter).toString(36)}`;
}

/** What ends an open event stream when the server stops (server.ts calls each). */
export type StreamStopper = () => void;

/**
 * Development hooks (`laneway dev`, src/dev/): the only way development features reach the request
 * function. Never given in production, where they cost one `undefined` check per reply.
 */
export interface DevHooks {
  /**
   * Step 0, before anything else: answers the development endpoints (`/__/dev/…`), and every
   * request while the app does not compile (the error overlay). Returns the status sent, or a
   * Promise of it settled when the answer ends (an event stream); undefined lets the app answer.
   * Called by the top-level app's request function only (nested sites are under it).
   */
  intercept?(req: IncomingMessage, res: ServerResponse, id: string): number | Promise<number> | undefined;
  /**
   * The last touch on every reply before it is sent: HTML pages get the live-reload client (and
   * its sources in their policy), errors of 500 and more become the error overlay. `root`: the
   * directory of the app that answered (a nested site's own); `error`: what was thrown, for the
   * answer to an unexpected error (step 6). Returns the reply to send.
   */
  decorate(reply: Reply, request: Pick<RequestInfo, 'id' | 'method' | 'path' | 'headers' | 'acceptsJson'>, context: { root: string; error?: unknown }): Reply;
}

/**
 * `streams`: where open event streams register their stopper while they are open (server.ts).
 * `devHooks`: development only (see DevHooks). `observe`: see RequestObserver. `trust`: the
 * proxies whose forwarding headers are believed (proxy.ts; default: nobody).
 */
export function createHandler(app: App, logger: Logger, streams?: Set<StreamStopper>, devHooks?: DevHooks, observe?: RequestObserver, trust: TrustedProxies = TrustedProxies.none): RequestHandler {
  const bodyLimit = app.options.bodyLimit;
  const trustedOrigins: ReadonlySet<string> = new Set(app.settings.trustedOrigins);
  const eventSettings = app.settings.events;

  function requestInfo(req: IncomingMessage, id: string, path: string, query: string, params: ParamValue[], client: () => ClientInfo): RequestInfo {
    let body: Promise<Buffer> | undefined;
    return {
      client,
      id,
      method: req.method ?? 'GET',
      path,
      query,
      headers: req.headers,
      params,
      acceptsJson: prefersJson(req.headers.accept),
      readBody: () => (body ??= readBody(req, bodyLimit)),
    };
  }

  /** Sends an error answer; 404s use the nearest ⚡NotFound.html unless the client wants JSON. */
  async function sendError(req: IncomingMessage, res: ServerResponse, error: ErrorReply, dir: string, info: RequestInfo, extra?: Record<string, string>): Promise<number> {
    if (error.status === 404 && !info.acceptsJson) {
      const page = app.notFoundPage(dir);
      if (page) {
        const reply = await page.render(info);
        return sendReply(req, res, reply, dir, info);
      }
    }
    // A server error's page names the request id the log line has, when its message does not
    // already (docs/cli.md "`laneway dev DIR`").
    return writeError(req, res, error, { ...extra, 'X-Request-Id': info.id }, info.id);
  }

  function sendReply(req: IncomingMessage, res: ServerResponse, reply: Reply, dir: string, info: RequestInfo): number | Promise<number> {
    // Development (DevHooks): the live-reload client on pages, the overlay for errors.
    if (devHooks) reply = devHooks.decorate(reply, info, { root: app.root });
    reply = withRequestId(reply, info.id);
    switch (reply.type) {
      case 'asset':
        return sendAsset(req, res, reply.asset, reply.status, reply.headers);
      case 'body':
        return sendBody(req, res, reply.status, reply.contentType, reply.body, { etag: reply.etag, headers: reply.headers });
      case 'redirect':
        return sendRedirect(req, res, reply.status, reply.location, reply.headers);
      case 'error':
        return sendError(req, res, reply, dir, info);
      case 'events':
        return sendEvents(req, res, reply);
    }
  }

  /**
   * An event stream (app/events.ts): the head at once, never compressed or stored, then whatever
   * the stream writes until it ends, the client goes away, or the server stops. Settles when the
   * connection closes, so the access log line gives the stream's duration.
   */
  function sendEvents(req: IncomingMessage, res: ServerResponse, reply: Extract<Reply, { type: 'events' }>): number | Promise<number> {
    res.writeHead(200, { ...COMMON_HEADERS, ...reply.headers, 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store', 'X-Accel-Buffering': 'no' });
    if (req.method === 'HEAD') {
      res.end();
      return 200;
    }
    res.flushHeaders();
    return new Promise((resolve) => {
      // The client left while the script set the stream up: nothing is opened, nothing polled.
      if (res.destroyed) return resolve(200);
      let stop: ((reason: 'gone' | 'shutdown') => void) | undefined;
      const shutdown: StreamStopper = () => stop?.('shutdown');
      const closed = (): void => {
        streams?.delete(shutdown);
        stop?.('gone');
        resolve(200);
      };
      res.once('close', closed);
      streams?.add(shutdown);
      stop = reply.open({ write: (text) => res.write(text), onDrain: (listener) => res.once('drain', listener), end: () => res.end() }, eventSettings);
    });
  }

  /** Event streams of this app open now (and being set up): at most `maxStreams`. */
  let openStreams = 0;
  const maxStreams = eventSettings?.maxStreams ?? EVENT_DEFAULTS.maxStreams;

  /**
   * Whether an event stream may start (counted from before its script runs until its connection
   * closes): a crowd of clients gets 503s, not a crowd of transactions and polls.
   */
  function admitStream(req: IncomingMessage, res: ServerResponse): boolean {
    if (req.method === 'HEAD') return true;
    if (openStreams >= maxStreams) return false;
    openStreams++;
    res.once('close', () => openStreams--);
    return true;
  }


  /** The client address of the access log: after the trusted proxies, worked out only when logged. */
  function logged(req: IncomingMessage, client: (() => ClientInfo) | undefined): string | undefined {
    if (logger.format !== 'json') return undefined;
    return client ? client().address : trust.empty ? req.socket?.remoteAddress?.replace(/^::ffff:(?=\d+\.)/i, '') : trust.client(req).address;
  }

  function fail(req: IncomingMessage, res: ServerResponse, id: string, err: unknown, start: number, path: string, client?: () => ClientInfo): void {
    const status = err instanceof LanewayError ? err.status : 500;
    if (status >= 500) logger.error(err instanceof Error ? err.message : String(err), { id, method: req.method, path, stack: err instanceof Error ? err.stack : undefined });
    if (res.headersSent) {
      res.destroy();
    } else {
      const code = err instanceof LanewayError ? err.code : 'LW_HTTP_INTERNAL';
      const error: ErrorReply = err instanceof LanewayError && err.expose ? { type: 'error', status, code, message: err.message } : { ...answers.internalError(id, code), status };
      const headers: Record<string, string> = { 'X-Request-Id': id };
      if (status === 413) headers['Connection'] = 'close';
      // Development (DevHooks): the overlay, with what was thrown, instead of the generic page.
      const page = devHooks?.decorate(error, { id, method: req.method ?? 'GET', path, headers: req.headers, acceptsJson: prefersJson(req.headers.accept) }, { root: app.root, error: err });
      if (page?.type === 'body') sendBody(req, res, page.status, page.contentType, page.body, { headers: { ...page.headers, ...headers } });
      else writeError(req, res, error, headers);
    }
    logger.access({ id, method: req.method ?? '', path, status, ms: performance.now() - start, client: logged(req, client) });
  }

  // Nested sites: requests under `prefix/` are answered by the child app's own request function.
  // They share the development hooks, but not step 0 (the top-level app's handler took it).
  const childHooks: DevHooks | undefined = devHooks && { decorate: devHooks.decorate };
  const children = app.mounts.map((m) => {
    const prefix = m.prefix.split('/').map(encodeURIComponent).join('/');
    return { prefix, handle: createHandler(m.app, logger, streams, childHooks, observe && underMount(observe, prefix), trust) };
  });

  return function handle(req, res) {
    const start = performance.now();
    const id = nextRequestId();
    const method = req.method ?? 'GET';
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const rawPath = q === -1 ? url : url.slice(0, q);
    const query = q === -1 ? '' : url.slice(q + 1);
    // 0. Development only (DevHooks): /__/dev/…, or the overlay of an app that does not compile.
    const intercepted = devHooks?.intercept?.(req, res, id);
    if (intercepted !== undefined) {
      const log = (status: number) => logger.access({ id, method, path: rawPath, status, ms: performance.now() - start });
      if (typeof intercepted === 'number') log(intercepted);
      else intercepted.then(log, (err) => fail(req, res, id, err, start, rawPath, client));
      return;
    }
    for (let i = 0; i < children.length; i++) {
      const child = children[i]!;
      if (rawPath.startsWith(child.prefix + '/')) {
        req.url = url.slice(child.prefix.length);
        return child.handle(req, res);
      }
      if (rawPath === child.prefix) {
        res.writeHead(301, { ...COMMON_HEADERS, Location: child.prefix + '/' + (q === -1 ? '' : url.slice(q)), 'X-Request-Id': id });
        res.end();
        logger.access({ id, method, path: rawPath, status: 301, ms: performance.now() - start });
        return;
      }
    }
    // The observer (RequestObserver: in-flight table, metrics) learns of requests this app answers.
    const seen = observe?.(id, method, rawPath, res);
    // Who sent it (proxy.ts), worked out when first asked for: a static file never asks.
    const client = lazyClient(trust, req);
    const done = (status: number) => logger.access({ id, method, path: rawPath, status, ms: performance.now() - start, client: logged(req, client) });
    try {
      // 1. Path.
      const path = splitPath(rawPath);
      if (!path.ok) {
        done(writeError(req, res, answers.badPath(path.reason), { 'X-Request-Id': id }));
        return;
      }
      // 2. Cross-site writes.
      const headers = req.headers;
      if (method !== 'GET' && method !== 'HEAD') {
        const verdict = checkCrossOrigin({ method, secFetchSite: headers['sec-fetch-site'], origin: headers.origin, host: trust.empty ? headers.host : client().host }, trustedOrigins);
        if (!verdict.allowed) {
          done(writeError(req, res, answers.crossOriginRefused(), { 'X-Request-Id': id }));
          return;
        }
      }
      // 2b. Images of the app's records (app/images.ts): uploads carry their own size limit (10 MB).
      const images = app.data?.images;
      if (images && rawPath.startsWith('/__/images/')) {
        if (seen) seen.route = '/__/images/';
        const length = headers['content-length'];
        images
          .answer(method, rawPath, new URLSearchParams(query), length === undefined ? undefined : Number(length), (limit) => readBody(req, limit))
          .then((a) =>
            'error' in a
              ? writeError(req, res, { status: a.status, message: a.error }, { ...a.headers, 'X-Request-Id': id })
              : 'image' in a
                ? sendStored(req, res, a.contentType, a.image, a.etag, { ...a.headers, 'X-Request-Id': id })
                : sendBody(req, res, a.status, a.contentType, a.body, { headers: { ...a.headers, 'X-Request-Id': id } }),
          )
          .then(done, (err) => fail(req, res, id, err, start, rawPath, client));
        return;
      }
      // 2c. Sign-in and sign-out (app/auth.ts): POST to start, the provider's callback, sign-out.
      const auth = app.data?.auth;
      if (auth && rawPath.startsWith('/__/auth/')) {
        if (seen) seen.route = '/__/auth/';
        auth
          .answer(method, rawPath, new URLSearchParams(query), headers, client())
          .then((a) => {
            if ('location' in a) {
              res.writeHead(303, { ...COMMON_HEADERS, ...a.headers, Location: a.location, 'X-Request-Id': id });
              res.end();
              return 303;
            }
            // A failure at the provider names it and the step (docs/users.md "Signing in"); the
            // visitor's own mistakes (an expired or replayed callback) are logged at 500 and up only.
            const f = a.failure;
            if (f) {
              const line = `sign-in with ${f.provider} failed at ${f.step}: ${a.error}`;
              const fields = { id, code: a.code, provider: f.provider, step: f.step, detail: f.detail };
              if (a.status >= 500) logger.error(line, fields);
              else logger.info(line, fields);
            } else if (a.status >= 500) logger.error(`sign-in: ${a.error}`, { id, code: a.code });
            return writeError(req, res, { status: a.status, message: a.error }, { ...a.headers, 'Cache-Control': 'no-store', 'X-Request-Id': id });
          })
          .then(done, (err) => fail(req, res, id, err, start, rawPath, client));
        return;
      }
      // 3. Body size known in advance.
      const length = req.headers['content-length'];
      if (length !== undefined && Number(length) > bodyLimit) {
        throw answers.bodyTooLarge(bodyLimit);
      }
      // 4. Route.
      const match = app.router.match(method, path);
      if (match.kind === 'found') {
        if (seen) seen.route = match.value.pattern;
        // 5. Run. Fast path: endpoints with a ready Reply (static files) answer synchronously.
        const info = requestInfo(req, id, path.key, query, match.params, client);
        if (match.value.kind === 'events' && !admitStream(req, res)) {
          const sent = sendReply(req, res, answers.tooManyStreams(), match.value.dir, info);
          if (!(sent instanceof Promise)) return done(sent);
          sent.then(done, (err) => fail(req, res, id, err, start, rawPath, client));
          return;
        }
        const result = match.value.handle(info);
        if (!(result instanceof Promise)) {
          const sent = sendReply(req, res, result, match.value.dir, info);
          if (!(sent instanceof Promise)) return done(sent);
          sent.then(done, (err) => fail(req, res, id, err, start, rawPath, client));
          return;
        }
        result
          .then((reply) => sendReply(req, res, reply, match.value.dir, info))
          .then(done, (err) => fail(req, res, id, err, start, rawPath, client));
        return;
      }
      if (match.kind === 'method') {
        const allow = allowHeader(match.allowed);
        if (method === 'OPTIONS') {
          res.writeHead(204, { ...COMMON_HEADERS, Allow: allow });
          res.end();
          return done(204);
        }
        const info = requestInfo(req, id, path.key, query, [], client);
        sendError(req, res, answers.methodNotAllowed(), '', info, { Allow: allow })
          .then(done, (err) => fail(req, res, id, err, start, rawPath, client));
        return;
      }
      const info = requestInfo(req, id, path.key, query, [], client);
      sendError(req, res, answers.notFound(), match.dir, info)
        .then(done, (err) => fail(req, res, id, err, start, rawPath, client));
    } catch (err) {
      // 6. Unexpected.
      fail(req, res, id, err, start, rawPath, client);
    }
  };
}

/** Reads a request body up to `limit` bytes; past it, rejects with 413 and stops reading. */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    // The client went away before the body was asked for: Node has destroyed the request and will
    // send no more events, so settle now rather than wait forever.
    if (req.destroyed && !req.readableEnded) {
      reject(answers.bodyCutOff());
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.off('data', onData);
        req.pause();
        reject(answers.bodyTooLarge(limit));
        return;
      }
      chunks.push(chunk);
    };
    let ended = false;
    req.on('data', onData);
    req.once('end', () => {
      ended = true;
      resolve(Buffer.concat(chunks));
    });
    // A client that goes away mid-body ('error' "aborted", or just 'close'): settle, never hang.
    const cutOff = () => {
      if (!ended) reject(answers.bodyCutOff());
    };
    req.once('error', cutOff);
    req.once('close', cutOff);
  });
}
