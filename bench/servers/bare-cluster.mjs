// Child-process server: a bare baseline run as N node:cluster workers, for cluster.bench.mjs.
//
//   node bench/servers/bare-cluster.mjs N SERVER [ARGS...]
//
// SERVER is one of the single-process bare servers of this directory (bare-json.mjs,
// bare-hogan.mjs, …), run unchanged in each worker with ARGS: each calls
// `listen(0, '127.0.0.1')`, and node:cluster gives the first such listen of every worker the
// same handle, so the N workers share one port, as `laneway serve --workers N` does. The scheduling
// is node:cluster's default, the same as Laneway's supervisor: on Linux the primary accepts each
// connection and hands it to the workers in turn; requests then go straight to the worker that
// holds the connection. This primary serves nothing itself.
//
// Prints `workers <pid> <pid> …` then `listening <port>` once every worker listens (the workers'
// own lines are dropped). SIGTERM stops the workers (each closes its server), then the primary.
// When the primary dies without that, the workers exit too (node:cluster ends a worker whose IPC
// channel closes).
import cluster from 'node:cluster';
import { isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const [count, script, ...args] = process.argv.slice(2);
const workers = Number(count);
if (!Number.isInteger(workers) || workers < 1 || !script) {
  console.error('usage: node bench/servers/bare-cluster.mjs WORKERS SERVER_SCRIPT [ARGS...]');
  process.exit(2);
}
const exec = isAbsolute(script) ? script : join(fileURLToPath(new URL('.', import.meta.url)), script);

cluster.setupPrimary({ exec, args, silent: true });
const ports = new Map();
const forked = [];
let stopping = false;
for (let i = 0; i < workers; i++) {
  const worker = cluster.fork();
  forked.push(worker);
  worker.process.stdout.resume(); // its `listening <port>` line: the primary prints one for all
  worker.process.stderr.pipe(process.stderr);
  worker.on('listening', (address) => {
    ports.set(worker.id, address.port);
    if (ports.size < workers) return;
    const distinct = new Set(ports.values());
    if (distinct.size !== 1) {
      console.error(`bare-cluster: the workers listen on different ports (${[...distinct].join(', ')})`);
      process.exit(1);
    }
    console.log(`workers ${forked.map((w) => w.process.pid).join(' ')}`);
    console.log(`listening ${[...distinct][0]}`);
  });
  worker.on('exit', (code, signal) => {
    if (!stopping) {
      console.error(`bare-cluster: worker ${worker.process.pid} exited (${signal ?? `code ${code}`})`);
      process.exit(1);
    }
  });
}

process.on('SIGTERM', () => {
  if (stopping) return;
  stopping = true;
  const alive = forked.filter((w) => w.process.exitCode === null && w.process.signalCode === null);
  if (!alive.length) process.exit(0);
  let left = alive.length;
  for (const w of alive) {
    w.process.once('exit', () => --left === 0 && process.exit(0));
    w.process.kill('SIGTERM');
  }
  setTimeout(() => {
    for (const w of alive) w.process.kill('SIGKILL');
    process.exit(0);
  }, 3_000).unref();
});
