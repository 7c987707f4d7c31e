/**
 * Every regular expression in the files that read what a visitor sends runs in linear time
 * (docs/architecture.md "Regular expressions on what a visitor sends"). The files' regular
 * expression literals are read with acorn's tokenizer (TypeScript annotations tokenize as
 * JavaScript does) and each is checked by recheck, a ReDoS checker: one it finds super-linear
 * fails the test with its file, line and an attack string. A `RegExp` built at run time cannot be
 * checked so: each call in these files is listed below with why its pattern is linear.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tokenizer, type Token } from 'acorn';
import { checkSync } from 'recheck';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * What runs on a request's data: the request line, headers and body, the values scripts pass to
 * built-ins, what views print. A folder (ending in `/`) covers the files added to it later.
 */
const REQUEST_FACING = [
  'src/http/',
  'src/router/request-path.ts',
  'src/app/endpoint/',
  'src/app/request/',
  'src/app/services/',
  'src/session/',
  'src/limits/',
  'src/forms/submission.ts',
  'src/forms/view.ts',
  'src/models/values.ts',
  'src/models/rich.ts',
  'src/models/hierarchy.ts',
  'src/content/markdown.ts',
  'src/content/slug.ts',
  'src/content/rich-text.ts',
  'src/content/query.ts',
  'src/store/session.ts',
  'src/script/realm/',
  'src/script/redirect.ts',
  'src/script/util-module.ts',
  'src/script/platform-module.ts',
  'src/mail/message.ts',
  'src/images/sniff.ts',
  'src/template/runtime.ts',
  'src/auth/request.ts',
  'src/auth/endpoints.ts',
  'src/auth/errors.ts',
  'src/auth/oidc.ts',
  'src/auth/github.ts',
];

/** `new RegExp(…)` and `RegExp(…)` in these files, by file and line text, and why the pattern is linear. */
const REVIEWED_CONSTRUCTORS: Array<{ file: string; line: RegExp; why: string }> = [
  { file: 'src/store/session.ts', line: /new RegExp\(`\^lw_\$\{table\}_\(\\\\w\+\)_u\$`\)/, why: 'a table name of the app, then \\w+ anchored at both ends' },
];

function filesOf(entry: string): string[] {
  const abs = join(ROOT, entry);
  if (!entry.endsWith('/')) return [entry];
  const out: string[] = [];
  for (const name of readdirSync(abs)) {
    const path = join(abs, name);
    if (statSync(path).isDirectory()) out.push(...filesOf(relative(ROOT, path) + '/'));
    else if (/\.(?:ts|js)$/.test(name) && !/\.test\.ts$|\.d\.ts$/.test(name)) out.push(relative(ROOT, path));
  }
  return out;
}

interface Found {
  file: string;
  line: number;
  pattern: string;
  flags: string;
}

function regexesOf(file: string): { literals: Found[]; constructors: Array<{ line: number; text: string }> } {
  const source = readFileSync(join(ROOT, file), 'utf8');
  const lines = source.split('\n');
  const literals: Found[] = [];
  const constructors: Array<{ line: number; text: string }> = [];
  const tokens = [...tokenizer(source, { ecmaVersion: 'latest', sourceType: 'module', locations: true })] as Array<Token & { value: unknown }>;
  tokens.forEach((t, i) => {
    const line = t.loc!.start.line;
    if (t.type.label === 'regexp') {
      const { pattern, flags } = t.value as { pattern: string; flags: string };
      literals.push({ file, line, pattern, flags });
    } else if (t.type.label === 'name' && t.value === 'RegExp' && (tokens[i - 1]?.type.label === 'new' || tokens[i + 1]?.type.label === '(')) {
      constructors.push({ line, text: lines[line - 1]! });
    }
  });
  return { literals, constructors };
}

const files = [...new Set(REQUEST_FACING.flatMap(filesOf))].sort();

test('the request-facing files are there, and their regular expressions are found', () => {
  assert.ok(files.length > 40, `${files.length} files`);
  const all = files.flatMap((f) => regexesOf(f).literals);
  assert.ok(all.length > 100, `${all.length} literals`);
  assert.ok(all.some((r) => r.file === 'src/models/values.ts' && r.pattern.startsWith('^[+-]?(?:\\d+(?:\\.\\d*)?')));
});

test('every regular expression literal of the request-facing files runs in linear time (recheck)', { timeout: 600_000 }, () => {
  const problems: string[] = [];
  for (const file of files) {
    for (const r of regexesOf(file).literals) {
      // `g` and `y` change where a match starts, not how it backtracks: recheck takes neither.
      const result = checkSync(r.pattern, r.flags.replace(/[gy]/g, ''), { timeout: 30_000 });
      if (result.status === 'safe') continue;
      const why = result.status === 'vulnerable' ? `${result.complexity.summary}; attack: ${result.attack.pattern}` : `recheck could not decide (${result.status})`;
      problems.push(`${r.file}:${r.line}: /${r.pattern}/${r.flags} — ${why}`);
    }
  }
  assert.deepEqual(problems, [], 'write these with one way to match each text, or as a scan (docs/architecture.md "Regular expressions on what a visitor sends")');
});

test('every RegExp built at run time in the request-facing files has been reviewed', () => {
  const unreviewed: string[] = [];
  for (const file of files) {
    for (const c of regexesOf(file).constructors) {
      if (!REVIEWED_CONSTRUCTORS.some((r) => r.file === file && r.line.test(c.text))) unreviewed.push(`${file}:${c.line}: ${c.text.trim()}`);
    }
  }
  assert.deepEqual(unreviewed, [], 'check each pattern and add it to REVIEWED_CONSTRUCTORS with why it is linear');
});
