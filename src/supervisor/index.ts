/**
 * `laneway serve --workers N` (docs/deploy.md): N worker processes serving the connections that a
 * supervising primary accepts on the port (primary.ts), each with a watchdog thread (watchdog.ts). The CLI loads the
 * app (in the primary: the check before any worker starts; in a worker: its own load), opens its
 * data, then hands over here. `--workers 1` never comes here: one process, no cluster.
 */
import cluster from 'node:cluster';
import { availableParallelism } from 'node:os';
import { takeFreshAssets, type App } from '../app/index.js';
import type { Logger } from '../http/index.js';
import { Supervisor } from './primary.js';
import { runWorker, WORKER_ENV, type WorkerOptions } from './worker.js';

export { restartDelay } from './primary.js';
export { TEST_BLOCK_ENV, WORKER_ENV } from './worker.js';
export type { BlockedReport } from './watchdog.js';

/** The watchdog's threshold when `--watchdog-ms` is not given. */
export const DEFAULT_WATCHDOG_MS = 10_000;

/**
 * The number of workers when `--workers` is not given: every core when the models live in
 * PostgreSQL, else one. SQLite allows several workers on one file (the store takes its write lock
 * in turn, without blocking an event loop), but one process never waits for that lock, and one
 * process serves a small site well: more workers is a choice to make (`--workers N`).
 */
export function defaultWorkers(databaseUrl: string | undefined): number {
  return databaseUrl !== undefined && /^postgres(ql)?:\/\//.test(databaseUrl) ? availableParallelism() : 1;
}

/** True in a worker process started by the supervisor (the CLI then serves as a worker). */
export function isWorkerProcess(): boolean {
  return cluster.isWorker && process.env[WORKER_ENV] !== undefined;
}

export interface SupervisedServeOptions {
  /** The app, loaded and with its data open (the primary closes it: it serves nothing itself). */
  app: App;
  closeApp(app: App): Promise<void>;
  workers: number;
  host: string;
  port: number;
  /** The command line the workers run (`serve DIR …`, the primary's own). */
  args: string[];
  logger: Logger;
  /** Prints `listening on <url>` once every first worker listens. */
  announce(url: string): void;
  watchdogMs: number;
  /** `port`: a bind of their own (served by the primary, and only there); else on the public port. */
  metrics: { enabled: boolean; host?: string; port?: number };
  /** SIGHUP: load the app from its files again and bring its data up to date; false (problems printed) keeps the workers. */
  checkReload(): Promise<boolean>;
  /** Prints why the port could not be listened on (the primary listens; the workers are handed its connections). */
  listenFailed(err: unknown): void | Promise<void>;
  /** `serve --dev`: the development server's host rule, applied by each worker (src/http/host-rule.ts). */
  hostRule?: WorkerOptions['hostRule'];
  /** `--trust-proxy`: the proxies each worker believes (src/http/proxy.ts). */
  trustProxy?: WorkerOptions['trustProxy'];
}

/** Serves as the primary or as a worker, whichever this process is; resolves to the exit code. */
export async function serveSupervised(options: SupervisedServeOptions): Promise<number> {
  if (isWorkerProcess()) {
    return runWorker({
      app: options.app,
      closeApp: options.closeApp,
      host: options.host,
      logger: options.logger,
      watchdogMs: options.watchdogMs,
      metrics: { enabled: options.metrics.enabled, public: options.metrics.enabled && options.metrics.port === undefined },
      ...(options.hostRule && { hostRule: options.hostRule }),
      ...(options.trustProxy && { trustProxy: options.trustProxy }),
    });
  }
  // The primary serves nothing: the data was opened to check it (and migrate once); the workers open their own.
  await options.closeApp(options.app);
  dropLoadedAssets();
  return new Supervisor({
    workers: options.workers,
    host: options.host,
    port: options.port,
    args: options.args,
    logger: options.logger,
    announce: options.announce,
    metrics: options.metrics,
    listenFailed: options.listenFailed,
    checkReload: async () => {
      const ok = await options.checkReload();
      dropLoadedAssets();
      return ok;
    },
  }).run();
}

/**
 * The loader queues the static files of each load for compression ahead of the first request
 * (server.ts takes them when it listens): the primary never listens, so it lets go of them.
 */
function dropLoadedAssets(): void {
  takeFreshAssets();
}

/** The scaling and operations options of `laneway serve`, checked before anything is loaded. */
export interface ServeScaling {
  workers: number;
  watchdogMs: number;
  metrics: { enabled: boolean; host?: string; port?: number };
}

/**
 * Reads `--workers`, `--watchdog-ms`, `--metrics`, `--metrics-host` and `--metrics-port`; answers
 * the options, or the message of a usage error. `databaseUrl`: `--database`, else $DATABASE_URL
 * (it decides the default number of workers); `watch`: `--watch` (or `dev`), which serves in one
 * process.
 */
export function readServeScaling(
  values: { workers?: string | undefined; 'watchdog-ms'?: string | undefined; metrics?: boolean | undefined; 'metrics-host'?: string | undefined; 'metrics-port'?: string | undefined },
  databaseUrl: string | undefined,
  watch: boolean,
): ServeScaling | { error: string } {
  const whole = (text: string) => /^\d{1,9}$/.test(text);
  let workers: number;
  if (values.workers !== undefined) {
    if (!whole(values.workers) || Number(values.workers) < 1) return { error: `--workers ${JSON.stringify(values.workers)} is not a number of workers: give a whole number from 1 (one process, no supervisor) up` };
    workers = Number(values.workers);
    if (watch && workers > 1) return { error: `--watch reloads one process: use --workers 1 with it (or SIGHUP to reload several workers)` };
  } else {
    workers = watch ? 1 : defaultWorkers(databaseUrl);
  }
  let watchdogMs = DEFAULT_WATCHDOG_MS;
  if (values['watchdog-ms'] !== undefined) {
    if (!whole(values['watchdog-ms']) || Number(values['watchdog-ms']) < 100) return { error: `--watchdog-ms ${JSON.stringify(values['watchdog-ms'])} is not a threshold: give a whole number of milliseconds, at least 100` };
    watchdogMs = Number(values['watchdog-ms']);
  }
  let port: number | undefined;
  if (values['metrics-port'] !== undefined) {
    if (!/^\d{1,5}$/.test(values['metrics-port']) || Number(values['metrics-port']) > 65535) return { error: `--metrics-port ${JSON.stringify(values['metrics-port'])} is not a port: give a whole number from 1 to 65535, or 0 for any free port` };
    port = Number(values['metrics-port']);
  }
  if (values['metrics-host'] !== undefined && port === undefined) return { error: `--metrics-host needs --metrics-port: the metrics get a bind of their own only with both` };
  const enabled = values.metrics === true || port !== undefined;
  return { workers, watchdogMs, metrics: port === undefined ? { enabled } : { enabled, host: values['metrics-host'] ?? '127.0.0.1', port } };
}
