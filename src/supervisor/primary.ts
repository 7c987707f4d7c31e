/**
 * The primary process of `laneway serve --workers N` (docs/deploy.md): it serves no request
 * itself. It listens on the port and hands each connection to one of N worker processes
 * (node:cluster processes, round-robin), and keeps them:
 *
 * - a connection is handed over as a copy of its socket; the primary closes its own copy when the
 *   worker says it took it, before the worker reads a byte, and sends that worker the next one
 *   only then. A connection that a worker had not taken when it died (or that the send could not
 *   deliver) goes to another worker, whole: none is left open and unanswered (node:cluster's own
 *   round-robin left those in the primary);
 * - a worker that exits unasked is replaced: at once for the first crash within a minute, then
 *   after a wait that doubles from 0.5 s up to 30 s while crashes go on (`restartDelay`);
 * - a worker whose watchdog thread reports a blocked event loop (watchdog.ts, on the worker's
 *   report pipe) is killed (SIGKILL) and replaced; the log names the request it was running;
 * - SIGHUP reloads: the app is loaded again here (problems are printed, and the workers keep
 *   serving), then a new worker per slot starts on the files as they are now; once every new one
 *   listens, the old ones stop accepting, finish their requests and exit. The primary holds the
 *   listening socket throughout, so no connection is refused or dropped;
 * - SIGTERM and SIGINT drain every worker (each finishes its requests, up to 10 s), then exit 0;
 * - with metrics on, it gathers every worker's counts over IPC and adds them up (metrics.ts),
 *   for `/__/metrics` on the public port (a worker asks) or on a bind of its own (served here).
 *
 * The primary has checked the app before it starts the first workers (the CLI loads it, and
 * opens its data once, so that migrations run once and a database that cannot be reached stops
 * the start with one message); each worker then loads the app itself.
 */
import cluster, { type Worker } from 'node:cluster';
import { createServer as createNetServer, type AddressInfo, type Server as NetServer, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { Readable } from 'node:stream';
import { mergeSnapshots, renderMetrics, requestCount, serveMetrics, type Logger, type MetricFamily, type MetricsServer, type MetricsSnapshot } from '../http/index.js';
import type { BlockedReport } from './watchdog.js';
import { REPORT_FD } from './watchdog.js';
import { WORKER_ENV, type FromWorker, type ToWorker, type WorkerSettings } from './worker.js';

/** The `laneway` command the workers run (with the primary's arguments). */
const BIN = fileURLToPath(new URL('../../bin/laneway', import.meta.url));

/** Crashes counted for the backoff are those of the last minute. */
const CRASH_WINDOW_MS = 60_000;
const BACKOFF_BASE_MS = 500;
const BACKOFF_MAX_MS = 30_000;
/** A worker that has not listened after this long (loading, opening its data) is taken as failed. */
const START_LIMIT_MS = 120_000;
/** A draining worker is killed after this long (it finishes its requests within 10 s, then closes its data). */
const DRAIN_LIMIT_MS = 30_000;
/** How long the primary waits for a worker's counts when gathering the metrics. */
const SNAPSHOT_WAIT_MS = 2_000;
/** Connections kept while no worker is free (a burst; workers starting, all replaced at once): more are closed. */
const MAX_WAITING = 10_000;

/**
 * The wait before replacing a crashed worker, from the number of crashes in the last minute
 * (this one included): none for the first, then 0.5 s, 1 s, 2 s… up to 30 s.
 */
export function restartDelay(recentCrashes: number): number {
  if (recentCrashes <= 1) return 0;
  return Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** (recentCrashes - 2));
}

export interface PrimaryOptions {
  workers: number;
  host: string;
  /** 0: any free port (the primary listens; workers and replacements serve what it accepts). */
  port: number;
  /** The workers' command line: the primary's own (`serve DIR …`). */
  args: string[];
  logger: Logger;
  /** Prints the line that tells a supervisor or a test the server is ready: `listening on <url>`. */
  announce(url: string): void;
  /** Metrics: counted when enabled; `port`: the primary serves them on `host:port` (only there). */
  metrics: { enabled: boolean; host?: string; port?: number };
  /**
   * SIGHUP: loads the app from its files again and brings its database to the definitions.
   * Resolves false when it cannot (having printed the problems); the workers then keep serving.
   */
  checkReload(): Promise<boolean>;
  /** Prints why the port could not be listened on (what to change; who holds a port in use). */
  listenFailed(err: unknown): void | Promise<void>;
}

