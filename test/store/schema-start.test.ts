/**
 * What a start does to a database whose schema is already as defined (docs/data.md, "What a start
 * does to the schema"), on both engines: it reads the catalogue and changes nothing — no DDL, no
 * write transaction, no schema lock — so it never waits for, nor holds up, the writes of the
 * instances already serving. What must change is changed without blocking writes (PostgreSQL:
 * CREATE INDEX CONCURRENTLY; an INVALID index left by a failed build is built again), and a field
 * made unique over duplicates is refused naming one duplicate.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { closeAppData, loadApp, openAppData, type DataOptions } from '../../src/app/index.js';
import { UserStore } from '../../src/auth/index.js';
import { ensureImageTables } from '../../src/images/index.js';
import { ensureMailTables } from '../../src/mail/index.js';
import { loadSecret, VisitorStore } from '../../src/session/index.js';
import { layoutSchema, openSqlite, syncSchema, type Engine, type Reader, type SchemaSession, type Writer } from '../../src/store/index.js';
import { openPostgres } from '../../src/store/postgres.js';
import { writeApp } from '../helpers.js';
import { ENGINES } from '../support/engines.js';

const APP = {
  '📦/🌐Tally.yaml': 'name:\n  type: string\n  unique: true\ncount: integer\n',
  '📦/🌐Mark.yaml': 'label: string\nat: timestamp\n',
  'marks/POST.js': "import {Mark} from '📦';\nnew Mark().label('x').at(Date.now());\n({});\n",
};

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** `engine`, noting every statement and every transaction or lock it is asked for in `log`. */
function recording(engine: Engine, log: string[]): Engine {
  const reads = <R extends Pick<Reader, 'all'>>(r: R): Reader => ({ all: (sql, params) => (log.push(sql), r.all(sql, params)) });
  const writer = (w: Writer): Writer => ({ ...reads(w), run: (sql, params) => (log.push(sql), w.run(sql, params)), commit: () => w.commit(), rollback: () => w.rollback() });
  const session = (s: SchemaSession): SchemaSession => ({
    all: (sql, params) => (log.push(sql), s.all(sql, params)),
    run: (sql) => (log.push(sql), s.run(sql)),
    transaction: (fn) => (log.push('(transaction)'), s.transaction((w) => fn(writer(w)))),
  });
  return {
    dialect: engine.dialect,
    reader: reads(engine.reader),
    begin: async (options) => (log.push('(begin)'), writer(await engine.begin(options))),
    withSchemaLock: (fn) => (log.push('(schema lock)'), engine.withSchemaLock((w) => fn(writer(w)))),
    withSchemaSession: (fn) => (log.push('(schema session)'), engine.withSchemaSession((s) => fn(session(s)))),
    close: () => engine.close(),
  };
}

/** Opens the app's database by itself (not through an app), as AppStore.open does. */
async function openEngine(dir: string, data: DataOptions): Promise<Engine> {
  return data.databaseUrl ? openPostgres(data.databaseUrl) : openSqlite(join(dir, '.laneway', 'laneway.db'));
}

/** Everything a start does to the schema: the models' tables, then Laneway's own. */
async function startUp(engine: Engine, dir: string): Promise<void> {
  const app = loadApp(dir);
  await syncSchema(engine, layoutSchema(app.data!.schema));
  await new VisitorStore(engine).ensure();
  await loadSecret(engine, {});
  await ensureMailTables(engine);
  await ensureImageTables(engine);
  await new UserStore(engine).ensure();
}

