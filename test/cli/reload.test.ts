/**
 * Reloads and stops under load on keep-alive connections (docs/deploy.md: SIGHUP reloads with no
 * dropped request; SIGTERM lets requests finish), with the real server process on both engines:
 * eight clients, each with a keep-alive connection of its own (node:http Agent keepAlive), send
 * GETs and POSTs one after the other while the server is reloaded three times (SIGHUP), with the
 * supervisor (`--workers 2`) and in one process (`--workers 1`); then stopped (SIGTERM).
 *
 * A worker that stops (or a process that reloads) answers the request in flight on each
 * connection, with `Connection: close` once it is stopping, and closes a connection only after
 * such an answer or once its keep-alive time is over: a request sent on a kept connection is
 * answered, never reset. The loops are bounded in count and in time.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, request as httpRequest } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeApp } from '../helpers.js';
import { ENGINES } from '../support/engines.js';
import { serve, type Served } from '../support/served-process.js';

const APP = {
  '📦/🌐Entry.yaml': 'title:\n  type: string\n  unique: true\n',
  'index.html': '<!doctype html><title>Reload</title><p>reload</p>\n',
  'entries/POST.js': "import {Entry} from '📦';\nimport {title} from 'form';\nconst entry = new Entry().title(title);\n({ id: entry.id, title: entry.title });\n",
  'api/🖥status.js': "import {Entry} from '📦';\n({ ok: true, latest: Entry.all().desc().limit(3).map((e) => e.title) });\n",
};
const CLIENTS = 8;
/** Each client's requests at most, and the time the loops may take at most. */
const MAX_REQUESTS = 20_000;
const MAX_LOOP_MS = 120_000;

interface Outcome {
  ok: boolean;
  reused: boolean;
  detail: string;
}

/** One request on the client's agent: whether it was answered as expected, and on a kept connection or not. */
function send(port: number, agent: Agent, method: 'GET' | 'POST', n: string): Promise<Outcome> {
  return new Promise((resolve) => {
    const body = method === 'POST' ? `title=${n}` : undefined;
    const path = method === 'POST' ? '/entries' : '/api/status';
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (body) Object.assign(headers, { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Length': String(body.length) });
    let reused = false;
    const req = httpRequest({ host: '127.0.0.1', port, method, path, agent, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => {
        const expected = method === 'POST' ? text.includes(`"title":"${n}"`) : text.includes('"ok":true');
        resolve({ ok: res.statusCode === 200 && expected, reused, detail: `${method} ${path}: ${res.statusCode} ${text.slice(0, 120)}` });
      });
      res.on('error', (err) => resolve({ ok: false, reused, detail: `${method} ${path}: ${err.message}` }));
    });
    req.on('socket', () => (reused = req.reusedSocket));
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ ok: false, reused, detail: `${method} ${path} (${reused ? 'kept' : 'new'} connection): ${err.code ?? err.message}` }));
    req.setTimeout(20_000, () => req.destroy(new Error('no answer within 20 s')));
    req.end(body);
  });
}

/** Eight clients sending until `stop()`, or their bound; every failure with what it was. */
function load(s: Served, tag: string) {
  let stopped = false;
  let answered = 0;
  let kept = 0;
  const failures: Array<Outcome & { at: number }> = [];
  const deadline = Date.now() + MAX_LOOP_MS;
  const clients = Array.from({ length: CLIENTS }, async (_, c) => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      for (let i = 0; i < MAX_REQUESTS && !stopped && Date.now() < deadline; i++) {
        const r = await send(s.port, agent, i % 2 ? 'POST' : 'GET', `${tag}-${c}-${i}`);
        if (r.ok) answered++;
        else failures.push({ ...r, at: Date.now() });
        if (r.reused) kept++;
      }
    } finally {
      agent.destroy();
    }
  });
  return {
    failures,
    get answered() {
      return answered;
    },
    get kept() {
      return kept;
    },
    /** Resolves once `n` more requests have been answered (or the loops ended). */
    async more(n: number) {
      const target = answered + n;
      while (answered < target && !stopped && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    },
    async stop() {
      stopped = true;
      await Promise.all(clients);
    },
  };
}

