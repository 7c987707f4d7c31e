// Runs every *.test.ts under test/ and src/ with Node's own test runner (TypeScript through tsx).
// Node 20's `--test` takes no globs, so the file list is built here.
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const only = process.argv.slice(2);

function walk(dir, out) {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'fixtures' || name.startsWith('.')) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path, out);
    else if (name.endsWith('.test.ts')) out.push(relative(root, path));
  }
  return out;
}

let files = [...walk(join(root, 'src'), []), ...walk(join(root, 'test'), [])].sort();
if (only.length) files = files.filter((f) => only.some((o) => f.includes(o)));
const result = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=2', ...files], {
  cwd: root,
  stdio: 'inherit',
});
process.exit(result.status ?? 1);
