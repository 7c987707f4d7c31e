// Scenario "cluster" (bench/README.md): `laneway serve --workers 2`, the CLI's supervisor and two
// node:cluster workers sharing the port, measured three ways:
//
//   A  json endpoint: GET /api/items?tag=sale&max=150 of bench/fixtures/script-app (as
//      script-http.bench.mjs), against servers/bare-json.mjs run as two cluster workers
//      (servers/bare-cluster.mjs). Target: Laneway ≥ 0.85× the bare workers.
//   B  view page: GET /products of bench/fixtures/view-app (as view-http.bench.mjs: layout, 3
//      partials, 200 rows from a supplier run per request), against servers/bare-hogan.mjs run as
//      two cluster workers. Target: Laneway ≥ 0.8× the bare workers.
//   C  CPU-heavy route: GET /work of bench/fixtures/cluster-app (about 20 ms of script CPU per
//      request), `--workers 2` against `--workers 1` (one process, no supervisor), both Laneway,
//      with few connections (BENCH_CPU_CONNECTIONS, default 8) so that the load generator, which
//      takes most of a core in A and B, idles. Target: two workers ≥ 1.7× one.
//
// Every Laneway server is the CLI (bin/laneway serve DIR --port 0 --workers N --log off --data TMP),
// started in a process group of its own, stopped with SIGTERM (the supervisor drains its workers)
// and, whatever happens, killed with its group when this process exits. Before timing, the bare
// workers must answer what Laneway answers (A: same status, headers and bytes on five URLs; B: same
// headers, ETag and Content-Length derived from each body, same text ignoring whitespace), each URL
// asked on two fresh connections so that (node:cluster hands connections out in turn) both workers
// of each side answer it. After each scenario, the CPU time of every process of each side is
// printed (from /proc): the primaries should have next to none, the two workers about the same;
// and the cores the rest of the machine used meanwhile, which tells a miss of C caused by other
// processes from one caused by Laneway.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';

// Three alternating runs per side (instead of two), as csp.bench.mjs and users.bench.mjs do with
// four: on a shared 2-core machine the load of other processes moves from one 4 s run to the next.
// About 105 s in all with the defaults.
process.env.BENCH_ROUNDS ??= '3';
const { BENCH_DIR, WORKLOAD, checkTarget, compare, describeWorkload, fetchOnce, report, stableHeaders } = await import('./lib.mjs');

const HOST = '127.0.0.1';
const CLI = join(BENCH_DIR, '..', 'bin', 'laneway');
const WORKERS = 2;
const CPU_CONNECTIONS = Number(process.env.BENCH_CPU_CONNECTIONS ?? 8);
const TARGETS = { json: 0.85, view: 0.8, cpu: 1.7 };

const JSON_APP = join(BENCH_DIR, 'fixtures', 'script-app');
const JSON_PATH = '/api/items?tag=sale&max=150';
const JSON_ALSO = ['/api/items', '/api/items?tag=new', '/api/items?max=20', '/api/items?tag=none'];
const VIEW_APP = join(BENCH_DIR, 'fixtures', 'view-app');
const VIEW_PATH = '/products';
const CPU_APP = join(BENCH_DIR, 'fixtures', 'cluster-app');
const CPU_PATH = '/work';

const load1 = () => loadavg().map((x) => x.toFixed(2)).join(', ');

// ---------------------------------------------------------------------------------------------
// Servers: each a child in a process group of its own (the CLI's primary and its workers, or
// bare-cluster.mjs and its workers), all killed when this process exits, however it exits.

const groups = new Set();
const tempDirs = new Set();
process.on('exit', () => {
  for (const pid of groups) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});
// lib.mjs exits on SIGINT and SIGTERM, which runs the handler above.

/**
 * Starts `node ...args` in a process group of its own and waits for `ready` on its standard
 * output; `pids(out)` names the processes that serve (for the CPU figures). Standard error is
 * passed through.
 */
