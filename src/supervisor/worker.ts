/**
 * A worker process of `laneway serve --workers N`: the same command line as the primary, run by
 * node:cluster. The CLI has loaded the app (a fresh load: this process's own) and opened its
 * data; the worker serves the connections the primary hands it (it does not listen itself), with
 * a watchdog thread, and answers the primary's messages:
 *
 *   primary → worker   { lw: 'conn', n } + a socket     a connection to serve (answered with 'took')
 *                      { lw: 'drain' }                  stop accepting, finish, exit 0
 *                      { lw: 'snapshot', n }            send the metrics counted here
 *                      { lw: 'metrics-text', n, text }  the exposition asked for with 'metrics'
 *   worker → primary   { lw: 'ready' }                  loaded, serving: send connections
 *                      { lw: 'took', n }                connection n is here (the primary lets go of it)
 *                      { lw: 'snapshot', n, snapshot }
 *                      { lw: 'metrics', n }             /__/metrics on the public port: all workers'
 *                      { lw: 'final', snapshot }        the last counts, before a drained exit
 *
 * SIGINT is left to the primary (a terminal's Ctrl-C reaches every process of the group; the
 * primary drains the workers one message at a time); SIGTERM sent to a worker drains it.
 */
import cluster from 'node:cluster';
import type { Socket } from 'node:net';
import type { App } from '../app/index.js';
import { createServer, HttpMetrics, type Logger, type MetricsSnapshot, type ObservedRequest, type RequestObserver, type ServerOptions } from '../http/index.js';
import { InFlightTable, startWatchdog } from './watchdog.js';

/** The environment variable through which the primary tells a worker its port and build. */
export const WORKER_ENV = 'LANEWAY_WORKER';

/**
 * TEST ONLY: a request to this exact path blocks the worker's event loop (up to 2 minutes), so
 * that the tests can see the watchdog report it and the supervisor replace the worker. Honoured
 * only when NODE_ENV is `test`, and announced on standard error when it is.
 */
export const TEST_BLOCK_ENV = 'LANEWAY_TEST_ONLY_BLOCK_PATH';

/** What the primary tells a worker through WORKER_ENV. */
export interface WorkerSettings {
  /** The build this worker belongs to (1, then one more per SIGHUP). */
  generation: number;
}

/** Messages between the primary and its workers (IPC). */
export type ToWorker = { lw: 'conn'; n: number } | { lw: 'drain' } | { lw: 'snapshot'; n: number } | { lw: 'metrics-text'; n: number; text: string | null };
export type FromWorker =
  | { lw: 'ready' }
  | { lw: 'took'; n: number }
  | { lw: 'snapshot'; n: number; snapshot: MetricsSnapshot }
  | { lw: 'metrics'; n: number }
  | { lw: 'final'; snapshot: MetricsSnapshot };

export interface WorkerOptions {
  /** The app, loaded and with its data open (the CLI did both). */
  app: App;
  /** Closes the app's data when the worker stops. */
  closeApp(app: App): Promise<void>;
  host: string;
  logger: Logger;
  watchdogMs: number;
  /** Count requests; `public`: answer /__/metrics on the app's port too (else the primary serves them). */
  metrics: { enabled: boolean; public: boolean };
  /** `serve --dev`: see ServerOptions.hostRule. */
  hostRule?: ServerOptions['hostRule'];
  /** `--trust-proxy`: see ServerOptions.trustProxy. */
  trustProxy?: ServerOptions['trustProxy'];
}

/** The settings of this worker, from WORKER_ENV. */
export function workerSettings(): WorkerSettings {
  const raw = process.env[WORKER_ENV];
  const parsed = raw ? (JSON.parse(raw) as Partial<WorkerSettings>) : {};
  if (typeof parsed.generation !== 'number') throw new Error(`${WORKER_ENV} is missing or malformed: a worker is started by laneway serve --workers N`);
  return { generation: parsed.generation };
}

