/**
 * The PostgreSQL engine: a `pg.Pool` behind the Engine interface of types.ts, for apps that run on
 * several machines.
 *
 * - Reader statements run on any pooled connection, in autocommit. A statement that fails because
 *   a reused idle connection turned out to be dead (the server restarted, a proxy dropped it) runs
 *   again on another connection: nothing of it was inside a transaction. A fresh connection that
 *   fails is the answer.
 * - A Writer holds one checked-out connection from BEGIN to COMMIT/ROLLBACK; nothing inside it is
 *   retried (the transaction is gone with the connection).
 * - Values come back in the shapes SQLite gives (types.ts): integers and aggregates as numbers
 *   (a bigint beyond 2^53), booleans as 1/0, everything else as the text PostgreSQL sends.
 * - Every error becomes a StoreError (`toStoreError`); a connection error never reaches the
 *   process as an unhandled 'error' event, so a server restart costs the requests that were
 *   running, never the process, and the pool reconnects by itself.
 */
import { createRequire } from 'node:module';
import type pg from 'pg';
import type { CustomTypesConfig, PoolClient, QueryArrayResult } from 'pg';
import { StoreError, type BeginOptions, type Engine, type Row, type SchemaSession, type SqlValue, type Writer } from './types.js';

// The driver is loaded on first use: an app on SQLite (and `laneway check`) never pays for it.
const require = createRequire(import.meta.url);
let loadedPg: typeof pg | undefined;
const pgModule = (): typeof pg => (loadedPg ??= require('pg') as typeof pg);

/** Options of `openPostgres`. */
export interface PostgresOptions {
  /** Connections in the pool (default 10). */
  max?: number;
  /** How long to wait for a connection, new or pooled, before LW_STORE_UNAVAILABLE (default 5000). */
  connectTimeoutMs?: number;
  /** A schema of its own (a nested site's namespace): created when missing, first on every connection's search path. */
  schema?: string;
}

const DEFAULT_MAX = 10;
const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
/** The server cancels a statement after this long (a lock wait included). */
const STATEMENT_TIMEOUT_MS = 30_000;
/** The client gives up a little later, for a server that stopped answering altogether. */
const QUERY_TIMEOUT_MS = STATEMENT_TIMEOUT_MS + 5_000;
/** A session idle inside a transaction this long is ended by the server (its locks released). */
const IDLE_IN_TRANSACTION_MS = 60_000;

/**
 * The advisory lock that serialises schema changes of every Laneway instance on a database: the
 * ASCII bytes of "Laneway" and a zero byte, read as one signed 64-bit integer (0x4c616e6577617900).
 */
const SCHEMA_LOCK_KEY = '5503801601697085696';

/** How long a starting instance waits for another one's schema changes (`withSchemaSession`). */
const SCHEMA_LOCK_WAIT_MS = 10 * 60_000;
/**
 * A schema change waits this long for a table's lock, then gives up (and is tried again): writes
 * queued behind it wait no longer than that, and it gives up before PostgreSQL's deadlock check
 * (deadlock_timeout, 1 s by default) could fail one of them instead.
 */
const SCHEMA_LOCK_TIMEOUT_MS = 300;

// Type OIDs (pg_type.oid) that are parsed; every other type stays the text PostgreSQL sends
// (dates, timestamps, json, arrays, bytea as '\x…'), so that a Row only ever holds SqlValues.
const OID_BOOL = 16;
const OID_INT8 = 20;
const OID_INT2 = 21;
const OID_INT4 = 23;
const OID_OID = 26;
const OID_FLOAT4 = 700;
const OID_FLOAT8 = 701;
const OID_NUMERIC = 1700;

/**
 * An int8's text (an optional '-' and digits) → number; beyond ±(2^53 − 1) a bigint, as SQLite's
 * engine returns it. Up to 15 digits the value is exact and read digit by digit, about twice as
 * fast as Number() on the 13-digit timestamps every row holds (created, modified).
 */
function parseInteger(text: string): number | bigint {
  const length = text.length;
  const negative = text.charCodeAt(0) === 45; // '-'
  if (length > 0 && length - (negative ? 1 : 0) <= 15) {
    let n = 0;
    let i = negative ? 1 : 0;
    for (; i < length; i++) {
      const d = text.charCodeAt(i) - 48;
      if (d < 0 || d > 9) break;
      n = n * 10 + d;
    }
    if (i === length && length > (negative ? 1 : 0)) return negative ? -n : n;
  }
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : BigInt(text);
}

