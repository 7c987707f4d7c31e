// Scenario "static": a ~4 KB stylesheet and a 404, through Laneway and through a bare node:http
// server sending the same status, headers and bytes (captured from Laneway, checked before
// timing). Target: Laneway ≥ 0.9× bare node:http for the static file.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BENCH_DIR, cannedResponse, checkTarget, compare, describeWorkload, fetchOnce, report, startServer } from './lib.mjs';

const APP = join(BENCH_DIR, 'fixtures', 'static-app');
const STATIC_PATH = '/css/site.css';
const MISSING_PATH = '/css/missing.css';
const STATIC_TARGET = 0.9;

const tmp = mkdtempSync(join(tmpdir(), 'laneway-bench-'));
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));

const laneway = await startServer(join(BENCH_DIR, 'servers', 'laneway.mjs'), [APP]);
const css = readFileSync(join(APP, 'css', 'site.css'));
const staticRes = await checkTarget('laneway', laneway.port, STATIC_PATH, { status: 200 });
if (!staticRes.body.equals(css)) throw new Error(`laneway: GET ${STATIC_PATH} did not send the file's bytes`);
if (staticRes.headers['content-type'] !== 'text/css; charset=utf-8' || !staticRes.headers.etag || !staticRes.headers['last-modified']) {
  throw new Error(`laneway: GET ${STATIC_PATH} lacks the expected headers: ${JSON.stringify(staticRes.headers)}`);
}
const missingRes = await checkTarget('laneway', laneway.port, MISSING_PATH, { status: 404, bodyIncludes: '404' });

const table = join(tmp, 'responses.json');
writeFileSync(table, JSON.stringify({ routes: { [STATIC_PATH]: cannedResponse(staticRes) }, fallback: cannedResponse(missingRes) }));
const bare = await startServer(join(BENCH_DIR, 'servers', 'bare-static.mjs'), [table]);
await checkTarget('bare node:http', bare.port, STATIC_PATH, { same: staticRes });
await checkTarget('bare node:http', bare.port, MISSING_PATH, { same: missingRes });
// And Laneway still answers the same after the baseline was built from it.
await checkTarget('laneway', laneway.port, STATIC_PATH, { same: await fetchOnce(bare.port, STATIC_PATH) });

console.log(`static.bench: ${describeWorkload()}`);
console.log(`  static file: GET ${STATIC_PATH} (${css.length} bytes, ${staticRes.headers['content-type']}); 404: GET ${MISSING_PATH} (${missingRes.body.length} bytes)\n`);

const results = [
  await compare(`static file ${STATIC_PATH} (200)`, { label: 'bare node:http', port: bare.port, path: STATIC_PATH }, { label: 'laneway', port: laneway.port, path: STATIC_PATH }, 200),
  await compare(`not found ${MISSING_PATH} (404)`, { label: 'bare node:http', port: bare.port, path: MISSING_PATH }, { label: 'laneway', port: laneway.port, path: MISSING_PATH }, 404),
];
report(results[0], STATIC_TARGET);
report(results[1]);

await Promise.all([laneway.stop(), bare.stop()]);
if (process.env.BENCH_STRICT && results[0].ratio < STATIC_TARGET) process.exitCode = 1;
