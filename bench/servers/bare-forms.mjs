// Child-process server: the bare node:http baseline of forms.bench.mjs. It does by hand, on the
// same SQLite database as Laneway (argv[2]: the data directory holding laneway.db), what a form
// submission to bench/fixtures/forms-app/notes/POST.js does, the way a hand-written server would:
//
//   POST /notes  reads the visitor's `sid` cookie and looks its session up (one SELECT of the
//                session row by the id part of the cookie, in Laneway's own `lw__session` table;
//                no row, or an expired one: 400, as a form sent without a session), refuses an
//                `Origin` whose host is not the `Host` (403), reads the urlencoded body, checks the
//                four fields with the rules of the Note model (title: required text of at most 80
//                characters; due: empty or a YYYY-MM-DD date; kind: one of the options, `plain`
//                when absent; done: a checkbox, absent = false), inserts one row into `lw_Note` with
//                the columns Laneway writes (a 16-character random id, created, modified, container
//                NULL, f_title, f_due, f_kind, f_done) and answers 302 to `/` with Laneway's
//                headers. A refused value answers 422. The insert is one statement in autocommit.
//
// What it does not do, and Laneway does: check a form-state id (an HMAC) and mark it used (a
// SELECT and an INSERT in lw__form_used, in the request's transaction), and store the flash
// message for the next page (a second write transaction: SELECT and upsert of the session row).
// better-sqlite3 with statements prepared once, WAL and synchronous=NORMAL as Laneway's writer.
// Node adds Date, Connection and Keep-Alive itself, as it does for Laneway. Prints
// `listening <port>` once ready.
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { join } from 'node:path';
import Database from 'better-sqlite3';

const where = process.argv[2];
if (!where) {
  console.error('usage: node bench/servers/bare-forms.mjs DATA_DIR');
  process.exit(2);
}

const db = new Database(join(where, 'laneway.db'));
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.pragma('busy_timeout = 5000');
const sessionOf = db.prepare('SELECT "flash", "expires" FROM "lw__session" WHERE "id" = ?');
const insert = db.prepare('INSERT INTO "lw_Note" ("id", "created", "modified", "container", "f_title", "f_due", "f_kind", "f_done") VALUES (?, ?, ?, ?, ?, ?, ?, ?)');

const KINDS = new Set(['plain', 'urgent', 'later']);
const REDIRECT = { 'X-Content-Type-Options': 'nosniff', 'Referrer-Policy': 'strict-origin-when-cross-origin', Location: '/', 'Content-Length': 0 };

function send(res, status, headers, body) {
  res.writeHead(status, headers);
  res.end(body);
}

function text(res, status, message) {
  send(res, status, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': Buffer.byteLength(message) }, message);
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

/** The session id of the `sid` cookie (`<24 characters>.<mac>`), or undefined. */
function sidOf(cookie) {
  if (!cookie) return undefined;
  for (const part of cookie.split(';')) {
    const eq = part.indexOf('=');
    if (eq !== -1 && part.slice(0, eq).trim() === 'sid') {
      const value = part.slice(eq + 1).trim();
      return value.length === 57 && value[24] === '.' ? value.slice(0, 24) : undefined;
    }
  }
  return undefined;
}

function validDate(s) {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (!m) return false;
  const d = new Date(Date.UTC(+m[1], +m[2] - 1, +m[3]));
  return d.getUTCFullYear() === +m[1] && d.getUTCMonth() === +m[2] - 1 && d.getUTCDate() === +m[3];
}

/** The Note model's rules for the form's four fields. */
function validate(form) {
  const errors = [];
  const title = form.get('Note_title');
  if (title === null || title === '') errors.push({ field: 'Note_title', value: 'Title is required' });
  else if ([...title].length > 80) errors.push({ field: 'Note_title', value: 'Title must be at most 80 characters long' });
  let due = form.get('Note_due');
  if (due === null || due === '') due = null;
  else if (!validDate(due)) errors.push({ field: 'Note_due', value: 'Due must be a date' });
  const kind = form.get('Note_kind') ?? 'plain';
  if (!KINDS.has(kind)) errors.push({ field: 'Note_kind', value: 'Kind must be one of Plain, Urgent, Later' });
  const done = form.getAll('Note_done').some((v) => v === 'on' || v === 'true' || v === '1');
  return errors.length ? { errors } : { title, due, kind, done };
}

async function handle(req, res) {
  const q = req.url.indexOf('?');
  const path = q === -1 ? req.url : req.url.slice(0, q);
  if (path !== '/notes') return text(res, 404, 'not found');
  if (req.method !== 'POST') return text(res, 405, 'method not allowed');
  const origin = req.headers.origin;
  if (origin !== undefined && origin !== `http://${req.headers.host}`) return text(res, 403, 'cross-origin request refused');
  const sid = sidOf(req.headers.cookie);
  const session = sid === undefined ? undefined : sessionOf.get(sid);
  if (!session || session.expires < Date.now()) return text(res, 400, 'This form was sent without a session.');
  if (!String(req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) return text(res, 400, 'expected a form');
  const checked = validate(new URLSearchParams(await readBody(req)));
  if (checked.errors) {
    const body = JSON.stringify({ messages: checked.errors.map((e) => ({ type: 'error', ...e })) });
    return send(res, 422, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body) }, body);
  }
  const now = Date.now();
  insert.run(randomBytes(12).toString('base64url'), now, now, null, checked.title, checked.due, checked.kind, checked.done ? 1 : 0);
  send(res, 302, REDIRECT);
}

// Same timeouts as Laneway's server (src/http/server.ts defaults).
const server = createServer({ headersTimeout: 20_000, requestTimeout: 60_000, keepAliveTimeout: 5_000 }, (req, res) => {
  handle(req, res).catch((err) => {
    console.error(`bare-forms: ${req.method} ${req.url}: ${err.message}`);
    if (!res.headersSent) text(res, 500, 'internal error');
    else res.destroy();
  });
});
server.listen(0, '127.0.0.1', () => console.log(`listening ${server.address().port}`));
process.on('SIGTERM', () => server.close(() => Promise.resolve(db.close()).then(() => process.exit(0))));
