/**
 * `laneway serve` as users run it, for black-box tests of the process (test/cli/workers.test.ts,
 * test/images/lifecycle.test.ts): bin/laneway in a child process on 127.0.0.1, port 0, with
 * `--log json`; every line it writes is kept, and a test waits for lines (with a generous limit)
 * rather than for time. Needs `npm run build`.
 */
import { after } from 'node:test';
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { rawRequest } from '../helpers.js';

export const BIN = fileURLToPath(new URL('../../bin/laneway', import.meta.url));
export const WAIT_MS = 60_000;

/** A log line of `--log json` (a line that is not JSON is kept as its text). */
export interface LogLine {
  type: string;
  message: string;
  [field: string]: unknown;
}

/** A `laneway serve` child process and every line it wrote. */
export class Served {
  readonly lines: LogLine[] = [];
  readonly exited: Promise<number | null>;
  port = 0;
  readonly #waiters = new Set<() => void>();

  constructor(readonly child: ChildProcessByStdio<null, Readable, Readable>) {
    for (const stream of [child.stdout, child.stderr]) {
      let buffered = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => {
        buffered += chunk;
        let nl;
        while ((nl = buffered.indexOf('\n')) !== -1) {
          const text = buffered.slice(0, nl);
          buffered = buffered.slice(nl + 1);
          let line: LogLine;
          try {
            line = JSON.parse(text) as LogLine;
          } catch {
            line = { type: 'text', message: text };
          }
          this.lines.push(line);
          for (const w of [...this.#waiters]) w();
        }
      });
    }
    this.exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? (signal ? -1 : null))));
    void this.exited.then(() => {
      for (const w of [...this.#waiters]) w();
    });
  }

  /** The first line (after `from`, an index into `lines`) that `match` accepts. */
  waitFor(match: (l: LogLine) => boolean, what: string, from = 0): Promise<LogLine> {
    return new Promise((resolve, reject) => {
      let exited = false;
      void this.exited.then(() => (exited = true));
      const check = () => {
        const found = this.lines.slice(from).find(match);
        if (found) return done(() => resolve(found));
        if (exited) return done(() => reject(new Error(`exited before ${what}:\n${this.text()}`)));
      };
      const timer = setTimeout(() => done(() => reject(new Error(`no ${what} within ${WAIT_MS / 1000} s:\n${this.text()}`))), WAIT_MS);
      const done = (settle: () => void) => {
        clearTimeout(timer);
        this.#waiters.delete(check);
        settle();
      };
      this.#waiters.add(check);
      check();
    });
  }

  /** Pids of the workers that said they listen (from line `from` on). */
  listening(from = 0): Array<{ worker: number; pid: number }> {
    return this.lines.slice(from).flatMap((l) => {
      const m = /^worker (\d+) listening \(pid (\d+)\)$/.exec(l.message ?? '');
      return m ? [{ worker: Number(m[1]), pid: Number(m[2]) }] : [];
    });
  }

  text(): string {
    return this.lines.map((l) => (l.type === 'text' ? l.message : JSON.stringify(l))).join('\n');
  }

  get(path: string) {
    return rawRequest(this.port, 'GET', path);
  }

  /** SIGTERM, then the exit code. */
  async stop(): Promise<number | null> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGTERM');
    return this.exited;
  }
}

const running = new Set<Served>();
after(async () => {
  for (const s of running) if (s.child.exitCode === null) s.child.kill('SIGKILL');
});

/** `laneway serve DIR --port 0 --log json ARGS`, once it listens; killed after the test file if still running. */
export async function serve(dir: string, args: string[], env: Record<string, string> = {}): Promise<Served> {
  const child = spawn(process.execPath, [BIN, 'serve', dir, '--port', '0', '--log', 'json', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, PORT: '', DATABASE_URL: '', NO_COLOR: '1', ...env },
  });
  const s = new Served(child);
  running.add(s);
  const line = await s.waitFor((l) => l.type === 'listening', 'listening line');
  s.port = Number(new URL(String(line.url)).port);
  return s;
}
