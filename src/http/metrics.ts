/**
 * Request metrics in the Prometheus text exposition format (version 0.0.4), off unless enabled
 * (`laneway serve --metrics`, or `--metrics-port` for a bind of their own; docs/deploy.md):
 *
 *   laneway_http_requests_total{route,method,status}        counter
 *   laneway_http_request_errors_total{route,method}         counter (5xx answers, cut-off answers)
 *   laneway_http_request_duration_seconds{route,method}     histogram (LATENCY_BUCKETS)
 *   laneway_http_requests_in_flight                         gauge
 *   laneway_limit_refusals_total{kind}                      counter (429s of the limits per visitor)
 *
 * `route` is the route pattern (`/items/{item}/`), never the raw path, so the number of series is
 * bounded by the route table: requests no route answers are counted under `(none)`, the platform's
 * own `/__/images/` and `/__/auth/` under those prefixes. The health, readiness and metrics
 * answers themselves are not counted.
 *
 * A process keeps one `HttpMetrics`; its `snapshot()` is plain JSON, so that a supervisor can
 * gather the snapshots of its workers over IPC, add them up (`mergeSnapshots`) and render one
 * exposition for all of them (`renderMetrics`).
 */
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ObservedRequest, RequestObserver } from './handler.js';

/** Upper bounds of the latency histogram, in seconds (Prometheus' client defaults). */
export const LATENCY_BUCKETS: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** The `route` label of a request no route answered (404, 405, 400, 413 before routing…). */
export const UNMATCHED_ROUTE = '(none)';

/** The content type of the exposition. */
export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** Where the exposition is served (on the public port with `--metrics`, or on its own bind). */
export const METRICS_PATH = '/__/metrics';

/** The counts of one route and method. */
export interface RouteSeries {
  route: string;
  method: string;
  /** Answers by status code. */
  statuses: Record<string, number>;
  errors: number;
  /** Non-cumulative counts per bucket of LATENCY_BUCKETS, then one for larger durations. */
  buckets: number[];
  /** Sum of the durations, in seconds. */
  sum: number;
}

/** Everything a process has counted: plain JSON (it crosses IPC). */
export interface MetricsSnapshot {
  routes: RouteSeries[];
  inFlight: number;
  /** Refusals of the limits per visitor, by kind (docs/security.md "Limits per visitor"). */
  limits?: Record<string, number>;
}

/** A family of extra samples (the supervisor's own: workers, restarts, reloads). */
export interface MetricFamily {
  name: string;
  help: string;
  type: 'counter' | 'gauge';
  samples: Array<{ labels?: Record<string, string>; value: number }>;
}

/** The counters of one process. */
export class HttpMetrics {
  readonly #series = new Map<string, RouteSeries>();
  #inFlight = 0;
  readonly #limits: Record<string, number> = {};

  /**
   * The observer to give `createServer` (server.ts passes it to the request function): counts each
   * request when its response closes. `failed`: the connection closed before the answer was complete.
   */
  readonly observe: RequestObserver = (_id, method, _path, res) => {
    const seen: ObservedRequest = { route: UNMATCHED_ROUTE };
    const start = performance.now();
    this.#inFlight++;
    res.once('close', () => {
      this.#inFlight--;
      this.record(seen.route, method, res.statusCode, (performance.now() - start) / 1000, !res.writableFinished);
      if (seen.limit !== undefined) this.#limits[seen.limit] = (this.#limits[seen.limit] ?? 0) + 1;
    });
    return seen;
  };

  /** Counts one answered request. */
  record(route: string, method: string, status: number, seconds: number, failed = false): void {
    const key = route + '\u0000' + method;
    let s = this.#series.get(key);
    if (!s) this.#series.set(key, (s = { route, method, statuses: {}, errors: 0, buckets: new Array<number>(LATENCY_BUCKETS.length + 1).fill(0), sum: 0 }));
    s.statuses[status] = (s.statuses[status] ?? 0) + 1;
    if (failed || status >= 500) s.errors++;
    let i = 0;
    while (i < LATENCY_BUCKETS.length && seconds > LATENCY_BUCKETS[i]!) i++;
    s.buckets[i]!++;
    s.sum += seconds;
  }

