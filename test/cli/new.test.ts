/**
 * `laneway new` (docs/cli.md "`laneway new DIR`"), run as users run it: bin/laneway in a child process. The
 * starter is written into a new directory, `laneway check` finds no problem in it, a directory
 * that holds anything is refused, and the app it writes works: served by `laneway serve`, its
 * form refuses a bad note with a message per field, creates a good one once with a flash message,
 * and its JSON endpoint lists it.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { devCommand } from '../../src/cli/new.js';
import { TestVisitor } from '../support/visitor.js';

const BIN = fileURLToPath(new URL('../../bin/laneway', import.meta.url));
const STARTERS = fileURLToPath(new URL('../../starters/', import.meta.url));

function env(): NodeJS.ProcessEnv {
  const e: NodeJS.ProcessEnv = { ...process.env, PORT: '' };
  for (const name of ['npm_command', 'FORCE_COLOR', 'NO_COLOR', 'LANEWAY_AUTH_DEV_USERS', 'LANEWAY_SOURCES', 'DATABASE_URL', 'LANEWAY_DATA']) delete e[name];
  return e;
}
const run = (args: string[], cwd?: string) => spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', env: env(), cwd, timeout: 60_000 });
/** bin/laneway as typed in `dir`: relative to it, or absolute when that is shorter. */
const typed = (dir: string) => (relative(dir, BIN).length <= BIN.length ? relative(dir, BIN) : BIN);
const tempDir = () => mkdtempSync(join(tmpdir(), 'laneway-new-'));

/** Every file under `dir`, relative, sorted. */
function filesOf(dir: string, prefix = ''): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? filesOf(join(dir, e.name), `${prefix}${e.name}/`) : [`${prefix}${e.name}`]))
    .sort();
}

describe('laneway new', () => {
  test('writes the app starter into a new directory, prints the next two commands, and check finds no problem', () => {
    const target = join(tempDir(), 'my-app');
    const r = run(['new', target]);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stderr, '');
    assert.match(r.stdout, /^Created .*my-app from the app starter \(\d+ files\)\.$/m);
    const next = r.stdout.split('\n').filter((l) => l.startsWith('  '));
    // bin/laneway run by its path: the path as typed from the new app's directory.
    assert.deepEqual(next, [`  cd ${target}`, `  ${devCommand(typed(target))}`]);
    const files = filesOf(target);
    for (const f of ['.gitignore', '_layout.html', '_data/site.yaml', 'index.html', '📦/🌐Note.yaml', '📤/⏳NewNote.yaml', 'notes/index.html', 'notes/POST.js', 'api/🖥notes.js', 'css/site.css']) {
      assert.ok(files.includes(f), `${f} missing from ${files.join(', ')}`);
    }
    // The same files as the starter folder (gitignore written as .gitignore).
    assert.deepEqual(files, filesOf(join(STARTERS, 'app')).map((f) => (f === 'gitignore' ? '.gitignore' : f)).sort());
    assert.match(readFileSync(join(target, '.gitignore'), 'utf8'), /^\.laneway\/$/m);
    const check = run(['check', target]);
    assert.equal(check.status, 0, check.stdout + check.stderr);
    assert.equal(check.stdout, '0 errors, 0 warnings\n');
  });

  test('--template minimal writes the minimal starter, which check accepts too', () => {
    const target = join(tempDir(), 'site');
    const r = run(['new', target, '--template', 'minimal']);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /from the minimal starter/);
    assert.ok(!existsSync(join(target, '📦')), 'no models in the minimal starter');
    assert.equal(run(['check', target]).stdout, '0 errors, 0 warnings\n');
  });

  test('into the current directory (empty, or holding only .git): no cd in the next commands', () => {
    const dir = tempDir();
    mkdirSync(join(dir, '.git'));
    const r = run(['new', '.'], dir);
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(r.stdout.split('\n').filter((l) => l.startsWith('  ')), [`  ${devCommand(typed(dir))}`]);
    assert.ok(existsSync(join(dir, 'index.html')));
  });

  test('refuses a directory that holds anything (exit 2), and writes nothing', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'notes.txt'), 'mine');
    const r = run(['new', dir]);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /^laneway new: .* is not empty \(it holds notes\.txt\): give a new or empty directory/m);
    assert.match(r.stderr, /Run "bin\/laneway new --help"/);
    assert.equal(r.stdout, '');
    assert.deepEqual(readdirSync(dir), ['notes.txt']);
    assert.equal(readFileSync(join(dir, 'notes.txt'), 'utf8'), 'mine');
  });

  test('refuses a file, a missing directory argument, an unknown template or option (exit 2)', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'file'), '');
    const cases: Array<[string[], RegExp]> = [
      [['new', join(dir, 'file')], /is a file: give a new or empty directory/],
      [['new'], /give the directory to create the app in/],
      [['new', join(dir, 'x'), '--template', 'blog'], /there is no template "blog"; the templates are app, minimal/],
      [['new', join(dir, 'y'), '--force'], /unknown option --force/],
    ];
    for (const [args, message] of cases) {
      const r = run(args);
      assert.equal(r.status, 2, args.join(' '));
      assert.match(r.stderr, message);
      assert.doesNotMatch(r.stderr, /ERR_/);
    }
    assert.ok(!existsSync(join(dir, 'x')) && !existsSync(join(dir, 'y')));
  });

  test('--help lists the templates', () => {
    const r = run(['new', '--help']);
    assert.equal(r.status, 0);
    assert.match(r.stdout, /^Usage: laneway new DIR \[--template NAME\]/);
    assert.match(r.stdout, /^ +app +a layout/m);
    assert.match(r.stdout, /^ +minimal +a layout, one page/m);
    assert.match(run(['--help']).stdout, /new DIR/);
  });
});

