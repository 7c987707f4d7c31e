/**
 * What the database holds, read from its catalogue (SQLite: sqlite_master and the table_info /
 * index_list / index_info pragmas; PostgreSQL: pg_catalog, in the current schema), and the tables
 * Laneway keeps for itself brought to their definitions from it (docs/data.md, "What a start does
 * to the schema").
 *
 * Reading the catalogue takes no lock that a row write waits for. A start that finds every table
 * and index as defined changes nothing and takes no lock at all; `CREATE … IF NOT EXISTS` is never
 * used to find out (PostgreSQL locks the table against writes before it sees that the index is
 * there). What is missing is made under the schema lock: tables in a short transaction, indexes on
 * tables that hold data with CREATE INDEX CONCURRENTLY on PostgreSQL (writes go on meanwhile).
 */
import { q } from './tables.js';
import { StoreError, type Dialect, type Engine, type Reader, type SchemaSession } from './types.js';

export interface CatalogIndex {
  table: string;
  columns: string[];
  unique: boolean;
  /** False for what a failed CREATE INDEX CONCURRENTLY leaves (PostgreSQL): dropped and built again. */
  valid: boolean;
}

export interface Catalog {
  /** Table name → its columns. */
  tables: Map<string, Set<string>>;
  /** Index name → what it is (the indexes of the primary keys included). */
  indexes: Map<string, CatalogIndex>;
}

export interface IndexSpec {
  name: string;
  columns: string[];
  unique: boolean;
}

/** A table Laneway keeps for itself: the statement that creates it, and its indexes. */
export interface TableSpec {
  table: string;
  create: string;
  indexes: IndexSpec[];
  /** Columns added after the table was first made (`create` has them too): nullable, no default. */
  added?: { column: string; type: string }[];
}

const PG_TABLES =
  'SELECT c.relname, a.attname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace ' +
  'JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped ' +
  "WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') ORDER BY c.relname, a.attnum";
const PG_INDEXES =
  'SELECT i.relname, t.relname, x.indisunique, x.indisvalid, a.attname FROM pg_catalog.pg_index x ' +
  'JOIN pg_catalog.pg_class i ON i.oid = x.indexrelid JOIN pg_catalog.pg_class t ON t.oid = x.indrelid ' +
  'JOIN pg_catalog.pg_namespace n ON n.oid = t.relnamespace ' +
  'CROSS JOIN LATERAL unnest(x.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord) ' +
  'LEFT JOIN pg_catalog.pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum ' +
  'WHERE n.nspname = current_schema() ORDER BY i.relname, k.ord';
const SQLITE_TABLES = "SELECT m.name, p.name FROM sqlite_master m JOIN pragma_table_info(m.name) p WHERE m.type = 'table' ORDER BY m.name, p.cid";
const SQLITE_INDEXES =
  'SELECT l.name, m.name, l."unique", 1, c.name FROM sqlite_master m JOIN pragma_index_list(m.name) l ' +
  "JOIN pragma_index_info(l.name) c WHERE m.type = 'table' ORDER BY l.name, c.seqno";

/** The catalogue as `r` sees it (the store's reader, or a schema session's reads under the lock). */
export async function readCatalog(r: Reader | SchemaSession, dialect: Dialect): Promise<Catalog> {
  const tables = new Map<string, Set<string>>();
  for (const [table, column] of await r.all(dialect === 'sqlite' ? SQLITE_TABLES : PG_TABLES, [])) {
    const name = String(table);
    if (!tables.has(name)) tables.set(name, new Set());
    tables.get(name)!.add(String(column));
  }
  const indexes = new Map<string, CatalogIndex>();
  for (const [index, table, unique, valid, column] of await r.all(dialect === 'sqlite' ? SQLITE_INDEXES : PG_INDEXES, [])) {
    const name = String(index);
    let found = indexes.get(name);
    if (!found) indexes.set(name, (found = { table: String(table), columns: [], unique: Number(unique) === 1, valid: Number(valid) === 1 }));
    // An expression's column (attnum 0) has no name: it never matches a definition.
    found.columns.push(column === null ? '(expression)' : String(column));
  }
  return { tables, indexes };
}

/** Whether the catalogue holds `spec` on `table` as defined (and usable). */
export function indexAsDefined(catalog: Catalog, table: string, spec: IndexSpec): boolean {
  const found = catalog.indexes.get(spec.name);
  return found !== undefined && found.valid && found.table === table && found.unique === spec.unique && found.columns.join('\0') === spec.columns.join('\0');
}

