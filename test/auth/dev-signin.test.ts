/**
 * The development sign-in (docs/users.md "Development sign-in"), black-box: `laneway
 * serve --dev` as users run it (bin/laneway in a child process, on 127.0.0.1 port 0) with
 * `LANEWAY_AUTH_DEV_USERS`, serving test/fixtures/dev-signin-app (a private site whose only
 * provider is not configured), driven over HTTP by a visitor with a cookie jar.
 *
 * Signing in as a test user from the app's own sign-in page, `Me` on a page and in a script, the
 * session id replaced at sign-in and at sign-out, an unknown test user refused, a forged `next`;
 * and the safety of it: `serve` without `--dev` refuses to start while test users are set, and
 * without development mode nothing of it answers (404) even when the variable is set.
 */
import { after, before, describe, it, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { rawRequest, serve, writeApp, type Served } from '../helpers.js';
import { TestVisitor } from '../support/visitor.js';

const BIN = fileURLToPath(new URL('../../bin/laneway', import.meta.url));
const APP = fileURLToPath(new URL('../fixtures/dev-signin-app', import.meta.url));
const USERS = 'Ada Lovelace <ada@example.test>, Bob';

/** This process's environment without the settings that would change what the server does (providers, database, port). */
function cliEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const k of Object.keys(env)) if (k.startsWith('LANEWAY_') || k === 'DATABASE_URL' || k === 'PORT') delete env[k];
  return { ...env, ...extra };
}

interface RunningCli {
  port: number;
  /** What the server printed to standard error so far. */
  stderr(): string;
  stop(): Promise<void>;
}

/** `laneway serve DIR --port 0 …` in a child process; resolves once it prints its listening line. */
async function startCli(dir: string, args: string[], env: NodeJS.ProcessEnv): Promise<RunningCli> {
  const child: ChildProcess = spawn(process.execPath, [BIN, 'serve', dir, '--port', '0', '--log', 'off', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env });
  let out = '';
  let err = '';
  child.stderr!.on('data', (d) => (err += d));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.on('data', (d) => {
      out += d;
      const m = /^listening on http:\/\/127\.0\.0\.1:(\d+)$/m.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`laneway serve exited with ${code} before listening:\n${out}${err}`)));
  });
  return {
    port,
    stderr: () => err,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** The forms of a sign-in page: id, action (unescaped) and button text, in order. */
function formsOf(html: string): Array<{ id: string; action: string; label: string }> {
  return [...html.matchAll(/<form id="([^"]*)" method="post" action="([^"]*)"><button class="[^"]*">([^<]*)<\/button><\/form>/g)].map((m) => ({
    id: m[1]!,
    action: m[2]!.replace(/&amp;/g, '&'),
    label: m[3]!,
  }));
}

