// bench-timeout-s: 600
// Scenario "view": HTTP throughput of a rendered Mustache page (bench/README.md): a layout + 3
// partials (nav, item, footer) + a loop over rows, served by Laneway, by a bare node:http server
// rendering the same templates with Hogan.js (compiled once at startup), and by fastify, hono and
// express rendering them with mustache.js (bench/servers/peer-mustache.mjs; the peers are
// installed apart: npm --prefix bench/peers ci, and left out with a note when they are not).
// The pages of bench/fixtures/view-app:
//   /products-20, /products, /products-2000 — 20, 200 and 2000 rows from a supplier
//     (📤/Items20.js, Items.js, Items2000.js) run per request, as an app reading a database would;
//   /catalog — 200 rows from a data file (`{{% yaml /_data/items as items }}`), parsed once at load.
// Before timing, every server must answer 200 with the same header names and values (ETag and
// Content-Length aside: each is derived from its own body, the same way) and bodies that are the
// same text ignoring whitespace. Targets, per-request pages: Laneway ≥ 1.5× the Hogan.js server
// and ≥ 3× the best peer; /catalog ≥ 0.8× the Hogan.js server. Each side's figure is its median
// req/s, next to its server's CPU µs per request.
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { BENCH_DIR, checkTarget, compare, compareMany, describeWorkload, report, stableHeaders, startServer } from './lib.mjs';

const APP = join(BENCH_DIR, 'fixtures', 'view-app');
const PER_REQUEST = [
  { path: '/products-20', rows: 20 },
  { path: '/products', rows: 200 },
  { path: '/products-2000', rows: 2000 },
];
const HOGAN_TARGET = 1.5;
const PEER_TARGET = 3;
const CATALOG_TARGET = 0.8;
const PEERS = ['fastify', 'hono', 'express'];
const peersInstalled = existsSync(join(BENCH_DIR, 'peers', 'node_modules', 'mustache'));

const laneway = await startServer(join(BENCH_DIR, 'servers', 'laneway.mjs'), [APP]);
// Every page has the same policy (no dynamic inline blocks); the others send it as a fixed string.
const policy = (await checkTarget('laneway', laneway.port, '/products', { status: 200 })).headers['content-security-policy'] ?? '';
const bare = await startServer(join(BENCH_DIR, 'servers', 'bare-hogan.mjs'), [APP, policy]);
const peers = [];
if (peersInstalled) {
  for (const name of PEERS) {
    peers.push({ label: `${name}+mustache.js`, server: await startServer(join(BENCH_DIR, 'servers', 'peer-mustache.mjs'), [name, APP, policy]) });
  }
}

const squash = (buf) => buf.toString('utf8').replace(/\s+/g, ' ').trim();
const sha1Tag = (body) => '"' + createHash('sha1').update(body).digest('base64url') + '"';
const withoutBodyHeaders = (headers) => {
  const { etag: _e, 'content-length': _l, ...rest } = stableHeaders(headers);
  return JSON.stringify(rest);
};

