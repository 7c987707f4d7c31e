/**
 * The PostgreSQL engine against a real PostgreSQL server (test/support/postgres.ts): values come
 * back in SQLite's shapes, transactions isolate and end, errors become StoreErrors, and the pool
 * outlives a server restart and dead pooled connections.
 *
 * Nothing here depends on timing: "promptly" means settled within a generous bound.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { openPostgres } from '../../src/store/postgres.js';
import { StoreError, type Engine } from '../../src/store/types.js';
import { startPostgres, type PgServer } from '../support/postgres.js';

/** A bound for "settles promptly" that a loaded machine still meets. */
const SETTLES_MS = 15_000;

let server: PgServer;
before(async () => {
  server = await startPostgres();
});

/** Opens an engine on a database of its own; closed after the file's tests. */
const engines: Engine[] = [];
after(() => Promise.all(engines.map((e) => e.close())));
async function openFresh(options?: { max?: number; connectTimeoutMs?: number }): Promise<Engine> {
  const engine = await openPostgres(await server.createDatabase(), options);
  engines.push(engine);
  return engine;
}

/** `value` (the Engine interface allows a plain value), or a rejection when it has not settled within `ms`. */
function settlesWithin<T>(value: T | Promise<T>, ms = SETTLES_MS): Promise<T> {
  const promise = Promise.resolve(value);
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`did not settle within ${ms} ms`)), ms);
  });
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}

/** Asserts that `promise` rejects with a StoreError of `code` (within SETTLES_MS) and returns it. */
async function rejectsWith(value: unknown, code: string): Promise<StoreError> {
  const err = await settlesWithin(value).then(
    () => assert.fail(`resolved; expected a StoreError ${code}`),
    (e: unknown) => e,
  );
  assert.ok(err instanceof StoreError, `expected a StoreError, got ${String(err)}`);
  assert.equal(err.code, code, err.message);
  return err;
}

/** A port on 127.0.0.1 where nothing listens. */
function unusedPort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

function listen(s: Server): Promise<number> {
  return new Promise((resolve) => s.listen(0, '127.0.0.1', () => resolve((s.address() as { port: number }).port)));
}

function closeServer(s: Server): Promise<void> {
  return new Promise((resolve) => s.close(() => resolve()));
}

/**
 * A TCP proxy in front of the server. `breakAll()` makes every open connection half-open, as after
 * a crash on another machine: the server side is closed, the client side stays open and is reset
 * only when the client next writes. New connections pass through as before.
 */
interface Proxy {
  port: number;
  connections: number;
  breakAll(): void;
  close(): Promise<void>;
}

async function startProxy(targetPort: number): Promise<Proxy> {
  const pairs = new Set<{ client: Socket; upstream: Socket; broken: boolean }>();
  const proxy: Proxy = {
    port: 0,
    connections: 0,
    breakAll() {
      for (const pair of pairs) {
        pair.broken = true;
        pair.upstream.destroy();
      }
    },
    async close() {
      for (const { client, upstream } of pairs) {
        client.destroy();
        upstream.destroy();
      }
      await closeServer(tcp);
    },
  };
  const tcp = createServer((client) => {
    proxy.connections++;
    const upstream = connect(targetPort, '127.0.0.1');
    const pair = { client, upstream, broken: false };
    pairs.add(pair);
    client.on('data', (chunk) => {
      if (pair.broken) client.resetAndDestroy();
      else upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (!pair.broken) client.write(chunk);
    });
    const drop = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    upstream.on('close', () => {
      if (!pair.broken) drop();
    });
    client.on('close', drop);
    client.on('error', () => {});
    upstream.on('error', () => {});
  });
  proxy.port = await listen(tcp);
  return proxy;
}

