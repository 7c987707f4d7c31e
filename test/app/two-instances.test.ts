/**
 * Several machines on one PostgreSQL database (docs/deploy.md, under this heading): two Laneway
 * instances — two `bin/laneway serve` processes on two loopback ports — started together on one
 * fresh database. They migrate once (the schema lock: one of them creates the table, the other
 * finds it made), and a visitor whose requests alternate between them, as behind a load balancer,
 * keeps its session, its form state and its flash messages; a record written through one is read
 * through the other. Nothing of a visitor lives in one process's memory.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { writeApp } from '../helpers.js';
import { startPostgres, type PgServer } from '../support/postgres.js';
import { TestVisitor } from '../support/visitor.js';

const BIN = fileURLToPath(new URL('../../bin/laneway', import.meta.url));
const WAIT_MS = 60_000;

const APP = {
  '📦/🌐Note.yaml': 'title: string\nkind:\n  type: options\n  init: true\n  values: [plain, urgent]\n',
  'index.html':
    '<!--TEMPLATE mustache-->\n<!doctype html><html><head><title>Notes</title>{{% import {Note} from \'📦\' }}</head><body>\n' +
    '{{#Messages.all}}<p class="msg {{this.type}}">{{this.value}}</p>\n{{/Messages.all}}' +
    '{{#Note.Form.view as form}}<form action="/notes?_form={{form.id}}" method="POST" data-invalid="{{form.invalid}}">\n' +
    '{{#form.title}}<input name="{{path}}" {{{input.attributes}}}>{{#message}}<span class="err">{{value}}</span>{{/message}}{{/form.title}}\n' +
    '</form>{{/Note.Form.view}}\n<ul>{{#Note.all as n}}<li>{{n.title}}</li>{{/Note.all}}</ul></body></html>\n',
  'notes/POST.js':
    "import {Note} from '📦';\nconst note = new Note();\ntry {\n  Note.Form.submit(note);\n  Redirect.home().success('Added ' + note.title);\n} catch ($ModelInvalid) {\n  Redirect.home().invalid($ModelInvalid);\n}\n",
  'api/📤/⏳NewNote.yaml': '🎛:\n  requirePreviousState: false\n\n📦.Note:\n  - title\n',
  'api/notes/POST.js': "import {Note} from '📦';\nimport {NewNote} from '📤';\nconst note = new Note();\nNewNote.submit(note);\n({title: note.title});\n",
  'count/GET.js': "import {Note} from '📦';\n({count: Note.all().count()});\n",
};

/** One `laneway serve` process: its port and every line it wrote (JSON lines, `--log json`). */
interface Instance {
  port: number;
  lines: Array<Record<string, unknown>>;
  stop(): Promise<number | null>;
}

