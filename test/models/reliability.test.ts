/**
 * Reliability of the data layer (docs/data.md), on both engines, against real `laneway serve`
 * processes (bin/laneway, built into dist/) spoken to over loopback HTTP:
 *
 * - a server killed with SIGKILL in the middle of a burst of writing requests loses no
 *   acknowledged write and shows no partial transaction after a restart on the same data;
 * - two Laneway processes on one SQLite file, and two on one PostgreSQL database, serve the same
 *   data with no lost update;
 * - a PostgreSQL restart during load: requests fail cleanly (503, never a hang or a dropped
 *   connection), then succeed again without restarting Laneway, and no acknowledged write is lost.
 *
 * (100 concurrent increments of one record in one process: test/models/store.test.ts.)
 *
 * Nothing here depends on the machine's speed: the kill happens after a number of acknowledged
 * answers while requests are known to be outstanding, phases are entered on events, and the only
 * time limits are generous ones that turn a hang into a failure instead of a stuck run.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { writeApp } from '../helpers.js';
import { startPostgres } from '../support/postgres.js';

const BIN = fileURLToPath(new URL('../../bin/laneway', import.meta.url));
/** Far above a normal answer: a request that takes this long counts as hung. */
const REQUEST_TIMEOUT_MS = 15_000;
/** Longest wait for a server to print its listening line, or for a phase of a test to be reached. */
const WAIT_MS = 60_000;

/**
 * The app: POST /orders writes one transaction of five rows (an Order, three Lines contained in it,
 * then the increment of a Counter, read after those writes), so that any partial transaction is
 * visible: an order with fewer than three lines, lines without an order, or a counter that
 * disagrees with the orders.
 */
const APP = {
  '📦/🌐Order.yaml': 'ref: string\n',
  '📦/Order/🌐Line.yaml': 'n: integer\n',
  '📦/🌐Counter.yaml': 'name: string\ncount:\n  type: integer\n  init: 0\n',
  'orders/POST.js': [
    "import {Order, Line, Counter} from '📦';",
    "import {ref} from 'form';",
    'let o = new Order().ref(ref);',
    'new Line(o).n(1);',
    'new Line(o).n(2);',
    'new Line(o).n(3);',
    "let c = Counter.name('orders').optional();",
    "if (c == null) { c = new Counter().name('orders'); }",
    'c.count += 1;',
    '({id: o.id, ref: o.ref});',
    '',
  ].join('\n'),
  'orders/GET.js': [
    "import {Order, Line, Counter} from '📦';",
    "let c = Counter.name('orders').optional();",
    '({',
    '  orders: Order.all().map((o) => ({id: o.id, ref: o.ref, lines: Line.order(o).map((l) => l.n)})),',
    '  lines: Line.anyOrder().count(),',
    '  counter: c == null ? 0 : c.count,',
    '});',
    '',
  ].join('\n'),
  'orders/{order}/🔗.yaml': 'field: 📦.Order.id\n',
  'orders/{order}/GET.js': "import {Line} from '📦';\nimport {order} from '🔗';\nlet o = order.get();\n({id: o.id, ref: o.ref, lines: Line.order(o).map((l) => l.n)});\n",
  'counter/POST.js': "import {Counter} from '📦';\nlet c = Counter.name('c').optional();\nif (c == null) { c = new Counter().name('c'); }\nc.count += 1;\n({count: c.count});\n",
  'counter/GET.js': "import {Counter} from '📦';\nCounter.name('c').get();\n",
};

// ---------------------------------------------------------------------------------------------
// Temporary directories and child processes, always cleaned up (after() runs on failure too).

const dirs: string[] = [];
const children = new Set<ChildProcess>();

function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

function newApp(): string {
  const dir = writeApp(APP);
  dirs.push(dir);
  return dir;
}

const isRunning = (child: ChildProcess) => child.exitCode === null && child.signalCode === null;

