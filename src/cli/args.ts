/**
 * The conventions every `laneway` command follows: options parsed without Node's raw messages,
 * usage errors in Laneway's words with a hint (exit 2, before the app is loaded), the values of
 * `--port` and `--log` checked up front, and colour only where a person reads it.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { statSync } from 'node:fs';
import type { LogFormat } from '../http/index.js';
import { invokedCommand } from './invoked.js';

/** The exit code of a usage error (as `grep`, `git` and POSIX utilities use it). */
export const USAGE_EXIT = 2;

type OptionsConfig = NonNullable<ParseArgsConfig['options']>;
type StrictResult<O extends OptionsConfig> = ReturnType<typeof parseArgs<{ args: string[]; options: O; allowPositionals: true; strict: true }>>;

/** The line after every usage error: where the usage of the command is. */
export function usageHint(command?: string): string {
  const laneway = invokedCommand();
  return command === undefined ? `Run "${laneway} --help" for the commands.` : `Run "${laneway} ${command} --help" for the options.`;
}

/** A usage error as printed: `laneway serve: <message>`, then the hint. */
export function usageError(command: string | undefined, message: string, paint: Palette = PLAIN): string {
  return `${paint.red(`laneway${command === undefined ? '' : ' ' + command}: ${message}`)}\n${paint.dim(usageHint(command))}`;
}

/**
 * Parses the options of `command` (Node's `parseArgs`, positionals allowed). A mistake is answered
 * as `{error}`, a usage error in Laneway's words, never Node's `ERR_PARSE_ARGS_…` text: an unknown
 * option (with the nearest known one), an option that needs a value and has none, a value given to
 * a switch. A value may start with one dash (`--port -1` gives "-1" to `--port`, which then says
 * what is wrong with it), not with two: `--data --dev` is `--data` without its value.
 */
export function parseCommandLine<O extends OptionsConfig>(
  command: string,
  args: string[],
  options: O,
  paint: Palette = PLAIN,
): { values: StrictResult<O>['values']; positionals: string[] } | { error: string } {
  const loose = parseArgs({ args, options, allowPositionals: true, strict: false, tokens: true });
  for (const token of loose.tokens) {
    if (token.kind !== 'option') continue;
    const config = Object.hasOwn(options, token.name) ? options[token.name] : undefined;
    const shown = token.rawName;
    if (!config) {
      const known = Object.entries(options).flatMap(([name, o]) => [`--${name}`, ...(o.short ? [`-${o.short}`] : [])]);
      const near = suggest(shown, known);
      return { error: usageError(command, `unknown option ${shown}${near ? ` (did you mean ${near}?)` : ''}`, paint) };
    }
    if (config.type === 'string') {
      const missing = token.value === undefined || (!token.inlineValue && token.value.startsWith('--'));
      if (missing) return { error: usageError(command, `${shown} needs a value`, paint) };
    } else if (token.inlineValue) {
      return { error: usageError(command, `${shown} takes no value (write ${shown} alone)`, paint) };
    }
  }
  // Every token is known and well formed: the strict parse gives the typed values and cannot fail.
  const strict = parseArgs({ args: tokensToArgs(loose.tokens), options, allowPositionals: true, strict: true });
  return { values: strict.values, positionals: strict.positionals };
}

/**
 * The arguments again, with each option's value attached (`--port=-1`), so that the strict parse
 * takes a value starting with a dash as the value it is.
 */
function tokensToArgs(tokens: NonNullable<ReturnType<typeof parseArgs>['tokens']>): string[] {
  const out: string[] = [];
  for (const t of tokens) {
    if (t.kind === 'positional') out.push(t.value);
    else if (t.kind === 'option-terminator') out.push('--');
    else if (t.value === undefined) out.push(`--${t.name}`);
    else out.push(`--${t.name}=${t.value}`);
  }
  return out;
}

/**
 * The nearest candidate, for "did you mean": within one edit for every three letters of the word
 * (dashes aside; a swap of two neighbours is one edit), so `--prot` finds `--port` and `-x` finds
 * nothing.
 */
export function suggest(word: string, candidates: readonly string[]): string | undefined {
  const letters = word.replace(/^-+/, '').length;
  let best: string | undefined;
  let bestDistance = Math.floor(letters / 3) + 1;
  for (const c of candidates) {
    const d = distance(word, c);
    if (d < bestDistance) [best, bestDistance] = [c, d];
  }
  return best;
}

/** Edits from `a` to `b`: insertions, deletions, substitutions, swaps of neighbours. */
function distance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * A port from `--port` or `$PORT`: a whole number from 0 to 65535 (0 picks a free one), written
 * in decimal digits only (`3000`, not `3e3`, ` 3000` or `0x0bb8`). Answers the number, or the
 * message of a usage error.
 */
export function parsePort(text: string, source: string): number | string {
  if (!/^\d{1,5}$/.test(text) || Number(text) > 65535) {
    return `${source} ${JSON.stringify(text)} is not a port: give a whole number from 1 to 65535, or 0 for any free port`;
  }
  return Number(text);
}

export const LOG_FORMATS: readonly LogFormat[] = ['pretty', 'json', 'off'];

/** `--log`: one of the formats, or the message of a usage error. */
export function parseLogFormat(text: string): LogFormat | string {
  if ((LOG_FORMATS as readonly string[]).includes(text)) return text as LogFormat;
  return `--log ${JSON.stringify(text)} is not a log format: use pretty, json or off`;
}

/** The app directory argument: undefined when it is a directory, else what is wrong with it. */
export function checkAppDirectory(given: string, path: string): string | undefined {
  try {
    if (statSync(path).isDirectory()) return undefined;
    return `${given} is not a directory: give the directory of an app`;
  } catch {
    return `the directory ${given} does not exist (create an app with "${invokedCommand()} new ${given}")`;
  }
}

/**
 * Whether to colour what goes to a stream. `FORCE_COLOR` decides when set (`0` or `false`: never;
 * anything else: always), as in Node.js; otherwise a non-empty `NO_COLOR` turns colour off
 * (https://no-color.org); otherwise colour only on a terminal that is not `TERM=dumb`.
 */
export function colorEnabled(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): boolean {
  const force = env.FORCE_COLOR;
  if (force !== undefined) return force !== '0' && force.toLowerCase() !== 'false';
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  return stream.isTTY === true && env.TERM !== 'dumb';
}

/** ANSI styles, or the identity when colour is off. */
export interface Palette {
  red(s: string): string;
  yellow(s: string): string;
  green(s: string): string;
  cyan(s: string): string;
  dim(s: string): string;
  bold(s: string): string;
}

const sgr = (open: number, close: number) => (s: string) => `\x1b[${open}m${s}\x1b[${close}m`;
const same = (s: string) => s;

export const PLAIN: Palette = { red: same, yellow: same, green: same, cyan: same, dim: same, bold: same };
export const COLORED: Palette = { red: sgr(31, 39), yellow: sgr(33, 39), green: sgr(32, 39), cyan: sgr(36, 39), dim: sgr(2, 22), bold: sgr(1, 22) };

export function palette(enabled: boolean): Palette {
  return enabled ? COLORED : PLAIN;
}
