/**
 * The data layer (docs/data.md): the store interface, the two engines, the SQL of each dialect,
 * the schema at start, and per-request sessions. `app/` opens one `AppStore` per app and wires
 * sessions to the script runtime's model channel.
 */
import path from 'node:path';
import type { ModelSchema } from '../models/index.js';
import { syncSchema, type SyncResult } from './migrate.js';
import { DataSession } from './session.js';
import { openSqlite } from './sqlite.js';
import { markDuplicateProfiles } from './profiles.js';
import { layoutSchema, type TableLayout } from './tables.js';
import type { Engine, Writer } from './types.js';

export { StoreError, type Dialect, type Engine, type Reader, type Writer, type Row, type SqlValue, type SchemaSession } from './types.js';
export { DataSession, WRITE_LIMIT, UNORDERED_CAP, UNORDERED_MAX, type QuerySpec, type WriteOp, type FilterOp } from './session.js';
export { layoutSchema, type TableLayout, type FieldLayout } from './tables.js';
export { syncSchema, type SchemaChange, type SyncResult } from './migrate.js';
export { openSqlite } from './sqlite.js';
export { ensureTables, readCatalog, type TableSpec } from './catalog.js';

export interface StoreOptions {
  /** `postgres://…` selects PostgreSQL; otherwise SQLite in `dataDir`. */
  databaseUrl?: string | undefined;
  /**
   * A nested site's data namespace: its own SQLite file (`laneway.<namespace>.db`) or its own
   * PostgreSQL schema (`lw_<namespace>`), beside the parent's data.
   */
  namespace?: string | undefined;
  /** The data directory (SQLite file `laneway.db` inside). */
  dataDir: string;
  /** Apply narrowing schema changes (`laneway migrate --accept`). */
  accept?: boolean;
}

/** The database of one app: its engine, table layouts, and sessions for requests. */
export class AppStore {
  readonly engine: Engine;
  readonly tables: Map<string, TableLayout>;
  readonly migration: SyncResult;
  /** What the start found and could not change, for its log (users with two profiles: profiles.ts). */
  readonly notices: string[];
  readonly #sql = new Map<string, string>();

  private constructor(engine: Engine, tables: Map<string, TableLayout>, migration: SyncResult, notices: string[]) {
    this.engine = engine;
    this.tables = tables;
    this.migration = migration;
    this.notices = notices;
  }

  static async open(schema: ModelSchema, options: StoreOptions): Promise<AppStore> {
    const url = options.databaseUrl;
    let engine: Engine;
    if (url && /^postgres(ql)?:\/\//.test(url)) {
      const { openPostgres } = await import('./postgres.js');
      engine = await openPostgres(url, options.namespace ? { schema: 'lw_' + options.namespace.replace(/-/g, '_') } : {});
    } else {
      engine = openSqlite(path.join(options.dataDir, options.namespace ? `laneway.${options.namespace}.db` : 'laneway.db'));
    }
    const tables = layoutSchema(schema);
    try {
      const notices = await markDuplicateProfiles(engine, tables);
      const migration = await syncSchema(engine, tables, { accept: options.accept ?? false });
      return new AppStore(engine, tables, migration, notices);
    } catch (e) {
      await engine.close();
      throw e;
    }
  }

  /** A read-only session; `what` names the request kind in the error a write gets ("a GET script"). */
  read(what: string): DataSession {
    return new DataSession(this.engine, this.tables, this.#sql, undefined, what);
  }

  /** A session holding a write transaction; commit or roll back through the returned writer. */
  async begin(): Promise<{ session: DataSession; writer: Writer }> {
    const writer = await this.engine.begin({ holdWrites: true });
    return { session: new DataSession(this.engine, this.tables, this.#sql, writer), writer };
  }

  close(): Promise<void> {
    return this.engine.close();
  }
}
export { inTransaction } from './transaction.js';
export { CounterStore, COUNTER_TABLE, type CounterWindow } from './counters.js';
