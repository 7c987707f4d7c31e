/**
 * Workers that start while the others serve writes, as users run them (`bin/laneway serve
 * --workers 2`, docs/deploy.md): a worker killed and replaced, and `SIGHUP` reloads, while 8
 * clients write, on both engines. Every replacement and every reload starts (no start fails on a
 * lock it met, and none reports records sharing values that do not), and every write that is
 * answered succeeds; the only requests allowed to go unanswered are those the killed worker was
 * holding. Bounded: 3 kills and 3 reloads per engine.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { rawRequest, writeApp } from '../helpers.js';
import { ENGINES } from '../support/engines.js';
import { WRITE_HEADERS, WRITING_APP, writers } from '../support/writers.js';

const BIN = fileURLToPath(new URL('../../bin/laneway', import.meta.url));
const WAIT_MS = 60_000;
const ROUNDS = 3;

interface Line {
  type?: string;
  message?: string;
  code?: string;
}

/** `laneway serve DIR --workers 2` with its JSON log lines. */
async function serveWorkers(dir: string, databaseUrl: string | undefined) {
  const child = spawn(process.execPath, [BIN, 'serve', dir, '--port', '0', '--log', 'json', '--workers', '2'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, PORT: '', NO_COLOR: '1', DATABASE_URL: databaseUrl ?? '' },
  });
  const lines: Line[] = [];
  let exited = false;
  child.once('exit', () => (exited = true));
  const parse = (text: string): Line => {
    try {
      return JSON.parse(text) as Line;
    } catch {
      return { type: 'text', message: text };
    }
  };
  for (const input of [child.stdout, child.stderr]) createInterface({ input }).on('line', (text) => lines.push(parse(text)));
  const text = () => lines.map((l) => JSON.stringify(l)).join('\n');
  /** The first line from `from` on that `match` accepts. */
  const waitFor = async (match: (l: Line) => boolean, what: string, from = 0): Promise<Line> => {
    const until = Date.now() + WAIT_MS;
    for (;;) {
      const found = lines.slice(from).find(match);
      if (found) return found;
      if (exited || Date.now() > until) throw new Error(`${exited ? 'exited' : `${WAIT_MS / 1000} s passed`} before ${what}:\n${text()}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const listening = (from = 0) =>
    lines.slice(from).flatMap((l) => {
      const m = /^worker (\d+) listening \(pid (\d+)\)$/.exec(l.message ?? '');
      return m ? [{ worker: Number(m[1]), pid: Number(m[2]) }] : [];
    });
  const first = await waitFor((l) => l.type === 'listening', 'listening');
  await waitFor(() => listening().length === 2, 'two workers');
  return { child, lines, text, waitFor, listening, port: Number(new URL(String((first as { url?: string }).url)).port) };
}

const dirs: string[] = [];
const children: Array<{ kill(signal: NodeJS.Signals): boolean; exitCode: number | null }> = [];
after(() => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

for (const engine of ENGINES) {
  describe(`workers starting while the others write, on ${engine.name}`, () => {
    it(`${ROUNDS} workers killed and replaced, then ${ROUNDS} reloads, while 8 clients write: every start succeeds, every answered write succeeds`, async () => {
      const data = await engine.data();
      const dir = writeApp(WRITING_APP);
      dirs.push(dir);
      const s = await serveWorkers(dir, data.databaseUrl);
      children.push(s.child);
      const w = await writers((path, body) => rawRequest(s.port, 'POST', path, WRITE_HEADERS, body));
      let lostAtKills = 0;
      try {
        await w.more(50);
        let pids = s.listening().map((x) => x.pid);
        for (let i = 0; i < ROUNDS; i++) {
          const mark = s.lines.length;
          const victim = pids[i % 2]!;
          process.kill(victim, 'SIGKILL');
          await s.waitFor((l) => l.code === 'LW_SERVE_WORKER_CRASHED', `the crash of pid ${victim}`, mark);
          await s.waitFor(() => s.listening(mark).length === 1, 'the replacement listening', mark);
          pids = pids.map((p) => (p === victim ? s.listening(mark)[0]!.pid : p));
          await w.more(50);
        }
        lostAtKills = w.lost.length;
        for (let i = 0; i < ROUNDS; i++) {
          const mark = s.lines.length;
          s.child.kill('SIGHUP');
          await s.waitFor((l) => /^reloaded: 2 workers on the new build/.test(l.message ?? '') || l.code === 'LW_SERVE_RELOAD_FAILED', 'the reload', mark);
          await w.more(50);
        }
      } finally {
        await w.stop();
        s.child.kill('SIGTERM');
        await new Promise((r) => (s.child.exitCode === null ? s.child.once('exit', r) : r(undefined)));
      }
      assert.deepEqual(w.failures, []);
      // Unanswered: only requests the killed workers held (at most one per client per kill), none during the reloads.
      assert.equal(w.lost.length, lostAtKills, w.lost.join('\n'));
      assert.ok(lostAtKills <= 8 * ROUNDS, w.lost.join('\n'));
      const problems = s.lines.filter((l) => (l.type === 'error' || l.type === 'warning') && l.code !== 'LW_SERVE_WORKER_CRASHED');
      assert.deepEqual(problems, [], 'no start failed, no reload failed');
      assert.equal(s.lines.filter((l) => l.code === 'LW_SERVE_WORKER_CRASHED').length, ROUNDS, 'only the killed workers died');
      assert.equal(s.lines.filter((l) => /^reloaded: 2 workers on the new build/.test(l.message ?? '')).length, ROUNDS);
    });
  });
}
