// Users benchmark (bench/README.md): what users cost a page. Two apps, the same page and model:
//
//   bench/fixtures/users-app/   /👤.yaml (providers: [corp], auth: required, `default:` may list and
//                               read 📦.Note, one role Editor), 📦/🌐Note.yaml, a top-level profile
//                               📦/👤Member.yaml, and index.html importing {Me} from '👤' and
//                               {Note} from '📦': it prints {{Me.name}} and lists the notes
//                               ({{#Note.all as n}}: `list` on Note, then `read` on title and done
//                               for each note: the page's permission check).
//   bench/fixtures/plain-app/   the same index.html and model, without /👤.yaml and without Me (the
//                               name is written in the page).
//
//   users page     GET / on users-app with the signed-in visitor's `sid` cookie (the auth gate reads
//                  the user, the page reads Me, lists and reads the notes under the permissions of
//                  default and of the user's profile role) vs GET / on plain-app, both Laneway
//                  (servers/laneway-users.mjs, development mode), the same Cookie header sent to
//                  both. Target ≥ 0.8×. SQLite only.
//
// Setup, untimed and without any network but loopback: the users server runs with the development
// sign-in (LANEWAY_AUTH_DEV_USERS="Bench User", dev mode); the bench signs in once with
// POST /__/auth/dev/bench-user and keeps the new `sid` cookie. Both apps have a setup-only script,
// `📮seed.js` (POST /seed), which stores ten notes; in users-app it runs as Editor (📮seed.yaml) and
// also makes the user's top-level Member profile with the role Editor, so the page's permission
// check reads the roles of a real profile.
//
// Before timing: without the cookie, GET / on users-app answers 302 to /auth/?next=%2F, and POST
// /seed answers 401 and stores nothing; /auth/ lists corp and the test user; the sign-in answers
// 303 with a new sid; the seeds answer {"notes":10} on both; the databases hold ten notes each and
// one Member profile with the role Editor; both pages answer 200 without a Set-Cookie, with the
// user's name and the ten notes, and the same body bytes; users-app's is a single-user page
// (no-store). During runs every answer must be 200; afterwards the users page must still show the
// user. Runs: a warm-up each, then four alternating runs per side (BENCH_ROUNDS), median req/s.
import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';

// Four alternating runs per side (instead of two), as csp.bench.mjs: on a shared 2-core machine two
// runs of 4 s moved the ratio by ±0.15 from one run of the file to the next. About 40 s in all.
process.env.BENCH_ROUNDS ??= '4';
const { BENCH_DIR, compare, describeWorkload, report, stableHeaders, startServer } = await import('./lib.mjs');

const USERS_APP = join(BENCH_DIR, 'fixtures', 'users-app');
const PLAIN_APP = join(BENCH_DIR, 'fixtures', 'plain-app');
const SERVER = join(BENCH_DIR, 'servers', 'laneway-users.mjs');
const TARGET = 0.8;
const HOST = '127.0.0.1';
const USER = 'Bench User';
// The children inherit them: a fixed secret (at least 32 characters) for the run's cookies, and the
// test user of the development sign-in (taken by the app with users; the other has none).
process.env.LANEWAY_SECRET ??= 'laneway-bench-users-secret-0123456789abcdef';
process.env.LANEWAY_AUTH_DEV_USERS = USER;
// The app's provider `corp` gets settings too, as on a real server, so that it is listed and nothing
// is logged about it; nobody signs in with it (its discovery would start only then, and nothing
// listens at this address).
process.env.LANEWAY_AUTH_CORP_ISSUER = 'http://127.0.0.1:9';
process.env.LANEWAY_AUTH_CORP_CLIENT_ID = 'bench';
process.env.LANEWAY_AUTH_CORP_SECRET = 'bench-secret';

const NOTES = Array.from({ length: 10 }, (_, i) => `  <li>Note ${i + 1}${i % 3 === 0 ? ' (done)' : ''}</li>`);
const cleanups = [];
const failures = [];

const load1 = () => loadavg().map((x) => x.toFixed(2)).join(', ');

