/**
 * Health, readiness and metrics (docs/deploy.md, under this heading): `/__/health` and `/__/ready`
 * on every server, `/__/metrics` only when enabled, in the Prometheus text format, by route
 * pattern; on a bind of its own (`--metrics-port`), never on the public port. Readiness follows
 * the database: a stopped PostgreSQL answers 503, and 200 again once it is back.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { rawRequest, serve, writeApp, type Served } from '../helpers.js';
import { startPostgres, type PgServer } from '../support/postgres.js';
import { HttpMetrics, mergeSnapshots, renderMetrics, LATENCY_BUCKETS } from '../../src/http/metrics.js';

const BIN = fileURLToPath(new URL('../../bin/laneway', import.meta.url));
const WAIT_MS = 60_000;

const APP = {
  '/index.html': '<p>home</p>',
  '/items/{item}/🔗.yaml': 'values: [a, b]',
  '/items/{item}/GET.js': "import {item} from '🔗';\n({ item: item.$value });\n",
  '/fail/GET.js': '(() => 1);\n',
  '/__/health.html': '<p>an app cannot answer the platform paths</p>',
};

/** A Prometheus text exposition (0.0.4), checked line by line; throws on the first malformed line. */
function parseExposition(text: string): Map<string, { type: string; help: string; samples: Array<{ name: string; labels: Record<string, string>; value: number }> }> {
  assert.ok(text.endsWith('\n'), 'ends with a line feed');
  const families = new Map<string, { type: string; help: string; samples: Array<{ name: string; labels: Record<string, string>; value: number }> }>();
  let current: string | undefined;
  for (const line of text.slice(0, -1).split('\n')) {
    let m;
    if ((m = /^# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) (.+)$/.exec(line))) {
      assert.ok(!families.has(m[1]!), `family ${m[1]} described twice`);
      families.set(m[1]!, { type: '', help: m[2]!, samples: [] });
      current = m[1];
    } else if ((m = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$/.exec(line))) {
      assert.equal(m[1], current, `TYPE of ${m[1]} right after its HELP`);
      families.get(m[1]!)!.type = m[2]!;
    } else if ((m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{((?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*",?)*)\})? (-?[0-9.e+-]+|\+Inf|-Inf|NaN)$/.exec(line))) {
      const name = m[1]!;
      assert.ok(current && (name === current || (families.get(current)!.type === 'histogram' && [`${current}_bucket`, `${current}_sum`, `${current}_count`].includes(name))), `sample ${name} outside its family (${current})`);
      const labels = Object.fromEntries([...(m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1]!, x[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c))]));
      const value = Number(m[3]!.replace('+Inf', 'Infinity'));
      assert.ok(!Number.isNaN(value) || m[3] === 'NaN', line);
      families.get(current)!.samples.push({ name, labels, value });
    } else {
      assert.fail(`not a line of the text format: ${JSON.stringify(line)}`);
    }
  }
  // Histograms: cumulative buckets, ending with +Inf equal to _count.
  for (const [name, f] of families) {
    if (f.type !== 'histogram') continue;
    const series = new Map<string, number[]>();
    for (const s of f.samples.filter((x) => x.name === `${name}_bucket`)) {
      const { le, ...rest } = s.labels;
      const key = JSON.stringify(rest);
      series.set(key, [...(series.get(key) ?? []), s.value]);
      assert.ok(le !== undefined);
    }
    for (const [key, counts] of series) {
      assert.deepEqual(counts, [...counts].sort((a, b) => a - b), `buckets of ${key} are cumulative`);
      const count = f.samples.find((x) => x.name === `${name}_count` && JSON.stringify(x.labels) === key);
      assert.equal(counts.at(-1), count?.value, `+Inf bucket of ${key} equals its count`);
    }
  }
  return families;
}

/** `laneway serve` in a child process: its port, its lines, and a stop that answers the exit code. */
async function serveCli(dir: string, args: string[]): Promise<{ port: number; lines: string[]; stop(): Promise<number | null> }> {
  const child = spawn(process.execPath, [BIN, 'serve', dir, '--port', '0', '--log', 'json', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PORT: '', DATABASE_URL: '', NO_COLOR: '1' } });
  const lines: string[] = [];
  let buffered = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const listening = new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not listening within ${WAIT_MS / 1000} s:\n${lines.join('\n')}`)), WAIT_MS);
    for (const stream of [child.stdout, child.stderr]) {
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => {
        buffered += chunk;
        const parts = buffered.split('\n');
        buffered = parts.pop()!;
        for (const line of parts) {
          lines.push(line);
          const m = /"type":"listening".*"port":(\d+)/.exec(line);
          if (m) {
            clearTimeout(timer);
            resolve(Number(m[1]));
          }
        }
      });
    }
    void exited.then((code) => reject(new Error(`exited ${code}:\n${lines.join('\n')}`)));
  });
  const port = await listening;
  // The metrics line comes before the listening line.
  return {
    port,
    lines,
    stop: () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

describe('health and readiness', () => {
  let s: Served;
  before(async () => {
    s = await serve(APP);
  });
  after(() => s?.close());

  it('GET /__/health answers 200 {"status":"ok"}, never cached; HEAD too; other methods 405', async () => {
    const r = await s.get('/__/health');
    assert.equal(r.status, 200);
    assert.deepEqual(JSON.parse(r.text), { status: 'ok' });
    assert.equal(r.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(r.headers['cache-control'], 'no-store');
    const head = await s.request('HEAD', '/__/health');
    assert.equal(head.status, 200);
    assert.equal(head.text, '');
    const post = await s.request('POST', '/__/health', { Origin: `http://127.0.0.1:${s.port}`, Host: `127.0.0.1:${s.port}` });
    assert.equal(post.status, 405);
    assert.equal(post.headers.allow, 'GET, HEAD');
  });

  it('the platform paths never reach the app (a directory named __ is private)', async () => {
    const r = await s.get('/__/health');
    assert.doesNotMatch(r.text, /an app cannot/);
    assert.equal((await s.get('/__/health.html')).status, 404);
  });

  it('GET /__/ready answers 200 for an app without models', async () => {
    const r = await s.get('/__/ready?probe=1');
    assert.equal(r.status, 200);
    assert.deepEqual(JSON.parse(r.text), { status: 'ready' });
  });

  it('metrics are off by default: /__/metrics is an ordinary 404', async () => {
    const r = await s.get('/__/metrics');
    assert.equal(r.status, 404);
  });
});

