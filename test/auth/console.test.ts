/**
 * A console-shaped app end to end (docs/users.md, docs/permissions.md), black-box over HTTP with
 * two users signed in through a real OpenID Connect provider (oidc-provider on 127.0.0.1), on both
 * engines.
 *
 * test/fixtures/console-app is our own small app in the shape of the platform's console: a
 * private site (`auth: required`) with a sign-in area (`auth: optional`) and public assets
 * (`auth: none`); projects (`🌐Project`) containing their members' profiles (`👤ProjectMember`,
 * with a tag and a star), releases and keys; a ⏳ form and a 📮 endpoint run as ProjectOwner that
 * create a project with its owner's profile; the home page listing the user's projects through
 * their profiles (a supplier over `ProjectMember.me().all()` and a function supplier); a project's
 * page, settings (rename, share, leave or delete) and keys.
 *
 * Ann creates, stars, tags, renames projects and adds keys; Bob sees nothing of them and is
 * refused (403: JSON for JSON clients, an error page for browsers) until Ann shares one with him
 * as a viewer: then he reads it but cannot change it. Ann leaves the shared project (Bob keeps
 * it) and deletes one nobody else has. Every page answers 200, parses, and is a single-user page;
 * `laneway check` finds nothing wrong with the app.
 */
import { after, before, describe, it, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'parse5';
import { checkApp } from '../../src/app/index.js';
import { formatDiagnostic } from '../../src/diag/index.js';
import { serve, type Response, type Served } from '../helpers.js';
import { ENGINES } from '../support/engines.js';
import { TestVisitor } from '../support/visitor.js';
import { startOidcProvider, type TestOidcProvider } from '../support/oidc.js';

const APP = fileURLToPath(new URL('../fixtures/console-app', import.meta.url));
const BIN = fileURLToPath(new URL('../../bin/laneway', import.meta.url));
const JSON_ACCEPT = { Accept: 'application/json' };
const BROWSER_ACCEPT = { Accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };

/** HTML text of an element's content decoded enough for the names these pages print. */
const decode = (s: string) =>
  s
    .replace(/<[^>]*>/g, '')
    .replace(/&amp;/g, '&')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;|&#34;/g, '"')
    .replace(/&#39;|&#x27;/g, "'")
    .replace(/\s+/g, ' ')
    .trim();

/** The texts of every `<tag class="…cls…">…</tag>` (not nested in one of its own kind). */
function texts(html: string, tag: string, cls: string): string[] {
  const re = new RegExp(`<${tag}\\b[^>]*\\bclass="(?:[^"]*\\s)?${cls}(?:\\s[^"]*)?"[^>]*>([\\s\\S]*?)</${tag}>`, 'g');
  return [...html.matchAll(re)].map((m) => decode(m[1]!));
}

/** The text of the element with this id (`<tag id="…">…</tag>`), or null. */
function byId(html: string, id: string): string | null {
  const m = new RegExp(`<([a-z0-9]+)\\b[^>]*\\bid="${id}"[^>]*>([\\s\\S]*?)</\\1>`).exec(html);
  return m ? decode(m[2]!) : null;
}

/** The project cards of the home page: id, name, tags, star, shared-with-me. */
function cards(html: string) {
  const re = /<div class="card project" data-project="([^"]+)">([\s\S]*?)<\/div>/g;
  return [...html.matchAll(re)].map((m) => ({
    id: m[1]!,
    name: texts(m[2]!, 'a', 'name')[0] ?? '',
    tags: texts(m[2]!, 'span', 'tag'),
    star: /class="star"/.test(m[2]!),
    sharedWithMe: /class="shared-with-me"/.test(m[2]!),
  }));
}

const json = (r: Response) => {
  try {
    return JSON.parse(r.text) as Record<string, unknown>;
  } catch {
    throw new Error(`not JSON (${r.status}): ${r.text.slice(0, 300)}`);
  }
};

/** The parse errors of a page (parse5: the HTML standard's tokenizer and tree errors it reports). */
function parseErrors(html: string): string[] {
  const errors: string[] = [];
  parse(html, { onParseError: (e) => errors.push(`${e.code} at ${e.startLine}:${e.startCol}`) });
  return errors;
}

