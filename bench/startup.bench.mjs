// Starting and checking (bench/README.md): how long a user waits for `laneway check`, for a
// server's first answer, and for `laneway dev` to serve an edit. Every measure is a fresh child
// process running bin/laneway (so Node's start and the module imports count), wall time, median.
//
//   (a) check, example   `laneway check examples/site`                              target < 0.5 s
//   (b) check, large     `laneway check` of a generated app (500 views, 200 scripts,
//                        1,000 files: bench/fixtures/gen-large-app.mjs)               target < 1.5 s
//       first answer     spawning `laneway serve --port 0` on it → the first 200 of a page
//                                                                                   target < 1.5 s
//   (c) dev edit         `laneway dev` on the large app: writing one edit to a view (and, apart,
//                        to a script) → that page answering the new content        target < 200 ms
//
// Sass: the example app inlines a stylesheet compiled from SCSS. Compiled stylesheets are kept
// on disk between runs (src/assets/scss.ts; LANEWAY_CACHE_DIR): (a) is measured with a cache of
// its own, emptied before the first run — the first run is reported apart (cold), the median is
// over the runs after it (warm), as a developer checks an app again and again.
//
// Environment: BENCH_RUNS (runs per measure, default 7), BENCH_EDITS (edits per kind, default 9),
// BENCH_STRICT=1 (exit 1 when a target is missed), BENCH_LANEWAY (another bin/laneway to measure,
// e.g. a build of the main branch, for a comparison in the same minutes).
//
// On a shared machine wall times swing with the load (given at the start and the end); the CPU
// time of the child processes (Linux: this process's cutime + cstime, 10 ms resolution) is printed
// beside them: it moves less. To compare two builds, run this bench on each back to back, or
// alternate them (BENCH_LANEWAY).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { loadavg, platform, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { generateLargeApp } from './fixtures/gen-large-app.mjs';
import { BENCH_DIR, fetchOnce } from './lib.mjs';

const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const EDITS = Number(process.env.BENCH_EDITS ?? 9);
const STRICT = process.env.BENCH_STRICT === '1';
const LANEWAY = process.env.BENCH_LANEWAY ?? join(BENCH_DIR, '..', 'bin', 'laneway');
const EXAMPLE = join(BENCH_DIR, '..', 'examples', 'site');
const TARGETS = { exampleCheck: 500, largeCheck: 1500, firstAnswer: 1500, devEdit: 200 };

const tmp = mkdtempSync(join(tmpdir(), 'laneway-bench-startup-'));
const children = new Set();
process.on('exit', () => {
  for (const c of children) c.kill('SIGKILL');
  rmSync(tmp, { recursive: true, force: true });
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(130));

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};
const ms = (x) => `${Math.round(x)} ms`;

/** CPU time (ms) of this process's children that have ended, or undefined off Linux. */
function childrenCpu() {
  if (platform() !== 'linux') return undefined;
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields 16 and 17 of proc(5) (cutime, cstime), counted from the state (field 3) here.
    return ((Number(fields[13]) + Number(fields[14])) * 1000) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}
const CLOCK_TICKS = 100;
const cpuNote = (xs) => (xs.every((x) => x !== undefined) ? `; CPU median ${ms(median(xs))}` : '');
const missed = [];
function verdict(name, value, target) {
  const ok = value < target;
  if (!ok) missed.push(name);
  return ok ? `< ${target} ✓` : `≥ ${target} ✗ (target missed)`;
}

