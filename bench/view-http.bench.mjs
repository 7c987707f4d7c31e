// Scenario "view": HTTP throughput of a rendered Mustache page (bench/README.md): a layout + 3
// partials (nav, item, footer) + a 200-item loop, served by Laneway and by a bare node:http server
// rendering the same templates with Hogan.js (compiled once at startup), same data, same headers.
// Two pages of bench/fixtures/view-app differ only in where the 200 items come from:
//   /products — a supplier (📤/Items.js) run per request, as an app reading a database would;
//   /catalog  — a data file (`{{% yaml /_data/items as items }}`), parsed once at load.
// Before timing, both servers must answer 200 with the same header names and values (ETag and
// Content-Length aside: each is derived from its own body, the same way) and bodies that are the
// same text ignoring whitespace. Target: Laneway ≥ 0.8× the Hogan.js server, on each page.
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { BENCH_DIR, checkTarget, compare, describeWorkload, report, stableHeaders, startServer } from './lib.mjs';

const APP = join(BENCH_DIR, 'fixtures', 'view-app');
const PAGES = [
  { path: '/products', what: 'items from a supplier (📤/Items.js, run per request)' },
  { path: '/catalog', what: 'items from a data file (yaml pragma, parsed at load)' },
];
const TARGET = 0.8;

const laneway = await startServer(join(BENCH_DIR, 'servers', 'laneway.mjs'), [APP]);
// Both pages have the same policy (no dynamic inline blocks); the baseline sends it as a fixed string.
const policy = (await checkTarget('laneway', laneway.port, PAGES[0].path, { status: 200 })).headers['content-security-policy'];
const bare = await startServer(join(BENCH_DIR, 'servers', 'bare-hogan.mjs'), [APP, policy ?? '']);

const squash = (buf) => buf.toString('utf8').replace(/\s+/g, ' ').trim();
const sha1Tag = (body) => '"' + createHash('sha1').update(body).digest('base64url') + '"';
const withoutBodyHeaders = (headers) => {
  const { etag: _e, 'content-length': _l, ...rest } = stableHeaders(headers);
  return JSON.stringify(rest);
};

console.log(`view-http.bench: ${describeWorkload()}`);
for (const page of PAGES) {
  const a = await checkTarget('laneway', laneway.port, page.path, { status: 200, bodyIncludes: 'id="item-200"' });
  const b = await checkTarget('bare node:http + Hogan.js', bare.port, page.path, { status: 200, bodyIncludes: 'id="item-200"' });
  const problems = [];
  if (withoutBodyHeaders(a.headers) !== withoutBodyHeaders(b.headers)) {
    problems.push(`headers differ:\n  laneway ${withoutBodyHeaders(a.headers)}\n  hogan   ${withoutBodyHeaders(b.headers)}`);
  }
  for (const [label, res] of [['laneway', a], ['hogan', b]]) {
    if (res.headers.etag !== sha1Tag(res.body)) problems.push(`${label}: ETag ${res.headers.etag} is not the sha1 of its body`);
    if (Number(res.headers['content-length']) !== res.body.length) problems.push(`${label}: Content-Length is not the body's length`);
  }
  const sa = squash(a.body);
  const sb = squash(b.body);
  if (sa !== sb) {
    let i = 0;
    while (i < sa.length && sa[i] === sb[i]) i++;
    problems.push(`bodies differ (ignoring whitespace) at ${i}:\n  laneway …${sa.slice(Math.max(0, i - 60), i + 60)}\n  hogan   …${sb.slice(Math.max(0, i - 60), i + 60)}`);
  }
  if (problems.length) throw new Error(`GET ${page.path}: the two servers do not answer the same before timing:\n  ${problems.join('\n  ')}`);
  const bytes = a.body.equals(b.body) ? 'identical bytes' : 'same text ignoring whitespace';
  console.log(`  ${page.path}: ${page.what}; laneway ${a.body.length} B, hogan ${b.body.length} B (${bytes})`);
}
console.log('');

const results = [];
for (const page of PAGES) {
  results.push(
    await compare(
      `view ${page.path} (layout + 3 partials + 200 items; ${page.what})`,
      { label: 'node:http+Hogan', port: bare.port, path: page.path },
      { label: 'laneway', port: laneway.port, path: page.path },
      200,
    ),
  );
}
for (const result of results) report(result, TARGET);

// Compression: a browser's Accept-Encoding against an identity client, same server, same
// page (/products: rendered per request). The compressed bytes of a page whose content has not
// changed are reused, and a miss is compressed on the thread pool. Target ≥ 0.6×.
const BROWSER = { 'accept-encoding': 'gzip, deflate, br, zstd' };
const COMPRESSION_TARGET = 0.6;
const compressed = await checkTarget('laneway (browser-like)', laneway.port, '/products', { status: 200, headers: BROWSER });
if (compressed.headers['content-encoding'] !== 'br') throw new Error(`GET /products with ${BROWSER['accept-encoding']}: expected br, got ${compressed.headers['content-encoding']}`);
const compression = await compare(
  'view /products, a browser (Accept-Encoding: gzip, deflate, br, zstd → br) vs an identity client, both Laneway',
  { label: 'identity', port: laneway.port, path: '/products' },
  { label: 'browser (br)', port: laneway.port, path: '/products', headers: BROWSER },
  200,
);
report(compression, COMPRESSION_TARGET);
results.push({ ...compression, target: COMPRESSION_TARGET });

await Promise.all([laneway.stop(), bare.stop()]);
if (process.env.BENCH_STRICT && results.some((r) => r.ratio < (r.target ?? TARGET))) process.exitCode = 1;