console.log(`view-http.bench: ${describeWorkload()}`);
if (!peersInstalled) console.log('  fastify, hono and express are not installed (npm --prefix bench/peers ci): measured against Hogan.js only');
const others = [{ label: 'node:http+Hogan', server: bare }, ...peers];
for (const page of [...PER_REQUEST, { path: '/catalog', rows: 200 }]) {
  const includes = `id="item-${page.rows}"`;
  const a = await checkTarget('laneway', laneway.port, page.path, { status: 200, bodyIncludes: includes });
  const sizes = [];
  for (const other of page.path === '/catalog' ? others.slice(0, 1) : others) {
    const b = await checkTarget(other.label, other.server.port, page.path, { status: 200, bodyIncludes: includes });
    const problems = [];
    if (withoutBodyHeaders(a.headers) !== withoutBodyHeaders(b.headers)) {
      problems.push(`headers differ:\n  laneway ${withoutBodyHeaders(a.headers)}\n  other   ${withoutBodyHeaders(b.headers)}`);
    }
    for (const [label, res] of [['laneway', a], [other.label, b]]) {
      if (res.headers.etag !== sha1Tag(res.body)) problems.push(`${label}: ETag ${res.headers.etag} is not the sha1 of its body`);
      if (Number(res.headers['content-length']) !== res.body.length) problems.push(`${label}: Content-Length is not the body's length`);
    }
    const sa = squash(a.body);
    const sb = squash(b.body);
    if (sa !== sb) {
      let i = 0;
      while (i < sa.length && sa[i] === sb[i]) i++;
      problems.push(`bodies differ (ignoring whitespace) at ${i}:\n  laneway …${sa.slice(Math.max(0, i - 60), i + 60)}\n  other   …${sb.slice(Math.max(0, i - 60), i + 60)}`);
    }
    if (problems.length) throw new Error(`GET ${page.path}: laneway and ${other.label} do not answer the same before timing:\n  ${problems.join('\n  ')}`);
    sizes.push(`${other.label} ${b.body.length} B`);
  }
  console.log(`  ${page.path}: ${page.rows} rows; laneway ${a.body.length} B, ${sizes.join(', ')} (same text ignoring whitespace)`);
}
console.log('');

const results = [];
const summary = [];
for (const page of PER_REQUEST) {
  const name = `view ${page.path} (layout + 3 partials + ${page.rows} rows from a supplier, per request)`;
  const pair = await compareMany(
    name,
    { label: 'laneway', port: laneway.port, path: page.path },
    others.map((o) => ({ label: o.label, port: o.server.port, path: page.path })),
    200,
  );
  const [hogan, ...vsPeers] = pair;
  report(hogan, HOGAN_TARGET);
  results.push({ ...hogan, target: HOGAN_TARGET });
  for (const r of vsPeers) report(r);
  if (vsPeers.length) {
    // The best peer: the one with the most req/s in this run (its ratio is the smallest).
    const best = vsPeers.reduce((x, y) => (y.ratio < x.ratio ? y : x));
    const bestCpu = vsPeers.some((r) => r.cpuRatio === null) ? null : Math.min(...vsPeers.map((r) => r.cpuRatio));
    const ok = best.ratio >= PEER_TARGET ? `≥ ${PEER_TARGET} ✓` : `< ${PEER_TARGET} ✗ (below target)`;
    console.log(`  best peer ${best.baseline.label}: ratio ${best.ratio.toFixed(3)}× ${ok}${bestCpu === null ? '' : `; CPU/req ${bestCpu.toFixed(3)}×`}\n`);
    results.push({ ...best, target: PEER_TARGET });
    summary.push(`  ${String(page.rows).padStart(4)} rows: ${hogan.ratio.toFixed(2)}× Hogan (CPU ${hogan.cpuRatio?.toFixed(2) ?? '?'}×), ${best.ratio.toFixed(2)}× best peer ${best.baseline.label} (CPU ${bestCpu?.toFixed(2) ?? '?'}×)`);
  } else {
    summary.push(`  ${String(page.rows).padStart(4)} rows: ${hogan.ratio.toFixed(2)}× Hogan (CPU ${hogan.cpuRatio?.toFixed(2) ?? '?'}×)`);
  }
}

const catalog = await compare(
  'view /catalog (layout + 3 partials + 200 rows from a data file, parsed at load)',
  { label: 'node:http+Hogan', port: bare.port, path: '/catalog' },
  { label: 'laneway', port: laneway.port, path: '/catalog' },
  200,
);
report(catalog, CATALOG_TARGET);
results.push({ ...catalog, target: CATALOG_TARGET });

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

console.log(`per-request pages, Laneway's req/s ratio (server CPU/req ratio) in this run:\n${summary.join('\n')}\n`);
await Promise.all([laneway.stop(), bare.stop(), ...peers.map((p) => p.server.stop())]);
if (process.env.BENCH_STRICT && results.some((r) => r.ratio < r.target)) process.exitCode = 1;