/** numeric (sum() and avg() of integers) → number; an integral value beyond 2^53 → bigint. */
function parseNumeric(text: string): number | bigint {
  const n = Number(text);
  if (!Number.isSafeInteger(n) && /^-?\d+$/.test(text)) return BigInt(text);
  return n;
}

const keepText = (text: string): string => text;

function parserFor(oid: number): (text: string) => SqlValue {
  switch (oid) {
    case OID_INT2:
    case OID_INT4:
    case OID_OID:
      return (text) => parseInt(text, 10);
    case OID_INT8:
      return parseInteger;
    case OID_FLOAT4:
    case OID_FLOAT8:
      return parseFloat;
    case OID_NUMERIC:
      return parseNumeric;
    case OID_BOOL:
      // SQLite has no boolean: its comparisons answer 1 and 0.
      return (text) => (text === 't' ? 1 : 0);
    default:
      return keepText;
  }
}

/** This pool's parsers (pg's global `types` stay untouched for other users of pg). */
const POSTGRES_TYPES = {
  getTypeParser: (oid: number) => parserFor(oid),
} as unknown as CustomTypesConfig;

// Error codes that mean the connection or the server is gone: Node's socket errors, SQLSTATE class
// 08 (connection exception) and 57P01–57P03 (shutdown, crash, starting up), 53300 (too many
// connections).
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
const SERVER_GONE_CODES = new Set(['57P01', '57P02', '57P03', '53300']);
// pg and pg-pool report a lost connection with these messages and no code.
const LOST_CONNECTION = /^(Connection terminated|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error|Client was closed)/;

interface ErrorFields {
  code: string | undefined;
  message: string;
  constraint: string | undefined;
}

/** The fields that classify an error (Node 20 reports a refused dual-stack connect as an AggregateError with an empty message). */
function fieldsOf(err: unknown): ErrorFields {
  if (!(err instanceof Error)) return { code: undefined, message: String(err), constraint: undefined };
  const e = err as Error & { code?: unknown; constraint?: unknown; errors?: unknown };
  let code = typeof e.code === 'string' ? e.code : undefined;
  let message = e.message;
  if (Array.isArray(e.errors) && e.errors[0] instanceof Error) {
    const first = fieldsOf(e.errors[0]);
    code ??= first.code;
    if (!message) message = first.message;
  }
  return { code, message, constraint: typeof e.constraint === 'string' ? e.constraint : undefined };
}

/** True when the error means the connection (or the whole server) is unusable. */
function isConnectionError(err: unknown): boolean {
  const { code, message } = fieldsOf(err);
  if (code !== undefined && (SOCKET_CODES.has(code) || SERVER_GONE_CODES.has(code) || code.startsWith('08'))) return true;
  return LOST_CONNECTION.test(message);
}

/** A short reason for LW_STORE_UNAVAILABLE. */
function unavailableReason(err: unknown): string {
  const { code, message } = fieldsOf(err);
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'host name not found';
  if (code === '57P01' || code === '57P02') return 'the server shut down the connection';
  if (code === '57P03') return 'the server is starting up or shutting down';
  if (code === '53300') return 'the server has no free connection slot';
  if (message.startsWith('timeout exceeded when trying to connect')) return 'no pooled connection became free in time';
  if (message.endsWith('due to connection timeout')) return 'the server did not answer the connection in time';
  if (message === 'Query read timeout') return 'the server did not answer in time';
  if (/^Connection terminated|ECONNRESET|EPIPE/.test(message) || code === 'ECONNRESET' || code === 'EPIPE') return 'the connection was lost';
  return code ?? message;
}

