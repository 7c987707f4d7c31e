#!/usr/bin/env node
/**
 * Load and fault test of `laneway serve --workers 2` (docs/deploy.md, "Load and
 * fault test"). Loopback only, bounded in time. Run it with `npm run soak` (10 minutes by default);
 * test/load/soak.test.ts runs the same code for about half a minute in the normal suite.
 *
 *   SOAK_SECONDS             length of the load-and-kill phase (default 600)
 *   SOAK_KILL_EVERY_SECONDS  one worker is killed with SIGKILL this often (default 60; the first
 *                            kill comes half a period after the start). The supervisor waits
 *                            longer before each replacement while crashes go on (up to 16 s at
 *                            a kill every 10 s): for long runs, keep this at 20 or more
 *   SOAK_CONNECTIONS         concurrent clients (default 16)
 *   SOAK_MEMORY_TOLERANCE    the memory rule's allowance (default 0.25, below)
 *   SOAK_STRICT=0            a connection stranded in the supervisor is counted apart (below)
 *   SOAK_JSON=1              the figures as one JSON line after the report
 *
 * What it does:
 *
 * 1. Starts bin/laneway (it runs on dist/) as users run it: `serve test/fixtures/soak-app
 *    --workers 2 --port 0 --data <temp dir> --watchdog-ms 2000 --metrics --log off`, with the
 *    supervisor's TEST ONLY switch on (NODE_ENV=test, LANEWAY_TEST_ONLY_BLOCK_PATH=/api/block;
 *    src/supervisor/worker.ts), so that a request to /api/block blocks the worker's event loop.
 *    Both workers share one SQLite database.
 * 2. Drives a mixed load: SOAK_CONNECTIONS clients, each one keep-alive connection at a time,
 *    sending one request after the other: a static file (/css/site.css), a Mustache page (/), a
 *    JSON script (/api/status), a form POST that creates a record with a title unique to the
 *    request (/entries), and a 404. Every client closes its connection (`Connection: close`) after
 *    20 to 80 requests and opens a new one, so that new connections keep arriving and the
 *    supervisor keeps handing them to both workers. Every answer is checked (status and body).
 * 3. Kills one worker with SIGKILL every SOAK_KILL_EVERY_SECONDS: always the same slot ("B": the
 *    second worker to listen, then its replacements), so that the other one ("A") lives through
 *    the whole run. Just before the kill, the victim is stopped (SIGSTOP) and the connections it
 *    holds are read from /proc (its socket file descriptors, matched in /proc/net/tcp to the
 *    clients' ports): a stopped process accepts nothing, so that list is exact.
 * 4. Afterwards, with the load still running, sends one GET /api/block: the worker that takes it
 *    blocks; its watchdog must report it and the supervisor kill and replace it within the
 *    threshold (plus a margin), while the other worker keeps answering. The blocked worker's
 *    connections are read from /proc while it is blocked (a blocked loop accepts nothing either).
 * 5. Stops the load, reads the metrics once, stops the server (SIGTERM, exit 0), and counts the
 *    records in the database (better-sqlite3, read-only).
 *
 * The checks (any failure makes the run fail, exit 1):
 *
 * - Every request was answered with the expected status and body, or failed with a connection
 *   reset or close on a connection that the killed (or blocked) worker held when it was killed
 *   (opened before, failed after). Such failures are counted per kill, and are at most the number
 *   of connections that worker held. Anything else — a wrong status, a 5xx, a request never
 *   answered within 30 s, a reset of a connection of the surviving worker — is a lost request.
 *   A request never answered whose connection the supervisor itself held, opened as a worker
 *   died or while it was blocked ("stranded"), is a lost request too. node:cluster's round-robin
 *   hand-over left one such connection per worker death; the supervisor now hands connections
 *   over itself and gives those a dying worker never took to another worker (src/supervisor/
 *   primary.ts). SOAK_STRICT=0 counts them apart instead (to compare with a build from before).
 * - Every killed worker is reported by the supervisor (LW_SERVE_WORKER_CRASHED) and replaced by a
 *   new worker that listens (within 60 s, a generous limit: the supervisor's backoff is at most a
 *   few seconds here); the metrics count the restarts (crashed: the kills; blocked: 1).
 * - The blocked worker is reported (LW_SERVE_WORKER_BLOCKED, naming GET /api/block) and killed
 *   within the threshold + 10 s of the request, replaced within 60 s of the kill, and the other
 *   worker answered requests while it was blocked.
 * - Memory is flat. The resident set size (VmRSS in /proc/<pid>/status) of the supervisor and of
 *   each worker slot is sampled every second during the load-and-kill phase. A slot is a lineage
 *   of processes: slot B's samples are those of each of its processes in turn, slot A's of one
 *   process. The rule, per series: the median of the samples of the last third of the phase is
 *   at most 25 % (SOAK_MEMORY_TOLERANCE) above the median of the first third. Medians of thirds
 *   rather than first and last values: a young process's RSS grows while it warms up and a
 *   garbage collection makes RSS jump either way; a leak shows as a steady climb, which moves the
 *   median of a whole third. For slot B, whose processes live one kill period each, the rule
 *   says that replacements do not start ever bigger; slots A and the supervisor live through
 *   the whole run (and through every kill).
 * - Every record that a successful POST created is in the database afterwards; a record beyond
 *   those comes from a POST cut off by a kill (it committed, its answer was lost), and nothing
 *   else.
 *
 * Nothing here depends on the machine's speed: throughput is reported, never asserted, and every
 * time limit is a generous bound on something that takes well under a second on an idle machine.
 */
import { spawn } from 'node:child_process';
import { Agent, request } from 'node:http';
import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIN = join(ROOT, 'bin', 'laneway');
export const FIXTURE = join(ROOT, 'test', 'fixtures', 'soak-app');
const BLOCK_PATH = '/api/block';
/** src/supervisor/worker.ts, TEST_BLOCK_ENV (this script runs on dist/, not on the sources). */
const BLOCK_ENV = 'LANEWAY_TEST_ONLY_BLOCK_PATH';

