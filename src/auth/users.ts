/**
 * Where users live (docs/users.md): three tables in the app's store, so that any instance answers
 * any signed-in visitor and nothing about a user is kept in one process's memory.
 *
 * - `lw__user`: one row per account, keyed by provider and subject (the provider's stable id of
 *   the person). Accounts are never merged by e-mail: the same address at two providers is two
 *   accounts, since a provider that does not verify addresses could otherwise take over another's.
 * - `lw__signin`: which user a session belongs to, with an expiry. A session id is replaced at
 *   sign-in and at sign-out (no fixation), so a row is written once and deleted, never updated.
 * - `lw__auth_attempt`: a sign-in under way, keyed by its `state`: the session that started it,
 *   the provider, the nonce and PKCE verifier, and the page to go back to. Single-use, 10 minutes.
 */
import { randomUUID } from 'node:crypto';
import { ensureTables, inTransaction, type Engine, type Row, type Writer } from '../store/index.js';

/** A signed-in session lasts this long (and its cookie as long). */
export const SIGNIN_TTL_MS = 30 * 24 * 3600_000;
/** A sign-in must come back from its provider within this time. */
export const ATTEMPT_TTL_MS = 10 * 60_000;

/** A user as pages and scripts see them (`Me`). */
export interface SignedInUser {
  id: string;
  provider: string;
  name: string;
  email: string | null;
  picture: string | null;
}

/** What a provider said about the person who signed in. */
export interface ProviderAccount {
  provider: string;
  subject: string;
  name: string | null;
  email: string | null;
  picture: string | null;
}

/** A sign-in under way. */
export interface SignInAttempt {
  sid: string;
  provider: string;
  nonce: string | null;
  verifier: string;
  next: string;
}

export class UserStore {
  readonly engine: Engine;
  readonly #p: (i: number) => string;

  constructor(engine: Engine) {
    this.engine = engine;
    this.#p = engine.dialect === 'sqlite' ? () => '?' : (i) => `$${i}`;
  }

  /** Creates the tables when missing (both dialects; nothing is locked when they are there: src/store/catalog.ts). */
  async ensure(): Promise<void> {
    const int = this.engine.dialect === 'sqlite' ? 'INTEGER' : 'BIGINT';
    await ensureTables(this.engine, [
      {
        table: 'lw__user',
        create: `CREATE TABLE IF NOT EXISTS "lw__user" ("id" TEXT PRIMARY KEY, "provider" TEXT NOT NULL, "subject" TEXT NOT NULL, "name" TEXT NOT NULL, "email" TEXT, "picture" TEXT, "created" ${int} NOT NULL, "seen" ${int} NOT NULL)`,
        indexes: [{ name: 'lw__user_account', columns: ['provider', 'subject'], unique: true }],
      },
      {
        table: 'lw__signin',
        create: `CREATE TABLE IF NOT EXISTS "lw__signin" ("sid" TEXT PRIMARY KEY, "user" TEXT NOT NULL, "expires" ${int} NOT NULL)`,
        indexes: [{ name: 'lw__signin_expires', columns: ['expires'], unique: false }],
      },
      {
        table: 'lw__auth_attempt',
        create: `CREATE TABLE IF NOT EXISTS "lw__auth_attempt" ("state" TEXT PRIMARY KEY, "sid" TEXT NOT NULL, "provider" TEXT NOT NULL, "nonce" TEXT, "verifier" TEXT NOT NULL, "next" TEXT NOT NULL, "expires" ${int} NOT NULL)`,
        indexes: [{ name: 'lw__auth_attempt_expires', columns: ['expires'], unique: false }],
      },
    ]);
  }

  /** The user a session is signed in as (undefined when none, or expired). One indexed read. */
  userOf(sid: string, now = Date.now()): SignedInUser | undefined | Promise<SignedInUser | undefined> {
    const rows = this.engine.reader.all(
      `SELECT u."id", u."provider", u."name", u."email", u."picture", s."expires" FROM "lw__signin" s JOIN "lw__user" u ON u."id" = s."user" WHERE s."sid" = ${this.#p(1)}`,
      [sid],
    );
    const read = (r: Row[]): SignedInUser | undefined => {
      const row = r[0];
      if (!row || Number(row[5]) < now) return undefined;
      return { id: String(row[0]), provider: String(row[1]), name: String(row[2]), email: row[3] === null ? null : String(row[3]), picture: row[4] === null ? null : String(row[4]) };
    };
    return rows instanceof Promise ? rows.then(read) : read(rows);
  }