describe('the commands laneway new prints are those the user can type', () => {
  const ROOT = fileURLToPath(new URL('../..', import.meta.url));
  const hintOf = (stdout: string) => stdout.split('\n').filter((l) => l.startsWith('  ')).at(-1);
  const checkLine = (app: string) => /<code>(.*) check \.<\/code>/.exec(readFileSync(join(app, 'index.html'), 'utf8'))?.[1];

  test('run by a relative path (bin/laneway): the path as typed from the new app, in the hint and the starter', () => {
    const target = join(tempDir(), 'by-path');
    const r = spawnSync(process.execPath, ['bin/laneway', 'new', target], { cwd: ROOT, encoding: 'utf8', env: env() });
    assert.equal(r.status, 0, r.stderr);
    const laneway = typed(target);
    assert.equal(hintOf(r.stdout), `  ${laneway} dev .`);
    assert.equal(checkLine(target), laneway);
    // The printed command works from the app's directory.
    const check = spawnSync(process.execPath, [laneway, 'check', '.'], { cwd: target, encoding: 'utf8', env: env() });
    assert.equal(check.status, 0, check.stdout + check.stderr);
    // A usage error's hint names the same command.
    const bad = spawnSync(process.execPath, ['bin/laneway', 'check'], { cwd: ROOT, encoding: 'utf8', env: env() });
    assert.match(bad.stderr, /Run "bin\/laneway check --help" for the options\./);
  });

  test('found on the PATH (npm install -g .): plain laneway', () => {
    const onPath = tempDir();
    symlinkSync(BIN, join(onPath, 'laneway'));
    const target = join(tempDir(), 'on-path');
    const e = { ...env(), PATH: [onPath, dirname(process.execPath), '/usr/bin', '/bin'].join(delimiter) };
    const r = spawnSync('laneway', ['new', target], { encoding: 'utf8', env: e });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(hintOf(r.stdout), '  laneway dev .');
    assert.equal(checkLine(target), 'laneway');
  });

  test('under npm exec / npx: npx laneway', () => {
    const target = join(tempDir(), 'npx');
    const r = spawnSync(process.execPath, [BIN, 'new', target], { encoding: 'utf8', env: { ...env(), npm_command: 'exec' } });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(hintOf(r.stdout), '  npx laneway dev .');
    assert.equal(checkLine(target), 'npx laneway');
  });
});