export const DEFAULTS = Object.freeze({
  seconds: 600,
  killEverySeconds: 60,
  connections: 16,
  watchdogMs: 2000,
  /** Last third's median RSS over the first third's, at most 1 + this. */
  memoryTolerance: 0.25,
  /** A request not answered within this long is lost. */
  requestTimeoutMs: 30_000,
  sampleEveryMs: 1000,
  /** Load goes on this long after the blocked worker's replacement listens. */
  afterSeconds: 3,
  /** Each client's pause between two requests (0: none; the short test paces its load to share the machine). */
  pauseMs: 0,
  /**
   * true: a connection that the supervisor handed to a worker as it died (or blocked), and then
   * held unanswered, is a lost request; false: it is counted apart ("stranded"), at most one per
   * worker death (what node:cluster's round-robin hand-over did; docs/deploy.md).
   */
  strict: true,
});

/** Generous limits (they bound waits; they are never what a check compares a speed with). */
const START_LIMIT_MS = 120_000;
const REPLACE_LIMIT_MS = 60_000;
const BLOCK_MARGIN_MS = 10_000;
const STOP_LIMIT_MS = 60_000;
const MAX_FAILURES_KEPT = 10_000;

/**
 * @typedef {typeof DEFAULTS & { log?: (line: string) => void }} SoakOptions
 */

/** The options from the environment (SOAK_SECONDS, SOAK_KILL_EVERY_SECONDS, SOAK_CONNECTIONS, SOAK_MEMORY_TOLERANCE). */
export function optionsFromEnv(env = process.env) {
  const read = (name, fallback, { min = 1, integer = true } = {}) => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const n = Number(raw);
    if (!Number.isFinite(n) || n < min || (integer && !Number.isInteger(n))) throw new Error(`${name}=${JSON.stringify(raw)}: give a ${integer ? 'whole ' : ''}number of at least ${min}`);
    return n;
  };
  return {
    seconds: read('SOAK_SECONDS', DEFAULTS.seconds, { min: 5 }),
    killEverySeconds: read('SOAK_KILL_EVERY_SECONDS', DEFAULTS.killEverySeconds, { min: 2 }),
    connections: read('SOAK_CONNECTIONS', DEFAULTS.connections, { min: 2 }),
    memoryTolerance: read('SOAK_MEMORY_TOLERANCE', DEFAULTS.memoryTolerance, { min: 0, integer: false }),
    strict: env.SOAK_STRICT !== '0',
  };
}

// ---------------------------------------------------------------------------------------------
// /proc: the connections a process holds, and its memory.

/** Inodes of the sockets among a process's file descriptors. */
function socketInodes(pid) {
  const out = new Set();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) out.add(m[1]);
    } catch {
      // closed meanwhile
    }
  }
  return out;
}

/** inode → local and remote port, of every TCP socket of this network namespace. */
function tcpTable() {
  const table = new Map();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10) continue;
      const port = (address) => parseInt(address.slice(address.lastIndexOf(':') + 1), 16);
      table.set(f[9], { local: port(f[1]), remote: port(f[2]) });
    }
  }
  return table;
}

/** The client ports of the connections to `serverPort` whose server side process `pid` holds. */
export function connectionsOf(pid, serverPort) {
  const inodes = socketInodes(pid);
  const table = tcpTable();
  const ports = new Set();
  for (const inode of inodes) {
    const e = table.get(inode);
    if (e && e.local === serverPort && e.remote !== 0) ports.add(e.remote);
  }
  return ports;
}