function exitOf(child: ChildProcess): Promise<void> {
  return isRunning(child) ? new Promise((resolve) => child.once('exit', () => resolve())) : Promise.resolve();
}

after(async () => {
  await Promise.all(
    [...children].map((child) => {
      const exited = exitOf(child);
      if (isRunning(child)) child.kill('SIGKILL');
      return exited;
    }),
  );
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

// ---------------------------------------------------------------------------------------------
// A `laneway serve` child process.

interface Laneway {
  child: ChildProcess;
  port: number;
  /** The end of what it printed (stdout and stderr), for failure messages. */
  output(): string;
}

/** Starts `laneway serve appDir` with `storage` (--data DIR or --database URL); resolves once it listens. */
function startLaneway(appDir: string, storage: string[]): Promise<Laneway> {
  const env = { ...process.env };
  for (const key of ['PORT', 'LANEWAY_DATA', 'DATABASE_URL']) delete env[key];
  const child = spawn(process.execPath, [BIN, 'serve', appDir, '--port', '0', '--host', '127.0.0.1', '--log', 'off', ...storage], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env,
  });
  children.add(child);
  let out = '';
  const collect = (d: Buffer) => {
    out += d.toString();
    if (out.length > 200_000) out = out.slice(-100_000);
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  return new Promise<Laneway>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`laneway serve did not start within ${WAIT_MS / 1000} s:\n${out}`));
    }, WAIT_MS);
    const onData = () => {
      const m = /^listening on http:\/\/127\.0\.0\.1:(\d+)$/m.exec(out);
      if (!m) return;
      clearTimeout(timer);
      child.stdout!.off('data', onData);
      child.off('exit', onExit);
      resolve({ child, port: Number(m[1]), output: () => out.slice(-4000) });
    };
    const onExit = (code: number | null, signal: string | null) => {
      clearTimeout(timer);
      reject(new Error(`laneway serve exited (${code ?? signal}) before listening:\n${out}`));
    };
    child.stdout!.on('data', onData);
    child.once('exit', onExit);
  });
}

async function kill(server: Laneway, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
  const exited = exitOf(server.child);
  if (isRunning(server.child)) server.child.kill(signal);
  await exited;
}

// ---------------------------------------------------------------------------------------------
// HTTP: one request per connection; never rejects, a failure is a value.

type Result = { status: number; text: string } | { error: string; timedOut: boolean };

const isReply = (r: Result): r is { status: number; text: string } => 'status' in r;