for (const engine of ENGINES) {
  describe(`reloads and stops under keep-alive load (${engine.name})`, () => {
    for (const workers of [2, 1]) {
      it(`--workers ${workers}: three SIGHUPs, eight keep-alive clients, no request fails; SIGTERM then resets no kept connection`, async () => {
        const dir = writeApp(APP);
        const data = mkdtempSync(join(tmpdir(), 'laneway-reload-data-'));
        try {
          const url = (await engine.data()).databaseUrl;
          const s = await serve(dir, ['--workers', String(workers), '--data', data], url ? { DATABASE_URL: url } : {});
          const l = load(s, `${engine.name}${workers}`);
          await l.more(100);
          for (let reload = 1; reload <= 3; reload++) {
            const mark = s.lines.length;
            s.child.kill('SIGHUP');
            if (workers > 1) {
              await s.waitFor((x) => /^reloaded: \d+ workers on the new build/.test(x.message ?? ''), `reload ${reload}`, mark);
              // Every old worker has drained and exited.
              await s.waitFor((x) => s.lines.slice(mark).filter((y) => / stopped \(code 0\)$/.test(y.message ?? '')).length >= workers, `reload ${reload}: the old workers stopped`, mark);
            } else {
              await s.waitFor((x) => x.message === 'reloaded', `reload ${reload}`, mark);
            }
            await l.more(200);
          }
          assert.deepEqual([...l.failures], [], `failed during the reloads (of ${l.answered} answered, ${l.kept} on kept connections)`);
          assert.ok(l.kept > l.answered / 2, `most requests went on kept connections (${l.kept} of ${l.answered})`);

          // SIGTERM with the load running: a request on a kept connection is answered (with
          // Connection: close); a new connection is refused once the port is closed (or closed
          // unread, when it came as the port closed).
          const before = l.failures.length;
          s.child.kill('SIGTERM');
          assert.equal(await s.exited, 0);
          await l.stop();
          const reset = l.failures.slice(before).filter((f) => f.reused);
          assert.deepEqual(reset, [], 'no request on a kept connection is reset by the stop');
          for (const f of l.failures.slice(before)) assert.match(f.detail, /\(new connection\): (ECONNREFUSED|ECONNRESET)$/);
        } finally {
          rmSync(dir, { recursive: true, force: true });
          rmSync(data, { recursive: true, force: true });
        }
      });
    }

    it('--workers 1: a request that started before a SIGHUP finishes on the old build, its data still open', async () => {
      const dir = writeApp({ ...APP, 'entries/POST.js': APP['entries/POST.js'].replace('entry.title }', "entry.title, build: 'one' }") });
      const data = mkdtempSync(join(tmpdir(), 'laneway-reload-data-'));
      try {
        const url = (await engine.data()).databaseUrl;
        const s = await serve(dir, ['--workers', '1', '--data', data], url ? { DATABASE_URL: url } : {});
        // The headers now, the body once the reload is done: the request runs on the old build.
        const req = httpRequest({ host: '127.0.0.1', port: s.port, method: 'POST', path: '/entries', agent: false, headers: { Accept: 'application/json', 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Length': '10' } });
        const answer = new Promise<{ status: number; text: string }>((resolve, reject) => {
          req.on('response', (res) => {
            let text = '';
            res.setEncoding('utf8');
            res.on('data', (c: string) => (text += c));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
          });
          req.on('error', reject);
        });
        req.flushHeaders();
        await new Promise((r) => setTimeout(r, 300));
        writeFileSync(join(dir, 'entries', 'POST.js'), APP['entries/POST.js'].replace('entry.title }', "entry.title, build: 'two' }"));
        const mark = s.lines.length;
        s.child.kill('SIGHUP');
        await s.waitFor((x) => x.message === 'reloaded', 'reloaded', mark);
        req.end('title=slow');
        const r = await answer;
        assert.equal(r.status, 200, r.text);
        assert.deepEqual(JSON.parse(r.text), { id: JSON.parse(r.text).id, title: 'slow', build: 'one' });
        // Written: the new build finds it.
        const fresh = await send(s.port, new Agent(), 'GET', 'check');
        assert.ok(fresh.ok, fresh.detail);
        assert.match(fresh.detail, /"slow"/);
        assert.equal(await s.stop(), 0);
      } finally {
        rmSync(dir, { recursive: true, force: true });
        rmSync(data, { recursive: true, force: true });
      }
    });
  });
}