type State = 'starting' | 'listening' | 'draining';

interface Managed {
  worker: Worker;
  id: number;
  pid: number;
  generation: number;
  state: State;
  started: number;
  /** The watchdog's report, when it had this worker killed. */
  blocked?: BlockedReport;
  /** The last counts this worker sent. */
  snapshot?: MetricsSnapshot;
  drainTimer?: NodeJS.Timeout;
  /** Connections sent to this worker that it has not said it took, by number. */
  untaken: Map<number, Socket>;
}

/** Workers of one generation being started together (the first start, a reload). */
interface Launch {
  generation: number;
  waiting: Set<number>;
  settle(ok: boolean, why?: string): void;
}

export class Supervisor {
  readonly #o: PrimaryOptions;
  readonly #workers = new Map<number, Managed>();
  #listener: NetServer | undefined;
  #url = '';
  /** Connections waiting for a worker that can take them. */
  #waiting: Socket[] = [];
  /** The id of the worker chosen last (round-robin), and the number of the last connection handed over. */
  #turn = 0;
  #handed = 0;
  /** The generation that serves (the last build that started in full). */
  #current = 0;
  #generations = 0;
  #launch: Launch | undefined;
  #stopping = false;
  #stopped: (code: number) => void = () => {};
  #exitCode = 0;
  #reloading = false;
  #reloadAgain = false;
  #crashes: number[] = [];
  #topUpTimer: NodeJS.Timeout | undefined;
  #metricsServer: MetricsServer | undefined;
  /** Counts of workers that are gone (their last snapshot), so that totals never go down. */
  #retired: MetricsSnapshot = { routes: [], inFlight: 0 };
  readonly #restarts = { crashed: 0, blocked: 0 };
  readonly #reloads = { ok: 0, failed: 0 };
  #asked = 0;
  readonly #answers = new Map<number, (snapshot: MetricsSnapshot) => void>();

  constructor(options: PrimaryOptions) {
    this.#o = options;
  }

