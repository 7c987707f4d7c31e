/**
 * A second instance that starts on a database already serving writes (docs/deploy.md, rolling
 * restarts; docs/data.md, "What a start does to the schema"): on both engines, 20 starts of an
 * in-process instance (loadApp + openAppData, as test/helpers.ts starts one) while 8 clients write
 * through the first one. Every start succeeds and no write fails: a start on an unchanged schema
 * takes no lock that a write waits for, so neither side can deadlock with the other. The same with
 * real processes (a worker replaced, a reload): test/cli/start-while-writing.test.ts.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { closeAppData, loadApp, openAppData, type DataOptions } from '../../src/app/index.js';
import { serve } from '../helpers.js';
import { ENGINES } from '../support/engines.js';
import { WRITE_HEADERS, WRITING_APP, writers } from '../support/writers.js';

/**
 * Serves the app and runs `starts` (given the app's directory, and a wait for `n` more writes)
 * while 8 clients write through it; then no write may have failed.
 */
async function whileWriting(data: DataOptions, starts: (dir: string, writes: (n: number) => Promise<void>) => Promise<void>): Promise<void> {
  const s = await serve(WRITING_APP, { data });
  const w = await writers((path, body) => s.request('POST', path, WRITE_HEADERS, body));
  try {
    await w.more(50);
    await starts(s.dir, (n) => w.more(n));
    await w.more(20);
  } finally {
    await w.stop();
    await s.close();
  }
  assert.deepEqual(w.failures, []);
  assert.deepEqual(w.lost, []);
}

for (const engine of ENGINES) {
  describe(`a second instance starting while the first serves writes, on ${engine.name}`, () => {
    it('20 starts while 8 clients write: every start succeeds, no write fails', async () => {
      const data = await engine.data();
      const starts: string[] = [];
      await whileWriting(data, async (dir, writes) => {
        for (let i = 0; i < 20; i++) {
          const app = loadApp(dir);
          try {
            await openAppData(app, data);
            starts.push('started');
          } catch (e) {
            starts.push(`start ${i + 1}: ${(e as Error).message}`);
          } finally {
            await closeAppData(app);
          }
          // Writes go on meanwhile, and between two starts.
          await writes(5);
        }
      });
      assert.deepEqual(starts, Array(20).fill('started'));
    });

    it('a start that adds a field (a column and its index) while 8 clients write: applied, no write fails', async () => {
      const data = await engine.data();
      await whileWriting(data, async (dir) => {
        // The new version's definitions (the serving instance keeps the ones it loaded).
        writeFileSync(join(dir, '📦/🌐Mark.yaml'), 'label: string\nat: timestamp\nnote:\n  type: string\n  optional: true\n');
        const app = loadApp(dir);
        try {
          await openAppData(app, data);
          assert.deepEqual(
            app.data!.store!.migration.applied.map((c) => `${c.model}: ${c.description}`),
            ['Mark: new field "note"'],
          );
        } finally {
          await closeAppData(app);
        }
      });
    });
  });
}
