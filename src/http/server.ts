/**
 * A listening server for an app, with timeouts and a graceful stop: stop accepting, let
 * in-flight requests finish (bounded), then close what is left. A worker of `serve --workers N`
 * does not listen: the supervisor hands it connections (`takeConnections`).
 */
import { createServer as createHttpServer, type Server } from 'node:http';
import { Server as NetServer, type AddressInfo, type Socket } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { takeFreshAssets, type App } from '../app/index.js';
import { precompressAssets } from './send.js';
import { createHandler, nextRequestId, type DevHooks, type RequestObserver, type StreamStopper } from './handler.js';
import { createPlatformRoutes, type PlatformOptions } from './health.js';
import { createHostRule } from './host-rule.js';
import { createLogger, type Logger, type LogFormat } from './log.js';
import type { TrustedProxies } from './proxy.js';

export interface ServerOptions {
  log?: LogFormat | Logger;
  /** Time to receive the request headers (default 20 s). */
  headersTimeoutMs?: number;
  /** Time to receive the whole request (default 60 s). */
  requestTimeoutMs?: number;
  /** An idle keep-alive connection is closed after this (default 5 s). */
  keepAliveTimeoutMs?: number;
  /** Longest wait for in-flight requests when stopping (default 10 s). */
  shutdownTimeoutMs?: number;
  /**
   * Stopping closes idle keep-alive connections at once instead of leaving each one until its
   * next answer or its keep-alive time (`laneway dev`: a browser holds its connections open,
   * and retries a request whose kept connection was closed).
   */
  closeIdleOnStop?: boolean;
  /** `laneway dev` only (src/dev/): live reload and the error overlay; see DevHooks in handler.ts. */
  devHooks?: DevHooks;
  /** Told of every request (metrics, the supervisor's in-flight table); see RequestObserver in handler.ts. */
  observe?: RequestObserver;
  /** `/__/health` and `/__/ready` are always answered; `/__/metrics` when `platform.metrics` is given (health.ts). */
  platform?: PlatformOptions;
  /**
   * Development only (`laneway dev`, `serve --dev`): answer only requests for this machine or for
   * `allowed` (normalised names, host-rule.ts); any other `Host` gets 403 before anything else.
   * `command`: the name its message starts with.
   */
  hostRule?: { allowed: readonly string[]; command: string };
  /**
   * The proxies whose forwarding headers are believed (`--trust-proxy`, proxy.ts); default:
   * nobody, and the client is the connection's peer.
   */
  trustProxy?: TrustedProxies;
}

export interface LanewayServer {
  server: Server;
  logger: Logger;
  listen(port: number, host: string): Promise<{ port: number; host: string; url: string }>;
  /**
   * Serves connections accepted elsewhere instead of listening (a worker of `serve --workers N`,
   * src/supervisor/): answers the function that takes each one.
   */
  takeConnections(): (socket: Socket) => void;
  /**
   * Stops accepting, ends open event streams, answers the requests in flight and those that
   * come on open connections (each with Connection: close), and closes each connection after its
   * answer or at the end of its keep-alive time (bounded by shutdownTimeoutMs); see close() below.
   */
  close(): Promise<void>;
  /**
   * Serves a newly loaded app from the next request on. Requests in flight finish on the old
   * one: answers when they have (at most shutdownTimeoutMs later), so that the old app's data
   * can be closed then.
   */
  replace(app: App): Promise<void>;
}

/**
 * Garbage-collector tuning for a request/response process. V8 moves the objects of an allocation
 * site straight to the old generation ("pretenuring") once most of them outlive a young-generation
 * collection. A server's per-request objects outlive one only because requests wait for the
 * database while other requests allocate, then die together with the response: pretenured, they
 * pile up in the old generation and keep the young objects they point to alive through every
 * young collection. Measured on the models benchmark (PostgreSQL list, 50 connections): young
 * collections 6 ms → 2 ms, a quarter more requests per second (bench/README.md).
 */
let tuned = false;
function tuneGarbageCollector(): void {
  if (tuned) return;
  tuned = true;
  setFlagsFromString('--no-allocation-site-pretenuring');
}

/** Counts responses not yet closed; `finished` answers when none is left (or after `limitMs`). */
class InFlight {
  #count = 0;
  #none: (() => void) | undefined;

  /** One listener for every response (a response closes once): no closure made per request. */
  readonly #closed = (): void => {
    if (--this.#count === 0) this.#none?.();
  };

