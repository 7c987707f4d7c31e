/**
 * The request function: a request off the socket, answered by `dispatch` (dispatch.ts, which lists
 * the steps of every request), its Reply sent by `send`. Around them:
 *
 *   0. `laneway dev` adds a step 0 and a last touch through `DevHooks` (src/dev/); without them, as
 *      in production, the function is exactly the steps below
 *   1. a request id, and the observer (in-flight table, metrics) told of the request
 *   2. dispatch, then send; an answer that waits (a script, a store read) is sent when it settles
 *   3. anything unexpected: 500, logged with the request id; the process never goes down
 *   4. one access-log line per request, when its answer is written
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import { answers, type App, type ErrorReply, type EventSettings, type Reply, type RequestInfo } from '../app/index.js';
import { LanewayError } from '../diag/index.js';
import { dispatch, type Dispatched } from './dispatch.js';
import { prefersJson, withRequestId, writeError } from './error-page.js';
import type { Logger } from './log.js';
import type { ClientInfo } from '../shared/index.js';
import { COMMON_HEADERS, sendAsset, sendBody, sendRedirect, sendStored } from './send.js';
import { lazyClient, TrustedProxies } from './proxy.js';
import { bodyPending, lingerAfterAnswer } from './linger.js';

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
  /** The kind of limit per visitor that refused the request (429), when one did. */
  limit?: string;
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
  /** The client address of the access log: after the trusted proxies, worked out only when logged. */
  function logged(req: IncomingMessage, client: (() => ClientInfo) | undefined): string | undefined {
    if (logger.format !== 'json') return undefined;
    return client ? client().address : trust.empty ? req.socket?.remoteAddress?.replace(/^::ffff:(?=\d+\.)/i, '') : trust.client(req).address;
  }

  /** Step 2's second half: development's last touch, then the reply on the wire. */
  function sendReply(req: IncomingMessage, res: ServerResponse, d: Dispatched, reply: Reply, seen: ObservedRequest | undefined): number | Promise<number> {
    // Development (DevHooks): the live-reload client on pages, the overlay for errors.
    if (devHooks) reply = devHooks.decorate(reply, d.request, { root: d.app.root });
    if (reply.type === 'error') {
      if (reply.log) logger[reply.log.level](reply.log.message, reply.log.fields);
      if (reply.limit !== undefined && seen) seen.limit = reply.limit;
    }
    const sent = send(req, res, reply, d.request.id, { streams, events: d.app.settings.events, dev: d.app.options.dev === true });
    // Answered before the body ended: a close that follows lets the client read the answer (linger.ts).
    if (bodyPending(req)) lingerAfterAnswer(req);
    return sent;
  }

  function fail(req: IncomingMessage, res: ServerResponse, id: string, err: unknown, start: number, path: string, client?: () => ClientInfo): void {
    const status = err instanceof LanewayError ? err.status : 500;
    if (status >= 500) logger.error(err instanceof Error ? err.message : String(err), { id, method: req.method, path, stack: err instanceof Error ? err.stack : undefined });
    if (res.headersSent) {
      res.destroy();
    } else {
      const code = err instanceof LanewayError ? err.code : 'LW_HTTP_INTERNAL';
      const error: ErrorReply = err instanceof LanewayError && err.expose ? { type: 'error', status, code, message: err.message } : { ...answers.internalError(id, code), status };
      if (app.options.dev && err instanceof Error) error.site = answers.failureSite(err as LanewayError);
      const headers: Record<string, string> = { 'X-Request-Id': id };
      if (status === 413) headers['Connection'] = 'close';
      // Development (DevHooks): the overlay, with what was thrown, instead of the generic page.
      const page = devHooks?.decorate(error, { id, method: req.method ?? 'GET', path, headers: req.headers, acceptsJson: prefersJson(req.headers.accept) }, { root: app.root, error: err });
      if (page?.type === 'body') sendBody(req, res, page.status, page.contentType, page.body, { headers: { ...page.headers, ...headers } });
      else writeError(req, res, error, headers, undefined, app.options.dev === true);
      if (bodyPending(req)) lingerAfterAnswer(req);
    }
    logger.access({ id, method: req.method ?? '', path, status, ms: performance.now() - start, client: logged(req, client) });
  }

  return function handle(req, res) {
    const start = performance.now();
    // 1. The request id.
    const id = nextRequestId();
    const method = req.method ?? 'GET';
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const rawPath = q === -1 ? url : url.slice(0, q);
    // 0. Development only (DevHooks): /__/dev/…, or the overlay of an app that does not compile.
    const intercepted = devHooks?.intercept?.(req, res, id);
    if (intercepted !== undefined) {
      const log = (status: number) => logger.access({ id, method, path: rawPath, status, ms: performance.now() - start });
      if (typeof intercepted === 'number') log(intercepted);
      else intercepted.then(log, (err) => fail(req, res, id, err, start, rawPath));
      return;
    }
    // 1 (continued). The observer (RequestObserver: in-flight table, metrics) learns of the request.
    const seen = observe?.(id, method, rawPath, res);
    // Who sent it (proxy.ts), worked out when first asked for: a static file never asks.
    const client = lazyClient(trust, req);
    // 4. The access log line.
    const done = (status: number) => logger.access({ id, method, path: rawPath, status, ms: performance.now() - start, client: logged(req, client) });
    try {
      // 2. Dispatch, then send.
      const d = dispatch(app, { id, method, url, headers: req.headers, client, forwarded: !trust.empty, readBody: (limit) => readBody(req, limit), bodyStream: () => streamBody(req), onClose: (listener) => res.once('close', listener), seen });
      const reply = d.reply;
      if (!(reply instanceof Promise)) {
        const sent = sendReply(req, res, d, reply, seen);
        if (!(sent instanceof Promise)) return done(sent);
        sent.then(done, (err) => fail(req, res, id, err, start, rawPath, client));
        return;
      }
      reply.then((r) => sendReply(req, res, d, r, seen)).then(done, (err) => fail(req, res, id, err, start, rawPath, client));
    } catch (err) {
      // 3. Unexpected.
      fail(req, res, id, err, start, rawPath, client);
    }
  };
}

