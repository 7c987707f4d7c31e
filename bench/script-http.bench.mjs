// Scenario "json endpoint": HTTP throughput of a JSON script endpoint (bench/README.md).
// bench/fixtures/script-app/api/🖥items.js imports a 50-product catalogue from a supplier
// (📤/Products.js, run per request) and two query values (`&`), filters the catalogue, sums the
// prices and maps the matches to small records; the bare node:http baseline (servers/bare-json.mjs)
// computes the same JSON per request in plain JavaScript and sends the same headers.
// Before timing, both must answer the same status, headers (Date/Connection/Keep-Alive aside) and
// bytes, for the timed URL and a few others. Target: Laneway ≥ 0.85× the bare handler.
import { join } from 'node:path';
import { BENCH_DIR, checkTarget, compare, describeWorkload, report, startServer } from './lib.mjs';

const APP = join(BENCH_DIR, 'fixtures', 'script-app');
const PATH = '/api/items?tag=sale&max=150';
const ALSO_CHECKED = ['/api/items', '/api/items?tag=new', '/api/items?max=20', '/api/items?tag=none'];
const TARGET = 0.85;

const laneway = await startServer(join(BENCH_DIR, 'servers', 'laneway.mjs'), [APP]);
const bare = await startServer(join(BENCH_DIR, 'servers', 'bare-json.mjs'));

let timed;
for (const path of [PATH, ...ALSO_CHECKED]) {
  const expected = await checkTarget('bare node:http', bare.port, path, { status: 200 });
  const res = await checkTarget('laneway', laneway.port, path, { status: 200, same: expected });
  timed ??= res;
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
report(result, TARGET);

await Promise.all([laneway.stop(), bare.stop()]);
if (process.env.BENCH_STRICT && result.ratio < TARGET) process.exitCode = 1;