describe('development sign-in (laneway serve --dev with LANEWAY_AUTH_DEV_USERS)', () => {
  let cli: RunningCli;
  let data: string;

  before(async () => {
    data = mkdtempSync(join(tmpdir(), 'laneway-dev-signin-'));
    cli = await startCli(APP, ['--dev', '--data', data], cliEnv({ LANEWAY_AUTH_DEV_USERS: USERS }));
  });
  after(async () => {
    await cli?.stop();
    rmSync(data, { recursive: true, force: true });
  });

  /** Signs `v` in as the test user of the form labelled `name` on the sign-in page; answers the POST's response. */
  async function signIn(v: TestVisitor, name: string, next = '/') {
    const page = await v.get(`/auth/?next=${encodeURIComponent(next)}`);
    assert.equal(page.status, 200);
    const form = formsOf(page.text).find((f) => f.label === `Sign in with ${name} (test user)`);
    assert.ok(form, `no form for ${name} in:\n${page.text}`);
    return v.post(form.action);
  }

  it('warns loudly at start, naming the test users', () => {
    assert.match(cli.stderr(), /^WARNING: development sign-in is on .*Ada Lovelace, Bob.*\[LW_AUTH_DEV_SIGNIN\]$/m);
  });

  it("lists the test users in Providers.all, so the app's own sign-in page shows them", async () => {
    const v = new TestVisitor(cli.port);
    const page = await v.get('/auth/?next=%2Freports');
    assert.equal(page.status, 200);
    assert.deepEqual(formsOf(page.text), [
      { id: 'dev', action: '/__/auth/dev/ada-lovelace?next=%2Freports', label: 'Sign in with Ada Lovelace (test user)' },
      { id: 'dev', action: '/__/auth/dev/bob?next=%2Freports', label: 'Sign in with Bob (test user)' },
    ]);
    assert.match(page.text, /class="brand-dev"/);
    assert.match(String(page.headers['content-security-policy']), /default-src 'none'/, 'the page keeps its policy');
  });

  it('signs in as a test user: a new session id, on to next, and Me on pages and in scripts', async () => {
    const v = new TestVisitor(cli.port);
    const asked = await v.get('/reports?x=1');
    assert.equal(asked.status, 302);
    assert.equal(asked.headers.location, '/auth/?next=%2Freports%3Fx%3D1');
    // A session the visitor had before signing in (here: one a script started while signed out).
    const planted = await v.post('/__/auth/provider/logout');
    assert.equal(planted.status, 303);
    const before = v.jar.get('sid');
    assert.ok(before, 'a session before signing in');

    const done = await signIn(v, 'Ada Lovelace', '/reports?x=1');
    assert.equal(done.status, 303);
    assert.equal(done.headers.location, '/reports?x=1');
    assert.equal(done.headers['cache-control'], 'no-store');
    assert.match(String([done.headers['set-cookie']].flat()[0]), /^sid=[^;]+; Path=\/; HttpOnly; SameSite=Lax(; Secure)?; Max-Age=2592000$/);
    const after = v.jar.get('sid');
    assert.ok(after && after !== before, 'the session id is replaced at sign-in');

    const me = await v.get('/reports?x=1', { Accept: 'application/json' });
    assert.equal(me.status, 200);
    assert.deepEqual(JSON.parse(me.text), { linked: true, name: 'Ada Lovelace', email: 'ada@example.test' });
    const home = await v.get('/');
    assert.equal(home.status, 200);
    assert.match(home.text, /<p class="me">Hello Ada Lovelace \(ada@example\.test\)<\/p>/);
    assert.match((await v.get('/auth/')).text, /Signed in as Ada Lovelace/);

    // The session id from before the sign-in signs nobody in (no fixation).
    const old = new TestVisitor(cli.port);
    old.jar.set('sid', before);
    assert.equal((await old.get('/')).status, 302);
    // Another visitor is not signed in.
    assert.equal((await new TestVisitor(cli.port).get('/')).status, 302);
  });

  it('a test user without an e-mail address; the same test user is the same account each time', async () => {
    const a = new TestVisitor(cli.port);
    assert.equal((await signIn(a, 'Bob')).status, 303);
    assert.match((await a.get('/')).text, /<p class="me">Hello Bob \(\)<\/p>/);
    const b = new TestVisitor(cli.port);
    assert.equal((await signIn(b, 'Bob')).status, 303);
    assert.deepEqual(JSON.parse((await b.get('/reports', { Accept: 'application/json' })).text), { linked: true, name: 'Bob', email: null });
  });

  it('signs out: the session id is replaced and the private area sends to /auth/ again', async () => {
    const v = new TestVisitor(cli.port);
    await signIn(v, 'Bob');
    const signedIn = v.jar.get('sid')!;
    assert.equal((await v.get('/')).status, 200);
    const out = await v.post('/__/auth/provider/logout');
    assert.equal(out.status, 303);
    assert.equal(out.headers.location, '/');
    assert.notEqual(v.jar.get('sid'), signedIn);
    assert.equal((await v.get('/')).status, 302);
    // The signed-out session stays signed out, whoever holds it.
    const thief = new TestVisitor(cli.port);
    thief.jar.set('sid', signedIn);
    assert.equal((await thief.get('/')).status, 302);
  });

  it('refuses an unknown test user (404) and a GET (405), and signs nobody in', async () => {
    const v = new TestVisitor(cli.port);
    for (const [path, status] of [['/__/auth/dev/nobody', 404], ['/__/auth/dev/ada', 404], ['/__/auth/dev/', 404], ['/__/auth/dev/bob/x', 404], ['/__/auth/dev/%E0%A4%A', 400]] as const) {
      const r = await v.post(path);
      assert.equal(r.status, status, path);
      assert.equal(r.headers['set-cookie'], undefined, path);
    }
    const json = await v.post('/__/auth/dev/nobody', {}, { Accept: 'application/json' });
    assert.equal(json.status, 404);
    assert.match(JSON.parse(json.text).error, /no such test user.*Ada Lovelace, Bob/);
    const get = await v.get('/__/auth/dev/bob');
    assert.equal(get.status, 405);
    assert.equal(get.headers.allow, 'POST');
    assert.equal((await v.get('/')).status, 302);
  });

  it('a forged next goes to / (the same check as the providers)', async () => {
    for (const next of ['//evil.example', '//evil.example/page', 'https://evil.example/', '/\\evil.example', 'evil', '/x\r\nLocation: //evil.example']) {
      const v = new TestVisitor(cli.port);
      const r = await v.post(`/__/auth/dev/bob?next=${encodeURIComponent(next)}`);
      assert.equal(r.status, 303, next);
      assert.equal(r.headers.location, '/', next);
    }
    // A path of the site is honoured as it is.
    const v = new TestVisitor(cli.port);
    const r = await v.post(`/__/auth/dev/bob?next=${encodeURIComponent('/reports?a=1&b=2')}`);
    assert.equal(r.headers.location, '/reports?a=1&b=2');
  });

  it('a cross-site POST signs nobody in', async () => {
    const r = await rawRequest(cli.port, 'POST', '/__/auth/dev/bob', { Host: `localhost:${cli.port}`, Origin: 'https://evil.example', 'Content-Length': '0' });
    assert.equal(r.status, 403);
    assert.equal(r.headers['set-cookie'], undefined);
  });
});

