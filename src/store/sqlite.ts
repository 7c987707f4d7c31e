/**
 * The embedded engine: one SQLite file through better-sqlite3 (synchronous: no Promise per query).
 *
 * - Two connections per process: a reader (statements outside transactions; in WAL mode it never
 *   waits for a writer; in one process, the reads of one event-loop turn share a snapshot) and a
 *   writer (every write transaction, `BEGIN IMMEDIATE`).
 * - WAL journal, `synchronous=NORMAL` (a committed transaction survives a killed process; a power
 *   loss may lose the last ones, never corrupt the file).
 * - Write transactions of this process queue up in order (an async queue), and when another
 *   process holds the write lock, `BEGIN IMMEDIATE` is retried with a growing pause: a waiting
 *   writer never blocks the event loop (busy_timeout is 0 on the writer).
 * - Prepared statements are cached per connection by their SQL text.
 */
import cluster from 'node:cluster';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { StoreError, type Engine, type Reader, type Row, type SchemaSession, type SqlValue, type Writer } from './types.js';

type Db = Database.Database;
type Statement = Database.Statement<unknown[], unknown>;

/** Longest time a write transaction waits for another process's lock before answering 503. */
const LOCK_WAIT_MS = 10_000;

class Statements {
  readonly #db: Db;
  readonly #cache = new Map<string, Statement>();
  constructor(db: Db) {
    this.#db = db;
  }
  get(sql: string): Statement {
    let s = this.#cache.get(sql);
    if (!s) {
      s = this.#db.prepare(sql);
      if (s.reader) s.raw(true);
      if (this.#cache.size > 2000) this.#cache.clear();
      this.#cache.set(sql, s);
    }
    return s;
  }
}

function mapError(e: unknown): StoreError {
  if (e instanceof StoreError) return e;
  const err = e as { code?: string; message?: string };
  const message = String(err?.message ?? e);
  if (err?.code === 'SQLITE_CONSTRAINT_UNIQUE' || err?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY') {
    // "UNIQUE constraint failed: lw_Task.container, lw_Task.f_slug" → the column list.
    const m = /failed: (.*)$/.exec(message);
    return new StoreError('LW_STORE_UNIQUE', message, m?.[1]);
  }
  if (err?.code === 'SQLITE_BUSY' || err?.code === 'SQLITE_LOCKED') return new StoreError('LW_STORE_CONFLICT', message);
  if (err?.code === 'SQLITE_CANTOPEN' || err?.code === 'SQLITE_READONLY' || err?.code === 'SQLITE_FULL' || err?.code === 'SQLITE_IOERR') {
    return new StoreError('LW_STORE_UNAVAILABLE', message);
  }
  return new StoreError('LW_STORE_QUERY', message);
}

function all(st: Statements, sql: string, params: readonly SqlValue[]): Row[] {
  try {
    return st.get(sql).all(...params) as Row[];
  } catch (e) {
    throw mapError(e);
  }
}

function run(st: Statements, sql: string, params: readonly SqlValue[]): void {
  try {
    const s = st.get(sql);
    if (s.reader) s.all(...params);
    else s.run(...params);
  } catch (e) {
    throw mapError(e);
  }
}

const pause = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Why this process cannot write `file` or its data directory, when that is why it cannot open it
 * (docs/data.md, "A data directory that cannot be written"): the directory (or the nearest one that
 * exists) or the file is on a read-only file system, or not writable by this user. Undefined when
 * both can be written (the failure is something else).
 */
function notWritable(file: string): string | undefined {
  const dir = path.dirname(file);
  let existing = dir;
  while (!fs.existsSync(existing) && path.dirname(existing) !== existing) existing = path.dirname(existing);
  const target = fs.existsSync(file) ? file : existing;
  let code: string | undefined;
  try {
    fs.accessSync(target, fs.constants.W_OK);
    if (target === file) fs.accessSync(dir, fs.constants.W_OK);
    return undefined;
  } catch (e) {
    code = (e as NodeJS.ErrnoException).code;
  }
  const what = target === file ? `the database file ${file}` : existing === dir ? `the data directory ${dir}` : `${existing}, where the data directory ${dir} would be created,`;
  const fix = `Give a directory this user can write with --data DIR (or $LANEWAY_DATA)`;
  if (code === 'EROFS') return `${what} is on a read-only file system. ${fix}, or mount the file system read-write. [LW_STORE_NOT_WRITABLE]`;
  let user = `uid ${process.getuid?.() ?? '?'}`;
  try {
    user = `${os.userInfo().username} (${user})`;
  } catch {
    // a user without a name: the uid says who
  }
  let owner = '';
  try {
    const st = fs.statSync(target);
    owner = `; it belongs to uid ${st.uid}, mode ${(st.mode & 0o777).toString(8).padStart(4, '0')}`;
  } catch {
    // nothing more to say
  }
  return `${what} is read-only or not writable by the user ${user}${owner}. ${fix}, or let this user write there (chown, chmod u+w). [LW_STORE_NOT_WRITABLE]`;
}

/** Opens (creating when needed) the database file `file`; its directory is created too. */
export function openSqlite(file: string): Engine {
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true });
  } catch (e) {
    throw new StoreError(notWritable(file) ? 'LW_STORE_NOT_WRITABLE' : 'LW_STORE_UNAVAILABLE', `cannot create the data directory ${path.dirname(file)}: ${notWritable(file) ?? (e as Error).message}`);
  }
  let writerDb: Db;
  let readerDb: Db;
  try {
    writerDb = new Database(file);
    writerDb.pragma('journal_mode = WAL');
    writerDb.pragma('synchronous = NORMAL');
    writerDb.pragma('busy_timeout = 0');
    writerDb.pragma('foreign_keys = OFF');
    readerDb = new Database(file);
    readerDb.pragma('busy_timeout = 250');
  } catch (e) {
    const why = notWritable(file);
    throw new StoreError(why ? 'LW_STORE_NOT_WRITABLE' : 'LW_STORE_UNAVAILABLE', `cannot open the database file ${file}: ${why ?? (e as Error).message}`);
  }
  const writes = new Statements(writerDb);
  const reads = new Statements(readerDb);
  // The writer's transaction statements, prepared once (exec would parse them at every request).
  const beginWrite = writerDb.prepare('BEGIN IMMEDIATE');
  const endWrite = { COMMIT: writerDb.prepare('COMMIT'), ROLLBACK: writerDb.prepare('ROLLBACK') };
  // This process's write turn: held by one transaction at a time; the others wait in order.
  let held = false;
  const waiting: Array<() => void> = [];
  let closed = false;

  // Reads outside transactions share one read transaction per turn of the event loop: each
  // statement on its own would take and release the file's shared lock and check the WAL index
  // (about 6 µs here, more than the query), and a page makes several reads (the visitor's session,
  // the signed-in user, roles, the records). The snapshot ends when the turn ends (setImmediate)
  // and before every commit of this process, so a read never misses this process's own writes.
  // One process only: with several processes on the file (`--workers`), each read keeps its own
  // snapshot, so that a write committed by another worker is seen by the next read at once.
  const shareReads = !cluster.isWorker;
  const beginRead = readerDb.prepare('BEGIN');
  const endRead = readerDb.prepare('COMMIT');
  let snapshot = false;
  const endSnapshot = (): void => {
    if (!snapshot) return;
    snapshot = false;
    try {
      if (readerDb.inTransaction) endRead.run();
    } catch {
      /* a read transaction has nothing to lose */
    }
  };
  const reader: Reader = {
    all: (sql, params) => {
      if (shareReads && !snapshot && !closed) {
        beginRead.run();
        snapshot = true;
        setImmediate(endSnapshot);
      }
      return all(reads, sql, params);
    },
  };

  /** Passes the turn to the next waiting transaction, or frees it. */
  function release(): void {
    const next = waiting.shift();
    if (next) next();
    else held = false;
  }

  /** Takes this process's turn (at once when it is free), then the file's write lock (retrying while another process has it). */
  async function acquire(): Promise<() => void> {
    if (held) await new Promise<void>((r) => waiting.push(r));
    held = true;
    if (closed) {
      release();
      throw new StoreError('LW_STORE_UNAVAILABLE', 'the database is closed');
    }
    const started = Date.now();
    for (let wait = 1; ; wait = Math.min(wait * 2, 50)) {
      try {
        beginWrite.run();
        return release;
      } catch (e) {
        const err = mapError(e);
        if (err.code !== 'LW_STORE_CONFLICT' || Date.now() - started > LOCK_WAIT_MS) {
          release();
          throw err.code === 'LW_STORE_CONFLICT'
            ? new StoreError('LW_STORE_UNAVAILABLE', `another process has held the database's write lock for more than ${LOCK_WAIT_MS / 1000} s`)
            : err;
        }
        await pause(wait);
      }
    }
  }

  function writer(release: () => void): Writer {
    let open = true;
    const end = (sql: 'COMMIT' | 'ROLLBACK'): void => {
      if (!open) return;
      open = false;
      endSnapshot();
      try {
        if (writerDb.inTransaction) endWrite[sql].run();
      } finally {
        release();
      }
    };
    return {
      all: (sql, params) => all(writes, sql, params),
      run: (sql, params) => run(writes, sql, params),
      commit: () => {
        try {
          end('COMMIT');
        } catch (e) {
          try {
            if (writerDb.inTransaction) endWrite.ROLLBACK.run();
          } catch {
            /* the transaction is gone either way */
          }
          throw mapError(e);
        }
      },
      rollback: () => {
        try {
          end('ROLLBACK');
        } catch {
          /* never throws */
        }
      },
    };
  }

  /** The schema lock is the write lock, held for the whole session: its transaction is the session's. */
  async function schemaSession<T>(fn: (s: SchemaSession) => Promise<T>): Promise<T> {
    const w = writer(await acquire());
    const session: SchemaSession = {
      all: async (sql, params) => w.all(sql, params) as Row[],
      run: async (sql) => w.run(sql, []) as void,
      transaction: (f) => f(w),
    };
    try {
      const r = await fn(session);
      w.commit();
      return r;
    } catch (e) {
      w.rollback();
      throw e;
    }
  }

  return {
    dialect: 'sqlite',
    reader,
    begin: async () => writer(await acquire()),
    withSchemaLock: (fn) => schemaSession((s) => s.transaction(fn)),
    withSchemaSession: schemaSession,
    async close() {
      closed = true;
      // Let the transaction holding the turn, and those already waiting, finish first.
      while (held) await new Promise<void>((r) => waiting.push(r)).then(release);
      endSnapshot();
      readerDb.close();
      writerDb.close();
    },
  };
}
