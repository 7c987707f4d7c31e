/**
 * What `laneway serve --log json` makes of the command's own lines: every line it prints once the
 * log format is known becomes one JSON object, as the server's access and error lines are. A line
 * for standard output is `info`; one for standard error is a `warning` when it says so (a
 * `WARNING:` or `warning:` line), else an `error`. The `laneway <command>: ` prefix is dropped:
 * the object says where it comes from by its `type`.
 */
import type { createLogger } from '../http/index.js';

interface Io {
  out(line: string): void;
  err(line: string): void;
}

type ProcessLogger = ReturnType<typeof createLogger>;

const PREFIX = /^laneway [a-z]+: /;
const WARNING = /^(?:WARNING|warning):|^laneway [a-z]+: warning: /;

export function jsonIo(logger: ProcessLogger): Io {
  const strip = (line: string) => line.replace(PREFIX, '').replace(/^(?:WARNING|warning): /, '');
  return {
    out: (line) => logger.info(strip(line)),
    err: (line) => (WARNING.test(line) ? logger.warn(strip(line)) : logger.error(strip(line))),
  };
}