/** Resident set size in kB (VmRSS), or undefined when the process is gone. */
function rssKB(pid) {
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

function median(values) {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

// ---------------------------------------------------------------------------------------------
// The server: bin/laneway in a child process, and the lines it writes.

const LISTENING = /^(?:\S+Z )?worker (\d+) listening \(pid (\d+)\)$/;
const CRASHED = /worker (\d+) \(pid (\d+)\) (.*) \[LW_SERVE_WORKER_CRASHED\]$/;
const BLOCKED = /worker (\d+) \(pid (\d+)\): its event loop has been blocked for ([\d.]+) s \(watchdog threshold ([\d.]+) s\) (.*); killing it \[LW_SERVE_WORKER_BLOCKED\]$/;

class Server {
  /** @type {Array<{ t: number, text: string }>} */
  lines = [];
  port = 0;
  #waiters = new Set();

  constructor(child, now) {
    this.child = child;
    for (const stream of [child.stdout, child.stderr]) {
      let buffered = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk) => {
        buffered += chunk;
        let nl;
        while ((nl = buffered.indexOf('\n')) !== -1) {
          this.lines.push({ t: now(), text: buffered.slice(0, nl) });
          buffered = buffered.slice(nl + 1);
          for (const w of [...this.#waiters]) w();
        }
      });
    }
    this.exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    this.exitedYet = false;
    void this.exited.then(() => {
      this.exitedYet = true;
      for (const w of [...this.#waiters]) w();
    });
  }

  /** The first line from index `from` on that `match` accepts (its regexp match, or true), with its index. */
  waitFor(match, what, from, limitMs) {
    return new Promise((resolve, reject) => {
      let next = from;
      const check = () => {
        for (; next < this.lines.length; next++) {
          const line = this.lines[next];
          const m = match(line.text);
          if (m) return done(() => resolve({ ...line, m, index: next }));
        }
        if (this.exitedYet) return done(() => reject(new Error(`the server exited before ${what}`)));
      };
      const timer = setTimeout(() => done(() => reject(new Error(`no ${what} within ${limitMs / 1000} s`))), limitMs);
      const done = (settle) => {
        clearTimeout(timer);
        this.#waiters.delete(check);
        settle();
      };
      this.#waiters.add(check);
      check();
    });
  }

  tail(n = 40) {
    return this.lines
      .slice(-n)
      .map((l) => l.text)
      .join('\n');
  }
}

// ---------------------------------------------------------------------------------------------
// The load.

/** A small deterministic generator (mulberry32), one per client: runs are alike. */
function generator(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The mix: what is asked, how often (weights), and what a right answer is (a problem's text, or ''). */
const MIX = [
  {
    kind: 'static',
    weight: 3,
    method: 'GET',
    path: '/css/site.css',
    check: (status, headers, text) => (status !== 200 ? 'status' : !/^text\/css/.test(String(headers['content-type'])) ? 'content-type' : !text.includes('font-family') ? 'body' : ''),
  },
  {
    kind: 'page',
    weight: 3,
    method: 'GET',
    path: '/',
    check: (status, headers, text) => (status !== 200 ? 'status' : !/^text\/html/.test(String(headers['content-type'])) ? 'content-type' : !text.includes('<h1 id="soak">') ? 'body' : ''),
  },
  {
    kind: 'json',
    weight: 2,
    method: 'GET',
    path: '/api/status',
    check: (status, _headers, text) => (status !== 200 ? 'status' : jsonField(text, 'ok') !== true ? 'body' : ''),
  },
  {
    kind: 'post',
    weight: 2,
    method: 'POST',
    path: '/entries',
    check: (status, _headers, text, title) => (status !== 200 ? 'status' : jsonField(text, 'title') !== title ? 'body' : ''),
  },
  {
    kind: 'missing',
    weight: 1,
    method: 'GET',
    path: '/missing/page',
    check: (status) => (status !== 404 ? 'status' : ''),
  },
];
const WEIGHTS = MIX.reduce((s, m) => s + m.weight, 0);

function jsonField(text, field) {
  try {
    return JSON.parse(text)[field];
  } catch {
    return undefined;
  }
}

const SOCKET_INFO = Symbol('soak socket');

/** A connection error that a killed server process causes (the peer closed or reset the connection). */
function isReset(err) {
  return err.code === 'ECONNRESET' || err.code === 'EPIPE' || err.message === 'socket hang up' || err.message === 'aborted';
}

/**
 * Sends one request; resolves to its outcome (never rejects). `agent` false: a connection of its own.
 * @returns {Promise<{ kind: string, started: number, ended: number, ok: boolean, status?: number, error?: string, detail?: string, title?: string, socket?: { id: number, port: number, opened: number } }>}
 */
function send(ctx, agent, spec, { title, close = false } = {}) {
  return new Promise((resolve) => {
    const started = ctx.now();
    const body = title === undefined ? undefined : `title=${encodeURIComponent(title)}`;
    const headers = {};
    if (body !== undefined) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      headers['content-length'] = String(Buffer.byteLength(body));
    }
    if (close) headers.connection = 'close';
    let socketInfo;
    let settled = false;
    const finish = (outcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ kind: spec.kind, started, ended: ctx.now(), title, socket: socketInfo, ...outcome });
    };
    const req = request({ host: '127.0.0.1', port: ctx.port, method: spec.method, path: spec.path, headers, agent }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const problem = spec.check(res.statusCode ?? 0, res.headers, text, title);
        finish(problem ? { ok: false, error: 'answer', status: res.statusCode, detail: `${problem}: ${res.statusCode} ${text.slice(0, 120)}` } : { ok: true, status: res.statusCode });
      });
      res.on('error', (err) => finish({ ok: false, error: isReset(err) ? 'reset' : 'other', detail: `${err.code ?? ''} ${err.message}`.trim() }));
      res.on('close', () => {
        if (!res.complete) finish({ ok: false, error: 'reset', detail: 'connection closed during the answer' });
      });
    });
    req.on('socket', (socket) => {
      if (!socket[SOCKET_INFO]) {
        const info = { id: ++ctx.socketCount, port: 0, opened: ctx.now() };
        socket[SOCKET_INFO] = info;
        if (socket.connecting) socket.once('connect', () => (info.port = socket.localPort ?? 0));
        else info.port = socket.localPort ?? 0;
      }
      socketInfo = socket[SOCKET_INFO];
    });
    req.on('error', (err) => {
      if (err.soakTimeout) return finish({ ok: false, error: 'timeout', detail: err.message, stranded: err.stranded === true });
      finish({ ok: false, error: isReset(err) ? 'reset' : 'other', detail: `${err.code ?? ''} ${err.message}`.trim() });
    });
    const timer = setTimeout(() => {
      const err = new Error(`no answer within ${ctx.requestTimeoutMs / 1000} s`);
      err.soakTimeout = true;
      // Who holds the connection? A connection the supervisor still holds was handed to no worker
      // that took it (node:cluster hands a connection to a worker, and closes its own copy when the
      // worker says it took it).
      if (socketInfo?.port) {
        try {
          if (connectionsOf(ctx.supervisorPid, ctx.port).has(socketInfo.port)) {
            err.message += '; the supervisor still holds the connection (handed to no live worker)';
            err.stranded = true;
          }
          else if (ctx.workerPids().some((pid) => connectionsOf(pid, ctx.port).has(socketInfo.port))) err.message += '; a live worker holds the connection';
        } catch {
          // gone
        }
      }
      req.destroy(err);
    }, ctx.requestTimeoutMs);
    req.end(body);
  });
}

/** One client: one request after the other, on one keep-alive connection, renewed every 20 to 80 requests. */
async function client(ctx, index) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const random = generator(0x5eed + index);
  const renewAfter = () => 20 + Math.floor(random() * 61);
  let left = renewAfter();
  let n = 0;
  while (!ctx.stopping) {
    let r = random() * WEIGHTS;
    const spec = MIX.find((m) => (r -= m.weight) < 0) ?? MIX[0];
    const close = --left <= 0;
    if (close) left = renewAfter();
    const title = spec.kind === 'post' ? `${ctx.runId}-${index}-${n}` : undefined;
    n++;
    const outcome = await send(ctx, agent, spec, { title, close });
    ctx.record(outcome);
    // After a failure, a short pause: a server that is gone must not turn this loop into a spin.
    if (!outcome.ok) await sleep(10);
    else if (ctx.pauseMs > 0) await sleep(ctx.pauseMs);
  }
  agent.destroy();
}

