// Scenario "csp": the cost of the page policy. One page with three inline blocks (a <style>, a
// <script>, and a <script> reading a value from its data-* attribute), all hashed at load, served
// by Laneway with policies (the default) and with `csp: false`, in one run. Target: with ≥ 0.9×
// without (the policy costs at most 10%).
//
// Both servers are this file run as a child (`node bench/csp.bench.mjs --serve DIR on|off`).
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// The two sides differ by a few per cent: four alternating runs per side (instead of two) keep
// the medians steady on a shared 2-core machine, still within about 40 s.
process.env.BENCH_ROUNDS ??= '4';
const { checkTarget, compare, describeWorkload, report, startServer } = await import('./lib.mjs');

const TARGET = 0.9;
const PATH = '/';

if (process.argv[2] === '--serve') {
  const { loadApp } = await import('../dist/app/index.js');
  const { createServer } = await import('../dist/http/index.js');
  const server = createServer(loadApp(process.argv[3], { csp: process.argv[4] === 'on' }), { log: 'off' });
  const { port } = await server.listen(0, '127.0.0.1');
  console.log(`listening ${port}`);
  process.on('SIGTERM', () => server.close().then(() => process.exit(0)));
} else {
  await main();
}

async function main() {
  const M = '<!--TEMPLATE mustache-->\n';
  const dir = mkdtempSync(join(tmpdir(), 'laneway-bench-csp-'));
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  const files = {
    '/_data/items.yaml': Array.from({ length: 40 }, (_, i) => `- { name: Item ${i}, price: ${(i * 1.25).toFixed(2)} }`).join('\n') + '\n',
    '/📤/Site.js': "const Title = 'Catalog & more'\nexport {Title}",
    '/index.html': `${M}{{% import {Title} from '📤' }}
{{% yaml /_data/items as items }}
<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>{{Title}}</title>
  <style>
    body { font: 16px/1.5 system-ui, sans-serif; max-width: 40rem; margin: 2rem auto; }
    li { display: flex; justify-content: space-between; }
  </style>
</head>
<body>
  <h1>{{Title}}</h1>
  <ul>
  {{#items as item}}
    <li><span>{{item.name}}</span><span>{{item.price}}</span></li>
  {{/items}}
  </ul>
  <script>
    document.querySelectorAll('li').forEach((li, i) => { li.dataset.index = String(i); });
  </script>
  <script data-title="{{Title}}">document.documentElement.dataset.title = document.currentScript.dataset.title;</script>
</body>
</html>
`,
  };
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
  }

  const self = fileURLToPath(import.meta.url);
  const without = await startServer(self, ['--serve', dir, 'off']);
  const withCsp = await startServer(self, ['--serve', dir, 'on']);
  const a = await checkTarget('without CSP', without.port, PATH, { status: 200, bodyIncludes: 'dataset.title' });
  const b = await checkTarget('with CSP', withCsp.port, PATH, { status: 200, bodyIncludes: 'dataset.title' });
  if (!a.body.equals(b.body)) throw new Error('the two servers do not send the same page');
  if (a.headers['content-security-policy'] !== undefined) throw new Error('csp: false still sent a policy');
  const policy = String(b.headers['content-security-policy'] ?? '');
  const hashes = policy.match(/'sha256-/g)?.length ?? 0;
  if (hashes !== 3 || /unsafe-inline/.test(policy)) throw new Error(`unexpected policy: ${policy}`);

  console.log(`csp.bench: ${describeWorkload()}`);
  console.log(`  page: GET ${PATH} (${b.body.length} bytes, 3 inline blocks); policy ${policy.length} bytes\n`);
  const result = await compare(`view with 3 inline blocks ${PATH} (200)`, { label: 'csp: false', port: without.port, path: PATH }, { label: 'csp (default)', port: withCsp.port, path: PATH }, 200);
  report(result, TARGET);
  await Promise.all([without.stop(), withCsp.stop()]);
  if (process.env.BENCH_STRICT && result.ratio < TARGET) process.exitCode = 1;
}
