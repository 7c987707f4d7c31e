/**
 * docs/tutorial.md, step by step: the files of each step (```lang file=/path blocks, a later block
 * of the same path replacing the earlier one) are written into one app directory, in order; after
 * each step the app must check without a single problem, and a server of it must do what the step
 * says, driven over HTTP by a visitor with a cookie jar. Steps 1–5 are served in this process (as
 * `laneway serve` does: loadApp, openAppData, createServer); step 6 runs the very command the
 * tutorial gives, `laneway serve DIR --dev` with LANEWAY_AUTH_DEV_USERS, from the sources in a
 * child process. The data directory (.laneway/) is kept from step to step, as on the reader's
 * machine. The shell lines of the page use only commands and options that exist.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkApp } from '../../src/app/index.js';
import { formatDiagnostic } from '../../src/diag/index.js';
import { main } from '../../src/cli/index.js';
import { serve, writeApp, type Served } from '../helpers.js';
import { TestVisitor } from '../support/visitor.js';
import { cleanEnv, startServe } from './cli.js';
import { fileOf, readDoc, sections, type Section } from './markdown.js';

const doc = sections(readDoc('tutorial.md'));
const steps = doc.filter((s) => s.level === 2 && /^\d+\. /.test(s.title));

function filesOf(section: Section): Record<string, string> {
  const files: Record<string, string> = {};
  for (const b of section.blocks) {
    const f = fileOf(b);
    if (f !== undefined) files[f] = b.text;
  }
  return files;
}

const unescape = (s: string) => s.replace(/&amp;/g, '&').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>');

/** The value of `name="…"` attribute `attr` of the first element holding `name="<name>"`. */
function attrOf(html: string, name: string, attr: string): string | undefined {
  const tag = new RegExp(`<[a-z]+[^>]*name="${name}"[^>]*>`).exec(html)?.[0];
  const m = tag && new RegExp(`\\s${attr}="([^"]*)"`).exec(tag);
  return m ? unescape(m[1]!) : undefined;
}

/** The `action` of the first form posting to `prefix…`, unescaped. */
function actionOf(html: string, prefix: string): string {
  const m = new RegExp(`<form method="post" action="(${prefix.replace(/[/?]/g, '\\$&')}[^"]*)"`).exec(html);
  assert.ok(m, `no form posting to ${prefix} in:\n${html}`);
  return unescape(m[1]!);
}

/** Follows one redirect: the Location must be a path of the app. */
function location(res: { status: number; headers: Record<string, unknown> }): string {
  assert.equal(res.status, 302);
  const loc = String(res.headers.location);
  assert.ok(loc.startsWith('/'), loc);
  return loc;
}