describe('the app starter, served', () => {
  let child: ChildProcess;
  let port: number;
  let out = '';
  before(async () => {
    const target = join(tempDir(), 'served');
    assert.equal(run(['new', target]).status, 0);
    child = spawn(process.execPath, [BIN, 'serve', target, '--port', '0', '--log', 'off', '--data', tempDir()], { stdio: ['ignore', 'pipe', 'pipe'], env: env() });
    child.stderr!.on('data', (d) => (out += d));
    port = await new Promise<number>((resolve, reject) => {
      child.stdout!.on('data', (d) => {
        out += d;
        const m = /^listening on http:\/\/127\.0\.0\.1:(\d+)$/m.exec(out);
        if (m) resolve(Number(m[1]));
      });
      child.once('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
    });
  });
  after(async () => {
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  });

  const formId = (html: string) => /action="\/notes\?_form=([^"]+)"/.exec(html)?.[1];
  const notes = async (v: TestVisitor) => JSON.parse((await v.get('/api/notes')).text) as { count: number; notes: Array<{ id: string; title: string; details: string | null }> };

  test('the home page, the notes page and the 404 page answer, each with a policy', async () => {
    const v = new TestVisitor(port);
    for (const [path, status, text] of [['/', 200, /Your app starts here/], ['/notes/', 200, /<h1>Notes<\/h1>/], ['/nowhere', 404, /Nothing here/]] as const) {
      const r = await v.get(path);
      assert.equal(r.status, status, path);
      assert.match(r.text, text);
      assert.match(String(r.headers['content-security-policy']), /default-src 'none'/);
    }
  });

  test('a bad note comes back with its message; a good one is created once, with a flash message; the JSON lists it', async () => {
    const v = new TestVisitor(port);
    assert.deepEqual(await notes(v), { count: 0, notes: [] });
    const id = formId((await v.get('/notes/')).text);
    assert.ok(id, 'the page has a form with a form state');

    const bad = await v.post(`/notes?_form=${id}`, { Note_title: 'ab', Note_details: 'kept' });
    assert.equal(bad.status, 302);
    const back = String(bad.headers.location);
    assert.match(back, /^\/notes\/\?_form=/);
    const shown = await v.get(back);
    assert.match(shown.text, /<p class="field-error">Title must be at least 3 characters long \(it has 2\)<\/p>/);
    assert.match(shown.text, /name="Note_details" [^>]*value="kept"/);
    assert.equal((await notes(v)).count, 0);

    const again = formId(shown.text)!;
    const good = await v.post(`/notes?_form=${again}`, { Note_title: 'Water the ferns', Note_details: 'Tuesday & Friday' });
    assert.equal(good.status, 302);
    assert.equal(good.headers.location, '/notes/');
    const page = await v.get('/notes/');
    assert.match(page.text, /<p class="message is-success" role="status">Added the note &quot;Water the ferns&quot;<\/p>/);
    assert.match(page.text, /<li><strong>Water the ferns<\/strong><br>Tuesday &amp; Friday<\/li>/);
    assert.doesNotMatch((await v.get('/notes/')).text, /class="message/, 'the message shows once');

    const replay = await v.post(`/notes?_form=${again}`, { Note_title: 'Water the ferns' });
    assert.equal(replay.status, 400, 'a replayed submission is refused');
    const json = await notes(v);
    assert.equal(json.count, 1);
    assert.deepEqual(json.notes.map((n) => [n.title, n.details]), [['Water the ferns', 'Tuesday & Friday']]);
  });
});
