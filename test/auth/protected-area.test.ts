/**
 * What an `auth: required` area gates (docs/users.md "What is gated", docs/security.md "What a
 * protected area gates"), black-box over HTTP against a real server on 127.0.0.1 and both engines:
 * every kind of answer in the area — static files of any type, compiled stylesheets, fingerprinted
 * and pinned assets, plain pages, views answered from the page cache, event streams, the index
 * redirect — sends a visitor who is not signed in to the sign-in page (401 for JSON), answers no
 * 304 to a visitor who is not signed in, and is served to a signed-in visitor with
 * `Cache-Control: private`. Outside the area, the same kinds answer as before.
 *
 * Nested sites (docs/users.md "Nested sites"): a site mounted in a required area is required too,
 * with or without a 👤.yaml of its own, and may only make the mode stricter. Visitors sign in with
 * the development sign-in (no provider needed); the OpenID Connect sign-in of a nested site is in
 * test/auth/nested-signin.test.ts.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { closeAppData, loadApp, openAppData, type App, type DataOptions } from '../../src/app/index.js';
import { parseDevUsers } from '../../src/auth/index.js';
import { formatDiagnostic } from '../../src/diag/index.js';
import { splitPath } from '../../src/router/index.js';
import { createServer } from '../../src/http/index.js';
import { writeApp, type AppFiles } from '../helpers.js';
import { ENGINES } from '../support/engines.js';
import { TestVisitor } from '../support/visitor.js';

/** A 1×1 PNG. */
const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201a2a4ea1d0000000049454e44ae426082', 'hex');
const CSS = 'body { margin: 0 }\n';
const fingerprint = (bytes: string | Buffer) => createHash('sha256').update(bytes).digest('hex').slice(0, 8);

/** The files every area holds, under `dir`: one of each kind of answer. */
function area(dir: string, label: string): AppFiles {
  return {
    [`${dir}/report.txt`]: `${label} figures\n`,
    [`${dir}/data.csv`]: 'a,b\n1,2\n',
    [`${dir}/logo.svg`]: `<svg xmlns="http://www.w3.org/2000/svg"><title>${label}</title></svg>\n`,
    [`${dir}/photo.png`]: PNG,
    [`${dir}/facts.json`]: `{"area": "${label}"}\n`,
    [`${dir}/theme.scss`]: '$c: red;\nbody { color: $c; }\n',
    [`${dir}/site.css`]: CSS,
    [`${dir}/📌card.png`]: PNG,
    [`${dir}/plain.html`]: `<!doctype html><html><head><title>Plain</title></head><body><p>${label} plain page</p></body></html>\n`,
    // A content page (fixed at load: answered from the page cache), naming its stylesheet (fingerprinted).
    [`${dir}/index.html`]: `<!--TEMPLATE mustache-->\n<!doctype html><html><head><title>Home</title><link rel="stylesheet" href="${dir}/site.css"></head><body><p>${label} home</p></body></html>\n`,
    [`${dir}/docs/index.html`]: `<!--TEMPLATE mustache-->\n<!doctype html><html><head><title>Docs</title></head><body><p>${label} docs</p></body></html>\n`,
    [`${dir}/⏱feed.js`]: `(lastEventId) => [{area: '${label}', $event: {last: true}}]\n`,
    [`${dir}/api/GET.js`]: `({area: '${label}'});\n`,
  };
}

const APP: AppFiles = {
  '👤.yaml': 'auth: none\n',
  'auth/👤.yaml': 'auth: optional\n',
  'private/👤.yaml': 'auth: required\n',
  ...area('/private', 'private'),
  ...area('/public', 'public'),
};

/** The static answers of an area: path, Content-Type, what the body holds. */
function files(dir: string, label: string): Array<[string, RegExp, string | Buffer]> {
  return [
    [`${dir}/report.txt`, /^text\/plain/, `${label} figures\n`],
    [`${dir}/data.csv`, /^text\/csv/, 'a,b\n1,2\n'],
    [`${dir}/logo.svg`, /^image\/svg\+xml/, `<title>${label}</title>`],
    [`${dir}/photo.png`, /^image\/png$/, PNG],
    [`${dir}/facts.json`, /^application\/json/, `"area": "${label}"`],
    [`${dir}/theme.scss`, /^text\/css/, 'color:red'],
    [`${dir}/site.css`, /^text\/css/, CSS],
    [`${dir}/plain`, /^text\/html/, `${label} plain page`],
    [`${dir}/site.${fingerprint(CSS)}.css`, /^text\/css/, CSS],
    [`${dir}/card.png`, /^image\/png$/, PNG],
  ];
}

