/**
 * Models end to end, against a real server, on both engines (SQLite and PostgreSQL): create, read,
 * update, remove through scripts; transactions (commit on success, rollback on any failure);
 * validation (422), unique values (409), not found (404); contained models and container
 * selection; hierarchy ordering as the tasks blueprint uses it; concurrency (100 increments).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { serve, type Served } from '../helpers.js';
import { ENGINES } from '../support/engines.js';

const JSON_H = { accept: 'application/json' };
const FORM_H = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
const form = (o: Record<string, string>) => new URLSearchParams(o).toString();
const json = (r: { body: Buffer }) => JSON.parse(r.body.toString());

const APP = {
  '📦/🌐Task.yaml': 'title:\n  type: string\n  optional: true\nhierarchy: hierarchy\nstatus:\n  type: options\n  init: true\n  values:\n    - active\n    - complete\n',
  '📦/🌐Counter.yaml': 'name: string\ncount:\n  type: integer\n  init: 0\n',
  '📦/🌐Article.yaml': 'slug:\n  type: string\n  unique: true\npublished?: timestamp\nday?: date\nscore?: double\ntags[]: string\n',
  '📦/🌐List.yaml': 'title: string\n',
  '📦/List/🌐Note.yaml': 'title: string\nauthor?: List\n',
  'tasks/POST.js': "import {Task} from '📦';\nimport {title} from 'form';\nlet t = new Task().title(title);\n({id: t.id, title: t.title, status: t.status, h: t.hierarchy.value});\n",
  'tasks/GET.js': "import {Task} from '📦';\nTask.all().map((t) => ({id: t.id, title: t.title, h: t.hierarchy.value}));\n",
  'tasks/active/GET.js': "import {Task} from '📦';\nTask.status(Task.status.active).asc().map((t) => t.title);\n",
  'tasks/{task}/🔗.yaml': 'field: 📦.Task.id\n',
  'tasks/{task}/GET.js': "import {task} from '🔗';\ntask.get();\n",
  'tasks/{task}/📮move.js': [
    "import {before, after} from 'form';",
    "import {Task} from '📦';",
    "import {task} from '🔗';",
    'let b = null; let a = null;',
    'if (before) b = Task.get(before);',
    'if (after) a = Task.get(after);',
    'let m = task.get();',
    'if (a) { if (b) { m.hierarchy = a.hierarchy.before(b.hierarchy); } else { m.hierarchy = a.hierarchy.next(); } }',
    'else { try { let first = Task.all().get(); m.hierarchy = first.hierarchy.previous(); } catch ($ModelNotFound) { } }',
    '({h: m.hierarchy.value});',
  ].join('\n'),
  'tasks/{task}/📮remove.js': "import {task} from '🔗';\ntask.get().remove();\n({ok: true});\n",
  'tasks/{task}/📮status.js': "import {task} from '🔗';\nimport {status} from 'form';\nlet t = task.get();\nt.status = status;\nt;\n",
  'tasks/fail/POST.js': "import {Task} from '📦';\nnew Task().title('never');\nthrow ({error: 'no'});\n",
  'tasks/get-write/GET.js': "import {Task} from '📦';\nconst t = Task.all().get();\nt.title = 'changed in a GET';\n({});\n",
  'counter/POST.js': "import {Counter} from '📦';\nlet c = Counter.name('c').optional();\nif (c == null) { c = new Counter().name('c'); }\nc.count += 1;\n({count: c.count});\n",
  'counter/big/POST.js': "import {Counter} from '📦';\nimport {n} from 'form';\nnew Counter().name('big').count(n);\n({});\n",
  'counter/GET.js': "import {Counter} from '📦';\nCounter.name('c').get();\n",
  'articles/POST.js': "import {Article} from '📦';\nimport {slug} from 'form';\nlet a = new Article().slug(slug).published(new Date(Date.UTC(2024, 0, 2, 3, 4, 5))).day('2024-05-06').score(2.5);\na.tags.add('x');\na.tags.add('y');\na.tags.add('x');\na;\n",
  'articles/stats/GET.js': "import {Article} from '📦';\n({n: Article.all().count(), sum: Article.all().sum(Article.score), avg: Article.all().avg(Article.score), none: Article.slug('zz').sum(Article.score), e: Article.slug('zz').exists()});\n",
  'lists/POST.js': "import {List, Note} from '📦';\nlet l = new List().title('L');\nnew Note(l).title('n1');\nnew Note(l).title('n2');\n({id: l.id});\n",
  'lists/{list}/🔗.yaml': 'field: 📦.List.id\n',
  'lists/{list}/GET.js': "import {Note} from '📦';\nimport {list} from '🔗';\n({auto: Note.all().map((n) => n.title), cb: list(() => Note.all().map((n) => n.title)), sel: Note.list(list).count(), any: Note.anyList().count()});\n",
  'lists/grouped/GET.js': "import {List, Note} from '📦';\nList.grouping(Note.anyList().limit(1)).map((g) => ({n: g.note.length, t: g.note[0].title}));\n",
  'lists/all/GET.js': "import {List, Note} from '📦';\nList.all().flatMap((l) => Note.list(l)).map((n) => n.title);\n",
  'lists/spin/GET.js': "import {List, Note} from '📦';\nconst spin = (k) => k > 0 ? spin(k - 1) + spin(k - 1) : 1;\nList.all().flatMap((l) => Note.list(l)).map((n) => spin(60));\n",
  'lists/{list}/📮remove.js': "import {list} from '🔗';\nlist.get().remove();\n({});\n",
};

for (const engine of ENGINES) {
  describe(`models on ${engine.name}`, () => {
    let s: Served;
    before(async () => {
      s = await serve(APP, { data: await engine.data() });
    });
    after(() => s.close());

    it('creates, reads, updates and removes records; JSON shapes follow docs/queries.md', async () => {
      const one = json(await s.request('POST', '/tasks', FORM_H, form({ title: 'one' })));
      assert.match(one.id, /^[A-Za-z0-9_-]{16}$/);
      assert.deepEqual([one.title, one.status, one.h], ['one', 'active', '/0/']);
      const two = json(await s.request('POST', '/tasks', FORM_H, form({ title: 'two' })));
      assert.equal(two.h, '/1/');
      assert.deepEqual(json(await s.get('/tasks', JSON_H)).map((t: { title: string }) => t.title), ['one', 'two']);
      const full = json(await s.get(`/tasks/${one.id}`, JSON_H));
      assert.equal(full.id, one.id);
      assert.match(full.created, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      assert.equal(full.hierarchy, '/0/');
      const changed = json(await s.request('POST', `/tasks/${one.id}/status`, FORM_H, form({ status: 'complete' })));
      assert.equal(changed.status, 'complete');
      assert.deepEqual(json(await s.get('/tasks/active', JSON_H)), ['two']);
      assert.equal((await s.request('POST', `/tasks/${two.id}/remove`, FORM_H, '')).status, 200);
      assert.equal((await s.get(`/tasks/${two.id}`, JSON_H)).status, 404);
    });

    it('answers 404 for a record that does not exist, 422 with field messages for a refused value', async () => {
      assert.equal((await s.get('/tasks/tsk_nothing', JSON_H)).status, 404);
      const one = json(await s.request('POST', '/tasks', FORM_H, form({ title: 'x' })));
      const bad = await s.request('POST', `/tasks/${one.id}/status`, FORM_H, form({ status: 'bogus' }));
      assert.equal(bad.status, 422);
      assert.deepEqual(json(bad).messages[0].field, 'Task_status');
      assert.equal(json(await s.get(`/tasks/${one.id}`, JSON_H)).status, 'active', 'nothing written');
      const long = await s.request('POST', '/tasks', FORM_H, form({ title: 'y'.repeat(101) }));
      assert.equal(long.status, 422);
    });

    it('rolls back everything when the script fails, and refuses writes outside POST/PUT/DELETE', async () => {
      const before = json(await s.get('/tasks', JSON_H)).length;
      assert.equal((await s.request('POST', '/tasks/fail', FORM_H, '')).status, 400);
      assert.equal((await s.get('/tasks/get-write', JSON_H)).status, 500);
      assert.equal(json(await s.get('/tasks', JSON_H)).length, before);
    });

    it('stores timestamps, dates, doubles and string lists; aggregates agree across engines', async () => {
      const a = json(await s.request('POST', '/articles', FORM_H, form({ slug: 'first' })));
      assert.equal(a.published, '2024-01-02T03:04:05.000Z');
      assert.equal(a.day, '2024-05-06');
      assert.equal(a.score, 2.5);
      assert.deepEqual(a.tags, ['x', 'y']);
      const dup = await s.request('POST', '/articles', FORM_H, form({ slug: 'first' }));
      assert.equal(dup.status, 409);
      assert.match(json(dup).error, /Slug/);
      await s.request('POST', '/articles', FORM_H, form({ slug: 'second' }));
      assert.deepEqual(json(await s.get('/articles/stats', JSON_H)), { n: 2, sum: 5, avg: 2.5, none: 0, e: false });
    });

    it('selects containers by parameter, by callback and explicitly; refuses to remove a container with children', async () => {
      const { id } = json(await s.request('POST', '/lists', FORM_H, ''));
      await s.request('POST', '/lists', FORM_H, '');
      const got = json(await s.get(`/lists/${id}`, JSON_H));
      assert.deepEqual(got, { auto: ['n1', 'n2'], cb: ['n1', 'n2'], sel: 2, any: 4 });
      const r = await s.request('POST', `/lists/${id}/remove`, FORM_H, '');
      assert.equal(r.status, 409);
      assert.equal(json(await s.get(`/lists/${id}`, JSON_H)).sel, 2);
    });

    it('a callback answering a query (flatMap) runs in the request, and a callback looping after a wait is stopped', async () => {
      assert.deepEqual(json(await s.get('/lists/all', JSON_H)), ['n1', 'n2', 'n1', 'n2']);
      assert.deepEqual(json(await s.get('/lists/grouped', JSON_H)), [{ n: 1, t: 'n1' }, { n: 1, t: 'n1' }]);
      const spin = await s.get('/lists/spin', JSON_H);
      assert.equal(spin.status, 503);
    });

    it('reorders with hierarchy values as the tasks blueprint does', async () => {
      const fresh = await serve({ '📦/🌐Task.yaml': APP['📦/🌐Task.yaml'], 'tasks/POST.js': APP['tasks/POST.js'], 'tasks/GET.js': APP['tasks/GET.js'], 'tasks/{task}/🔗.yaml': APP['tasks/{task}/🔗.yaml'], 'tasks/{task}/📮move.js': APP['tasks/{task}/📮move.js'] }, { data: await engine.data() });
      try {
        const ids: string[] = [];
        for (const t of ['a', 'b', 'c', 'd']) ids.push(json(await fresh.request('POST', '/tasks', FORM_H, form({ title: t }))).id);
        const order = async () => json(await fresh.get('/tasks', JSON_H)).map((t: { title: string }) => t.title).join('');
        // d between a and b
        assert.equal(json(await fresh.request('POST', `/tasks/${ids[3]}/move`, FORM_H, form({ after: ids[0]!, before: ids[1]! }))).h, '/0.1/');
        assert.equal(await order(), 'adbc');
        // a to the end (after c)
        assert.equal(json(await fresh.request('POST', `/tasks/${ids[0]}/move`, FORM_H, form({ after: ids[2]! }))).h, '/3/');
        assert.equal(await order(), 'dbca');
        // c first
        assert.equal(json(await fresh.request('POST', `/tasks/${ids[2]}/move`, FORM_H, '')).h, '/0/');
        assert.equal(await order(), 'cdba');
      } finally {
        await fresh.close();
      }
    });

    it('clients that hang up right after sending a POST leave no transaction open', async () => {
      const { connect } = await import('node:net');
      const body = 'title=gone';
      const raw = `POST /tasks HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
      await Promise.all(
        Array.from({ length: 30 }, () => new Promise<void>((resolve) => {
          const socket = connect(s.port, '127.0.0.1', () => {
            socket.write(raw);
            setTimeout(() => socket.destroy(), 2);
          });
          socket.on('close', () => resolve());
          socket.on('error', () => resolve());
        })),
      );
      // Every pooled connection (PostgreSQL) and the write lock (SQLite) are free again.
      for (let i = 0; i < 12; i++) {
        const r = await s.request('POST', '/tasks', FORM_H, form({ title: `after ${i}` }));
        assert.equal(r.status, 200, r.body.toString());
      }
    });

    it('integers a script cannot hold exactly are refused, never rounded', async () => {
      const r = await s.request('POST', '/counter/big', FORM_H, form({ n: '9007199254740993' }));
      assert.equal(r.status, 422);
      assert.match(r.body.toString(), /must be between -9007199254740991 and 9007199254740991/);
      assert.equal((await s.request('POST', '/counter/big', FORM_H, form({ n: '9007199254740991' }))).status, 200);
    });

    it('100 concurrent increments of one record end at exactly 100', async () => {
      assert.equal(json(await s.request('POST', '/counter', FORM_H, '')).count, 1);
      await Promise.all(Array.from({ length: 99 }, () => s.request('POST', '/counter', FORM_H, '')));
      assert.equal(json(await s.get('/counter', JSON_H)).count, 100);
    });
  });
}

describe('the data directory and migrations (laneway serve / migrate)', () => {
  it('keeps the SQLite file in .laneway/, never served; a narrowing change refuses to start until migrate --accept', async () => {
    const { writeApp } = await import('../helpers.js');
    const { spawnSync } = await import('node:child_process');
    const { existsSync, writeFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const dir = writeApp({ '📦/🌐Note.yaml': 'title: string\nbody?: string\n', 'notes/POST.js': "import {Note} from '📦';\nnew Note().title('t').body('b');\n({});\n" });
    const s = await serve(dir);
    try {
      assert.equal((await s.request('POST', '/notes', FORM_H, '')).status, 200);
      assert.ok(existsSync(join(dir, '.laneway', 'laneway.db')));
      assert.equal((await s.get('/.laneway/laneway.db')).status, 404);
    } finally {
      await s.close();
    }
    writeFileSync(join(dir, '📦', '🌐Note.yaml'), 'title: string\n');
    writeFileSync(join(dir, 'notes', 'POST.js'), "import {Note} from '📦';\nnew Note().title('t');\n({});\n");
    const bin = join(import.meta.dirname, '..', '..', 'bin', 'laneway');
    const refused = spawnSync(process.execPath, [bin, 'migrate', dir], { encoding: 'utf8' });
    assert.equal(refused.status, 1);
    assert.match(refused.stderr, /Note: field "body" removed/);
    assert.match(refused.stderr, /Run `laneway migrate \/\S+ --accept`/);
    assert.ok(!refused.stderr.includes('<app dir>'), 'the command names this app');
    const accepted = spawnSync(process.execPath, [bin, 'migrate', dir, '--accept'], { encoding: 'utf8' });
    assert.equal(accepted.status, 0, accepted.stderr);
    assert.match(accepted.stdout, /field "body" removed/);
    const again = spawnSync(process.execPath, [bin, 'migrate', dir], { encoding: 'utf8' });
    assert.match(again.stdout, /matches the definitions/);
  });
});