describe('readiness follows the database', () => {
  let pg: PgServer;
  let s: Served;
  before(async () => {
    pg = await startPostgres();
    s = await serve({ '/📦/🌐Note.yaml': 'title: string\n', '/count/GET.js': "import {Note} from '📦';\n({ count: Note.all().count() });\n" }, { data: { databaseUrl: await pg.createDatabase() } });
  });
  after(async () => {
    await s?.close();
    await pg?.destroy();
  });

  it('200 while PostgreSQL answers, 503 while it is stopped, 200 again when it is back', async () => {
    assert.equal((await s.get('/__/ready')).status, 200);
    assert.equal((await s.get('/__/health')).status, 200);
    await pg.stop();
    const down = await s.get('/__/ready');
    assert.equal(down.status, 503);
    assert.deepEqual(JSON.parse(down.text), { status: 'unavailable', reason: 'database' });
    assert.equal((await s.get('/__/health')).status, 200, 'still alive');
    await pg.start();
    const deadline = Date.now() + WAIT_MS;
    let status = 0;
    while (Date.now() < deadline && (status = (await s.get('/__/ready')).status) !== 200) await new Promise((r) => setTimeout(r, 200));
    assert.equal(status, 200);
    assert.equal((await s.get('/count')).status, 200);
  });
});

