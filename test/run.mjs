// Runs every *.test.ts under test/ and src/ with Node's own test runner (TypeScript through tsx).
// Node 20's `--test` takes no globs, so the file list is built here. Arguments select the files
// whose path contains one of them (`node test/run.mjs test/cli/ forms`). The output is quiet
// (test/reporter.mjs: every failure in full, then the counts); `--tap`, or
// LANEWAY_TEST_REPORTER=tap, gives Node's full TAP. The exit code is the test runner's.
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
const tap = args.includes('--tap') || process.env.LANEWAY_TEST_REPORTER === 'tap';
const only = args.filter((a) => a !== '--tap');

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
const reporter = tap ? ['--test-reporter=tap'] : ['--test-reporter=./test/reporter.mjs'];
const result = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=2', ...reporter, ...files], {
  cwd: root,
  stdio: 'inherit',
});
process.exit(result.status ?? 1);
