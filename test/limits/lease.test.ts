/**
 * The quota lease of the limits per visitor on PostgreSQL (src/limits/lease.ts, docs/security.md
 * "Shared by every process"): the arithmetic of a grant, hits of several units, refusals that
 * spend nothing, the bound of the book; then several processes on one count (a shared counter
 * standing for the store's row) never accept more than the limit; then the Limiter on a real
 * PostgreSQL makes about one upsert per lease; on SQLite, so do hits outside a request's
 * transaction, while hits inside one count each in it.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { granted, LeaseBook } from '../../src/limits/lease.js';
import { Limiter } from '../../src/limits/limiter.js';
import { leaseSize, readVisitorLimits, ruleFor } from '../../src/limits/rules.js';
import { openPostgres } from '../../src/store/postgres.js';
import { openSqlite } from '../../src/store/sqlite.js';
import type { Engine } from '../../src/store/types.js';
import { startPostgres } from '../support/postgres.js';

/** A counter row shared by every book (the store's upsert: add q, answer the count), with the reservations asked. */
function sharedCount() {
  const store = { count: 0, asked: [] as number[] };
  const reserve = async (q: number): Promise<number> => {
    await new Promise((r) => setImmediate(r)); // a round trip: other hits come in meanwhile
    store.asked.push(q);
    store.count += q;
    return store.count;
  };
  return { store, reserve };
}

const END = 60_000;

/** The most units a process holds unspent with a lease of k (docs/security.md "A lease at a time"). */
const held = (k: number): number => (k === 1 ? 0 : k + Math.floor((k - 1) / 2));