/** Runs `laneway …args` to its end; answers the wall time in ms (throws on an unexpected exit code). */
function runCli(args, env = {}) {
  return new Promise((resolve, reject) => {
    const cpu = childrenCpu();
    const start = performance.now();
    const child = spawn(process.execPath, [LANEWAY, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    children.add(child);
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (out += c));
    child.on('exit', (code) => {
      const elapsed = performance.now() - start;
      children.delete(child);
      const used = childrenCpu();
      if (code !== 0) reject(new Error(`laneway ${args.join(' ')} exited with ${code}:\n${out}`));
      else resolve({ ms: elapsed, out, cpu: cpu === undefined || used === undefined ? undefined : used - cpu });
    });
  });
}

/**
 * Spawns `laneway <command> DIR --port 0 …`, waits for its listening line; `started` is the
 * performance.now() of the spawn. The child is killed by `stop()` or when the bench exits.
 */
function startLaneway(command, dir, extra = []) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [LANEWAY, command, dir, '--port', '0', '--log', 'off', ...extra], { stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(child);
    let out = '';
    let err = '';
    const timer = setTimeout(() => fail(new Error(`laneway ${command} did not listen within 60 s:\n${out}${err}`)), 60_000);
    function fail(e) {
      clearTimeout(timer);
      child.kill('SIGKILL');
      children.delete(child);
      reject(e);
    }
    child.stderr.on('data', (c) => (err += c));
    child.on('exit', (code) => fail(new Error(`laneway ${command} exited (${code}) before listening:\n${out}${err}`)));
    child.stdout.setEncoding('utf8');
    const lines = [];
    let waiting;
    child.stdout.on('data', function onData(chunk) {
      out += chunk;
      for (const line of chunk.split('\n')) if (line.trim()) lines.push(line.trim());
      waiting?.();
      const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      if (!m || child.listening) return;
      child.listening = true;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      resolve({
        port: Number(m[1]),
        started,
        lines,
        /** Resolves when a stdout line equal to `text` has been printed `count` times in all. */
        waitLine(text, count) {
          return new Promise((done) => {
            const check = () => {
              if (lines.filter((l) => l === text).length >= count) {
                waiting = undefined;
                done();
              }
            };
            waiting = check;
            check();
          });
        },
        /** Stops the child; resolves with its CPU time (ms), when known. */
        stop() {
          children.delete(child);
          const cpu = childrenCpu();
          return new Promise((done) => {
            const ended = () => {
              const used = childrenCpu();
              done(cpu === undefined || used === undefined ? undefined : used - cpu);
            };
            if (child.exitCode !== null) return ended();
            child.once('exit', ended);
            child.kill('SIGTERM');
            setTimeout(() => child.kill('SIGKILL'), 3_000).unref();
          });
        },
      });
    });
  });
}

/** GET until it answers 200 (a server that listens answers at once; a retry covers a refused first connection). */
async function firstOk(port, path) {
  for (let i = 0; ; i++) {
    try {
      const res = await fetchOnce(port, path);
      if (res.status === 200) return res;
      throw new Error(`GET ${path}: ${res.status}`);
    } catch (e) {
      if (i > 50) throw e;
      await new Promise((r) => setTimeout(r, 10));
    }
  }
}

/** The dev server's reload events (`/__/dev/events`): `next(pred)` resolves with the next event that matches. */
function openEvents(port) {
  return new Promise((resolve, reject) => {
    const waiters = [];
    const req = request({ host: '127.0.0.1', port, path: '/__/dev/events', agent: false }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`/__/dev/events: ${res.statusCode}`));
      res.setEncoding('utf8');
      let buf = '';
      res.on('data', (chunk) => {
        buf += chunk;
        let end;
        while ((end = buf.indexOf('\n\n')) !== -1) {
          const frame = buf.slice(0, end);
          buf = buf.slice(end + 2);
          const event = /^event: (.*)$/m.exec(frame)?.[1];
          const data = /^data: (.*)$/m.exec(frame)?.[1];
          if (!event) continue;
          const at = performance.now();
          const parsed = { event, data: data ? JSON.parse(data) : {}, at };
          for (const w of [...waiters]) {
            if (w.pred(parsed)) {
              waiters.splice(waiters.indexOf(w), 1);
              w.resolve(parsed);
            }
          }
        }
      });
      resolve({
        next: (pred) => new Promise((r) => waiters.push({ pred, resolve: r })),
        close: () => req.destroy(),
      });
    });
    req.on('error', reject);
    req.end();
  });
}

const load = () => loadavg()[0].toFixed(1);
console.log(`startup.bench: ${RUNS} runs per measure, ${EDITS} edits per kind; wall time of fresh processes (${LANEWAY}); load average ${load()}`);

// (a) The example app.
const sassCache = join(tmp, 'cache');
rmSync(sassCache, { recursive: true, force: true });
const exampleRuns = [];
for (let i = 0; i < RUNS + 1; i++) exampleRuns.push(await runCli(['check', EXAMPLE], { LANEWAY_CACHE_DIR: sassCache }));
const [exampleCold, ...exampleWarm] = exampleRuns;
const exampleMedian = median(exampleWarm.map((r) => r.ms));
console.log(`\n(a) laneway check examples/site`);
console.log(`  cold (no compiled stylesheet kept): ${ms(exampleCold.ms)}${cpuNote([exampleCold.cpu])}`);
console.log(`  median ${ms(exampleMedian)} (runs ${exampleWarm.map((r) => Math.round(r.ms)).join(', ')}${cpuNote(exampleWarm.map((r) => r.cpu))})  ${verdict('check examples/site', exampleMedian, TARGETS.exampleCheck)}`);

