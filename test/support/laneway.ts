/**
 * `bin/laneway` as a child process, for tests that run the command as users do (`npm run build`
 * first): run to its end within a bound, or start a server and wait for its listening line.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const BIN = fileURLToPath(new URL('../../bin/laneway', import.meta.url));

/** The environment of a child: the test's, without what would change the command's defaults. */
function childEnv(env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...process.env, PORT: '', LANEWAY_SOURCES: '', ...env };
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete out[k];
  return out;
}

export interface RunOptions {
  /** Variables to set (undefined: unset). */
  env?: Record<string, string | undefined>;
  /** A command the child runs under (`runuser -u nobody --`). */
  prefix?: string[];
  /** Fail when the command still runs after this long (default 60 s). */
  boundMs?: number;
}

/** Runs `laneway …` to its end: exit code and output; rejects when it is still running after the bound. */
export function runLaneway(args: string[], options: RunOptions = {}): Promise<{ code: number | null; out: string; err: string }> {
  const boundMs = options.boundMs ?? 60_000;
  return new Promise((resolve, reject) => {
    const [command, ...rest] = [...(options.prefix ?? []), process.execPath, BIN, ...args];
    const child = spawn(command!, rest, { env: childEnv(options.env ?? {}) });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`laneway ${args.join(' ')} still running after ${boundMs} ms\nstdout: ${out}\nstderr: ${err}`));
    }, boundMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out, err });
    });
  });
}

export interface RunningLaneway {
  port: number;
  out(): string;
  err(): string;
  /** SIGTERM (unless it ended already); resolves with the exit code or signal. */
  stop(): Promise<number | string | null>;
}

/** Starts `laneway …` (give `--port 0`) and waits up to `patienceMs` for its listening line. */
export async function startLaneway(args: string[], env: Record<string, string | undefined> = {}, patienceMs = 30_000): Promise<RunningLaneway> {
  const child = spawn(process.execPath, [BIN, ...args], { env: childEnv(env) });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  const exited = new Promise<number | string | null>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no listening line within ${patienceMs} ms\nstdout: ${out}\nstderr: ${err}`)), patienceMs);
    child.stdout.on('data', () => {
      const m = /listening on http:\/\/[^\s]+:(\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    void exited.then((code) => reject(new Error(`exited ${code} before listening\nstdout: ${out}\nstderr: ${err}`)));
  });
  return {
    port,
    out: () => out,
    err: () => err,
    stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}
