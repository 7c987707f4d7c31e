// Form benchmarks (bench/README.md). App: bench/fixtures/forms-app/ — one model, 🌐Note (title,
// due date, kind, done), a home page rendering its default form (`{{#Note.Form.view as form}}`:
// an input, a date input, a select and a checkbox), the same page without the form (`/plain`),
// and the script the form posts to (`notes/POST.js`: `Note.Form.submit(note)`, then
// `Redirect.home().success('Added ' + note.title)`). SQLite only.
//
//   form POST      POST /notes?_form=<id> from a visitor with its `sid` cookie: session, form-state
//                  check (each id is single-use: every POST carries a fresh id, issued before the run
//                  by GETting the form page with the same cookie), validation, insert, commit, flash,
//                  302 to /. Laneway (servers/laneway-data.mjs) vs bare node:http
//                  (servers/bare-forms.mjs: a SELECT of the session row, validation, the same insert,
//                  the same 302). Target ≥ 0.5×. Runs are counted, as models.bench.mjs's POSTs.
//   (info)         POST /quick: the same form through a form file with
//                  `🎛: {requirePreviousState: false}` (no form-state id), vs the same baseline.
//   form view      GET / (the page with the form) vs GET /plain (the same page without it), both
//                  Laneway, both with one fixed `sid` cookie. Target ≥ 0.8× (the speed issue's).
//
// Before timing: a POST with a fresh id answers 302 to / and stores its note; its replay, a POST
// without `_form`, and another visitor's id answer 400 and store nothing; the baseline answers the
// same 302 (same headers and bytes) and 400 without a session; both pages answer 200 without a
// Set-Cookie, with the same headers (but the ETag, which a page with a fresh form id has not),
// and only the home page holds a form with a fresh id per render.
// During the POST runs every answer must be 302 to /; afterwards the notes stored must equal the
// 302s counted, and the form ids marked used must equal Laneway's 302s.
import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import Database from 'better-sqlite3';
import { BENCH_DIR, WORKLOAD, compare, cpuMeter, describeWorkload, report, stableHeaders, startServer } from './lib.mjs';

const APP = join(BENCH_DIR, 'fixtures', 'forms-app');
const LANEWAY = join(BENCH_DIR, 'servers', 'laneway-data.mjs');
const BARE = join(BENCH_DIR, 'servers', 'bare-forms.mjs');
const FORM = 'application/x-www-form-urlencoded';
const POST_BODY = 'Note_title=Bench+note&Note_due=2026-12-01&Note_kind=urgent&Note_done=true';
const TARGET_POST = 0.5;
const TARGET_VIEW = 0.8; // a page with a form ≥ 0.8× the same page without (bench/README.md "Targets")
const HOST = '127.0.0.1';
// The children inherit it: a fixed secret (at least 32 characters) for the run's cookies and ids.
process.env.LANEWAY_SECRET ??= 'laneway-bench-forms-secret-0123456789abcdef';

const cleanups = [];
const failures = [];

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};