interface Running {
  port: number;
  app: App;
  close(): Promise<void>;
}

/** Serves the app in `dir` with the development sign-in on (test user Ada Lovelace) in it and its nested sites. */
async function start(dir: string, data: DataOptions): Promise<Running> {
  const app = loadApp(dir);
  await openAppData(app, data);
  const parsed = parseDevUsers('Ada Lovelace');
  if ('error' in parsed) throw new Error(parsed.error);
  const enable = (a: App): void => {
    a.data?.auth?.enableDevSignIn(parsed.users);
    for (const m of a.mounts) enable(m.app);
  };
  enable(app);
  const server = createServer(app, { log: 'off' });
  const { port } = await server.listen(0, '127.0.0.1');
  return {
    port,
    app,
    async close() {
      await server.close();
      await closeAppData(app);
    },
  };
}

/** A visitor signed in as Ada at `at` (`` for the site, `/private/users` for a nested site with users), coming back to `next`. */
async function signedIn(port: number, at = '', next = '/'): Promise<TestVisitor> {
  const v = new TestVisitor(port);
  const r = await v.post(`${at}/__/auth/dev/ada-lovelace?next=${encodeURIComponent(next)}`);
  assert.equal(r.status, 303, r.text);
  assert.equal(r.headers.location, next);
  return v;
}

const contains = (body: Buffer, part: string | Buffer) => body.includes(typeof part === 'string' ? Buffer.from(part) : part);

/** Each of `paths`, asked for by `v`, answers 302 to the sign-in page `page` with the path as `next`. */
async function sendsToSignIn(v: TestVisitor, page: string, paths: readonly string[]): Promise<void> {
  for (const path of paths) {
    const r = await v.get(path);
    assert.equal(r.status, 302, `GET ${path}`);
    assert.equal(r.headers.location, `${page}?next=${encodeURIComponent(path)}`, path);
  }
}

/**
 * Asks `v` for every static answer of an area and checks each is the file, with the Cache-Control
 * of its kind: `plain` for a file at its own path, `fingerprinted`, `pinned` (📌).
 */
async function servesFiles(v: TestVisitor, dir: string, label: string, plain: string, fingerprinted: string, pinned: string): Promise<void> {
  for (const [path, type, part] of files(dir, label)) {
    const r = await v.get(path);
    assert.equal(r.status, 200, `GET ${path}`);
    assert.match(String(r.headers['content-type']), type, path);
    assert.ok(contains(r.body, part), `${path}: the file`);
    const expected = path.endsWith(`.${fingerprint(CSS)}.css`) ? fingerprinted : path.endsWith('/card.png') ? pinned : plain;
    assert.equal(r.headers['cache-control'], expected, path);
  }
}

