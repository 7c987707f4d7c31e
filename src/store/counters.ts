/**
 * Counters of fixed time windows, in a table of the app's store (`lw__counter`), for the limits per
 * visitor (src/limits/, docs/security.md "Limits per visitor"). They live where the app's state
 * lives so that every process counts on the same rows: the SQLite file for `--workers` on one
 * machine, PostgreSQL for several machines.
 *
 * A row is one window of one counter of one visitor: `kind` (the limit's key: `writes`,
 * `writes /api/`…), `visitor`, `start` (the window's start, ms since the epoch), `count`, and
 * `expires` (the window's end), by which the sweep deletes windows gone by.
 *
 * A hit adds to the count and reads the sum with no read-modify-write race:
 *
 * - PostgreSQL: one statement in autocommit, `INSERT … ON CONFLICT DO UPDATE SET count = count + n
 *   RETURNING count` (the row lock is held for that statement only, whatever request counts); the
 *   limiter adds a lease of units at once, which the process then spends with no statement
 *   (limits/lease.ts);
 * - SQLite: the same upsert then the read of the row, inside a write transaction (the file's write
 *   lock is held from BEGIN IMMEDIATE to COMMIT, so no other process comes in between): the
 *   request's own transaction when it has one (the count commits or rolls back with its writes),
 *   else one of its own.
 */
import { ensureTables } from './catalog.js';
import type { Engine, Writer } from './types.js';

export const COUNTER_TABLE = 'lw__counter';

const T = `"${COUNTER_TABLE}"`;
const UPSERT = `INSERT INTO ${T} ("kind", "visitor", "start", "count", "expires") VALUES (?, ?, ?, ?, ?) ON CONFLICT ("kind", "visitor", "start") DO UPDATE SET "count" = ${T}."count" + excluded."count"`;
const PG_UPSERT = (UPSERT + ' RETURNING "count"').replace(/\?/g, ((n) => () => `$${++n}`)(0));
const SQLITE_READ = `SELECT "count" FROM ${T} WHERE "kind" = ? AND "visitor" = ? AND "start" = ?`;

/** One counter's window: which counter, whose, and the window's bounds (ms since the epoch). */
export interface CounterWindow {
  kind: string;
  visitor: string;
  start: number;
  expires: number;
}

export class CounterStore {
  readonly engine: Engine;

  constructor(engine: Engine) {
    this.engine = engine;
  }

  /** Creates the table when missing (nothing is locked when it is there: catalog.ts). */
  async ensure(): Promise<void> {
    const int = this.engine.dialect === 'sqlite' ? 'INTEGER' : 'BIGINT';
    const keyed = this.engine.dialect === 'sqlite' ? ' WITHOUT ROWID' : '';
    await ensureTables(this.engine, [
      {
        table: COUNTER_TABLE,
        create:
          `CREATE TABLE IF NOT EXISTS ${T} ("kind" TEXT NOT NULL, "visitor" TEXT NOT NULL, "start" ${int} NOT NULL, "count" ${int} NOT NULL, "expires" ${int} NOT NULL, ` +
          `PRIMARY KEY ("kind", "visitor", "start"))${keyed}`,
        indexes: [{ name: `${COUNTER_TABLE}_expires`, columns: ['expires'], unique: false }],
      },
    ]);
  }

  /**
   * Adds `n` to a window's count and answers the count after it. SQLite: in `tx` when given (the
   * request's transaction: synchronous), else in a transaction of its own; PostgreSQL: always one
   * statement of its own (`tx` is not used: the row is not locked for the rest of a request).
   */
  hit(w: CounterWindow, n: number, tx?: Writer): number | Promise<number> {
    const params = [w.kind, w.visitor, w.start, n, w.expires];
    if (this.engine.dialect === 'postgres') {
      return Promise.resolve(this.engine.reader.all(PG_UPSERT, params)).then((rows) => Number(rows[0]?.[0] ?? n));
    }
    const inTx = (t: Writer): number | Promise<number> => {
      const done = t.run(UPSERT, params);
      const read = () => {
        const rows = t.all(SQLITE_READ, [w.kind, w.visitor, w.start]);
        return rows instanceof Promise ? rows.then((r) => Number(r[0]?.[0] ?? n)) : Number(rows[0]?.[0] ?? n);
      };
      return done instanceof Promise ? done.then(read) : read();
    };
    if (tx) return inTx(tx);
    return this.engine.begin().then(async (t) => {
      try {
        const count = await inTx(t);
        await t.commit();
        return count;
      } catch (e) {
        await t.rollback();
        throw e;
      }
    });
  }

  /** Deletes the windows that ended before `now`; returns how many. */
  async sweep(now = Date.now()): Promise<number> {
    const p = this.engine.dialect === 'sqlite' ? '?' : '$1';
    const t = await this.engine.begin();
    try {
      const rows = await t.all(`SELECT COUNT(*) FROM ${T} WHERE "expires" < ${p}`, [now]);
      await t.run(`DELETE FROM ${T} WHERE "expires" < ${p}`, [now]);
      await t.commit();
      return Number(rows[0]?.[0] ?? 0);
    } catch (e) {
      await t.rollback();
      throw e;
    }
  }
}