describe('docs/tutorial.md', () => {
  const dir = mkdtempSync(join(tmpdir(), 'laneway-tutorial-'));
  const app = join(dir, 'guestbook');
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('has six numbered steps, each with files', () => {
    assert.deepEqual(
      steps.map((s) => s.title),
      ['1. A first page', '2. A layout and a second page', '3. A model', '4. A form, its checks and messages', '5. A JSON endpoint', '6. Signing in'],
    );
    for (const s of steps) assert.ok(Object.keys(filesOf(s)).length > 0, `step "${s.title}" shows no file`);
  });

  it('uses only commands and options that exist', async () => {
    const lines = doc.flatMap((s) => s.blocks.filter((b) => b.lang === 'sh').flatMap((b) => b.text.split('\n')));
    // The shell blocks, and the commands named in the text (`laneway dev guestbook`).
    const spans = [...readDoc('tutorial.md').replace(/```[\s\S]*?```/g, '').matchAll(/`(laneway [^`]+)`/g)].map((m) => m[1]!);
    const commands = [...lines, ...spans].map((l) => /(?:^|\s)laneway (\w+)(.*)$/.exec(l)).filter((m) => m !== null);
    assert.ok(commands.length >= 3);
    for (const m of commands) {
      let help = '';
      const code = await main([m[1]!, '--help'], { out: (l) => (help += l + '\n'), err: (l) => (help += l + '\n') });
      assert.equal(code, 0, `laneway ${m[1]} --help:\n${help}`);
      for (const flag of m[2]!.match(/--[a-z-]+/g) ?? []) assert.ok(help.includes(flag), `laneway ${m[1]} has no option ${flag}:\n${help}`);
    }
    // The development sign-in's variable is the one the server reads.
    assert.ok(lines.some((l) => l.startsWith('LANEWAY_AUTH_DEV_USERS="Ada Lovelace <ada@example.test>, Bob" laneway serve guestbook --dev')));
  });

  /** Writes the files of step `n` (1-based), checks the app (no problem at all) and serves it. */
  async function step(n: number): Promise<Served> {
    writeApp(filesOf(steps[n - 1]!), app);
    const problems = checkApp(app).map(formatDiagnostic);
    assert.deepEqual(problems, [], `laneway check after step ${n}`);
    return serve(app);
  }

  it('1. a first page: GET / answers the page, with a policy', async () => {
    const s = await step(1);
    try {
      const home = await s.get('/');
      assert.equal(home.status, 200);
      assert.match(home.text, /<h1>Guestbook<\/h1>/);
      assert.match(String(home.headers['content-security-policy']), /script-src 'none'/);
      assert.equal((await s.get(encodeURI('/🎛.yaml'))).status, 404);
    } finally {
      await s.close();
    }
  });

  it('2. a layout and a second page: both pages in the layout, the layout private, the stylesheet fingerprinted', async () => {
    const s = await step(2);
    try {
      const home = await s.get('/');
      assert.equal(home.status, 200);
      assert.match(home.text, /<title>Guestbook<\/title>/);
      assert.match(home.text, /<h1>Guestbook<\/h1>/);
      const about = await s.get('/about');
      assert.equal(about.status, 200);
      assert.match(about.text, /<title>About · Guestbook<\/title>/);
      assert.match(about.text, /<nav><a href="\/">Guestbook<\/a> · <a href="\/about">About<\/a><\/nav>/);
      const css = /<link rel="stylesheet" href="(\/css\/site\.[0-9a-f]{8}\.css)">/.exec(about.text);
      assert.ok(css, 'the stylesheet address has the hash of its content');
      const sheet = await s.get(css[1]!);
      assert.equal(sheet.status, 200);
      assert.match(String(sheet.headers['cache-control']), /immutable/);
      assert.equal((await s.get('/_layout')).status, 404);
      assert.equal((await s.get('/_layout.html')).status, 404);
    } finally {
      await s.close();
    }
  });

  it('3. a model: the list is empty, and the database is made in .laneway/', async () => {
    const s = await step(3);
    try {
      const home = await s.get('/');
      assert.equal(home.status, 200);
      assert.match(home.text, /<h2>0 entries<\/h2>/);
      assert.match(home.text, /No entries yet: be the first\./);
      assert.ok(checkApp(app).length === 0);
      const { existsSync } = await import('node:fs');
      assert.ok(existsSync(join(app, '.laneway', 'laneway.db')));
    } finally {
      await s.close();
    }
  });

  it('4. a form: a refused entry comes back with its messages and values, a good one is stored once with a message shown once', async () => {
    const s = await step(4);
    try {
      const v = new TestVisitor(s.port);
      const home = await v.get('/');
      assert.equal(home.status, 200);
      assert.match(String(home.headers['cache-control']), /no-store/, 'a page with a form is a single-user page');
      const action = actionOf(home.text, '/entries?_form=');
      assert.equal(attrOf(home.text, 'Entry_name', 'maxlength'), '40');
      assert.equal(attrOf(home.text, 'Entry_message', 'placeholder'), 'Say something kind');
      // What the tutorial says the browser checks first: required, and minlength from the model.
      assert.equal(attrOf(home.text, 'Entry_message', 'minlength'), '2');

      // A one-letter message, sent past the browser's check (as the tutorial tells): refused by the server.
      const short = await v.post(action, { Entry_name: 'Grace', Entry_message: 'x' });
      const shortBack = await v.get(location(short));
      assert.match(shortBack.text, /<p class="error">Message must be at least 2 characters long \(it has 1\)<\/p>/);

      // An empty message: nothing stored, the form comes back with the name and the messages.
      const refused = await v.post(actionOf(shortBack.text, '/entries?_form='), { Entry_name: 'Grace', Entry_message: '' });
      const back = location(refused);
      assert.match(back, /^\/\?_form=/);
      const shown = await v.get(back);
      assert.equal(shown.status, 200);
      assert.match(shown.text, /<p class="flash error">Your entry was not saved: see below\.<\/p>/);
      assert.match(shown.text, /<p class="error">Message is required<\/p>/);
      assert.equal(attrOf(shown.text, 'Entry_name', 'value'), 'Grace');
      assert.match(shown.text, /<h2>0 entries<\/h2>/);
      // A message that is too long is refused with the model's rule.
      const tooLong = await v.post(actionOf(shown.text, '/entries?_form='), { Entry_name: 'Grace', Entry_message: 'x'.repeat(281) });
      const again = await v.get(location(tooLong));
      assert.match(again.text, /<p class="error">Message must be at most 280 characters long \(it has 281\)<\/p>/);

      // A good entry: stored, and the next page says thank you, once.
      const ok = await v.post(actionOf(again.text, '/entries?_form='), { Entry_name: 'Grace', Entry_message: 'Lovely place.' });
      assert.equal(location(ok), '/');
      const thanked = await v.get('/');
      assert.match(thanked.text, /<p class="flash success">Thank you for signing, Grace!<\/p>/);
      assert.match(thanked.text, /<h2>1 entries<\/h2>/);
      assert.match(thanked.text, /<blockquote><p>Lovely place\.<\/p><footer>Grace<\/footer><\/blockquote>/);
      assert.doesNotMatch(thanked.text, /No entries yet/);
      const reloaded = await v.get('/');
      assert.doesNotMatch(reloaded.text, /Thank you/);

      // The same POST again (a double click, the back button) stores nothing: its form state was used.
      const replay = await v.post(actionOf(again.text, '/entries?_form='), { Entry_name: 'Grace', Entry_message: 'Lovely place.' });
      assert.equal(replay.status, 400);
      // A POST without a form the visitor was shown stores nothing either.
      assert.equal((await v.post('/entries', { Entry_name: 'Mallory', Entry_message: 'Made up.' })).status, 400);
      assert.match((await v.get('/')).text, /<h2>1 entries<\/h2>/);
    } finally {
      await s.close();
    }
  });

  it('5. a JSON endpoint: the entries as JSON, newest first, with a limit from the query string', async () => {
    const s = await step(5);
    try {
      const v = new TestVisitor(s.port);
      const home = await v.get('/');
      await v.post(actionOf(home.text, '/entries?_form='), { Entry_name: 'Alan', Entry_message: 'Second!' });
      const res = await v.get('/api/entries?limit=5');
      assert.equal(res.status, 200);
      assert.match(String(res.headers['content-type']), /^application\/json/);
      const body = JSON.parse(res.text) as { count: number; entries: Array<{ name: string; message: string; created: string }> };
      assert.equal(body.count, 2);
      assert.deepEqual(
        body.entries.map((e) => [e.name, e.message]),
        [
          ['Alan', 'Second!'],
          ['Grace', 'Lovely place.'],
        ],
      );
      for (const e of body.entries) assert.match(e.created, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      assert.deepEqual(Object.keys(body.entries[0]!), ['name', 'message', 'created']);
      // The shape the page shows for `curl …?limit=5` (with one entry).
      const shown = doc.find((x) => x.title.startsWith('5.'))!.blocks.find((b) => b.lang === 'json')!;
      const example = JSON.parse(shown.text) as typeof body;
      assert.deepEqual(Object.keys(example), Object.keys(body));
      assert.deepEqual(Object.keys(example.entries[0]!), Object.keys(body.entries[0]!));
      // limit: 1 gives one; a limit that is not a number from 1 to 100 gives the default 20.
      assert.equal((JSON.parse((await v.get('/api/entries?limit=1')).text) as typeof body).entries.length, 1);
      assert.equal((JSON.parse((await v.get('/api/entries?limit=abc')).text) as typeof body).entries.length, 2);
      assert.equal((JSON.parse((await v.get('/api/entries?limit=0')).text) as typeof body).entries.length, 2);
    } finally {
      await s.close();
    }
  });

  describe('6. signing in (laneway serve guestbook --dev, with LANEWAY_AUTH_DEV_USERS)', () => {
    let server: Awaited<ReturnType<typeof startServe>>;
    before(async () => {
      writeApp(filesOf(steps[5]!), app);
      assert.deepEqual(checkApp(app).map(formatDiagnostic), [], 'laneway check after step 6');
      server = await startServe([app, '--dev', '--port', '0', '--log', 'off'], cleanEnv({ LANEWAY_AUTH_DEV_USERS: 'Ada Lovelace <ada@example.test>, Bob' }));
    });
    after(() => server?.stop());

    it('warns about the test users, and about github without settings', () => {
      assert.match(server.stderr(), /development sign-in is on/);
      assert.match(server.stderr(), /Ada Lovelace, Bob/);
      assert.match(server.stderr(), /github/i);
    });

    it('a visitor sees the entries and a link to sign in, and cannot write', async () => {
      const v = new TestVisitor(server.port);
      const home = await v.get('/');
      assert.equal(home.status, 200);
      assert.match(home.text, /<a href="\/auth\/">Sign in<\/a> to write in the guestbook\./);
      assert.doesNotMatch(home.text, /Entry_message/);
      assert.match(home.text, /<footer>Grace<\/footer>/);
      assert.equal((await v.post('/entries', { Entry_message: 'Anonymous' })).status, 401);
      const api = JSON.parse((await v.get('/api/entries')).text) as { count: number };
      assert.equal(api.count, 2);
    });

    it('signs in as a test user, writes an entry under her name, and signs out', async () => {
      const v = new TestVisitor(server.port);
      const signIn = await v.get('/auth/');
      assert.equal(signIn.status, 200);
      assert.match(signIn.text, /<button>Sign in with Ada Lovelace \(test user\)<\/button>/);
      assert.match(signIn.text, /<button>Sign in with Bob \(test user\)<\/button>/);
      const ada = actionOf(signIn.text, '/__/auth/dev/ada-lovelace');
      const signedIn = await v.post(ada);
      assert.ok([302, 303].includes(signedIn.status), `sign-in answered ${signedIn.status}`);
      assert.equal(signedIn.headers.location, '/');

      const home = await v.get('/');
      assert.match(home.text, /<p>Signed in as Ada Lovelace\.<\/p>/);
      assert.equal(attrOf(home.text, 'Entry_name', 'value'), undefined, 'the form has no name field any more');
      const action = actionOf(home.text, '/entries?_form=');

      // The form file's rules still apply.
      const refused = await v.post(action, { Entry_message: 'x' });
      const back = await v.get(location(refused));
      assert.match(back.text, /<p class="error">Message must be at least 2 characters long \(it has 1\)<\/p>/);

      const ok = await v.post(actionOf(back.text, '/entries?_form='), { Entry_message: 'Hello from the engine room.', Entry_name: 'Someone else' });
      assert.equal(location(ok), '/');
      const thanked = await v.get('/');
      assert.match(thanked.text, /Thank you for signing, Ada Lovelace!/);
      assert.match(thanked.text, /<blockquote><p>Hello from the engine room\.<\/p><footer>Ada Lovelace<\/footer><\/blockquote>/);
      const apiRes = await v.get('/api/entries?limit=1');
      assert.equal(apiRes.status, 200, apiRes.text + server.stderr());
      const api = JSON.parse(apiRes.text) as { count: number; entries: Array<{ name: string }> };
      assert.equal(api.count, 3);
      assert.equal(api.entries[0]!.name, 'Ada Lovelace', 'the name comes from the account, not from the body');

      const signedOut = await v.post('/__/auth/provider/logout');
      assert.equal(signedOut.status, 303);
      assert.match((await v.get('/')).text, /<a href="\/auth\/">Sign in<\/a>/);
    });
  });
});