  /** A copy of the counts (for IPC, or to render). */
  snapshot(): MetricsSnapshot {
    return { routes: [...this.#series.values()].map((s) => ({ ...s, statuses: { ...s.statuses }, buckets: [...s.buckets] })), inFlight: this.#inFlight, limits: { ...this.#limits } };
  }

  /** The exposition of this process alone. */
  render(): string {
    return renderMetrics(this.snapshot());
  }
}

/** Adds snapshots up (the workers of a supervisor, and the workers that are gone). */
export function mergeSnapshots(snapshots: readonly MetricsSnapshot[]): MetricsSnapshot {
  const merged = new Map<string, RouteSeries>();
  let inFlight = 0;
  const limits: Record<string, number> = {};
  for (const snap of snapshots) {
    inFlight += snap.inFlight;
    for (const [kind, n] of Object.entries(snap.limits ?? {})) limits[kind] = (limits[kind] ?? 0) + n;
    for (const s of snap.routes) {
      const key = s.route + '\u0000' + s.method;
      const m = merged.get(key);
      if (!m) {
        merged.set(key, { ...s, statuses: { ...s.statuses }, buckets: [...s.buckets] });
        continue;
      }
      for (const [status, n] of Object.entries(s.statuses)) m.statuses[status] = (m.statuses[status] ?? 0) + n;
      m.errors += s.errors;
      s.buckets.forEach((n, i) => (m.buckets[i] = (m.buckets[i] ?? 0) + n));
      m.sum += s.sum;
    }
  }
  return { routes: [...merged.values()], inFlight, limits };
}

/** How many requests a snapshot counts. */
export function requestCount(snapshot: MetricsSnapshot): number {
  let n = 0;
  for (const s of snapshot.routes) for (const c of Object.values(s.statuses)) n += c;
  return n;
}

/** A label value as the exposition format writes it: backslash, double quote and newline escaped. */
function labelValue(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

function labels(pairs: Record<string, string>): string {
  const entries = Object.entries(pairs);
  return entries.length ? `{${entries.map(([k, v]) => `${k}="${labelValue(v)}"`).join(',')}}` : '';
}

/** A number as the exposition format writes it. */
function num(n: number): string {
  return Number.isFinite(n) ? String(n) : n > 0 ? '+Inf' : n < 0 ? '-Inf' : 'NaN';
}

/** The exposition: the request families of `snapshot`, then `extra` families. Series in a stable order. */
export function renderMetrics(snapshot: MetricsSnapshot, extra: readonly MetricFamily[] = []): string {
  const routes = [...snapshot.routes].sort((a, b) => (a.route === b.route ? (a.method < b.method ? -1 : 1) : a.route < b.route ? -1 : 1));
  const out: string[] = [];
  out.push('# HELP laneway_http_requests_total Requests answered, by route pattern, method and status.', '# TYPE laneway_http_requests_total counter');
  for (const s of routes) {
    for (const status of Object.keys(s.statuses).sort()) out.push(`laneway_http_requests_total${labels({ route: s.route, method: s.method, status })} ${s.statuses[status]}`);
  }
  out.push('# HELP laneway_http_request_errors_total Requests answered with a 5xx status, or whose connection closed before the answer was complete.', '# TYPE laneway_http_request_errors_total counter');
  for (const s of routes) out.push(`laneway_http_request_errors_total${labels({ route: s.route, method: s.method })} ${s.errors}`);
  out.push('# HELP laneway_http_request_duration_seconds Time from the start of a request to the end of its answer.', '# TYPE laneway_http_request_duration_seconds histogram');
  for (const s of routes) {
    let cumulative = 0;
    LATENCY_BUCKETS.forEach((le, i) => {
      cumulative += s.buckets[i] ?? 0;
      out.push(`laneway_http_request_duration_seconds_bucket${labels({ route: s.route, method: s.method, le: String(le) })} ${cumulative}`);
    });
    cumulative += s.buckets[LATENCY_BUCKETS.length] ?? 0;
    out.push(`laneway_http_request_duration_seconds_bucket${labels({ route: s.route, method: s.method, le: '+Inf' })} ${cumulative}`);
    out.push(`laneway_http_request_duration_seconds_sum${labels({ route: s.route, method: s.method })} ${num(s.sum)}`);
    out.push(`laneway_http_request_duration_seconds_count${labels({ route: s.route, method: s.method })} ${cumulative}`);
  }
  out.push('# HELP laneway_http_requests_in_flight Requests being answered now.', '# TYPE laneway_http_requests_in_flight gauge', `laneway_http_requests_in_flight ${snapshot.inFlight}`);
  out.push('# HELP laneway_limit_refusals_total Requests refused with 429 by a limit per visitor, by kind of limit.', '# TYPE laneway_limit_refusals_total counter');
  for (const kind of Object.keys(snapshot.limits ?? {}).sort()) out.push(`laneway_limit_refusals_total${labels({ kind })} ${snapshot.limits![kind]}`);
  for (const f of extra) {
    out.push(`# HELP ${f.name} ${f.help}`, `# TYPE ${f.name} ${f.type}`);
    for (const s of f.samples) out.push(`${f.name}${labels(s.labels ?? {})} ${num(s.value)}`);
  }
  return out.join('\n') + '\n';
}

/** Answers `GET`/`HEAD` of the exposition; `text` may be a Promise (a supervisor gathering its workers). */
export function sendMetrics(req: IncomingMessage, res: ServerResponse, text: () => string | Promise<string>): void {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { Allow: 'GET, HEAD', 'Content-Length': 0 });
    res.end();
    return;
  }
  Promise.resolve()
    .then(text)
    .then(
      (body) => {
        res.writeHead(200, { 'Content-Type': METRICS_CONTENT_TYPE, 'Cache-Control': 'no-store', 'Content-Length': Buffer.byteLength(body) });
        res.end(req.method === 'HEAD' ? undefined : body);
      },
      () => {
        if (res.headersSent) return void res.destroy();
        res.writeHead(503, { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' });
        res.end('metrics are not available right now\n');
      },
    );
}

/** A server of its own for the metrics (`--metrics-host H --metrics-port P`): `/__/metrics` and nothing else. */
export interface MetricsServer {
  url: string;
  close(): Promise<void>;
}

export function serveMetrics(host: string, port: number, text: () => string | Promise<string>): Promise<MetricsServer> {
  const server = createHttpServer({ keepAliveTimeout: 5_000 }, (req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === METRICS_PATH || path === '/metrics') return sendMetrics(req, res, text);
    res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' });
    res.end(`metrics are at ${METRICS_PATH}\n`);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const a = server.address() as AddressInfo;
      const shown = a.family === 'IPv6' ? `[${a.address}]` : a.address;
      resolve({
        url: `http://${shown}:${a.port}${METRICS_PATH}`,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}