  /** Starts the workers; resolves to the exit code once stopped (1 when the first workers cannot start). */
  async run(): Promise<number> {
    const o = this.#o;
    try {
      this.#listener = await listen(o.host, o.port, (socket) => this.#dispatch(socket));
    } catch (err) {
      await o.listenFailed(err);
      return 1;
    }
    const address = this.#listener.address() as AddressInfo;
    this.#url = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
    cluster.setupPrimary({ exec: BIN, args: o.args, stdio: ['ignore', 'inherit', 'inherit', 'ipc', 'pipe'] });
    if (o.metrics.enabled && o.metrics.port !== undefined) {
      try {
        this.#metricsServer = await serveMetrics(o.metrics.host ?? '127.0.0.1', o.metrics.port, () => this.gatherMetrics());
      } catch (err) {
        o.logger.error(`cannot serve the metrics on ${o.metrics.host ?? '127.0.0.1'}:${o.metrics.port}: ${(err as Error).message}`);
        return 1;
      }
      o.logger.info(`metrics on ${this.#metricsServer.url}`);
    }
    const stopped = new Promise<number>((resolve) => (this.#stopped = resolve));
    process.on('SIGTERM', () => this.#stop('SIGTERM', 0));
    process.on('SIGINT', () => this.#stop('SIGINT', 0));
    // A reload asked for during the start waits for it.
    process.on('SIGHUP', () => (this.#current === 0 ? (this.#reloadAgain = true) : void this.reload()));
    // Last resort, as in a single process: a rejection nobody handled is a defect, logged, never fatal.
    process.on('unhandledRejection', (reason) => o.logger.error(`supervisor: unhandled rejection (please report it): ${String((reason as Error)?.message ?? reason)}`));
    const ok = await this.#start(o.workers);
    if (this.#stopping) return stopped;
    if (!ok.ok) {
      o.logger.error(`the workers could not start: ${ok.why} [LW_SERVE_WORKER_START]`, this.#fields({ code: 'LW_SERVE_WORKER_START' }));
      this.#stop(undefined, 1);
      return stopped;
    }
    o.logger.info(`${o.workers} workers serving (pids ${this.#live().map((m) => m.pid).join(', ')}); SIGHUP reloads the app, SIGTERM stops`);
    o.announce(this.#url);
    if (this.#reloadAgain) {
      this.#reloadAgain = false;
      void this.reload();
    }
    return stopped;
  }

  /** Forks `count` workers of a new generation and waits until all listen, or one fails. */
  #start(count: number): Promise<{ ok: true; generation: number } | { ok: false; why: string; generation: number }> {
    const generation = ++this.#generations;
    return new Promise((resolve) => {
      const timer = setTimeout(() => launch.settle(false, `not every worker was listening after ${START_LIMIT_MS / 1000} s`), START_LIMIT_MS);
      const launch: Launch = {
        generation,
        waiting: new Set(),
        settle: (ok, why) => {
          if (this.#launch !== launch) return;
          this.#launch = undefined;
          clearTimeout(timer);
          if (!ok) {
            // The rest of this generation goes: it would serve a build that did not start in full.
            for (const m of this.#workers.values()) if (m.generation === generation) this.#drain(m);
            resolve({ ok: false, why: why ?? 'a worker failed', generation });
            return;
          }
          this.#current = generation;
          resolve({ ok: true, generation });
        },
      };
      this.#launch = launch;
      for (let i = 0; i < count; i++) launch.waiting.add(this.#fork(generation).id);
    });
  }

  #fork(generation: number): Managed {
    const settings: WorkerSettings = { generation };
    const worker = cluster.fork({ [WORKER_ENV]: JSON.stringify(settings) });
    const m: Managed = { worker, id: worker.id, pid: worker.process.pid ?? 0, generation, state: 'starting', started: Date.now(), untaken: new Map() };
    this.#workers.set(m.id, m);
    worker.on('error', () => {}); // a message to a worker that just died: its 'exit' says the rest
    worker.on('message', (message: FromWorker) => this.#message(m, message));
    // Handled once the process has exited and its pipes are closed, the IPC channel included:
    // every message it sent before it died (a 'took') has been read by then. (Not on 'disconnect':
    // Node does not emit it for a process that died while a connection sent to it was not yet
    // acknowledged.)
    worker.process.once('close', (code: number | null, signal: NodeJS.Signals | null) => this.#exited(m, code, signal));
    this.#readReports(m, worker.process.stdio[REPORT_FD] as Readable | null | undefined);
    return m;
  }

  /** The worker is ready ('ready'): it takes connections from now on. */
  #listening(m: Managed): void {
    if (m.state !== 'starting') return;
    m.state = 'listening';
    this.#o.logger.info(`worker ${m.id} listening (pid ${m.pid})`, this.#fields({ worker: m.id, pid: m.pid }));
    const launch = this.#launch;
    if (launch?.generation === m.generation) {
      launch.waiting.delete(m.id);
      if (launch.waiting.size === 0) launch.settle(true);
    } else if (m.generation < this.#current || this.#stopping) {
      // A replacement started for a build that a reload has replaced since.
      this.#drain(m);
    }
    this.#flushWaiting();
  }

  #message(m: Managed, message: FromWorker): void {
    if (message?.lw === 'took') {
      // The worker has its copy: the connection is its own now.
      const socket = m.untaken.get(message.n);
      m.untaken.delete(message.n);
      socket?.destroy();
      this.#flushWaiting();
    } else if (message?.lw === 'ready') {
      this.#listening(m);
    } else if (message?.lw === 'snapshot') {
      m.snapshot = message.snapshot;
      this.#answers.get(message.n)?.(message.snapshot);
    } else if (message?.lw === 'final') {
      m.snapshot = message.snapshot;
    } else if (message?.lw === 'metrics') {
      this.gatherMetrics().then(
        (text) => this.#send(m, { lw: 'metrics-text', n: message.n, text }),
        () => this.#send(m, { lw: 'metrics-text', n: message.n, text: null }),
      );
    }
  }

  /**
   * Hands a new connection to the next free worker, or keeps it until one is free. A worker is
   * free when it has taken every connection it was sent: one at a time each, as node:cluster's
   * round-robin does, so that a blocked worker (until the watchdog has it killed) holds one
   * connection, not a share of every new one.
   */
  #dispatch(socket: Socket): void {
    if (socket.destroyed) return;
    if (this.#stopping) {
      socket.destroy();
      return;
    }
    const m = this.#nextFree();
    if (m !== undefined) this.#handTo(m, socket);
    else if (this.#waiting.length < MAX_WAITING) this.#waiting.push(socket);
    else socket.destroy();
  }

  /** Connections kept while no worker was free, in order, to the workers free now. */
  #flushWaiting(): void {
    while (this.#waiting.length > 0) {
      if (this.#waiting[0]!.destroyed) {
        this.#waiting.shift();
        continue;
      }
      const m = this.#nextFree();
      if (m === undefined) return;
      this.#handTo(m, this.#waiting.shift()!);
    }
  }

  #handTo(m: Managed, socket: Socket): void {
    const n = ++this.#handed;
    m.untaken.set(n, socket);
    const failed = () => {
      // Not delivered (the worker is going): another worker gets it.
      if (m.untaken.delete(n)) this.#dispatch(socket);
    };
    try {
      // keepOpen: the primary keeps its copy until the worker says it took it ('took').
      m.worker.send({ lw: 'conn', n } satisfies ToWorker, socket, { keepOpen: true }, (err) => {
        if (err) failed();
      });
    } catch {
      failed();
    }
  }

  /** The free worker after the last one chosen, in turn; undefined when none is free. */
  #nextFree(): Managed | undefined {
    let first: Managed | undefined;
    for (const m of this.#workers.values()) {
      if (m.state !== 'listening' || m.untaken.size > 0 || !m.worker.isConnected()) continue;
      if (m.id > this.#turn) {
        this.#turn = m.id;
        return m;
      }
      first ??= m;
    }
    if (first !== undefined) this.#turn = first.id;
    return first;
  }

  #send(m: Managed, message: ToWorker): void {
    try {
      if (m.worker.isConnected()) m.worker.send(message);
    } catch {
      // gone: its 'exit' follows
    }
  }

  /** The report pipe: one JSON line per report of the worker's watchdog thread. */
  #readReports(m: Managed, pipe: Readable | null | undefined): void {
    if (!pipe) return;
    let buffered = '';
    pipe.setEncoding('utf8');
    pipe.on('data', (chunk: string) => {
      buffered += chunk;
      let nl;
      while ((nl = buffered.indexOf('\n')) !== -1) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        let report: BlockedReport | undefined;
        try {
          report = JSON.parse(line) as BlockedReport;
        } catch {
          continue;
        }
        if (report?.type === 'blocked') this.#blocked(m, report);
      }
    });
    pipe.on('error', () => {});
  }

  #blocked(m: Managed, report: BlockedReport): void {
    if (m.blocked || !this.#workers.has(m.id)) return;
    m.blocked = report;
    const running = report.requests.find((r) => r.current);
    const others = report.requests.filter((r) => !r.current);
    const what = running ? `while running ${running.method} ${running.path} (request ${running.id}, started ${(running.ageMs / 1000).toFixed(1)} s before)` : 'with no request in flight';
    const also = others.length ? `; also in flight: ${others.map((r) => `${r.method} ${r.path} (${r.id})`).join(', ')}` : '';
    this.#o.logger.error(
      `worker ${m.id} (pid ${m.pid}): its event loop has been blocked for ${(report.blockedMs / 1000).toFixed(1)} s (watchdog threshold ${report.thresholdMs / 1000} s) ${what}${also}; killing it [LW_SERVE_WORKER_BLOCKED]`,
      this.#fields({
        code: 'LW_SERVE_WORKER_BLOCKED',
        worker: m.id,
        pid: m.pid,
        blockedMs: report.blockedMs,
        ...(running ? { id: running.id, method: running.method, path: running.path } : {}),
        inFlight: report.requests.length + report.untracked,
      }),
    );
    m.worker.process.kill('SIGKILL');
  }

  #exited(m: Managed, code: number | null, signal: string | null): void {
    this.#workers.delete(m.id);
    clearTimeout(m.drainTimer);
    // Connections it never said it took: it read nothing of them, so another worker serves them
    // (first in line: they came before those waiting).
    const untaken = [...m.untaken.values()];
    m.untaken.clear();
    this.#waiting.unshift(...untaken);
    this.#flushWaiting();
    if (m.snapshot) this.#retired = mergeSnapshots([this.#retired, { ...m.snapshot, inFlight: 0 }]);
    const how = signal ? `signal ${signal}` : `code ${code}`;
    if (m.state === 'draining') this.#o.logger.info(`worker ${m.id} (pid ${m.pid}) stopped (${how})`, this.#fields({ worker: m.id, pid: m.pid }));
    if (this.#stopping) {
      if (this.#workers.size === 0) void this.#finish();
      return;
    }
    if (m.state === 'draining') return;
    // A worker of a build being started (the first one, a reload): that build does not start.
    const launch = this.#launch;
    if (launch?.generation === m.generation) {
      launch.settle(false, `worker ${m.id} (pid ${m.pid}) exited (${how}) ${m.state === 'starting' ? 'before it was listening' : 'before the others of its build were'}`);
      return;
    }
    // A crash (or a watchdog kill, or a replacement that did not start): replace it, with backoff.
    const now = Date.now();
    this.#crashes = [...this.#crashes.filter((t) => now - t < CRASH_WINDOW_MS), now];
    const delay = restartDelay(this.#crashes.length);
    if (m.blocked) this.#restarts.blocked++;
    else this.#restarts.crashed++;
    const uptime = ((now - m.started) / 1000).toFixed(1);
    const when = delay === 0 ? 'starting another now' : `starting another in ${(delay / 1000).toFixed(1)} s (${this.#crashes.length} crashes in the last minute)`;
    const what = m.blocked ? 'was killed by the supervisor (blocked event loop)' : m.state === 'starting' ? `exited (${how}) before it was listening` : `exited unexpectedly (${how}) after ${uptime} s`;
    this.#o.logger.error(`worker ${m.id} (pid ${m.pid}) ${what}; ${when} [LW_SERVE_WORKER_CRASHED]`, this.#fields({ code: 'LW_SERVE_WORKER_CRASHED', worker: m.id, pid: m.pid, exit: how, delayMs: delay }));
    this.#scheduleTopUp(delay);
  }

  #scheduleTopUp(delay: number): void {
    if (this.#topUpTimer) {
      // A replacement is already waiting; a longer wait wins (the backoff grows).
      clearTimeout(this.#topUpTimer);
    }
    this.#topUpTimer = setTimeout(() => {
      this.#topUpTimer = undefined;
      this.#topUp();
    }, delay);
  }