/** A 403 as a JSON client gets it. */
function assertForbiddenJson(r: Response, what: string, error?: RegExp) {
  assert.equal(r.status, 403, `${what}: ${r.status} ${r.text.slice(0, 300)}`);
  assert.match(String(r.headers['content-type']), /^application\/json/, what);
  const body = json(r);
  assert.equal(typeof body.error, 'string', what);
  if (error) assert.match(String(body.error), error, what);
}

/** A 403 as a browser gets it: an HTML error page. */
function assertForbiddenPage(r: Response, what: string) {
  assert.equal(r.status, 403, `${what}: ${r.status} ${r.text.slice(0, 300)}`);
  assert.match(String(r.headers['content-type']), /^text\/html/, what);
  assert.match(r.text, /<title>403 Forbidden<\/title>/, what);
  assert.deepEqual(parseErrors(r.text), [], what);
}

for (const engine of ENGINES) {
  describe(`a console-shaped app with two signed-in users (${engine.name})`, () => {
    let s: Served;
    let op: TestOidcProvider;
    let dataDir: string;
    const saved = { ...process.env };
    let ann: TestVisitor;
    let bob: TestVisitor;
    /** Every page a signed-in user was shown, for the checks every page must pass. */
    const shown: Array<{ who: string; path: string; res: Response }> = [];
    let harbour = ''; // Ann's project, shared with Bob later
    let scratch = ''; // Ann's project nobody else has
    let release = ''; // Harbour's first release
    let refused = ''; // the new-project page after a refused submission

    async function signIn(v: TestVisitor, account: string) {
      const page = await v.get('/auth/');
      assert.equal(page.status, 200, page.text);
      const action = /<form id="corp" method="post" action="([^"]+)"/.exec(page.text)![1]!.replace(/&amp;/g, '&');
      const started = await v.post(action);
      assert.equal(started.status, 303);
      const back = await op.login(String(started.headers.location), { account });
      const done = await v.get(back.pathname + back.search);
      assert.equal(done.status, 303, done.text);
    }

    /** GET a page as a browser would; it must answer 200. */
    async function page(v: TestVisitor, path: string): Promise<string> {
      const res = await v.get(path, BROWSER_ACCEPT);
      assert.equal(res.status, 200, `${path}: ${res.status} ${res.text.slice(0, 500)}`);
      shown.push({ who: v === ann ? 'ann' : 'bob', path, res });
      return res.text;
    }

    /** POST a form as a browser would; it must redirect (302); answers the location. */
    async function submit(v: TestVisitor, path: string, form: Record<string, string> = {}): Promise<string> {
      const res = await v.post(path, form, BROWSER_ACCEPT);
      assert.equal(res.status, 302, `${path}: ${res.status} ${res.text.slice(0, 500)}`);
      return String(res.headers.location);
    }

    /** Starts a project from the new-project page; answers its id. */
    async function startProject(v: TestVisitor, name: string, source: string): Promise<string> {
      const html = await page(v, '/projects/new');
      const action = /<form id="start" method="post" action="([^"]+)"/.exec(html)![1]!.replace(/&amp;/g, '&');
      assert.match(action, /^\/projects\/new-step\?_form=/);
      const to = await submit(v, action, { Project_name: name, Release_source: source });
      const m = /^\/projects\/([^/]+)\/$/.exec(to);
      assert.ok(m, `a new project redirects to its page, not ${to}`);
      return m[1]!;
    }

    before(async () => {
      op = await startOidcProvider();
      process.env.LANEWAY_AUTH_CORP_CLIENT_ID = op.clientId;
      process.env.LANEWAY_AUTH_CORP_SECRET = op.clientSecret;
      process.env.LANEWAY_AUTH_CORP_ISSUER = op.issuer;
      // The fixture is served in place: its data go to a directory of their own.
      dataDir = mkdtempSync(join(tmpdir(), 'laneway-console-'));
      s = await serve(APP, { data: { ...(await engine.data()), dataDir } });
      await op.setRedirectUris([`http://localhost:${s.port}/__/auth/handler`]);
      ann = new TestVisitor(s.port);
      bob = new TestVisitor(s.port);
      await signIn(ann, 'ann');
      await signIn(bob, 'bob');
    });
    after(async () => {
      await s?.close();
      await op?.stop();
      for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
      Object.assign(process.env, saved);
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    });

    it('a visitor who is not signed in is sent to sign in; the assets are public; the sign-in page lists the provider', async () => {
      const visitor = new TestVisitor(s.port);
      const home = await visitor.get('/', BROWSER_ACCEPT);
      assert.equal(home.status, 302);
      assert.equal(home.headers.location, '/auth/?next=%2F');
      const settings = await visitor.get('/projects/anything/settings/', JSON_ACCEPT);
      assert.equal(settings.status, 401, 'a JSON client gets 401');
      assert.equal((await visitor.post('/projects/new-step', { Project_name: 'x' })).status, 401, 'a write gets 401');
      for (const asset of ['/style/site.css', '/fav/icon.svg']) {
        const r = await visitor.get(asset);
        assert.equal(r.status, 200, asset);
        assert.doesNotMatch(String(r.headers['cache-control']), /no-store|private/, `${asset} is not a single-user answer`);
      }
      const signInPage = await visitor.get('/auth/');
      assert.equal(signInPage.status, 200);
      assert.match(signInPage.text, /<form id="corp" method="post" action="\/__\/auth\/provider\/corp[^"]*"><button class="brand-corp">Continue with Corp<\/button><\/form>/);
      assert.deepEqual(parseErrors(signInPage.text), []);
      // Signed in (in before), the sign-in page says so.
      assert.match(await page(ann, '/auth/'), /You are signed in as Ann Example\./);
    });

    it('Ann starts projects from the ⏳ form (📮new-step runs as ProjectOwner); a refused name comes back with its message', async () => {
      // Too short: the form page again, with the message (and the texts typed, below).
      const html = await page(ann, '/projects/new');
      const action = /<form id="start" method="post" action="([^"]+)"/.exec(html)![1]!.replace(/&amp;/g, '&');
      const back = await submit(ann, action, { Project_name: 'H', Release_source: 'https://git.example.com/typo.git' });
      assert.match(back, /^\/projects\/new\?_form=/);
      refused = await page(ann, back);
      assert.match(refused, /<p class="error">Project name must be at least 2 characters long \(it has 1\)<\/p>/);
      assert.equal(cards(await page(ann, '/')).length, 0, 'nothing was created');

      harbour = await startProject(ann, 'Harbour lights', 'https://git.example.com/harbour.git');
      const first = await page(ann, `/projects/${harbour}/`);
      assert.equal(byId(first, 'project-name'), 'Harbour lights');
      assert.match(first, /<p class="message is-success">Project Harbour lights is ready<\/p>/);
      assert.match(byId(first, 'membership')!, /You own this project\./);
      const releases = [...first.matchAll(/<li class="release"><a href="\/projects\/[^/]+\/([^/]+)\/keys\/">([^<]*)<\/a> <small>([^<]*)<\/small>/g)];
      assert.deepEqual(releases.map((m) => [m[2], m[3]]), [['main', 'https://git.example.com/harbour.git']]);
      release = releases[0]![1]!;

      scratch = await startProject(ann, 'Scratch & <notes>', '');
      assert.equal(byId(await page(ann, `/projects/${scratch}/`), 'project-name'), 'Scratch & <notes>');
    });

    // A refused submission of a form in groups (⏳StartProject: Basics, Origin) comes back with its
    // messages and the texts typed, in the refused group and in the other one.
    it('the refused new-project form shows again what Ann typed', () => {
      assert.match(refused, /name="Project_name" type="text" value="H"/);
      assert.match(refused, /name="Release_source" type="text" value="https:\/\/git\.example\.com\/typo\.git"/);
    });

    it("Ann's projects are listed on her home page through her profiles (starred when made)", async () => {
      const home = await page(ann, '/');
      assert.match(home, /Scratch &amp; &lt;notes&gt;/, 'names are escaped');
      assert.deepEqual(
        cards(home).map((c) => [c.id, c.name, c.star, c.tags, c.sharedWithMe]),
        [
          [harbour, 'Harbour lights', true, [], false],
          [scratch, 'Scratch & <notes>', true, [], false],
        ],
      );
    });

    it('Ann unstars and tags a project: her own profile changes', async () => {
      assert.equal(await submit(ann, `/projects/${scratch}/star`, { star: 'false' }), `/projects/${scratch}/`);
      assert.equal(await submit(ann, `/projects/${harbour}/tag`, { tag: ' ops ' }), `/projects/${harbour}/`);
      const project = await page(ann, `/projects/${harbour}/`);
      assert.match(project, /<p class="message is-success">Tagged ops<\/p>/);
      assert.match(byId(project, 'membership')!, /ops ★/);
      assert.deepEqual(
        cards(await page(ann, '/')).map((c) => [c.name, c.star, c.tags]),
        [
          ['Harbour lights', true, ['ops']],
          ['Scratch & <notes>', false, []],
        ],
      );
      assert.equal(await submit(ann, `/projects/${scratch}/star`, { star: 'true' }), `/projects/${scratch}/`);
      assert.equal(cards(await page(ann, '/'))[1]!.star, true);
    });

    it("Ann's settings page: the name, not shared, its members, and the owner's forms; renaming", async () => {
      const settings = await page(ann, `/projects/${harbour}/settings/`);
      assert.equal(byId(settings, 'project-name'), 'Harbour lights');
      assert.equal(byId(settings, 'shared'), 'Only you have it');
      assert.deepEqual(texts(settings, 'li', 'member'), ['ProjectOwner']);
      for (const form of ['rename', 'share', 'delete']) assert.match(settings, new RegExp(`<form id="${form}" method="post" action="/projects/${harbour}/settings/${form}">`));
      assert.match(byId(settings, 'delete')!, /Delete the project/);
      assert.equal(await submit(ann, `/projects/${harbour}/settings/rename`, { name: 'Harbour Lights' }), `/projects/${harbour}/settings/`);
      const renamed = await page(ann, `/projects/${harbour}/settings/`);
      assert.match(renamed, /<p class="message is-success">Renamed to Harbour Lights<\/p>/);
      assert.equal(byId(renamed, 'project-name'), 'Harbour Lights');
      assert.equal(cards(await page(ann, '/'))[0]!.name, 'Harbour Lights');
    });

    it('Ann adds keys to a release (contained in the project) and lists them; removes one', async () => {
      const keysPath = `/projects/${harbour}/${release}/keys/`;
      const empty = await page(ann, keysPath);
      assert.equal(byId(empty, 'release'), 'main');
      assert.equal(byId(empty, 'no-keys'), 'No keys yet.');
      assert.match(empty, /<form id="new-key" method="post"/);
      assert.equal(await submit(ann, `${keysPath}new`, { name: 'deploy bot' }), keysPath);
      assert.equal(await submit(ann, `${keysPath}new`, { name: 'preview' }), keysPath);
      assert.equal(await submit(ann, `${keysPath}new`, { name: 'old laptop' }), keysPath);
      const listed = await page(ann, keysPath);
      assert.match(listed, /<p class="message is-success">Key old laptop added<\/p>/);
      assert.deepEqual(texts(listed, 'span', 'name'), ['deploy bot', 'preview', 'old laptop']);
      assert.doesNotMatch(listed, /id="no-keys"/);
      // Only a hint of each secret is shown (the secret itself is protected).
      const hints = [...listed.matchAll(/<code>…([^<]*)<\/code>/g)].map((m) => m[1]!);
      assert.equal(hints.length, 3);
      for (const hint of hints) assert.match(hint, /^[A-Za-z0-9_-]{4}$/);
      const old = /<li class="key" data-key="([^"]+)"><span class="name">old laptop<\/span>/.exec(listed)![1]!;
      assert.equal(await submit(ann, `${keysPath}${old}/delete`), keysPath);
      const remaining = await page(ann, keysPath);
      assert.match(remaining, /<p class="message is-success">Key old laptop removed<\/p>/);
      assert.deepEqual(texts(remaining, 'span', 'name'), ['deploy bot', 'preview']);
      // A short name is refused (422), and nothing is added.
      const bad = await ann.post(`${keysPath}new`, { name: 'x' }, JSON_ACCEPT);
      assert.equal(bad.status, 422, bad.text);
      assert.deepEqual(texts(await page(ann, keysPath), 'span', 'name'), ['deploy bot', 'preview']);
      // A release of another project is not one of this project's keys pages.
      const scratchRelease = /\/projects\/[^/]+\/([^/]+)\/keys\//.exec(await page(ann, `/projects/${scratch}/`))![1]!;
      const crossed = await ann.get(`/projects/${harbour}/${scratchRelease}/keys/`, BROWSER_ACCEPT);
      assert.equal(crossed.status, 404, crossed.text.slice(0, 300));
    });

    it("Bob sees none of Ann's projects, and is refused them: 403, JSON for JSON clients and an error page for browsers", async () => {
      const home = await page(bob, '/');
      assert.deepEqual(cards(home), []);
      assert.equal(byId(home, 'empty'), 'No projects yet.');
      assert.doesNotMatch(home, /Harbour|Scratch/);

      // Finding the project takes a role in it (default only finds profiles).
      const noAccess = /^Permission denied: access on 📦\.Project\.$/;
      const pages = [`/projects/${harbour}/`, `/projects/${harbour}/settings/`, `/projects/${harbour}/${release}/keys/`];
      for (const p of pages) {
        assertForbiddenJson(await bob.get(p, JSON_ACCEPT), `GET ${p} (JSON)`, noAccess);
        assertForbiddenPage(await bob.get(p, BROWSER_ACCEPT), `GET ${p} (browser)`);
      }
      const onlyOwner = /^Only ProjectOwner may do this\.$/;
      const writes: Array<[string, Record<string, string>, RegExp]> = [
        [`/projects/${harbour}/settings/delete`, {}, onlyOwner],
        [`/projects/${harbour}/settings/share`, { code: 'anyone' }, onlyOwner],
        [`/projects/${harbour}/settings/rename`, { name: 'Mine now' }, noAccess],
        [`/projects/${harbour}/${release}/keys/new`, { name: 'sneaky' }, /^Permission denied: access on 📦\.Release\.$/],
      ];
      for (const [p, form, error] of writes) {
        assertForbiddenJson(await bob.post(p, form, JSON_ACCEPT), `POST ${p} (JSON)`, error);
        assertForbiddenPage(await bob.post(p, form, BROWSER_ACCEPT), `POST ${p} (browser)`);
      }
      // His star is on his own profile, which he does not have there.
      assert.equal((await bob.post(`/projects/${harbour}/star`, { star: 'true' }, JSON_ACCEPT)).status, 404);
      // Nothing changed.
      assert.deepEqual(
        cards(await page(ann, '/')).map((c) => c.name),
        ['Harbour Lights', 'Scratch & <notes>'],
      );
      assert.deepEqual(texts(await page(ann, `/projects/${harbour}/${release}/keys/`), 'span', 'name'), ['deploy bot', 'preview']);
      assert.equal(byId(await page(ann, `/projects/${harbour}/settings/`), 'shared'), 'Only you have it');
    });

    it('Ann shares Harbour with Bob (his sharing code, the viewer role; only an owner may share)', async () => {
      const account = await page(bob, '/account/');
      const code = byId(account, 'sharing-code')!;
      assert.ok(code && code.length > 0, 'the account page shows a sharing code');
      assert.notEqual(code, byId(await page(ann, '/account/'), 'sharing-code'));
      // Sharing with oneself is refused.
      const self = await ann.post(`/projects/${harbour}/settings/share`, { code: byId(await page(ann, '/account/'), 'sharing-code')! }, BROWSER_ACCEPT);
      assert.equal(self.status, 302);
      assert.match(await page(ann, String(self.headers.location)), /<p class="message is-error">Enter the sharing code of someone else<\/p>/);
      assert.equal(await submit(ann, `/projects/${harbour}/settings/share`, { code }), `/projects/${harbour}/settings/`);
      const settings = await page(ann, `/projects/${harbour}/settings/`);
      assert.match(settings, /<p class="message is-success">Shared<\/p>/);
      assert.equal(byId(settings, 'shared'), 'Shared with others');
      assert.deepEqual(texts(settings, 'li', 'member'), ['ProjectOwner', 'ProjectViewer']);
      assert.match(byId(settings, 'delete')!, /Leave the project/);
      // Twice is once.
      await submit(ann, `/projects/${harbour}/settings/share`, { code });
      const twice = await page(ann, `/projects/${harbour}/settings/`);
      assert.match(twice, /<p class="message is-info">They have it already<\/p>/);
      assert.deepEqual(texts(twice, 'li', 'member'), ['ProjectOwner', 'ProjectViewer']);
    });

    it('Bob now sees Harbour (only Harbour), reads it — shared() is true for him — and stars it for himself', async () => {
      assert.deepEqual(
        cards(await page(bob, '/')).map((c) => [c.id, c.name, c.star, c.sharedWithMe]),
        [[harbour, 'Harbour Lights', false, true]],
      );
      const project = await page(bob, `/projects/${harbour}/`);
      assert.equal(byId(project, 'project-name'), 'Harbour Lights');
      assert.match(byId(project, 'membership')!, /Shared with you to look at\./);
      assert.doesNotMatch(byId(project, 'membership')!, /ops/, "Ann's tag is hers");
      const settings = await page(bob, `/projects/${harbour}/settings/`);
      assert.equal(byId(settings, 'shared'), 'Shared with others');
      assert.deepEqual(texts(settings, 'li', 'member'), ['ProjectOwner', 'ProjectViewer']);
      assert.equal(byId(settings, 'read-only'), 'Only its owners change this project.');
      assert.doesNotMatch(settings, /<form id="(rename|share|delete)"/, 'no owner forms');
      const keys = await page(bob, `/projects/${harbour}/${release}/keys/`);
      assert.deepEqual(texts(keys, 'span', 'name'), ['deploy bot', 'preview']);
      assert.doesNotMatch(keys, /<form id="new-key"|\/delete"/, 'no owner forms');

      await submit(bob, `/projects/${harbour}/star`, { star: 'true' });
      await submit(bob, `/projects/${harbour}/tag`, { tag: 'watching' });
      assert.deepEqual(
        cards(await page(bob, '/')).map((c) => [c.star, c.tags]),
        [[true, ['watching']]],
      );
      assert.deepEqual(
        cards(await page(ann, '/')).map((c) => [c.name, c.tags]),
        [
          ['Harbour Lights', ['ops']],
          ['Scratch & <notes>', []],
        ],
        "Bob's star and tag are his",
      );
      // Still nothing of Scratch for him.
      assertForbiddenJson(await bob.get(`/projects/${scratch}/`, JSON_ACCEPT), 'GET Scratch');
    });

    it('Bob cannot rename or delete Harbour, nor add or remove its keys, nor share it', async () => {
      const keysPath = `/projects/${harbour}/${release}/keys/`;
      const deploy = /<li class="key" data-key="([^"]+)"><span class="name">deploy bot<\/span>/.exec(await page(ann, keysPath))![1]!;
      assertForbiddenJson(await bob.post(`/projects/${harbour}/settings/rename`, { name: 'Bob was here' }, JSON_ACCEPT), 'rename', /update on 📦\.Project\.name/);
      assertForbiddenPage(await bob.post(`/projects/${harbour}/settings/rename`, { name: 'Bob was here' }, BROWSER_ACCEPT), 'rename');
      assertForbiddenJson(await bob.post(`/projects/${harbour}/settings/delete`, {}, JSON_ACCEPT), 'delete');
      assertForbiddenPage(await bob.post(`/projects/${harbour}/settings/delete`, {}, BROWSER_ACCEPT), 'delete');
      assertForbiddenJson(await bob.post(`/projects/${harbour}/settings/share`, { code: 'someone' }, JSON_ACCEPT), 'share');
      assertForbiddenJson(await bob.post(`${keysPath}new`, { name: 'mine' }, JSON_ACCEPT), 'new key', /create on 📦\.AccessKey/);
      assertForbiddenJson(await bob.post(`${keysPath}${deploy}/delete`, {}, JSON_ACCEPT), 'remove key', /delete on 📦\.AccessKey/);
      assertForbiddenPage(await bob.post(`${keysPath}${deploy}/delete`, {}, BROWSER_ACCEPT), 'remove key');
      // Nothing changed.
      assert.equal(byId(await page(ann, `/projects/${harbour}/settings/`), 'project-name'), 'Harbour Lights');
      assert.deepEqual(texts(await page(bob, keysPath), 'span', 'name'), ['deploy bot', 'preview']);
    });

    it('Ann leaves the shared project: her profile goes, the project stays with Bob', async () => {
      assert.equal(await submit(ann, `/projects/${harbour}/settings/delete`), '/');
      const home = await page(ann, '/');
      assert.match(home, /<p class="message is-success">You left Harbour Lights; the others keep it<\/p>/);
      assert.deepEqual(
        cards(home).map((c) => c.name),
        ['Scratch & <notes>'],
      );
      assertForbiddenJson(await ann.get(`/projects/${harbour}/settings/`, JSON_ACCEPT), 'Ann, after leaving');
      assertForbiddenPage(await ann.get(`/projects/${harbour}/`, BROWSER_ACCEPT), 'Ann, after leaving');
      // Bob keeps it, its keys, and is now alone in it.
      assert.deepEqual(
        cards(await page(bob, '/')).map((c) => c.name),
        ['Harbour Lights'],
      );
      const settings = await page(bob, `/projects/${harbour}/settings/`);
      assert.equal(byId(settings, 'shared'), 'Only you have it');
      assert.deepEqual(texts(settings, 'li', 'member'), ['ProjectViewer']);
      assert.deepEqual(texts(await page(bob, `/projects/${harbour}/${release}/keys/`), 'span', 'name'), ['deploy bot', 'preview']);
    });

    it('Ann deletes Scratch, which nobody else has: the project, its release and keys go', async () => {
      const project = await page(ann, `/projects/${scratch}/`);
      const scratchRelease = /\/projects\/[^/]+\/([^/]+)\/keys\//.exec(project)![1]!;
      const keysPath = `/projects/${scratch}/${scratchRelease}/keys/`;
      await submit(ann, `${keysPath}new`, { name: 'temporary' });
      assert.deepEqual(texts(await page(ann, keysPath), 'span', 'name'), ['temporary']);
      assert.match(byId(await page(ann, `/projects/${scratch}/settings/`), 'delete')!, /Delete the project/);
      assert.equal(await submit(ann, `/projects/${scratch}/settings/delete`), '/');
      const home = await page(ann, '/');
      assert.match(home, /<p class="message is-success">Deleted Scratch &amp; &lt;notes&gt;<\/p>/);
      assert.deepEqual(cards(home), []);
      for (const p of [`/projects/${scratch}/`, `/projects/${scratch}/settings/`, keysPath]) {
        assert.equal((await ann.get(p, BROWSER_ACCEPT)).status, 404, p);
      }
    });

    it('every page shown was a single-user page that parses', () => {
      assert.ok(shown.length > 30, `pages checked: ${shown.length}`);
      for (const { who, path, res } of shown) {
        const what = `${who} ${path}`;
        assert.equal(res.status, 200, what);
        assert.match(String(res.headers['content-type']), /^text\/html/, what);
        assert.match(String(res.headers['cache-control']), /no-store|private/, what);
        assert.match(res.text, /^<!doctype html>/i, what);
        assert.deepEqual(parseErrors(res.text), [], what);
        assert.doesNotMatch(res.text, /⚠️/, what);
      }
    });
  });
}