// ---------------------------------------------------------------------------------------------
// The run.

/**
 * Runs the soak; resolves to its result (never throws for a failed check: `ok` is false and
 * `problems` says why).
 * @param {Partial<SoakOptions>} [given]
 */
export async function runSoak(given = {}) {
  const o = { ...DEFAULTS, ...given };
  const log = given.log ?? (() => {});
  const t0 = performance.now();
  const now = () => performance.now() - t0;
  const problems = [];
  const dataDir = mkdtempSync(join(tmpdir(), 'laneway-soak-'));
  const bucketMs = 100;
  const ctx = {
    port: 0,
    supervisorPid: 0,
    requestTimeoutMs: o.requestTimeoutMs,
    pauseMs: o.pauseMs,
    runId: `s${Date.now().toString(36)}`,
    socketCount: 0,
    stopping: false,
    now,
    workerPids: () => [...lineage.values()].filter(Boolean),
    /** Requests by kind: sent, answered as expected. */
    byKind: Object.fromEntries(MIX.map((m) => [m.kind, { sent: 0, ok: 0 }])),
    /** Answers as expected, per 100 ms of completion time. */
    okBuckets: [],
    failures: [],
    failuresDropped: 0,
    okPosts: new Set(),
    failedPosts: new Set(),
    record(outcome) {
      const k = this.byKind[outcome.kind];
      k.sent++;
      if (outcome.ok) {
        k.ok++;
        const b = Math.floor(outcome.ended / bucketMs);
        this.okBuckets[b] = (this.okBuckets[b] ?? 0) + 1;
        if (outcome.title !== undefined) this.okPosts.add(outcome.title);
      } else {
        // Kept in full up to a bound (a server gone makes every request fail at once); counted beyond.
        if (this.failures.length < MAX_FAILURES_KEPT) this.failures.push(outcome);
        else this.failuresDropped++;
        if (outcome.title !== undefined) this.failedPosts.add(outcome.title);
      }
    },
  };
  const okBetween = (from, to) => {
    let n = 0;
    for (let b = Math.max(0, Math.ceil(from / bucketMs)); b < Math.floor(to / bucketMs); b++) n += ctx.okBuckets[b] ?? 0;
    return n;
  };

  /** Worker slots: 'A' (never killed by the schedule) and 'B' (killed every period); the pid serving in each. */
  const lineage = new Map();
  /** pid → slot, for every worker seen. */
  const slotOf = new Map();
  /** pid → when its listening line came. */
  const listenedAt = new Map();
  /** Samples: series ('supervisor', 'A', 'B') → [{ t, pid, kb }]. */
  const memory = { supervisor: [], A: [], B: [] };
  /** Every kill: the schedule's, then the watchdog's. */
  const kills = [];
  const block = {};
  let server;
  let clients = [];
  let sampler;
  let following;
  let loadStart = 0;
  let loadEnd = 0;
  let metricsText = '';
  let exit;
  const fail = (message) => {
    problems.push(message);
    log(`FAIL: ${message}`);
  };

  try {
    // 1. The server.
    const child = spawn(process.execPath, [BIN, 'serve', FIXTURE, '--workers', '2', '--port', '0', '--data', dataDir, '--watchdog-ms', String(o.watchdogMs), '--metrics', '--log', 'off'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, PORT: '', DATABASE_URL: '', LANEWAY_DATA: '', NO_COLOR: '1', NODE_ENV: 'test', [BLOCK_ENV]: BLOCK_PATH },
    });
    server = new Server(child, now);
    ctx.supervisorPid = child.pid ?? 0;
    const ready = await server.waitFor((t) => /^listening on (http:\/\/\S+)$/.exec(t), 'listening line', 0, START_LIMIT_MS);
    ctx.port = Number(new URL(ready.m[1]).port);
    const first = server.lines.map((l) => LISTENING.exec(l.text)).flatMap((m) => (m ? [Number(m[2])] : []));
    if (first.length !== 2) throw new Error(`expected 2 workers listening, saw ${first.length}`);
    lineage.set('A', first[0]);
    lineage.set('B', first[1]);
    slotOf.set(first[0], 'A');
    slotOf.set(first[1], 'B');
    await server.waitFor((t) => t.includes(`${BLOCK_ENV}=${BLOCK_PATH}`), `the workers' TEST ONLY line for ${BLOCK_ENV} (without it, no blocking phase)`, 0, 10_000);
    log(`server: supervisor pid ${ctx.supervisorPid}, workers A pid ${first[0]}, B pid ${first[1]}, port ${ctx.port}, data ${dataDir}`);

    // Keeps `lineage` up to date: a crash empties the slot, the next worker listening fills it.
    const vacant = [];
    let seen = 0;
    const follow = () => {
      for (; seen < server.lines.length; seen++) {
        const text = server.lines[seen].text;
        const crash = CRASHED.exec(text);
        if (crash) {
          const slot = slotOf.get(Number(crash[2]));
          if (slot && lineage.get(slot) === Number(crash[2])) {
            lineage.set(slot, 0);
            vacant.push(slot);
          }
          continue;
        }
        const up = LISTENING.exec(text);
        if (up && !slotOf.has(Number(up[2]))) {
          const slot = vacant.shift();
          if (slot) {
            lineage.set(slot, Number(up[2]));
            slotOf.set(Number(up[2]), slot);
            listenedAt.set(Number(up[2]), server.lines[seen].t);
          }
        }
      }
    };
    following = setInterval(follow, 20);

    // 2. The load, and the memory samples.
    loadStart = now();
    clients = Array.from({ length: o.connections }, (_, i) => client(ctx, i));
    const sample = () => {
      follow();
      const t = now();
      const kb = rssKB(ctx.supervisorPid);
      if (kb !== undefined) memory.supervisor.push({ t, pid: ctx.supervisorPid, kb });
      for (const slot of ['A', 'B']) {
        const pid = lineage.get(slot);
        const v = pid ? rssKB(pid) : undefined;
        if (v !== undefined) memory[slot].push({ t, pid, kb: v });
      }
    };
    sample();
    sampler = setInterval(sample, o.sampleEveryMs);

    // 3. The kills, every period, the first half a period in.
    const soakEnd = loadStart + o.seconds * 1000;
    const period = o.killEverySeconds * 1000;
    const total = Math.max(1, Math.floor((o.seconds * 1000 - period / 2) / period) + 1);
    for (let n = 1; n <= total; n++) {
      const at = loadStart + period / 2 + (n - 1) * period;
      await sleep(at - now());
      if (server.exitedYet) throw new Error('the server exited during the load');
      // The slot's replacement must be listening (it is, long since, unless the machine is very slow).
      const waitedFrom = now();
      while (!lineage.get('B') && now() - waitedFrom < REPLACE_LIMIT_MS) await sleep(50);
      const pid = lineage.get('B');
      if (!pid) throw new Error(`slot B has had no worker for ${REPLACE_LIMIT_MS / 1000} s`);
      // A replacement that came late (the supervisor's backoff grows with the crashes of the last
      // minute) serves a while before it is killed: a quarter of a period, at most 5 s.
      await sleep((listenedAt.get(pid) ?? 0) + Math.min(period / 4, 5000) - now());
      const mark = server.lines.length;
      const stoppedAt = now();
      // Stopped, the victim accepts nothing: the connections read now are all it holds when killed.
      process.kill(pid, 'SIGSTOP');
      let held;
      try {
        held = connectionsOf(pid, ctx.port);
      } finally {
        process.kill(pid, 'SIGKILL');
      }
      const kill = { n, why: 'SIGKILL', pid, slot: 'B', at: now(), held, strandFrom: stoppedAt - 1000, strandTo: Infinity };
      kills.push(kill);
      try {
        const crash = await server.waitFor((t) => CRASHED.exec(t)?.[2] === String(pid) && CRASHED.exec(t), `crash line of pid ${pid}`, mark, REPLACE_LIMIT_MS);
        kill.reportedAfter = crash.t - kill.at;
        kill.strandTo = crash.t;
        if (!/exited unexpectedly \(signal SIGKILL\)/.test(crash.m[3])) fail(`kill ${n}: the crash line says "${crash.m[3]}"`);
        const up = await server.waitFor((t) => LISTENING.exec(t), `a worker listening after kill ${n}`, crash.index, REPLACE_LIMIT_MS);
        kill.replacedBy = Number(up.m[2]);
        kill.replacedAfter = up.t - kill.at;
      } catch (err) {
        fail(`kill ${n} (pid ${pid}): ${err.message}`);
      }
      log(`kill ${n}/${total} at ${(kill.at / 1000 - loadStart / 1000).toFixed(1)} s: worker B pid ${pid}, ${held.size} connections; ` + (kill.replacedBy ? `replaced by pid ${kill.replacedBy} after ${(kill.replacedAfter / 1000).toFixed(1)} s` : 'not replaced'));
    }
    await sleep(soakEnd - now());
    clearInterval(sampler);
    sampler = undefined;
    loadEnd = now();
    const soakFailures = ctx.failures.length;
    log(`load phase over: ${Object.values(ctx.byKind).reduce((s, k) => s + k.sent, 0)} requests, ${soakFailures} failed`);

    // 4. A worker blocked, with the load still running.
    {
      const waitedFrom = now();
      while ((!lineage.get('A') || !lineage.get('B')) && now() - waitedFrom < REPLACE_LIMIT_MS) await sleep(50);
      const pids = [lineage.get('A'), lineage.get('B')].filter(Boolean);
      /** pid → snapshots of the connections it holds, every 100 ms while one of them blocks. */
      const snapshots = new Map(pids.map((p) => [p, []]));
      const poll = setInterval(() => {
        for (const pid of pids) {
          try {
            const t = now();
            snapshots.get(pid).push({ t, ports: connectionsOf(pid, ctx.port) });
          } catch {
            // gone
          }
        }
      }, 100);
      const mark = server.lines.length;
      block.sentAt = now();
      const blockRequest = send(ctx, false, { kind: 'block', method: 'GET', path: BLOCK_PATH, check: (status) => `answered ${status}` });
      try {
        const report = await server.waitFor((t) => BLOCKED.exec(t), 'watchdog report', mark, o.watchdogMs + BLOCK_MARGIN_MS + 30_000);
        block.pid = Number(report.m[2]);
        block.slot = slotOf.get(block.pid);
        block.blockedMs = Number(report.m[3]) * 1000;
        block.reportedAt = report.t;
        block.what = report.m[5];
        if (!block.what.startsWith(`while running GET ${BLOCK_PATH} (request `)) fail(`the watchdog report names "${block.what}", not GET ${BLOCK_PATH}`);
        if (block.blockedMs < o.watchdogMs - 100) fail(`the watchdog reported a block of ${block.blockedMs} ms, under its threshold of ${o.watchdogMs} ms`);
        const crash = await server.waitFor((t) => CRASHED.exec(t)?.[2] === String(block.pid) && CRASHED.exec(t), 'crash line of the blocked worker', report.index, REPLACE_LIMIT_MS);
        block.killedAt = crash.t;
        if (!/killed by the supervisor \(blocked event loop\)/.test(crash.m[3])) fail(`the blocked worker's crash line says "${crash.m[3]}"`);
        if (block.killedAt - block.sentAt > o.watchdogMs + BLOCK_MARGIN_MS) fail(`the blocked worker was killed ${((block.killedAt - block.sentAt) / 1000).toFixed(1)} s after the request: over the threshold (${o.watchdogMs / 1000} s) + ${BLOCK_MARGIN_MS / 1000} s`);
        clearInterval(poll);
        // The blocked worker's table stops changing when its loop stops: every snapshot taken since holds it all.
        const blockStart = block.reportedAt - block.blockedMs;
        const during = (snapshots.get(block.pid) ?? []).filter((s) => s.t >= blockStart + 100 && s.t < block.reportedAt);
        const held = new Set(during.flatMap((s) => [...s.ports]));
        const last = (snapshots.get(block.pid) ?? []).filter((s) => s.t < block.reportedAt).at(-1);
        if (during.length === 0 && last) for (const p of last.ports) held.add(p);
        kills.push({ n: kills.length + 1, why: 'blocked', pid: block.pid, slot: block.slot, at: during[0]?.t ?? last?.t ?? block.reportedAt, held, strandFrom: blockStart - 1000, strandTo: block.killedAt });
        block.held = held.size;
        // The other worker answered meanwhile (from half a second into the block to the kill).
        block.answeredMeanwhile = okBetween(blockStart + 500, block.killedAt);
        block.window = block.killedAt - (blockStart + 500);
        if (block.answeredMeanwhile === 0) fail(`no request was answered while worker pid ${block.pid} was blocked (${(block.window / 1000).toFixed(1)} s)`);
        const up = await server.waitFor((t) => LISTENING.exec(t), 'the blocked worker\u2019s replacement listening', crash.index, REPLACE_LIMIT_MS);
        block.replacedBy = Number(up.m[2]);
        block.replacedAfter = up.t - block.killedAt;
      } catch (err) {
        fail(`blocking phase: ${err.message}`);
      } finally {
        clearInterval(poll);
      }
      const outcome = await blockRequest;
      block.outcome = outcome.ok ? `answered ${outcome.status}` : `${outcome.error}: ${outcome.detail}`;
      if (outcome.ok || outcome.error === 'answer') fail(`GET ${BLOCK_PATH} was answered (${outcome.detail ?? outcome.status}): the TEST ONLY switch did not block the worker`);
      else if (outcome.error !== 'reset') fail(`GET ${BLOCK_PATH}: ${outcome.error}: ${outcome.detail}`);
      log(
        block.replacedBy
          ? `blocked: worker ${block.slot} pid ${block.pid}, reported after ${((block.reportedAt - block.sentAt) / 1000).toFixed(1)} s (blocked ${(block.blockedMs / 1000).toFixed(1)} s), killed after ${((block.killedAt - block.sentAt) / 1000).toFixed(1)} s, replaced by pid ${block.replacedBy} ${(block.replacedAfter / 1000).toFixed(1)} s later; ${block.answeredMeanwhile} requests answered meanwhile`
          : 'blocked: no replacement',
      );
    }
    await sleep(o.afterSeconds * 1000);

    // 5. Stop the load (each client finishes its request), read the metrics, stop the server.
    ctx.stopping = true;
    await Promise.all(clients);
    clearInterval(following);
    follow();
    try {
      metricsText = await getText(ctx.port, '/__/metrics');
    } catch (err) {
      fail(`GET /__/metrics: ${err.message}`);
    }
    child.kill('SIGTERM');
    exit = await within(server.exited, STOP_LIMIT_MS);
    if (!exit) fail(`the server did not stop within ${STOP_LIMIT_MS / 1000} s of SIGTERM`);
    else if (exit.code !== 0) fail(`the server exited with ${exit.code ?? exit.signal} after SIGTERM`);
  } catch (err) {
    fail(err.message);
  } finally {
    ctx.stopping = true;
    clearInterval(sampler);
    clearInterval(following);
    if (server && !server.exitedYet) {
      // Something went wrong: the supervisor and the workers it started go (by pid).
      for (const pid of [...lineage.values()].filter(Boolean)) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone
        }
      }
      server.child.kill('SIGKILL');
      await server.exited;
    }
    await within(Promise.all(clients), o.requestTimeoutMs + 5000);
  }

  // ---- The checks.
  const byKind = ctx.byKind;
  const sent = Object.values(byKind).reduce((s, k) => s + k.sent, 0);
  const answered = Object.values(byKind).reduce((s, k) => s + k.ok, 0);

  // Every failure: a reset on a connection that a killed worker held (opened before it was read, failed after).
  const perKill = new Map(kills.map((k) => [k, 0]));
  const strandedPerKill = new Map(kills.map((k) => [k, 0]));
  const lost = [];
  const stranded = [];
  for (const f of ctx.failures) {
    const s = f.socket;
    const kill =
      f.error === 'reset' && s && s.port
        ? kills
            .filter((k) => k.held.has(s.port) && s.opened <= k.at && f.ended >= k.at)
            .sort((a, b) => b.at - a.at)[0]
        : undefined;
    if (kill) {
      perKill.set(kill, perKill.get(kill) + 1);
      continue;
    }
    // Never answered, and the supervisor still held the connection: handed to a worker as it died.
    const death = f.stranded && s ? kills.find((k) => s.opened >= k.strandFrom && s.opened <= k.strandTo) : undefined;
    if (death && !o.strict) {
      strandedPerKill.set(death, strandedPerKill.get(death) + 1);
      stranded.push(f);
    } else lost.push(f);
  }
  // node:cluster hands a worker one connection at a time: at most one can be stranded per death.
  for (const [k, n] of strandedPerKill) if (n > 1) fail(`kill ${k.n}: ${n} connections stranded in the supervisor, more than the one it can have been handing over`);
  const rel = (t) => `${((t - loadStart) / 1000).toFixed(2)} s`;
  for (const f of lost.slice(0, 20)) fail(`request lost: ${f.kind} sent at ${rel(f.started)}, ${f.error}: ${f.detail} (connection ${f.socket?.id ?? '-'}, port ${f.socket?.port ?? '-'}, opened at ${f.socket ? rel(f.socket.opened) : '-'}; kills at ${kills.map((k) => rel(k.at)).join(', ') || '-'})`);
  if (lost.length > 20) fail(`… and ${lost.length - 20} more requests lost`);
  if (ctx.failuresDropped) fail(`${ctx.failuresDropped} more requests failed (not kept in detail)`);
  for (const [k, n] of perKill) if (n > k.held.size) fail(`kill ${k.n}: ${n} failures, more than the ${k.held.size} connections the worker held`);
  if (sent === 0 || answered === 0) fail('no request was answered');

  // Replacements, and the supervisor's own count of them.
  const scheduled = kills.filter((k) => k.why === 'SIGKILL');
  const replaced = scheduled.filter((k) => k.replacedBy).length;
  if (replaced !== scheduled.length) fail(`${scheduled.length - replaced} of ${scheduled.length} killed workers were not replaced`);
  const restarts = (reason) => Number(new RegExp(`^laneway_worker_restarts_total\\{reason="${reason}"\\} (\\d+)$`, 'm').exec(metricsText)?.[1] ?? NaN);
  if (metricsText) {
    if (restarts('crashed') !== scheduled.length) fail(`the metrics count ${restarts('crashed')} crashed workers, not ${scheduled.length}`);
    if (restarts('blocked') !== 1) fail(`the metrics count ${restarts('blocked')} blocked workers, not 1`);
  }

  // Memory: the median of the last third of the load phase over that of the first third.
  const memoryRows = [];
  for (const [series, samples] of loadEnd > 0 ? Object.entries(memory) : []) {
    const span = loadEnd - loadStart;
    const firstThird = samples.filter((s) => s.t < loadStart + span / 3).map((s) => s.kb);
    const lastThird = samples.filter((s) => s.t >= loadStart + (2 * span) / 3 && s.t <= loadEnd).map((s) => s.kb);
    const row = { series, pids: new Set(samples.map((s) => s.pid)).size, samples: samples.length, first: median(firstThird), last: median(lastThird), max: Math.max(...samples.map((s) => s.kb)) };
    row.growth = row.last / row.first - 1;
    // The trend, for the report: the median of each tenth of the phase.
    row.tenths = Array.from({ length: 10 }, (_, i) => median(samples.filter((s) => s.t >= loadStart + (i * span) / 10 && s.t < loadStart + ((i + 1) * span) / 10).map((s) => s.kb)));
    memoryRows.push(row);
    if (firstThird.length < 3 || lastThird.length < 3) fail(`memory of ${series}: too few samples (${firstThird.length} in the first third, ${lastThird.length} in the last); is the kill period much longer than the supervisor's restart backoff?`);
    else if (!(row.growth <= o.memoryTolerance)) fail(`memory of ${series}: median RSS ${mb(row.first)} MB in the first third, ${mb(row.last)} MB in the last (+${(row.growth * 100).toFixed(0)} %, over ${(o.memoryTolerance * 100).toFixed(0)} %)`);
  }

  // The database: every record a successful POST wrote, and none but from POSTs cut off.
  const database = { present: 0, missing: 0, extra: 0, unknown: 0 };
  const file = join(dataDir, 'laneway.db');
  if (exit && existsSync(file)) {
    try {
      const db = new Database(file, { readonly: true, fileMustExist: true });
      try {
        const titles = new Set(db.prepare('SELECT f_title FROM lw_Entry WHERE f_title LIKE ?').pluck().all(`${ctx.runId}-%`));
        database.rows = db.prepare('SELECT count(*) FROM lw_Entry').pluck().get();
        for (const t of ctx.okPosts) if (titles.has(t)) database.present++;
        else database.missing++;
        for (const t of titles) {
          if (ctx.okPosts.has(t)) continue;
          if (ctx.failedPosts.has(t)) database.extra++;
          else database.unknown++;
        }
      } finally {
        db.close();
      }
    } catch (err) {
      fail(`the database: ${err.message}`);
    }
    if (database.missing) fail(`${database.missing} of ${ctx.okPosts.size} records written by successful POSTs are not in the database`);
    if (database.unknown) fail(`${database.unknown} records in the database come from no POST that was sent`);
  } else if (exit) fail(`no database at ${file}`);

  // ---- The report.
  const seconds = (loadEnd - loadStart) / 1000;
  const figures = {
    date: new Date().toISOString(),
    seconds: o.seconds,
    killEverySeconds: o.killEverySeconds,
    connections: o.connections,
    watchdogMs: o.watchdogMs,
    requests: sent,
    answered,
    failed: ctx.failures.length + ctx.failuresDropped,
    lost: lost.length + ctx.failuresDropped,
    stranded: stranded.length,
    byKind,
    connectionsOpened: ctx.socketCount,
    kills: kills.map((k) => ({ n: k.n, why: k.why, pid: k.pid, slot: k.slot, held: k.held.size, failed: perKill.get(k), stranded: strandedPerKill.get(k), replacedBy: k.replacedBy, replacedAfterMs: k.replacedAfter === undefined ? undefined : Math.round(k.replacedAfter) })),
    block: {
      pid: block.pid,
      slot: block.slot,
      reportedAfterMs: block.reportedAt === undefined ? undefined : Math.round(block.reportedAt - block.sentAt),
      blockedMs: block.blockedMs,
      killedAfterMs: block.killedAt === undefined ? undefined : Math.round(block.killedAt - block.sentAt),
      replacedBy: block.replacedBy,
      replacedAfterMs: block.replacedAfter === undefined ? undefined : Math.round(block.replacedAfter),
      answeredMeanwhile: block.answeredMeanwhile,
      held: block.held,
      request: block.outcome,
    },
    memory: memoryRows.map((r) => ({ series: r.series, processes: r.pids, samples: r.samples, firstThirdMB: round1(r.first / 1024), lastThirdMB: round1(r.last / 1024), maxMB: round1(r.max / 1024), growth: round3(r.growth), tenthsMB: r.tenths.map((kb) => round1(kb / 1024)) })),
    database,
    restarts: metricsText ? { crashed: restarts('crashed'), blocked: restarts('blocked') } : undefined,
  };
  const lines = [];
  lines.push(`Laneway soak, ${figures.date}: ${o.seconds} s of load on 2 workers, ${o.connections} connections, one worker killed every ${o.killEverySeconds} s; watchdog ${o.watchdogMs} ms`);
  lines.push(`requests: ${sent} (${seconds > 0 ? Math.round(answered / seconds) : 0}/s in the load phase, not a benchmark), answered as expected ${answered}, failed ${ctx.failures.length + ctx.failuresDropped}: in flight on a killed worker ${ctx.failures.length - lost.length - stranded.length}, stranded ${stranded.length}, lost ${lost.length + ctx.failuresDropped}; connections opened ${ctx.socketCount}`);
  lines.push('  by kind: ' + MIX.map((m) => `${m.kind} ${byKind[m.kind].ok}/${byKind[m.kind].sent}`).join(', '));
  lines.push(`kills: ${scheduled.length}, replaced ${replaced}; per kill, failures (in flight on the victim) / connections it held, replacement listening after:`);
  lines.push(
    '  ' +
      kills
        .map((k) => `#${k.n}${k.why === 'blocked' ? ' (blocked)' : ''} pid ${k.pid}: ${perKill.get(k)}/${k.held.size}${strandedPerKill.get(k) ? ` + ${strandedPerKill.get(k)} stranded` : ''}${k.replacedAfter !== undefined ? `, ${(k.replacedAfter / 1000).toFixed(1)} s` : block.pid === k.pid && block.replacedAfter !== undefined ? `, ${(block.replacedAfter / 1000).toFixed(1)} s` : ''}`)
        .join('; '),
  );
  if (block.pid)
    lines.push(
      `blocked worker: pid ${block.pid} (slot ${block.slot}), watchdog report ${((block.reportedAt - block.sentAt) / 1000).toFixed(1)} s after GET ${BLOCK_PATH} (blocked ${(block.blockedMs / 1000).toFixed(1)} s), killed after ${block.killedAt ? ((block.killedAt - block.sentAt) / 1000).toFixed(1) : '?'} s, replacement listening ${block.replacedAfter !== undefined ? (block.replacedAfter / 1000).toFixed(1) : '?'} s later; the other worker answered ${block.answeredMeanwhile ?? '?'} requests meanwhile; the blocking request: ${block.outcome}`,
    );
  lines.push(`memory (RSS, median of the first third → of the last third of the load phase; max): ` + memoryRows.map((r) => `${r.series === 'supervisor' ? 'supervisor' : `worker ${r.series} (${r.pids} process${r.pids === 1 ? '' : 'es'})`} ${mb(r.first)} → ${mb(r.last)} MB (${r.growth >= 0 ? '+' : ''}${(r.growth * 100).toFixed(1)} %; max ${mb(r.max)})`).join(', '));
  lines.push(`  by tenth of the load phase (median MB): ` + memoryRows.map((r) => `${r.series} ${r.tenths.map((kb) => mb(kb)).join(' ')}`).join('; '));
  lines.push(`database: ${ctx.okPosts.size} records written by successful POSTs, ${database.present} present, ${database.missing} missing; ${database.extra} more from POSTs cut off in flight; ${database.unknown} unknown`);
  if (metricsText) lines.push(`metrics: laneway_worker_restarts_total crashed ${restarts('crashed')}, blocked ${restarts('blocked')}`);
  if (stranded.length)
    lines.push(
      `STRANDED (SOAK_STRICT=0): ${stranded.length} requests never answered: each on a new connection that the supervisor handed to a worker as it died (or while it was blocked), and then held open unanswered until the client gave up after ${o.requestTimeoutMs / 1000} s. At most one per worker death; without SOAK_STRICT=0 they are lost requests.`,
    );
  lines.push(problems.length ? `FAIL (${problems.length}):\n  ${problems.join('\n  ')}` : 'PASS');
  if (problems.length && server) lines.push(`last lines of the server:\n${server.tail(30)}`);
  rmSync(dataDir, { recursive: true, force: true });
  return { ok: problems.length === 0, problems, report: lines.join('\n'), figures };
}