  track(res: { on(event: 'close', listener: () => void): unknown }): void {
    this.#count++;
    res.on('close', this.#closed);
  }

  finished(limitMs: number): Promise<void> {
    if (this.#count === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, limitMs);
      timer.unref();
      this.#none = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}

export function createServer(app: App, options: ServerOptions = {}): LanewayServer {
  tuneGarbageCollector();
  const logger = typeof options.log === 'object' ? options.log : createLogger(options.log ?? 'pretty');
  // Open event streams, ended at once by close() rather than waited for.
  const streams = new Set<StreamStopper>();
  let handler = createHandler(app, logger, streams, options.devHooks, options.observe, options.trustProxy);
  let current = app;
  // The requests that started on the app served now: `replace` waits for them to finish.
  let served = new InFlight();
  let closing = false;
  // Connections handed over by takeConnections (Node counts only those its server accepted).
  const handed = new Set<Socket>();
  let handedDrained: (() => void) | undefined;
  const platform = createPlatformRoutes({ app: () => current, stopping: () => closing, logger }, options.platform);
  const hostRule = options.hostRule && createHostRule(options.hostRule.allowed, options.hostRule.command);
  const headersTimeout = options.headersTimeoutMs ?? 20_000;
  const server = createHttpServer(
    {
      headersTimeout,
      // How often Node checks the two timeouts above (its default, 30 s, would let them overrun).
      connectionsCheckingInterval: Math.max(50, Math.min(1000, headersTimeout / 2)),
      requestTimeout: options.requestTimeoutMs ?? 60_000,
      keepAliveTimeout: options.keepAliveTimeoutMs ?? 5_000,
    },
    (req, res) => {
      // Stopping: the connection closes after this answer (Connection: close tells the client
      // so) rather than wait idle for another request.
      if (closing) res.shouldKeepAlive = false;
      // Development: a Host that does not name this machine is refused before anything answers (host-rule.ts).
      if (hostRule && !hostRule.allows(req.headers.host)) {
        const id = nextRequestId();
        hostRule.refuse(req, res, id);
        logger.access({ id, method: req.method ?? '-', path: (req.url ?? '/').split('?')[0]!, status: 403, ms: 0 });
        return;
      }
      // /__/health, /__/ready, /__/metrics (health.ts), before the app: no access line, not counted.
      if (platform(req, res)) return;
      served.track(res);
      handler(req, res);
    },
  );
  // A client that sends garbage gets a 400 from Node and never reaches the handler.
  server.on('clientError', (err, socket) => {
    const timedOut = (err as NodeJS.ErrnoException).code === 'ERR_HTTP_REQUEST_TIMEOUT';
    const status = timedOut ? '408 Request Timeout' : (err as NodeJS.ErrnoException).code === 'HPE_HEADER_OVERFLOW' ? '431 Request Header Fields Too Large' : '400 Bad Request';
    // When a response already went out on this socket (a body left unread, then garbage), only close.
    const pending = (socket as unknown as { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (socket.writable && !pending?.headersSent) {
      // Like every error answer, it carries a request id, and the access log has a line for it.
      const id = nextRequestId();
      socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\nX-Request-Id: ${id}\r\n\r\n`);
      logger.access({ id, method: '-', path: '-', status: Number(status.slice(0, 3)), ms: 0 });
    } else socket.destroy();
  });

  return {
    server,
    logger,
    replace(next) {
      current = next;
      handler = createHandler(next, logger, streams, options.devHooks, options.observe, options.trustProxy);
      void precompressAssets(takeFreshAssets());
      const previous = served;
      served = new InFlight();
      return previous.finished(options.shutdownTimeoutMs ?? 10_000);
    },
    listen(port, host) {
      return new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          const addr = server.address() as AddressInfo;
          const shown = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
          resolve({ port: addr.port, host: addr.address, url: `http://${shown}:${addr.port}` });
          // The app's text files are compressed ahead, in the background, once the port is open.
          void precompressAssets(takeFreshAssets());
        });
      });
    },
    takeConnections() {
      // Node starts its connection tracking (the idle list that closeIdleConnections reads, and
      // the header and request timeouts) when its server emits 'listening'.
      if (!server.listening) server.emit('listening');
      void precompressAssets(takeFreshAssets());
      return (socket) => {
        // What Node does to a connection its own server accepts: no Nagle delay, and the half-open
        // handling left to the HTTP server.
        socket.setNoDelay(true);
        socket.allowHalfOpen = (server as unknown as { allowHalfOpen: boolean }).allowHalfOpen;
        handed.add(socket);
        socket.once('close', () => {
          handed.delete(socket);
          if (handed.size === 0) handedDrained?.();
        });
        server.emit('connection', socket);
      };
    },
    close() {
      closing = true;
      return new Promise((resolve) => {
        // Stops accepting. An idle keep-alive connection is not closed now: a client may be
        // sending its next request on it at this very moment, and would see the connection
        // reset rather than answered (Node's own close() closes idle ones). Every connection
        // stays open and read until its next request is answered, with Connection: close, after
        // which it closes; or until its keep-alive time is over (keepAliveTimeoutMs, announced to
        // clients in Keep-Alive: timeout=…, so that they stop using it before; Node closes it
        // then). A connection accepted but not read yet (a supervisor's worker may be handed one
        // just before it stops) is answered the same way. docs/deploy.md.
        const timer = setTimeout(() => {
          server.closeAllConnections();
          for (const socket of handed) socket.destroy();
        }, options.shutdownTimeoutMs ?? 10_000);
        timer.unref();
        // Done when Node's server has closed and every handed-over connection too.
        let waiting = 2;
        const done = () => {
          if (--waiting > 0) return;
          clearTimeout(timer);
          // Node's close() now, for what it does besides: it stops its timeout checks.
          server.close();
          resolve();
        };
        // net.Server's close: stops listening, leaves the open connections alone. A server that
        // never listened (takeConnections) closes at once, with an error to say so.
        NetServer.prototype.close.call(server, () => done());
        if (options.closeIdleOnStop) server.closeIdleConnections();
        for (const stop of [...streams]) stop();
        handedDrained = () => {
          handedDrained = undefined;
          done();
        };
        if (handed.size === 0) handedDrained();
      });
    },
  };
}
