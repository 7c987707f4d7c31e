/**
 * Diagnostics shared by every compiler in Laneway.
 *
 * Compilers work with offsets into a source text; `locate` turns an offset into a 1-based
 * line and column once, and `formatDiagnostic` prints the `file:line:column: message` line that
 * `laneway check` and `laneway serve` show. Every problem carries a code from the catalogue in
 * `codes.ts` (documented in docs/errors.md).
 */
import { CODES, type Code } from './codes.js';

export { CODES, type Code } from './codes.js';
export { codeFrame } from './frame.js';

export type Severity = 'error' | 'warning';

/** One problem found while loading an app. `file` is app-relative with a leading slash. */
export interface Diagnostic {
  code: Code;
  severity: Severity;
  message: string;
  file: string;
  line: number;
  column: number;
  /**
   * `file` is a path on disk outside the app (a nested site whose source lies outside the parent's
   * directory), printed as it is; otherwise it is an app path, printed without its leading `/`.
   */
  external?: true;
}

/** A 1-based line and column. */
export interface Position {
  line: number;
  column: number;
}

/** Maps a UTF-16 offset of `source` to a 1-based line and column (columns count code points). */
export function locate(source: string, offset: number): Position {
  let line = 1;
  let lineStart = 0;
  const end = Math.max(0, Math.min(offset, source.length));
  for (let i = 0; i < end; i++) {
    if (source.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  // Count code points so an emoji before the problem counts as one column, as editors show it.
  const column = Array.from(source.slice(lineStart, end)).length + 1;
  return { line, column };
}

/** Formats a diagnostic as `file:line:column: message` (file without the leading slash). */
export function formatDiagnostic(d: Diagnostic): string {
  const file = d.external || !d.file.startsWith('/') ? d.file : d.file.slice(1);
  const tag = d.severity === 'warning' ? 'warning: ' : '';
  return `${file}:${d.line}:${d.column}: ${tag}${d.message} [${d.code}]`;
}

/**
 * Collects diagnostics for one load. Compilers never stop at the first problem: they report and
 * carry on, so `laneway check` lists everything in one run.
 */
export class DiagnosticList {
  readonly items: Diagnostic[] = [];

  /** Reports a problem at an offset of `source` (or at line 1, column 1 when no source is given). */
  add(severity: Severity, code: Code, message: string, file: string, source?: string, offset = 0): void {
    const pos = source === undefined ? { line: 1, column: 1 } : locate(source, offset);
    this.items.push({ code, severity, message, file, line: pos.line, column: pos.column });
  }

  error(code: Code, message: string, file: string, source?: string, offset?: number): void {
    this.add('error', code, message, file, source, offset);
  }

  warn(code: Code, message: string, file: string, source?: string, offset?: number): void {
    this.add('warning', code, message, file, source, offset);
  }

  /** Reports a problem at an already known position. */
  at(severity: Severity, code: Code, message: string, file: string, pos: Position, external = false): void {
    this.items.push({ code, severity, message, file, line: pos.line, column: pos.column, ...(external ? { external: true as const } : {}) });
  }

  get errors(): Diagnostic[] {
    return this.items.filter((d) => d.severity === 'error');
  }

  get warnings(): Diagnostic[] {
    return this.items.filter((d) => d.severity === 'warning');
  }

  /** Sorted by file, then position, so output is stable across runs. */
  sorted(): Diagnostic[] {
    return [...this.items].sort(
      (a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : a.line - b.line || a.column - b.column),
    );
  }
}

/**
 * An error with a catalogue code. At run time it carries the HTTP status to answer with; at build
 * time a file and position. `expose` says whether `message` may be shown to a client.
 */
export class LanewayError extends Error {
  readonly code: Code;
  readonly status: number;
  readonly expose: boolean;
  file?: string;
  line?: number;
  column?: number;

  constructor(code: Code, message: string, options: { status?: number; expose?: boolean; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'LanewayError';
    this.code = code;
    this.status = options.status ?? 500;
    this.expose = options.expose ?? this.status < 500;
  }
}

/** Thrown by `loadApp` when an app has errors; carries every diagnostic. */
export class BuildError extends Error {
  readonly diagnostics: Diagnostic[];
  constructor(diagnostics: Diagnostic[]) {
    const errors = diagnostics.filter((d) => d.severity === 'error');
    super(`the app has ${errors.length} error${errors.length === 1 ? '' : 's'}:\n` + errors.map(formatDiagnostic).join('\n'));
    this.name = 'BuildError';
    this.diagnostics = diagnostics;
  }
}

/**
 * The codes of what degrades instead of stopping the app (docs/status.md "What degrades"): a
 * warning each, which `laneway check --strict` and `serve --strict` turn into errors.
 */
export const NOT_AVAILABLE_CODES: ReadonlySet<Code> = new Set<Code>(['LW_APP_NOT_AVAILABLE', 'LW_SCRIPT_PLATFORM_MODULE', 'LW_MODEL_TYPE_NOT_AVAILABLE', 'LW_MODEL_NOT_AVAILABLE']);

/** `--strict`: every warning of something degraded becomes an error. */
export function strictDiagnostics(diagnostics: readonly Diagnostic[]): Diagnostic[] {
  return diagnostics.map((d) => (d.severity === 'warning' && NOT_AVAILABLE_CODES.has(d.code) ? { ...d, severity: 'error' } : d));
}

/** A short description of each code, for docs and tests. */
export function describeCode(code: Code): string {
  return CODES[code];
}
