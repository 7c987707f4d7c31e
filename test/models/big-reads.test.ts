/**
 * Reading a big table (docs/queries.md "What a query reads", docs/security.md "Bounded reads"), on
 * both engines: every statement a query sends has a LIMIT and answers at most one chunk of rows; a
 * long read lets other requests be served between its chunks; `all().filter(fn)` keeps only what
 * the filter keeps and is charged to the request's budget; an unfiltered `all()` stops at the
 * array-length limit. The tables are filled with SQL directly (not through HTTP), for speed.
 *
 * The only time bound is a generous one about a freeze: a light request sent while a heavy one
 * reads must be answered within LIGHT_MS.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { closeAppData, loadApp, openAppData, type App } from '../../src/app/index.js';
import type { DataOptions } from '../../src/app/services/data.js';
import { createServer } from '../../src/http/index.js';
import { hierarchySortKey } from '../../src/models/index.js';
import type { Row, SqlValue } from '../../src/store/index.js';
import { rawRequest, writeApp, type Response } from '../helpers.js';
import { ENGINES, type EngineCase } from '../support/engines.js';

/** Records of the big table: enough that reading them at once held the process for seconds. */
const BIG = 200_000;
/** Records of the ordered models: a few chunks (of 1,000). */
const SMALL = 2_500;
/** A light request answered later than this while another request reads is a freeze. */
const LIGHT_MS = 1_000;

const MODELS = {
  '📦/🌐Item.yaml': 'n: integer\n',
  // Natural order by an optional field (records without a rank first), then creation.
  '📦/🌐Entry.yaml': 'rank?:\n  type: integer\n  order: true\n',
  '📦/🌐Step.yaml': 'hierarchy: hierarchy\n',
  '📦/🌐Box.yaml': 'label: string\n',
  '📦/Box/🌐Part.yaml': 'n: integer\n',
};

const APP = {
  ...MODELS,
  'filter/GET.js': "import {Item} from '📦';\nItem.all().filter((i) => i.n % 100000 == 7).map((i) => i.n);\n",
  'first/GET.js': "import {Item} from '📦';\nItem.all().filter((i) => i.n % 10 == 3).limit(2).map((i) => i.n);\n",
  'all/GET.js': "import {Item} from '📦';\nItem.all();\n",
  'capped/GET.js': "import {Item} from '📦';\nItem.n_gte(0).map((i) => i.n).count();\n",
  'count/GET.js': "import {Item} from '📦';\nItem.all().count();\n",
  'list.html': "<!--TEMPLATE mustache-->\n{{% import {Item} from '📦' }}<ol>{{#Item.all as i}}<li>{{i.n}}</li>{{/Item.all}}</ol>",
  'light/GET.js': '({ok: true});\n',
  'entries/GET.js': "import {Entry} from '📦';\n({asc: Entry.all().map((e) => e.id), desc: Entry.all().desc().map((e) => e.id), some: Entry.all().limit(1500).map((e) => e.id), threes: Entry.all().filter((e) => e.rank == 3).map((e) => e.id)});\n",
  'boxes/GET.js': "import {Box, Part} from '📦';\n({first: Box.grouping(Part.anyBox()).map((g) => [g.box.label, g.part.map((p) => p.n)]), most: Box.grouping(Part.anyBox().limit(1500)).map((g) => g.part.length), last: Box.grouping(Part.anyBox().desc().limit(2)).map((g) => g.part.map((p) => p.n))});\n",
  // A write request reads in chunks through its transaction (PostgreSQL: rows locked, FOR UPDATE).
  'entries/POST.js': "import {Entry} from '📦';\n({threes: Entry.all().filter((e) => e.rank == 3).map((e) => e.id), count: Entry.all().desc().map((e) => e.id).count()});\n",
  'steps/GET.js': "import {Step} from '📦';\n({asc: Step.all().map((s) => s.id), desc: Step.all().desc().map((s) => s.id)});\n",
  // Enough CPU time that reading every record is possible: what stops a read is then its size.
  '🎛.yaml': 'limits:\n  cpu-ms: 20000\n',
};