test('laneway serve without --dev refuses to start while LANEWAY_AUTH_DEV_USERS is set', () => {
  const data = mkdtempSync(join(tmpdir(), 'laneway-dev-signin-'));
  try {
    const r = spawnSync(process.execPath, [BIN, 'serve', APP, '--port', '0', '--log', 'off', '--data', data], { encoding: 'utf8', env: cliEnv({ LANEWAY_AUTH_DEV_USERS: USERS }), timeout: 60_000 });
    assert.equal(r.status, 1, r.stdout + r.stderr);
    assert.doesNotMatch(r.stdout, /listening/);
    assert.match(r.stderr, /LANEWAY_AUTH_DEV_USERS is set.*Add --dev .*or unset LANEWAY_AUTH_DEV_USERS.*\[LW_AUTH_DEV_USERS\]/);
  } finally {
    rmSync(data, { recursive: true, force: true });
  }
});

test('laneway serve --dev refuses test users it cannot read, and an app with a provider named dev', () => {
  const data = mkdtempSync(join(tmpdir(), 'laneway-dev-signin-'));
  const withDev = writeApp({ '👤.yaml': 'providers: [dev]\nauth: required\n', 'index.html': '<p>x</p>\n' });
  const run = (dir: string, users: string) =>
    spawnSync(process.execPath, [BIN, 'serve', dir, '--dev', '--port', '0', '--log', 'off', '--data', data], { encoding: 'utf8', env: cliEnv({ LANEWAY_AUTH_DEV_USERS: users }), timeout: 60_000 });
  try {
    const cases: Array<[string, RegExp]> = [
      ['Ada <not an address>', /"not an address" in "Ada <not an address>" is not an e-mail address/],
      ['Ada Lovelace, ada lovelace', /"Ada Lovelace" and "ada lovelace" are the same test user \(ada-lovelace\)/],
      [' , ', /names no test user/],
      ['Ada <ada@example.test> Lovelace', /is not a test user: write a name, optionally followed by an e-mail address/],
      ['!!!', /needs a name with letters or digits/],
    ];
    for (const [users, message] of cases) {
      const r = run(APP, users);
      assert.equal(r.status, 1, users);
      assert.match(r.stderr, message, users);
      assert.match(r.stderr, /\[LW_AUTH_DEV_USERS\]/, users);
      assert.doesNotMatch(r.stdout, /listening/, users);
    }
    const clash = run(withDev, USERS);
    assert.equal(clash.status, 1, clash.stdout + clash.stderr);
    assert.match(clash.stderr, /names a provider "dev".*rename the provider.*\[LW_AUTH_DEV_USERS\]/);
    assert.doesNotMatch(clash.stdout, /listening/);
  } finally {
    rmSync(data, { recursive: true, force: true });
    rmSync(withDev, { recursive: true, force: true });
  }
});

describe('without development mode nothing of the development sign-in answers', () => {
  let s: Served;
  let cli: RunningCli;
  let data: string;
  const saved = process.env.LANEWAY_AUTH_DEV_USERS;

  before(async () => {
    data = mkdtempSync(join(tmpdir(), 'laneway-dev-signin-'));
    // The variable alone turns nothing on: only `serve --dev` hands the test users to the sign-in.
    process.env.LANEWAY_AUTH_DEV_USERS = USERS;
    s = await serve(APP, { data: { dataDir: join(data, 'in-process') } });
    // --dev without test users: development mode, but no development sign-in.
    cli = await startCli(APP, ['--dev', '--data', join(data, 'cli')], cliEnv());
  });
  after(async () => {
    await s?.close();
    await cli?.stop();
    if (saved === undefined) delete process.env.LANEWAY_AUTH_DEV_USERS;
    else process.env.LANEWAY_AUTH_DEV_USERS = saved;
    rmSync(data, { recursive: true, force: true });
  });

  it('its paths answer 404 and the sign-in page lists no test user', async () => {
    for (const port of [s.port, cli.port]) {
      const v = new TestVisitor(port);
      for (const path of ['/__/auth/dev/ada-lovelace', '/__/auth/dev/bob?next=%2F', '/__/auth/dev/', '/__/auth/dev']) {
        assert.equal((await v.post(path)).status, 404, `POST ${path}`);
        assert.equal((await v.get(path)).status, 404, `GET ${path}`);
      }
      const page = await v.get('/auth/');
      assert.equal(page.status, 200);
      assert.deepEqual(formsOf(page.text), []);
      assert.equal((await v.get('/')).status, 302, 'nobody is signed in');
    }
    assert.doesNotMatch(cli.stderr(), /development sign-in is on/);
  });
});