describe('the lease arithmetic', () => {
  it('grants what was left under the limit before the reservation, at most what was asked', () => {
    assert.equal(granted(200, 10, 10), 10); // 0 before: all
    assert.equal(granted(200, 200, 10), 10); // 190 before: the last 10 exactly
    assert.equal(granted(200, 205, 10), 5); // 195 before: 5 left
    assert.equal(granted(200, 210, 10), 0); // 200 before: none
    assert.equal(granted(200, 500, 10), 0);
    assert.equal(granted(1, 1, 1), 1);
    assert.equal(granted(1, 2, 1), 0);
  });

  it('lease sizes: 1 up to 39, floor(max / 20) above, at most 50; 1 for upload-mb', () => {
    assert.deepEqual([1, 7, 20, 39, 40, 200, 300, 1000, 2000, 1e9].map((m) => leaseSize('writes', m)), [1, 1, 1, 1, 2, 10, 15, 50, 50, 50]);
    assert.equal(leaseSize('upload-mb', 1000 * 1_048_576), 1);
    const rules = readVisitorLimits([], () => assert.fail());
    assert.deepEqual(['writes', 'emails', 'app-emails', 'sign-ins', 'uploads', 'upload-mb', 'streams'].map((k) => ruleFor(rules, k as never)!.lease), [15, 1, 50, 1, 15, 1, 6]);
  });

  it('one reservation of k serves k hits; the hit at the boundary gets the last units', async () => {
    const { store, reserve } = sharedCount();
    const book = new LeaseBook();
    const results: boolean[] = [];
    for (let i = 0; i < 25; i++) results.push(await book.take('w', 1, 10, 22, END, 0, reserve));
    assert.deepEqual(results, [...Array(22).fill(true), false, false, false]);
    // 10, 10, then 10 of which 2 granted: the window is exhausted, later refusals ask nothing.
    assert.deepEqual(store.asked, [10, 10, 10]);
    assert.equal(book.left('w'), 0);
  });

  it('hits are synchronous while units are here', async () => {
    const { reserve } = sharedCount();
    const book = new LeaseBook();
    assert.equal(await book.take('w', 1, 5, 100, END, 0, reserve), true);
    for (let i = 0; i < 4; i++) assert.equal(book.take('w', 1, 5, 100, END, 0, reserve), true);
    assert.ok(book.take('w', 1, 5, 100, END, 0, reserve) instanceof Promise);
  });

  it('spend: the units held here, with nothing asked of the store; undefined when take has work to do', async () => {
    const { store, reserve } = sharedCount();
    const book = new LeaseBook();
    assert.equal(book.spend('s', 1, 10), undefined); // no entry yet
    assert.equal(await book.take('s', 1, 10, 100, END, 0, reserve), true); // reserves 10: 9 here
    for (let i = 0; i < 4; i++) assert.equal(book.spend('s', 1, 10), true); // 9 → 5
    assert.equal(book.spend('s', 1, 10), undefined); // 4 would be under half a lease: take refills
    assert.equal(book.left('s'), 5);
    assert.deepEqual(store.asked, [10]);
  });

  it('under half a lease left, a refill starts in the background and hits go on spending while it is in flight', async () => {
    const { store, reserve } = sharedCount();
    const book = new LeaseBook();
    assert.equal(await book.take('r', 1, 10, 1000, END, 0, reserve), true); // 9 here
    const hits = Array.from({ length: 9 }, () => book.take('r', 1, 10, 1000, END, 0, reserve));
    assert.deepEqual(hits, Array(9).fill(true)); // all synchronous; the fifth (4 left) started a refill
    assert.deepEqual(store.asked, [10]); // the refill is not answered yet
    const waits = book.take('r', 1, 10, 1000, END, 0, reserve); // nothing here: it waits for the refill
    assert.ok(waits instanceof Promise);
    assert.equal(await waits, true);
    assert.deepEqual(store.asked, [10, 10]);
    assert.equal(book.left('r'), 9);
  });

  it('a refill the store fails is dropped; the next hit with nothing here reserves again and gets the error', async () => {
    let fail = false;
    let count = 0;
    const reserve = async (q: number): Promise<number> => {
      await new Promise((r) => setImmediate(r));
      if (fail) throw new Error('store down');
      return (count += q);
    };
    const book = new LeaseBook();
    assert.equal(await book.take('f', 1, 4, 100, END, 0, reserve), true); // 3 here
    fail = true;
    assert.equal(book.take('f', 1, 4, 100, END, 0, reserve), true); // 2 here
    assert.equal(book.take('f', 1, 4, 100, END, 0, reserve), true); // 1 here: a refill starts (and fails)
    assert.equal(book.take('f', 1, 4, 100, END, 0, reserve), true); // 0 here
    await assert.rejects(async () => book.take('f', 1, 4, 100, END, 0, reserve), /store down/);
    fail = false;
    assert.equal(await book.take('f', 1, 4, 100, END, 0, reserve), true); // the store is back
  });

  it('a hit of n units spends what is here, else asks for what is missing plus the lease', async () => {
    const { store, reserve } = sharedCount();
    const book = new LeaseBook();
    assert.equal(await book.take('e', 3, 10, 100, END, 0, reserve), true);
    assert.deepEqual(store.asked, [12]); // 3 + 9
    assert.equal(book.left('e'), 9);
    assert.equal(book.take('e', 9, 10, 100, END, 0, reserve), true); // here, at once (and a refill of 10 starts)
    assert.deepEqual(store.asked, [12]);
    assert.equal(await book.take('e', 4, 10, 100, END, 0, reserve), true); // waits for the refill
    assert.deepEqual(store.asked, [12, 10]);
    assert.equal(book.left('e'), 6);
    // Bytes (lease 1): what is missing only.
    assert.equal(await book.take('b', 600, 1, 1000, END, 0, reserve), true);
    assert.equal(book.left('b'), 0);
    assert.deepEqual(store.asked.slice(2), [600]);
  });

  it('a refusal spends nothing: what was here and what the store granted stay for a smaller hit', async () => {
    const { store, reserve } = sharedCount();
    const book = new LeaseBook();
    assert.equal(await book.take('b', 700, 1, 1000, END, 0, reserve), true); // 300 left in the store
    assert.equal(await book.take('b', 500, 1, 1000, END, 0, reserve), false); // asks 500, gets 300
    assert.deepEqual(store.asked, [700, 500]);
    assert.equal(book.left('b'), 300);
    assert.equal(book.take('b', 400, 1, 1000, END, 0, reserve), false); // exhausted: no statement
    assert.equal(book.take('b', 300, 1, 1000, END, 0, reserve), true);
    assert.equal(book.take('b', 1, 1, 1000, END, 0, reserve), false);
    assert.deepEqual(store.asked, [700, 500]);
  });

  it('a new window is a new lease; ended windows are dropped and the book is bounded', async () => {
    const { reserve } = sharedCount();
    const book = new LeaseBook(100);
    assert.equal(await book.take('w\u00000', 1, 10, 1000, END, 0, reserve), true);
    assert.equal(book.left('w\u00000'), 9);
    assert.equal(await book.take('w\u000060000', 1, 10, 1000, 2 * END, END, reserve), true);
    assert.equal(book.left('w\u000060000'), 9);
    book.prune(END);
    assert.equal(book.left('w\u00000'), 0);
    assert.equal(book.size, 1);
    for (let i = 0; i < 1000; i++) await book.take(`v${i}`, 1, 10, 1000, 2 * END, END, reserve);
    assert.ok(book.size <= 100, `${book.size} entries`);
  });

  it('several processes on one count, concurrently: never more than the limit, at most (N−1)·held(k) early', async () => {
    for (const [n, max] of [[2, 200], [3, 200], [4, 1000], [2, 7]] as const) {
      const { store, reserve } = sharedCount();
      const books = Array.from({ length: n }, () => new LeaseBook());
      const k = leaseSize('writes', max);
      const hits = await Promise.all(Array.from({ length: max + 100 }, (_, i) => books[i % n]!.take('w', 1, k, max, END, 0, reserve)));
      const accepted = hits.filter(Boolean).length;
      assert.ok(accepted <= max && accepted >= max - (n - 1) * held(k), `${n} processes, ${max}: ${accepted} accepted`);
      assert.ok(store.asked.length < (max + 100) / k + 2 * n, `${store.asked.length} reservations`);
    }
  });
});