// (b) The large app: check, then the first answer of `serve`.
const large = join(tmp, 'large');
const made = generateLargeApp(large);
console.log(`\n(b) generated app: ${made.files} files (${made.views} views, ${made.scripts} scripts), ${large}`);
const checks = [];
for (let i = 0; i < RUNS; i++) {
  const r = await runCli(['check', large]);
  if (!/^0 errors, 0 warnings$/m.test(r.out)) throw new Error(`laneway check of the large app reports problems:\n${r.out}`);
  checks.push(r);
}
const checkMedian = median(checks.map((r) => r.ms));
console.log(`  laneway check: median ${ms(checkMedian)} (runs ${checks.map((r) => Math.round(r.ms)).join(', ')}${cpuNote(checks.map((r) => r.cpu))})  ${verdict('check large app', checkMedian, TARGETS.largeCheck)}`);

const firsts = [];
const serveCpu = [];
const sample = made.sample.view;
for (let i = 0; i < RUNS; i++) {
  const data = join(tmp, `data-${i}`);
  const server = await startLaneway('serve', large, ['--data', data]);
  const res = await firstOk(server.port, sample.url);
  const t = performance.now() - server.started;
  if (!res.body.toString().includes(sample.marker)) throw new Error(`GET ${sample.url} does not show ${JSON.stringify(sample.marker)}`);
  firsts.push(t);
  serveCpu.push(await server.stop());
  rmSync(data, { recursive: true, force: true });
}
const firstMedian = median(firsts);
console.log(`  serve → first 200 (GET ${sample.url}): median ${ms(firstMedian)} (runs ${firsts.map(Math.round).join(', ')}${cpuNote(serveCpu)} to the end of the server)  ${verdict('first answer', firstMedian, TARGETS.firstAnswer)}`);

// (c) laneway dev on the large app: edit → the page answers the new content.
console.log(`\n(c) laneway dev on the large app: writing one edit → GET answers it`);
const dev = await startLaneway('dev', large, ['--data', join(tmp, 'data-dev')]);
const events = await openEvents(dev.port);
let reloads = 0;
/**
 * Edits `file` EDITS times (a new marker each time) and answers the times from the write to the
 * page showing it, to the reload event, and the server's own rebuild (its "reloaded" line).
 */
async function measureEdits(kind, file, url, marker, edit) {
  const abs = join(large, file);
  const original = readFileSync(abs, 'utf8');
  const answered = [];
  const announced = [];
  try {
    for (let i = 0; i < EDITS; i++) {
      const token = `${kind}-edit-${i}-${Date.now()}`;
      const text = edit(original, token);
      const reloaded = events.next((e) => e.event === 'reload' && e.data.files?.includes('/' + file));
      const t0 = performance.now();
      writeFileSync(abs, text);
      const ev = await reloaded;
      const res = await fetchOnce(dev.port, url);
      const t1 = performance.now();
      if (res.status !== 200 || !res.body.toString().includes(marker(token))) throw new Error(`${kind} edit ${i}: GET ${url} answered ${res.status} without the new content`);
      await dev.waitLine('reloaded', ++reloads);
      answered.push(t1 - t0);
      announced.push(ev.at - t0);
      // Let the watcher's burst end before the next edit (two edits in one burst are one rebuild).
      await new Promise((r) => setTimeout(r, 150));
    }
  } finally {
    writeFileSync(abs, original);
    await events.next((e) => e.event === 'reload');
    await dev.waitLine('reloaded', ++reloads);
  }
  return { answered, announced };
}
const view = made.sample.view;
const viewEdits = await measureEdits('view', view.file, view.url, (t) => t, (text, token) => text.replace('</h1>', ` ${token}</h1>`));
const script = made.sample.script;
const scriptEdits = await measureEdits('script', script.file, script.url, (t) => `"tag":"${t}"`, (text, token) => text.replace('({script:', `({tag: '${token}', script:`));
const partialEdits = await measureEdits('partial', made.sample.partial.file, view.url, (t) => t, (text, token) => text.replace('</p>', ` ${token}</p>`));
await dev.stop();
events.close();
const devLine = (name, r, target) => {
  const m = median(r.answered);
  const line = `  ${name}: median ${ms(m)} (runs ${r.answered.map(Math.round).join(', ')}; reload event after ${ms(median(r.announced))})`;
  return target === undefined ? `${line}  (reported)` : `${line}  ${verdict(`dev ${name}`, m, target)}`;
};
console.log(devLine(`view ${view.file}`, viewEdits, TARGETS.devEdit));
console.log(devLine(`script ${script.file}`, scriptEdits, TARGETS.devEdit));
console.log(devLine(`partial ${made.sample.partial.file} (used by every page)`, partialEdits));

console.log(`\nload average at the end ${load()}${missed.length ? `; missed: ${missed.join(', ')}` : '; every target met'}`);
if (STRICT && missed.length) process.exit(1);
