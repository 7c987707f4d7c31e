/**
 * The outbox: one table of the app's store, `lw__outbox`, holding each message from the request
 * that queued it until it is delivered (and a day after). Queuing is an INSERT in the request's
 * own write transaction, so a request that rolls back queues nothing, and a message queued by a
 * committed request survives a crash or a mail server outage.
 *
 * The table is named like the other tables Laneway keeps for itself (`lw__schema`, `lw__uid`,
 * `lw__session`): with two underscores, because a model's table is `lw_<Model>`, and SQLite
 * compares table names without regard to case (a model `Outbox` would own `lw_outbox`).
 *
 * Columns (times in ms since the epoch):
 *
 * | column        | meaning                                                                   |
 * |---------------|---------------------------------------------------------------------------|
 * | `id`          | random UUID; also the Message-ID's left part, the same on every attempt   |
 * | `message`     | the MailMessage, JSON                                                      |
 * | `created`     | when the request queued it (the Date header)                              |
 * | `attempts`    | how many times a worker claimed it for sending                            |
 * | `next_at`     | not tried before this time (backoff after a failure)                      |
 * | `lease_until` | a worker is sending it until this time; after, any worker may take it     |
 * | `sent_at`     | the mail server accepted it (the row is deleted a day later)              |
 * | `failed_at`   | refused for good or given up (kept 30 days for inspection)                |
 * | `last_error`  | the last failure, or the recipients refused of a delivered message        |
 */
import { randomUUID } from 'node:crypto';
import { ensureTables, type Dialect, type Engine, type Writer } from '../store/index.js';
import { checkMailMessage, type MailMessage } from './message.js';

export const OUTBOX_TABLE = 'lw__outbox';

/** Rows a worker reads per query of due messages. */
export const DUE_BATCH = 20;

/** The statements of the outbox for one dialect, written with `?` and numbered for PostgreSQL. */
export interface OutboxSql {
  insert: string;
  /** Ids of due messages: [now, now]. */
  due: string;
  /** Takes the lease of one message, only when nobody holds it: [leaseUntil, id, now, now] → message, created, attempts. */
  claim: string;
  /** [sentAt, note, id]. */
  sent: string;
  /** Back in the queue: [nextAt, error, id, ourLease]. */
  retry: string;
  /** Refused for good or given up: [failedAt, error, id, ourLease]. */
  failed: string;
  /** [sentBefore, failedBefore]. */
  sweep: string;
}

function numbered(dialect: Dialect, sql: string): string {
  if (dialect === 'sqlite') return sql;
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

const T = `"${OUTBOX_TABLE}"`;
const OPEN = `"sent_at" IS NULL AND "failed_at" IS NULL`;
const FREE = `("lease_until" IS NULL OR "lease_until" < ?)`;

const TEXTS: OutboxSql = {
  insert: `INSERT INTO ${T} ("id", "message", "created", "attempts", "next_at") VALUES (?, ?, ?, 0, ?)`,
  due: `SELECT "id" FROM ${T} WHERE ${OPEN} AND "next_at" <= ? AND ${FREE} ORDER BY "next_at", "created", "id" LIMIT ${DUE_BATCH}`,
  claim: `UPDATE ${T} SET "lease_until" = ?, "attempts" = "attempts" + 1 WHERE "id" = ? AND ${OPEN} AND "next_at" <= ? AND ${FREE} RETURNING "message", "created", "attempts"`,
  sent: `UPDATE ${T} SET "sent_at" = ?, "lease_until" = NULL, "last_error" = ? WHERE "id" = ?`,
  // Only while this worker's lease holds: a worker whose lease ran out must not free a row another one took.
  retry: `UPDATE ${T} SET "next_at" = ?, "last_error" = ?, "lease_until" = NULL WHERE "id" = ? AND "lease_until" = ? AND ${OPEN}`,
  failed: `UPDATE ${T} SET "failed_at" = ?, "last_error" = ?, "lease_until" = NULL WHERE "id" = ? AND "lease_until" = ? AND ${OPEN}`,
  sweep: `DELETE FROM ${T} WHERE "sent_at" < ? OR "failed_at" < ?`,
};

const BY_DIALECT: Record<Dialect, OutboxSql> = {
  sqlite: TEXTS,
  postgres: Object.fromEntries(Object.entries(TEXTS).map(([k, v]) => [k, numbered('postgres', v)])) as unknown as OutboxSql,
};

export function outboxSql(dialect: Dialect): OutboxSql {
  return BY_DIALECT[dialect];
}

/**
 * Creates the outbox table and its index when missing (both dialects; under the schema lock, so
 * instances starting together do it one after the other; nothing is locked when they are there:
 * src/store/catalog.ts). Call once at start, before
 * `enqueueMail` or a MailWorker.
 */
export async function ensureMailTables(engine: Engine): Promise<void> {
  const int = engine.dialect === 'sqlite' ? 'INTEGER' : 'BIGINT';
  await ensureTables(engine, [
    {
      table: OUTBOX_TABLE,
      create:
        `CREATE TABLE IF NOT EXISTS ${T} ("id" TEXT PRIMARY KEY, "message" TEXT NOT NULL, "created" ${int} NOT NULL, ` +
        `"attempts" INTEGER NOT NULL DEFAULT 0, "next_at" ${int} NOT NULL, "lease_until" ${int}, "sent_at" ${int}, "failed_at" ${int}, "last_error" TEXT)`,
      indexes: [{ name: `${OUTBOX_TABLE}_next_at`, columns: ['next_at'], unique: false }],
    },
  ]);
}

/**
 * Queues one message in the caller's write transaction: it is delivered only if that transaction
 * commits. The message is checked first (`checkMailMessage`: a LanewayError LW_MAIL_INVALID is
 * thrown and nothing is written). A Writer does not tell its dialect, so the caller passes it:
 * the Engine itself will do (`enqueueMail(writer, message, engine)`). `now` is the queuing time
 * (tests pass their clock). On PostgreSQL a writer that holds writes back reports a failed INSERT
 * at its commit.
 */
export function enqueueMail(writer: Writer, message: MailMessage, store: { readonly dialect: Dialect }, now: number = Date.now()): void | Promise<void> {
  const clean = checkMailMessage(message);
  return writer.run(outboxSql(store.dialect).insert, [randomUUID(), JSON.stringify(clean), now, now]);
}
