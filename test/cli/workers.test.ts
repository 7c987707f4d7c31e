/**
 * `laneway serve --workers N` (docs/deploy.md "Workers and the supervisor"), run as users run it:
 * bin/laneway in a child process, on 127.0.0.1, port 0. Which worker answered is read from the
 * supervisor's log lines (`worker N listening (pid P)`) and from the per-worker series of
 * /__/metrics. Nothing here depends on the machine's speed: every wait is for a log line or an
 * answer, with a generous limit; the only duration asserted is the watchdog's, to its order of
 * magnitude.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { get as httpGet } from 'node:http';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { rawRequest, writeApp } from '../helpers.js';
import { readServeScaling, restartDelay, TEST_BLOCK_ENV } from '../../src/supervisor/index.js';
import { BIN, serve, WAIT_MS } from '../support/served-process.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/workers-app', import.meta.url));

/** GET on a connection of its own; the status. No time limit but the test's own (WAIT_MS). */
function getOnNewConnection(port: number, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpGet({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.setTimeout(WAIT_MS, () => req.destroy(new Error(`no answer within ${WAIT_MS / 1000} s: GET ${path}`)));
  });
}

/** A copy of the fixture app that a test may change. */
function copyApp(): string {
  const dir = mkdtempSync(join(tmpdir(), 'laneway-workers-'));
  cpSync(FIXTURE, dir, { recursive: true });
  return dir;
}

/** The samples of a Prometheus exposition: name, labels, value. */
function samples(text: string): Array<{ name: string; labels: Record<string, string>; value: number }> {
  return text
    .split('\n')
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => {
      const m = /^([a-z_]+)(?:\{(.*)\})? (\S+)$/.exec(l);
      assert.ok(m, `not a sample line: ${l}`);
      const labels = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1]!, x[2]!]));
      return { name: m[1]!, labels, value: Number(m[3]) };
    });
}