/** One request, as autocannon will send it (no Accept-Encoding). */
function send(port, method, path, headers = {}) {
  return new Promise((resolve, reject) => {
    const h = { ...headers };
    if (method === 'POST') h['Content-Length'] = 0;
    const req = request({ host: HOST, port, path, method, agent: false, headers: h }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.setTimeout(5_000, () => req.destroy(new Error(`${method} ${path} timed out`)));
    req.on('error', reject);
    req.end();
  });
}

function fail(what, res, expected) {
  throw new Error(`${what} answered ${res.status} ${res.headers.location ?? ''}, expected ${expected}: ${res.body.toString('utf8').slice(0, 300)}`);
}

/** The bench's own read-only connection to a server's database. */
function openCounts(dir) {
  let db;
  const open = () => (db ??= new Database(join(dir, 'laneway.db'), { readonly: true }));
  cleanups.unshift(() => db?.close());
  const n = (sql, ...values) => open().prepare(sql).get(...values).n;
  return {
    notes: () => n('SELECT COUNT(*) AS n FROM "lw_Note"'),
    editors: () => n(`SELECT COUNT(*) AS n FROM "lw_Member" WHERE "f_role" = 'Editor'`),
  };
}

/** POST /__/auth/dev/bench-user (same origin, as the sign-in page's form): the new `sid` cookie. */
async function signIn(port) {
  const origin = { Origin: `http://${HOST}:${port}` };
  const page = await send(port, 'GET', '/auth/');
  const listed = ['action="/__/auth/provider/corp"', 'action="/__/auth/dev/bench-user"'].every((a) => page.body.includes(a));
  if (page.status !== 200 || !listed) fail('users: GET /auth/ (the sign-in page listing corp and the test user)', page, '200 listing both');
  const res = await send(port, 'POST', '/__/auth/dev/bench-user', origin);
  const line = [res.headers['set-cookie'] ?? []].flat().find((c) => c.startsWith('sid='));
  if (res.status !== 303 || res.headers.location !== '/' || !line) fail('users: POST /__/auth/dev/bench-user', res, '303 to / with a sid cookie');
  return line.slice(4, line.indexOf(';'));
}

/** The checks before timing (see the top of this file); answers the two pages' sizes. */
async function check(users, plain, cookie) {
  const [uc, pc] = [openCounts(users.dir), openCounts(plain.dir)];
  const origin = (port) => ({ Origin: `http://${HOST}:${port}`, Accept: 'application/json' });
  const headers = { Cookie: `sid=${cookie}` };
  const seeded = (what, res) => {
    if (res.status !== 200 || res.body.toString('utf8') !== '{"notes":10}') fail(what, res, '200 {"notes":10}');
  };
  seeded('users: POST /seed with the cookie', await send(users.port, 'POST', '/seed', { ...origin(users.port), ...headers }));
  seeded('plain: POST /seed', await send(plain.port, 'POST', '/seed', origin(plain.port)));
  if (uc.notes() !== 10 || pc.notes() !== 10) throw new Error(`the seeds stored ${uc.notes()} and ${pc.notes()} notes, expected 10 each`);
  if (uc.editors() !== 1) throw new Error(`users: ${uc.editors()} Member profiles with the role Editor, expected 1`);

  const u = await send(users.port, 'GET', '/', headers);
  const p = await send(plain.port, 'GET', '/', headers);
  for (const [what, res] of [['users: GET / with the cookie', u], ['plain: GET /', p]]) {
    if (res.status !== 200) fail(what, res, 200);
    if (res.headers['set-cookie']) throw new Error(`${what} set a cookie: ${res.headers['set-cookie']}`);
    const text = res.body.toString('utf8');
    if (!text.includes(`<span class="me">${USER}</span>`)) throw new Error(`${what} does not show the user's name`);
    if (!text.includes(`<ul class="notes">\n${NOTES.join('\n')}\n</ul>`)) throw new Error(`${what} does not list the ten notes:\n${text}`);
  }
  if (!u.body.equals(p.body)) throw new Error('the two pages differ in their bytes');
  if (u.headers['cache-control'] !== 'no-cache, no-store, max-age=0, must-revalidate') throw new Error(`users: GET / is not a single-user page (Cache-Control: ${u.headers['cache-control']})`);
  const names = (r) => Object.keys(stableHeaders(r.headers)).join(', ');
  if (names(u) !== names(p)) throw new Error(`the two pages answer different headers:\n  ${names(u)}\n  ${names(p)}`);
  return { bytes: u.body.length };
}

/** Without the cookie: the gate sends the page to the sign-in, and refuses the seed (nothing stored). */
async function checkSignedOut(users) {
  const counts = openCounts(users.dir);
  const page = await send(users.port, 'GET', '/');
  if (page.status !== 302 || page.headers.location !== '/auth/?next=%2F') fail('users: GET / without a cookie', page, '302 to /auth/?next=%2F');
  const seed = await send(users.port, 'POST', '/seed', { Origin: `http://${HOST}:${users.port}`, Accept: 'application/json' });
  if (seed.status !== 401) fail('users: POST /seed without a cookie', seed, 401);
  if (counts.notes() !== 0) throw new Error(`users: POST /seed without a cookie stored ${counts.notes()} notes`);
}

/** lib.mjs's load() with request headers (the visitor's cookie). */

console.log(`users.bench: ${describeWorkload()}; SQLite only; load average ${load1()}\n`);
try {
  const start = async (app, prefix) => {
    const dir = await mkdtemp(join(tmpdir(), prefix));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const server = await startServer(SERVER, [app, dir]);
    cleanups.unshift(() => server.stop());
    return { port: server.port, dir };
  };
  const users = await start(USERS_APP, 'laneway-bench-users-');
  const plain = await start(PLAIN_APP, 'laneway-bench-plain-');

  await checkSignedOut(users);
  const cookie = await signIn(users.port);
  const { bytes } = await check(users, plain, cookie);
  console.log(
    `checked: users-app GET / without a cookie 302 to /auth/?next=%2F, POST /seed 401; /auth/ lists corp and the test user; dev sign-in 303 with a new sid; ` +
      `10 notes seeded in each store, one Member profile (Editor); GET / on both 200, ${bytes} B, byte-equal (the user's name and the 10 notes), no Set-Cookie; users-app's no-store\n`,
  );

  const result = await compare(
    `users page: GET / with Me and Note.all (list, read) under /👤.yaml, signed in, vs the same page without users`,
    { label: 'plain (no users)', port: plain.port, path: '/', headers: { cookie: `sid=${cookie}` } },
    { label: 'users, signed in', port: users.port, path: '/', headers: { cookie: `sid=${cookie}` } },
    200,
  );
  report(result, TARGET);
  if (result.ratio < TARGET) failures.push('users page');

  const after = await send(users.port, 'GET', '/', { Cookie: `sid=${cookie}` });
  if (after.status !== 200 || !after.body.includes(`<span class="me">${USER}</span>`)) fail('users: GET / after the runs', after, `200 showing ${USER}`);
  console.log(`load average ${load1()}`);
  console.log(failures.length ? `targets missed: ${failures.join(', ')}` : 'every target met');
} finally {
  for (const c of cleanups) await c();
}
if (process.env.BENCH_STRICT && failures.length) process.exitCode = 1;