function spawnServer(label, args, ready, pids, { timeoutMs = 60_000 } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    groups.add(child.pid);
    child.stderr.pipe(process.stderr);
    let out = '';
    const timer = setTimeout(() => fail(new Error(`${label}: not ready within ${timeoutMs / 1000} s:\n${out}`)), timeoutMs);
    function fail(err) {
      clearTimeout(timer);
      killGroup(child.pid);
      reject(err);
    }
    child.once('error', fail);
    child.once('exit', (code, signal) => fail(new Error(`${label}: exited (${signal ?? `code ${code}`}) before it was ready:\n${out}`)));
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', function onData(chunk) {
      out += chunk;
      const m = ready.exec(out);
      if (!m) return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      child.stdout.off('data', onData);
      child.stdout.resume();
      resolve({
        label,
        port: Number(m[1]),
        /** Every process of the server: the primary first. */
        pids: [child.pid, ...pids(out)],
        /** SIGTERM to the primary (it stops its workers), then the whole group is killed. */
        stop() {
          return new Promise((done) => {
            const finish = () => {
              killGroup(child.pid);
              done();
            };
            if (child.exitCode !== null || child.signalCode !== null) return finish();
            const timer = setTimeout(finish, 15_000);
            child.once('exit', () => {
              clearTimeout(timer);
              finish();
            });
            child.kill('SIGTERM');
          });
        },
      });
    });
  });
}

function killGroup(pid) {
  groups.delete(pid);
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // gone
  }
}

/** `laneway serve APP --workers N` through the CLI, on a free port and a data directory of its own. */
function startLaneway(app, workers) {
  const data = mkdtempSync(join(tmpdir(), 'laneway-bench-cluster-'));
  tempDirs.add(data);
  return spawnServer(
    `laneway --workers ${workers}`,
    [CLI, 'serve', app, '--port', '0', '--host', HOST, '--workers', String(workers), '--log', 'off', '--data', data],
    /^listening on http:\/\/[^\s]+:(\d+)\s*$/m,
    (out) => /workers serving \(pids ([\d, ]+)\)/.exec(out)?.[1].split(', ').map(Number) ?? [],
  );
}

/** A bare baseline (servers/bare-*.mjs) run as N node:cluster workers by servers/bare-cluster.mjs. */
function startBareCluster(server, args = []) {
  return spawnServer(
    `bare ${server} ×${WORKERS}`,
    [join(BENCH_DIR, 'servers', 'bare-cluster.mjs'), String(WORKERS), server, ...args],
    /^listening (\d+)\s*$/m,
    (out) => /^workers ([\d ]+)$/m.exec(out)[1].split(' ').map(Number),
  );
}

// ---------------------------------------------------------------------------------------------
// CPU time per process, from /proc (Linux; elsewhere the figures are left out).

const TICK = 100; // USER_HZ, the unit of utime and stime in /proc/PID/stat on Linux

function cpuSeconds(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICK; // utime, stime
  } catch {
    return NaN;
  }
}
const cpuOf = (server) => server.pids.map(cpuSeconds);

/**
 * One line per side: the CPU seconds each process used between `before` and now (the side's
 * warm-up and runs; the other side idles meanwhile), and the cores that makes on average over the
 * side's load time: a side that got much less than two cores was held back by the machine.
 */
function printCpu(sides) {
  const lines = [];
  const cores = [];
  const wall = WORKLOAD.warmupSeconds + WORKLOAD.rounds * WORKLOAD.seconds;
  for (const { server, before } of sides) {
    const used = cpuOf(server).map((s, i) => s - before[i]);
    if (used.some(Number.isNaN)) return [];
    const total = used.reduce((a, b) => a + b, 0);
    const parts = used.map((s, i) => `${i === 0 && server.pids.length > 1 ? 'primary' : 'worker'} ${s.toFixed(2)} s (${Math.round((100 * s) / total)} %)`);
    lines.push(`  ${server.label.padEnd(30)} ${parts.join(', ')}; ${(total / wall).toFixed(2)} cores`);
    cores.push(total / wall);
  }
  console.log(`  CPU time of each process during the warm-up and runs of its side (${wall} s):\n${lines.join('\n')}`);
  return cores;
}

/**
 * The ratio of each candidate run to the baseline run just before it (the two share the machine's
 * load of the moment), for information: the verdict is lib.mjs's, the ratio of the medians.
 */
function runByRun(result) {
  const ratios = result.candidate.runs.map((rps, i) => rps / result.baseline.runs[i]);
  const sorted = [...ratios].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  console.log(`  run by run (each candidate run ÷ the baseline run before it): ${ratios.map((r) => r.toFixed(2)).join(', ')}; median ${median.toFixed(2)}`);
}

/** Busy CPU seconds of the whole machine (every core), from the `cpu` line of /proc/stat. */
function machineBusySeconds() {
  try {
    const [user, nice, system, _idle, _iowait, irq, softirq, steal] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    return (user + nice + system + irq + softirq + steal) / TICK;
  } catch {
    return NaN;
  }
}