describe('serve --workers 2', () => {
  it('starts two workers on one port; both answer; /__/metrics adds their counts up', async () => {
    const s = await serve(FIXTURE, ['--workers', '2', '--metrics']);
    const workers = s.listening();
    assert.equal(workers.length, 2, s.text());
    assert.notEqual(workers[0]!.pid, workers[1]!.pid);
    for (let i = 0; i < 20; i++) {
      const r = await s.get('/items/a');
      assert.equal(r.status, 200);
    }
    const metrics = await s.get('/__/metrics');
    assert.equal(metrics.status, 200);
    assert.match(String(metrics.headers['content-type']), /^text\/plain; version=0\.0\.4/);
    const all = samples(metrics.text);
    const perWorker = all.filter((x) => x.name === 'laneway_worker_requests_total');
    assert.deepEqual(perWorker.map((x) => Number(x.labels.pid)).sort(), workers.map((w) => w.pid).sort());
    for (const x of perWorker) assert.ok(x.value > 0, `worker ${x.labels.worker} answered no request:\n${metrics.text}`);
    const total = all.find((x) => x.name === 'laneway_http_requests_total' && x.labels.route === '/items/{item}' && x.labels.status === '200');
    assert.equal(total?.value, 20);
    assert.equal(await s.stop(), 0);
  });

  it('replaces a worker killed with SIGKILL, and requests keep succeeding', async () => {
    const s = await serve(FIXTURE, ['--workers', '2', '--metrics']);
    const [victim, survivor] = s.listening();
    const mark = s.lines.length;
    process.kill(victim!.pid, 'SIGKILL');
    const crash = await s.waitFor((l) => l.code === 'LW_SERVE_WORKER_CRASHED', 'crash line', mark);
    assert.equal(crash.pid, victim!.pid);
    assert.match(crash.message, /exited unexpectedly \(signal SIGKILL\)/);
    // The supervisor has taken the dead worker out of the rotation: the other one answers.
    for (let i = 0; i < 5; i++) assert.equal((await s.get('/items/b')).status, 200);
    await s.waitFor((l) => /^worker \d+ listening/.test(l.message ?? ''), 'replacement', mark);
    const replacement = s.listening(mark)[0]!;
    assert.ok(![victim!.pid, survivor!.pid].includes(replacement.pid));
    for (let i = 0; i < 20; i++) assert.equal((await s.get('/items/c')).status, 200);
    const perWorker = samples((await s.get('/__/metrics')).text).filter((x) => x.name === 'laneway_worker_requests_total');
    assert.ok(perWorker.some((x) => Number(x.labels.pid) === replacement.pid && x.value > 0), 'the replacement answers');
    assert.ok(!perWorker.some((x) => Number(x.labels.pid) === victim!.pid));
    const restarts = samples((await s.get('/__/metrics')).text).find((x) => x.name === 'laneway_worker_restarts_total' && x.labels.reason === 'crashed');
    assert.equal(restarts?.value, 1);
    assert.equal(await s.stop(), 0);
  });

  it('a stopped worker holds one new connection; when it dies, that one is served by another: none is left unanswered', async () => {
    const s = await serve(FIXTURE, ['--workers', '2']);
    const [victim] = s.listening();
    const mark = s.lines.length;
    // Stopped (as a blocked worker, to the supervisor), the worker takes nothing it is sent.
    process.kill(victim!.pid, 'SIGSTOP');
    try {
      let answered = 0;
      let allButOne: () => void = () => {};
      const nineAnswered = new Promise<void>((resolve) => (allButOne = resolve));
      const requests = Array.from({ length: 10 }, () =>
        getOnNewConnection(s.port, '/items/a').then((status) => {
          if (++answered === 9) allButOne();
          return status;
        }),
      );
      // A worker gets its next connection only once it took the last one: the stopped worker
      // holds one, the other answers the nine others.
      await nineAnswered;
      assert.equal(answered, 9);
      process.kill(victim!.pid, 'SIGKILL');
      // The one it held goes to the other worker (node:cluster's own round-robin left it open in
      // the supervisor, unanswered).
      assert.deepEqual(await Promise.all(requests), Array(10).fill(200));
    } finally {
      try {
        process.kill(victim!.pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
    await s.waitFor((l) => l.code === 'LW_SERVE_WORKER_CRASHED', 'crash line', mark);
    assert.equal(await s.stop(), 0);
  });

  it('every worker killed at once: the connections that come meanwhile wait, and are answered by the replacements', async () => {
    const s = await serve(FIXTURE, ['--workers', '2']);
    const mark = s.lines.length;
    for (const w of s.listening()) process.kill(w.pid, 'SIGKILL');
    // Some reach a worker as it dies (sent, never acknowledged); the rest find no worker at all.
    const statuses = await Promise.all(Array.from({ length: 10 }, () => getOnNewConnection(s.port, '/items/a')));
    assert.deepEqual(statuses, Array(10).fill(200));
    // Both are reported and replaced (the second after the backoff's first wait).
    await s.waitFor((l) => l.code === 'LW_SERVE_WORKER_CRASHED' && s.lines.slice(mark).filter((x) => x.code === 'LW_SERVE_WORKER_CRASHED').length === 2, 'two crash lines', mark);
    while (s.listening(mark).length < 2) await s.waitFor((l) => /^worker \d+ listening/.test(l.message ?? ''), 'replacements', s.lines.length);
    assert.equal(await s.stop(), 0);
  });

  it('SIGHUP reloads the app: new workers on the new files, then the old ones drain; no request fails', async () => {
    const dir = copyApp();
    try {
      const s = await serve(dir, ['--workers', '2']);
      const first = s.listening();
      let stop = false;
      const failures: string[] = [];
      const seen = new Set<string>();
      let answered = 0;
      // Four clients, each a fresh connection per request, for as long as the reload takes.
      const clients = Array.from({ length: 4 }, async () => {
        while (!stop) {
          try {
            const r = await s.get('/');
            const version = /version (one|two)/.exec(r.text)?.[1];
            if (r.status !== 200 || !version) failures.push(`${r.status} ${r.text.slice(0, 80)}`);
            else seen.add(version);
            answered++;
          } catch (err) {
            failures.push((err as Error).message);
          }
        }
      });
      while (answered < 20) await new Promise((r) => setTimeout(r, 20));
      writeFileSync(join(dir, 'index.html'), '<!doctype html>\n<html><head><title>Workers</title></head>\n<body><p id="version">version two</p></body></html>\n');
      const mark = s.lines.length;
      s.child.kill('SIGHUP');
      await s.waitFor((l) => /^reloaded: 2 workers on the new build/.test(l.message ?? ''), 'reloaded line', mark);
      // Both old workers finish and exit.
      for (const old of first) await s.waitFor((l) => l.message === `worker ${old.worker} (pid ${old.pid}) stopped (code 0)`, `worker ${old.worker} stopped`, mark);
      const before = answered;
      while (answered < before + 20) await new Promise((r) => setTimeout(r, 20));
      stop = true;
      await Promise.all(clients);
      assert.deepEqual(failures, []);
      assert.deepEqual([...seen].sort(), ['one', 'two']);
      // From now on, only the new build answers.
      for (let i = 0; i < 10; i++) assert.match((await s.get('/')).text, /version two/);
      const second = s.listening(mark);
      assert.equal(second.length, 2);
      assert.ok(second.every((w) => !first.some((f) => f.pid === w.pid)));
      assert.equal(await s.stop(), 0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a reload that does not compile prints the problems and keeps the workers serving', async () => {
    const dir = copyApp();
    try {
      const s = await serve(dir, ['--workers', '2']);
      const workers = s.listening();
      const mark = s.lines.length;
      writeFileSync(join(dir, 'index.html'), '<p>version two</p>');
      writeFileSync(join(dir, 'ping', 'GET.js'), 'var x = 1;\n({ x });\n');
      s.child.kill('SIGHUP');
      const failed = await s.waitFor((l) => l.code === 'LW_SERVE_RELOAD_FAILED', 'reload failure', mark);
      assert.match(failed.message, /the workers keep serving/);
      assert.ok(s.lines.slice(mark).some((l) => l.code === 'LW_SCRIPT_VAR' && l.file === 'ping/GET.js'), s.text());
      for (let i = 0; i < 10; i++) assert.match((await s.get('/')).text, /version one/);
      assert.equal(s.listening(mark).length, 0, 'no new worker started');
      assert.deepEqual(s.listening(), workers);
      assert.equal(await s.stop(), 0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('kills and replaces a worker whose event loop is blocked, naming the request it was running', async () => {
    // TEST ONLY switch (src/supervisor/worker.ts): a request to /ping blocks the worker's event loop.
    const s = await serve(FIXTURE, ['--workers', '2', '--watchdog-ms', '2000'], { NODE_ENV: 'test', [TEST_BLOCK_ENV]: '/ping' });
    const before = s.listening();
    const mark = s.lines.length;
    const blockedRequest = s.get('/ping').then(
      (r) => `answered ${r.status}`,
      (err: Error) => err.message,
    );
    const report = await s.waitFor((l) => l.code === 'LW_SERVE_WORKER_BLOCKED', 'watchdog report', mark);
    assert.equal(report.method, 'GET');
    assert.equal(report.path, '/ping');
    assert.match(String(report.id), /^[0-9a-f]{6}-[0-9a-z]+$/);
    assert.match(report.message, /while running GET \/ping \(request [0-9a-f]{6}-[0-9a-z]+/);
    // The threshold, to its order of magnitude: not before it, and not ten times later.
    assert.ok(Number(report.blockedMs) >= 2000 && Number(report.blockedMs) < 20_000, String(report.blockedMs));
    const blocked = before.find((w) => w.pid === report.pid);
    assert.ok(blocked, 'the report names one of the workers');
    const replaced = await s.waitFor((l) => l.code === 'LW_SERVE_WORKER_CRASHED', 'replacement line', mark);
    assert.equal(replaced.pid, blocked.pid);
    assert.match(replaced.message, /killed by the supervisor \(blocked event loop\)/);
    assert.notEqual(await blockedRequest, 'answered 200');
    await s.waitFor((l) => /^worker \d+ listening/.test(l.message ?? ''), 'replacement listening', mark);
    for (let i = 0; i < 10; i++) assert.equal((await s.get('/items/a')).status, 200);
    assert.equal(await s.stop(), 0);
  });

  it('exits 0 on SIGINT too, after draining', async () => {
    const s = await serve(FIXTURE, ['--workers', '2']);
    const workers = s.listening();
    assert.equal((await s.get('/')).status, 200);
    s.child.kill('SIGINT');
    assert.equal(await s.exited, 0);
    for (const w of workers) assert.ok(s.lines.some((l) => l.message === `worker ${w.worker} (pid ${w.pid}) stopped (code 0)`), s.text());
  });

  it('--metrics-port: the primary serves the metrics there, and only there', async () => {
    const s = await serve(FIXTURE, ['--workers', '2', '--metrics-port', '0']);
    const where = await s.waitFor((l) => /^metrics on /.test(l.message ?? ''), 'metrics line');
    const url = new URL(String(where.message).slice('metrics on '.length));
    assert.equal(url.hostname, '127.0.0.1');
    assert.equal((await s.get('/items/a')).status, 200);
    assert.equal((await s.get('/__/metrics')).status, 404, 'never on the public port');
    const metrics = await rawRequest(Number(url.port), 'GET', '/__/metrics');
    assert.equal(metrics.status, 200);
    assert.equal(samples(metrics.text).find((x) => x.name === 'laneway_http_requests_total' && x.labels.route === '/items/{item}')?.value, 1);
    assert.equal(await s.stop(), 0);
  });

  it('an app that does not compile: the problems once, exit 1, no worker started', () => {
    const dir = writeApp({ '/a/GET.js': 'var x = 1;\n({ x });\n' });
    const r = spawnSync(process.execPath, [BIN, 'serve', dir, '--workers', '2', '--port', '0'], { encoding: 'utf8', env: { ...process.env, PORT: '', NO_COLOR: '1' } });
    assert.equal(r.status, 1);
    assert.equal(r.stderr.split('LW_SCRIPT_VAR').length - 1, 1, r.stderr);
    assert.doesNotMatch(r.stdout + r.stderr, /worker \d+/);
    rmSync(dir, { recursive: true, force: true });
  });

  it('--strict holds for the workers: what degrades stops the start (exit 1, no worker), and a reload to it keeps the workers', async () => {
    const degraded = "<!--TEMPLATE mustache-->\n{{% import {Fre} from '📤' }}\n<p>old</p>\n";
    const dir = writeApp({ '/📤/Site.js': 'let Free = 0;\nexport {Free};\n', '/old.html': degraded });
    const r = spawnSync(process.execPath, [BIN, 'serve', dir, '--strict', '--workers', '2', '--port', '0'], { encoding: 'utf8', env: { ...process.env, PORT: '', NO_COLOR: '1' } });
    rmSync(dir, { recursive: true, force: true });
    assert.equal(r.status, 1, r.stdout + r.stderr);
    assert.match(r.stderr, /old.html:2:13: cannot import "Fre" from '📤'.*\[LW_APP_NOT_AVAILABLE\]/);
    assert.doesNotMatch(r.stderr, /old.html:2:13: warning:/);
    assert.doesNotMatch(r.stdout + r.stderr, /worker \d+/);
    // Without --strict the workers serve it, the page answering 501.
    const plain = copyApp();
    writeFileSync(join(plain, 'old.html'), degraded);
    try {
      const s = await serve(plain, ['--workers', '2']);
      assert.equal((await s.get('/old')).status, 501);
      assert.equal(await s.stop(), 0);
    } finally {
      rmSync(plain, { recursive: true, force: true });
    }
    // Started strict on a clean app: a reload that would degrade a file is refused.
    const app = copyApp();
    try {
      const s = await serve(app, ['--workers', '2', '--strict']);
      const workers = s.listening();
      const mark = s.lines.length;
      writeFileSync(join(app, 'index.html'), degraded);
      s.child.kill('SIGHUP');
      await s.waitFor((l) => l.code === 'LW_SERVE_RELOAD_FAILED', 'reload failure', mark);
      assert.ok(s.lines.slice(mark).some((l) => l.code === 'LW_APP_NOT_AVAILABLE' && l.file === 'index.html'), s.text());
      assert.match((await s.get('/')).text, /version one/);
      assert.deepEqual(s.listening(), workers);
      assert.equal(await s.stop(), 0);
    } finally {
      rmSync(app, { recursive: true, force: true });
    }
  });

  it('usage errors exit 2 before anything is loaded', () => {
    for (const args of [['--workers', '0'], ['--workers', 'two'], ['--workers', '2', '--watch'], ['--watchdog-ms', '5'], ['--metrics-host', '127.0.0.1'], ['--metrics-port', '70000']]) {
      const r = spawnSync(process.execPath, [BIN, 'serve', FIXTURE, ...args], { encoding: 'utf8', env: { ...process.env, PORT: '', NO_COLOR: '1' } });
      assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, /^laneway serve: --(workers|watch|watchdog-ms|metrics-host|metrics-port)/m, args.join(' '));
    }
  });
});

describe('the defaults', () => {
  it('one process without PostgreSQL (SQLite, or no models): no supervisor', async () => {
    const s = await serve(FIXTURE, []);
    assert.equal(s.listening().length, 0);
    assert.equal((await s.get('/__/health')).status, 200);
    assert.equal(await s.stop(), 0);
  });

  it('every core with PostgreSQL; --watch keeps one process; a threshold of 10 s', () => {
    const cores = readServeScaling({}, 'postgres://app@db/app', false);
    assert.ok(!('error' in cores) && cores.workers >= 1);
    assert.deepEqual(readServeScaling({}, undefined, false), { workers: 1, watchdogMs: 10_000, metrics: { enabled: false } });
    assert.deepEqual(readServeScaling({}, 'postgres://app@db/app', true), { workers: 1, watchdogMs: 10_000, metrics: { enabled: false } });
    assert.deepEqual(readServeScaling({ workers: '3', metrics: true }, undefined, false), { workers: 3, watchdogMs: 10_000, metrics: { enabled: true } });
    assert.deepEqual(readServeScaling({ 'metrics-port': '9100' }, undefined, false), { workers: 1, watchdogMs: 10_000, metrics: { enabled: true, host: '127.0.0.1', port: 9100 } });
  });

  it('a crashing worker is replaced at once, then after a wait that doubles up to 30 s', () => {
    assert.deepEqual([1, 2, 3, 4, 5, 8, 20].map(restartDelay), [0, 500, 1000, 2000, 4000, 30_000, 30_000]);
  });
});
