/**
 * `laneway new DIR`: copies a starter app (a folder of `starters/`, shipped with the package) into
 * DIR, which it creates when missing and refuses when it holds anything. The starters are real
 * apps, checked by the test suite (`laneway check` finds no problem in them, Chromium no policy
 * violation), so what a new user gets first is correct.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseCommandLine, PLAIN, usageError, USAGE_EXIT, type Palette } from './args.js';
import { invokedCommand, shellWord } from './invoked.js';

/**
 * The command that serves the new app while it is edited, printed after `cd DIR` (without
 * `laneway dev`, it would be `laneway serve --dev --watch .`), with `laneway` as the user typed it
 * (invoked.ts).
 */
export const devCommand = (laneway = 'laneway'): string => `${laneway} dev .`;

/**
 * The starter's text files name commands as `` `laneway check .` `` or `<code>laneway check .</code>`:
 * written with `laneway` as the user can type it in the app's directory.
 */
const COMMAND_IN_TEXT = /(`|<code>)laneway (?=[a-z-])/g;
const TEXT_FILE = /\.(?:html|md|txt)$/;

/** The starters, by name (each a folder of `starters/`), the default first. */
export const STARTERS: ReadonlyArray<{ name: string; about: string }> = [
  { name: 'app', about: 'a layout, a home page, a data file, a model with a form that creates records (with checks and a message), a JSON endpoint, a stylesheet' },
  { name: 'minimal', about: 'a layout, one page and a stylesheet: no models, no database' },
];

/**
 * Files kept under another name in `starters/`: npm leaves `.gitignore` files out of a package,
 * so the starter holds `gitignore`, written as `.gitignore`.
 */
const RENAMED: Readonly<Record<string, string>> = { gitignore: '.gitignore' };

/** Entries a directory may hold and still count as empty: a fresh `git init`. */
const ALLOWED_IN_EMPTY = new Set(['.git']);

/** `text` in lines of at most 95 characters: the first indented by `indent` spaces, the others by `hang`. */
function wrap(text: string, indent: number, hang: number): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    const width = 95 - indent - (lines.length ? hang - indent : 0);
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  lines.push(line);
  return lines.map((l, i) => ' '.repeat(i ? hang : indent) + l).join('\n');
}

export const NEW_HELP = `Usage: laneway new DIR [--template NAME]

Writes a starter app into DIR, which is created when missing and must be empty otherwise
(a .git directory alone is fine). Then prints the commands that serve it.

Options:
  --template NAME  the starter to write (default: ${STARTERS[0]!.name}):
${STARTERS.map((s) => wrap(`${s.name.padEnd(8)} ${s.about}`, 21, 30)).join('\n')}
  -h, --help       show this help

Exit status: 0 when written; 2 when DIR is not empty or is a file, or for an unknown template
or option; 1 when a file cannot be written.`;

interface Io {
  out(line: string): void;
  err(line: string): void;
}

/** The folder of the starters, beside `dist/` (and `src/`) in the package. */
function startersDir(): string {
  return fileURLToPath(new URL('../../starters/', import.meta.url));
}

/** Every file of a starter, as paths relative to it, sorted. */
function listFiles(root: string, dir = root, out: string[] = []): string[] {
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) listFiles(root, path, out);
    else out.push(relative(root, path));
  }
  return out;
}

/**
 * Creates `path` and its missing parents, one level at a time: Node's `mkdirSync(…, {recursive})`
 * never returns where `mkdir` keeps failing with ENOENT (under /proc, for one).
 */
function makeDirectories(path: string): void {
  const missing: string[] = [];
  for (let p = path; !existsSync(p); p = dirname(p)) {
    missing.push(p);
    if (dirname(p) === p) break;
  }
  for (const d of missing.reverse()) mkdirSync(d);
}

/** Runs `laneway new`; resolves to the exit code. */
export function runNew(args: string[], io: Io, paint: { out: Palette; err: Palette } = { out: PLAIN, err: PLAIN }): number {
  const parsed = parseCommandLine('new', args, { help: { type: 'boolean', short: 'h' }, template: { type: 'string' } }, paint.err);
  if ('error' in parsed) {
    io.err(parsed.error);
    return USAGE_EXIT;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.out(NEW_HELP);
    return 0;
  }
  if (positionals.length !== 1) {
    io.err(usageError('new', positionals.length === 0 ? 'give the directory to create the app in (laneway new my-app)' : `expected one directory, got ${positionals.length}`, paint.err));
    return USAGE_EXIT;
  }
  const name = values.template ?? STARTERS[0]!.name;
  const starter = STARTERS.find((s) => s.name === name);
  if (!starter) {
    io.err(usageError('new', `there is no template "${name}"; the templates are ${STARTERS.map((s) => s.name).join(', ')}`, paint.err));
    return USAGE_EXIT;
  }
  const given = positionals[0]!;
  const target = resolve(given);
  if (existsSync(target)) {
    if (!statSync(target).isDirectory()) {
      io.err(usageError('new', `${given} is a file: give a new or empty directory`, paint.err));
      return USAGE_EXIT;
    }
    const present = readdirSync(target).filter((e) => !ALLOWED_IN_EMPTY.has(e));
    if (present.length > 0) {
      const shown = present.slice(0, 3).join(', ') + (present.length > 3 ? ', …' : '');
      io.err(usageError('new', `${given} is not empty (it holds ${shown}): give a new or empty directory, so that nothing is overwritten`, paint.err));
      return USAGE_EXIT;
    }
  }

  const source = join(startersDir(), starter.name);
  let files: string[];
  try {
    files = listFiles(source);
  } catch {
    io.err(paint.err.red(`laneway new: the ${starter.name} starter is missing from this installation (${source}): reinstall Laneway`));
    return 1;
  }
  // `laneway` as typed in the new app's directory (`../laneway/bin/laneway` when run by a path).
  const laneway = invokedCommand(target);
  try {
    for (const file of files) {
      const to = join(target, RENAMED[file] ?? file);
      makeDirectories(dirname(to));
      // Written afresh (not copied with its mode), so an install on a read-only disk gives files the user can edit.
      const content = readFileSync(join(source, file));
      const text = TEXT_FILE.test(file) && laneway !== 'laneway' ? content.toString('utf8').replace(COMMAND_IN_TEXT, `$1${laneway} `) : content;
      writeFileSync(to, text, { flag: 'wx' });
    }
  } catch (err) {
    io.err(paint.err.red(`laneway new: cannot write the app into ${given}: ${(err as Error).message}`));
    return 1;
  }

  const here = target === process.cwd();
  io.out(`Created ${here ? 'the app in this directory' : paint.out.bold(given)} from the ${starter.name} starter (${files.length} files).`);
  io.out('');
  io.out('Next:');
  if (!here) io.out(`  ${paint.out.cyan(`cd ${shellWord(given)}`)}`);
  io.out(`  ${paint.out.cyan(devCommand(laneway))}`);
  return 0;
}