/**
 * The same reads with the default CPU time (100 ms) and 2 MiB of memory: the rows of each chunk are
 * charged to it, so reading the big table passes it on both engines (on SQLite the CPU time may
 * run out first: reading is done on the request's clock there).
 */
const STRICT = { ...MODELS, 'filter/GET.js': APP['filter/GET.js'], 'light/GET.js': APP['light/GET.js'], '🎛.yaml': 'limits:\n  memory-mb: 2\n' };

interface Running {
  app: App;
  port: number;
  close(): Promise<void>;
}

async function start(files: Record<string, string>, data: DataOptions): Promise<Running> {
  const dir = writeApp(files);
  const app = loadApp(dir);
  await openAppData(app, data);
  const server = createServer(app, { log: 'off' });
  const { port } = await server.listen(0, '127.0.0.1');
  return {
    app,
    port,
    async close() {
      await server.close();
      await closeAppData(app);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Every statement the app's store runs through its reader, with the number of rows it answered. */
function recordReads(app: App): Array<{ sql: string; rows: number }> {
  const reader = app.data!.store!.engine.reader;
  const log: Array<{ sql: string; rows: number }> = [];
  const all = reader.all.bind(reader);
  (reader as { all: typeof reader.all }).all = (sql: string, params: readonly SqlValue[]) => {
    const r = all(sql, params);
    const note = (rows: Row[]) => {
      log.push({ sql, rows: rows.length });
      return rows;
    };
    return r instanceof Promise ? r.then(note) : note(r);
  };
  return log;
}

/** Inserts rows into a table, with SQL straight to the database. */
interface Filler {
  insert(table: string, columns: string[], rows: SqlValue[][]): Promise<void>;
  /** BIG Items, n = 0…BIG-1, created in that order. */
  items(): Promise<void>;
  close(): Promise<void>;
}

const T0 = 1_700_000_000_000;
const idOf = (prefix: string, i: number) => prefix + String(i).padStart(16, '0');

function sqliteFiller(dataDir: string): Filler {
  const db = new Database(join(dataDir, 'laneway.db'));
  const insert = async (table: string, columns: string[], rows: SqlValue[][]) => {
    const st = db.prepare(`INSERT INTO "${table}" (${columns.map((c) => `"${c}"`).join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`);
    db.transaction(() => {
      for (const r of rows) st.run(...r);
    })();
  };
  return {
    insert,
    async items() {
      const st = db.prepare('INSERT INTO "lw_Item" ("id", "created", "modified", "f_n") VALUES (?, ?, ?, ?)');
      db.transaction(() => {
        for (let i = 0; i < BIG; i++) st.run(idOf('itm_', i), T0 + i, T0 + i, i);
      })();
    },
    async close() {
      db.close();
    },
  };
}

async function postgresFiller(url: string): Promise<Filler> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return {
    async insert(table, columns, rows) {
      for (let at = 0; at < rows.length; at += 500) {
        const part = rows.slice(at, at + 500);
        const values = part.map((_, r) => `(${columns.map((__, c) => `$${r * columns.length + c + 1}`).join(', ')})`).join(', ');
        await client.query(`INSERT INTO "${table}" (${columns.map((c) => `"${c}"`).join(', ')}) VALUES ${values}`, part.flat());
      }
    },
    async items() {
      await client.query(
        `INSERT INTO "lw_Item" ("id", "created", "modified", "f_n") SELECT 'itm_' || lpad(i::text, 16, '0'), ${T0} + i, ${T0} + i, i FROM generate_series(0, ${BIG - 1}) AS s(i)`,
      );
      await client.query('ANALYZE "lw_Item"');
    },
    async close() {
      await client.end();
    },
  };
}

/** Sends `path` and, once it is being answered, the light request: both answers, and how long the light one took. */
async function whileReading(port: number, path: string): Promise<{ heavy: Response; light: Response; lightMs: number }> {
  const heavy = rawRequest(port, 'GET', path);
  // Let the heavy request reach its read (it is parsed and dispatched within a few milliseconds).
  await new Promise((r) => setTimeout(r, 30));
  const t = performance.now();
  const light = await rawRequest(port, 'GET', '/light');
  const lightMs = performance.now() - t;
  return { heavy: await heavy, light, lightMs };
}

const selectsOf = (log: Array<{ sql: string; rows: number }>, table: string) => log.filter((e) => e.sql.startsWith('SELECT') && e.sql.includes(`FROM "${table}"`));

function suite(engine: EngineCase): void {
  describe(`reading big tables on ${engine.name}`, () => {
    let roomy: Running;
    let strict: Running;
    let log: Array<{ sql: string; rows: number }>;
    let dataDir: string | undefined;
    const entries: Array<{ id: string; rank: number | null; created: number }> = [];
    const steps: Array<{ id: string; value: string; key: string; created: number }> = [];

    before(async () => {
      const data = await engine.data();
      if (!data.databaseUrl) dataDir = mkdtempSync(join(tmpdir(), 'laneway-big-'));
      const options: DataOptions = { ...data, ...(dataDir ? { dataDir } : {}) };
      roomy = await start(APP, options);
      const fill = data.databaseUrl ? await postgresFiller(data.databaseUrl) : sqliteFiller(dataDir!);
      try {
        await fill.items();
        // Ranks with many ties and records without one; created times not in id order.
        for (let i = 0; i < SMALL; i++) entries.push({ id: idOf('ent_', (i * 7919) % SMALL), rank: i % 7 === 0 ? null : i % 13, created: T0 + Math.floor(i / 3) });
        await fill.insert('lw_Entry', ['id', 'created', 'modified', 'f_rank'], entries.map((e) => [e.id, e.created, e.created, e.rank]));
        for (let i = 0; i < SMALL; i++) {
          const h = `/${i % 50}/${i % 3 === 0 ? '' : `${i % 11}/`}`;
          steps.push({ id: idOf('stp_', i), value: h, key: hierarchySortKey(h), created: T0 + i });
        }
        // Two boxes of SMALL parts each, their parts created alternately.
        await fill.insert('lw_Box', ['id', 'created', 'modified', 'f_label'], [[idOf('box_', 0), T0, T0, 'a'], [idOf('box_', 1), T0 + 1, T0 + 1, 'b']]);
        const parts: SqlValue[][] = [];
        for (let i = 0; i < 2 * SMALL; i++) parts.push([idOf('prt_', i), T0 + i, T0 + i, idOf('box_', i % 2), i]);
        await fill.insert('lw_Part', ['id', 'created', 'modified', 'container', 'f_n'], parts);
        await fill.insert('lw_Step', ['id', 'created', 'modified', 'f_hierarchy', 'k_hierarchy'], steps.map((s) => [s.id, s.created, s.created, s.value, s.key]));
      } finally {
        await fill.close();
      }
      strict = await start(STRICT, options);
      log = recordReads(roomy.app);
    });

    after(async () => {
      await roomy?.close();
      await strict?.close();
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    });

    it('all().filter(fn) reads in chunks while other requests are served, and answers what the filter kept', async () => {
      log.length = 0;
      const { heavy, light, lightMs } = await whileReading(roomy.port, '/filter');
      assert.equal(light.status, 200);
      assert.ok(lightMs < LIGHT_MS, `the light request waited ${Math.round(lightMs)} ms`);
      assert.equal(heavy.status, 200, heavy.text.slice(0, 300));
      assert.deepEqual(JSON.parse(heavy.text), [7, 100007]);
      const reads = selectsOf(log, 'lw_Item');
      assert.ok(reads.length >= BIG / 1000, `${reads.length} reads`);
      for (const r of reads) {
        assert.match(r.sql, / LIMIT /);
        assert.ok(r.rows <= 1000, `one statement answered ${r.rows} rows`);
      }
    });

    it('with a small budget, all().filter(fn) over the big table ends with a limit (503), never a freeze', async () => {
      const { heavy, light, lightMs } = await whileReading(strict.port, '/filter');
      assert.equal(light.status, 200);
      assert.ok(lightMs < LIGHT_MS, `the light request waited ${Math.round(lightMs)} ms`);
      assert.equal(heavy.status, 503, heavy.text.slice(0, 300));
    });

    it('an unfiltered all() stops at the array-length limit: in a view and in a script', async () => {
      for (const path of ['/list', '/all']) {
        log.length = 0;
        const { heavy, light, lightMs } = await whileReading(roomy.port, path);
        assert.equal(light.status, 200);
        assert.ok(lightMs < LIGHT_MS, `${path}: the light request waited ${Math.round(lightMs)} ms`);
        assert.equal(heavy.status, 503, `${path}: ${heavy.text.slice(0, 300)}`);
        const reads = selectsOf(log, 'lw_Item');
        const rows = reads.reduce((n, r) => n + r.rows, 0);
        // At most array-length (100,000) records and the chunk that passed it.
        assert.ok(rows <= 101_000, `${path}: ${rows} rows read`);
        for (const r of reads) assert.ok(r.rows <= 1000, `${path}: one statement answered ${r.rows} rows`);
      }
    });

    it('a filter followed by limit(n) stops reading once it has n records; the unordered cap and count() read no more than they need', async () => {
      log.length = 0;
      assert.deepEqual(JSON.parse((await rawRequest(roomy.port, 'GET', '/first')).text), [3, 13]);
      assert.equal(selectsOf(log, 'lw_Item').length, 1);
      log.length = 0;
      assert.equal((await rawRequest(roomy.port, 'GET', '/capped')).text, '100');
      assert.deepEqual(selectsOf(log, 'lw_Item').map((r) => r.rows), [100]);
      assert.equal((await rawRequest(roomy.port, 'GET', '/count')).text, String(BIG));
    });

    it('grouping reads the children in chunks too, and each group keeps its first n', async () => {
      log.length = 0;
      const g = JSON.parse((await rawRequest(roomy.port, 'GET', '/boxes')).text);
      const evens = Array.from({ length: SMALL }, (_, i) => 2 * i);
      assert.deepEqual(g.first, [['a', evens.slice(0, 100)], ['b', evens.slice(0, 100).map((n) => n + 1)]]);
      assert.deepEqual(g.most, [1500, 1500]);
      assert.deepEqual(g.last, [[2 * SMALL - 2, 2 * SMALL - 4], [2 * SMALL - 1, 2 * SMALL - 3]]);
      const reads = selectsOf(log, 'lw_Part');
      // The first two groupings stop reading once both groups are full; the last reads from the end.
      assert.equal(reads.length, 1 + 3 + 1);
      for (const r of reads) assert.ok(r.rows <= 1000, `one statement answered ${r.rows} rows`);
    });

    it('chunks follow the natural order: an order field with ties and records without a value, a hierarchy, asc and desc', async () => {
      const byRank = [...entries].sort((a, b) => (a.rank === b.rank ? 0 : a.rank === null ? -1 : b.rank === null ? 1 : a.rank - b.rank) || a.created - b.created || (a.id < b.id ? -1 : 1));
      const e = JSON.parse((await rawRequest(roomy.port, 'GET', '/entries')).text);
      assert.equal(e.asc.length, SMALL);
      assert.deepEqual(e.asc, byRank.map((x) => x.id));
      assert.deepEqual(e.desc, byRank.map((x) => x.id).reverse());
      assert.deepEqual(e.some, byRank.slice(0, 1500).map((x) => x.id));
      assert.deepEqual(e.threes, byRank.filter((x) => x.rank === 3).map((x) => x.id));
      const w = await rawRequest(roomy.port, 'POST', '/entries', { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' }, '');
      assert.equal(w.status, 200, w.text.slice(0, 300));
      assert.deepEqual(JSON.parse(w.text), { threes: e.threes, count: SMALL });
      const byKey = [...steps].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0) || a.created - b.created);
      const s = JSON.parse((await rawRequest(roomy.port, 'GET', '/steps')).text);
      assert.deepEqual(s.asc, byKey.map((x) => x.id));
      assert.deepEqual(s.desc, byKey.map((x) => x.id).reverse());
    });
  });
}

for (const engine of ENGINES) suite(engine);