/** One request, as autocannon will send it (no Accept-Encoding). */
function send(port, method, path, headers = {}, body) {
  return new Promise((resolve, reject) => {
    const h = { ...headers };
    if (body !== undefined) {
      h['Content-Type'] = FORM;
      h['Content-Length'] = Buffer.byteLength(body);
    }
    const req = request({ host: HOST, port, path, method, agent: false, headers: h }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.setTimeout(5_000, () => req.destroy(new Error(`${method} ${path} timed out`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** A browser's visitor of one server: its `sid` cookie, same-origin headers on POSTs. */
function visitor(port, cookie) {
  const origin = `http://${HOST}:${port}`;
  return {
    port,
    cookie,
    headers: () => (cookie ? { Cookie: `sid=${cookie}` } : {}),
    postHeaders: () => ({ Origin: origin, ...(cookie ? { Cookie: `sid=${cookie}` } : {}) }),
    get(path) {
      return send(port, 'GET', path, this.headers());
    },
    post(path, body = POST_BODY) {
      return send(port, 'POST', path, this.postHeaders(), body);
    },
  };
}

/** A new visitor: GET / without a cookie starts its session; returns it with the cookie. */
async function newVisitor(port) {
  const res = await send(port, 'GET', '/');
  const line = [res.headers['set-cookie'] ?? []].flat().find((c) => c.startsWith('sid='));
  if (res.status !== 200 || !line) throw new Error(`GET / without a cookie answered ${res.status} without a sid cookie`);
  return visitor(port, line.slice(4, line.indexOf(';')));
}

const FORM_ID = /<form action="\/notes\?_form=([^"&]+)"/;
const formIdOf = (body) => FORM_ID.exec(String(body))?.[1];

/**
 * Fresh form ids for `v`: `amount` GETs of the form page with its cookie (autocannon, 50
 * connections), each answer's id taken from the form's action. Throws unless all are distinct.
 */
async function issueFormIds(v, amount) {
  const ids = [];
  let bad = 0;
  const result = await new Promise((resolve, reject) => {
    autocannon(
      {
        url: `http://${HOST}:${v.port}/`,
        connections: Math.min(WORKLOAD.connections, amount),
        pipelining: 1,
        amount,
        timeout: 5,
        headers: { cookie: `sid=${v.cookie}` },
        requests: [
          {
            onResponse(status, body) {
              const id = status === 200 ? formIdOf(body) : undefined;
              if (id) ids.push(id);
              else bad++;
            },
          },
        ],
      },
      (err, r) => (err ? reject(err) : resolve(r)),
    );
  });
  if (result.errors || result.timeouts || bad || ids.length !== amount || new Set(ids).size !== amount) {
    throw new Error(`issuing form ids: ${result.errors} errors, ${result.timeouts} timeouts, ${bad} answers without a form, ${ids.length} ids (${new Set(ids).size} distinct) of ${amount}`);
  }
  return ids;
}

/**
 * One autocannon run of exactly `amount` POSTs (all answered before it ends); throws on socket
 * errors, timeouts, or any answer other than 302 to `/`. `next()`, when given, is the path of each
 * request (a fresh form id each). The time is taken here, from the start to the last answer
 * (autocannon ends a counted run on its next 1-second tick), as in models.bench.mjs.
 */
async function loadPost(side, amount) {
  let answered = 0;
  let home = 0;
  let last = 0;
  const cpu = cpuMeter(side.pid);
  const start = performance.now();
  const setup = side.next ? (req) => ({ ...req, path: side.next() }) : undefined;
  const result = await new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: `http://${HOST}:${side.port}${side.path}`,
        connections: WORKLOAD.connections,
        pipelining: WORKLOAD.pipelining,
        amount,
        timeout: 5,
        method: 'POST',
        headers: { 'content-type': FORM, cookie: `sid=${side.cookie}`, origin: `http://${HOST}:${side.port}` },
        body: POST_BODY,
        requests: [
          {
            ...(setup && { setupRequest: setup }),
            onResponse(status, _body, _context, headers) {
              const location = Object.entries(headers).find(([k]) => k.toLowerCase() === 'location')?.[1];
              if (status === 302 && location === '/') home++;
            },
          },
        ],
      },
      (err, r) => (err ? reject(err) : resolve(r)),
    );
    instance.on('response', () => {
      if (++answered === amount) last = performance.now();
    });
  });
  const statuses = Object.keys(result.statusCodeStats ?? {}).map(Number);
  const redirects = result.statusCodeStats?.[302]?.count ?? 0;
  if (result.errors || result.timeouts || statuses.some((s) => s !== 302) || redirects !== amount || home !== amount || !last) {
    throw new Error(`${side.label}: POST ${side.path}: ${result.errors} errors, ${result.timeouts} timeouts, statuses ${statuses.join(', ') || 'none'}, ${redirects} of ${amount} answered 302 (${home} to /)`);
  }
  const seconds = (last - start) / 1000;
  // Server CPU µs per request (its process alone; null when unknown), as models.bench.mjs.
  return { rps: amount / seconds, p99: result.latency.p99, redirects, seconds, cpu: cpu(amount) };
}

/**
 * models.bench.mjs's comparePost(): a 200-request probe and a warm-up each, then alternating runs,
 * each sized from the side's fastest rate so far to last about BENCH_SECONDS. `side.prepare(amount)`,
 * when given, runs before each of that side's runs, untimed (issuing its form ids).
 */
async function comparePost(name, a, b) {
  const redirects = new Map([[a, 0], [b, 0]]);
  const run = async (s, amount) => {
    const n = Math.max(200, 4 * WORKLOAD.connections, Math.round(amount));
    if (s.prepare) await s.prepare(n);
    const r = await loadPost(s, n);
    redirects.set(s, redirects.get(s) + r.redirects);
    return r;
  };
  const size = new Map();
  for (const s of [a, b]) {
    const probe = await run(s, 200);
    const warm = await run(s, probe.rps * WORKLOAD.warmupSeconds);
    size.set(s, Math.max(probe.rps, warm.rps) * WORKLOAD.seconds);
  }
  const runs = { a: [], b: [] };
  // Each run is sized from the fastest rate of its side so far, so that it lasts at least about
  // BENCH_SECONDS (sizing from the previous run alone gave runs of half a second after a slow one
  // on a loaded machine).
  const timed = async (s, list) => {
    const r = await run(s, size.get(s));
    size.set(s, Math.max(size.get(s), r.rps * WORKLOAD.seconds));
    list.push(r);
  };
  for (let i = 0; i < WORKLOAD.rounds; i++) {
    await timed(a, runs.a);
    await timed(b, runs.b);
  }
  const side = (s, rs) => ({ label: s.label, rps: median(rs.map((r) => r.rps)), runs: rs.map((r) => Math.round(r.rps)), p99: median(rs.map((r) => r.p99)), cpu: rs.every((r) => r.cpu !== null) ? median(rs.map((r) => r.cpu)) : null });
  const baseline = side(a, runs.a);
  const candidate = side(b, runs.b);
  const seconds = [...runs.a, ...runs.b].map((r) => r.seconds.toFixed(1));
  const cpuRatio = baseline.cpu !== null && candidate.cpu !== null ? baseline.cpu / candidate.cpu : null;
  return { name, baseline, candidate, ratio: candidate.rps / baseline.rps, cpuRatio, redirects: { a: redirects.get(a), b: redirects.get(b) }, seconds };
}

/** lib.mjs's load() with request headers (the visitor's cookie). */

/** The bench's own read-only connection to the servers' database. */
function openCounts(dir) {
  let db;
  const open = () => (db ??= new Database(join(dir, 'laneway.db'), { readonly: true }));
  cleanups.unshift(() => db?.close());
  const n = (sql, ...values) => open().prepare(sql).get(...values).n;
  return {
    notes: () => n('SELECT COUNT(*) AS n FROM "lw_Note"'),
    titled: (title) => n('SELECT COUNT(*) AS n FROM "lw_Note" WHERE "f_title" = ?', title),
    used: () => n('SELECT COUNT(*) AS n FROM "lw__form_used"'),
  };
}

function fail(what, res, expected) {
  throw new Error(`${what} answered ${res.status} ${res.headers.location ?? ''}, expected ${expected}: ${res.body.toString('utf8').slice(0, 200)}`);
}

/** The answers checked before timing (see the top of this file). */
async function checkPosts(counts, laneway, bare, poster) {
  const titled = (t) => `Note_title=${encodeURIComponent(t)}&Note_kind=plain`;
  // Laneway: a fresh id is accepted once.
  const id = formIdOf((await poster.get('/')).body);
  if (!id) throw new Error('GET / holds no form with a form id');
  const ok = await poster.post(`/notes?_form=${id}`, titled('Check laneway'));
  if (ok.status !== 302 || ok.headers.location !== '/') fail('laneway: POST /notes?_form=<fresh id>', ok, '302 to /');
  if (ok.headers['set-cookie']) throw new Error(`laneway: the POST of a known visitor set a cookie: ${ok.headers['set-cookie']}`);
  if (counts.titled('Check laneway') !== 1) throw new Error('laneway: POST /notes answered 302 but did not store the note');
  // The next page of this visitor shows the flash message (and takes it).
  const shown = (await poster.get('/')).body.toString('utf8');
  if (!shown.includes('<p class="message is-success">Added Check laneway</p>')) throw new Error('laneway: the page after the POST does not show its message');
  const replay = await poster.post(`/notes?_form=${id}`, titled('Refused'));
  if (replay.status !== 400) fail('laneway: the replay of a POST', replay, 400);
  const none = await poster.post('/notes', titled('Refused'));
  if (none.status !== 400) fail('laneway: POST /notes without _form', none, 400);
  const other = await newVisitor(laneway.port);
  const theirs = formIdOf((await poster.get('/')).body);
  const stolen = await other.post(`/notes?_form=${theirs}`, titled('Refused'));
  if (stolen.status !== 400) fail("laneway: POST /notes with another visitor's form id", stolen, 400);
  const invalid = await poster.post(`/notes?_form=${formIdOf((await poster.get('/')).body)}`, titled('x'.repeat(81)));
  if (invalid.status !== 302 || !/^\/\?_form=s/.test(invalid.headers.location ?? '')) fail('laneway: POST /notes with a title too long', invalid, '302 to /?_form=s…');
  const quick = await poster.post('/quick', titled('Check quick'));
  if (quick.status !== 302 || quick.headers.location !== '/' || counts.titled('Check quick') !== 1) fail('laneway: POST /quick', quick, '302 to / and the note stored');

  // The baseline: the same 302 for the same visitor; 400 without a session; 422 on a bad value.
  const mirror = visitor(bare.port, poster.cookie);
  const same = await mirror.post('/notes', titled('Check bare'));
  if (same.status !== 302 || counts.titled('Check bare') !== 1) fail('bare: POST /notes', same, '302 and the note stored');
  const [x, y] = [ok, same].map((r) => JSON.stringify(stableHeaders(r.headers)));
  if (x !== y || !ok.body.equals(same.body)) throw new Error(`POST /notes: the two servers answer differently:\n  ${x}\n  ${y}`);
  const anonymous = await visitor(bare.port).post('/notes', titled('Refused'));
  if (anonymous.status !== 400) fail('bare: POST /notes without a session', anonymous, 400);
  const bad = await mirror.post('/notes', titled('x'.repeat(81)));
  if (bad.status !== 422) fail('bare: POST /notes with a title too long', bad, 422);
  if (counts.titled('Refused') !== 0 || counts.titled('x'.repeat(81)) !== 0) throw new Error('a refused POST stored a note');
}

/** Both pages, for the visitor with its cookie: 200, same headers, no Set-Cookie; the form only on `/`, a fresh id each time. */
async function checkPages(viewer) {
  const [form, again, plain] = [await viewer.get('/'), await viewer.get('/'), await viewer.get('/plain')];
  for (const [path, res] of [['/', form], ['/plain', plain]]) {
    if (res.status !== 200) fail(`GET ${path}`, res, 200);
    if (res.headers['set-cookie']) throw new Error(`GET ${path} set a cookie for a visitor with its sid: ${res.headers['set-cookie']}`);
  }
  // A page showing a fresh form id has no ETag (docs/assets.md): it can never be answered 304.
  if (form.headers.etag) throw new Error(`GET / (a fresh form id) answered an ETag: ${form.headers.etag}`);
  const names = (r) => Object.keys(stableHeaders(r.headers)).filter((k) => k !== 'etag').join(', ');
  if (names(form) !== names(plain) || form.headers['cache-control'] !== plain.headers['cache-control']) {
    throw new Error(`the two pages answer different headers:\n  ${names(form)} (${form.headers['cache-control']})\n  ${names(plain)} (${plain.headers['cache-control']})`);
  }
  const [a, b] = [formIdOf(form.body), formIdOf(again.body)];
  if (!a || !b || a === b) throw new Error(`GET / must render the form with a fresh id each time (ids ${a}, ${b})`);
  for (const control of ['<input name="Note_title" type="text" required placeholder="What needs doing?" maxlength="80">', '<input name="Note_due" type="date">', '<select name="Note_kind"', '<input type="checkbox" name="Note_done" value="true">']) {
    if (!form.body.includes(control)) throw new Error(`GET / lacks ${control}`);
  }
  if (plain.body.includes('<form')) throw new Error('GET /plain holds a form');
  return { form: form.body.length, plain: plain.body.length };
}

console.log(`forms.bench: ${describeWorkload()}; POST runs counted (sized to about ${WORKLOAD.seconds} s); SQLite only\n`);
try {
  const dir = await mkdtemp(join(tmpdir(), 'laneway-bench-forms-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const laneway = await startServer(LANEWAY, [APP, dir]);
  cleanups.unshift(() => laneway.stop());
  // Laneway created the tables at start; the baseline uses them.
  const bare = await startServer(BARE, [dir]);
  cleanups.unshift(() => bare.stop());
  const counts = openCounts(dir);

  // The visitor who posts (its session row exists once its first POST left a message), and the one who reads.
  const poster = await newVisitor(laneway.port);
  const viewer = await newVisitor(laneway.port);
  await checkPosts(counts, laneway, bare, poster);
  const sizes = await checkPages(viewer);
  console.log(
    `checked: POST /notes?_form=<fresh id> 302 to / and stored, its replay, no _form and another visitor's id 400; ` +
      `baseline 302 byte-equal, 400 without a session; GET / ${sizes.form} B with a form (fresh id per render), GET /plain ${sizes.plain} B\n`,
  );

  // 1. The form POST, each with a fresh id issued to the poster before the run.
  let pool = [];
  let issued = 0;
  let issueMs = 0;
  const fresh = {
    label: 'laneway',
    port: laneway.port,
    pid: laneway.pid,
    path: '/notes',
    cookie: poster.cookie,
    async prepare(amount) {
      const t = performance.now();
      pool = await issueFormIds(poster, amount);
      issueMs += performance.now() - t;
      issued += amount;
    },
    next: () => `/notes?_form=${pool.pop() ?? 'none-left'}`,
  };
  const baseline = { label: 'bare node:http', port: bare.port, pid: bare.pid, path: '/notes', cookie: poster.cookie };
  let notes = counts.notes();
  let used = counts.used();
  const post = await comparePost(`form POST /notes?_form=<fresh id> (session, form state, validation, insert, commit, flash, 302)`, baseline, fresh);
  const stored = counts.notes() - notes;
  const marked = counts.used() - used;
  if (stored !== post.redirects.a + post.redirects.b) throw new Error(`form POST: ${post.redirects.a + post.redirects.b} POSTs answered 302 but ${stored} notes were stored`);
  if (marked !== post.redirects.b) throw new Error(`form POST: Laneway answered ${post.redirects.b} 302s but marked ${marked} form ids used`);
  report(post, TARGET_POST);
  console.log(
    `  (${(post.redirects.a + post.redirects.b).toLocaleString('en-US')} POSTs, each answered 302 to / and stored; Laneway's ${post.redirects.b.toLocaleString('en-US')} each with its own form id, ` +
      `${issued.toLocaleString('en-US')} ids issued by GET / in ${(issueMs / 1000).toFixed(1)} s, untimed; timed runs lasted ${post.seconds.join(', ')} s)\n`,
  );
  if (post.ratio < TARGET_POST) failures.push('form POST');

  // 2. (info) The same form without a form state (requirePreviousState: false).
  notes = counts.notes();
  const quick = await comparePost(
    `(info) POST /quick, form file with requirePreviousState: false (session, validation, insert, commit, flash, 302)`,
    baseline,
    { label: 'laneway', port: laneway.port, pid: laneway.pid, path: '/quick', cookie: poster.cookie },
  );
  if (counts.notes() - notes !== quick.redirects.a + quick.redirects.b) throw new Error(`(info) POST /quick: the notes stored differ from the 302s counted`);
  report(quick);

  // 3. The page with the form vs the same page without it, one visitor with its cookie.
  const view = await compare(
    `form view: GET / (Note.Form.view, 4 controls) vs GET /plain (same page without the form), both Laneway, one sid cookie`,
    { label: 'laneway, no form', port: laneway.port, pid: laneway.pid, path: '/plain', headers: { cookie: `sid=${viewer.cookie}` } },
    { label: 'laneway, form', port: laneway.port, pid: laneway.pid, path: '/', headers: { cookie: `sid=${viewer.cookie}` } },
    200,
  );
  report(view, TARGET_VIEW);
  if (view.ratio < TARGET_VIEW) failures.push('form view');

  console.log(failures.length ? `targets missed: ${failures.join(', ')}` : 'every target met');
} finally {
  for (const c of cleanups) await c();
}
if (process.env.BENCH_STRICT && failures.length) process.exitCode = 1;