describe('values', () => {
  it('round-trips text, integers, doubles and NULL, as arrays in column order', async () => {
    const engine = await openFresh();
    const w = await engine.begin();
    await w.run('CREATE TABLE v (id integer PRIMARY KEY, t text, i bigint, d double precision)', []);
    await w.run('INSERT INTO v VALUES ($1, $2, $3, $4), ($5, $6, $7, $8), ($9, $10, $11, $12)', [
      1, 'héllo ✓ 😀 中文', 9007199254740993n, -0.5,
      2, '', 42, 1e300,
      3, null, null, null,
    ]);
    await w.commit();
    assert.deepEqual(await engine.reader.all('SELECT t, i, d FROM v ORDER BY id', []), [
      ['héllo ✓ 😀 中文', 9007199254740993n, -0.5],
      ['', 42, 1e300],
      [null, null, null],
    ]);
  });

  it('keeps integers within 2^53 − 1 as numbers and returns larger ones as bigints', async () => {
    const engine = await openFresh();
    const rows = await engine.reader.all('SELECT $1::bigint, $2::bigint, $3::bigint, $4::integer, $5::smallint', [
      9007199254740991, 9007199254740992n, -9007199254740993n, -7, 3,
    ]);
    assert.deepEqual(rows, [[9007199254740991, 9007199254740992n, -9007199254740993n, -7, 3]]);
    // bigints of up to 15 digits are read digit by digit, longer ones by Number(): both exact.
    const values = [0, -0, 7, -7, 1796452097123, 999999999999999, -999999999999999, 1000000000000000, -4503599627370497];
    const [read] = await engine.reader.all(`SELECT ${values.map((_, i) => `$${i + 1}::bigint`).join(', ')}`, values);
    assert.deepEqual(read, [0, 0, 7, -7, 1796452097123, 999999999999999, -999999999999999, 1000000000000000, -4503599627370497]);
    assert.ok(read!.every((v) => typeof v === 'number' && !Object.is(v, -0)), 'numbers, and no negative zero');
  });

  it('answers count(*), sum() and avg() with numbers', async () => {
    const engine = await openFresh();
    const w = await engine.begin();
    await w.run('CREATE TABLE n (a integer, b bigint)', []);
    await w.run('INSERT INTO n SELECT g, g * 10 FROM generate_series(1, 4) AS g', []);
    await w.commit();
    const [row] = await engine.reader.all('SELECT count(*), sum(a), sum(b), avg(a), count(*) FILTER (WHERE a > 2) FROM n', []);
    assert.deepEqual(row, [4, 10, 100, 2.5, 2]);
  });

  it('answers booleans as 1 and 0, and dates, timestamps and JSON as text', async () => {
    const engine = await openFresh();
    const rows = await engine.reader.all(
      "SELECT 1 < 2, 1 > 2, DATE '2024-02-29', TIMESTAMP '2024-02-29 13:45:00', '{\"a\":1}'::jsonb, '0.1'::numeric",
      [],
    );
    assert.deepEqual(rows, [[1, 0, '2024-02-29', '2024-02-29 13:45:00', '{"a": 1}', 0.1]]);
  });
});

