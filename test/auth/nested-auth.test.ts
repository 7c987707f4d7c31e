/**
 * `/auth/` relative to the mount point of a nested site (docs/users.md "Nested sites"),
 * black-box over HTTP against a real server on 127.0.0.1 port 0. test/fixtures/nested-auth/site is
 * a public site that mounts the private site test/fixtures/nested-auth/app (`auth: required`, its
 * sign-in area `/auth/` `optional`) twice: at `/app/` and at `/docs/team/`.
 *
 * A visitor who is not signed in and asks for a page of the nested site is sent to the nested
 * site's own sign-in page, with the page as the browser asked for it in `next` (mount path
 * included); a JSON client and a write get 401. Signed in there (with the development sign-in of
 * `laneway serve --dev`, which needs no provider), the visitor comes back to the nested page.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { jsonWithoutId, serve, type Served } from '../helpers.js';
import { TestVisitor } from '../support/visitor.js';

const BIN = fileURLToPath(new URL('../../bin/laneway', import.meta.url));
const SITE = fileURLToPath(new URL('../fixtures/nested-auth/site', import.meta.url));

describe('a nested site with auth: required sends visitors to its own /auth/', () => {
  let s: Served;
  let data: string;

  before(async () => {
    data = mkdtempSync(join(tmpdir(), 'laneway-nested-auth-'));
    s = await serve(SITE, { data: { dataDir: data } });
  });
  after(async () => {
    await s?.close();
    rmSync(data, { recursive: true, force: true });
  });

  it('a page: 302 to the mount\'s /auth/, with the page (mount path included) as next', async () => {
    const v = new TestVisitor(s.port);
    const page = await v.get('/app/page');
    assert.equal(page.status, 302);
    assert.equal(page.headers.location, '/app/auth/?next=%2Fapp%2Fpage');
    assert.equal(page.headers['cache-control'], 'no-store');
    const query = await v.get('/app/page?x=1&y=%2F');
    assert.equal(query.headers.location, `/app/auth/?next=${encodeURIComponent('/app/page?x=1&y=%2F')}`);
    // The nested site's root, and a mount one level deeper.
    assert.equal((await v.get('/app/api')).headers.location, '/app/auth/?next=%2Fapp%2Fapi');
    const deeper = await v.get('/docs/team/page');
    assert.equal(deeper.status, 302);
    assert.equal(deeper.headers.location, '/docs/team/auth/?next=%2Fdocs%2Fteam%2Fpage');
  });

  it('a JSON client and a write get 401', async () => {
    const v = new TestVisitor(s.port);
    const json = await v.get('/app/api', { Accept: 'application/json' });
    assert.equal(json.status, 401);
    assert.equal(json.headers.location, undefined);
    assert.deepEqual(jsonWithoutId(json), { error: 'Sign in first.' });
    const write = await v.post('/app/api/save');
    assert.equal(write.status, 401);
    assert.equal((await v.get('/docs/team/api', { Accept: 'application/json' })).status, 401);
  });

  it("the nested sign-in area answers; the parent's pages are public", async () => {
    const v = new TestVisitor(s.port);
    const signin = await v.get('/app/auth/?next=%2Fapp%2Fpage');
    assert.equal(signin.status, 200);
    assert.match(signin.text, /<title>Sign in<\/title>/);
    const home = await v.get('/');
    assert.equal(home.status, 200);
    assert.match(home.text, /the public parent site/);
    // The parent has no /auth/ of its own: the nested one is the only sign-in area.
    assert.equal((await v.get('/auth/')).status, 404);
  });
});

describe('signing in at a nested site brings the visitor back to the nested page', () => {
  let child: ChildProcess;
  let port: number;
  let data: string;

  before(async () => {
    data = mkdtempSync(join(tmpdir(), 'laneway-nested-auth-'));
    const env = { ...process.env };
    for (const k of Object.keys(env)) if (k.startsWith('LANEWAY_') || k === 'DATABASE_URL' || k === 'PORT') delete env[k];
    env.LANEWAY_AUTH_DEV_USERS = 'Ada Lovelace <ada@example.test>';
    child = spawn(process.execPath, [BIN, 'serve', SITE, '--dev', '--port', '0', '--log', 'off', '--data', data], { stdio: ['ignore', 'pipe', 'pipe'], env });
    let out = '';
    let err = '';
    child.stderr!.on('data', (d) => (err += d));
    port = await new Promise<number>((resolve, reject) => {
      child.stdout!.on('data', (d) => {
        out += d;
        const m = /^listening on http:\/\/127\.0\.0\.1:(\d+)$/m.exec(out);
        if (m) resolve(Number(m[1]));
      });
      child.once('exit', (code) => reject(new Error(`laneway serve exited with ${code} before listening:\n${out}${err}`)));
    });
  });
  after(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(data, { recursive: true, force: true });
  });

  for (const mount of ['/app', '/docs/team']) {
    it(`at ${mount}/: the sign-in page, its form, and back to ${mount}/page`, async () => {
      const v = new TestVisitor(port);
      const asked = await v.get(`${mount}/page?tab=2`);
      assert.equal(asked.status, 302);
      const signinUrl = String(asked.headers.location);
      assert.equal(signinUrl, `${mount}/auth/?next=${encodeURIComponent(`${mount}/page?tab=2`)}`);

      const page = await v.get(signinUrl);
      assert.equal(page.status, 200);
      // Providers.all's authPath carries next on, and the mount writes the form for itself.
      const action = /<form id="dev" method="post" action="([^"]+)">/.exec(page.text)?.[1]?.replace(/&amp;/g, '&');
      assert.equal(action, `${mount}/__/auth/dev/ada-lovelace?next=${encodeURIComponent(`${mount}/page?tab=2`)}`);

      const before = v.jar.get('sid');
      const done = await v.post(action!);
      assert.equal(done.status, 303);
      assert.equal(done.headers.location, `${mount}/page?tab=2`);
      assert.notEqual(v.jar.get('sid'), before, 'a new session id at sign-in');

      const back = await v.get(String(done.headers.location));
      assert.equal(back.status, 200);
      assert.match(back.text, /<p class="me">Private page of Ada Lovelace<\/p>/);
      // The nested page's own links are written for the mount.
      assert.match(back.text, new RegExp(`<a href="${mount}/auth/">account</a>`));
      assert.deepEqual(JSON.parse((await v.get(`${mount}/api`, { Accept: 'application/json' })).text), { linked: true, name: 'Ada Lovelace' });

      // Signing out (the nested site's own sign-out) ends it.
      assert.equal((await v.post(`${mount}/__/auth/provider/logout`)).status, 303);
      assert.equal((await v.get(`${mount}/page`)).status, 302);
    });
  }

  it("a forged next at the nested site's sign-in goes to /", async () => {
    const v = new TestVisitor(port);
    const r = await v.post(`/app/__/auth/dev/ada-lovelace?next=${encodeURIComponent('//evil.example/app/page')}`);
    assert.equal(r.status, 303);
    assert.equal(r.headers.location, '/');
  });
});
