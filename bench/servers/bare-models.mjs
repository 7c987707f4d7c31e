// Child-process server: the bare node:http baseline of models.bench.mjs. It does by hand, on the
// same database as Laneway (argv[2]: a SQLite data directory holding laneway.db, or a
// `postgres://…` URL), what bench/fixtures/models-app does through Laneway's data layer:
//
//   GET  /items  the same SELECT as Laneway's `Item.all().limit(100)` (same columns, order and
//                LIMIT parameter), rows mapped to {id, name, price}, JSON.stringify; the headers
//                Laneway sends for a JSON script answer (ETag = sha1 of the body; Vary from 1 KB).
//   POST /items  reads the urlencoded body, checks `name` (required text, at most 100 characters)
//                and `price` (a whole number ≥ 0, as Laneway's integer check), inserts one row
//                with the columns Laneway writes (a 16-character random id, created, modified,
//                container NULL, f_name, f_price), and answers 302 to /items/ with Laneway's
//                headers. The insert is one statement in autocommit (its own transaction), as a
//                hand-written handler would do it; Laneway wraps the script in BEGIN … COMMIT.
//
// SQLite: better-sqlite3, statements prepared once, WAL and synchronous=NORMAL as Laneway's
// writer (the durability setting is per connection). PostgreSQL: a pg.Pool of 10 connections
// (Laneway's size) with pg's default types (BIGINT columns come back as text: Number() here).
// The tables are Laneway's (the Laneway server creates them first). Node adds Date, Connection and
// Keep-Alive itself, as it does for Laneway. Prints `listening <port>` once ready.
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { jsonHeaders } from './json-headers.mjs';

const where = process.argv[2];
if (!where) {
  console.error('usage: node bench/servers/bare-models.mjs (DATA_DIR | postgres://…)');
  process.exit(2);
}

const LIST_SQL = 'SELECT "id", "created", "modified", "container", "f_name", "f_price" FROM "lw_Item" ORDER BY "created", "id" LIMIT ?';
const INSERT_SQL = 'INSERT INTO "lw_Item" ("id", "created", "modified", "container", "f_name", "f_price") VALUES (?, ?, ?, ?, ?, ?)';
const numbered = (sql) => {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
};

/** { list(limit) → rows of {id, f_name, f_price, …}, insert(values) } on the chosen engine. */
async function openDb() {
  if (/^postgres(ql)?:\/\//.test(where)) {
    const { default: pg } = await import('pg');
    const pool = new pg.Pool({ connectionString: where, max: 10 });
    pool.on('error', () => {});
    const list = numbered(LIST_SQL);
    const insert = numbered(INSERT_SQL);
    return {
      list: async (limit) => (await pool.query(list, [limit])).rows,
      insert: async (values) => {
        await pool.query(insert, values);
      },
      close: () => pool.end(),
    };
  }
  const { default: Database } = await import('better-sqlite3');
  const db = new Database(join(where, 'laneway.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  const list = db.prepare(LIST_SQL);
  const insert = db.prepare(INSERT_SQL);
  return {
    list: (limit) => list.all(limit),
    insert: (values) => {
      insert.run(values);
    },
    close: () => db.close(),
  };
}

const db = await openDb();

function send(res, status, headers, body) {
  res.writeHead(status, headers);
  res.end(body);
}

function sendJson(res, status, value) {
  const body = Buffer.from(JSON.stringify(value));
  send(res, status, jsonHeaders(body), body);
}

function readBody(req, limit = 1 << 20) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    req.on('data', (c) => {
      size += c.length;
      if (size > limit) req.destroy(new Error('body too large'));
      else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** The same rules as Laneway's string and integer checks, for these two fields. */
function validate(form) {
  const errors = [];
  const name = form.get('name');
  if (name === null || name === '') errors.push({ field: 'name', value: 'Name is required' });
  else if ([...name].length > 100) errors.push({ field: 'name', value: 'Name must be at most 100 characters long' });
  const text = form.get('price');
  let price;
  if (text === null || text === '') errors.push({ field: 'price', value: 'Price is required' });
  else if (!/^\s*[+-]?\d+\s*$/.test(text) || !Number.isSafeInteger((price = Number(text.trim()))) || price < 0) {
    errors.push({ field: 'price', value: 'Price must be a whole number of at least 0' });
  }
  return errors.length ? { errors } : { name, price };
}

async function handle(req, res) {
  const q = req.url.indexOf('?');
  const path = q === -1 ? req.url : req.url.slice(0, q);
  if (path !== '/items') return send(res, 404, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': 9 }, 'not found');
  if (req.method === 'GET' || req.method === 'HEAD') {
    const rows = await db.list(100);
    const items = rows.map((r) => ({ id: r.id, name: r.f_name, price: Number(r.f_price) }));
    return sendJson(res, 200, items);
  }
  if (req.method === 'POST') {
    if (!String(req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) return sendJson(res, 400, { error: 'expected a form' });
    const checked = validate(new URLSearchParams(await readBody(req)));
    if (checked.errors) return sendJson(res, 422, { messages: checked.errors.map((e) => ({ type: 'error', ...e })) });
    const now = Date.now();
    await db.insert([randomBytes(12).toString('base64url'), now, now, null, checked.name, checked.price]);
    return send(res, 302, { 'X-Content-Type-Options': 'nosniff', 'Referrer-Policy': 'strict-origin-when-cross-origin', Location: '/items/', 'Content-Length': 0 });
  }
  send(res, 405, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': 18 }, 'method not allowed');
}

// Same timeouts as Laneway's server (src/http/server.ts defaults).
const server = createServer({ headersTimeout: 20_000, requestTimeout: 60_000, keepAliveTimeout: 5_000 }, (req, res) => {
  handle(req, res).catch((err) => {
    console.error(`bare-models: ${req.method} ${req.url}: ${err.message}`);
    if (!res.headersSent) sendJson(res, 500, { error: 'internal error' });
    else res.destroy();
  });
});
server.listen(0, '127.0.0.1', () => console.log(`listening ${server.address().port}`));
process.on('SIGTERM', () => server.close(() => Promise.resolve(db.close()).then(() => process.exit(0))));