describe('transactions', () => {
  it('hides a transaction from the reader until it commits', async () => {
    const engine = await openFresh();
    const setup = await engine.begin();
    await setup.run('CREATE TABLE t (x integer)', []);
    await setup.commit();

    const w = await engine.begin();
    await w.run('INSERT INTO t VALUES ($1), ($2)', [1, 2]);
    assert.deepEqual(await w.all('SELECT count(*) FROM t', []), [[2]]);
    assert.deepEqual(await engine.reader.all('SELECT count(*) FROM t', []), [[0]]);
    await w.commit();
    assert.deepEqual(await engine.reader.all('SELECT x FROM t ORDER BY x', []), [[1], [2]]);
  });

  it('discards the writes of a rolled-back transaction; rollback twice is harmless', async () => {
    const engine = await openFresh();
    const setup = await engine.begin();
    await setup.run('CREATE TABLE t (x integer)', []);
    await setup.commit();

    const w = await engine.begin();
    await w.run('INSERT INTO t VALUES (1)', []);
    await w.rollback();
    await w.rollback();
    assert.deepEqual(await engine.reader.all('SELECT count(*) FROM t', []), [[0]]);
    await rejectsWith(w.run('INSERT INTO t VALUES (2)', []), 'LW_STORE_QUERY');
  });

  it('refuses to commit a transaction in which a statement failed', async () => {
    const engine = await openFresh();
    const w = await engine.begin();
    await w.run('CREATE TABLE t (x integer)', []);
    await rejectsWith(w.run('INSERT INTO t VALUES ($1)', ['not a number']), 'LW_STORE_QUERY');
    const err = await rejectsWith(w.commit(), 'LW_STORE_QUERY');
    assert.match(err.message, /rolled back/);
    assert.deepEqual(await engine.reader.all("SELECT to_regclass('t')", []), [[null]]);
  });

  it('runs two transactions at once on two connections', async () => {
    const engine = await openFresh();
    const setup = await engine.begin();
    await setup.run('CREATE TABLE t (x integer)', []);
    await setup.commit();

    const [a, b] = await Promise.all([engine.begin(), engine.begin()]);
    await a.run('INSERT INTO t VALUES (1)', []);
    await b.run('INSERT INTO t VALUES (2)', []);
    assert.deepEqual(await a.all('SELECT x FROM t', []), [[1]]);
    assert.deepEqual(await b.all('SELECT x FROM t', []), [[2]]);
    await Promise.all([a.commit(), b.commit()]);
    assert.deepEqual(await engine.reader.all('SELECT x FROM t ORDER BY x', []), [[1], [2]]);
  });

  it('serialises withSchemaLock callers: the second waits, then sees the first one\'s table', async () => {
    const engine = await openFresh();
    let releaseFirst!: () => void;
    const firstMayFinish = new Promise<void>((resolve) => (releaseFirst = resolve));
    const migrate = (name: string, hold?: Promise<void>) =>
      engine.withSchemaLock(async (w) => {
        const [[exists]] = await w.all("SELECT to_regclass('migrated') IS NOT NULL", []);
        if (!exists) {
          await w.run('CREATE TABLE migrated (by text)', []);
          await w.run('INSERT INTO migrated VALUES ($1)', [name]);
        }
        await hold;
        return exists ? `${name} found the table` : `${name} created the table`;
      });

    const ADVISORY_LOCKS = "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())";
    const first = migrate('first', firstMayFinish);
    // Wait until the first caller holds the lock (its table is in pg_class, uncommitted) …
    while ((await engine.reader.all(`${ADVISORY_LOCKS} AND granted`, []))[0][0] === 0) {
      await new Promise((r) => setTimeout(r, 10));
    }
    const second = migrate('second');
    // … and until the second one has asked for it (it asks again every few milliseconds rather than
    // wait inside a statement: Engine.withSchemaSession), while the first one's session has moved on.
    const ASKING = "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'SELECT pg_try_advisory_lock(%'";
    while ((await engine.reader.all(ASKING, []))[0][0] === 0) {
      await new Promise((r) => setTimeout(r, 10));
    }
    releaseFirst();
    assert.deepEqual(await Promise.all([first, second]), ['first created the table', 'second found the table']);
    assert.deepEqual(await engine.reader.all('SELECT by FROM migrated', []), [['first']]);
  });

  it('rolls withSchemaLock back when its function throws, and rethrows that error', async () => {
    const engine = await openFresh();
    const failure = new Error('migration failed');
    await assert.rejects(
      engine.withSchemaLock(async (w) => {
        await w.run('CREATE TABLE half (x integer)', []);
        throw failure;
      }),
      (err) => err === failure,
    );
    assert.deepEqual(await engine.reader.all("SELECT to_regclass('half')", []), [[null]]);
  });
});

describe('held writes (the transaction of a request)', () => {
  it('a transaction of one write commits it as a single statement; more writes run between BEGIN and COMMIT', async () => {
    const engine = await openFresh();
    const setup = await engine.begin();
    await setup.run('CREATE TABLE t (x integer)', []);
    await setup.run('CREATE UNIQUE INDEX t_x ON t (x)', []);
    await setup.commit();

    const one = await engine.begin({ holdWrites: true });
    await one.run('INSERT INTO t VALUES ($1)', [1]);
    assert.deepEqual(await engine.reader.all('SELECT count(*) FROM t', []), [[0]], 'held until the commit');
    await one.commit();
    assert.deepEqual(await engine.reader.all('SELECT x FROM t', []), [[1]]);

    const two = await engine.begin({ holdWrites: true });
    await two.run('INSERT INTO t VALUES ($1)', [2]);
    await two.run('INSERT INTO t VALUES ($1)', [3]);
    assert.deepEqual(await two.all('SELECT count(*) FROM t', []), [[3]], 'a read sends what was held, inside the transaction');
    assert.deepEqual(await engine.reader.all('SELECT count(*) FROM t', []), [[1]]);
    await two.commit();
    assert.deepEqual(await engine.reader.all('SELECT x FROM t ORDER BY x', []), [[1], [2], [3]]);
  });

  it('a held write that fails is reported by the commit, with its statement; nothing of the transaction stays', async () => {
    const engine = await openFresh();
    const setup = await engine.begin();
    await setup.run('CREATE TABLE t (x integer)', []);
    await setup.run('CREATE UNIQUE INDEX t_x ON t (x)', []);
    await setup.run('INSERT INTO t VALUES (1)', []);
    await setup.commit();

    const one = await engine.begin({ holdWrites: true });
    await one.run('INSERT INTO t VALUES ($1)', [1]);
    const err = await rejectsWith(one.commit(), 'LW_STORE_UNIQUE');
    assert.equal(err.constraint, 't_x');
    assert.match((err as unknown as { sql: string }).sql, /INSERT INTO t/);

    const two = await engine.begin({ holdWrites: true });
    await two.run('INSERT INTO t VALUES ($1)', [5]);
    await two.run('INSERT INTO t VALUES ($1)', [1]);
    await rejectsWith(two.commit(), 'LW_STORE_UNIQUE');
    assert.deepEqual(await engine.reader.all('SELECT x FROM t ORDER BY x', []), [[1]]);

    const rolled = await engine.begin({ holdWrites: true });
    await rolled.run('INSERT INTO t VALUES ($1)', [7]);
    await rolled.rollback();
    assert.deepEqual(await engine.reader.all('SELECT count(*) FROM t', []), [[1]]);
    // Every connection went back to the pool: a pool of one serves the next transaction.
    const small = await openFresh({ max: 1, connectTimeoutMs: 2000 });
    for (let i = 0; i < 3; i++) {
      const w = await small.begin({ holdWrites: true });
      await w.run('SELECT 1', []);
      await w.commit();
    }
  });
});