/**
 * Serves a copy of the fixture changed by `change` (SQLite), signs Ann in, and runs `body`; the
 * copy, its data and the provider go afterwards.
 */
async function withChangedCopy(change: (dir: string) => void, body: (ann: TestVisitor) => Promise<void>) {
  const dir = mkdtempSync(join(tmpdir(), 'laneway-console-copy-'));
  cpSync(APP, dir, { recursive: true });
  change(dir);
  const op = await startOidcProvider();
  const saved = { ...process.env };
  process.env.LANEWAY_AUTH_CORP_CLIENT_ID = op.clientId;
  process.env.LANEWAY_AUTH_CORP_SECRET = op.clientSecret;
  process.env.LANEWAY_AUTH_CORP_ISSUER = op.issuer;
  let s: Served | undefined;
  try {
    s = await serve(dir);
    await op.setRedirectUris([`http://localhost:${s.port}/__/auth/handler`]);
    const ann = new TestVisitor(s.port);
    const signInPage = await ann.get('/auth/');
    const action = /<form id="corp" method="post" action="([^"]+)"/.exec(signInPage.text)![1]!.replace(/&amp;/g, '&');
    const back = await op.login(String((await ann.post(action)).headers.location), { account: 'ann' });
    assert.equal((await ann.get(back.pathname + back.search)).status, 303);
    await body(ann);
  } finally {
    await s?.close();
    await op.stop();
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The new-project form's action (with its form state) on the page Ann is shown. */
async function newProjectAction(ann: TestVisitor): Promise<string> {
  const form = await ann.get('/projects/new');
  assert.equal(form.status, 200);
  return /<form id="start" method="post" action="([^"]+)"/.exec(form.text)![1]!.replace(/&amp;/g, '&');
}

