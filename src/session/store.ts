/**
 * Where visitors' state lives: three small tables in the app's store (SQLite or PostgreSQL), so
 * that any instance of an app can answer any visitor and nothing is kept in one process's memory.
 *
 * - `lw__session`: one row per session that has stored something (its flash: the messages and
 *   `Messages.data` values for its next page), with an expiry;
 * - `lw__form_state`: form states made by `.invalid(…)` and `.form(…)` (values and messages
 *   carried to the next view), readable by their session only, for FORM_TTL_MS;
 * - `lw__form_used`: the form-state ids already submitted successfully: written in the request's
 *   own transaction, so a form is accepted once even when the same POST is replayed.
 *
 * Expired rows are swept (VisitorStore.sweep, from a timer of the server).
 */
import { ensureTables, inTransaction, type Engine, type Row, type SqlValue, type Writer } from '../store/index.js';

/** A session's stored state lives this long after its last write. */
export const SESSION_TTL_MS = 30 * 24 * 3600_000;
/** Form states are readable for 4 hours (docs/messages.md "The session"). */
export const FORM_TTL_MS = 4 * 3600_000;
/** A session's flash holds at most this many messages and this many `Messages.data` values, the newest (docs/messages.md). */
export const FLASH_MAX = 50;
/** The most bytes of values one stored form state keeps (docs/forms.md): fields past it are left out. */
export const FORM_STATE_MAX_BYTES = 64 * 1024;
/** The most stored form states one visitor has: saving another deletes the oldest (docs/forms.md). */
export const FORM_STATES_PER_VISITOR = 10;

export type MessageType = 'success' | 'info' | 'warning' | 'error';

export interface FlashMessage {
  type: MessageType;
  /** The field the message belongs to (opaque to the server), for field messages. */
  field?: string;
  value: string;
}

/** What one request leaves for the next page of its visitor. */
export interface Flash {
  messages: FlashMessage[];
  data: Record<string, string>;
}

export interface FormState {
  sid: string;
  form: string;
  /** What the view shows again: field values by field name, and messages. */
  values: Record<string, unknown>;
  messages: FlashMessage[];
  /** Set by `.form(…)`: the state came from a valid submission (the instance is `ready()`). */
  ready: boolean;
}

export class VisitorStore {
  readonly engine: Engine;
  readonly #p: (i: number) => string;

  constructor(engine: Engine) {
    this.engine = engine;
    this.#p = engine.dialect === 'sqlite' ? () => '?' : (i) => `$${i}`;
  }

  /** Creates the tables when missing (both dialects; nothing is locked when they are there: src/store/catalog.ts). */
  async ensure(): Promise<void> {
    const text = 'TEXT';
    const int = this.engine.dialect === 'sqlite' ? 'INTEGER' : 'BIGINT';
    // SQLite: small rows keyed by random text are stored in their primary key's tree (WITHOUT
    // ROWID), one tree to write instead of two: a form POST writes both tables.
    const keyed = this.engine.dialect === 'sqlite' ? ' WITHOUT ROWID' : '';
    const expires = (table: string) => [{ name: `${table}_expires`, columns: ['expires'], unique: false }];
    await ensureTables(this.engine, [
      { table: 'lw__session', create: `CREATE TABLE IF NOT EXISTS "lw__session" ("id" ${text} PRIMARY KEY, "expires" ${int} NOT NULL, "flash" ${text})${keyed}`, indexes: expires('lw__session') },
      {
        table: 'lw__form_state',
        create: `CREATE TABLE IF NOT EXISTS "lw__form_state" ("id" ${text} PRIMARY KEY, "sid" ${text} NOT NULL, "form" ${text} NOT NULL, "data" ${text} NOT NULL, "expires" ${int} NOT NULL)`,
        indexes: [...expires('lw__form_state'), { name: 'lw__form_state_sid', columns: ['sid'], unique: false }],
      },
      { table: 'lw__form_used', create: `CREATE TABLE IF NOT EXISTS "lw__form_used" ("id" ${text} PRIMARY KEY, "expires" ${int} NOT NULL)${keyed}`, indexes: expires('lw__form_used') },
    ]);
  }

  /** The flash a session left for its next page (undefined when none, or expired). */
  flash(sid: string, now = Date.now()): { flash: Flash; raw: string } | undefined | Promise<{ flash: Flash; raw: string } | undefined> {
    const rows = this.engine.reader.all(`SELECT "flash", "expires" FROM "lw__session" WHERE "id" = ${this.#p(1)}`, [sid]);
    const read = (r: Row[]) => {
      const row = r[0];
      if (!row || row[0] === null || Number(row[1]) < now) return undefined;
      return { flash: parseFlash(String(row[0])), raw: String(row[0]) };
    };
    return rows instanceof Promise ? rows.then(read) : read(rows);
  }