describe("a nested site's schema", () => {
  it('several instances opening one new database at once all start (CREATE SCHEMA raced)', async () => {
    const url = await server.createDatabase();
    // Eight opens of the same namespace at once: without the race handled, some fail with a
    // duplicate key on pg_namespace.
    const opened = await Promise.all(Array.from({ length: 8 }, () => openPostgres(url, { schema: 'lw_ns_race' })));
    engines.push(...opened);
    for (const e of opened) assert.deepEqual(await e.reader.all('SELECT current_schema()', []), [['lw_ns_race']]);
  });
});

describe('reads at once in one transaction', () => {
  it('two reads sent before the transaction began share one connection (none is left checked out)', async () => {
    // A pool of one: a second BEGIN on another connection would wait for ever.
    const engine = await openFresh({ max: 1, connectTimeoutMs: 2000 });
    const setup = await engine.begin();
    await setup.run('CREATE TABLE t (x integer)', []);
    await setup.commit();
    const w = await engine.begin({ holdWrites: true });
    await w.run('INSERT INTO t VALUES ($1)', [1]);
    const [a, b] = await Promise.all([w.all('SELECT count(*) FROM t', []), w.all('SELECT x FROM t', [])]);
    assert.deepEqual(a, [[1]], 'both inside the transaction, after the held write');
    assert.deepEqual(b, [[1]]);
    await w.commit();
    assert.deepEqual(await engine.reader.all('SELECT count(*) FROM t', []), [[1]]);
    await engine.close(); // returns: no connection is still checked out
  });
});

describe('errors', () => {
  it('rejects a duplicate with LW_STORE_UNIQUE naming the unique index', async () => {
    const engine = await openFresh();
    const w = await engine.begin();
    await w.run('CREATE TABLE users (id integer, email text)', []);
    await w.run('CREATE UNIQUE INDEX users_email ON users (email)', []);
    await w.run('INSERT INTO users VALUES (1, $1)', ['a@example.com']);
    await w.commit();

    const again = await engine.begin();
    const err = await rejectsWith(again.run('INSERT INTO users VALUES (2, $1)', ['a@example.com']), 'LW_STORE_UNIQUE');
    assert.equal(err.constraint, 'users_email');
    assert.doesNotMatch(err.message, /a@example\.com/);
    await again.rollback();
  });

  it('rejects a statement PostgreSQL refuses with LW_STORE_QUERY and its message; the pool stays usable', async () => {
    const engine = await openFresh({ max: 1 });
    const err = await rejectsWith(engine.reader.all('SELECT * FROM missing', []), 'LW_STORE_QUERY');
    assert.equal(err.message, 'relation "missing" does not exist');
    assert.deepEqual(await engine.reader.all('SELECT 1', []), [[1]]);
  });

  it('rejects a URL where nothing listens with LW_STORE_UNAVAILABLE naming host and port, not the password', async () => {
    const port = await unusedPort();
    const err = await rejectsWith(openPostgres(`postgres://app:s3cret@127.0.0.1:${port}/nowhere`), 'LW_STORE_UNAVAILABLE');
    assert.match(err.message, new RegExp(`127\\.0\\.0\\.1:${port}`));
    assert.match(err.message, /connection refused.*Check that PostgreSQL is running/);
    assert.doesNotMatch(err.message, /s3cret/);
  });

  it('rejects a server that accepts but never answers with LW_STORE_UNAVAILABLE after connectTimeoutMs', async () => {
    const sockets = new Set<Socket>();
    const silent = createServer((s) => sockets.add(s.on('error', () => {})));
    const port = await listen(silent);
    try {
      const err = await rejectsWith(openPostgres(`postgres://app@127.0.0.1:${port}/x`, { connectTimeoutMs: 200 }), 'LW_STORE_UNAVAILABLE');
      assert.match(err.message, new RegExp(`127\\.0\\.0\\.1:${port}.*did not answer the connection in time`));
    } finally {
      for (const s of sockets) s.destroy();
      await closeServer(silent);
    }
  });

  it('rejects a URL that is not a postgres:// URL with LW_STORE_UNAVAILABLE, without echoing it', async () => {
    for (const url of ['mysql://app:s3cret@127.0.0.1/db', 'postgres://app:s3cret@[::1/db', 'not a url']) {
      const err = await rejectsWith(openPostgres(url), 'LW_STORE_UNAVAILABLE');
      assert.equal(err.message, 'The PostgreSQL database URL is not a valid URL of the form postgres://user:password@host:port/database.');
    }
  });

  it('rejects a database that does not exist with LW_STORE_UNAVAILABLE saying to create it', async () => {
    const err = await rejectsWith(openPostgres(server.url('lw_does_not_exist')), 'LW_STORE_UNAVAILABLE');
    assert.match(err.message, /database "lw_does_not_exist" does not exist.*Create the database/);
  });

  it('rejects begin() with LW_STORE_UNAVAILABLE when no connection frees up within connectTimeoutMs', async () => {
    const engine = await openFresh({ max: 1, connectTimeoutMs: 200 });
    const holder = await engine.begin();
    await rejectsWith(engine.begin(), 'LW_STORE_UNAVAILABLE');
    await holder.rollback();
    const next = await engine.begin();
    await next.rollback();
  });
});

