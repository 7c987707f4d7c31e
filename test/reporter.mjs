// The quiet reporter of test/run.mjs: one line per test file is too much for 2,000 tests, so it
// prints a dot per 50 passing tests, every failure in full (where, the assertion, its stack, and
// what the test file wrote to standard error), then the counts. `node test/run.mjs --tap` (or
// LANEWAY_TEST_REPORTER=tap) gives Node's full TAP instead.
import { inspect } from 'node:util';
import { relative } from 'node:path';

const root = process.cwd();
const where = (file) => (file ? relative(root, file) : '?');

export default async function* quiet(source) {
  const names = new Map(); // file → names by nesting
  const stderr = new Map(); // file → what it wrote to standard error
  const counts = {};
  let passed = 0;
  let failures = 0;
  for await (const event of source) {
    const data = event.data ?? {};
    switch (event.type) {
      case 'test:start': {
        const stack = names.get(data.file) ?? [];
        stack[data.nesting] = data.name;
        stack.length = data.nesting + 1;
        names.set(data.file, stack);
        break;
      }
      case 'test:stderr':
        stderr.set(data.file, (stderr.get(data.file) ?? '') + data.message);
        break;
      case 'test:pass':
        if (data.details?.type !== 'suite' && ++passed % 50 === 0) yield '.';
        break;
      case 'test:fail': {
        const error = data.details?.error;
        // A suite fails when one of its tests did: that test is reported already.
        if (error?.failureType === 'subtestsFailed') break;
        failures++;
        const path = [...(names.get(data.file) ?? []).slice(0, data.nesting), data.name].join(' › ');
        const at = data.line ? `${where(data.file)}:${data.line}:${data.column}` : where(data.file);
        const shown = inspect(error?.cause ?? error, { depth: 4, colors: false });
        const err = stderr.get(data.file);
        yield `\n\nnot ok ${failures} - ${path}\n  at ${at}\n${shown.replace(/^/gm, '  ')}\n` + (err ? `  standard error of ${where(data.file)}:\n${err.trimEnd().split('\n').slice(-30).join('\n').replace(/^/gm, '  | ')}\n` : '');
        break;
      }
      case 'test:diagnostic':
        if (data.nesting === 0) {
          const m = /^(tests|suites|pass|fail|cancelled|skipped|todo|duration_ms) (\S+)$/.exec(data.message);
          if (m) counts[m[1]] = m[2];
        }
        break;
    }
  }
  const seconds = counts.duration_ms ? ` in ${(Number(counts.duration_ms) / 1000).toFixed(1)} s` : '';
  yield `\n${counts.tests ?? 0} tests: ${counts.pass ?? 0} passed, ${counts.fail ?? 0} failed, ${counts.cancelled ?? 0} cancelled, ${counts.skipped ?? 0} skipped, ${counts.todo ?? 0} todo${seconds}\n`;
  if (Number(counts.fail ?? 0) + Number(counts.cancelled ?? 0) > 0) yield 'Full output: node test/run.mjs --tap <file…>\n';
}