  /** Adds messages and data to a session's flash (creating the session row). */
  /** Adds to a visitor's flash: in `tx` when given (a request's transaction), else in a transaction of its own. */
  async addFlash(sid: string, add: Flash, now = Date.now(), tx?: Writer): Promise<void> {
    await this.#write(tx, async (w) => {
      const rows = await w.all(`SELECT "flash", "expires" FROM "lw__session" WHERE "id" = ${this.#p(1)}`, [sid]);
      const row = rows[0];
      const old = row && row[0] !== null && Number(row[1]) >= now ? parseFlash(String(row[0])) : { messages: [], data: {} };
      const merged: Flash = { messages: [...old.messages, ...add.messages].slice(-FLASH_MAX), data: newestData(old.data, add.data) };
      await w.run(
        `INSERT INTO "lw__session" ("id", "expires", "flash") VALUES (${this.#p(1)}, ${this.#p(2)}, ${this.#p(3)}) ON CONFLICT ("id") DO UPDATE SET "expires" = excluded."expires", "flash" = excluded."flash"`,
        [sid, now + SESSION_TTL_MS, JSON.stringify(merged)],
      );
    });
  }

  /** Removes a flash once shown, unless another request has added to it since (`raw` differs). */
  async takeFlash(sid: string, raw: string): Promise<void> {
    await this.#write(undefined, (w) => w.run(`UPDATE "lw__session" SET "flash" = NULL WHERE "id" = ${this.#p(1)} AND "flash" = ${this.#p(2)}`, [sid, raw]));
  }

  /**
   * Stores a form state: its values up to FORM_STATE_MAX_BYTES (the fields past it are left out),
   * and deletes the visitor's oldest states beyond FORM_STATES_PER_VISITOR.
   */
  async saveFormState(id: string, state: FormState, now = Date.now(), tx?: Writer): Promise<void> {
    const data = JSON.stringify({ values: boundedValues(state.values), messages: state.messages.slice(0, FLASH_MAX), ready: state.ready });
    const p = this.#p;
    await this.#write(tx, async (w) => {
      await w.run(`INSERT INTO "lw__form_state" ("id", "sid", "form", "data", "expires") VALUES (${p(1)}, ${p(2)}, ${p(3)}, ${p(4)}, ${p(5)})`, [id, state.sid, state.form, data, now + FORM_TTL_MS]);
      await w.run(
        `DELETE FROM "lw__form_state" WHERE "sid" = ${p(1)} AND "id" <> ${p(2)} AND "id" NOT IN ` +
          `(SELECT "id" FROM "lw__form_state" WHERE "sid" = ${p(3)} AND "id" <> ${p(4)} ORDER BY "expires" DESC, "id" DESC LIMIT ${FORM_STATES_PER_VISITOR - 1})`,
        [state.sid, id, state.sid, id],
      );
    });
  }

  /** A stored form state, when it exists and has not expired (the caller checks its session). */
  formState(id: string, now = Date.now()): FormState | undefined | Promise<FormState | undefined> {
    const rows = this.engine.reader.all(`SELECT "sid", "form", "data", "expires" FROM "lw__form_state" WHERE "id" = ${this.#p(1)}`, [id]);
    const read = (r: Row[]): FormState | undefined => {
      const row = r[0];
      if (!row || Number(row[3]) < now) return undefined;
      try {
        const data = JSON.parse(String(row[2])) as { values?: Record<string, unknown>; messages?: FlashMessage[]; ready?: boolean };
        return { sid: String(row[0]), form: String(row[1]), values: data.values ?? {}, messages: data.messages ?? [], ready: data.ready === true };
      } catch {
        return undefined;
      }
    };
    return rows instanceof Promise ? rows.then(read) : read(rows);
  }

  /**
   * Marks a form-state id as submitted, in the request's own transaction; false when it was
   * submitted already. One statement that skips an existing row rather than failing on it: a
   * replay sent while the first submission is still running waits for that one's transaction
   * (PostgreSQL) and is then refused like any replay, never with a unique-violation error (which
   * would also abort the request's transaction on PostgreSQL; docs/forms.md).
   */
  async claimForm(w: Writer, id: string, now = Date.now()): Promise<boolean> {
    const rows = await w.all(
      `INSERT INTO "lw__form_used" ("id", "expires") VALUES (${this.#p(1)}, ${this.#p(2)}) ON CONFLICT ("id") DO NOTHING RETURNING "id"`,
      [id, now + FORM_TTL_MS + 60_000],
    );
    return rows.length > 0;
  }

  /** Deletes expired rows; returns how many. */
  async sweep(now = Date.now()): Promise<number> {
    let n = 0;
    for (const table of ['lw__session', 'lw__form_state', 'lw__form_used']) {
      await this.#write(undefined, async (w) => {
        const rows = await w.all(`SELECT COUNT(*) FROM "${table}" WHERE "expires" < ${this.#p(1)}`, [now]);
        n += Number(rows[0]?.[0] ?? 0);
        await w.run(`DELETE FROM "${table}" WHERE "expires" < ${this.#p(1)}`, [now]);
      });
    }
    return n;
  }

  async #write(tx: Writer | undefined, fn: (w: Writer) => unknown): Promise<void> {
    if (tx) await fn(tx);
    else await inTransaction(this.engine, fn);
  }
}

/** `old` then `add`, a key set again counting as new: the FLASH_MAX newest values. */
function newestData(old: Record<string, string>, add: Record<string, string>): Record<string, string> {
  const entries = [...Object.entries(old).filter(([k]) => !Object.hasOwn(add, k)), ...Object.entries(add)];
  return Object.fromEntries(entries.slice(-FLASH_MAX));
}

/** A form state's values, in order, while they fit in FORM_STATE_MAX_BYTES of JSON. */
function boundedValues(values: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  let bytes = 2;
  for (const [k, v] of Object.entries(values)) {
    const size = Buffer.byteLength(JSON.stringify(k), 'utf8') + Buffer.byteLength(JSON.stringify(v) ?? 'null', 'utf8') + 2;
    if (bytes + size > FORM_STATE_MAX_BYTES) continue;
    out[k] = v;
    bytes += size;
  }
  return out;
}

function parseFlash(text: string): Flash {
  try {
    const v = JSON.parse(text) as Partial<Flash>;
    return { messages: Array.isArray(v.messages) ? v.messages : [], data: v.data && typeof v.data === 'object' ? v.data : {} };
  } catch {
    return { messages: [], data: {} };
  }
}

export type { SqlValue };