for (const engine of ENGINES) {
  describe(`an auth: required area gates every kind of answer (${engine.name})`, () => {
    let s: Running;
    let root: string;

    before(async () => {
      root = writeApp(APP);
      s = await start(root, await engine.data());
    });
    after(async () => {
      await s?.close();
      rmSync(root, { recursive: true, force: true });
    });

    it('a visitor who is not signed in is sent to sign in for every file of the area, and a JSON client gets 401', async () => {
      const v = new TestVisitor(s.port);
      for (const [path, , part] of files('/private', 'private')) {
        const r = await v.get(path);
        assert.equal(r.status, 302, `GET ${path}`);
        assert.equal(r.headers.location, `/auth/?next=${encodeURIComponent(path)}`, path);
        assert.equal(r.headers['cache-control'], 'no-store', path);
        assert.ok(!contains(r.body, part), `${path}: nothing of the file`);
        const head = await v.request('HEAD', path);
        assert.equal(head.status, 302, `HEAD ${path}`);
        const json = await v.get(path, { Accept: 'application/json' });
        assert.equal(json.status, 401, `GET ${path} as JSON`);
        assert.ok(!contains(json.body, part), `${path} as JSON: nothing of the file`);
      }
      // The views, the index redirect, the event stream and the script are gated the same way.
      await sendsToSignIn(v, '/auth/', ['/private/', '/private/docs/', '/private/docs', '/private/feed', '/private/api']);
      const stream = await v.get('/private/feed', { Accept: 'text/event-stream' });
      assert.equal(stream.status, 302);
      assert.notEqual(stream.headers['content-type'], 'text/event-stream');
      assert.equal((await v.get('/private/api', { Accept: 'application/json' })).status, 401);
      // A query is kept in next.
      assert.equal((await v.get('/private/report.txt?v=2')).headers.location, `/auth/?next=${encodeURIComponent('/private/report.txt?v=2')}`);
    });

    it('a signed-in visitor gets every file, with Cache-Control: private', async () => {
      const v = await signedIn(s.port);
      await servesFiles(v, '/private', 'private', 'private, no-cache', 'private, max-age=31536000, immutable', 'private, max-age=86400');
      const home = await v.get('/private/');
      assert.equal(home.status, 200);
      assert.match(home.text, /private home/);
      assert.match(home.text, new RegExp(`href="/private/site\\.${fingerprint(CSS)}\\.css"`), 'the stylesheet is fingerprinted');
      assert.equal(home.headers['cache-control'], 'no-cache, no-store, max-age=0, must-revalidate');
      const docs = await v.get('/private/docs');
      assert.equal(docs.status, 308);
      assert.equal(docs.headers.location, '/private/docs/');
      const stream = await v.get('/private/feed', { Accept: 'text/event-stream' });
      assert.equal(stream.status, 200);
      assert.equal(stream.headers['content-type'], 'text/event-stream');
      assert.match(stream.text, /"area":"private"/);
      const api = await v.get('/private/api', { Accept: 'application/json' });
      assert.deepEqual(JSON.parse(api.text), { area: 'private' });
      assert.equal(api.headers['cache-control'], 'private, no-cache');
    });

    it('validators answer 304 to a signed-in visitor only; a visitor who is not signed in gets no 304 and no cached page', async () => {
      const v = await signedIn(s.port);
      const anonymous = new TestVisitor(s.port);
      for (const path of ['/private/report.txt', '/private/photo.png', `/private/site.${fingerprint(CSS)}.css`, '/private/plain', '/private/']) {
        const first = await v.get(path);
        assert.equal(first.status, 200, path);
        const etag = String(first.headers.etag);
        assert.ok(etag, `${path} has an ETag`);
        assert.equal((await v.get(path, { 'If-None-Match': etag })).status, 304, `${path}: 304 for the signed-in visitor`);
        const lastModified = first.headers['last-modified'];
        const conditional: Record<string, string> = { 'If-None-Match': etag, ...(lastModified ? { 'If-Modified-Since': lastModified } : {}) };
        const r = await anonymous.get(path, conditional);
        assert.equal(r.status, 302, `${path}: the validator of the file does not let a visitor who is not signed in through`);
        assert.equal(r.headers.etag, undefined, path);
        const gz = await anonymous.get(path, { 'Accept-Encoding': 'gzip, br' });
        assert.equal(gz.status, 302, `${path}: nor does a compressed variant`);
      }
      // The content page, kept in the page cache since the signed-in visitor's request, is not answered from it.
      const cached = await anonymous.get('/private/');
      assert.equal(cached.status, 302);
      assert.doesNotMatch(cached.text, /private home/);
    });

    it('outside the area the same kinds of answer are public, as before', async () => {
      const v = new TestVisitor(s.port);
      await servesFiles(v, '/public', 'public', 'no-cache', 'public, max-age=31536000, immutable', 'public, max-age=86400');
      assert.equal((await v.get('/public/')).status, 200);
      assert.equal((await v.get('/public/docs')).status, 308);
      const api = await v.get('/public/api', { Accept: 'application/json' });
      assert.deepEqual(JSON.parse(api.text), { area: 'public' });
      assert.equal(api.headers['cache-control'], 'no-cache');
    });
  });
}

