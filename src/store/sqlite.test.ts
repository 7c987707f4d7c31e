/** The SQLite engine's shared read snapshot (sqlite.ts): never older than this process's writes. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openSqlite } from './sqlite.js';

const turn = () => new Promise<void>((r) => setImmediate(r));

async function withEngine(fn: (engine: ReturnType<typeof openSqlite>, file: string) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'laneway-sqlite-'));
  const file = join(dir, 'laneway.db');
  const engine = openSqlite(file);
  try {
    await engine.withSchemaLock((w) => {
      w.run('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)', []);
      return Promise.resolve();
    });
    await fn(engine, file);
  } finally {
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const count = (engine: ReturnType<typeof openSqlite>) => Number((engine.reader.all('SELECT COUNT(*) FROM t', []) as unknown[][])[0]![0]);

test('a read after a commit of this process sees it, in the same turn of the event loop', async () => {
  await withEngine(async (engine) => {
    assert.equal(count(engine), 0); // opens the turn's snapshot
    const w = await engine.begin(); // a microtask later: the same turn
    w.run('INSERT INTO t (v) VALUES (?)', ['a']);
    assert.equal(count(engine), 0, 'not committed yet');
    w.commit();
    assert.equal(count(engine), 1);
    const w2 = await engine.begin();
    w2.run('INSERT INTO t (v) VALUES (?)', ['b']);
    w2.rollback();
    assert.equal(count(engine), 1);
  });
});

test("another connection's commit is seen from the next turn on", async () => {
  await withEngine(async (engine, file) => {
    assert.equal(count(engine), 0);
    const other = new Database(file);
    try {
      other.prepare('INSERT INTO t (v) VALUES (?)').run('x');
      await turn();
      assert.equal(count(engine), 1);
    } finally {
      other.close();
    }
  });
});

test('reads keep working after a failed statement and across many turns', async () => {
  await withEngine(async (engine) => {
    assert.throws(() => engine.reader.all('SELECT nope FROM t', []));
    assert.equal(count(engine), 0);
    for (let i = 0; i < 5; i++) {
      const w = await engine.begin();
      w.run('INSERT INTO t (v) VALUES (?)', [String(i)]);
      w.commit();
      await turn();
      assert.equal(count(engine), i + 1);
    }
  });
});
