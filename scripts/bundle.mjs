// The second step of `npm run build`, after tsc: bundles the `laneway` command (dist/cli/index.js
// and everything it imports from dist/) into dist/bundle/, which bin/laneway loads. One file and
// a few chunks load faster than the ~170 modules tsc writes (a `laneway check` of a small app
// spends more time loading Laneway than checking the app: docs/architecture.md, "Start-up").
// The modules only serving needs stay in chunks of their own, loaded by the dynamic imports of
// src/cli/index.ts. Packages from node_modules are not bundled: they load as they always do.
// It also copies the code of the script realm (src/script/realm/*.js, read as text at run time by
// src/script/realm-source.ts) to dist/script/realm/, where dist/ and dist/bundle/ both read it.
//
//   node scripts/bundle.mjs
import { cpSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const outdir = `${root}dist/bundle`;
rmSync(`${root}dist/script/realm`, { recursive: true, force: true });
cpSync(`${root}src/script/realm`, `${root}dist/script/realm`, { recursive: true, filter: (path) => !/\.(ts|json)$/.test(path) });
// Chunk names carry a hash: clear the last build's chunks.
rmSync(outdir, { recursive: true, force: true });
await build({
  absWorkingDir: root,
  entryPoints: ['dist/cli/index.js'],
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  // tsc's source maps point at src/: keep them for stack traces read with --enable-source-maps.
  sourcemap: 'linked',
  logLevel: 'warning',
});
