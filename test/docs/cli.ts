/**
 * Runs the `laneway` command from the sources in a child process, as a user would run
 * `bin/laneway` (which needs dist/): `laneway serve DIR --port 0 …` until it prints its
 * listening line.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ENTRY = fileURLToPath(new URL('./run-cli.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** This process's environment without the settings that would change what the server does. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const k of Object.keys(env)) if (k.startsWith('LANEWAY_') || k === 'DATABASE_URL' || k === 'PORT' || k === 'NODE_TEST_CONTEXT') delete env[k];
  return { ...env, ...extra };
}

export interface RunningServer {
  port: number;
  stdout(): string;
  stderr(): string;
  stop(): Promise<void>;
}

/** `laneway serve <args>`; resolves once the server prints `listening on http://127.0.0.1:PORT`. */
export async function startServe(args: string[], env: NodeJS.ProcessEnv): Promise<RunningServer> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', ENTRY, 'serve', ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env });
  let out = '';
  let err = '';
  child.stderr!.on('data', (d) => (err += d));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`laneway serve did not listen within 60 s:\n${out}${err}`));
    }, 60_000);
    child.stdout!.on('data', (d) => {
      out += d;
      const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`laneway serve exited with ${code} before listening:\n${out}${err}`));
    });
  });
  return {
    port,
    stdout: () => out,
    stderr: () => err,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** `laneway <args>` to its end: exit code and output. */
export function runLaneway(args: string[], env: NodeJS.ProcessEnv = cleanEnv()): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', ENTRY, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}