/**
 * compare(), with the CPU time of every process of both sides printed after the runs, and what
 * the rest of the machine used meanwhile: the busy time of every core, less both servers and this
 * process (autocannon), over the scenario's time. Two workers that use less than two cores
 * either wait (for connections, for the generator) or are held back by other processes: this line
 * tells which.
 */
async function compareWithCpu(name, a, b, expectStatus) {
  const sides = [a.server, b.server].map((server) => ({ server, before: cpuOf(server) }));
  const machine = machineBusySeconds();
  const self = process.cpuUsage();
  const t0 = performance.now();
  const result = await compare(name, a, b, expectStatus);
  const wall = (performance.now() - t0) / 1000;
  const busy = machineBusySeconds() - machine;
  const own = process.cpuUsage(self);
  const generator = (own.user + own.system) / 1e6;
  const serversAfter = sides.map(({ server }) => cpuOf(server));
  return {
    result,
    printCpu: () => {
      const cores = printCpu(sides);
      const servers = sides.reduce((sum, { before }, i) => sum + serversAfter[i].reduce((a, s, j) => a + s - before[j], 0), 0);
      if (Number.isNaN(busy + servers)) return { cores };
      const others = Math.max(0, busy - servers - generator) / wall;
      console.log(`  over the whole scenario (${wall.toFixed(0)} s): this process (autocannon) ${(generator / wall).toFixed(2)} cores, other processes of the machine ${others.toFixed(2)} cores`);
      return { cores, others };
    },
  };
}

// ---------------------------------------------------------------------------------------------

const results = [];
console.log(`cluster.bench: ${describeWorkload()}; CPU scenario with ${CPU_CONNECTIONS} connections; ${WORKERS} workers; load average ${load1()}\n`);

// A — JSON endpoint.
{
  const bare = await startBareCluster('bare-json.mjs');
  const laneway = await startLaneway(JSON_APP, WORKERS);
  let timed;
  for (const path of [JSON_PATH, ...JSON_ALSO]) {
    const expected = await checkTarget('bare node:http ×2', bare.port, path, { status: 200 });
    for (let i = 0; i < 2; i++) {
      await checkTarget('bare node:http ×2', bare.port, path, { status: 200, same: expected });
      const res = await checkTarget(`laneway --workers ${WORKERS}`, laneway.port, path, { status: 200, same: expected });
      timed ??= res;
    }
  }
  const json = JSON.parse(timed.body.toString('utf8'));
  if (json.count !== 11) throw new Error(`GET ${JSON_PATH}: expected 11 matches, got ${timed.body}`);
  console.log(`  A  GET ${JSON_PATH}: ${timed.body.length} B of JSON; ${JSON_ALSO.length + 1} URLs byte-equal on both sides`);
  await timeTwoSides(`A  json endpoint ${JSON_PATH}, ${WORKERS} workers each`, 'bare node:http ×2', bare, laneway, JSON_PATH, TARGETS.json);
}

// B — view page.
{
  const laneway = await startLaneway(VIEW_APP, WORKERS);
  // The page's policy (no dynamic inline blocks): the baseline sends it as a fixed string.
  const policy = (await checkTarget('laneway', laneway.port, VIEW_PATH, { status: 200 })).headers['content-security-policy'];
  const bare = await startBareCluster('bare-hogan.mjs', [VIEW_APP, policy ?? '']);
  const squash = (buf) => buf.toString('utf8').replace(/\s+/g, ' ').trim();
  const sha1Tag = (body) => '"' + createHash('sha1').update(body).digest('base64url') + '"';
  const withoutBodyHeaders = (headers) => {
    const { etag: _e, 'content-length': _l, ...rest } = stableHeaders(headers);
    return JSON.stringify(rest);
  };
  const answers = [];
  for (let i = 0; i < 2; i++) {
    answers.push(['laneway', await checkTarget('laneway', laneway.port, VIEW_PATH, { status: 200, bodyIncludes: 'id="item-200"' })]);
    answers.push(['hogan', await checkTarget('bare node:http + Hogan.js', bare.port, VIEW_PATH, { status: 200, bodyIncludes: 'id="item-200"' })]);
  }
  const [, first] = answers[0];
  const problems = [];
  for (const [label, res] of answers) {
    if (withoutBodyHeaders(res.headers) !== withoutBodyHeaders(first.headers)) {
      problems.push(`headers differ:\n  laneway ${withoutBodyHeaders(first.headers)}\n  ${label.padEnd(7)} ${withoutBodyHeaders(res.headers)}`);
    }
    if (res.headers.etag !== sha1Tag(res.body)) problems.push(`${label}: ETag ${res.headers.etag} is not the sha1 of its body`);
    if (Number(res.headers['content-length']) !== res.body.length) problems.push(`${label}: Content-Length is not the body's length`);
    if (squash(res.body) !== squash(first.body)) problems.push(`${label}: the body differs from Laneway's (ignoring whitespace)`);
  }
  if (problems.length) throw new Error(`GET ${VIEW_PATH}: the two sides do not answer the same before timing:\n  ${problems.join('\n  ')}`);
  console.log(`  B  GET ${VIEW_PATH}: laneway ${first.body.length} B, hogan ${answers[1][1].body.length} B of HTML, same headers and text on both sides`);
  await timeTwoSides(`B  view ${VIEW_PATH} (layout + 3 partials + 200 rows from a supplier), ${WORKERS} workers each`, 'node:http+Hogan ×2', bare, laneway, VIEW_PATH, TARGETS.view);
}