/** A GET's body text (loopback, fresh connection). */
function getText(port, path) {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.setTimeout(30_000, () => req.destroy(new Error('no answer')));
    req.end();
  });
}

/** The promise's value, or undefined after `ms` (the timer does not outlive the promise). */
async function within(promise, ms) {
  let timer;
  try {
    return await Promise.race([promise, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}
const mb = (kb) => (Number.isFinite(kb) ? (kb / 1024).toFixed(1) : '-');
const round1 = (x) => Math.round(x * 10) / 10;
const round3 = (x) => Math.round(x * 1000) / 1000;

// Run as a script: options from the environment, progress and the report on standard output.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  let options;
  try {
    options = optionsFromEnv();
  } catch (err) {
    console.error(`soak: ${err.message}`);
    process.exit(2);
  }
  const started = new Date();
  console.log(`soak: ${options.seconds} s, a kill every ${options.killEverySeconds} s, ${options.connections} connections (started ${started.toISOString()})`);
  const result = await runSoak({ ...options, log: (line) => console.log(`[${((Date.now() - started.getTime()) / 1000).toFixed(0).padStart(4)} s] ${line}`) });
  console.log('\n' + result.report);
  if (process.env.SOAK_JSON) console.log(JSON.stringify(result.figures));
  process.exit(result.ok ? 0 : 1);
}