function start(dir: string, databaseUrl: string): Promise<Instance> {
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: '', NO_COLOR: '1', DATABASE_URL: databaseUrl };
  delete env.LANEWAY_SECRET; // the instances share the secret the first one keeps in the database
  const child = spawn(process.execPath, [BIN, 'serve', dir, '--port', '0', '--log', 'json', '--workers', '1'], { stdio: ['ignore', 'pipe', 'pipe'], env });
  const lines: Array<Record<string, unknown>> = [];
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not listening within ${WAIT_MS / 1000} s: ${JSON.stringify(lines)}`)), WAIT_MS);
    for (const stream of [child.stdout, child.stderr]) {
      let buffered = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => {
        buffered += chunk;
        const parts = buffered.split('\n');
        buffered = parts.pop()!;
        for (const text of parts) {
          let line: Record<string, unknown>;
          try {
            line = JSON.parse(text) as Record<string, unknown>;
          } catch {
            line = { type: 'text', message: text };
          }
          lines.push(line);
          if (line.type === 'listening') {
            clearTimeout(timer);
            resolve({
              port: Number(line.port),
              lines,
              stop: () => {
                child.kill('SIGTERM');
                return exited;
              },
            });
          }
        }
      });
    }
    void exited.then((code) => reject(new Error(`exited ${code}: ${JSON.stringify(lines)}`)));
  });
}

/**
 * A visitor behind a load balancer: one browser (one cookie jar, one host name), each request
 * sent to the next instance in turn, or to the one named.
 */
class BalancedVisitor {
  readonly jar = new Map<string, string>();
  readonly #visitors: TestVisitor[];
  #next = 0;
  constructor(ports: number[]) {
    this.#visitors = ports.map((port) => {
      const v = new TestVisitor(port, 'app.test');
      Object.defineProperty(v, 'jar', { value: this.jar });
      return v;
    });
  }
  /** The visitor of instance `i` (0 or 1); without `i`, the next one in turn. */
  via(i?: number): TestVisitor {
    const v = this.#visitors[i ?? this.#next]!;
    this.#next = ((i ?? this.#next) + 1) % this.#visitors.length;
    return v;
  }
}

const formId = (html: string) => /action="\/notes\?_form=([^"]+)"/.exec(html)?.[1];

describe('two instances on one PostgreSQL database', () => {
  let server: PgServer;
  let url: string;
  let dir: string;
  let a: Instance;
  let b: Instance;
  before(async () => {
    server = await startPostgres();
    url = await server.createDatabase();
    dir = writeApp(APP);
    // Started together: both open the database and bring its schema to the definitions at once.
    [a, b] = await Promise.all([start(dir, url), start(dir, url)]);
  });
  after(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('both start, with no error, and the schema is made once', async () => {
    for (const instance of [a, b]) {
      const problems = instance.lines.filter((l) => l.type === 'error' || l.type === 'warning');
      assert.deepEqual(problems, [], 'no error or warning at start');
    }
    const migrated = [a, b].map((i) => i.lines.filter((l) => /^database: Note: new model/.test(String(l.message))).length);
    assert.deepEqual(migrated.sort(), [0, 1], 'one instance created the table; the other found it made (the schema lock)');
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const schema = await client.query('SELECT "model" FROM "lw__schema" ORDER BY "model"');
      assert.deepEqual(schema.rows.map((r: { model: string }) => r.model), ['Note']);
      const secrets = await client.query(`SELECT count(*)::int AS n FROM "lw__meta" WHERE "key" = 'secret'`);
      assert.equal(secrets.rows[0].n, 1, 'one secret, shared');
    } finally {
      await client.end();
    }
  });

  it('a visitor alternating between them keeps its session, its form state and its messages', async () => {
    const visitor = new BalancedVisitor([a.port, b.port]);
    // Instance A starts the session and gives a form bound to it.
    const page = await visitor.via(0).get('/');
    assert.equal(page.status, 200);
    const sid = visitor.jar.get('sid');
    assert.ok(sid, 'a session cookie');
    const id = formId(page.text)!;
    assert.ok(id);
    // Instance B accepts the form of A's session, finds it invalid, and keeps the state.
    const bad = await visitor.via(1).post(`/notes?_form=${id}`, { Note_title: 'x'.repeat(120) });
    assert.equal(bad.status, 302);
    const back = String(bad.headers.location);
    assert.match(back, /^\/\?_form=s[\w-]{24}$/);
    // Instance A shows the state B stored: the value and the message.
    const shown = await visitor.via(0).get(back);
    assert.match(shown.text, /data-invalid="true"/);
    assert.match(shown.text, /value="x{100}"/); // the form state keeps what the field (max 100) may hold
    assert.match(shown.text, /<span class="err">Title must be at most 100 characters long \(it has 120\)<\/span>/);
    // Instance B takes the corrected submission, once, and leaves a message.
    const again = formId(shown.text)!;
    const ok = await visitor.via(1).post(`/notes?_form=${again}`, { Note_title: 'Milk' });
    assert.equal(ok.status, 302);
    assert.equal(ok.headers.location, '/');
    assert.equal((await visitor.via(0).post(`/notes?_form=${again}`, { Note_title: 'Milk' })).status, 400, 'a replay through the other instance is refused too');
    // Instance A shows B's message, once; the record B wrote is listed.
    const home = await visitor.via(0).get('/');
    assert.match(home.text, /<p class="msg success">Added Milk<\/p>/);
    assert.match(home.text, /<li>Milk<\/li>/);
    const later = await visitor.via(1).get('/');
    assert.doesNotMatch(later.text, /Added Milk/, 'a flash message is shown once, whichever instance shows it');
    assert.equal(visitor.jar.get('sid'), sid, 'the same session throughout');
  });

  it('a record written through one instance is read through the other', async () => {
    const count = async (i: number) => JSON.parse((await new TestVisitor([a, b][i]!.port).get('/count')).text).count as number;
    const before = await count(1);
    const created = await new TestVisitor(a.port).post('/api/notes', { Note_title: 'Bread' });
    assert.equal(created.status, 200, created.text);
    assert.equal(await count(1), before + 1);
    const other = await new TestVisitor(b.port).post('/api/notes', { Note_title: 'Eggs' });
    assert.equal(other.status, 200, other.text);
    assert.equal(await count(0), before + 2);
  });

  it('both stop with exit 0', async () => {
    assert.deepEqual(await Promise.all([a.stop(), b.stop()]), [0, 0]);
  });
});