for (const engine of ENGINES) {
  describe(`a start on an unchanged schema, on ${engine.name}`, () => {
    it('reads the catalogue and nothing else: no DDL, no transaction, no schema lock', async () => {
      const data = await engine.data();
      const dir = writeApp(APP);
      dirs.push(dir);
      const first = await openEngine(dir, data);
      try {
        await startUp(first, dir);
      } finally {
        await first.close();
      }
      const log: string[] = [];
      const again = recording(await openEngine(dir, data), log);
      try {
        await startUp(again, dir);
      } finally {
        await again.close();
      }
      assert.ok(log.length > 0);
      assert.deepEqual(
        log.filter((sql) => !/^SELECT /.test(sql)),
        [],
        'only SELECTs',
      );
      assert.deepEqual(
        log.filter((sql) => !/\b(pg_catalog|sqlite_master)\b/.test(sql)),
        ['SELECT "model", "columns" FROM "lw__schema"', 'SELECT "value" FROM "lw__meta" WHERE "key" = ' + (engine.name === 'sqlite' ? '?' : '$1')],
        'besides the catalogue, the applied schema and the secret',
      );
    });

    it('starts while another connection holds what a writing request holds on every table', async () => {
      const data = await engine.data();
      const dir = writeApp(APP);
      dirs.push(dir);
      let app = loadApp(dir);
      await openAppData(app, data);
      await closeAppData(app);
      let release: () => Promise<void>;
      if (engine.name === 'postgres') {
        const client = new pg.Client({ connectionString: data.databaseUrl });
        await client.connect();
        await client.query('BEGIN');
        const tables = await client.query<{ relname: string }>("SELECT relname FROM pg_class WHERE relkind = 'r' AND relname LIKE 'lw\\_%' AND relnamespace = 'public'::regnamespace");
        assert.ok(tables.rows.length >= 8, 'the models\' tables and Laneway\'s own');
        for (const t of tables.rows) await client.query(`LOCK TABLE "${t.relname}" IN ROW EXCLUSIVE MODE`);
        release = async () => {
          await client.query('ROLLBACK');
          await client.end();
        };
      } else {
        // SQLite: a writer of another process holds the file's write lock.
        const db = new Database(join(dir, '.laneway', 'laneway.db'));
        db.exec('BEGIN IMMEDIATE');
        release = async () => {
          db.exec('ROLLBACK');
          db.close();
        };
      }
      try {
        app = loadApp(dir);
        let timer: NodeJS.Timeout | undefined;
        const opened = await Promise.race([
          openAppData(app, data).then(() => 'opened'),
          new Promise<string>((resolve) => (timer = setTimeout(() => resolve('still waiting after 8 s'), 8_000))),
        ]);
        clearTimeout(timer);
        assert.equal(opened, 'opened');
      } finally {
        await release();
        await closeAppData(app);
      }
    });

    it('a field made unique over duplicates is refused naming a duplicate; once they differ, the index is built', async () => {
      const data = await engine.data();
      const dir = writeApp({ '📦/🌐Tally.yaml': APP['📦/🌐Tally.yaml'], '📦/🌐Mark.yaml': 'label: string\n' });
      dirs.push(dir);
      let app = loadApp(dir);
      await openAppData(app, data);
      await closeAppData(app);
      const db = await openEngine(dir, data);
      const p = engine.name === 'sqlite' ? ['?', '?'] : ['$1', '$2'];
      try {
        const w = await db.begin();
        for (const [id, label] of [['m1', 'same'], ['m2', 'same'], ['m3', 'other']]) {
          await w.run(`INSERT INTO "lw_Mark" ("id", "created", "modified", "f_label") VALUES (${p[0]}, 1, 1, ${p[1]})`, [id!, label!]);
        }
        await w.commit();
        writeFileSync(join(dir, '📦/🌐Mark.yaml'), 'label:\n  type: string\n  unique: true\n');
        app = loadApp(dir);
        await assert.rejects(openAppData(app, data), (e: Error & { code?: string }) => {
          assert.equal(e.code, 'LW_STORE_MIGRATION');
          assert.match(e.message, /^Mark\.label is now unique, but records already share values of it: "same" in records m1 and m2\. Make them distinct/);
          return true;
        });
        if (engine.name === 'postgres') {
          // What a build that failed (or was interrupted) leaves: an INVALID index of that name.
          await assert.rejects(Promise.resolve(db.reader.all('CREATE UNIQUE INDEX CONCURRENTLY "lw_Mark_label_u" ON "lw_Mark" ("f_label")', [])));
          assert.deepEqual(await db.reader.all(`SELECT indisvalid FROM pg_index WHERE indexrelid = '"lw_Mark_label_u"'::regclass`, []), [[0]]);
        }
        const fix = await db.begin();
        await fix.run(`UPDATE "lw_Mark" SET "f_label" = 'third' WHERE "id" = 'm2'`, []);
        await fix.commit();
        app = loadApp(dir);
        await openAppData(app, data);
        await closeAppData(app);
        const dup = await db.begin();
        await assert.rejects(
          async () => {
            await dup.run(`INSERT INTO "lw_Mark" ("id", "created", "modified", "f_label") VALUES ('m4', 1, 1, 'same')`, []);
            await dup.commit();
          },
          (e: Error & { code?: string }) => e.code === 'LW_STORE_UNIQUE',
        );
        await dup.rollback();
        if (engine.name === 'postgres') {
          assert.deepEqual(await db.reader.all(`SELECT indisvalid FROM pg_index WHERE indexrelid = '"lw_Mark_label_u"'::regclass`, []), [[1]]);
        }
      } finally {
        await db.close();
      }
    });
  });
}

describe('a change that has to wait for a table that a long transaction writes, on postgres', () => {
  it('gives up each lock wait after a short time and tries again: the writes queued behind it go on; it is applied once the table is free', async () => {
    const data = await ENGINES.find((e) => e.name === 'postgres')!.data();
    const dir = writeApp({ '📦/🌐Mark.yaml': 'label: string\n' });
    dirs.push(dir);
    let app = loadApp(dir);
    await openAppData(app, data);
    await closeAppData(app);
    const long = new pg.Client({ connectionString: data.databaseUrl });
    const other = new pg.Client({ connectionString: data.databaseUrl });
    await Promise.all([long.connect(), other.connect()]);
    try {
      await long.query('BEGIN');
      await long.query(`INSERT INTO "lw_Mark" ("id", "created", "modified", "f_label") VALUES ('long', 1, 1, 'x')`);
      writeFileSync(join(dir, '📦/🌐Mark.yaml'), 'label: string\nnote:\n  type: string\n  optional: true\n');
      app = loadApp(dir);
      const opening = openAppData(app, data);
      let failed: unknown;
      opening.catch((e) => (failed = e));
      // Writes of other requests, one after the other, while the long transaction holds the table for 2 s.
      const committed = new Promise((r) => setTimeout(r, 2_000)).then(() => long.query('COMMIT'));
      const slowest: number[] = [];
      const until = Date.now() + 2_500;
      for (let i = 0; Date.now() < until; i++) {
        const t = Date.now();
        await other.query(`INSERT INTO "lw_Mark" ("id", "created", "modified", "f_label") VALUES ($1, 1, 1, 'y')`, [`w${i}`]);
        slowest.push(Date.now() - t);
        await new Promise((r) => setTimeout(r, 20));
      }
      await committed;
      await opening;
      assert.equal(failed, undefined);
      assert.ok(Math.max(...slowest) < 1_500, `a write waited ${Math.max(...slowest)} ms for the schema change`);
      const cols = await other.query(`SELECT column_name FROM information_schema.columns WHERE table_name = 'lw_Mark' AND column_name = 'f_note'`);
      assert.equal(cols.rows.length, 1);
    } finally {
      await closeAppData(app);
      await Promise.all([long.end(), other.end()]);
    }
  });
});
