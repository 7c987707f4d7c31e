// Scenario "json endpoint": HTTP throughput of a JSON script endpoint (bench/README.md).
// bench/fixtures/script-app/api/🖥items.js imports a 50-product catalogue from a supplier
// (📤/Products.js, run per request) and two query values (`&`), filters the catalogue, sums the
// prices and maps the matches to small records; the bare node:http baseline (servers/bare-json.mjs)
// computes the same JSON per request in plain JavaScript and sends the same headers.
// Before timing, both must answer the same status, headers (Date/Connection/Keep-Alive aside) and
// bytes, for the timed URL and a few others. Targets (bench/README.md "Targets"): Laneway ≥ 1.0×
// the bare handler in server CPU per request, and ≥ 1.3× fastify (servers/peer-json.mjs, the same
// JSON and headers through fastify's API; it must answer the same bytes and status, its headers
// may come in another order). The fastify line is left out, with a note, when bench/peers is not
// installed (npm --prefix bench/peers ci).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { BENCH_DIR, checkTarget, compare, describeWorkload, report, startServer } from './lib.mjs';

const APP = join(BENCH_DIR, 'fixtures', 'script-app');
const PATH = '/api/items?tag=sale&max=150';
const ALSO_CHECKED = ['/api/items', '/api/items?tag=new', '/api/items?max=20', '/api/items?tag=none'];
const TARGET = 1.0;
const TARGET_PEER = 1.3;

const laneway = await startServer(join(BENCH_DIR, 'servers', 'laneway.mjs'), [APP]);
const bare = await startServer(join(BENCH_DIR, 'servers', 'bare-json.mjs'));
const hasPeers = existsSync(join(BENCH_DIR, 'peers', 'node_modules', 'fastify'));
const fastify = hasPeers ? await startServer(join(BENCH_DIR, 'servers', 'peer-json.mjs')) : undefined;

let timed;
for (const path of [PATH, ...ALSO_CHECKED]) {
  const expected = await checkTarget('bare node:http', bare.port, path, { status: 200 });
  const res = await checkTarget('laneway', laneway.port, path, { status: 200, same: expected });
  timed ??= res;
  if (fastify) {
    const f = await checkTarget('fastify', fastify.port, path, { status: 200 });
    if (!f.body.equals(expected.body)) throw new Error(`fastify: GET ${path} answers other bytes than the bare handler`);
  }
}
const json = JSON.parse(timed.body.toString('utf8'));
if (json.count !== 11 || json.items.length !== 11) throw new Error(`GET ${PATH}: expected 11 matches, got ${timed.body}`);

console.log(`script-http.bench: ${describeWorkload()}`);
console.log(`  GET ${PATH}: ${timed.body.length} B of JSON (${json.count} of 50 products); ${ALSO_CHECKED.length + 1} URLs checked byte-equal\n`);

const result = await compare(
  `json endpoint ${PATH} (supplier + query, filter/reduce/map)`,
  { label: 'bare node:http', port: bare.port, path: PATH },
  { label: 'laneway', port: laneway.port, path: PATH },
  200,
);
report(result);
const cpuMark = result.cpuRatio == null ? 'unknown' : `${result.cpuRatio.toFixed(3)}× ${result.cpuRatio >= TARGET ? `≥ ${TARGET} ✓` : `< ${TARGET} ✗ (below target)`}`;
console.log(`  target: server CPU per request ≥ ${TARGET}× the bare handler's: ${cpuMark}\n`);
let missed = result.cpuRatio == null || result.cpuRatio < TARGET;
if (fastify) {
  const peer = await compare(
    `json endpoint ${PATH}: laneway vs fastify 5`,
    { label: 'fastify', port: fastify.port, path: PATH },
    { label: 'laneway', port: laneway.port, path: PATH },
    200,
  );
  report(peer, TARGET_PEER);
  if (peer.ratio < TARGET_PEER) missed = true;
} else console.log('  fastify: not measured (bench/peers is not installed: npm --prefix bench/peers ci)\n');
await Promise.all([laneway.stop(), bare.stop(), fastify?.stop()]);
if (process.env.BENCH_STRICT && missed) process.exitCode = 1;