const bound = (v: unknown, t: object): unknown => (typeof v === 'function' ? v.bind(t) : v);

/** An engine whose counter upserts are counted. */
function counting(engine: Engine): { engine: Engine; upserts: () => number } {
  let upserts = 0;
  const reader = {
    all: (sql: string, params: readonly unknown[]) => {
      if (/^INSERT INTO "lw__counter"/.test(sql)) upserts++;
      return engine.reader.all(sql, params as never);
    },
  };
  return { engine: new Proxy(engine, { get: (t, p) => (p === 'reader' ? reader : bound(Reflect.get(t, p), t)) }), upserts: () => upserts };
}

describe('the Limiter on PostgreSQL: about one upsert per lease', () => {
  let url: string;
  const engines: Engine[] = [];
  before(async () => {
    url = await (await startPostgres()).createDatabase();
  });
  after(() => Promise.all(engines.map((e) => e.close())));

  it('100 hits of writes: 1000/minute (k = 50) are 3 upserts (the third a refill ahead), and the row counts at least 100', async () => {
    const pg = await openPostgres(url);
    engines.push(pg);
    const { engine, upserts } = counting(pg);
    const limiter = new Limiter(readVisitorLimits([['writes', '1000/minute']], () => assert.fail()));
    await limiter.open(engine);
    const rule = limiter.rule('writes')!;
    assert.equal(rule.lease, 50);
    const now = Date.UTC(2030, 0, 1, 12, 0, 5);
    for (let i = 0; i < 100; i++) assert.equal(await limiter.hit(rule, 'addr:198.51.100.1', 1, undefined, now), undefined);
    // 50, then refills of 50 when under 25 are left: after the 26th and the 76th hit.
    assert.equal(upserts(), 3);
    const rows = await pg.reader.all(`SELECT "count" FROM "lw__counter" WHERE "visitor" = 'addr:198.51.100.1'`, []);
    assert.ok(Number(rows[0]![0]) >= 100, `count ${String(rows[0]![0])}`);
  });

  it('two limiters (two instances) on one database: 200/minute accepts 186 to 200 of 300, the rest refused with Retry-After', async () => {
    const pgs = [await openPostgres(url), await openPostgres(url)];
    engines.push(...pgs);
    const limiters = await Promise.all(
      pgs.map(async (e) => {
        const l = new Limiter(readVisitorLimits([['writes', '200/minute']], () => assert.fail()));
        await l.open(e);
        return l;
      }),
    );
    const rule = limiters[0]!.rule('writes')!;
    assert.equal(rule.lease, 10);
    const now = Date.UTC(2030, 0, 1, 12, 0, 30);
    const verdicts = await Promise.all(Array.from({ length: 300 }, (_, i) => limiters[i % 2]!.hit(rule, 'addr:198.51.100.2', 1, undefined, now)));
    const accepted = verdicts.filter((v) => v === undefined).length;
    assert.ok(accepted <= 200 && accepted >= 200 - held(10), `${accepted} accepted`);
    for (const v of verdicts.filter((r) => r !== undefined)) assert.equal(v!.retryAfter, 30);
  });
});

