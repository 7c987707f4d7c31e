/**
 * How the user typed the command, so that every command Laneway prints for them to type next
 * (`laneway new`'s next steps, the starter's pages, the hints after a usage error) works when
 * pasted (docs/cli.md "Running laneway"):
 *
 * - `npx laneway` under `npm exec` / `npx` (npm sets `npm_command=exec`);
 * - `laneway` when the `laneway` found on the PATH is this very file (`npm install -g .`);
 * - otherwise the path it was run by, relative to the directory the command is meant to be typed
 *   in (`bin/laneway`, `../laneway/bin/laneway`), or absolute when that is shorter.
 */
import { existsSync, realpathSync } from 'node:fs';
import { delimiter, isAbsolute, join, relative, resolve } from 'node:path';

/** The name of the command when it is on the PATH. */
export const COMMAND = 'laneway';

function real(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

export interface Invocation {
  /** The script the process runs (`process.argv[1]`). */
  script?: string | undefined;
  env?: NodeJS.ProcessEnv;
  /** The directory the user is in. */
  cwd?: string;
}

/** The invocation of this process: only `bin/laneway` is one (a test runner calling `main` is not). */
function current(): Invocation {
  const script = process.argv[1];
  return { script: script && /(?:^|[\\/])laneway$/.test(script) ? script : undefined, env: process.env, cwd: process.cwd() };
}

/**
 * The command as the user should type it in the directory `from` (default: where they are now).
 * `laneway` when nothing better is known.
 */
export function invokedCommand(from?: string, how: Invocation = current()): string {
  const env = how.env ?? {};
  if (env.npm_command === 'exec') return `npx ${COMMAND}`;
  const script = how.script;
  if (!script) return COMMAND;
  const cwd = how.cwd ?? process.cwd();
  const absolute = resolve(cwd, script);
  const self = real(absolute);
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir || !isAbsolute(dir)) continue;
    const candidate = join(dir, COMMAND);
    if (existsSync(candidate) && self !== undefined && real(candidate) === self) return COMMAND;
  }
  const rel = relative(resolve(cwd, from ?? '.'), absolute).split('\\').join('/');
  const shown = rel.includes('/') ? rel : `./${rel}`;
  return shellWord(shown.length <= absolute.length ? shown : absolute);
}

/** Quotes a word for a POSIX shell when it needs it (`cd 'my app'`). */
export function shellWord(s: string): string {
  return /^[\w@%+=:,./-]+$/u.test(s) ? s : `'${s.replaceAll("'", `'\\''`)}'`;
}