/** Maps any error of pg, pg-pool or the socket to a StoreError (a StoreError passes through). */
function toStoreError(err: unknown): StoreError {
  if (err instanceof StoreError) return err;
  const { code, message, constraint } = fieldsOf(err);
  if (code === '23505') return new StoreError('LW_STORE_UNIQUE', message, constraint);
  if (code === '40001' || code === '40P01') return new StoreError('LW_STORE_CONFLICT', `${message} (the transaction failed as a whole and can be run again)`);
  if (isConnectionError(err)) return new StoreError('LW_STORE_UNAVAILABLE', `PostgreSQL is unavailable: ${unavailableReason(err)}.`);
  // 57014: statement_timeout (or a cancel); 55P03: a lock wait gave up. The request may be retried.
  if (code === '57014' || code === '55P03') return new StoreError('LW_STORE_UNAVAILABLE', `PostgreSQL did not answer in time: ${message}.`);
  return new StoreError('LW_STORE_QUERY', message);
}

const URL_SHAPE = 'postgres://user:password@host:port/database';

/** Where a URL points, for messages: host and port, database and user, never the password. */
interface Target {
  where: string;
  database: string;
  user: string;
}

/** The Target of `url`, or undefined when it is not a postgres:// URL pg can read. */
function describeTarget(url: string): Target | undefined {
  if (!/^postgres(ql)?:\/\//i.test(url)) return undefined;
  try {
    const c = new (pgModule().Client)(url);
    const where = c.host.startsWith('/') ? `socket directory ${c.host} (port ${c.port})` : `${c.host}:${c.port}`;
    return { where, database: c.database ?? '(default)', user: c.user ?? '(default)' };
  } catch {
    return undefined;
  }
}

/** The LW_STORE_UNAVAILABLE of a failed first connection: what failed and what to check. */
function openError(target: Target, err: unknown): StoreError {
  const { where, database, user } = target;
  const { code, message } = fieldsOf(err);
  let reason: string;
  let advice: string;
  if (code === '28P01' || code === '28000') {
    reason = message;
    advice = 'Check the user name and password in the database URL, and pg_hba.conf on the server.';
  } else if (code === '3D000') {
    reason = message;
    advice = 'Create the database (CREATE DATABASE) or correct its name in the database URL.';
  } else if (isConnectionError(err)) {
    reason = unavailableReason(err);
    advice =
      code === 'ENOTFOUND' || code === 'EAI_AGAIN'
        ? 'Check the host name in the database URL.'
        : 'Check that PostgreSQL is running and listens there (listen_addresses, port), that the database URL names the right host and port, and that no firewall is in between.';
  } else {
    reason = message;
    advice = 'Check the database URL and the server log.';
  }
  return new StoreError('LW_STORE_UNAVAILABLE', `Cannot connect to PostgreSQL at ${where} (database "${database}", user "${user}"): ${reason}. ${advice}`);
}

type Values = SqlValue[];

/**
 * Prepared statements are named by SQL text (namedConfigs below). Laneway's statements come from a
 * bounded set of shapes (one per query shape of the app), so each is parsed and planned once per
 * connection instead of at every call; past the bound, statements go unnamed.
 */
const MAX_NAMED_STATEMENTS = 2000;

/**
 * The fixed part of each named statement's query config ({name, text, rowMode}), made once. pg
 * copies a config's own properties at every query (keeping its prototype): a config made on this
 * prototype has one own property to copy, its values.
 */
const namedConfigs = new Map<string, { name: string; text: string; rowMode: 'array' }>();

type ArrayQuery = { name?: string; text: string; values: Values; rowMode: 'array' };

function arrayQuery(sql: string, params: readonly SqlValue[]): ArrayQuery {
  let named = params.length ? namedConfigs.get(sql) : undefined;
  if (named === undefined && params.length && namedConfigs.size < MAX_NAMED_STATEMENTS && /^(SELECT|INSERT|UPDATE|DELETE) /.test(sql)) {
    named = { name: `lw_${namedConfigs.size + 1}`, text: sql, rowMode: 'array' as const };
    namedConfigs.set(sql, named);
  }
  if (named === undefined) return { text: sql, values: params as Values, rowMode: 'array' };
  const query = Object.create(named) as ArrayQuery;
  query.values = params as Values;
  return query;
}

/**
 * Opens a pool on `url` (postgres://user:password@host:port/database) and checks that one
 * connection can be made. Rejects with LW_STORE_UNAVAILABLE, naming host and port, when not.
 */
export async function openPostgres(url: string, options: PostgresOptions = {}): Promise<Engine> {
  const target = describeTarget(url);
  if (!target) {
    // The URL itself is not echoed: it may hold a password.
    throw new StoreError('LW_STORE_UNAVAILABLE', `The PostgreSQL database URL is not a valid URL of the form ${URL_SHAPE}.`);
  }
  const max = options.max ?? DEFAULT_MAX;
  const pool = new (pgModule().Pool)({
    connectionString: url,
    max,
    connectionTimeoutMillis: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
    statement_timeout: STATEMENT_TIMEOUT_MS,
    query_timeout: QUERY_TIMEOUT_MS,
    // A transaction left open (a bug, a process paused mid-request) never holds locks for long.
    idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_MS,
    application_name: 'laneway',
    keepAlive: true,
    types: POSTGRES_TYPES,
    // A namespace's tables live in a schema of their own; SQL names stay unqualified.
    ...(options.schema ? { options: `-c search_path=${options.schema}` } : {}),
  });
  const engine = new PostgresEngine(pool, max);
  try {
    const client = await pool.connect();
    try {
      if (options.schema) {
        try {
          await client.query(`CREATE SCHEMA IF NOT EXISTS "${options.schema}"`);
        } catch (err) {
          // Two instances starting at once on a new database: IF NOT EXISTS is not atomic, and the
          // one that loses the race gets a unique violation (23505) or duplicate schema (42P06):
          // the schema is there, which is all that was asked.
          const code = (err as { code?: string }).code;
          if (code !== '23505' && code !== '42P06') throw err;
        }
      }
    } finally {
      client.release();
    }
  } catch (err) {
    await pool.end().catch(() => {});
    throw openError(target, err);
  }
  return engine;
}

class PostgresEngine implements Engine {
  readonly dialect = 'postgres' as const;
  readonly reader = { all: (sql: string, params: readonly SqlValue[]) => this.#all(sql, params) };
  readonly #pool: pg.Pool;
  readonly #max: number;
  /** Clients that have answered at least once (a failure on one of them may be a stale connection). */
  readonly #used = new WeakSet<PoolClient>();
  /** Clients whose connection reported an error while checked out. */
  readonly #broken = new WeakSet<PoolClient>();
  readonly #writers = new Set<PostgresWriter>();
  #closed = false;

  constructor(pool: pg.Pool, max: number) {
    this.#pool = pool;
    this.#max = max;
    // An idle client whose server went away: pg-pool has already removed it; without a listener
    // the 'error' event would end the process.
    pool.on('error', () => {});
    // A checked-out client can lose its connection between two statements: keep that from being an
    // unhandled 'error' event too, and remember it so that the client is destroyed, not reused.
    pool.on('connect', (client: PoolClient) => {
      client.on('error', () => this.#broken.add(client));
    });
  }

  /** Whether `client` must be destroyed rather than returned to the pool. */
  #isBroken(client: PoolClient, err?: unknown): boolean {
    return this.#broken.has(client) || (err !== undefined && isConnectionError(err));
  }

  async #checkout(): Promise<PoolClient> {
    if (this.#closed) throw new StoreError('LW_STORE_UNAVAILABLE', 'PostgreSQL is unavailable: the store was closed.');
    try {
      return await this.#pool.connect();
    } catch (err) {
      throw toStoreError(err);
    }
  }

  /**
   * Runs `sql` on a pooled client. When a client that had answered before fails with a connection
   * error, it is dropped and the statement runs on the next one; the pool holds at most `max`
   * clients, so this ends, at the latest, on a newly connected client, whose failure is final
   * (the attempts are capped all the same, for clients other requests return meanwhile).
   */
  async #onPooledClient(sql: string, params: readonly SqlValue[]): Promise<{ client: PoolClient; result: QueryArrayResult<Row> }> {
    for (let attempt = 1; ; attempt++) {
      const client = await this.#checkout();
      try {
        const result = await client.query<Row>(arrayQuery(sql, params));
        this.#used.add(client);
        return { client, result };
      } catch (err) {
        const broken = this.#isBroken(client, err);
        client.release(broken);
        // A server that stopped answering is not a stale connection: the timeout is the answer.
        if (broken && this.#used.has(client) && attempt <= this.#max && fieldsOf(err).message !== 'Query read timeout') continue;
        throw toStoreError(err);
      }
    }
  }

  async #all(sql: string, params: readonly SqlValue[]): Promise<Row[]> {
    const { client, result } = await this.#onPooledClient(sql, params);
    client.release();
    return result.rows;
  }

  /**
   * A write transaction: BEGIN on a pooled connection of its own. With `holdWrites`, nothing is sent
   * yet: writes are held back until the transaction first reads, or until the commit — where a
   * transaction of one write runs as a single statement (its own transaction: one round trip
   * instead of BEGIN, the write and COMMIT).
   */
  async begin(options: BeginOptions = {}): Promise<Writer> {
    if (this.#closed) throw new StoreError('LW_STORE_UNAVAILABLE', 'PostgreSQL is unavailable: the store was closed.');
    const writer: PostgresWriter = new PostgresWriter(
      async (first) => {
        const { client, result } = await this.#onPooledClient(first.sql, first.params);
        return { client, result };
      },
      (c, err) => this.#isBroken(c, err),
      () => this.#writers.delete(writer),
    );
    this.#writers.add(writer);
    if (!options.holdWrites) await writer.start();
    return writer;
  }

  /**
   * The schema session's lock and transaction: a transaction that waited for an advisory lock
   * inside a statement would hold a snapshot, which the index another instance builds
   * concurrently under the lock waits for (a deadlock).
   */
  withSchemaLock<T>(fn: (w: Writer) => Promise<T>): Promise<T> {
    return this.withSchemaSession((s) => s.transaction(fn));
  }

  async withSchemaSession<T>(fn: (s: SchemaSession) => Promise<T>): Promise<T> {
    const client = await this.#checkout();
    const query = async (sql: string, params: readonly SqlValue[] = []): Promise<QueryArrayResult<Row>> => {
      try {
        return await client.query<Row>({ text: sql, values: params as Values, rowMode: 'array' });
      } catch (err) {
        throw toStoreError(err);
      }
    };
    try {
      // Polled, never waited for inside a statement: see Engine.withSchemaSession.
      const started = Date.now();
      for (let wait = 20; ; wait = Math.min(wait * 2, 500)) {
        const [[locked]] = (await query(`SELECT pg_try_advisory_lock(${SCHEMA_LOCK_KEY})`)).rows as [[SqlValue]];
        if (locked === 1) break;
        if (Date.now() - started > SCHEMA_LOCK_WAIT_MS) {
          throw new StoreError('LW_STORE_UNAVAILABLE', `PostgreSQL is unavailable: another Laneway instance has held the schema lock for more than ${SCHEMA_LOCK_WAIT_MS / 60_000} minutes (it is changing the schema, or it hangs).`);
        }
        await new Promise((r) => setTimeout(r, wait));
      }
      // An index built concurrently on a large table may take longer than a request's statement.
      await query('SET statement_timeout = 0');
      const tx: Writer = {
        all: async (sql, params) => (await query(sql, params)).rows,
        run: async (sql, params) => void (await query(sql, params)),
        commit: async () => {
          if ((await query('COMMIT')).command === 'ROLLBACK') throw new StoreError('LW_STORE_QUERY', 'The transaction was rolled back, not committed: a statement in it had failed.');
        },
        rollback: async () => void (await query('ROLLBACK').catch(() => {})),
      };
      return await fn({
        all: async (sql, params) => (await query(sql, params)).rows,
        run: async (sql) => void (await query(sql)),
        transaction: async (f) => {
          await query('BEGIN');
          try {
            await query(`SET LOCAL lock_timeout = ${SCHEMA_LOCK_TIMEOUT_MS}`);
            await query(`SET LOCAL statement_timeout = ${STATEMENT_TIMEOUT_MS}`);
            const r = await f(tx);
            await tx.commit();
            return r;
          } catch (err) {
            await tx.rollback();
            throw err;
          }
        },
      });
    } finally {
      // The connection is closed rather than pooled: its settings changed, and closing it releases
      // the advisory lock whatever happened to it.
      client.release(true);
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.all([...this.#writers].map((w) => w.rollback()));
    await this.#pool.end();
  }
}

const ENDED = 'This transaction has already ended (commit or rollback); start another with begin().';

/** One transaction on one checked-out client, released when it ends. */
interface Statement {
  sql: string;
  params: readonly SqlValue[];
}

class PostgresWriter implements Writer {
  #client: PoolClient | undefined;
  #connectionLost = false;
  #ended = false;
  /** Writes not sent yet (nothing was sent yet either: no client, no BEGIN). */
  #held: Statement[] = [];
  /** Runs a first statement on a pooled client (retrying a stale connection), keeping the client. */
  readonly #open: (first: Statement) => Promise<{ client: PoolClient; result: QueryArrayResult<Row> }>;
  readonly #isBroken: (client: PoolClient, err?: unknown) => boolean;
  readonly #onEnd: () => void;

  constructor(
    open: (first: Statement) => Promise<{ client: PoolClient; result: QueryArrayResult<Row> }>,
    isBroken: (client: PoolClient, err?: unknown) => boolean,
    onEnd: () => void,
  ) {
    this.#open = open;
    this.#isBroken = isBroken;
    this.#onEnd = onEnd;
  }

  /** BEGIN on a client of its own, then the writes held back, in order. */
  start(): Promise<PoolClient> {
    return this.#start();
  }

  /** The BEGIN under way: statements sent meanwhile wait for it rather than open a second client. */
  #starting: Promise<PoolClient> | undefined;

  #start(): Promise<PoolClient> {
    if (this.#client) return Promise.resolve(this.#client);
    return (this.#starting ??= this.#begin().finally(() => (this.#starting = undefined)));
  }

  async #begin(): Promise<PoolClient> {
    if (this.#ended) throw new StoreError('LW_STORE_QUERY', ENDED);
    const { client } = await this.#open({ sql: 'BEGIN', params: [] });
    this.#client = client;
    const held = this.#held;
    this.#held = [];
    for (const st of held) await this.#query(st.sql, st.params, true);
    return client;
  }

  async #query(sql: string, params: readonly SqlValue[], held = false): Promise<QueryArrayResult<Row>> {
    const client = this.#client ?? (await this.#start());
    try {
      return await client.query<Row>(arrayQuery(sql, params));
    } catch (err) {
      if (this.#isBroken(client, err)) this.#connectionLost = true;
      const e = toStoreError(err);
      if (held) e.sql = sql;
      throw e;
    }
  }

  async all(sql: string, params: readonly SqlValue[]): Promise<Row[]> {
    return (await this.#query(sql, params)).rows;
  }

  run(sql: string, params: readonly SqlValue[]): void | Promise<void> {
    if (this.#ended) return Promise.reject(new StoreError('LW_STORE_QUERY', ENDED));
    if (!this.#client) {
      this.#held.push({ sql, params: [...params] });
      return;
    }
    return this.#query(sql, params).then(() => undefined);
  }

  async commit(): Promise<void> {
    if (!this.#client) {
      const held = this.#held;
      this.#held = [];
      if (held.length === 0) return this.#finish();
      if (held.length === 1) {
        // One write: its own transaction, one round trip.
        try {
          const { client } = await this.#open(held[0]!);
          this.#client = client;
        } catch (err) {
          this.#finish();
          const e = toStoreError(err);
          e.sql = held[0]!.sql;
          throw e;
        }
        this.#release();
        return;
      }
      this.#held = held;
      try {
        await this.#start();
      } catch (err) {
        await this.rollback();
        throw err;
      }
    }
    let result: QueryArrayResult<Row>;
    try {
      result = await this.#query('COMMIT', []);
    } catch (err) {
      // A failed COMMIT has ended the transaction already; rollback only releases the client.
      await this.rollback();
      throw err;
    }
    this.#release();
    // PostgreSQL answers COMMIT of a transaction in which a statement failed with ROLLBACK, not an error.
    if (result.command === 'ROLLBACK') {
      throw new StoreError('LW_STORE_QUERY', 'The transaction was rolled back, not committed: a statement in it had failed.');
    }
  }

  async rollback(): Promise<void> {
    this.#held = [];
    const client = this.#client;
    if (!client) return this.#finish();
    if (!this.#connectionLost && !this.#isBroken(client)) {
      try {
        await client.query('ROLLBACK');
        this.#release();
        return;
      } catch {
        this.#connectionLost = true;
      }
    }
    this.#release();
  }

  #finish(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#onEnd();
  }

  /** Returns the client to the pool, or destroys it when its connection is gone. */
  #release(): void {
    const client = this.#client;
    if (!client) return this.#finish();
    this.#client = undefined;
    client.release(this.#connectionLost || this.#isBroken(client));
    this.#finish();
  }
}