/**
 * Sends a Reply: a file, a body, a redirect, an error page or JSON, or an event stream (which stays
 * open until it ends). Every answer carries the request id in `X-Request-Id` (error answers and
 * 4xx bodies; see withRequestId). Returns the status, or a Promise of it once the answer is written.
 */
export function send(req: IncomingMessage, res: ServerResponse, reply: Reply, id: string, options: { streams?: Set<StreamStopper> | undefined; events?: Partial<EventSettings> | undefined; dev?: boolean } = {}): number | Promise<number> {
  reply = withRequestId(reply, id);
  switch (reply.type) {
    case 'asset':
      return sendAsset(req, res, reply.asset, reply.status, reply.headers);
    case 'body':
      if (reply.status === 204) {
        res.writeHead(204, { ...COMMON_HEADERS, ...reply.headers });
        res.end();
        return 204;
      }
      return sendBody(req, res, reply.status, reply.contentType, reply.body, { etag: reply.etag, headers: reply.headers });
    case 'redirect':
      return sendRedirect(req, res, reply.status, reply.location, { ...reply.headers, 'X-Request-Id': id });
    case 'error':
      // A server error's page names the request id the log line has, when its message does not
      // already (docs/cli.md "`laneway dev DIR`").
      return writeError(req, res, reply, { ...reply.headers, 'X-Request-Id': id }, id, options.dev);
    case 'stored':
      return sendStored(req, res, reply.contentType, reply.stored, reply.etag, { ...reply.headers, 'X-Request-Id': id });
    case 'events':
      return sendEvents(req, res, reply, options.streams, options.events);
  }
}

/**
 * An event stream (app/request/events.ts): the head at once, never compressed or stored, then whatever
 * the stream writes until it ends, the client goes away, or the server stops. Settles when the
 * connection closes, so the access log line gives the stream's duration.
 */
function sendEvents(req: IncomingMessage, res: ServerResponse, reply: Extract<Reply, { type: 'events' }>, streams: Set<StreamStopper> | undefined, settings: Partial<EventSettings> | undefined): number | Promise<number> {
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
    stop = reply.open({ write: (text) => res.write(text), onDrain: (listener) => res.once('drain', listener), end: () => res.end() }, settings);
  });
}

/**
 * A request body as it arrives, piece by piece (RequestInfo.bodyStream), pulled: the socket is
 * read only as fast as the pieces are taken. A client gone mid-body (the request destroyed
 * before its end) throws 400, as `readBody` rejects; a reader that stops early leaves the rest
 * unread.
 */
export async function* streamBody(req: IncomingMessage): AsyncGenerator<Buffer> {
  for (;;) {
    if (req.destroyed && !req.readableEnded) throw answers.bodyCutOff();
    const piece = req.read() as Buffer | null;
    if (piece !== null) {
      yield piece;
      continue;
    }
    if (req.readableEnded) return;
    await new Promise<void>((resolve) => {
      const settle = () => {
        req.off('readable', settle).off('end', settle).off('close', settle).off('error', settle);
        resolve();
      };
      req.on('readable', settle).on('end', settle).on('close', settle).on('error', settle);
    });
  }
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
