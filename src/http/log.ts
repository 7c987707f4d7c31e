/**
 * Logging: one access line per request, and error lines with the request id. `pretty` for a
 * terminal, `json` for log collectors (one object per line), `off` for benchmarks and tests.
 */
export type LogFormat = 'pretty' | 'json' | 'off';

export interface Logger {
  readonly format: LogFormat;
  access(entry: { id: string; method: string; path: string; status: number; ms: number }): void;
  error(message: string, fields?: Record<string, unknown>): void;
  info(message: string): void;
}

export function createLogger(format: LogFormat, out: (line: string) => void = (l) => process.stdout.write(l + '\n'), err: (line: string) => void = (l) => process.stderr.write(l + '\n')): Logger {
  return {
    format,
    access(e) {
      if (format === 'off') return;
      if (format === 'json') out(JSON.stringify({ time: new Date().toISOString(), type: 'access', ...e, ms: Math.round(e.ms * 100) / 100 }));
      else out(`${e.method} ${e.path} ${e.status} ${e.ms.toFixed(1)}ms`);
    },
    error(message, fields = {}) {
      if (format === 'json') err(JSON.stringify({ time: new Date().toISOString(), type: 'error', message, ...fields }));
      else err(`error: ${message}${Object.keys(fields).length ? ' ' + Object.entries(fields).map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`).join(' ') : ''}`);
    },
    info(message) {
      if (format === 'json') out(JSON.stringify({ time: new Date().toISOString(), type: 'info', message }));
      else if (format === 'pretty') out(message);
    },
  };
}