  /** Forks workers of the serving build until there are N of them (starting or listening). */
  #topUp(): void {
    if (this.#stopping) return;
    const serving = [...this.#workers.values()].filter((m) => m.generation === this.#current && m.state !== 'draining').length;
    for (let i = serving; i < this.#o.workers; i++) {
      const m = this.#fork(this.#current);
      this.#o.logger.info(`worker ${m.id} starting (pid ${m.pid}), replacing one that exited`, this.#fields({ worker: m.id, pid: m.pid }));
    }
  }

  /** SIGHUP: the app again, from its files, with no request dropped. */
  async reload(): Promise<void> {
    if (this.#stopping) return;
    if (this.#reloading) {
      this.#reloadAgain = true;
      return;
    }
    this.#reloading = true;
    const log = this.#o.logger;
    try {
      log.info('SIGHUP: reloading the app');
      if (!(await this.#o.checkReload())) {
        this.#reloads.failed++;
        log.error(`reload failed: the app does not start as it is now; the workers keep serving the last build that did [LW_SERVE_RELOAD_FAILED]`, this.#fields({ code: 'LW_SERVE_RELOAD_FAILED' }));
        return;
      }
      if (this.#stopping) return;
      const previous = this.#current;
      const started = await this.#start(this.#o.workers);
      if (this.#stopping) return;
      if (!started.ok) {
        this.#reloads.failed++;
        log.error(`reload failed: ${started.why}; the workers keep serving the last build that did [LW_SERVE_RELOAD_FAILED]`, this.#fields({ code: 'LW_SERVE_RELOAD_FAILED' }));
        this.#topUp();
        return;
      }
      this.#reloads.ok++;
      // The new workers listen: the old ones stop accepting, finish what they have, and exit.
      const old = [...this.#workers.values()].filter((m) => m.generation <= previous);
      for (const m of old) this.#drain(m);
      log.info(`reloaded: ${this.#o.workers} workers on the new build (pids ${this.#live().map((m) => m.pid).join(', ')}); ${old.length} old ones finish their requests`);
    } finally {
      this.#reloading = false;
      if (this.#reloadAgain && !this.#stopping) {
        this.#reloadAgain = false;
        void this.reload();
      }
    }
  }

  /** Asks a worker to stop accepting, finish its requests and exit; kills it if it does not. */
  #drain(m: Managed): void {
    if (m.state === 'draining') return;
    const wasStarting = m.state === 'starting';
    m.state = 'draining';
    // A worker still starting has no message handler yet: a signal stops it (it serves nothing).
    if (wasStarting) m.worker.process.kill('SIGTERM');
    else this.#send(m, { lw: 'drain' });
    m.drainTimer = setTimeout(() => m.worker.process.kill('SIGKILL'), DRAIN_LIMIT_MS);
    m.drainTimer.unref();
  }

  /** SIGTERM, SIGINT (exit 0), or a start that failed (exit 1): drain every worker, then resolve. */
  #stop(signal: string | undefined, code: number): void {
    if (this.#stopping) return;
    this.#stopping = true;
    this.#exitCode = code;
    if (this.#topUpTimer) clearTimeout(this.#topUpTimer);
    this.#launch?.settle(false, 'stopping');
    if (signal) this.#o.logger.info(`${signal}: stopping ${this.#workers.size} workers (requests in flight finish first)`);
    // No new connection: the port closes now; those handed over already are served.
    this.#listener?.close();
    for (const socket of this.#waiting) socket.destroy();
    this.#waiting = [];
    for (const m of this.#workers.values()) this.#drain(m);
    if (this.#workers.size === 0) void this.#finish();
  }

  async #finish(): Promise<void> {
    await this.#metricsServer?.close();
    this.#stopped(this.#exitCode);
  }

  /** Fields of a log line for `--log json`; the pretty line says it all in its message already. */
  #fields(fields: Record<string, unknown>): Record<string, unknown> | undefined {
    return this.#o.logger.format === 'json' ? fields : undefined;
  }

  #live(): Managed[] {
    return [...this.#workers.values()].filter((m) => m.state === 'listening');
  }

  /** Asks a worker for its counts; its last ones if it does not answer in time. */
  #snapshot(m: Managed): Promise<MetricsSnapshot | undefined> {
    return new Promise((resolve) => {
      const n = ++this.#asked;
      const timer = setTimeout(() => {
        this.#answers.delete(n);
        resolve(m.snapshot);
      }, SNAPSHOT_WAIT_MS);
      this.#answers.set(n, (snapshot) => {
        clearTimeout(timer);
        this.#answers.delete(n);
        resolve(snapshot);
      });
      this.#send(m, { lw: 'snapshot', n });
    });
  }

  /** Every worker's counts added up (and those of workers gone), with the supervisor's own. */
  async gatherMetrics(): Promise<string> {
    const live = [...this.#workers.values()].filter((m) => m.state !== 'starting');
    const snapshots = await Promise.all(live.map(async (m) => ({ m, snapshot: await this.#snapshot(m) })));
    const total = mergeSnapshots([this.#retired, ...snapshots.flatMap((s) => (s.snapshot ? [s.snapshot] : []))]);
    const states: State[] = ['starting', 'listening', 'draining'];
    const all = [...this.#workers.values()];
    const families: MetricFamily[] = [
      {
        name: 'laneway_workers',
        help: 'Worker processes, by state.',
        type: 'gauge',
        samples: states.map((state) => ({ labels: { state }, value: all.filter((m) => m.state === state).length })),
      },
      {
        name: 'laneway_worker_requests_total',
        help: 'Requests answered by each live worker (worker: its cluster id).',
        type: 'counter',
        samples: snapshots.map(({ m, snapshot }) => ({ labels: { worker: String(m.id), pid: String(m.pid) }, value: snapshot ? requestCount(snapshot) : 0 })),
      },
      {
        name: 'laneway_worker_restarts_total',
        help: 'Workers replaced since the start, by reason: crashed (exited unasked) or blocked (killed after the watchdog reported a blocked event loop).',
        type: 'counter',
        samples: [
          { labels: { reason: 'crashed' }, value: this.#restarts.crashed },
          { labels: { reason: 'blocked' }, value: this.#restarts.blocked },
        ],
      },
      {
        name: 'laneway_reloads_total',
        help: 'Reloads (SIGHUP) since the start, by result.',
        type: 'counter',
        samples: [
          { labels: { result: 'ok' }, value: this.#reloads.ok },
          { labels: { result: 'failed' }, value: this.#reloads.failed },
        ],
      },
    ];
    return renderMetrics(total, families);
  }
}

/**
 * Listens on `host:port` (0: any free port) for the workers: connections are accepted here and
 * not read (`pauseOnConnect`), then handed over. Rejects with the listen error (a port in use…).
 */
function listen(host: string, port: number, onConnection: (socket: Socket) => void): Promise<NetServer> {
  return new Promise((resolve, reject) => {
    const server = createNetServer({ pauseOnConnect: true }, onConnection);
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      // A failed accept (too many open files…) is not the end of the server.
      server.on('error', () => {});
      resolve(server);
    });
  });
}