describe('lost connections', () => {
  it('retries a reader statement once on a new connection when its pooled connection is dead', async () => {
    const database = new URL(await server.createDatabase());
    const proxy = await startProxy(Number(database.port));
    database.port = String(proxy.port);
    const engine = await openPostgres(database.href, { max: 2 });
    try {
      assert.deepEqual(await engine.reader.all('SELECT 1', []), [[1]]);
      const before = proxy.connections;
      proxy.breakAll();
      assert.deepEqual(await settlesWithin(engine.reader.all('SELECT 2', [])), [[2]]);
      assert.equal(proxy.connections, before + 1);
      // begin() is retried the same way: nothing had been sent in the transaction.
      proxy.breakAll();
      const w = await settlesWithin(engine.begin());
      assert.deepEqual(await w.all('SELECT 3', []), [[3]]);
      // Inside a transaction nothing is retried: the transaction went with its connection.
      proxy.breakAll();
      await rejectsWith(w.all('SELECT 4', []), 'LW_STORE_UNAVAILABLE');
      await settlesWithin(w.rollback());
      assert.deepEqual(await engine.reader.all('SELECT 5', []), [[5]]);
    } finally {
      await engine.close();
      await proxy.close();
    }
  });

  it('answers after the server ends its idle connections (pg_terminate_backend)', async () => {
    const engine = await openFresh();
    // Two pooled connections; one of them ends the other.
    await Promise.all([engine.reader.all('SELECT pg_sleep(0.05)', []), engine.reader.all('SELECT pg_sleep(0.05)', [])]);
    const [[ended]] = await engine.reader.all(
      'SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
      [],
    );
    assert.equal(ended, 1);
    assert.deepEqual(await settlesWithin(engine.reader.all('SELECT 1', [])), [[1]]);
  });

  it('fails promptly with LW_STORE_UNAVAILABLE while the server is down and answers again once it is back', async () => {
    const engine = await openFresh();
    assert.deepEqual(await engine.reader.all('SELECT 1', []), [[1]]);
    const open = await engine.begin();
    await server.stop();
    try {
      await rejectsWith(engine.reader.all('SELECT 1', []), 'LW_STORE_UNAVAILABLE');
      await rejectsWith(engine.begin(), 'LW_STORE_UNAVAILABLE');
      await rejectsWith(open.all('SELECT 1', []), 'LW_STORE_UNAVAILABLE');
      await settlesWithin(open.rollback());
    } finally {
      await server.start();
    }
    assert.deepEqual(await settlesWithin(engine.reader.all('SELECT 1', [])), [[1]]);
    const w = await settlesWithin(engine.begin());
    assert.deepEqual(await w.all('SELECT 2', []), [[2]]);
    await w.commit();
  });
});
