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
    // A fixed amount of work (not a time: on a loaded machine the worker may get little CPU).
    const spin = new Worker('let x = 0; for (let i = 0; i < 4e8; i++) x = (x + i) | 0; require("node:worker_threads").parentPort.postMessage(x);', { eval: true });
    await new Promise((resolve, reject) => {
      spin.once('exit', resolve);
      spin.once('error', reject);
    });
    const own = threadCpuMs() - t0;
    const p = process.cpuUsage(p0);
    const all = (p.user + p.system) / 1000;
    assert.ok(all >= 100, `the process spent ${all} ms`);
    assert.ok(own < all / 2, `the main thread was charged ${own} ms of the process's ${all} ms, spent by a worker`);
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
