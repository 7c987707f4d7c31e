// bench-timeout-s: 900
// Data-layer benchmarks (bench/README.md). App: bench/fixtures/models-app/ — one model, 🌐Item
// (name: string, price: integer), a GET script listing 100 records through a query and a map, and
// a POST script creating one record from form fields and redirecting.
//
// HTTP scenarios, on SQLite and on PostgreSQL (both servers on the same database):
//   list   GET /items   Laneway (servers/laneway-data.mjs) vs bare node:http (servers/bare-models.mjs)
//                      running the same SELECT and building the JSON by hand. Target ≥ 0.9×.
//   create POST /items  validation, insert, commit, 302, vs a bare handler doing the same insert.
//                      Target ≥ 0.7× on SQLite, ≥ 0.8× on PostgreSQL. Runs are counted (a fixed number of POSTs sized to last
//                      about BENCH_SECONDS) rather than cut off by time: see loadPost().
//   limits POST /items  the same create with the fixture's limit of writes checked vs a copy of
//                      the app with `writes: off` (both Laneway, on the same data): server CPU
//                      µs per request over BENCH_LIMIT_PAIRS (6) fresh pairs of processes, two
//                      ABBA rounds each, the median of the pairs. Target: the check costs ≤ 5 %.
//                      BENCH_MODELS=limits runs only this (and the check alone, below);
//                      BENCH_LIMITS_CONTROL=1 adds pairs of two `writes: off` servers measured the
//                      same way (what the pairs read when nothing differs).
// In-process micro-benchmark, on both engines:
//   lookup the query layer's point lookup (what `Item.get(id)` asks of the store: a read session's
//          select() with id = ?, limit 1, rows decoded) vs a raw prepared statement. Target ≤ 1.2×
//          (ns/op, layer ÷ raw). An informational third line shows where the difference lies.
//   check  (SQLite, informational) the limit's check as a create runs it (Limiter.hit, its lease's
//          reservations amortised) against the create's insert: the check's µs alone.
//
// PostgreSQL is the tests' server (test/support/postgres.ts, loaded through tsx): when it cannot
// start (no binaries), the PostgreSQL scenarios are skipped with a line saying why.
// Before timing, both servers must answer the same status, headers (Date/Connection/Keep-Alive
// aside) and bytes; POSTs must have stored their record, and a refused value must answer 422 on
// both; after the POST runs, the rows stored must equal the 302s counted. Four HTTP scenarios of
// about 22 s each, plus about 15 s of lookups: about 2 minutes.
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import Database from 'better-sqlite3';
import pg from 'pg';
import { loadApp } from '../dist/app/index.js';
import { Limiter, readVisitorLimits, ruleFor } from '../dist/limits/index.js';
import { AppStore } from '../dist/store/index.js';
import { BENCH_DIR, WORKLOAD, checkTarget, compare, cpuMeter, describeWorkload, report, stableHeaders, startServer } from './lib.mjs';

const APP = join(BENCH_DIR, 'fixtures', 'models-app');
const LANEWAY = join(BENCH_DIR, 'servers', 'laneway-data.mjs');
const BARE = join(BENCH_DIR, 'servers', 'bare-models.mjs');
const PATH = '/items';
const FORM = 'application/x-www-form-urlencoded';
const POST_BODY = 'name=Bench+item&price=42';
// The targets of bench/README.md "Targets" (the speed issue's item 4).
const TARGET_LIST = 0.9;
const TARGET_CREATE = { SQLite: 0.7, PostgreSQL: 0.8 };
const TARGET_LOOKUP = 1.2;
/** The limit of writes may cost at most this much CPU per create (bench/README.md "Limits per visitor"). */
const TARGET_LIMIT_COST = 0.05;
/** BENCH_MODELS=limits: only the scenario of the limit's cost (on both engines). */
const ONLY_LIMITS = process.env.BENCH_MODELS === 'limits';
/** BENCH_LIMITS_CONTROL=1: the limits scenario also pairs two `writes: off` servers (the noise floor). */
const LIMITS_CONTROL = process.env.BENCH_LIMITS_CONTROL === '1';
/** Fresh pairs of servers the limit's cost is the median of (BENCH_LIMIT_PAIRS). */
const LIMIT_PAIRS = Number(process.env.BENCH_LIMIT_PAIRS ?? 6);
/** Records seeded before timing (the list shows the first 100 in creation order). */
const SEEDED = 120;
/** Records of the lookup database; the time of one lookup batch, and batches per variant (many short
 * alternating batches: a loaded 2-core machine changes speed within a second). */