/** Serves until drained; resolves to the exit code. */
export async function runWorker(options: WorkerOptions): Promise<number> {
  const { app, logger } = options;
  workerSettings(); // a process not started by the supervisor stops here, with the reason
  const send = (message: FromWorker, done?: () => void) => {
    if (!process.connected) return done?.();
    process.send!(message, undefined, {}, () => done?.());
  };

  const table = new InFlightTable();
  const metrics = options.metrics.enabled ? new HttpMetrics() : undefined;
  const block = testBlockPath(logger);
  const observe: RequestObserver = (id, method, path, res) => {
    table.track(id, method, path, res);
    const seen: ObservedRequest = metrics ? metrics.observe(id, method, path, res) : { route: '' };
    if (path === block) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 120_000);
    return seen;
  };

  // /__/metrics on the public port: the primary adds up every worker's counts.
  let asked = 0;
  const pending = new Map<number, (text: string | null) => void>();
  const allWorkers = () =>
    new Promise<string>((resolve, reject) => {
      const n = ++asked;
      const timer = setTimeout(() => {
        pending.delete(n);
        reject(new Error('the supervisor did not answer'));
      }, 10_000);
      pending.set(n, (text) => {
        clearTimeout(timer);
        pending.delete(n);
        if (text === null) reject(new Error('the supervisor could not gather the metrics'));
        else resolve(text);
      });
      send({ lw: 'metrics', n });
    });

  const server = createServer(app, { log: logger, observe, platform: options.metrics.public ? { metrics: allWorkers } : {}, ...(options.hostRule && { hostRule: options.hostRule }), ...(options.trustProxy && { trustProxy: options.trustProxy }) });
  const take = server.takeConnections();
  const watchdog = startWatchdog({ thresholdMs: options.watchdogMs, table });
  let stop = () => {};
  process.on('message', (message: ToWorker, socket?: Socket) => {
    if (message?.lw === 'conn') {
      // Said before the first byte is read: a connection the primary has not heard of when this
      // process dies is one it can hand to another worker whole (primary.ts).
      send({ lw: 'took', n: message.n });
      if (socket) take(socket);
    } else if (message?.lw === 'drain') stop();
    else if (message?.lw === 'snapshot') send({ lw: 'snapshot', n: message.n, snapshot: metrics?.snapshot() ?? { routes: [], inFlight: 0 } });
    else if (message?.lw === 'metrics-text') pending.get(message.n)?.(message.text);
  });
  send({ lw: 'ready' });

  process.on('unhandledRejection', (reason) => {
    const r = reason as { message?: unknown; code?: unknown; requestId?: unknown } | null;
    const fields: Record<string, unknown> = { reason: String(r?.message ?? reason) };
    if (typeof r?.code === 'string') fields.code = r.code;
    if (typeof r?.requestId === 'string') fields.id = r.requestId;
    logger.error('unhandled rejection (please report it)', fields);
  });

  return new Promise<number>((resolveExit) => {
    let stopping = false;
    stop = () => {
      if (stopping) return;
      stopping = true;
      server
        .close()
        .then(() => options.closeApp(app))
        .catch((err: Error) => logger.error(`worker ${cluster.worker?.id ?? '?'}: ${err.message}`))
        .then(() => watchdog.stop())
        .then(() => (metrics ? send({ lw: 'final', snapshot: metrics.snapshot() }, () => resolveExit(0)) : resolveExit(0)));
    };
    process.on('SIGTERM', stop);
    // The primary stops the workers (a terminal sends SIGINT to the whole process group).
    process.on('SIGINT', () => {});
  });
}

/** The test-only blocking path, when switched on (NODE_ENV=test and TEST_BLOCK_ENV). */
function testBlockPath(logger: Logger): string | undefined {
  const path = process.env[TEST_BLOCK_ENV];
  if (!path) return undefined;
  if (process.env.NODE_ENV !== 'test') return undefined;
  logger.error(`TEST ONLY: ${TEST_BLOCK_ENV}=${path} with NODE_ENV=test: a request to ${path} blocks this worker's event loop`);
  return path;
}