describe('changed copies of the console app (sqlite)', () => {
  it('without the run-as configuration of 📮new-step, starting a project is refused (403): nobody holds a role in a project yet', async () => {
    await withChangedCopy(
      (dir) => rmSync(join(dir, 'projects', '📮new-step.yaml')),
      async (ann) => {
        const refused = await ann.post(await newProjectAction(ann), { Project_name: 'Harbour lights', Release_source: '' }, JSON_ACCEPT);
        assertForbiddenJson(refused, 'new-step without 👤: [ProjectOwner]', /^Permission denied: create on 📦\.Project\.$/);
        assert.deepEqual(cards((await ann.get('/')).text), [], 'nothing was made');
      },
    );
  });

  // Submitting both groups of one form in a request (StartProject.Basics.submit(project), then
  // StartProject.Origin.submit(release), as a form in groups is meant to be used): one claim of
  // the form state serves both. (The fixture's 📮new-step.js submits one group and copies the
  // other's value; this runs a copy that submits both.)
  it('📮new-step may submit both groups of its form', async () => {
    await withChangedCopy(
      (dir) => {
        const file = join(dir, 'projects', '📮new-step.js');
        const text = readFileSync(file, 'utf8');
        const changed = text.replace("new Release(project).label('main').source(origin.source);", "new Release(project).label('main');\n  origin.submit(first);");
        assert.notEqual(changed, text);
        writeFileSync(file, changed);
      },
      async (ann) => {
        const made = await ann.post(await newProjectAction(ann), { Project_name: 'Harbour lights', Release_source: 'https://git.example.com/harbour.git' }, BROWSER_ACCEPT);
        assert.equal(made.status, 302, made.text.slice(0, 300));
        const project = await ann.get(String(made.headers.location));
        assert.match(project.text, /<small>https:\/\/git\.example\.com\/harbour\.git<\/small>/);
      },
    );
  });
});

test('laneway check finds nothing wrong with the console app', () => {
  // In process, from the sources…
  const problems = checkApp(APP).map(formatDiagnostic);
  assert.deepEqual(problems, []);
  // …and as users run it (bin/laneway, from the compiled dist/).
  if (!existsSync(fileURLToPath(new URL('../../dist/cli/index.js', import.meta.url)))) return;
  const env = { ...process.env };
  for (const k of Object.keys(env)) if (k.startsWith('LANEWAY_') || k === 'DATABASE_URL' || k === 'PORT') delete env[k];
  const r = spawnSync(process.execPath, [BIN, 'check', APP], { encoding: 'utf8', env });
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.equal(r.stdout.trim(), '0 errors, 0 warnings');
});
