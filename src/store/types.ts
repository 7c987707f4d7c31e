/**
 * The store interface: one small surface that both database engines implement (SQLite through
 * better-sqlite3, PostgreSQL through pg). Engines only run SQL and manage connections and
 * transactions; the SQL itself comes from the per-dialect emitters (sql.ts), so that the query
 * layer never depends on which engine runs it.
 *
 * Rows come back as arrays in the column order of the SELECT (no per-row objects). Values:
 * text → string, integer → number (a bigint beyond 2^53), real → number, NULL → null. Booleans are
 * stored as integers 0/1, JSON values as text, so both engines return the same shapes.
 *
 * Synchronous where the engine is (SQLite: no Promise per query); PostgreSQL answers Promises,
 * which the script runtime waits for without the script seeing it.
 */

export type Dialect = 'sqlite' | 'postgres';

export type SqlValue = string | number | bigint | null;

export type Row = SqlValue[];

/** Statements a request can run. */
export interface Reader {
  /** Every row of a SELECT. */
  all(sql: string, params: readonly SqlValue[]): Row[] | Promise<Row[]>;
}

/** A write transaction (BEGIN IMMEDIATE on SQLite; BEGIN on a pooled PostgreSQL connection). */
export interface Writer extends Reader {
  /**
   * INSERT, UPDATE, DELETE or DDL. The PostgreSQL writer may hold writes back until the next read
   * or the commit (a transaction of one write then costs one round trip): a failure of such a write
   * (a unique conflict) is then reported by `commit()`, as a StoreError with `sql` set.
   */
  run(sql: string, params: readonly SqlValue[]): void | Promise<void>;
  /** Ends the transaction; the Writer cannot be used afterwards. */
  commit(): void | Promise<void>;
  /** Ends the transaction without its writes. Never throws (a broken connection is dropped). */
  rollback(): void | Promise<void>;
}

export interface BeginOptions {
  /** Writes may wait for the next read or the commit (PostgreSQL; SQLite runs them at once). */
  holdWrites?: boolean;
}

export interface Engine {
  readonly dialect: Dialect;
  /** Statements outside a write transaction (each one sees the latest committed data). */
  readonly reader: Reader;
  /**
   * Starts a write transaction. Waits (asynchronously, never blocking the event loop) while another
   * request of this process, or another process, holds the write lock (SQLite) or until a pooled
   * connection is free (PostgreSQL). Rejects with a StoreError('LW_STORE_UNAVAILABLE') when the
   * database cannot be reached.
   */
  begin(options?: BeginOptions): Promise<Writer>;
  /**
   * Runs `fn` in a write transaction that also holds the schema lock (PostgreSQL: the advisory
   * lock of `withSchemaSession`, so that two instances starting together migrate one after the
   * other). Commits when `fn` resolves, rolls back when it throws.
   */
  withSchemaLock<T>(fn: (w: Writer) => Promise<T>): Promise<T>;
  /**
   * Runs `fn` holding the schema lock with no transaction open, for schema changes that must not
   * hold live writes up (docs/data.md, "What a start does to the schema"). PostgreSQL: a session
   * advisory lock, taken by polling `pg_try_advisory_lock` (a wait inside a statement would hold a
   * snapshot, which CREATE INDEX CONCURRENTLY of the instance holding the lock waits for). SQLite:
   * the write lock, for the whole of `fn` (its DDL is instantaneous).
   */
  withSchemaSession<T>(fn: (s: SchemaSession) => Promise<T>): Promise<T>;
  /** Closes every connection (pending transactions are rolled back). */
  close(): Promise<void>;
}

/** What `withSchemaSession` hands its function. */
export interface SchemaSession {
  /** A read under the lock (it sees every change committed before). */
  all(sql: string, params: readonly SqlValue[]): Promise<Row[]>;
  /**
   * One statement outside any transaction (PostgreSQL: CREATE INDEX CONCURRENTLY, which a
   * transaction cannot run, with no statement timeout); on SQLite, in the session's transaction.
   */
  run(sql: string): Promise<void>;
  /**
   * A write transaction under the lock. PostgreSQL: with a short `lock_timeout`, so that a
   * statement waiting for a table that live requests write never holds them up for long (it fails
   * with LW_STORE_UNAVAILABLE instead, and the caller tries again). SQLite: the session's own.
   */
  transaction<T>(fn: (w: Writer) => Promise<T>): Promise<T>;
}

/**
 * An error of the store, with a code from src/diag (LW_STORE_…). `LW_STORE_UNIQUE` carries the
 * constraint (index) name that failed, from which the query layer names the field.
 */
export class StoreError extends Error {
  readonly code: string;
  readonly constraint: string | undefined;
  /** The statement that failed, when a held-back write failed at commit. */
  sql?: string;
  constructor(code: string, message: string, constraint?: string) {
    super(message);
    this.name = 'StoreError';
    this.code = code;
    this.constraint = constraint;
  }
}
