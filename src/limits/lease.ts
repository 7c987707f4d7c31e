/**
 * Quota leases: how a process counts the limits per visitor on PostgreSQL without a statement per
 * hit (docs/security.md "Shared by every process").
 *
 * A hit that finds no units of its window here reserves some in the store, with the one statement
 * a check was anyway (the counter's upsert, adding `q`, answering the count after it): the store
 * grants `clamp(max − (count − q), 0, q)` of them — what was left under the limit before this
 * reservation — and the process spends them on later hits of the same window with no round trip.
 * The upserts of every process are serialised on the counter's row, so the units granted in all
 * never pass `max`: what lives only here is the unspent rest of a reservation the store already
 * counted. Under half a lease left, a refill of `lease` units is reserved in the background while
 * hits go on spending, so that a steady stream of hits never waits for the store. An instance thus
 * holds at most `lease + ⌊(lease − 1)/2⌋` units unspent per window (none with a lease of 1), which
 * other instances cannot have: with N instances a visitor may be refused up to N − 1 times that
 * early.
 *
 * A window the store granted less than asked is exhausted: its count only grows until the window
 * ends, so every later hit that needs more than is left here is refused with no statement.
 *
 * The book is bounded: an entry is kept only while it has units left, is exhausted, or waits for
 * its reservation; entries end with their window (`prune`), and past LEASES_MAX the ended ones go
 * first, then the oldest. Dropping an entry drops units already counted: a visitor may be refused
 * earlier, never later.
 */

/** Entries of the book, at most (a visitor's window each). */
export const LEASES_MAX = 10_000;

/** The units the store grants of a reservation of `q`, given the count it answered (after adding `q`). */
export function granted(max: number, count: number, q: number): number {
  return Math.min(q, Math.max(0, max - (count - q)));
}

/** Adds `q` to a window's count in the store and answers the count after it. */
export type Reserve = (q: number) => Promise<number>;

/** One window of one counter of one visitor, as this process holds it. */
interface Lease {
  /** Units reserved and not spent. */
  left: number;
  /** The window's end (ms since the epoch). */
  expires: number;
  /** The store granted less than asked: nothing more this window. */
  exhausted: boolean;
  /** The reservation in flight: later hits of the window wait for it (one at a time per window). */
  pending: Promise<unknown> | undefined;
}

export class LeaseBook {
  readonly #entries = new Map<string, Lease>();
  readonly #cap: number;

  constructor(cap = LEASES_MAX) {
    this.#cap = cap;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The units left here for `key` (0 when none). */
  left(key: string): number {
    return this.#entries.get(key)?.left ?? 0;
  }

  /**
   * Spends `n` units of window `key` when this process holds them and no refill is due, with
   * nothing made: true when spent, false when the window is exhausted here and `n` is more than is
   * left, undefined when `take` has work to do (a reservation to make or wait for, a refill to
   * start).
   */
  spend(key: string, n: number, lease: number): boolean | undefined {
    const e = this.#entries.get(key);
    if (!e) return undefined;
    if (e.left >= n) {
      if (!e.pending && !e.exhausted && (e.left - n) * 2 < lease) return undefined;
      e.left -= n;
      return true;
    }
    if (e.pending) return undefined;
    return e.exhausted ? false : undefined;
  }

  /**
   * Spends `n` units of window `key` (ending at `expires`): true when accepted. Synchronous when
   * the units are here (or the window is exhausted); else one reservation of the units missing
   * plus `lease − 1`, which the hit waits for. When what is left here falls under half a lease, a
   * refill of `lease` units starts in the background and hits go on spending what is left while it
   * is in flight: a steady stream of hits never waits for the store. A refusal spends nothing: what
   * was here, and what the store granted, stays.
   */
  take(key: string, n: number, lease: number, max: number, expires: number, now: number, reserve: Reserve): boolean | Promise<boolean> {
    return this.spend(key, n, lease) ?? this.acquire(key, n, lease, max, expires, now, reserve);
  }

  /** What `take` does once `spend` answered undefined (the Limiter calls the two apart, to make its `reserve` only then). */
  acquire(key: string, n: number, lease: number, max: number, expires: number, now: number, reserve: Reserve): boolean | Promise<boolean> {
    const e = this.#entries.get(key);
    if (e && e.left >= n) {
      // spend left it for a refill (or the entry's end) to be decided here.
      e.left -= n;
      if (!e.pending && !e.exhausted && lease > 1 && e.left * 2 < lease) this.#refill(key, e, lease, max, reserve);
      else this.#dropSpent(key, e);
      return true;
    }
    if (e?.pending) {
      const again = (): boolean | Promise<boolean> => this.take(key, n, lease, max, expires, now, reserve);
      return e.pending.then(again, again);
    }
    if (e?.exhausted) return false;
    const entry = e ?? this.#add(key, expires, now);
    const q = n - entry.left + lease - 1;
    const done = reserve(q).then(
      (count) => {
        entry.pending = undefined;
        const g = granted(max, count, q);
        if (g < q) entry.exhausted = true;
        const available = entry.left + g;
        const ok = available >= n;
        entry.left = ok ? available - n : available;
        this.#dropSpent(key, entry);
        return ok;
      },
      (err: unknown) => {
        entry.pending = undefined;
        this.#dropSpent(key, entry);
        throw err;
      },
    );
    entry.pending = done;
    return done;
  }

  /** Reserves `lease` more units for `entry` while it still has some: no hit waits for them unless it runs out. */
  #refill(key: string, entry: Lease, lease: number, max: number, reserve: Reserve): void {
    entry.pending = reserve(lease).then(
      (count) => {
        entry.pending = undefined;
        const g = granted(max, count, lease);
        if (g < lease) entry.exhausted = true;
        entry.left += g;
        this.#dropSpent(key, entry);
      },
      () => {
        // The store failed: the next hit that finds no units here reserves again, and meets the error.
        entry.pending = undefined;
        this.#dropSpent(key, entry);
      },
    );
  }

  /** An entry with no units, not exhausted, and nothing in flight holds nothing: it goes. */
  #dropSpent(key: string, entry: Lease): void {
    if (entry.left === 0 && !entry.exhausted && !entry.pending && this.#entries.get(key) === entry) this.#entries.delete(key);
  }

  /** Drops the windows that ended by `now`. */
  prune(now: number): void {
    for (const [k, e] of this.#entries) if (e.expires <= now && !e.pending) this.#entries.delete(k);
  }

  #add(key: string, expires: number, now: number): Lease {
    if (this.#entries.size >= this.#cap) {
      this.prune(now);
      // Still full: the oldest tenth goes (amortised: not a walk per request).
      if (this.#entries.size >= this.#cap) {
        let drop = Math.max(1, Math.floor(this.#cap / 10));
        for (const k of this.#entries.keys()) {
          this.#entries.delete(k);
          if (--drop === 0) break;
        }
      }
    }
    const entry: Lease = { left: 0, expires, exhausted: false, pending: undefined };
    this.#entries.set(key, entry);
    return entry;
  }
}