function send(port: number, method: string, path: string, form?: Record<string, string>, onSent?: () => void): Promise<Result> {
  const body = form ? new URLSearchParams(form).toString() : undefined;
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded';
  return new Promise((resolve) => {
    let settled = false;
    let timedOut = false;
    const settle = (r: Result) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(r);
    };
    const req = httpRequest({ host: '127.0.0.1', port, method, path, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => settle({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('aborted', () => settle({ error: 'response aborted', timedOut }));
      res.on('error', (err) => settle({ error: err.message, timedOut }));
    });
    const timer = setTimeout(() => {
      timedOut = true;
      req.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS / 1000} s`));
    }, REQUEST_TIMEOUT_MS);
    req.on('error', (err) => settle({ error: (err as NodeJS.ErrnoException).code ?? err.message, timedOut }));
    req.on('finish', () => onSent?.());
    req.end(body);
  });
}

/** A request that must succeed with 200 and a JSON body. */
async function ok(server: Laneway, method: string, path: string, form?: Record<string, string>): Promise<any> {
  const r = await send(server.port, method, path, form);
  assert.ok(isReply(r), `${method} ${path}: ${JSON.stringify(r)}\n${server.output()}`);
  assert.equal(r.status, 200, `${method} ${path}: ${r.status} ${r.text}\n${server.output()}`);
  return JSON.parse(r.text);
}

// ---------------------------------------------------------------------------------------------
// A stream of POST /orders from `concurrency` workers, each sending its next request as soon as its
// previous one settled. `when(predicate, action)` runs `action` synchronously at the first event
// (a request fully sent, or settled) after which the predicate holds.

interface Sent {
  ref: string;
  /** The phase when the request was sent, and when it settled. */
  sentIn: string;
  settledIn?: string;
  result?: Result;
}

class OrderLoad {
  readonly requests: Sent[] = [];
  /** Requests whose body has been handed to the kernel and that have no answer yet. */
  outstanding = 0;
  phase: string;
  #stopped = false;
  #n = 0;
  #watchers: { predicate: () => boolean; action: () => void }[] = [];
  #workers: Promise<void>[] = [];

  constructor(
    readonly port: number,
    concurrency: number,
    phase: string,
    readonly pauseMs = 0,
    readonly refPrefix = 'load-',
  ) {
    this.phase = phase;
    for (let w = 0; w < concurrency; w++) this.#workers.push(this.#work());
  }

  async #work(): Promise<void> {
    while (!this.#stopped) {
      const sent: Sent = { ref: `${this.refPrefix}${this.#n++}`, sentIn: this.phase };
      this.requests.push(sent);
      let counted = false;
      const result = await send(this.port, 'POST', '/orders', { ref: sent.ref }, () => {
        counted = true;
        this.outstanding++;
        this.#check();
      });
      if (counted) this.outstanding--;
      sent.result = result;
      sent.settledIn = this.phase;
      this.#check();
      if (this.pauseMs) await new Promise((r) => setTimeout(r, this.pauseMs));
    }
  }

  #check(): void {
    for (const w of [...this.#watchers]) {
      if (!w.predicate()) continue;
      this.#watchers.splice(this.#watchers.indexOf(w), 1);
      w.action();
    }
  }

  /** Resolves once `predicate` holds (checked at every event), running `action` synchronously then. */
  when(predicate: () => boolean, what: string, action: () => void = () => {}): Promise<void> {
    return new Promise((resolve, reject) => {
      const watcher = {
        predicate,
        action: () => {
          clearTimeout(timer);
          action();
          resolve();
        },
      };
      const timer = setTimeout(() => {
        const i = this.#watchers.indexOf(watcher);
        if (i >= 0) this.#watchers.splice(i, 1);
        reject(new Error(`not reached within ${WAIT_MS / 1000} s: ${what} (${this.summary()})`));
      }, WAIT_MS);
      this.#watchers.push(watcher);
      this.#check();
    });
  }

  /** Sends nothing more from now on. */
  halt(): void {
    this.#stopped = true;
  }

  /** Sends nothing more; resolves once every request has settled. */
  async stop(): Promise<void> {
    this.halt();
    await Promise.all(this.#workers);
  }

  settled(filter: (s: Sent) => boolean = () => true): Sent[] {
    return this.requests.filter((s) => s.result !== undefined && filter(s));
  }

  /** ref → id of every acknowledged write (200 with the order's id). */
  acknowledged(): Map<string, string> {
    const acked = new Map<string, string>();
    for (const s of this.settled()) {
      if (s.result && isReply(s.result) && s.result.status === 200) {
        const body = JSON.parse(s.result.text) as { id: string; ref: string };
        assert.equal(body.ref, s.ref);
        acked.set(s.ref, body.id);
      }
    }
    return acked;
  }

  summary(): string {
    const counts = new Map<string, number>();
    for (const s of this.requests) {
      const key = s.result === undefined ? 'pending' : isReply(s.result) ? String(s.result.status) : `error ${s.result.error}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    return [...counts].map(([k, v]) => `${k}: ${v}`).join(', ');
  }
}

// ---------------------------------------------------------------------------------------------
// What the database holds, read through GET /orders, checked for complete transactions.

interface Orders {
  orders: { id: string; ref: string; lines: number[] }[];
  lines: number;
  counter: number;
}

/** Asserts that every transaction present is complete and that every acknowledged write is there. */
function assertConsistent(state: Orders, acknowledged: Map<string, string>): void {
  for (const o of state.orders) assert.deepEqual([...o.lines].sort(), [1, 2, 3], `order ${o.ref} (${o.id}) is incomplete: lines ${JSON.stringify(o.lines)}`);
  assert.equal(state.lines, 3 * state.orders.length, 'lines without their order');
  assert.equal(state.counter, state.orders.length, 'the counter disagrees with the orders');
  assert.equal(new Set(state.orders.map((o) => o.ref)).size, state.orders.length, 'an order stored twice');
  const byRef = new Map(state.orders.map((o) => [o.ref, o.id]));
  const lost = [...acknowledged].filter(([ref, id]) => byRef.get(ref) !== id);
  assert.deepEqual(lost, [], `acknowledged writes lost (${lost.length} of ${acknowledged.size})`);
}

// ---------------------------------------------------------------------------------------------
// The engines: a fresh store for each test, and the options that point laneway serve at it.

interface Engine {
  name: 'sqlite' | 'postgres';
  storage(): Promise<string[]>;
}

const ENGINES: Engine[] = [
  { name: 'sqlite', storage: async () => ['--data', tempDir('laneway-reliability-data-')] },
  { name: 'postgres', storage: async () => ['--database', await (await startPostgres()).createDatabase()] },
];

/** Concurrent writers in the bursts: at most the PostgreSQL pool's 10 connections, so that no request waits for one. */
const CONCURRENCY = 8;

for (const engine of ENGINES) {
  describe(`reliability on ${engine.name}`, () => {
    it('a server killed with SIGKILL mid-burst loses no acknowledged write and shows no partial transaction after restart', async (t) => {
      const app = newApp();
      const storage = await engine.storage();
      let server = await startLaneway(app, storage);
      // The counter record exists before the burst (two first writers would both create it).
      const acknowledged = new Map<string, string>([['warmup', (await ok(server, 'POST', '/orders', { ref: 'warmup' })).id]]);

      // Three rounds of burst, kill, restart on the same data (a recovered store is killed again).
      for (let round = 1; round <= 3; round++) {
        const killed = server;
        const load = new OrderLoad(killed.port, CONCURRENCY, 'before kill', 0, `round${round}-`);
        let outstandingAtKill = -1;
        try {
          await load.when(
            () => load.acknowledged().size >= 15 && load.outstanding >= CONCURRENCY / 2,
            `round ${round}: 15 acknowledged writes with requests outstanding`,
            () => {
              load.halt();
              load.phase = 'killed';
              outstandingAtKill = load.outstanding;
              killed.child.kill('SIGKILL');
            },
          );
        } finally {
          load.halt();
        }
        await Promise.all([load.stop(), kill(killed)]);
        assert.equal(killed.child.signalCode, 'SIGKILL');
        assert.ok(outstandingAtKill >= CONCURRENCY / 2, `requests in flight at the kill: ${outstandingAtKill}`);
        // Before the kill every request was answered, and succeeded (or, on an overloaded machine, failed
        // cleanly with 503: nothing written); none hung.
        for (const s of load.settled((s) => s.settledIn === 'before kill')) {
          const r = s.result!;
          assert.ok(isReply(r) && (r.status === 200 || r.status === 503), `${s.ref}: ${JSON.stringify(r)} (${killed.output()})`);
        }
        for (const s of load.settled()) {
          const r = s.result!;
          assert.ok(isReply(r) || !r.timedOut, `${s.ref} hung`);
        }
        const acked = load.acknowledged();
        assert.ok(acked.size >= 15);
        for (const [ref, id] of acked) acknowledged.set(ref, id);
        t.diagnostic(`round ${round}: killed with ${outstandingAtKill} requests in flight; answers: ${load.summary()}`);

        server = await startLaneway(app, storage);
        assertConsistent((await ok(server, 'GET', '/orders')) as Orders, acknowledged);
      }

      // The restarted server writes on top of it.
      const before = (await ok(server, 'GET', '/orders')) as Orders;
      acknowledged.set('after-restart', (await ok(server, 'POST', '/orders', { ref: 'after-restart' })).id);
      const later = (await ok(server, 'GET', '/orders')) as Orders;
      assertConsistent(later, acknowledged);
      assert.equal(later.counter, before.counter + 1);
      await kill(server, 'SIGTERM');
      assert.equal(server.child.exitCode, 0, server.output());
      if (engine.name === 'sqlite') {
        const db = new Database(join(storage[1]!, 'laneway.db'), { readonly: true });
        try {
          assert.equal(db.pragma('integrity_check', { simple: true }), 'ok');
        } finally {
          db.close();
        }
      }
    });

    it(`two Laneway processes on one ${engine.name === 'sqlite' ? 'SQLite file' : 'PostgreSQL database'} serve the same data with no lost update`, async () => {
      const app = newApp();
      const storage = await engine.storage();
      // Started together: the schema is created once, whichever comes first.
      const [a, b] = await Promise.all([startLaneway(app, storage), startLaneway(app, storage)]);
      const servers = [a, b];

      assert.equal((await ok(a, 'POST', '/counter')).count, 1);
      // 99 more, alternating between the servers, CONCURRENCY in flight on each at any time (more would
      // only wait for one of PostgreSQL's pooled connections, and answer 503 after 5 s on a slow machine).
      const answers: Result[] = [];
      let next = 0;
      const worker = async () => {
        for (let i = next++; i < 99; i = next++) answers[i] = await send(servers[(i + 1) % 2]!.port, 'POST', '/counter');
      };
      await Promise.all(Array.from({ length: 2 * CONCURRENCY }, worker));
      const counts = answers.map((r, i) => {
        assert.ok(isReply(r) && r.status === 200, `increment ${i + 2} through ${i % 2 ? 'a' : 'b'}: ${JSON.stringify(r)}\n${a.output()}\n${b.output()}`);
        return (JSON.parse(r.text) as { count: number }).count;
      });
      // Every increment saw its own value: none was lost, none counted twice.
      assert.deepEqual(counts.sort((x, y) => x - y), Array.from({ length: 99 }, (_, i) => i + 2));
      for (const s of servers) assert.equal((await ok(s, 'GET', '/counter')).count, 100);

      // A record created through one is read through the other, both ways.
      const viaA = await ok(a, 'POST', '/orders', { ref: 'via-a' });
      const viaB = await ok(b, 'POST', '/orders', { ref: 'via-b' });
      assert.deepEqual(await ok(b, 'GET', `/orders/${viaA.id}`), { id: viaA.id, ref: 'via-a', lines: [1, 2, 3] });
      assert.deepEqual(await ok(a, 'GET', `/orders/${viaB.id}`), { id: viaB.id, ref: 'via-b', lines: [1, 2, 3] });
      const acknowledged = new Map([['via-a', viaA.id as string], ['via-b', viaB.id as string]]);
      assertConsistent((await ok(a, 'GET', '/orders')) as Orders, acknowledged);
      assertConsistent((await ok(b, 'GET', '/orders')) as Orders, acknowledged);

      await Promise.all(servers.map((s) => kill(s, 'SIGTERM')));
      for (const s of servers) assert.equal(s.child.exitCode, 0, s.output());
    });
  });
}

describe('reliability on postgres: a PostgreSQL restart during load', () => {
  it('writes fail cleanly with 503 while PostgreSQL restarts under load, then succeed again without restarting Laneway; no acknowledged write is lost', async (t) => {
    const pg = await startPostgres();
    const app = newApp();
    const laneway = await startLaneway(app, ['--database', await pg.createDatabase()]);
    const pid = laneway.child.pid;
    const warmup = await ok(laneway, 'POST', '/orders', { ref: 'warmup' });

    // A short pause between requests keeps the workers from spinning on immediate 503s.
    const load = new OrderLoad(laneway.port, 4, 'up', 10);
    try {
      try {
        await load.when(() => load.acknowledged().size >= 10, '10 acknowledged writes before the stop');
        load.phase = 'stopping';
        await pg.stop();
        load.phase = 'down';
        await load.when(() => load.settled((s) => s.sentIn === 'down' && s.settledIn === 'down').length >= 8, '8 requests answered while PostgreSQL is down');
        load.phase = 'starting';
      } finally {
        // Whatever happened, the shared PostgreSQL server is left running.
        await pg.start();
      }
      load.phase = 'up again';
      await load.when(
        () => load.settled((s) => s.sentIn === 'up again' && isReply(s.result!) && s.result.status === 200).length >= 10,
        '10 acknowledged writes after PostgreSQL is back',
      );
    } finally {
      await load.stop();
    }
    t.diagnostic(`answers: ${load.summary()}`);

    // The same Laneway process throughout.
    assert.ok(isRunning(laneway.child), `Laneway exited: ${laneway.output()}`);
    assert.equal(laneway.child.pid, pid);
    const status = (s: Sent) => (s.result as { status: number }).status;
    const label = (s: Sent) => `${s.ref} (sent ${s.sentIn}, settled ${s.settledIn}): ${JSON.stringify(s.result)}\n${laneway.output()}`;
    // Every request settled with an HTTP answer (no hang, no dropped connection): 200, or 503 (nothing
    // written, try again), never another error; writes cut off by the stop included.
    for (const s of load.requests) {
      assert.ok(isReply(s.result!), label(s));
      assert.ok(status(s) === 200 || status(s) === 503, label(s));
      if (status(s) === 503) assert.match(JSON.parse((s.result as { text: string }).text).error, /unavailable/i, label(s));
    }
    // Before the stop every write succeeded; while PostgreSQL was down every one answered 503; once
    // it was back every one succeeded again.
    for (const s of load.requests.filter((s) => s.settledIn === 'up')) assert.equal(status(s), 200, label(s));
    for (const s of load.requests.filter((s) => s.sentIn === 'down' && s.settledIn === 'down')) assert.equal(status(s), 503, label(s));
    for (const s of load.requests.filter((s) => s.sentIn === 'up again')) assert.equal(status(s), 200, label(s));

    const acknowledged = load.acknowledged();
    acknowledged.set('warmup', warmup.id);
    assertConsistent((await ok(laneway, 'GET', '/orders')) as Orders, acknowledged);
    await kill(laneway, 'SIGTERM');
    assert.equal(laneway.child.exitCode, 0, laneway.output());
  });

  it('reads answer 503 while PostgreSQL is down, and read again once it is back', async () => {
    const pg = await startPostgres();
    const app = newApp();
    const laneway = await startLaneway(app, ['--database', await pg.createDatabase()]);
    const order = await ok(laneway, 'POST', '/orders', { ref: 'read-me' });
    await ok(laneway, 'POST', '/counter');
    const reads = ['/orders', `/orders/${order.id}`, '/counter'];
    const answers: [string, Result][] = [];
    try {
      await pg.stop();
      for (const path of reads) answers.push([path, await send(laneway.port, 'GET', path)]);
    } finally {
      await pg.start();
    }
    for (const [path, r] of answers) {
      assert.ok(isReply(r), `GET ${path} while PostgreSQL is down got no answer: ${JSON.stringify(r)}`);
      assert.equal(r.status, 503, `GET ${path} while PostgreSQL is down: ${r.status} ${r.text}\n${laneway.output()}`);
    }
    assert.deepEqual(await ok(laneway, 'GET', `/orders/${order.id}`), { id: order.id, ref: 'read-me', lines: [1, 2, 3] });
    assert.equal((await ok(laneway, 'GET', '/counter')).count, 1);
    await kill(laneway, 'SIGTERM');
    assert.equal(laneway.child.exitCode, 0, laneway.output());
  });
});
