// Shared helpers for bench/*.bench.mjs: servers in child processes, autocannon in this process,
// loopback only, every run bounded in time.
//
// A scenario is measured as alternating runs (baseline, candidate, baseline, candidate, …) after
// one warm-up per server; the figure reported for each side is the median req/s of its runs.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { availableParallelism, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

export const BENCH_DIR = fileURLToPath(new URL('.', import.meta.url));

/** Workload, overridable from the environment for a quick or a long run. */
export const WORKLOAD = Object.freeze({
  connections: Number(process.env.BENCH_CONNECTIONS ?? 50),
  warmupSeconds: Number(process.env.BENCH_WARMUP ?? 3),
  seconds: Number(process.env.BENCH_SECONDS ?? 4),
  /** Runs per side: 2 gives A B A B. */
  rounds: Number(process.env.BENCH_ROUNDS ?? 2),
  pipelining: 1,
});

const HOST = '127.0.0.1';
const children = new Set();

/**
 * Pinning (BENCH_PIN, on by default where `taskset` exists and there are 2 or more cores): the
 * servers of startServer() run on the last core, this process (the load generator) on the others,
 * so the two do not take turns on one core. Benches that spawn their own servers (cluster,
 * startup) are left as they are. BENCH_PIN=0 switches it off.
 */
const TASKSET = '/usr/bin/taskset';
const CORES = availableParallelism();
export const PINNED = process.env.BENCH_PIN !== '0' && CORES >= 2 && existsSync(TASKSET);
const SERVER_CORE = String(CORES - 1);
let selfPinned = false;
/** Pins this process to the cores the servers do not use; done by the first startServer(). */
function pinSelf() {
  if (selfPinned) return;
  selfPinned = true;
  try {
    execFileSync(TASKSET, ['-a', '-p', '-c', `0-${CORES - 2}`, String(process.pid)], { stdio: 'ignore' });
  } catch {
    // Not allowed here: the load generator then runs unpinned.
  }
}

/** Server pid by port, for the CPU time per request (/proc/<pid>/stat). */
const pidByPort = new Map();
const TICK_US = 1e6 / 100; // USER_HZ is 100 on Linux
/** CPU time (user + system, µs) the process has used so far, or null where /proc is not there. */
function cpuMicros(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * TICK_US;
  } catch {
    return null;
  }
}

/**
 * Starts counting a server process's CPU time: the function answers its µs per request for the
 * `requests` answered since (null when the pid is unknown, /proc is not there, or none answered).
 */
export function cpuMeter(pid) {
  const before = pid === undefined ? null : cpuMicros(pid);
  return (requests) => {
    const after = before === null ? null : cpuMicros(pid);
    return after === null || requests === 0 ? null : (after - before) / requests;
  };
}

function killChildren() {
  for (const child of children) child.kill('SIGKILL');
  children.clear();
}
process.on('exit', killChildren);
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    killChildren();
    process.exit(130);
  });
}

/**
 * Starts `node <script> ...args` and waits for its first stdout line, `listening <port>`.
 * The child is killed when this process exits, or by calling `stop()`.
 */
export function startServer(script, args = [], { timeoutMs = 10_000 } = {}) {
  return new Promise((resolve, reject) => {
    if (PINNED) pinSelf();
    const command = PINNED ? [TASKSET, ['-c', SERVER_CORE, process.execPath, script, ...args]] : [process.execPath, [script, ...args]];
    const child = spawn(command[0], command[1], { stdio: ['ignore', 'pipe', 'inherit'] });
    children.add(child);
    let out = '';
    const timer = setTimeout(() => fail(new Error(`${script} did not report a port within ${timeoutMs} ms`)), timeoutMs);
    function fail(err) {
      clearTimeout(timer);
      child.kill('SIGKILL');
      children.delete(child);
      reject(err);
    }
    child.once('error', fail);
    child.once('exit', (code) => fail(new Error(`${script} exited (code ${code}) before listening: ${out.trim()}`)));
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', function onData(chunk) {
      out += chunk;
      const m = /^listening (\d+)\s*$/m.exec(out);
      if (!m) return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      child.stdout.off('data', onData);
      child.stdout.resume();
      pidByPort.set(Number(m[1]), child.pid);
      resolve({
        port: Number(m[1]),
        pid: child.pid,
        stop() {
          children.delete(child);
          return new Promise((done) => {
            if (child.exitCode !== null) return done();
            child.once('exit', () => done());
            child.kill('SIGTERM');
            setTimeout(() => child.kill('SIGKILL'), 2_000).unref();
          });
        },
      });
    });
  });
}