const LOOKUP_RECORDS = 1000;
const LOOKUP_BATCH_MS = Number(process.env.BENCH_LOOKUP_MS ?? 100);
const LOOKUP_ROUNDS = 15;
const HOST = '127.0.0.1';

const cleanups = [];
const failures = [];

// Names with characters JSON and HTML treat specially, so that byte equality means something.
const SEED = Array.from({ length: SEEDED }, (_, i) => ({
  name: i % 7 === 0 ? `Gadget "${i}" & <co>` : i % 11 === 0 ? `Café ${i} ✓` : `Widget ${i}`,
  price: (i * 37) % 1000,
}));
const formOf = (r) => new URLSearchParams({ name: r.name, price: String(r.price) }).toString();

/** One POST of a urlencoded body, as autocannon will send it. */
function post(port, path, body) {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: HOST, port, path, method: 'POST', agent: false, headers: { 'Content-Type': FORM, 'Content-Length': Buffer.byteLength(body) } },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      },
    );
    req.setTimeout(5_000, () => req.destroy(new Error(`POST ${path} timed out`)));
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * One autocannon run of exactly `amount` POSTs (all answered before it ends); throws on socket
 * errors, timeouts or a status other than 302. POST runs are counted rather than timed: a timed
 * run ends by closing its connections with requests in flight, and Laneway does not survive that
 * on a write (see "Known problem" in README.md).
 */
async function loadPost(port, amount, pid) {
  const cpu = cpuMeter(pid);
  // autocannon ends a counted run on its next 1-second tick: the time is taken here, from the
  // start to the last response.
  let answered = 0;
  let last = 0;
  const start = performance.now();
  const result = await new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: `http://${HOST}:${port}${PATH}`,
        connections: WORKLOAD.connections,
        pipelining: WORKLOAD.pipelining,
        amount,
        timeout: 5,
        method: 'POST',
        headers: { 'content-type': FORM },
        body: POST_BODY,
      },
      (err, r) => (err ? reject(err) : resolve(r)),
    );
    instance.on('response', () => {
      if (++answered === amount) last = performance.now();
    });
  });
  const statuses = Object.keys(result.statusCodeStats ?? {}).map(Number);
  const redirects = result.statusCodeStats?.[302]?.count ?? 0;
  if (result.errors || result.timeouts || statuses.some((s) => s !== 302) || redirects !== amount || !last) {
    throw new Error(`POST ${PATH}: ${result.errors} errors, ${result.timeouts} timeouts, statuses ${statuses.join(', ') || 'none'}, ${redirects} of ${amount} answered 302`);
  }
  const seconds = (last - start) / 1000;
  // Server CPU µs per request (its process alone; null when unknown), as lib.mjs load().
  return { rps: amount / seconds, p99: result.latency.p99, redirects, seconds, cpu: cpu(amount) };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};

/**
 * lib.mjs's compare() for POSTs: a warm-up each, then alternating runs. Each run is sized from the
 * side's previous rate to last about BENCH_SECONDS (the warm-up from a 200-request probe).
 */