describe('the gate is decided at load: a public file or script is not wrapped', () => {
  it('public endpoints are the compiled endpoints themselves; protected ones are gated', () => {
    const root = writeApp(APP);
    try {
      const app = loadApp(root);
      const handler = (path: string) => {
        const split = splitPath(path);
        assert.ok(split.ok);
        const m = app.router.match('GET', split);
        assert.equal(m.kind, 'found', path);
        return m.kind === 'found' ? m.value : undefined;
      };
      // A public static file answers its ready reply synchronously and needs no store to be open.
      const publicFile = handler('/public/report.txt')!;
      const reply = publicFile.handle({ id: '1', method: 'GET', path: '/public/report.txt', query: '', headers: {}, params: [], acceptsJson: false, readBody: async () => Buffer.alloc(0) });
      assert.ok(!(reply instanceof Promise) && reply.type === 'asset');
      // The protected file asks the store (not open here): 503, never the file.
      const privateFile = handler('/private/report.txt')!;
      const refused = privateFile.handle({ id: '2', method: 'GET', path: '/private/report.txt', query: '', headers: {}, params: [], acceptsJson: false, readBody: async () => Buffer.alloc(0) });
      assert.ok(!(refused instanceof Promise) && refused.type === 'error' && refused.status === 503);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

// ---- nested sites ----

const PAGE = (label: string) => `<!--TEMPLATE mustache-->\n<!doctype html><html><head><title>${label}</title></head><body><p>${label} page</p><a href="/other">other</a></body></html>\n`;
const SIGNIN = "<!--TEMPLATE mustache-->\n<!doctype html><html><head><title>Sign in</title>{{% import {Me} from '👤' }}</head><body>{{^Me}}<p>sign in here</p>{{/Me}}{{#Me}}<p>signed in as {{Me.name}}</p>{{/Me}}</body></html>\n";

/** A site holding one nested site of each kind, in its required area and in its public area. */
function nestedSites(base: string): string {
  // Without users: a page, a file, a stylesheet, a script, a directory index.
  const plain = { 'page.html': PAGE('plain'), 'notes.txt': 'plain notes\n', 'style.scss': 'a { color: blue; }\n', 'api/GET.js': "({site: 'plain'});\n", 'api/📮save.js': '({saved: true});\n', 'docs/index.html': PAGE('plain docs') };
  writeApp(plain, join(base, 'plain'));
  // Users of its own whose 👤.yaml sets no auth: (it inherits), and its sign-in area.
  writeApp({ ...plain, '👤.yaml': 'default:\n  👤.User.name: read\n', 'auth/👤.yaml': 'auth: optional\n', 'auth/index.html': SIGNIN }, join(base, 'users'));
  // Users of its own, saying auth: none: looser than the parent there, so required.
  writeApp({ ...plain, '👤.yaml': 'auth: none\n', 'auth/👤.yaml': 'auth: optional\n', 'auth/index.html': SIGNIN, 'open/👤.yaml': 'auth: none\n', 'open/page.html': PAGE('loose open') }, join(base, 'loose'));
  return writeApp(
    {
      '👤.yaml': 'auth: none\n',
      'auth/👤.yaml': 'auth: optional\n',
      'auth/index.html': SIGNIN,
      'private/👤.yaml': 'auth: required\n',
      'private/🔌plain.yaml': 'source: ../plain\n',
      'private/🔌users.yaml': 'source: ../users\nnamespace: users-site\n',
      'private/🔌loose.yaml': 'source: ../loose\nnamespace: loose-site\n',
      // A nested site in a nested site: the middle one has no users, so the top site's sign-in gates both.
      'private/🔌middle.yaml': 'source: ../middle\n',
      '🔌open.yaml': 'source: ../plain\n',
    },
    join(base, 'site'),
  );
}

for (const engine of ENGINES) {
  describe(`a nested site inherits the parent's auth: required and may only make it stricter (${engine.name})`, () => {
    let s: Running;
    let base: string;

    before(async () => {
      base = mkdtempSync(join(tmpdir(), 'laneway-nested-gate-'));
      writeApp({ '🔌inner.yaml': 'source: ../plain\n', 'page.html': PAGE('middle') }, join(base, 'middle'));
      s = await start(nestedSites(base), await engine.data());
    });
    after(async () => {
      await s?.close();
      rmSync(base, { recursive: true, force: true });
    });

    it("a nested site without users: every answer needs the parent's sign-in, and goes back to the nested page", async () => {
      const v = new TestVisitor(s.port);
      // The parent's sign-in page, with the nested page as next.
      await sendsToSignIn(v, '/auth/', ['/private/plain/page', '/private/plain/notes.txt', '/private/plain/style.scss', '/private/plain/api', '/private/plain/docs', '/private/plain/docs/', '/private/middle/page', '/private/middle/inner/page', '/private/middle/inner/notes.txt']);
      assert.equal((await v.get('/private/plain/api', { Accept: 'application/json' })).status, 401);
      assert.equal((await v.post('/private/plain/api/save')).status, 401);

      const ada = await signedIn(s.port, '', '/private/plain/page');
      const page = await ada.get('/private/plain/page');
      assert.equal(page.status, 200);
      assert.match(page.text, /plain page/);
      assert.match(page.text, /<a href="\/private\/plain\/other">/, "the nested site's links are still written for its mount");
      assert.equal(page.headers['cache-control'], 'no-cache, no-store, max-age=0, must-revalidate');
      const notes = await ada.get('/private/plain/notes.txt');
      assert.equal(notes.status, 200);
      assert.equal(notes.text, 'plain notes\n');
      assert.equal(notes.headers['cache-control'], 'private, no-cache');
      assert.match((await ada.get('/private/plain/style.scss')).text, /color:\s*blue/);
      assert.deepEqual(JSON.parse((await ada.get('/private/plain/api', { Accept: 'application/json' })).text), { site: 'plain' });
      assert.match((await ada.get('/private/middle/inner/page')).text, /plain page/);
      const docs = await ada.get('/private/plain/docs');
      assert.equal(docs.status, 308);
      assert.equal(docs.headers.location, '/private/plain/docs/', "the nested site's own index");
    });

    it('the same nested site mounted in a public area stays public', async () => {
      const v = new TestVisitor(s.port);
      const page = await v.get('/open/page');
      assert.equal(page.status, 200);
      assert.match(page.text, /plain page/);
      const notes = await v.get('/open/notes.txt');
      assert.equal(notes.status, 200);
      assert.equal(notes.headers['cache-control'], 'no-cache');
      const docs = await v.get('/open/docs');
      assert.equal(docs.status, 308);
      assert.equal(docs.headers.location, '/open/docs/');
    });

    it('a nested site whose 👤.yaml sets no auth: is required, through its own sign-in', async () => {
      const v = new TestVisitor(s.port);
      await sendsToSignIn(v, '/private/users/auth/', ['/private/users/page', '/private/users/notes.txt', '/private/users/docs']);
      const signin = await v.get('/private/users/auth/');
      assert.equal(signin.status, 200);
      assert.match(signin.text, /sign in here/);
      const ada = await signedIn(s.port, '/private/users', '/private/users/page');
      assert.match((await ada.get('/private/users/page')).text, /plain page/);
      assert.equal((await ada.get('/private/users/notes.txt')).headers['cache-control'], 'private, no-cache');
    });

    it('a nested site that says auth: none is required all the same, except its sign-in area, and a warning says so', async () => {
      const v = new TestVisitor(s.port);
      await sendsToSignIn(v, '/private/loose/auth/', ['/private/loose/page', '/private/loose/notes.txt', '/private/loose/open/page']);
      assert.match((await v.get('/private/loose/auth/')).text, /sign in here/);
      const ada = await signedIn(s.port, '/private/loose', '/private/loose/open/page');
      assert.match((await ada.get('/private/loose/open/page')).text, /loose open page/);
      const warnings = s.app.diagnostics.filter((d) => d.code === 'LW_AUTH_NESTED_MODE').map(formatDiagnostic);
      assert.equal(warnings.length, 2, warnings.join('\n'));
      for (const w of warnings) assert.match(w, /\/loose\/(open\/)?👤\.yaml:1:7: warning: \(nested site \/private\/loose\/\) auth: none is looser than the site this one is mounted in allows here \(required\)/);
    });
  });
}
