/**
 * `laneway add` (docs/cli.md "`laneway add`"), run as users run it: bin/laneway in a child process
 * (needs `npm run build`). Each generator writes files with the right special names and prints
 * them, the app it leaves passes `laneway check` with no problem and serves what was generated (the
 * form creates a record), and nothing is ever overwritten.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve } from '../helpers.js';
import { TestVisitor } from '../support/visitor.js';

const BIN = fileURLToPath(new URL('../../bin/laneway', import.meta.url));
const dirs: string[] = [];
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'laneway-add-'));
  dirs.push(d);
  return d;
};

function env(): NodeJS.ProcessEnv {
  const e: NodeJS.ProcessEnv = { ...process.env };
  for (const name of ['npm_command', 'FORCE_COLOR', 'NO_COLOR', 'LANEWAY_SOURCES', 'DATABASE_URL', 'LANEWAY_DATA']) delete e[name];
  return e;
}
const run = (args: string[], cwd: string) => spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', env: env(), cwd, timeout: 60_000 });

/** Runs `laneway add …` in `app` and answers the files it says it wrote. */
function add(app: string, ...args: string[]): string[] {
  const r = run(['add', ...args], app);
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.equal(r.stderr, '');
  return r.stdout.split('\n').filter((l) => l.startsWith('wrote ')).map((l) => l.slice('wrote '.length));
}

function generateAll(app: string): void {
  assert.deepEqual(add(app, 'page', 'about'), ['about.html']);
  assert.deepEqual(add(app, 'page', 'docs/'), ['docs/index.html']);
  assert.deepEqual(add(app, 'endpoint', 'GET', '/api/hello'), ['api/🖥hello.js']);
  assert.deepEqual(add(app, 'endpoint', 'post', '/api/save'), ['api/📮save.js']);
  assert.deepEqual(add(app, 'endpoint', 'PUT', '/api/item'), ['api/item/PUT.js']);
  assert.deepEqual(add(app, 'endpoint', 'DELETE', '/api/item'), ['api/❌item.js']);
  assert.deepEqual(add(app, 'endpoint', 'GET', '/api/'), ['api/🖥index.js']);
  assert.deepEqual(add(app, 'model', 'Task', 'title', 'done?:boolean', 'due?:date', 'notes?:markdown'), ['📦/🌐Task.yaml']);
  assert.deepEqual(add(app, 'form', 'Task'), ['📤/⏳NewTask.yaml', 'tasks/index.html', 'tasks/POST.js']);
  assert.deepEqual(add(app, 'supplier', 'Greeting', '--dir', 'docs'), ['docs/📤/Greeting.js']);
}

async function exercise(app: string): Promise<void> {
  const check = run(['check', '.'], app);
  assert.equal(check.stdout, '0 errors, 0 warnings\n', check.stdout + check.stderr);
  assert.equal(check.status, 0);
  const served = await serve(app, { data: { dataDir: tempDir() } });
  try {
    const v = new TestVisitor(served.port);
    assert.match((await v.get('/about')).text, /<h1>About<\/h1>/);
    assert.equal((await v.get('/docs/')).status, 200);
    assert.deepEqual(JSON.parse((await v.get('/api/hello')).text), { message: 'Hello from /api/hello' });
    const page = await v.get('/tasks/');
    assert.equal(page.status, 200);
    const id = /action="\/tasks\?_form=([^"]+)"/.exec(page.text)?.[1];
    assert.ok(id, page.text);
    assert.match(page.text, /name="Task_done"/);
    const posted = await v.post(`/tasks?_form=${id}`, { Task_title: 'Water the ferns', Task_notes: 'on *Friday*' });
    assert.equal(posted.status, 302, posted.text);
    assert.equal(posted.headers.location, '/tasks/');
    assert.match((await v.get('/tasks/')).text, /<li>Water the ferns<\/li>/);
  } finally {
    await served.close();
  }
}

describe('laneway add', () => {
  test('in the minimal starter (with its layout): every generator, then check finds no problem and the app serves it all', async () => {
    const app = join(tempDir(), 'app');
    assert.equal(run(['new', app, '--template', 'minimal'], tempDir()).status, 0);
    generateAll(app);
    assert.match(readFileSync(join(app, 'about.html'), 'utf8'), /^\{\{% partial \/_layout \}\}$/m);
    assert.match(readFileSync(join(app, '📦', '🌐Task.yaml'), 'utf8'), /^title: string\ndone\?: boolean\ndue\?: date\nnotes\?: markdown\n$/m);
    await exercise(app);
  });

  test('in an empty directory (no layout), with --app', async () => {
    const app = tempDir();
    const elsewhere = tempDir();
    const r = run(['add', 'page', 'about', '--app', app], elsewhere);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^wrote about\.html$/m);
    assert.doesNotMatch(readFileSync(join(app, 'about.html'), 'utf8'), /partial/);
    rmSync(join(app, 'about.html'));
    generateAll(app);
    await exercise(app);
  });

  test('refuses to overwrite a file (exit 2), and writes nothing of the set', () => {
    const app = tempDir();
    writeFileSync(join(app, 'about.html'), 'mine');
    const r = run(['add', 'page', 'about'], app);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /about\.html exists already: nothing was written/);
    assert.equal(readFileSync(join(app, 'about.html'), 'utf8'), 'mine');
    add(app, 'model', 'Note', 'title');
    const again = run(['add', 'model', 'Note', 'body'], app);
    assert.equal(again.status, 2);
    assert.match(again.stderr, /the app has a model Note already \(\/📦\/🌐Note\.yaml\)/);
    // The form's files are checked together: one present, none written.
    writeFileSync(join(app, 'POST.js'), "'/'\n");
    const form = run(['add', 'form', 'Note', '--dir', '/'], app);
    assert.equal(form.status, 2, form.stdout);
    assert.match(form.stderr, /POST\.js exists already/);
    assert.throws(() => readFileSync(join(app, '📤', '⏳NewNote.yaml')));
  });

  test('usage errors say what to write instead (exit 2)', () => {
    const app = tempDir();
    const cases: Array<[string[], RegExp]> = [
      [['add'], /say what to add: page, endpoint, model, form or supplier/],
      [['add', 'widget', 'x'], /there is no "widget" to add/],
      [['add', 'endpoint', 'PATCH', '/x'], /"PATCH" is not a method Laneway routes/],
      [['add', 'endpoint', 'POST', '/x/'], /only a GET script answers a URL ending in \//],
      [['add', 'model', 'task-list'], /is not a model name/],
      [['add', 'model', 'Task', 'due:datetime'], /"datetime" is not a field type/],
      [['add', 'form', 'Missing'], /the app has no model Missing/],
      [['add', 'page', 'a b'], /is not one/],
    ];
    for (const [args, message] of cases) {
      const r = run(args, app);
      assert.equal(r.status, 2, args.join(' '));
      assert.match(r.stderr, message);
    }
  });
});
