/**
 * The budget's CPU clock is the running thread's own time (docs/scripting.md "The request budget
 * and its limits"): work on other threads of the process (compression, file I/O, garbage
 * collection, here a Worker that spins) is never charged to the request whose script runs, so a
 * loaded server does not answer 503 to a healthy request.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import { threadCpuMs } from '../../src/script/realm.js';

describe('the budget CPU clock', () => {
  it('does not count the CPU time of other threads', { skip: process.platform !== 'linux' }, async () => {
    const t0 = threadCpuMs();
    const p0 = process.cpuUsage();
    const spin = new Worker('const end = Date.now() + 400; let x = 0; while (Date.now() < end) x++;', { eval: true });
    await new Promise((resolve, reject) => {
      spin.once('exit', resolve);
      spin.once('error', reject);
    });
    const own = threadCpuMs() - t0;
    const p = process.cpuUsage(p0);
    const all = (p.user + p.system) / 1000;
    assert.ok(all >= 300, `the process spent ${all} ms (the worker spun 400 ms)`);
    assert.ok(own < 150, `the main thread was charged ${own} ms for a worker's 400 ms`);
  });

  it('counts the calling thread’s own work, as part of the process’s', async () => {
    const t0 = threadCpuMs();
    const p0 = process.cpuUsage();
    const give = performance.now() + 10_000;
    let own = 0;
    while ((own = threadCpuMs() - t0) < 100 && performance.now() < give);
    const p = process.cpuUsage(p0);
    assert.ok(own >= 100, `10 s of spinning counted as ${own} ms`);
    assert.ok((p.user + p.system) / 1000 >= own * 0.9, 'the thread’s time is part of the process’s');
  });
});