async function comparePost(name, a, b, rounds = WORKLOAD.rounds) {
  let redirects = 0;
  const pids = new Map([a, b].map((s) => [s.port, s.pid]));
  const run = async (port, amount) => {
    const r = await loadPost(port, Math.max(200, 4 * WORKLOAD.connections, Math.round(amount)), pids.get(port));
    redirects += r.redirects;
    return r;
  };
  const size = {};
  for (const s of [a, b]) {
    const probe = await run(s.port, 200);
    const warm = await run(s.port, probe.rps * WORKLOAD.warmupSeconds);
    size[s.port] = warm.rps * WORKLOAD.seconds;
  }
  const runs = { a: [], b: [] };
  const timed = async (s, list) => {
    const r = await run(s.port, size[s.port]);
    size[s.port] = r.rps * WORKLOAD.seconds; // the next run of this side from this one's rate
    list.push(r);
  };
  // ABBA: each side goes first in every other round, so that what grows with time (the table, the
  // WAL, the machine's state after the other side's run) falls on both alike.
  for (let i = 0; i < rounds; i++) {
    if (i % 2 === 0) {
      await timed(a, runs.a);
      await timed(b, runs.b);
    } else {
      await timed(b, runs.b);
      await timed(a, runs.a);
    }
  }
  const side = (s, rs) => ({ label: s.label, rps: median(rs.map((r) => r.rps)), runs: rs.map((r) => Math.round(r.rps)), p99: median(rs.map((r) => r.p99)), cpu: rs.every((r) => r.cpu !== null) ? median(rs.map((r) => r.cpu)) : null, cpuRuns: rs.map((r) => (r.cpu === null ? '?' : r.cpu.toFixed(0))) });
  const baseline = side(a, runs.a);
  const candidate = side(b, runs.b);
  const seconds = [...runs.a, ...runs.b].map((r) => r.seconds.toFixed(1));
  const cpuRatio = baseline.cpu !== null && candidate.cpu !== null ? baseline.cpu / candidate.cpu : null;
  // The CPU ratio of each round's two neighbouring runs, then the median: a pair shares the
  // machine's load of the moment (as compareLookups).
  const cpuPaired = cpuRatio === null ? null : median(runs.a.map((r, i) => r.cpu / runs.b[i].cpu));
  return { name, baseline, candidate, ratio: candidate.rps / baseline.rps, cpuRatio, cpuPaired, redirects, seconds };
}

/**
 * The cost of the limit of writes (bench/README.md "Limits per visitor"): the create of the
 * fixture (`writes: 1000000000/minute`, checked on every POST) against a copy of it with
 * `writes: off`, on the same data. Two processes of the same code differ by a few per cent for as
 * long as they live (measured: two servers of the `writes: off` copy paired this way read −5 % to
 * +4 %), so every pair is a fresh pair of processes: LIMIT_PAIRS of them, each warmed, then two
 * runs per side, ABBA. The cost is the median over the pairs of their CPU µs per request's ratio;
 * target: at most 5 % (TARGET_LIMIT_COST).
 */