  /** Records a sign-in under way. */
  async startAttempt(state: string, attempt: SignInAttempt, now = Date.now()): Promise<void> {
    await this.#write((w) =>
      w.run(`INSERT INTO "lw__auth_attempt" ("state", "sid", "provider", "nonce", "verifier", "next", "expires") VALUES (${this.#ps(7)})`, [
        state,
        attempt.sid,
        attempt.provider,
        attempt.nonce,
        attempt.verifier,
        attempt.next,
        now + ATTEMPT_TTL_MS,
      ]),
    );
  }

  /** Takes a sign-in under way by its state: read and deleted at once, so a replayed callback finds nothing. */
  async takeAttempt(state: string, now = Date.now()): Promise<SignInAttempt | undefined> {
    let found: SignInAttempt | undefined;
    await this.#write(async (w) => {
      const rows = await w.all(`SELECT "sid", "provider", "nonce", "verifier", "next", "expires" FROM "lw__auth_attempt" WHERE "state" = ${this.#p(1)}`, [state]);
      const row = rows[0];
      if (!row) return;
      await w.run(`DELETE FROM "lw__auth_attempt" WHERE "state" = ${this.#p(1)}`, [state]);
      if (Number(row[5]) < now) return;
      found = { sid: String(row[0]), provider: String(row[1]), nonce: row[2] === null ? null : String(row[2]), verifier: String(row[3]), next: String(row[4]) };
    });
    return found;
  }

  /**
   * Signs `sid` (a new session id) in as the account: the user row is made or refreshed (name,
   * e-mail and picture as the provider says now), and `oldSid`'s sign-in, if any, is ended.
   */
  async signIn(sid: string, account: ProviderAccount, oldSid: string | undefined, now = Date.now()): Promise<SignedInUser> {
    let user: SignedInUser | undefined;
    await this.#write(async (w) => {
      const rows = await w.all(`SELECT "id" FROM "lw__user" WHERE "provider" = ${this.#p(1)} AND "subject" = ${this.#p(2)}`, [account.provider, account.subject]);
      const name = account.name ?? account.email ?? 'User';
      let id: string;
      if (rows.length) {
        id = String(rows[0]![0]);
        await w.run(`UPDATE "lw__user" SET "name" = ${this.#p(1)}, "email" = ${this.#p(2)}, "picture" = ${this.#p(3)}, "seen" = ${this.#p(4)} WHERE "id" = ${this.#p(5)}`, [
          name,
          account.email,
          account.picture,
          now,
          id,
        ]);
      } else {
        id = randomUUID();
        await w.run(`INSERT INTO "lw__user" ("id", "provider", "subject", "name", "email", "picture", "created", "seen") VALUES (${this.#ps(8)})`, [
          id,
          account.provider,
          account.subject,
          name,
          account.email,
          account.picture,
          now,
          now,
        ]);
      }
      if (oldSid !== undefined) await w.run(`DELETE FROM "lw__signin" WHERE "sid" = ${this.#p(1)}`, [oldSid]);
      await w.run(`INSERT INTO "lw__signin" ("sid", "user", "expires") VALUES (${this.#ps(3)})`, [sid, id, now + SIGNIN_TTL_MS]);
      user = { id, provider: account.provider, name, email: account.email, picture: account.picture };
    });
    return user!;
  }

  /** Ends the sign-in of a session. */
  async signOut(sid: string): Promise<void> {
    await this.#write((w) => w.run(`DELETE FROM "lw__signin" WHERE "sid" = ${this.#p(1)}`, [sid]));
  }

  /** Deletes expired sign-ins and attempts; returns how many. */
  async sweep(now = Date.now()): Promise<number> {
    let n = 0;
    for (const table of ['lw__signin', 'lw__auth_attempt']) {
      await this.#write(async (w) => {
        const rows = await w.all(`SELECT COUNT(*) FROM "${table}" WHERE "expires" < ${this.#p(1)}`, [now]);
        n += Number(rows[0]?.[0] ?? 0);
        await w.run(`DELETE FROM "${table}" WHERE "expires" < ${this.#p(1)}`, [now]);
      });
    }
    return n;
  }

  /** `?, ?, ?` or `$1, $2, $3`. */
  #ps(n: number): string {
    return Array.from({ length: n }, (_, i) => this.#p(i + 1)).join(', ');
  }

  #write(fn: (w: Writer) => unknown): Promise<void> {
    return inTransaction(this.engine, fn);
  }
}


