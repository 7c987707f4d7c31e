/**
 * Logging: one access line per request, error and warning lines, the startup line, and the build
 * problems found at start. `pretty` for a terminal, `json` for log collectors (every line one JSON
 * object), `off` for benchmarks and tests (no access lines; everything else as `pretty`).
 *
 * With `timestamps` (the `laneway` command sets it), pretty lines start with the time in ISO 8601,
 * UTC, to the millisecond (`2025-03-14T09:26:53.589Z GET / 200 1.2ms`): the same instant as the
 * `time` of a JSON line, and the same text wherever the server runs. Two kinds of pretty line never
 * carry a time, because tools and people read them as they are: the startup line, exactly
 * `listening on http://HOST:PORT`, and build problems, `file:line:column: message [CODE]` as
 * `laneway check` prints them.
 *
 * JSON lines: `{"time", "type", …}` with `type` one of `access` (`id`, `method`, `path`,
 * `status`, `ms`, `client`: the client's address, after the trusted proxies), `listening` (`message`, `url`, `host`, `port`), `info`, `warning` and `error`
 * (`message` and the fields given; a build problem adds `code`, `file`, `line`, `column`).
 * Access, info and startup lines go to standard output; warnings and errors to standard error.
 */
import { formatDiagnostic, type Diagnostic } from '../diag/index.js';

export type LogFormat = 'pretty' | 'json' | 'off';

/** What the request function logs. */
export interface Logger {
  readonly format: LogFormat;
  /** `client`: the client's address (after the trusted proxies), given in JSON lines only. */
  access(entry: { id: string; method: string; path: string; status: number; ms: number; client?: string | undefined }): void;
  error(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
}

/** What a server process logs besides: warnings, the startup line, build problems. */
export interface ProcessLogger extends Logger {
  warn(message: string, fields?: Record<string, unknown>): void;
  /** The line that says the server is ready; pretty: exactly `listening on <url>`. */
  listening(url: string, fields?: Record<string, unknown>): void;
  /** A problem of the app's files (a warning at start, or an error that stops it). */
  diagnostic(d: Diagnostic): void;
}

export interface LoggerOptions {
  /** Start pretty lines with the time (ISO 8601, UTC); JSON lines always have `time`. */
  timestamps?: boolean;
  /** Colour the pretty lines of standard output and of standard error (the CLI decides). */
  color?: { out?: boolean; err?: boolean };
  /** The clock (tests). */
  now?: () => Date;
}

const ESC = (open: number, close: number) => (s: string) => `\x1b[${open}m${s}\x1b[${close}m`;
const RED = ESC(31, 39);
const YELLOW = ESC(33, 39);
const GREEN = ESC(32, 39);
const CYAN = ESC(36, 39);
const DIM = ESC(2, 22);
const PLAIN = (s: string) => s;

/** A status coloured by class: 2xx green, 3xx cyan, 4xx yellow, 5xx red. */
function statusColor(status: number): (s: string) => string {
  return status >= 500 ? RED : status >= 400 ? YELLOW : status >= 300 ? CYAN : GREEN;
}

/** JSON of a log line; a value JSON cannot hold (a BigInt, a cycle) becomes its text. */
function jsonLine(entry: Record<string, unknown>): string {
  try {
    return JSON.stringify(entry, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v));
  } catch {
    return JSON.stringify(Object.fromEntries(Object.entries(entry).map(([k, v]) => [k, typeof v === 'object' && v !== null ? String(v) : v])));
  }
}

/** `k=v` pairs after a pretty message. */
function prettyFields(fields: Record<string, unknown>): string {
  const entries = Object.entries(fields).filter(([, v]) => v !== undefined);
  return entries.length ? ' ' + entries.map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`).join(' ') : '';
}

export function createLogger(
  format: LogFormat,
  out: (line: string) => void = (l) => process.stdout.write(l + '\n'),
  err: (line: string) => void = (l) => process.stderr.write(l + '\n'),
  options: LoggerOptions = {},
): ProcessLogger {
  const now = options.now ?? (() => new Date());
  const json = format === 'json';
  const outColor = !json && options.color?.out === true;
  const errColor = !json && options.color?.err === true;
  /** The time that starts a pretty line, with its space (nothing without `timestamps`). */
  const stampOut = () => (options.timestamps ? (outColor ? DIM : PLAIN)(now().toISOString()) + ' ' : '');
  const stampErr = () => (options.timestamps ? (errColor ? DIM : PLAIN)(now().toISOString()) + ' ' : '');
  /** A JSON line: time and type first, then the fields (which cannot replace those two). */
  const entry = (type: string, base: Record<string, unknown>, fields: Record<string, unknown> = {}) => {
    const time = now().toISOString();
    return jsonLine(Object.assign({ time, type }, base, fields, { time, type }, base));
  };
  return {
    format,
    access(e) {
      if (format === 'off') return;
      if (json) out(entry('access', { ...e, ms: Math.round(e.ms * 100) / 100 }));
      else out(`${stampOut()}${e.method} ${e.path} ${outColor ? statusColor(e.status)(String(e.status)) : e.status} ${e.ms.toFixed(1)}ms`);
    },
    error(message, fields = {}) {
      if (json) err(entry('error', { message }, fields));
      else err(`${stampErr()}${errColor ? RED('error:') : 'error:'} ${message}${prettyFields(fields)}`);
    },
    warn(message, fields = {}) {
      if (json) err(entry('warning', { message }, fields));
      else err(`${stampErr()}${errColor ? YELLOW('warning:') : 'warning:'} ${message}${prettyFields(fields)}`);
    },
    info(message, fields = {}) {
      if (json) out(entry('info', { message }, fields));
      else out(`${stampOut()}${message}${prettyFields(fields)}`);
    },
    listening(url, fields = {}) {
      if (json) out(entry('listening', { message: `listening on ${url}`, url }, fields));
      else out(`listening on ${url}`);
    },
    diagnostic(d) {
      if (json) {
        const file = d.file.startsWith('/') ? d.file.slice(1) : d.file;
        err(entry(d.severity === 'warning' ? 'warning' : 'error', { message: d.message, code: d.code, file, line: d.line, column: d.column }));
      } else {
        const line = formatDiagnostic(d);
        err(errColor ? (d.severity === 'warning' ? YELLOW(line) : RED(line)) : line);
      }
    },
  };
}
