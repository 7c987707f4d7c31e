// Per-call overhead of a compiled script vs the same logic as a plain function.
// Standalone: `npx tsc -p tsconfig.build.json && node bench/script-call.bench.mjs`. Bounded (< 15 s).
// Scenario "json endpoint": two imports (a record and a list), a map callback, an object literal
// completion value; the plain baseline does the same work and returns the same JSON-ready value.
import { performance } from 'node:perf_hooks';
import { DiagnosticList } from '../dist/diag/index.js';
import { compileScript } from '../dist/script/index.js';

const SOURCE = `
import {user, items} from 'data'
const names = items.map((i) => i.name.toUpperCase())
const total = items.reduce((sum, i) => sum + i.price, 0)
if (user.admin) {
  ({user: user.name, names, total, admin: true})
} else {
  ({user: user.name, names, total})
}
`;
const data = {
  user: { name: 'Ada', admin: false },
  items: Array.from({ length: 10 }, (_, i) => ({ name: `item ${i}`, price: i * 1.5 })),
};
// No copy of the inputs here: the script's copy into its realm is part of the measured overhead.
const plain = (imports) => {
  const { user, items } = imports;
  const names = items.map((i) => i.name.toUpperCase());
  const total = items.reduce((sum, i) => sum + i.price, 0);
  return user.admin ? { user: user.name, names, total, admin: true } : { user: user.name, names, total };
};

const diagnostics = new DiagnosticList();
const script = compileScript('/bench/GET.js', SOURCE, { kind: 'endpoint', diagnostics });
if (!script) throw new Error(diagnostics.items.map((d) => d.message).join('\n'));
const ctx = { importValue: (_m, name) => data[name], request: { path: '/bench', url: 'http://localhost/bench' } };

// Check the output before timing.
const outcome = await script.run(ctx);
const expected = JSON.stringify(plain(data));
if (outcome.kind !== 'value' || JSON.stringify(outcome.value) !== expected) {
  throw new Error(`unexpected outcome ${JSON.stringify(outcome)} (expected ${expected})`);
}

async function time(label, fn, budgetMs) {
  for (let i = 0; i < 2000; i++) await fn(); // warm-up
  let n = 0;
  const start = performance.now();
  while (performance.now() - start < budgetMs) {
    for (let i = 0; i < 500; i++) await fn();
    n += 500;
  }
  const us = ((performance.now() - start) * 1000) / n;
  console.log(`${label.padEnd(28)} ${us.toFixed(2).padStart(8)} µs/call  (${n} calls)`);
  return us;
}

// Fixed cost: the smallest endpoint, `({ok: true})`, against a function returning the same object.
const tiny = compileScript('/bench/tiny.js', '({ok: true})', { kind: 'endpoint', diagnostics });
const tinyOutcome = await tiny.run(ctx);
if (tinyOutcome.kind !== 'value' || tinyOutcome.value.ok !== true) throw new Error('unexpected tiny outcome');
console.log(`node ${process.version}`);
console.log('scenario "tiny endpoint" ({ok: true})');
const tinyBase = await time('plain function (async call)', async () => ({ ok: true }), 800);
const tinyCompiled = await time('compiled script run()', () => tiny.run(ctx), 800);
console.log(`overhead per call: ${(tinyCompiled - tinyBase).toFixed(2)} µs`);
console.log('scenario "json endpoint" (2 imports, map + reduce over 10 items)');
const rounds = [];
for (let r = 0; r < 3; r++) {
  const base = await time('plain function (async call)', async () => plain(data), 1200);
  const compiled = await time('compiled script run()', () => script.run(ctx), 1200);
  rounds.push(compiled - base);
}
rounds.sort((a, b) => a - b);
const median = rounds[1];
console.log(`overhead per call (median of 3): ${median.toFixed(2)} µs  (target <= 10 µs: ${median <= 10 ? 'met' : 'NOT met'})`);

// For information: the path the server takes for a JSON endpoint (RunContext.share), where the
// answer stays in the script realm and comes out as its JSON text; the baseline adds JSON.stringify.
const shareCtx = { ...ctx, share: true };
const shared = await script.run(shareCtx);
if (shared.kind !== 'value' || shared.value.json !== expected) throw new Error(`unexpected shared outcome ${JSON.stringify(shared)}`);
console.log('scenario "json endpoint", answer as JSON text (share: true)');
const jsonBase = await time('plain function + stringify', async () => JSON.stringify(plain(data)), 1200);
const jsonShared = await time('compiled script run(share)', () => script.run(shareCtx), 1200);
console.log(`overhead per call: ${(jsonShared - jsonBase).toFixed(2)} µs`);
