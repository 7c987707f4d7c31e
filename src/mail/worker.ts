/**
 * The delivery worker: sends what the outbox holds, one message at a time, from every process that
 * serves the app (docs/email.md "Delivery").
 *
 * A pass reads the ids of due messages, and for each one takes a lease (an UPDATE that succeeds
 * only while nobody holds the row, in a write transaction of its own: on one database, two
 * workers never send the same row at once), sends it, and records the outcome:
 *
 * - accepted → `sent_at` (the row is deleted after `keepSentMs`);
 * - refused for good (MailSendError `permanent`) → `failed_at` and `last_error`, logged
 *   LW_MAIL_REFUSED, never tried again;
 * - failed for now → `next_at` after an exponential backoff (5 s, 10 s, 20 s… at most 1 h),
 *   logged LW_MAIL_RETRY (LW_MAIL_AUTH for refused credentials); once the next attempt would come
 *   more than `giveUpAfterMs` (24 h) after the first, the message is given up instead
 *   (`failed_at`, LW_MAIL_GAVE_UP). A failure of the server or of the credentials (`connection`,
 *   `auth`) also pauses the whole worker (5 s, 10 s… at most 5 min), so that an outage or a wrong
 *   password costs one attempt per pause rather than one per queued message.
 *
 * A process that dies while sending leaves its lease behind: the row is taken again when the lease
 * ends (`leaseMs`, far longer than the SMTP timeouts allow a send to last). So a message is sent
 * at least once; it is sent twice only when a process dies (or loses the database) between the
 * server's acceptance and the UPDATE recording it, and the repeat carries the same Message-ID.
 *
 * Every time comes from `now()` and every delay from `timings`, so tests drive a clock of their own;
 * `kick()` answers when a pass that began after it has finished. The poll timer is unref'd: the
 * worker never keeps a process alive.
 */
import { Passes } from '../shared/index.js';
import type { Engine } from '../store/index.js';
import { checkMailMessage } from './message.js';
import { DUE_BATCH, outboxSql, type OutboxSql } from './outbox.js';
import { createFileTransport, MailSendError, type MailTransport } from './transport.js';
import path from 'node:path';

/** The log lines of the worker: an info line per delivered message, an error line per failure. Never a body or a password. */
export interface MailLog {
  info(message: string): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** Every delay of the worker, in ms (defaults in DEFAULT_MAIL_TIMINGS). */
export interface MailTimings {
  /** Between passes when nobody kicks. */
  pollMs: number;
  /** How long a worker owns a message it is sending; a crashed worker's messages are taken again after it. */
  leaseMs: number;
  /** First retry delay; each failure doubles it… */
  retryBaseMs: number;
  /** …up to this. */
  retryMaxMs: number;
  /** A message whose next attempt would come later than this after its first is given up. */
  giveUpAfterMs: number;
  /** Longest pause of the whole worker after a server or credentials failure. */
  pauseMaxMs: number;
  /** Delivered messages are deleted after this. */
  keepSentMs: number;
  /** Failed messages (refused, given up) are deleted after this. */
  keepFailedMs: number;
  /** Between two deletions of old rows. */
  sweepEveryMs: number;
}

export const DEFAULT_MAIL_TIMINGS: MailTimings = {
  pollMs: 5_000,
  leaseMs: 10 * 60_000,
  retryBaseMs: 5_000,
  retryMaxMs: 3_600_000,
  giveUpAfterMs: 24 * 3_600_000,
  pauseMaxMs: 5 * 60_000,
  keepSentMs: 24 * 3_600_000,
  keepFailedMs: 30 * 24 * 3_600_000,
  sweepEveryMs: 10 * 60_000,
};

export interface MailWorkerOptions {
  /** The app's data directory: without `transport`, messages are written to `<dataDir>/outbox/`. */
  dataDir: string;
  /** Where messages go (`mailTransportFromEnv`); closed by `stop()`. */
  transport?: MailTransport | undefined;
  log: MailLog;
  /** The clock (ms since the epoch). */
  now?: () => number;
  timings?: Partial<MailTimings>;
}

interface Claimed {
  id: string;
  message: string;
  created: number;
  attempts: number;
  /** The lease this worker holds (the outcome is recorded only while it does). */
  lease: number;
}

/** The retry delay after the `attempt`-th attempt (1-based). */
export function retryDelay(attempt: number, t: Pick<MailTimings, 'retryBaseMs' | 'retryMaxMs'>): number {
  return Math.min(t.retryBaseMs * 2 ** Math.max(0, attempt - 1), t.retryMaxMs);
}

/** How long after the first attempt the attempt after `attempts` comes (the sum of the delays so far). */
function retrySpan(attempts: number, t: MailTimings): number {
  let sum = 0;
  for (let a = 1; a <= attempts; a++) sum += retryDelay(a, t);
  return sum;
}

export class MailWorker {
  readonly #engine: Engine;
  readonly #transport: MailTransport;
  readonly #log: MailLog;
  readonly #now: () => number;
  readonly #t: MailTimings;
  readonly #sql: OutboxSql;
  /** The passes over the outbox: one at a time, on the poll timer and on kicks. */
  readonly #passes: Passes;
  /** No message is sent before this (a server or credentials failure). */
  #pausedUntil = 0;
  #pauses = 0;
  #lastSweep = -Infinity;
  /** The last outbox error logged (logged once, until the outbox answers again). */
  #outboxError: string | undefined;
  /** Messages the server accepted whose `sent_at` could not be written yet (retried at each pass). */
  readonly #unrecorded = new Map<string, { sentAt: number; note: string | null }>();