export function createIndexSql(dialect: Dialect, table: string, spec: IndexSpec, concurrently: boolean): string {
  const how = dialect === 'postgres' && concurrently ? 'CONCURRENTLY ' : '';
  return `CREATE ${spec.unique ? 'UNIQUE ' : ''}INDEX ${how}${q(spec.name)} ON ${q(table)} (${spec.columns.map(q).join(', ')})`;
}

/** Drops an index, without blocking writes on PostgreSQL (CONCURRENTLY, outside a transaction). */
export function dropIndex(s: SchemaSession, dialect: Dialect, name: string): Promise<void> {
  return s.run(`DROP INDEX ${dialect === 'postgres' ? 'CONCURRENTLY ' : ''}IF EXISTS ${q(name)}`);
}

/**
 * Builds `spec` on `table`, which exists (and may hold data, written meanwhile): any index of that
 * name not as defined is dropped first. On PostgreSQL the build is concurrent; a build that fails
 * leaves an INVALID index, which is dropped before the error goes on.
 */
export async function buildIndex(s: SchemaSession, dialect: Dialect, catalog: Catalog, table: string, spec: IndexSpec): Promise<void> {
  if (catalog.indexes.has(spec.name)) await dropIndex(s, dialect, spec.name);
  try {
    await s.run(createIndexSql(dialect, table, spec, true));
  } catch (e) {
    if (dialect === 'postgres') await dropIndex(s, dialect, spec.name).catch(() => {});
    throw e;
  }
}

/** Whether the catalogue holds every table of `specs` with every index. */
function tablesAsDefined(catalog: Catalog, specs: readonly TableSpec[]): boolean {
  return specs.every((t) => {
    const columns = catalog.tables.get(t.table);
    return columns !== undefined && (t.added ?? []).every((a) => columns.has(a.column)) && t.indexes.every((i) => indexAsDefined(catalog, t.table, i));
  });
}

/** Errors worth another try: a deadlock, a lock wait given up, a lost connection (not a definition's mistake). */
export function isTransient(e: unknown): boolean {
  return e instanceof StoreError && (e.code === 'LW_STORE_CONFLICT' || e.code === 'LW_STORE_UNAVAILABLE');
}

/** How long schema work at start goes on trying after transient errors. */
const RETRY_FOR_MS = 30_000;

/**
 * Runs `fn` again after a transient error (`isTransient`), with a growing pause, for up to 30 s;
 * then the last error goes on, saying what was being done and how often it was tried.
 */
export async function retrying<T>(what: string, fn: () => Promise<T>): Promise<T> {
  const started = Date.now();
  for (let attempt = 1, wait = 50; ; attempt++, wait = Math.min(wait * 2, 2_000)) {
    try {
      return await fn();
    } catch (e) {
      if (!isTransient(e)) throw e;
      if (Date.now() - started > RETRY_FOR_MS) {
        const err = e as StoreError;
        const out = new StoreError(err.code, `${what} failed ${attempt} times in ${Math.round((Date.now() - started) / 1000)} s; the last time: ${err.message}`, err.constraint);
        throw out;
      }
      await new Promise((r) => setTimeout(r, wait));
    }
  }
}

/**
 * Creates whichever of Laneway's own tables and indexes are missing. Nothing happens, and no lock
 * is taken, when the catalogue has them all.
 */
export async function ensureTables(engine: Engine, specs: readonly TableSpec[]): Promise<void> {
  await retrying("creating Laneway's own tables", async () => {
    if (tablesAsDefined(await readCatalog(engine.reader, engine.dialect), specs)) return;
    await engine.withSchemaSession(async (s) => {
      // Again under the lock: another instance may have made them meanwhile.
      const catalog = await readCatalog(s, engine.dialect);
      const missing = specs.filter((t) => !catalog.tables.has(t.table));
      if (missing.length) {
        // A new table has no rows and no writers yet: its indexes are made with it.
        await s.transaction(async (w) => {
          for (const t of missing) {
            await w.run(t.create, []);
            for (const i of t.indexes) await w.run(createIndexSql(engine.dialect, t.table, i, false), []);
          }
        });
      }
      for (const t of specs) {
        const columns = catalog.tables.get(t.table);
        if (!columns) continue;
        const absent = (t.added ?? []).filter((a) => !columns.has(a.column));
        // A nullable column without a default changes no row: the lock is held only for the catalogue.
        if (absent.length) await s.transaction(async (w) => {
          for (const a of absent) await w.run(`ALTER TABLE ${q(t.table)} ADD COLUMN ${q(a.column)} ${a.type}`, []);
        });
        for (const i of t.indexes) if (!indexAsDefined(catalog, t.table, i)) await buildIndex(s, engine.dialect, catalog, t.table, i);
      }
    });
  });
}