async function limitScenario(engine) {
  const dir = await mkdtemp(join(tmpdir(), 'laneway-bench-models-off-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  await cp(APP, dir, { recursive: true });
  await writeFile(join(dir, '🎛.yaml'), 'name: Models bench\nlimits:\n  writes: off\n');
  const cost = await freshPairs(engine, `${engine.name}: create, POST ${PATH}, the limit of writes checked vs \`writes: off\``, ['writes: off', dir], ['limit checked', APP]);
  console.log(`  the check's cost: ${cost === null ? 'unknown (no CPU figures)' : `${(cost * 100).toFixed(1)} % CPU per request (median of ${LIMIT_PAIRS} fresh pairs)`}${cost !== null && cost <= TARGET_LIMIT_COST ? ` ≤ ${TARGET_LIMIT_COST * 100} % ✓` : ' (above target)'}\n`);
  verdict(`${engine.name} limit cost`, cost !== null && cost <= TARGET_LIMIT_COST);
  if (LIMITS_CONTROL) {
    const twin = await freshPairs(engine, `${engine.name}: control, two servers of the \`writes: off\` copy (the pairs' noise floor)`, ['writes: off', dir], ['writes: off, twin', dir]);
    console.log(`  the twin's "cost": ${twin === null ? 'unknown' : `${(twin * 100).toFixed(1)} %`} (0 but for noise)\n`);
  }
}

/**
 * LIMIT_PAIRS fresh pairs of servers (`[label, app dir]` each side) on the engine's data, each
 * compared over two ABBA rounds of POSTs; prints each pair and answers the median cost (b's CPU
 * per request over a's, minus 1), or null without CPU figures.
 */
async function freshPairs(engine, name, [labelA, dirA], [labelB, dirB]) {
  console.log(name);
  const costs = [];
  for (let i = 0; i < LIMIT_PAIRS; i++) {
    const [a, b] = await Promise.all([startServer(LANEWAY, [dirA, engine.where]), startServer(LANEWAY, [dirB, engine.where])]);
    try {
      const before = await engine.total();
      const sides = [
        { label: labelA, port: a.port, pid: a.pid },
        { label: labelB, port: b.port, pid: b.pid },
      ];
      // Which side warms and runs first alternates from pair to pair too.
      const r = i % 2 === 0 ? await comparePost(name, sides[0], sides[1], 2) : flip(await comparePost(name, sides[1], sides[0], 2));
      const stored = (await engine.total()) - before;
      if (stored !== r.redirects) throw new Error(`${engine.name}: ${r.redirects} POSTs answered 302 but ${stored} records were stored`);
      const cost = r.cpuPaired === null ? null : 1 / r.cpuPaired - 1;
      costs.push(cost);
      console.log(`  pair ${i + 1}: ${labelA} ${r.baseline.cpuRuns.join(', ')} CPU µs/req (${r.baseline.runs.join(', ')} req/s); ${labelB} ${r.candidate.cpuRuns.join(', ')} (${r.candidate.runs.join(', ')} req/s): ${cost === null ? '?' : `${cost >= 0 ? '+' : ''}${(cost * 100).toFixed(1)} %`}`);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  }
  return costs.includes(null) ? null : median(costs);
}

/** A comparePost result with its two sides swapped (baseline ↔ candidate). */
function flip(r) {
  return { ...r, baseline: r.candidate, candidate: r.baseline, ratio: 1 / r.ratio, cpuRatio: r.cpuRatio === null ? null : 1 / r.cpuRatio, cpuPaired: r.cpuPaired === null ? null : 1 / r.cpuPaired };
}

function verdict(name, ok) {
  if (!ok) failures.push(name);
}

/** The engines: where the servers' data is, and a connection of the bench's own to check rows. */
async function sqliteEngine() {
  const dir = await mkdtemp(join(tmpdir(), 'laneway-bench-models-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  let db;
  const open = () => (db ??= new Database(join(dir, 'laneway.db'), { readonly: true }));
  cleanups.unshift(() => db?.close());
  return {
    name: 'SQLite',
    where: dir,
    count: async (name) => open().prepare('SELECT COUNT(*) AS n FROM "lw_Item" WHERE "f_name" = ?').get(name).n,
    total: async () => open().prepare('SELECT COUNT(*) AS n FROM "lw_Item"').get().n,
  };
}

async function postgresEngine(server) {
  const url = await server.createDatabase();
  const client = new pg.Client({ connectionString: url });
  let connected;
  cleanups.unshift(() => connected && client.end());
  const query = async (sql, values) => {
    connected ??= client.connect();
    await connected;
    return Number((await client.query(sql, values)).rows[0].n);
  };
  return {
    name: 'PostgreSQL',
    where: url,
    count: (name) => query('SELECT COUNT(*) AS n FROM "lw_Item" WHERE "f_name" = $1', [name]),
    total: () => query('SELECT COUNT(*) AS n FROM "lw_Item"', []),
  };
}

/** Checks the list: 100 distinct seeded records, each with its own price. */
function checkList(engine, body) {
  const items = JSON.parse(body.toString('utf8'));
  const prices = new Map(SEED.map((r) => [r.name, r.price]));
  const ok =
    Array.isArray(items) &&
    items.length === 100 &&
    new Set(items.map((i) => i.id)).size === 100 &&
    items.every((i) => typeof i.id === 'string' && Object.keys(i).join() === 'id,name,price' && prices.get(i.name) === i.price);
  if (!ok) throw new Error(`${engine.name}: GET ${PATH} is not the 100 seeded records: ${body.toString('utf8').slice(0, 300)}`);
}

/** Both servers create a record the same way: 302 to /items/, same headers and bytes; a bad value is a 422 and stores nothing. */
async function checkCreate(engine, bare, laneway) {
  const answers = [];
  for (const [label, port] of [['bare', bare.port], ['laneway', laneway.port]]) {
    const name = `Check ${label}`;
    const res = await post(port, PATH, formOf({ name, price: 7 }));
    if (res.status !== 302 || res.headers.location !== '/items/') throw new Error(`${engine.name}: ${label}: POST ${PATH} answered ${res.status} ${res.headers.location ?? ''}, expected 302 to /items/`);
    if ((await engine.count(name)) !== 1) throw new Error(`${engine.name}: ${label}: POST ${PATH} answered 302 but did not store the record`);
    const bad = await post(port, PATH, formOf({ name: 'Refused', price: 'abc' }));
    if (bad.status !== 422) throw new Error(`${engine.name}: ${label}: POST ${PATH} with price=abc answered ${bad.status}, expected 422`);
    answers.push(res);
  }
  if ((await engine.count('Refused')) !== 0) throw new Error(`${engine.name}: a refused POST stored a record`);
  const [a, b] = answers.map((r) => JSON.stringify(stableHeaders(r.headers)));
  if (a !== b || !answers[0].body.equals(answers[1].body)) throw new Error(`${engine.name}: POST ${PATH}: the two servers answer differently:\n  ${a}\n  ${b}`);
}

async function httpScenarios(engine) {
  const laneway = await startServer(LANEWAY, [APP, engine.where]);
  // Laneway created the table at start; seed through it, then start the baseline on the same data.
  for (const r of SEED) {
    const res = await post(laneway.port, PATH, formOf(r));
    if (res.status !== 302) throw new Error(`${engine.name}: seeding: POST ${PATH} answered ${res.status}: ${res.body}`);
  }
  const bare = await startServer(BARE, [engine.where]);
  try {
    const expected = await checkTarget('bare node:http', bare.port, PATH, { status: 200 });
    const res = await checkTarget('laneway', laneway.port, PATH, { status: 200, same: expected });
    checkList(engine, res.body);
    await checkCreate(engine, bare, laneway);
    console.log(`${engine.name}: ${SEEDED} records seeded; GET ${PATH} is ${res.body.length} B of JSON (100 records), byte-equal; POST ${PATH} checked (302, record stored; 422 on a bad price)\n`);

    if (ONLY_LIMITS) return await limitScenario(engine);
    const list = await compare(
      `${engine.name}: list, GET ${PATH} (query of 100 records + map → JSON)`,
      { label: 'bare node:http', port: bare.port, path: PATH },
      { label: 'laneway', port: laneway.port, path: PATH },
      200,
    );
    report(list, TARGET_LIST);
    verdict(`${engine.name} list`, list.ratio >= TARGET_LIST);

    const before = await engine.total();
    const create = await comparePost(
      `${engine.name}: create, POST ${PATH} (${POST_BODY}: validation, insert, commit, 302)`,
      { label: 'bare node:http', port: bare.port, pid: bare.pid },
      { label: 'laneway', port: laneway.port, pid: laneway.pid },
    );
    const stored = (await engine.total()) - before;
    if (stored !== create.redirects) throw new Error(`${engine.name}: ${create.redirects} POSTs answered 302 but ${stored} records were stored`);
    report(create, TARGET_CREATE[engine.name]);
    console.log(`  (${create.redirects.toLocaleString('en-US')} POSTs, each answered 302 and stored; timed runs lasted ${create.seconds.join(', ')} s)\n`);
    verdict(`${engine.name} create`, create.ratio >= TARGET_CREATE[engine.name]);
    await limitScenario(engine);
  } finally {
    await Promise.all([laneway.stop(), bare.stop()]);
  }
}

// ---- point lookup, in-process -------------------------------------------------------------

const COLUMNS = '"id", "created", "modified", "container", "f_name", "f_price"';

/** Fills the store with LOOKUP_RECORDS records through its own write sessions; returns their ids. */
async function seedStore(store) {
  const ids = [];
  for (let batch = 0; batch < LOOKUP_RECORDS / 100; batch++) {
    const { session, writer } = await store.begin();
    const ops = [];
    for (let i = 0; i < 100; i++) {
      const n = batch * 100 + i;
      const id = `it${String(n).padStart(6, '0')}${Math.random().toString(36).slice(2, 10)}`;
      const now = Date.now();
      ids.push(id);
      ops.push(['i', 'Item', id, now, now, null, { name: SEED[n % SEEDED].name, price: SEED[n % SEEDED].price }]);
    }
    await session.write(ops);
    await writer.commit();
  }
  // Looked up in a shuffled order, so that consecutive lookups touch different pages.
  for (let i = ids.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [ids[i], ids[j]] = [ids[j], ids[i]];
  }
  return ids;
}

let sink = 0;

/** ns per call of `fn(i)` for about `ms`; `fn` is synchronous. */
function timeSync(fn, ms) {
  let n = 0;
  const start = performance.now();
  let elapsed;
  do {
    for (let i = 0; i < 256; i++) sink ^= fn(n + i);
    n += 256;
    elapsed = performance.now() - start;
  } while (elapsed < ms);
  return (elapsed * 1e6) / n;
}

/** ns per call of `await fn(i)`, one at a time, for about `ms`. */
async function timeAsync(fn, ms) {
  let n = 0;
  const start = performance.now();
  let elapsed;
  do {
    for (let i = 0; i < 32; i++) sink ^= await fn(n + i);
    n += 32;
    elapsed = performance.now() - start;
  } while (elapsed < ms);
  return (elapsed * 1e6) / n;
}

/**
 * Alternates the variants' batches (raw, layer, then any informational ones) after a warm-up of
 * each; the figure of each is its median ns/op, and the ratio is layer ÷ raw (paired by round).
 */
async function compareLookups(title, variants, time) {
  for (const v of variants) await time(v.fn, LOOKUP_BATCH_MS);
  const runs = variants.map(() => []);
  for (let r = 0; r < LOOKUP_ROUNDS; r++) {
    for (const [i, v] of variants.entries()) runs[i].push(await time(v.fn, LOOKUP_BATCH_MS));
  }
  const ns = runs.map(median);
  // The ratio of each round's two neighbouring batches, then the median: a batch pair shares the
  // machine's load of the moment, which the medians of each side taken apart do not.
  const ratio = median(runs[1].map((layer, r) => layer / runs[0][r]));
  const fmt = (x) => Math.round(x).toLocaleString('en-US').padStart(8);
  const lines = variants.map((v, i) => `  ${v.label.padEnd(34)} ${fmt(ns[i])} ns/op  (runs ${runs[i].map((x) => Math.round(x)).join(', ')})`);
  const mark = ratio <= TARGET_LOOKUP ? `  ≤ ${TARGET_LOOKUP} ✓` : `  > ${TARGET_LOOKUP} ✗ (above target)`;
  console.log(`${title}\n${lines.join('\n')}\n  ratio ${ratio.toFixed(3)}× (query layer ÷ raw prepared statement: median of the ${runs[0].length} paired batches; ratio of the medians ${(ns[1] / ns[0]).toFixed(3)}×)${mark}\n`);
  return ratio;
}

/** The spec a script's `Item.get(id)` sends to the store (src/script/realm/41-models.js loadById). */
const lookupSpec = (id) => ({ m: 'Item', w: [['id', 'eq', id]], l: 1 });

function sameRecord(engine, layerRow, rawRow) {
  const raw = [rawRow.id, Number(rawRow.created), Number(rawRow.modified), rawRow.container, rawRow.f_name, Number(rawRow.f_price)];
  if (JSON.stringify(layerRow) !== JSON.stringify(raw)) throw new Error(`${engine}: lookup answers differ: layer ${JSON.stringify(layerRow)}, raw ${JSON.stringify(raw)}`);
}

async function lookupSqlite(schema) {
  const dir = await mkdtemp(join(tmpdir(), 'laneway-bench-lookup-'));
  const store = await AppStore.open(schema, { dataDir: dir });
  const db = new Database(join(dir, 'laneway.db'));
  try {
    const ids = await seedStore(store);
    const stmt = db.prepare(`SELECT ${COLUMNS} FROM "lw_Item" WHERE "id" = ?`);
    // For information: the layer's own SQL text on a raw statement (its ORDER BY and bound LIMIT).
    const layerSql = db.prepare(`SELECT ${COLUMNS} FROM "lw_Item" WHERE "id" = ? ORDER BY "created", "id" LIMIT ?`).raw(true);
    for (const id of ids.slice(0, 20)) sameRecord('SQLite', store.read('bench').select(lookupSpec(id))[0], stmt.get(id));
    const ratio = await compareLookups(
      `SQLite: point lookup by id (in-process, ${LOOKUP_RECORDS.toLocaleString('en-US')} records; better-sqlite3 .get() vs store.read().select({id, limit 1}) with row decoding)`,
      [
        { label: 'raw prepared statement .get()', fn: (i) => stmt.get(ids[i % ids.length]).f_price },
        { label: 'query layer', fn: (i) => store.read('bench').select(lookupSpec(ids[i % ids.length]))[0][5] },
        { label: "(info) raw, the layer's SQL text", fn: (i) => layerSql.all(ids[i % ids.length], 1)[0][5] },
      ],
      timeSync,
    );
    verdict('SQLite lookup', ratio <= TARGET_LOOKUP);
  } finally {
    db.close();
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
}

async function lookupPostgres(schema, server) {
  const url = await server.createDatabase();
  const store = await AppStore.open(schema, { dataDir: tmpdir(), databaseUrl: url });
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  try {
    const ids = await seedStore(store);
    const text = `SELECT ${COLUMNS} FROM "lw_Item" WHERE "id" = $1`;
    const rawRow = async (id) => (await pool.query({ name: 'bench-lookup', text, values: [id] })).rows[0];
    for (const id of ids.slice(0, 20)) sameRecord('PostgreSQL', (await store.read('bench').select(lookupSpec(id)))[0], await rawRow(id));
    const ratio = await compareLookups(
      `PostgreSQL: point lookup by id (in-process, ${LOOKUP_RECORDS.toLocaleString('en-US')} records, one at a time; pg named prepared statement vs store.read().select({id, limit 1}) with row decoding)`,
      [
        { label: 'raw named prepared statement', fn: async (i) => Number((await rawRow(ids[i % ids.length])).f_price) },
        { label: 'query layer', fn: async (i) => (await store.read('bench').select(lookupSpec(ids[i % ids.length])))[0][5] },
        // For information: the same query unnamed (parsed and planned per call, as the layer sends it).
        { label: '(info) raw, unnamed statement', fn: async (i) => Number((await pool.query(text, [ids[i % ids.length]])).rows[0].f_price) },
      ],
      timeAsync,
    );
    verdict('PostgreSQL lookup', ratio <= TARGET_LOOKUP);
  } finally {
    await pool.end();
    await store.close();
  }
}

/**
 * The limit's check alone on SQLite, in-process (informational, steadier than HTTP on a loaded
 * machine): what a create's check runs before its transaction (src/limits/limiter.ts `hit` with
 * the fixture's rule: units spent from the lease, and one reservation in a transaction of its own
 * every `lease` hits, amortised in the figure), against the create's own insert inside an open
 * write transaction. Batches alternate.
 */
async function limitCheckSqlite(schema) {
  const dir = await mkdtemp(join(tmpdir(), 'laneway-bench-check-'));
  const store = await AppStore.open(schema, { dataDir: dir });
  let tx;
  try {
    const limits = readVisitorLimits([['writes', '1000000000/minute']], (m) => {
      throw new Error(m);
    });
    const rule = ruleFor(limits, 'writes', '/items');
    const limiter = new Limiter(limits);
    await limiter.open(store.engine);
    const insert = `INSERT INTO "lw_Item" ("id", "created", "modified", "container", "f_name", "f_price") VALUES (?, ?, ?, NULL, ?, ?)`;
    let n = 0;
    const insertBatch = async (ms) => {
      tx = await store.engine.begin();
      const ns = timeSync(() => (tx.run(insert, [`check-${++n}`, n, n, 'Bench item', 42]), 1), ms);
      await tx.rollback();
      tx = undefined;
      return ns;
    };
    // What the request does: the verdict when synchronous, else awaited (a reservation).
    const checkBatch = async (ms) => {
      let calls = 0;
      let refused = 0;
      const t0 = performance.now();
      let elapsed;
      do {
        for (let i = 0; i < 256; i++) {
          const r = limiter.hit(rule, 'addr:10.0.0.1');
          if ((r instanceof Promise ? await r : r) !== undefined) refused++;
        }
        calls += 256;
        elapsed = performance.now() - t0;
      } while (elapsed < ms);
      if (refused) throw new Error(`the check refused ${refused} hits under a limit of 1,000,000,000 a minute`);
      return (elapsed * 1e6) / calls;
    };
    await insertBatch(LOOKUP_BATCH_MS);
    await checkBatch(LOOKUP_BATCH_MS);
    const ns = [[], []];
    for (let r = 0; r < LOOKUP_ROUNDS; r++) {
      ns[0].push(await insertBatch(LOOKUP_BATCH_MS));
      ns[1].push(await checkBatch(LOOKUP_BATCH_MS));
    }
    const [ins, check] = ns.map(median);
    console.log(
      `SQLite: the limit's check alone (in-process: Limiter.hit as a create runs it, lease of ${rule.lease}, its reservations amortised; vs the create's insert in an open transaction)\n  insert of the record  ${(ins / 1000).toFixed(2).padStart(7)} µs/op\n  the check             ${(check / 1000).toFixed(2).padStart(7)} µs/op  (median of ${LOOKUP_ROUNDS} batches each)\n`,
    );
    limiter.close();
  } finally {
    await tx?.rollback();
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/** The tests' PostgreSQL server, or undefined (with the reason printed) when it cannot start. */
async function startPostgresServer() {
  try {
    const { register } = await import('tsx/esm/api');
    register();
    const { startPostgres } = await import('../test/support/postgres.ts');
    const server = await startPostgres();
    cleanups.push(() => server.destroy());
    return server;
  } catch (err) {
    console.log(`PostgreSQL: skipped — the test server could not start: ${String(err?.message ?? err).split('\n')[0]}\n`);
    return undefined;
  }
}

console.log(`models.bench: ${describeWorkload()}; lookups: ${LOOKUP_ROUNDS}× alternating ${LOOKUP_BATCH_MS} ms batches per side after a warm-up, median ns/op\n`);
try {
  await httpScenarios(await sqliteEngine());
  const server = await startPostgresServer();
  if (server) await httpScenarios(await postgresEngine(server));
  const schema = loadApp(APP).data.schema;
  await limitCheckSqlite(schema);
  if (!ONLY_LIMITS) await lookupSqlite(schema);
  if (server && !ONLY_LIMITS) await lookupPostgres(schema, server);
  if (sink === 0.5) console.log(''); // keeps the looked-up values alive
  console.log(failures.length ? `targets missed: ${failures.join(', ')}` : 'every target met');
} finally {
  for (const c of cleanups) await c();
}
if (process.env.BENCH_STRICT && failures.length) process.exitCode = 1;