describe('the Limiter on SQLite', () => {
  const withLimiter = async (fn: (limiter: Limiter, sqlite: Engine) => Promise<void>) => {
    const dir = mkdtempSync(join(tmpdir(), 'lw-lease-'));
    const sqlite = openSqlite(join(dir, 'laneway.db'));
    try {
      const limiter = new Limiter(readVisitorLimits([['writes', '1000/minute']], () => assert.fail()));
      await limiter.open(sqlite);
      await fn(limiter, sqlite);
    } finally {
      await sqlite.close();
      rmSync(dir, { recursive: true, force: true });
    }
  };
  const now = Date.UTC(2030, 0, 1, 12, 0, 5);
  const counted = async (sqlite: Engine) => Number((await sqlite.reader.all(`SELECT "count" FROM "lw__counter"`, []))[0]![0]);

  it("in a request's transaction: one upsert per hit, rolled back with it", async () => {
    await withLimiter(async (limiter, sqlite) => {
      const rule = limiter.rule('writes')!;
      const tx = await sqlite.begin();
      for (let i = 0; i < 20; i++) assert.equal(await limiter.hit(rule, 'addr:198.51.100.3', 1, tx, now), undefined);
      await tx.rollback();
      assert.equal((await sqlite.reader.all(`SELECT COUNT(*) FROM "lw__counter"`, []))[0]![0], 0);
      const tx2 = await sqlite.begin();
      for (let i = 0; i < 20; i++) assert.equal(await limiter.hit(rule, 'addr:198.51.100.3', 1, tx2, now), undefined);
      await tx2.commit();
      assert.equal(await counted(sqlite), 20);
    });
  });

  it('outside one (the writes of a script, before theirs begins): one reservation of k units for 20 hits', async () => {
    await withLimiter(async (limiter, sqlite) => {
      const rule = limiter.rule('writes')!;
      assert.equal(rule.lease, 50);
      for (let i = 0; i < 20; i++) assert.equal(await limiter.hit(rule, 'addr:198.51.100.3', 1, undefined, now), undefined);
      // The first hit reserved 1 + 49 units; the next 19 spent them here.
      assert.equal(await counted(sqlite), 50);
      for (let i = 0; i < 31; i++) assert.equal(await limiter.hit(rule, 'addr:198.51.100.3', 1, undefined, now), undefined);
      assert.equal(await counted(sqlite), 100);
    });
  });
});
