/**
 * The image worker's leases and sweep, beside the black-box tests of test/images/lifecycle.test.ts:
 * which lease holders are known to be gone (a process of this host that no longer exists), the
 * holder's column added to a table made before it, and a sweep that runs again every
 * `sweepEveryMs`, not only at the start (docs/images.md).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqlite, type Engine } from '../../src/store/index.js';
import { openPostgres } from '../../src/store/postgres.js';
import { startPostgres } from '../support/postgres.js';
import { ensureImageTables, ImageFiles, ImageWorker } from '../../src/images/index.js';
import { holderIsGone, leaseHolder } from '../../src/images/worker.js';

describe('lease holders', () => {
  it('a holder of this host whose process is gone is gone; a live one, or one of another host, is not', () => {
    // A process that ran and exited: its pid no longer exists (until it is reused).
    const exited = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    const dead = Number(exited.stdout);
    assert.ok(dead > 0);
    assert.equal(holderIsGone(leaseHolder('abc', dead)), true);
    assert.equal(holderIsGone(leaseHolder('abc', process.pid)), false, 'this process holds it');
    assert.equal(holderIsGone(leaseHolder('abc', process.ppid)), false, 'a live process holds it');
    assert.equal(holderIsGone(leaseHolder('abc', dead, 'another-host~0~0')), false, 'another host: left to the end of its lease');
    assert.equal(holderIsGone(''), false);
    assert.equal(holderIsGone('not a holder'), false);
  });
});

describe('a table made before leases had holders', () => {
  const engines: Array<{ name: string; open(dir: string): Promise<Engine> }> = [
    { name: 'sqlite', open: async (dir) => openSqlite(join(dir, 'db.sqlite')) },
    { name: 'postgres', open: async () => openPostgres(await (await startPostgres()).createDatabase()) },
  ];
  for (const e of engines) {
    it(`gets the lease_holder column, its rows kept (${e.name})`, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'laneway-image-table-'));
      const engine = await e.open(dir);
      try {
        const int = engine.dialect === 'sqlite' ? 'INTEGER' : 'BIGINT';
        await engine.withSchemaLock(async (w) => {
          await w.run(
            `CREATE TABLE "lw__image" ("id" TEXT PRIMARY KEY, "model" TEXT NOT NULL, "field" TEXT NOT NULL, "public" INTEGER NOT NULL, "state" TEXT NOT NULL, "attached" INTEGER NOT NULL, "created" ${int} NOT NULL, "src" TEXT, "width" INTEGER, "height" INTEGER, "lease_until" ${int}, "error" TEXT)`,
            [],
          );
          await w.run(`INSERT INTO "lw__image" ("id", "model", "field", "public", "state", "attached", "created") VALUES ('AAAAAAAAAAAAAAAAAAAAAA', 'Post', 'image', 1, 'uploaded', 1, 1)`, []);
        });
        await ensureImageTables(engine);
        await ensureImageTables(engine);
        const rows = await engine.reader.all(`SELECT "id", "lease_holder" FROM "lw__image"`, []);
        assert.deepEqual(rows, [['AAAAAAAAAAAAAAAAAAAAAA', null]]);
      } finally {
        await engine.close();
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});

describe('the sweep', () => {
  it('runs again every sweepEveryMs: a temporary file aged after the start is removed by a later pass', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'laneway-image-sweep-'));
    const engine = openSqlite(join(dir, 'db.sqlite'));
    const files = new ImageFiles(join(dir, 'images'));
    try {
      await ensureImageTables(engine);
      const worker = new ImageWorker(engine, files, { log: { info: () => {}, error: () => {} }, timings: { pollMs: 20, sweepEveryMs: 50 } });
      worker.start();
      await worker.kick();
      // Left by a write that died, after the first sweep: only a later one can remove it.
      mkdirSync(join(dir, 'images', 'uploads'), { recursive: true });
      const temp = join(dir, 'images', 'uploads', `.${'d'.repeat(24)}.tmp`);
      writeFileSync(temp, 'x');
      const old = (Date.now() - 2 * 24 * 3_600_000) / 1000;
      utimesSync(temp, old, old);
      for (let i = 0; i < 200 && existsSync(temp); i++) await new Promise((r) => setTimeout(r, 25));
      await worker.stop();
      assert.equal(existsSync(temp), false, 'swept by a pass after the first');
    } finally {
      await engine.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