/** One plain GET, as autocannon will send it (no Accept-Encoding). */
export function fetchOnce(port, path, headers) {
  return new Promise((resolve, reject) => {
    const req = request({ host: HOST, port, path, method: 'GET', agent: false, ...(headers && { headers }) }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.setTimeout(5_000, () => req.destroy(new Error(`GET ${path} timed out`)));
    req.on('error', reject);
    req.end();
  });
}

const VOLATILE = new Set(['x-request-id', 'date', 'connection', 'keep-alive']);

/** Response headers without the ones that change per response or per connection. */
export function stableHeaders(headers) {
  return Object.fromEntries(Object.entries(headers).filter(([k]) => !VOLATILE.has(k)).sort(([a], [b]) => (a < b ? -1 : 1)));
}

/**
 * Checks a target before timing it; throws (and so fails the bench) when the status or body is
 * not the expected one, or when `same` (another response) differs in status, headers or bytes.
 */
export async function checkTarget(label, port, path, { status, bodyIncludes, same, headers } = {}) {
  const res = await fetchOnce(port, path, headers);
  const problems = [];
  if (status !== undefined && res.status !== status) problems.push(`status ${res.status}, expected ${status}`);
  if (bodyIncludes !== undefined && !res.body.includes(bodyIncludes)) problems.push(`body lacks ${JSON.stringify(bodyIncludes)}`);
  if (same) {
    if (same.status !== res.status) problems.push(`status ${res.status} differs from ${same.status}`);
    const a = JSON.stringify(stableHeaders(res.headers));
    const b = JSON.stringify(stableHeaders(same.headers));
    if (a !== b) problems.push(`headers differ:\n  ${a}\n  ${b}`);
    if (!res.body.equals(same.body)) problems.push('body bytes differ');
  }
  if (problems.length) throw new Error(`${label}: GET ${path} is wrong before timing:\n  ${problems.join('\n  ')}`);
  return res;
}

/**
 * One bounded autocannon run; throws on socket errors, timeouts or an unexpected status.
 * `connections` defaults to the workload's (BENCH_CONNECTIONS).
 */
export async function load(port, path, seconds, expectStatus, headers, connections = WORKLOAD.connections) {
  const cpu = cpuMeter(pidByPort.get(port));
  const result = await autocannon({
    url: `http://${HOST}:${port}${path}`,
    ...(headers && { headers }),
    connections,
    pipelining: WORKLOAD.pipelining,
    duration: seconds,
    timeout: 5,
  });
  const statuses = Object.keys(result.statusCodeStats ?? {}).map(Number);
  if (result.errors || result.timeouts || statuses.some((s) => s !== expectStatus)) {
    throw new Error(`GET ${path}: ${result.errors} errors, ${result.timeouts} timeouts, statuses ${statuses.join(', ')} (expected only ${expectStatus})`);
  }
  return {
    rps: result.requests.total / result.duration,
    p99: result.latency.p99,
    /** Server CPU µs per request (its process alone; null when unknown). */
    cpu: cpu(result.requests.total),
  };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};

/**
 * Measures one scenario: baseline and candidate alternate (A B A B …) after a warm-up of each.
 * `a` and `b` are `{ label, port, path }`, with optional request `headers` and `connections`
 * (default: the workload's); both must answer `expectStatus`.
 */
export async function compare(name, a, b, expectStatus) {
  await load(a.port, a.path, WORKLOAD.warmupSeconds, expectStatus, a.headers, a.connections);
  await load(b.port, b.path, WORKLOAD.warmupSeconds, expectStatus, b.headers, b.connections);
  const runs = { a: [], b: [] };
  for (let i = 0; i < WORKLOAD.rounds; i++) {
    runs.a.push(await load(a.port, a.path, WORKLOAD.seconds, expectStatus, a.headers, a.connections));
    runs.b.push(await load(b.port, b.path, WORKLOAD.seconds, expectStatus, b.headers, b.connections));
  }
  return paired(name, side(a.label, runs.a), side(b.label, runs.b));
}

/** The figures of one side of a comparison: medians of its runs. */
function side(label, rs) {
  return {
    label,
    rps: median(rs.map((r) => r.rps)),
    runs: rs.map((r) => Math.round(r.rps)),
    p99: median(rs.map((r) => r.p99)),
    cpu: rs.every((r) => r.cpu !== null) ? median(rs.map((r) => r.cpu)) : null,
  };
}

/** A comparison's result: the ratio of req/s, and baseline CPU per request ÷ the candidate's (above 1 when the candidate costs less). */
function paired(name, baseline, candidate) {
  return {
    name,
    baseline,
    candidate,
    ratio: candidate.rps / baseline.rps,
    cpuRatio: baseline.cpu !== null && candidate.cpu !== null ? baseline.cpu / candidate.cpu : null,
  };
}

/**
 * Measures one candidate against several baselines in the same run: a warm-up of each, then
 * rounds of candidate, baseline 1, baseline 2, … (BENCH_ROUNDS rounds). Returns one compare()-shaped
 * result per baseline, each paired with the candidate's runs of the same rounds.
 */
export async function compareMany(name, candidate, baselines, expectStatus) {
  const all = [candidate, ...baselines];
  for (const t of all) await load(t.port, t.path, WORKLOAD.warmupSeconds, expectStatus, t.headers, t.connections);
  const runs = all.map(() => []);
  for (let i = 0; i < WORKLOAD.rounds; i++) {
    for (const [j, t] of all.entries()) runs[j].push(await load(t.port, t.path, WORKLOAD.seconds, expectStatus, t.headers, t.connections));
  }
  const cand = side(candidate.label, runs[0]);
  return baselines.map((b, j) => paired(`${name}: ${candidate.label} vs ${b.label}`, side(b.label, runs[j + 1]), cand));
}

/** Prints one scenario's figures; `target` is the ratio the candidate should reach. */
export function report(result, target) {
  const fmt = (n) => Math.round(n).toLocaleString('en-US').padStart(8);
  const cpu = (s) => (s.cpu === null ? '' : `  ${s.cpu.toFixed(1).padStart(7)} CPU µs/req`);
  const side = (s) => `  ${s.label.padEnd(16)} ${fmt(s.rps)} req/s${cpu(s)}  (runs ${s.runs.join(', ')}; p99 ${s.p99} ms)`;
  const verdict = target === undefined ? '' : result.ratio >= target ? `  ≥ ${target} ✓` : `  < ${target} ✗ (below target)`;
  const cpuRatio = result.cpuRatio == null ? '' : `; CPU/req ${result.cpuRatio.toFixed(3)}× (baseline ÷ candidate)`;
  console.log(`${result.name}\n${side(result.baseline)}\n${side(result.candidate)}\n  ratio ${result.ratio.toFixed(3)}×${verdict}${cpuRatio}\n`);
}

export function describeWorkload() {
  const w = WORKLOAD;
  const pin = PINNED ? `servers pinned to core ${SERVER_CORE}, load generator to the others` : 'unpinned';
  const load = loadavg().map((x) => x.toFixed(2)).join(' ');
  return `autocannon, ${w.connections} connections, pipelining ${w.pipelining}, ${w.warmupSeconds} s warm-up per server, then ${w.rounds}× alternating ${w.seconds} s runs per side; median req/s and server CPU µs/request; ${pin}; load average ${load}`;
}

/**
 * A response as bench/servers/bare-static.mjs replays it (status, headers, body as base64):
 * Date, Connection and Keep-Alive left out, since Node adds them to both servers.
 */
export function cannedResponse(res) {
  const { date: _d, connection: _c, 'keep-alive': _k, ...headers } = res.headers;
  return { status: res.status, headers, body: res.body.toString('base64') };
}