/** Times `path` on the bare cluster and on Laneway's, reports it against `target`, then stops both. */
async function timeTwoSides(title, bareLabel, bare, laneway, path, target) {
  const { result, printCpu: cpu } = await compareWithCpu(
    title,
    { label: bareLabel, port: bare.port, path, server: bare },
    { label: 'laneway ×2', port: laneway.port, path, server: laneway },
    200,
  );
  report(result, target);
  runByRun(result);
  cpu();
  console.log('');
  results.push({ ...result, target });
  await Promise.all([bare.stop(), laneway.stop()]);
}

// C — CPU-heavy route, two workers against one process.
{
  const one = await startLaneway(CPU_APP, 1);
  const two = await startLaneway(CPU_APP, WORKERS);
  const expected = await checkTarget('laneway --workers 1', one.port, CPU_PATH, { status: 200, bodyIncludes: '"size":1300' });
  for (let i = 0; i < 2; i++) await checkTarget(`laneway --workers ${WORKERS}`, two.port, CPU_PATH, { status: 200, same: expected });
  // The route's cost, measured on the single process: sequential requests, one at a time, after
  // 20 that let the JIT settle (the first ten take about twice the CPU).
  for (let i = 0; i < 20; i++) await fetchOnce(one.port, CPU_PATH);
  const N = 20;
  const cpuBefore = cpuSeconds(one.pids[0]);
  const walls = [];
  for (let i = 0; i < N; i++) {
    const t0 = process.hrtime.bigint();
    await fetchOnce(one.port, CPU_PATH);
    walls.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  const perRequest = ((cpuSeconds(one.pids[0]) - cpuBefore) / N) * 1000;
  walls.sort((a, b) => a - b);
  console.log(
    `  C  GET ${CPU_PATH}: ${expected.body.length} B of JSON; one at a time, ${walls[N >> 1].toFixed(1)} ms per request (median of ${N})` +
      (Number.isNaN(perRequest) ? '' : `, ${perRequest.toFixed(1)} ms of server CPU per request`),
  );
  const { result, printCpu: cpu } = await compareWithCpu(
    `C  CPU-heavy route ${CPU_PATH} (about 20 ms of script CPU per request), ${CPU_CONNECTIONS} connections`,
    { label: 'laneway ×1', port: one.port, path: CPU_PATH, connections: CPU_CONNECTIONS, server: one },
    { label: `laneway ×${WORKERS}`, port: two.port, path: CPU_PATH, connections: CPU_CONNECTIONS, server: two },
    200,
  );
  report(result, TARGETS.cpu);
  runByRun(result);
  // Both sides spend the same CPU per request: the ratio can be no better than the cores the
  // machine let the two workers have, over those the single process had.
  const { cores: [coresOne, coresTwo] = [], others } = cpu();
  if (coresOne && coresTwo) {
    const why = others === undefined ? '' : others >= 0.25 ? `; other processes held ${others.toFixed(2)} cores meanwhile` : '; the machine had cores to spare: the workers waited';
    console.log(`  the two workers had ${(coresTwo / coresOne).toFixed(2)}× the CPU of the single process (${coresTwo.toFixed(2)} cores${coresTwo < 1.7 ? why : ''})`);
  }
  console.log('');
  results.push({ ...result, target: TARGETS.cpu });
  await Promise.all([one.stop(), two.stop()]);
}

console.log(`load average ${load1()}`);
if (process.env.BENCH_STRICT && results.some((r) => r.ratio < r.target)) process.exitCode = 1;