describe('metrics', () => {
  it('the exposition parses: counts, errors and a latency histogram per route pattern, never per raw path', () => {
    const m = new HttpMetrics();
    m.record('/items/{item}', 'GET', 200, 0.003);
    m.record('/items/{item}', 'GET', 200, 0.2);
    m.record('/items/{item}', 'GET', 503, 12);
    m.record('(none)', 'GET', 404, 0.001);
    m.record('/say/"q"\\n', 'POST', 200, 0.001, true);
    const families = parseExposition(renderMetrics(mergeSnapshots([m.snapshot(), m.snapshot()])));
    assert.equal(families.get('laneway_http_requests_total')?.type, 'counter');
    assert.equal(families.get('laneway_http_request_duration_seconds')?.type, 'histogram');
    const requests = families.get('laneway_http_requests_total')!.samples;
    assert.equal(requests.find((x) => x.labels.route === '/items/{item}' && x.labels.status === '200')?.value, 4);
    assert.equal(requests.find((x) => x.labels.route === '/say/"q"\\n')?.value, 2, 'label values escaped and read back');
    const errors = families.get('laneway_http_request_errors_total')!.samples;
    assert.equal(errors.find((x) => x.labels.route === '/items/{item}')?.value, 2, '5xx answers');
    assert.equal(errors.find((x) => x.labels.route === '/say/"q"\\n')?.value, 2, 'cut-off answers');
    const buckets = families.get('laneway_http_request_duration_seconds')!.samples.filter((x) => x.name.endsWith('_bucket') && x.labels.route === '/items/{item}');
    assert.deepEqual(
      buckets.map((b) => b.labels.le),
      [...LATENCY_BUCKETS.map(String), '+Inf'],
    );
    assert.deepEqual(
      buckets.map((b) => b.value),
      [2, 2, 2, 2, 2, 4, 4, 4, 4, 4, 4, 6],
    );
  });

  it('--metrics serves /__/metrics on the app port, by route pattern; 404s under (none)', async () => {
    const dir = writeApp(APP);
    const s = await serveCli(dir, ['--metrics']);
    try {
      for (const path of ['/items/a', '/items/b', '/items/a', '/nothing/here', '/another/missing/path', '/fail']) await rawRequest(s.port, 'GET', path);
      const r = await rawRequest(s.port, 'GET', '/__/metrics');
      assert.equal(r.status, 200);
      assert.equal(r.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
      const families = parseExposition(r.text);
      const requests = families.get('laneway_http_requests_total')!.samples;
      assert.deepEqual(
        requests.map((x) => `${x.labels.method} ${x.labels.route} ${x.labels.status} ${x.value}`),
        ['GET (none) 404 2', 'GET /fail 500 1', 'GET /items/{item} 200 3'],
      );
      assert.equal(families.get('laneway_http_request_errors_total')!.samples.find((x) => x.labels.route === '/fail')?.value, 1);
      assert.doesNotMatch(r.text, /nothing\/here|missing/, 'raw paths are never labels');
      assert.doesNotMatch(r.text, /__\/health|__\/metrics/, 'the platform answers are not counted');
      assert.equal(await s.stop(), 0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('--metrics-port: on that bind only; the public port answers 404 at /__/metrics', async () => {
    const dir = writeApp(APP);
    const s = await serveCli(dir, ['--metrics-host', '127.0.0.1', '--metrics-port', '0']);
    try {
      const line = s.lines.find((l) => l.includes('metrics on http://'));
      assert.ok(line, s.lines.join('\n'));
      const url = new URL(/metrics on (http:\/\/\S+?)"/.exec(line)![1]!);
      assert.notEqual(Number(url.port), s.port);
      assert.equal((await rawRequest(s.port, 'GET', '/items/a')).status, 200);
      assert.equal((await rawRequest(s.port, 'GET', '/__/metrics')).status, 404);
      const r = await rawRequest(Number(url.port), 'GET', url.pathname);
      assert.equal(r.status, 200);
      const requests = parseExposition(r.text).get('laneway_http_requests_total')!.samples;
      assert.equal(requests.find((x) => x.labels.route === '/items/{item}')?.value, 1);
      assert.equal((await rawRequest(Number(url.port), 'GET', '/items/a')).status, 404, 'the metrics bind serves nothing else');
      assert.equal(await s.stop(), 0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
