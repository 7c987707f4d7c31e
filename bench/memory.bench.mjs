// Memory of a Laneway server (bench/README.md "memory"): the resident set size (VmRSS of
// /proc/<pid>/status) of the server child, for each scenario of the request path —
//   static  GET /css/site.css   (bench/fixtures/static-app)
//   json    GET /api/items      (bench/fixtures/script-app: a script and a supplier)
//   page    GET /products       (bench/fixtures/view-app: a layout, partials, 200 rows per request)
// measured at four moments: after start, with 1,000 idle keep-alive connections open, after
// 100,000 requests (autocannon, 50 connections), and once the server had 5 s to settle. Reported,
// no target: RSS depends on the machine's allocator and on V8's heap sizing. What matters is that
// the figure after 100,000 requests is not far above the one after the first few: nothing per
// request stays. The child also runs with --trace-gc-nvp: for the 100,000 requests the bench adds
// up what the young collections (scavenges) promoted to the old generation — near zero when nothing
// made for one request outlives it (issue: "nothing per request survives a young collection").
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
    const child = spawn(process.execPath, ['--trace-gc-nvp', join(BENCH_DIR, 'servers', 'laneway.mjs'), join(BENCH_DIR, 'fixtures', app)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    const gc = { scavenges: 0, promoted: 0 };
    child.once('exit', (code) => reject(new Error(`the server exited (${code}) before listening`)));
    child.stdout.setEncoding('utf8');
    let listening = false;
    let rest = '';
    child.stdout.on('data', (d) => {
      const lines = (rest + d).split('\n');
      rest = lines.pop();
      for (const line of lines) {
        if (line.includes(' gc=s ')) {
          gc.scavenges++;
          gc.promoted += Number(/ promoted=(\d+)/.exec(line)?.[1] ?? 0);
        }
      }
      if (listening) return;
      out += d;
      const m = /^listening (\d+)/m.exec(out);
      if (m) {
        listening = true;
        child.removeAllListeners('exit');
        resolve({ pid: child.pid, port: Number(m[1]), gc, stop: () => child.kill('SIGKILL') });
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
  // Warm up (the first requests compile and fill caches), then count the young collections of the run.
  await autocannon({ url: `http://127.0.0.1:${server.port}${s.path}`, connections: 50, amount: Math.min(10_000, REQUESTS) });
  const before = { ...server.gc };
  const result = await autocannon({ url: `http://127.0.0.1:${server.port}${s.path}`, connections: 50, amount: REQUESTS });
  if (result.non2xx || result.errors) throw new Error(`${s.name}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  const loaded = rssOf(server.pid);
  const scavenges = server.gc.scavenges - before.scavenges;
  const promoted = server.gc.promoted - before.promoted;
  await sleep(5_000);
  const settled = rssOf(server.pid);
  console.log(`\n${s.name} ${s.path}`);
  console.log(`  after start              ${mb(started)}`);
  console.log(`  ${CONNECTIONS} keep-alive idle    ${mb(idle)}  (+${mb(idle - started)}, ${(((idle - started) * 1024) / CONNECTIONS).toFixed(1)} KB per connection)`);
  console.log(`  after ${REQUESTS} requests   ${mb(loaded)}`);
  console.log(`  5 s later                ${mb(settled)}`);
  console.log(`  young collections        ${scavenges} during the ${REQUESTS} requests, ${promoted} bytes promoted (${((promoted * 1000) / REQUESTS).toFixed(1)} B per 1,000 requests)`);
  server.stop();
}
