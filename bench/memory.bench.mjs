// Memory of a Laneway server (bench/README.md "memory"): the resident set size (VmRSS of
// /proc/<pid>/status) of the server child, for each scenario of the request path —
//   static  GET /css/site.css   (bench/fixtures/static-app)
//   json    GET /api/items      (bench/fixtures/script-app: a script and a supplier)
//   page    GET /products       (bench/fixtures/view-app: a layout, partials, 200 rows per request)
// measured at four moments: after start, with 1,000 idle keep-alive connections open, after
// 100,000 requests (autocannon, 50 connections), and once the server had 5 s to settle. Reported,
// no target: RSS depends on the machine's allocator and on V8's heap sizing. What matters is that
// the figure after 100,000 requests is not far above the one after the first few: nothing per
// request stays.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { BENCH_DIR } from './lib.mjs';

const SCENARIOS = [
  { name: 'static', app: 'static-app', path: '/css/site.css' },
  { name: 'json', app: 'script-app', path: '/api/items' },
  { name: 'page', app: 'view-app', path: '/products' },
];
const REQUESTS = Number(process.env.BENCH_MEMORY_REQUESTS ?? 100_000);
const CONNECTIONS = Number(process.env.BENCH_MEMORY_CONNECTIONS ?? 1_000);

const rssOf = (pid) => {
  const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
};
const mb = (n) => `${n.toFixed(1)} MB`;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function start(app) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(BENCH_DIR, 'servers', 'laneway.mjs'), join(BENCH_DIR, 'fixtures', app)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.once('exit', (code) => reject(new Error(`the server exited (${code}) before listening`)));
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d) => {
      out += d;
      const m = /^listening (\d+)/m.exec(out);
      if (m) {
        child.removeAllListeners('exit');
        resolve({ pid: child.pid, port: Number(m[1]), stop: () => child.kill('SIGKILL') });
      }
    });
  });
}

/** Opens `n` keep-alive connections, each after one request; resolves with a function that closes them. */
async function idleConnections(port, path, n) {
  const agent = new Agent({ keepAlive: true, maxSockets: n, maxFreeSockets: n });
  const batch = 100;
  for (let i = 0; i < n; i += batch) {
    await Promise.all(
      Array.from({ length: Math.min(batch, n - i) }, () =>
        new Promise((resolve, reject) => {
          const req = request({ host: '127.0.0.1', port, path, agent }, (res) => {
            res.resume();
            res.on('end', resolve);
          });
          req.on('error', reject);
          req.end();
        }),
      ),
    );
    // Every request of a batch went out on a socket of its own: the agent keeps them all.
  }
  return () => agent.destroy();
}

console.log(`memory.bench: RSS of the server child; ${CONNECTIONS} idle keep-alive connections, then ${REQUESTS} requests over 50 connections`);
for (const s of SCENARIOS) {
  const server = await start(s.app);
  await sleep(500);
  const started = rssOf(server.pid);
  const close = await idleConnections(server.port, s.path, CONNECTIONS);
  await sleep(500);
  const idle = rssOf(server.pid);
  close();
  const result = await autocannon({ url: `http://127.0.0.1:${server.port}${s.path}`, connections: 50, amount: REQUESTS });
  if (result.non2xx || result.errors) throw new Error(`${s.name}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  const loaded = rssOf(server.pid);
  await sleep(5_000);
  const settled = rssOf(server.pid);
  console.log(`\n${s.name} ${s.path}`);
  console.log(`  after start              ${mb(started)}`);
  console.log(`  ${CONNECTIONS} keep-alive idle    ${mb(idle)}  (+${mb(idle - started)}, ${(((idle - started) * 1024) / CONNECTIONS).toFixed(1)} KB per connection)`);
  console.log(`  after ${REQUESTS} requests   ${mb(loaded)}`);
  console.log(`  5 s later                ${mb(settled)}`);
  server.stop();
}