  constructor(engine: Engine, options: MailWorkerOptions) {
    this.#engine = engine;
    this.#transport = options.transport ?? createFileTransport(path.join(options.dataDir, 'outbox'));
    this.#log = options.log;
    this.#now = options.now ?? Date.now;
    this.#t = { ...DEFAULT_MAIL_TIMINGS, ...options.timings };
    this.#sql = outboxSql(engine.dialect);
    this.#passes = new Passes(() => this.#run(), this.#t.pollMs);
  }

  /** Logs where messages go, then polls every `pollMs` (and at once). The outbox table must exist (`ensureMailTables`). */
  start(): void {
    if (this.#passes.stopped || this.#passes.started) return;
    this.#log.info(`mail: ${this.#transport.description}`);
    this.#passes.start();
  }

  /**
   * Looks for due messages now (call it after a commit that queued one). Resolves, never rejects,
   * when a pass that began after the call has finished; a pass already running is followed by one
   * more, shared by every kick made meanwhile.
   */
  kick(): Promise<void> {
    return this.#passes.kick();
  }

  /** Stops polling, waits for the message being sent (its outcome is recorded), then closes the transport. */
  async stop(): Promise<void> {
    if (!(await this.#passes.stop())) return;
    try {
      await this.#recordUnrecorded();
    } catch {
      // still unreachable: those messages are sent again when their lease ends (the documented duplicate)
    }
    this.#transport.close();
  }

  /** One pass: record what is pending, sweep old rows, then send due messages until none is left (or a pause). */
  async #run(): Promise<void> {
    try {
      await this.#recordUnrecorded();
      const start = this.#now();
      if (start - this.#lastSweep >= this.#t.sweepEveryMs) {
        await this.#write(this.#sql.sweep, [start - this.#t.keepSentMs, start - this.#t.keepFailedMs]);
        this.#lastSweep = start;
      }
      for (;;) {
        const now = this.#now();
        if (this.#passes.stopped || now < this.#pausedUntil) break;
        const rows = await this.#engine.reader.all(this.#sql.due, [now, now]);
        let taken = 0;
        for (const row of rows) {
          if (this.#passes.stopped || this.#now() < this.#pausedUntil) break;
          const claimed = await this.#claim(String(row[0]));
          if (claimed) {
            taken++;
            await this.#deliver(claimed);
          }
        }
        // A full batch may hide more due messages; a batch other workers took entirely ends the pass.
        if (rows.length < DUE_BATCH || taken === 0) break;
      }
      if (this.#outboxError !== undefined) {
        this.#outboxError = undefined;
        this.#log.info('mail: the outbox is reachable again');
      }
    } catch (e) {
      const message = (e as Error).message ?? String(e);
      if (this.#outboxError !== message) {
        this.#outboxError = message;
        this.#log.error(`mail: cannot read or update the outbox (tried again every ${this.#t.pollMs / 1000} s): ${message}`, { code: 'LW_MAIL_OUTBOX' });
      }
    }
  }

  /** One statement in a write transaction of its own. */
  async #write(sql: string, params: Array<string | number | null>): Promise<void> {
    const w = await this.#engine.begin();
    try {
      await w.run(sql, params);
      await w.commit();
    } catch (e) {
      await w.rollback();
      throw e;
    }
  }

  /** Takes the lease of a due message; undefined when another worker (or this one) has it, or it is done. */
  async #claim(id: string): Promise<Claimed | undefined> {
    const now = this.#now();
    const lease = now + this.#t.leaseMs;
    const w = await this.#engine.begin();
    let rows;
    try {
      rows = await w.all(this.#sql.claim, [lease, id, now, now]);
      await w.commit();
    } catch (e) {
      await w.rollback();
      throw e;
    }
    const r = rows[0];
    return r ? { id, message: String(r[0]), created: Number(r[1]), attempts: Number(r[2]), lease } : undefined;
  }

  async #deliver(c: Claimed): Promise<void> {
    let message;
    try {
      message = checkMailMessage(JSON.parse(c.message));
    } catch (e) {
      // Only a row changed by hand gets here: enqueueMail stores checked messages.
      return this.#failed(c, new MailSendError('permanent', `the stored message is unusable: ${(e as Error).message}`));
    }
    const from = message.from ?? this.#transport.defaultFrom;
    if (!from) return this.#failed(c, new MailSendError('permanent', 'the message names no sender, and the transport has no default sender (LANEWAY_MAIL_FROM)'));
    let outcome;
    try {
      outcome = await this.#transport.send({ ...message, from, id: c.id, date: new Date(c.created) });
    } catch (e) {
      return this.#failed(c, e instanceof MailSendError ? e : new MailSendError('message', (e as Error).message ?? String(e)));
    }
    this.#pauses = 0;
    const note = outcome.rejected.length ? `the server refused ${outcome.rejected.length} recipient(s): ${outcome.rejected.join(', ')}`.slice(0, 1000) : null;
    this.#log.info(outcome.file ? `mail: message ${c.id} written to ${outcome.file}` : `mail: message ${c.id} sent${outcome.response ? ` (${outcome.response.slice(0, 200)})` : ''}`);
    if (note) this.#log.error(`mail: message ${c.id} was delivered, but ${note}`, { code: 'LW_MAIL_REFUSED', id: c.id });
    // Kept until written: should the database fail now, the next pass writes it (before the lease ends, with luck).
    this.#unrecorded.set(c.id, { sentAt: this.#now(), note });
    await this.#recordUnrecorded();
  }

  /** Writes `sent_at` of accepted messages; those that cannot be written stay for the next pass. */
  async #recordUnrecorded(): Promise<void> {
    for (const [id, { sentAt, note }] of this.#unrecorded) {
      await this.#write(this.#sql.sent, [sentAt, note, id]);
      this.#unrecorded.delete(id);
    }
  }

  async #failed(c: Claimed, err: MailSendError): Promise<void> {
    const now = this.#now();
    const fields = { id: c.id, attempt: c.attempts, ...(err.responseCode !== undefined ? { reply: err.responseCode } : {}) };
    if (err.kind === 'permanent') {
      await this.#write(this.#sql.failed, [now, err.message, c.id, c.lease]);
      this.#log.error(`mail: message ${c.id} was refused and will not be tried again: ${err.message}`, { code: 'LW_MAIL_REFUSED', ...fields });
      return;
    }
    if (err.kind === 'connection' || err.kind === 'auth') {
      this.#pausedUntil = now + Math.min(retryDelay(++this.#pauses, this.#t), this.#t.pauseMaxMs);
    }
    if (retrySpan(c.attempts, this.#t) > this.#t.giveUpAfterMs) {
      await this.#write(this.#sql.failed, [now, err.message, c.id, c.lease]);
      this.#log.error(`mail: message ${c.id} could not be delivered in ${c.attempts} attempts over ${Math.round(this.#t.giveUpAfterMs / 3_600_000)} h and is given up: ${err.message}`, { code: 'LW_MAIL_GAVE_UP', ...fields });
      return;
    }
    const next = now + retryDelay(c.attempts, this.#t);
    await this.#write(this.#sql.retry, [next, err.message, c.id, c.lease]);
    const code = err.kind === 'auth' ? 'LW_MAIL_AUTH' : 'LW_MAIL_RETRY';
    const why = err.kind === 'auth' ? 'the mail server refused the credentials of LANEWAY_SMTP_URL' : err.kind === 'connection' ? 'the mail server cannot be reached' : 'the mail server refused it for now';
    this.#log.error(`mail: message ${c.id} not sent (${why}); next attempt in ${Math.round((next - now) / 1000)} s: ${err.message}`, { code, ...fields });
  }
}
