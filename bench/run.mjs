// Runs every bench/*.bench.mjs in sequence, each in its own process, output forwarded.
// Usage: node bench/run.mjs [FILTER]   (FILTER: a substring of the file name, e.g. "static")
// `npm run bench` builds first (the benches load ../dist).
import { readdirSync, readFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { cpus, platform, release } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const dir = fileURLToPath(new URL('.', import.meta.url));
const filter = process.argv[2] ?? '';
const files = readdirSync(dir).filter((f) => f.endsWith('.bench.mjs') && f.includes(filter)).sort();
/** Longest a bench file may run before it is killed. */
const LIMIT_MS = Number(process.env.BENCH_FILE_TIMEOUT_MS ?? 180_000);

const cpu = cpus();
console.log(`Node ${process.version} · ${new Date().toISOString()} · ${platform()} ${release()} · ${cpu.length}× ${cpu[0]?.model ?? 'cpu'}`);
console.log(`command: node bench/run.mjs${filter ? ' ' + filter : ''}\n`);
if (!files.length) {
  console.error(`no bench/*.bench.mjs matches ${JSON.stringify(filter)}`);
  process.exit(1);
}

let failed = 0;
for (const file of files) {
  console.log(`== ${file}`);
  // A file may allow itself longer with a line `// bench-timeout-s: N` (a multiple of the default).
  const own = /^\/\/ bench-timeout-s: (\d+)$/m.exec(readFileSync(join(dir, file), 'utf8'));
  const limitMs = own && !process.env.BENCH_FILE_TIMEOUT_MS ? Number(own[1]) * 1000 : LIMIT_MS;
  const code = await new Promise((resolve) => {
    const child = spawn(process.execPath, [join(dir, file)], { stdio: 'inherit' });
    const timer = setTimeout(() => {
      console.error(`${file}: still running after ${limitMs / 1000} s; killed`);
      child.kill('SIGKILL');
    }, limitMs);
    const stop = () => child.kill('SIGTERM');
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    child.on('exit', (c, signal) => {
      clearTimeout(timer);
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve(c ?? (signal ? 1 : 0));
    });
  });
  if (code !== 0) {
    failed++;
    console.error(`${file}: exit code ${code}`);
  }
}
process.exit(failed ? 1 : 0);
