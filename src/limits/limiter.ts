/**
 * The limits per visitor at run time (docs/security.md "Limits per visitor"): an app's rules, read
 * at load (rules.ts), and its counters, in the store once it is open (store/ CounterStore). A
 * check is one hit of one counter: the count of the visitor's current window goes up by what the
 * request does (1, or the messages it sends, or the bytes it uploads), and a count past the rule's
 * most is a refusal, with the seconds until the window ends.
 *
 * Windows are fixed: the window of a rule of one minute is the clock's minute. A visitor is the
 * signed-in user when the request knows it (an `auth: required` or `optional` area), else the
 * client address.
 *
 * On PostgreSQL a check that finds units of its window reserved by this process spends them with
 * no statement, and one that finds none reserves the rule's `lease` in one (lease.ts). On SQLite
 * every check is the upsert inside the request's own transaction, which costs no round trip.
 */
import { CounterStore, type Engine, type Writer } from '../store/index.js';
import { LeaseBook } from './lease.js';
import { ruleFor, type LimitKind, type LimitRule, type VisitorLimits } from './rules.js';

/** A request over a limit. */
export interface Refusal {
  kind: LimitKind;
  /** Seconds until the window ends (Retry-After). */
  retryAfter: number;
  /** The first refusal of this visitor and counter in this window, in this process: worth a log line. */
  first: boolean;
  visitor: string;
}

/** Refusals remembered for `first`, at most. */
const LOGGED_MAX = 10_000;

/** The key of a visitor: `user:<id>` when signed in, else `addr:<client address>`. */
export function visitorKey(user: { id: string } | null | undefined, address: string | undefined): string {
  return user ? `user:${user.id}` : `addr:${address ?? 'unknown'}`;
}

export class Limiter {
  readonly limits: VisitorLimits;
  #counters: CounterStore | undefined;
  /** PostgreSQL: the units this process reserved and has not spent (lease.ts). */
  #leases: LeaseBook | undefined;
  /** PostgreSQL: every hit through the leases; SQLite: those counted outside a request's transaction. */
  #postgres = false;
  /** Counter windows already refused once (key → the window's end). */
  readonly #logged = new Map<string, number>();

  constructor(limits: VisitorLimits) {
    this.limits = limits;
  }

  /** The rule an endpoint at `pattern` counts `kind` against (undefined: `off`). Decided at load. */
  rule(kind: LimitKind, pattern?: string): LimitRule | undefined {
    return ruleFor(this.limits, kind, pattern);
  }

  /** Makes the counter table when missing; until then (and after `close`) nothing is counted. */
  async open(engine: Engine): Promise<void> {
    const counters = new CounterStore(engine);
    await counters.ensure();
    this.#counters = counters;
    this.#leases = new LeaseBook();
    this.#postgres = engine.dialect === 'postgres';
  }

  close(): void {
    this.#counters = undefined;
    this.#leases = undefined;
  }

  /** Deletes windows gone by (every instance may: the DELETE is idempotent), and the leases of them. */
  sweep(now = Date.now()): Promise<number> {
    this.#leases?.prune(now);
    return this.#counters ? this.#counters.sweep(now) : Promise.resolve(0);
  }

  /**
   * Counts `n` for `visitor` against `rule`: undefined when within it, else the refusal. `tx`: the
   * request's write transaction (SQLite counts in it; see CounterStore.hit). Synchronous on SQLite
   * with `tx`, and on PostgreSQL when the units are reserved here already.
   */
  hit(rule: LimitRule, visitor: string, n = 1, tx?: Writer, now = Date.now()): Refusal | undefined | Promise<Refusal | undefined> {
    const counters = this.#counters;
    if (!counters) return undefined;
    const start = now - (now % rule.windowMs);
    const expires = start + rule.windowMs;
    // A lease on PostgreSQL, and on SQLite for a hit outside a request's transaction (the writes of
    // a script are counted before theirs begins); in a transaction, SQLite counts every hit in it,
    // so that it rolls back with the request (docs/security.md "Limits per visitor").
    const leases = this.#postgres || tx === undefined ? this.#leases : undefined;
    if (leases) {
      const key = `${rule.key}\u0000${visitor}\u0000${start}`;
      // Most hits: units held here, spent with nothing made (no window, no closure, no Promise).
      const here = leases.spend(key, n, rule.lease);
      if (here !== undefined) return here ? undefined : this.#refusal(rule, visitor, start, expires, now);
      const window = { kind: rule.key, visitor, start, expires };
      const ok = leases.acquire(key, n, rule.lease, rule.max, expires, now, (q) => Promise.resolve(counters.hit(window, q)));
      const verdict = (accepted: boolean): Refusal | undefined => (accepted ? undefined : this.#refusal(rule, visitor, start, expires, now));
      return ok instanceof Promise ? ok.then(verdict) : verdict(ok);
    }
    const count = counters.hit({ kind: rule.key, visitor, start, expires }, n, tx);
    const verdict = (c: number): Refusal | undefined => (c <= rule.max ? undefined : this.#refusal(rule, visitor, start, expires, now));
    return count instanceof Promise ? count.then(verdict) : verdict(count);
  }

  #refusal(rule: LimitRule, visitor: string, start: number, expires: number, now: number): Refusal {
    const key = `${rule.key}\u0000${visitor}\u0000${start}`;
    const first = !this.#logged.has(key);
    if (first) {
      if (this.#logged.size >= LOGGED_MAX) {
        for (const [k, end] of this.#logged) if (end <= now) this.#logged.delete(k);
        if (this.#logged.size >= LOGGED_MAX) this.#logged.clear();
      }
      this.#logged.set(key, expires);
    }
    return { kind: rule.kind, retryAfter: Math.max(1, Math.ceil((expires - now) / 1000)), first, visitor };
  }
}
