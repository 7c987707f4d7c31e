/**
 * Every example of docs/queries.md, against a real served app (SQLite), asserting the JSON the
 * doc shows; then adversarial cases (fields that cannot be queried, unknown fields, the unordered
 * cap, quotes and LIKE characters, bytewise order of non-ASCII text, rollback, the write limit,
 * creation order within one request, ids of another model).
 *
 * Examples that only read share one seeded app; examples that write share another, and none of
 * them depends on another. A test marked `todo` would document behaviour the runtime does not have yet
 * (none today).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { jsonWithoutId, serve, type AppFiles, type Response, type Served } from '../helpers.js';

const JSON_H = { accept: 'application/json' };
const FORM_H = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
const form = (o: Record<string, string>): string => new URLSearchParams(o).toString();
const json = (r: Response): unknown => jsonWithoutId(r);

const ID = /^tsk_[A-Za-z0-9_-]{16}$/;
const PER_ID = /^per_[A-Za-z0-9_-]{16}$/;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

// The sample models and records of the doc, verbatim.
const MODELS: AppFiles = {
  '📦/🌐Task.yaml': [
    '🎛:',
    '  prefix: tsk_',
    'title:',
    '  type: string',
    '  placeholder: What needs doing?',
    '  about: One line, shown in lists',
    'status:',
    '  type: options',
    '  init: true',
    '  values:',
    '    active: Active',
    '    done: Done',
    'points?: integer',
    'due?: timestamp',
    'owner?: Person',
    'tags[3]: string',
    '',
  ].join('\n'),
  '📦/🌐Person.yaml': '🎛:\n  prefix: per_\nname:\n  type: string\n  unique: true\n  order: true\n',
  '📦/🌐Step.yaml': 'title: string\nhierarchy: hierarchy\n',
  '📦/🌐List.yaml': 'title: string\n',
  '📦/List/🌐Note.yaml': 'title: string\n',
  '📦/📎Address.yaml': 'city: string\nzip?: string\n',
  '📦/🌐Place.yaml': 'name: string\naddress: Address\nstops[]: Address\n',
};
const IMPORTS = "import {Task, Person, Step, List, Note, Place, Address} from '📦'\n";
const SEED = `${IMPORTS}
new Person().name('Bob')
const ann = new Person().name('Ann')
new Task().title('Write docs').points(3).owner(ann).tags(['docs'])
new Task().title('Fix bug').status('done').points(5).due(new Date('2024-05-01T12:00:00Z'))
new Task().title('Review').points(1).owner(ann)
new Task().title('Ship').status('done')
new Step().title('Plan')
new Step().title('Test')
new Step().title('Build').hierarchy('/0.5/')
const home = new List().title('Home')
new Note(home).title('Milk')
new Note(home).title('Bread')
new Note(new List().title('Work')).title('Email')
new Place().name('Office').address(new Address({city: 'Oslo', zip: '0150'}))
const trip = new Place().name('Trip').address(new Address({city: 'Oslo'}))
trip.stops.add(new Address({city: 'Bergen', zip: '5003'}))
trip.stops.add(new Address({city: 'Tromsø'}))
;({ok: true})
`;

interface Example {
  /** The script after the imports, as the doc shows it. */
  code: string;
  /** The JSON answer (200), unless `check` is given. */
  expect?: unknown;
  /** A status other than 200 (then `expect` is not checked unless given). */
  status?: number;
  check?: (r: Response) => void;
  todo?: string;
}
const ex = (code: string, expect: unknown, more: Omit<Example, 'code' | 'expect'> = {}): Example => ({ code, expect, ...more });
const fails = (code: string, status: number, more: Omit<Example, 'code' | 'status'> = {}): Example => ({ code, status, ...more });
const title = (e: Example): string => e.code.trim().split('\n').join(' ⏎ ');

function addEndpoints(files: AppFiles, dir: string, method: 'GET' | 'POST', list: Example[]): void {
  list.forEach((e, i) => {
    files[`${dir}/${i}/${method}.js`] = `${IMPORTS}${e.code}\n`;
  });
}

function runExamples(app: () => Served, dir: string, method: 'GET' | 'POST', list: Example[]): void {
  list.forEach((e, i) => {
    it(title(e), e.todo ? { todo: e.todo } : {}, async () => {
      const r = method === 'GET' ? await app().get(`/${dir}/${i}`, JSON_H) : await app().request('POST', `/${dir}/${i}`, FORM_H, '');
      assert.equal(r.status, e.status ?? 200, r.text);
      if (e.check) e.check(r);
      else if (e.expect !== undefined) assert.deepEqual(json(r), e.expect);
    });
  });
}

/** Serves MODELS + extra files, and runs the doc's seed script. */
async function seeded(extra: AppFiles): Promise<Served> {
  const s = await serve({ ...MODELS, 'seed/POST.js': SEED, ...extra });
  const r = await s.request('POST', '/seed', FORM_H, '');
  assert.equal(r.status, 200, r.text);
  return s;
}

// ---------------------------------------------------------------------------------------------
// Examples that only read, against the sample records.

const READS: Record<string, Example[]> = {
  'all records': [ex("Task.all().map((t) => t.title)", ['Write docs', 'Fix bug', 'Review', 'Ship'])],
  'field equality': [
    ex("Task.status('done').map((t) => t.title)", ['Fix bug', 'Ship']),
    ex('Task.status(Task.status.active).count()', 2),
    ex('Task.points(null).map((t) => t.title)', ['Ship']),
    ex("Task.owner(Person.name('Ann').get()).map((t) => t.title)", ['Write docs', 'Review']),
  ],
  ranges: [
    ex('Task.points_gt(1).map((t) => t.title)', ['Write docs', 'Fix bug']),
    ex('Task.points_gte(3).map((t) => t.title)', ['Write docs', 'Fix bug']),
    ex('Task.points_lt(3).map((t) => t.title)', ['Review']),
    ex('Task.points_lte(3).map((t) => t.title)', ['Write docs', 'Review']),
    ex("Task.due_lt('2024-06-01').map((t) => t.title)", ['Fix bug']),
    ex('const first = Task.all().get();\nTask.created_gt(first.created).map((t) => t.title)', ['Fix bug', 'Review', 'Ship']),
    ex("Task.id_gte('tsk_').count()", 4),
    ex("Task.all().id(Task.title('Ship').get().id).map((t) => t.title)", ['Ship']),
  ],
  'chaining is AND': [
    ex("Task.status('active').points_gte(2).map((t) => t.title)", ['Write docs']),
    ex('Task.points_gte(1).points_lte(3).map((t) => t.title)', ['Write docs', 'Review']),
  ],
  'natural order, asc() and desc()': [
    ex('Task.all().desc().map((t) => t.title)', ['Ship', 'Review', 'Fix bug', 'Write docs']),
    ex('Person.all().map((p) => p.name)', ['Ann', 'Bob']),
    ex('Person.all().desc().map((p) => p.name)', ['Bob', 'Ann']),
    ex('Step.all().map((s) => s.title)', ['Plan', 'Build', 'Test']),
    ex("Task.status('done').asc().map((t) => t.title)", ['Fix bug', 'Ship']),
    ex("Task.status('done').desc().map((t) => t.title)", ['Ship', 'Fix bug']),
  ],
  'limit(n)': [
    ex('Task.all().limit(2).map((t) => t.title)', ['Write docs', 'Fix bug']),
    ex("Task.all().limit(1).filter((t) => t.status == 'done').map((t) => t.title)", []),
    ex("Task.all().filter((t) => t.status == 'done').limit(1).map((t) => t.title)", ['Fix bug']),
    ex('Task.all().limit(3).limit(2).map((t) => t.title)', ['Write docs', 'Fix bug']),
    fails('Task.all().limit(-1).count()', 500),
  ],
  'filter(fn)': [ex("Task.all().filter((t) => t.title.includes('o')).map((t) => t.title)", ['Write docs'])],
  'map(fn)': [
    ex("Task.status('done').map((t) => ({title: t.title, points: t.points}))", [
      { title: 'Fix bug', points: 5 },
      { title: 'Ship', points: null },
    ]),
    ex('const s = Task.all().map((t) => t.title);\n({length: s.length, array: Array.isArray(s), from: Array.from(s)})', { array: false, from: [] }),
  ],
  'flatMap(fn)': [
    ex('Task.all().flatMap((t) => t.points == null ? null : [t.title, t.points])', ['Write docs', 3, 'Fix bug', 5, 'Review', 1]),
    ex('List.all().flatMap((l) => Note.list(l)).map((n) => n.title)', ['Milk', 'Bread', 'Email']),
  ],
  'distinct()': [ex('Task.all().map((t) => t.status).distinct()', ['active', 'done'])],
  'insert(fn)': [
    ex("Task.status('done').map((t) => t.title).insert((it) => it.first ? 'first' : it.last ? 'last' : null)", ['first', 'Fix bug', 'Ship', 'last']),
    ex("Task.all().map((t) => t.points ?? 0).insert((it) => it.previous != null && it.next != null && it.next < it.previous ? '↓' : null)", [3, 5, '↓', 1, '↓', 0]),
    ex("Task.title('Nothing').map((t) => t.title).insert((it) => it.empty ? ['(none)'] : null)", ['(none)']),
    fails('Task.all().insert((it) => null)', 500),
  ],
  'embedded matches': [
    ex("Place.address({city: 'Oslo'}).map((p) => p.name)", ['Office', 'Trip']),
    ex("Place.address({city: 'Oslo', zip: '0150'}).map((p) => p.name)", ['Office']),
    ex("Place.stops({city: 'Bergen'}).map((p) => p.name)", ['Trip']),
    ex("Place.stops({city: 'Bergen', zip: '5003'}).count()", 1),
    ex("Place.stops({city: 'Tromsø', zip: '5003'}).count()", 0),
    ex("Place.all().address(new Address({city: 'Oslo', zip: '0150'})).count()", 1),
    fails("Place.address({country: 'NO'})", 500),
  ],
  'forEach(fn)': [ex('let total = 0;\nTask.all().forEach((t) => { total += t.points ?? 0 });\ntotal', 9)],
  'count()': [
    ex('Task.all().count()', 4),
    ex('Task.all().limit(2).count()', 2),
    ex('Task.all().filter((t) => t.points > 2).count()', 2),
  ],
  'get(), optional(), exists()': [
    ex("Task.status('done').get().title", 'Fix bug'),
    fails("Task.title('Nope').get()", 404, { check: (r) => assert.match((json(r) as { error: string }).error, /Task not found/) }),
    ex("Task.title('Nope').optional()", null),
    ex("Task.title('Ship').optional().status", 'done'),
    ex("Task.title('Ship').exists()", true),
    ex("Task.title('Nope').exists()", false),
  ],
  'sum(M.field) and avg(M.field)': [
    ex('Task.all().sum(Task.points)', 9),
    ex("Task.status('done').sum(Task.points)", 5),
    ex('Task.all().avg(Task.points)', 3),
    ex("Task.title('Nope').sum(Task.points)", 0),
    ex("Task.title('Nope').avg(Task.points)", null),
    fails('Task.all().sum(Task.title)', 500),
    ex("Task.all().filter((t) => t.status == 'done').sum(Task.points)", 5),
    ex("Task.all().filter((t) => t.status == 'done').avg(Task.points)", 5),
    ex('({sum: Task.all().map((t) => t.points).sum(Task.points), avg: Task.all().map((t) => t.points).avg(Task.points)})', { sum: 0, avg: null }),
  ],
  'contained models': [
    ex("const home = List.title('Home').get();\nNote.list(home).map((n) => n.title)", ['Milk', 'Bread']),
    ex('Note.anyList().map((n) => n.title)', ['Milk', 'Bread', 'Email']),
    ex("const home = List.title('Home').get();\nhome(() => Note.all().count())", 2),
    ex("const home = List.title('Home').get();\nhome(() => Note.all().map((n) => n.title))", ['Milk', 'Bread']),
    ex('Note.anyList().get().list().get().title', 'Home'),
    fails('Note.all()', 500),
    ex("Note.list(List.title('Home').get().id).count()", 2),
    ex("List.grouping(Note.anyList()).map((g) => ({list: g.list.title, notes: g.note.map((n) => n.title)}))", [
      { list: 'Home', notes: ['Milk', 'Bread'] },
      { list: 'Work', notes: ['Email'] },
    ]),
    ex('List.grouping(Note.anyList().limit(1)).map((g) => g.note.map((n) => n.title))', [['Milk'], ['Email']]),
    ex("List.grouping(Note.anyList().title('Email')).map((g) => g.list.title)", ['Work']),
    fails('List.grouping(Task.all())', 500),
  ],
  'by id': [
    ex("const id = Task.title('Write docs').get().id;\nTask.get(id).title", 'Write docs'),
    ex("Task.optional('tsk_nothing')", null),
    ex("const id = Task.title('Write docs').get().id;\nTask.exists(id)", true),
    ex("Task.exists(Person.name('Ann').get().id)", false),
    ex("const t = Task.title('Write docs').get();\nTask.get(t).title", 'Write docs'),
  ],
  links: [
    ex(
      "const t = Task.title('Write docs').get();\n({id: t.owner.id == Person.name('Ann').get().id, linked: t.owner.linked(),\n  name: t.owner.get().name, opt: t.owner.optional().name, exists: t.owner.exists()})",
      { id: true, linked: true, name: 'Ann', opt: 'Ann', exists: true },
    ),
    ex("const t = Task.title('Fix bug').get();\n({id: t.owner.id, linked: t.owner.linked(), opt: t.owner.optional(), exists: t.owner.exists()})", { id: null, linked: false, opt: null, exists: false }),
    ex('Task.owner(null).map((t) => t.title)', ['Fix bug', 'Ship']),
    ex("Task.owner(Person.name('Ann').get().id).count()", 2),
  ],
  options: [
    ex('Task.status.active', 'active'),
    ex("Task.status.optionLabel('done')", 'Done'),
    ex("Task.status.optionLabel('nope')", null),
  ],
  'field metadata': [
    ex(
      '({label: Task.title.label, placeholder: Task.title.placeholder, about: Task.title.about,\n  required: Task.title.required, optional: Task.title.optional})',
      { label: 'Title', placeholder: 'What needs doing?', about: 'One line, shown in lists', required: true, optional: false },
    ),
    ex('({label: Task.due.label, placeholder: Task.due.placeholder, required: Task.due.required})', { label: 'Due', placeholder: null, required: false }),
  ],
  'hierarchy values': [
    ex(
      "const h = Step.title('Test').get().hierarchy;\n({value: h.value, hasParent: h.hasParent, parent: h.parent(),\n  previous: h.previous().value, next: h.next().value, before: h.before('/4/').value})",
      { value: '/1/', hasParent: false, parent: null, previous: '/0/', next: '/2/', before: '/2/' },
    ),
    ex("Step.hierarchy_gt('/0/').asc().map((s) => s.title)", ['Build', 'Test']),
  ],
  errors: [
    ex("let found = 'yes';\ntry { Task.get('tsk_nothing') } catch ($ModelNotFound) { found = 'no' }\nfound", 'no'),
    fails("let r = 'none';\ntry { let x = null; r = x.y } catch ($ModelNotFound) { r = 'caught' }\nr", 500),
    fails("let r = 'none';\ntry { Task.get('tsk_nothing') } catch ($ModelInvalid) { r = 'caught' }\nr", 404),
    ex("let r = 'none';\ntry { Task.get('tsk_nothing') } catch (e) { r = e.name + ': ' + e.message }\nr", 'ModelNotFound: Task not found'),
    ex(
      "const t = Task.title('Write docs').get();\nlet message = null;\ntry { t.title = 'x'.repeat(101) } catch ($ModelInvalid) { message = $ModelInvalid.message }\n({message: message, title: t.title})",
      { message: 'Title must be at most 100 characters long (it has 101)', title: 'Write docs' },
    ),
    fails("Task.title('Write docs').get().points = 0\n;({})", 500),
    fails("const q = Task.all()\nq.modify((t) => { t.points = 0 })", 500),
  ],
  'JSON output': [
    fails("Task.title('Fix bug').get()", 200, {
      check: (r) => {
        const t = json(r) as Record<string, unknown>;
        assert.match(String(t.id), ID);
        assert.match(String(t.created), ISO);
        assert.equal(t.modified, t.created);
        assert.deepEqual(t, { id: t.id, created: t.created, modified: t.created, title: 'Fix bug', status: 'done', points: 5, due: '2024-05-01T12:00:00.000Z', owner: null, tags: [] });
        assert.deepEqual(Object.keys(t), ['id', 'created', 'modified', 'title', 'status', 'points', 'due', 'owner', 'tags']);
      },
    }),
    fails("Task.title('Write docs').get().owner", 200, { check: (r) => assert.match(String(json(r)), PER_ID) }),
    fails("Step.title('Build').get()", 200, {
      check: (r) => {
        const s = json(r) as Record<string, unknown>;
        assert.deepEqual(s, { id: s.id, created: s.created, modified: s.modified, title: 'Build', hierarchy: '/0.5/' });
      },
    }),
    ex("Task.status('done').map((t) => t.title)", ['Fix bug', 'Ship']),
    ex("Step.title('Build').get().hierarchy", '/0.5/'),
    fails("Step.title('Build').get().hierarchy.value", 302, { check: (r) => assert.equal(r.headers.location, '/0.5/') }),
    fails("Task.status('done')", 200, {
      check: (r) => assert.deepEqual((json(r) as Array<{ title: string; status: string }>).map((t) => [t.title, t.status]), [['Fix bug', 'done'], ['Ship', 'done']]),
    }),
    fails("({owner: Task.title('Write docs').get().owner, tags: Task.title('Write docs').get().tags, q: Task.points_gte(5)})", 200, {
      check: (r) => {
        const o = json(r) as { owner: string; tags: string[]; q: Array<{ title: string }> };
        assert.match(o.owner, PER_ID);
        assert.deepEqual(o.tags, ['docs']);
        assert.deepEqual(o.q.map((t) => t.title), ['Fix bug']);
      },
    }),
  ],
};

describe('docs/queries.md — reading the sample records', () => {
  const files: AppFiles = {
    'lists/{list}/🔗.yaml': 'field: 📦.List.id\n',
    'lists/{list}/GET.js': `${IMPORTS}Note.all().map((n) => n.title)\n`,
    'home/GET.js': `${IMPORTS}List.title('Home').get().id\n`,
  };
  for (const [area, list] of Object.entries(READS)) addEndpoints(files, `r/${area.replace(/[^a-z]+/gi, '-')}`, 'GET', list);
  let s: Served;
  before(async () => {
    s = await seeded(files);
  });
  after(() => s.close());

  for (const [area, list] of Object.entries(READS)) {
    describe(area, () => runExamples(() => s, `r/${area.replace(/[^a-z]+/gi, '-')}`, 'GET', list));
  }

  it('a model-backed path parameter selects the container: GET /lists/{list}', async () => {
    const home = json(await s.get('/home', JSON_H)) as string;
    assert.deepEqual(json(await s.get(`/lists/${home}`, JSON_H)), ['Milk', 'Bread']);
    assert.equal((await s.get('/lists/nope', JSON_H)).status, 404, 'an id that names no list is not found before the script runs');
  });
});

// ---------------------------------------------------------------------------------------------
// Examples that write (POST scripts); none depends on another.

const WRITES: Record<string, Example[]> = {
  creating: [
    fails("new Task().title('Plan trip')", 200, {
      check: (r) => {
        const t = json(r) as Record<string, unknown>;
        assert.match(String(t.id), ID);
        assert.match(String(t.created), ISO);
        assert.deepEqual(t, { id: t.id, created: t.created, modified: t.created, title: 'Plan trip', status: 'active', points: null, due: null, owner: null, tags: [] });
      },
    }),
    ex("new Task().title('Call Bob').status('done').points(2).points", 2),
  ],
  'changing, removing, copying': [
    ex("const t = Task.title('Review').get();\nt.title = 'Review again';\nt.points += 3;\n({title: t.title, points: t.points})", { title: 'Review again', points: 4 }),
    ex("Task.title('Ship').get().remove();\nTask.title('Ship').exists()", false),
    fails("const c = Task.title('Write docs').get().copy();\nc.title = 'Write more docs';\n({title: c.title, points: c.points, tags: c.tags, owner: c.owner})", 200, {
      check: (r) => {
        const c = json(r) as Record<string, unknown>;
        assert.match(String(c.owner), PER_ID);
        assert.deepEqual(c, { title: 'Write more docs', points: 3, tags: ['docs'], owner: c.owner });
      },
    }),
    ex("Task.title('Write docs').get().copyable", true),
    ex("Person.name('Bob').get().copyable", false),
  ],
  'modify(fn)': [
    ex("const n = Task.points_gte(5).modify((t) => { t.points = 0 });\n({modified: n, points: Task.title('Fix bug').get().points})", { modified: 1, points: 0 }),
    ex("Task.status('done').modify((t) => { t.remove() })\n;Task.status('done').count()", 0),
  ],
  'string lists': [
    ex(
      "const t = new Task().title('Tagged');\nt.tags.add('docs');\nt.tags.add('review');\nt.tags.add('docs');\n({tags: t.tags, length: t.tags.length, has: t.tags.contains('review')})",
      { tags: ['docs', 'review'], length: 2, has: true },
    ),
    ex(
      "const t = new Task().title('Rolling');\nt.tags.put('a'); t.tags.put('b'); t.tags.put('c'); t.tags.put('d');\n({tags: t.tags, removed: t.tags.remove('b'), again: t.tags.remove('b')})",
      { tags: ['c', 'd'], removed: true, again: false },
    ),
    fails("const t = new Task().title('Full');\nt.tags.add('a'); t.tags.add('b'); t.tags.add('c'); t.tags.add('e');\nt", 422, {
      check: (r) => assert.deepEqual(json(r), { messages: [{ type: 'error', field: 'Task_tags', value: 'Tags holds at most 3 entries' }] }),
    }),
    ex(
      "const t = new Task().title('Assigned');\nt.tags = ['x', 'y', 'x'];\nconst removed = t.tags.removeIf((v) => v == 'y');\n({tags: t.tags, removed: removed, m: t.tags.map((v) => v + '!'), includes: t.tags.includes('x'), first: t.tags.get()})",
      { tags: ['x'], removed: true, m: ['x!'], includes: true, first: 'x' },
    ),
  ],
  'hierarchy values': [ex("({parent: new Step().title('Sub').hierarchy('/1/2/').hierarchy.parent().value})", { parent: '/1/' })],
  errors: [
    fails("new Task().title('x'.repeat(101))", 422, {
      check: (r) => assert.deepEqual(json(r), { messages: [{ type: 'error', field: 'Task_title', value: 'Title must be at most 100 characters long (it has 101)' }] }),
    }),
    fails('new Task()\n;({})', 422, {
      check: (r) => assert.deepEqual(json(r), { messages: [{ type: 'error', field: 'Task_title', value: 'Title is required' }] }),
    }),
    fails("new Person().name('Ann')\n;({})", 409, {
      check: (r) => assert.deepEqual(json(r), { error: 'another Person has this Name already ("name" is unique)' }),
    }),
    fails("Task.title('Write docs').get().status = 'nope'\n;({})", 422, {
      check: (r) => assert.deepEqual(json(r), { messages: [{ type: 'error', field: 'Task_status', value: 'Status must be one of active, done' }] }),
    }),
    fails("List.title('Work').get().remove()\n;({})", 409),
  ],
};

describe('docs/queries.md — changing records', () => {
  const files: AppFiles = {
    'lists/{list}/🔗.yaml': 'field: 📦.List.id\n',
    'lists/{list}/GET.js': `${IMPORTS}Note.all().map((n) => n.title)\n`,
    'lists/{list}/POST.js': `${IMPORTS}import {title} from 'form'\nnew Note().title(title).list().get().title\n`,
    'lists/{list}/📮explicit.js': `${IMPORTS}new Note(List.title('Work').get()).title('Call').list().get().title\n`,
    'home/GET.js': `${IMPORTS}List.title('Home').get().id\n`,
    'tasks/GET.js': `${IMPORTS}Task.all().map((t) => t.title)\n`,
  };
  for (const [area, list] of Object.entries(WRITES)) addEndpoints(files, `w/${area.replace(/[^a-z]+/gi, '-')}`, 'POST', list);
  let s: Served;
  before(async () => {
    s = await seeded(files);
  });
  after(() => s.close());

  for (const [area, list] of Object.entries(WRITES)) {
    describe(area, () => runExamples(() => s, `w/${area.replace(/[^a-z]+/gi, '-')}`, 'POST', list));
  }

  it('failed requests stored nothing: the sample tasks left, the created ones, none of the failures', async () => {
    // Ship, Fix bug and Call Bob were removed (remove(), and modify() on the done tasks).
    const titles = json(await s.get('/tasks', JSON_H)) as string[];
    assert.deepEqual(titles, ['Write docs', 'Review again', 'Plan trip', 'Write more docs', 'Tagged', 'Rolling', 'Assigned']);
  });

  it('a model-backed path parameter selects the container for new records: POST /lists/{list}', async () => {
    const home = json(await s.get('/home', JSON_H)) as string;
    const r = await s.request('POST', `/lists/${home}`, FORM_H, form({ title: 'Eggs' }));
    assert.equal(r.status, 200, r.text);
    assert.equal(json(r), 'Home');
    assert.deepEqual(json(await s.get(`/lists/${home}`, JSON_H)), ['Milk', 'Bread', 'Eggs']);
  });

  it('an explicit container wins over the path parameter', async () => {
    const home = json(await s.get('/home', JSON_H)) as string;
    const r = await s.request('POST', `/lists/${home}/explicit`, FORM_H, '');
    assert.equal(json(r), 'Work');
    assert.deepEqual(json(await s.get(`/lists/${home}`, JSON_H)), ['Milk', 'Bread', 'Eggs']);
  });
});

// ---------------------------------------------------------------------------------------------
// The unordered cap, with 150 active tasks.

const CAP: Example[] = [
  ex("Task.status('active').map((t) => t.id).count()", 100),
  ex("Task.status('active').limit(150).map((t) => t.id).count()", 150),
  ex("Task.status('active').asc().map((t) => t.id).count()", 150),
  fails("Task.status('active').limit(600).map((t) => t.id).count()", 500),
  ex("Task.status('active').limit(500).map((t) => t.id).count()", 150),
  ex('Task.all().limit(600).count()', 150),
  ex('Task.all().map((t) => t.id).count()', 150),
  ex("Task.status('active').map((t) => t.title).get()", 't0'),
  ex("Task.status('active').asc().count()", 150),
  ex("Task.status('active').count()", 150),
  ex("Task.status('active').sum(Task.points)", 150),
  ex("Task.status('active').avg(Task.points)", 1),
  ex("Task.status('active').limit(120).count()", 120),
  ex("Task.status('active').limit(120).sum(Task.points)", 120),
];

describe('docs/queries.md — unordered queries are capped at 100', () => {
  const files: AppFiles = {
    ...MODELS,
    'add/POST.js': `${IMPORTS}import {from} from 'form'\nArray.from({length: 75}, (_, i) => new Task().title('t' + (Number(from) + i)).points(1))\n;({})\n`,
  };
  files['modify/POST.js'] = `${IMPORTS}Task.status('active').modify((t) => { t.points = 2 })\n`;
  files['sum/GET.js'] = `${IMPORTS}Task.all().sum(Task.points)\n`;
  addEndpoints(files, 'cap', 'GET', CAP);
  let s: Served;
  before(async () => {
    s = await serve(files);
    for (const from of ['0', '75']) assert.equal((await s.request('POST', '/add', FORM_H, form({ from }))).status, 200);
  });
  after(() => s.close());
  runExamples(() => s, 'cap', 'GET', CAP);

  it('modify() on an unordered query reaches the first 100 records only', async () => {
    const r = await s.request('POST', '/modify', FORM_H, '');
    assert.equal(r.status, 200, r.text);
    assert.equal(json(r), 100);
    assert.equal(json(await s.get('/sum', JSON_H)), 250);
  });
});

// ---------------------------------------------------------------------------------------------
// Adversarial cases.

describe('queries: adversarial cases', () => {
  const M = "import {Item, Other, Log} from '📦'\n";
  const files: AppFiles = {
    '📦/🌐Item.yaml': '🎛:\n  prefix: itm_\nname:\n  type: string\n  order: true\nmeta: map\nn?: integer\n',
    '📦/🌐Other.yaml': '🎛:\n  prefix: oth_\nname: string\n',
    '📦/🌐Log.yaml': 'batch: string\nn: integer\n',
    'items/POST.js': `${M}import {name} from 'form'\nnew Item().name(name).id\n`,
    'items/GET.js': `${M}Item.all().map((i) => i.name)\n`,
    'items/eq/GET.js': `${M}import {name} from '&'\n({eq: Item.name(name).map((i) => i.name), gte: Item.name_gte(name).asc().limit(1).map((i) => i.name), count: Item.name(name).count()})\n`,
    'items/after-z/GET.js': `${M}Item.name_gt('z').asc().map((i) => i.name)\n`,
    'items/map/GET.js': `${M}const q = Item.all()\nq.meta({a: 1}).count()\n`,
    'items/map-stored/POST.js': `${M}const i = new Item().name('with map'); i.meta = {a: 1, b: 'x'}; i.meta\n`,
    'items/unknown/GET.js': `${M}const q = Item.all()\nq.bogus('x').count()\n`,
    'items/unknown-chained/GET.js': `${M}Item.all().bogus('x').count()\n`,
    'items/limit600/GET.js': `${M}Item.name_gte('').limit(600).count()\n`,
    'items/limit600-ordered/GET.js': `${M}Item.name_gte('').asc().limit(600).count()\n`,
    'items/other/GET.js': `${M}const o = Other.all().get();\n({opt: Item.optional(o.id), exists: Item.exists(o.id), q: Item.all().id(o.id).count()})\n`,
    'items/other-get/GET.js': `${M}Item.get(Other.all().get().id)\n`,
    'items/other-record/GET.js': `${M}Item.get(Other.all().get())\n`,
    'items/other-query/GET.js': `${M}Item.all().id(Other.all().get().id).get()\n`,
    'others/POST.js': `${M}new Other().name('o').id\n`,
    'logs/GET.js': `${M}import {batch} from '&'\nLog.batch(batch).asc().map((l) => l.n)\n`,
    'logs/count/GET.js': `${M}Log.all().count()\n`,
    'logs/throw/POST.js': `${M}new Log().batch('thrown').n(1)\nthrow 'no'\n`,
    'logs/crash/POST.js': `${M}new Log().batch('crash').n(1)\nlet x = null\nx.y\n`,
    'logs/invalid/POST.js': `${M}new Log().batch('invalid').n(1)\nnew Log().batch('invalid').n(-1)\n;({})\n`,
    'logs/w101/POST.js': `${M}Array.from({length: 101}, (_, i) => new Log().batch('w101').n(i))\n;({})\n`,
    'logs/w100/POST.js': `${M}Array.from({length: 100}, (_, i) => new Log().batch('w100').n(i))\n;({})\n`,
    'logs/pair/POST.js': `${M}const a = new Log().batch('pair').n(1)\nconst b = new Log().batch('pair').n(2)\n;({ordered: a.created.getTime() < b.created.getTime()})\n`,
    'logs/ten/POST.js': `${M}Array.from({length: 10}, (_, i) => new Log().batch('ten').n(i))\n;({})\n`,
    'logs/merged/POST.js': `${M}Array.from({length: 60}, (_, i) => { const l = new Log().batch('merged').n(i); l.n += 1; l.n -= 1 })\nArray.from({length: 50}, (_, i) => new Log().batch('gone').n(i).remove())\nArray.from({length: 40}, (_, i) => new Log().batch('merged').n(60 + i))\n;({})\n`,
  };
  let s: Served;
  before(async () => {
    s = await serve(files);
  });
  after(() => s.close());

  const names = ['b', 'Z', 'a', 'é', 'É', 'e', 'z', '日本', 'ｚ', '😀', 'A', "it's", 'say "hi"', '100%', 'a_b', '%', '_', "' OR '1'='1", '\\', 'a%'];

  it('stores names with quotes, %, _ and backslashes as sent', async () => {
    for (const name of names) {
      const r = await s.request('POST', '/items', FORM_H, form({ name }));
      assert.equal(r.status, 200, r.text);
    }
  });

  it('orders non-ASCII text bytewise (UTF-8), not by locale nor by UTF-16 code units', async () => {
    const got = json(await s.get('/items', JSON_H)) as string[];
    const bytewise = [...names].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
    assert.deepEqual(got, bytewise);
    assert.deepEqual(got, ['%', "' OR '1'='1", '100%', 'A', 'Z', '\\', '_', 'a', 'a%', 'a_b', 'b', 'e', "it's", 'say "hi"', 'z', 'É', 'é', '日本', 'ｚ', '😀']);
    // JavaScript's own sort (UTF-16) puts 😀 (a surrogate pair, 0xD83D…) before ｚ (0xFF5A).
    assert.notDeepEqual(got, [...names].sort());
    assert.deepEqual(json(await s.get('/items/after-z', JSON_H)), ['É', 'é', '日本', 'ｚ', '😀']);
  });

  for (const name of ['%', '_', 'a%', "' OR '1'='1", 'say "hi"', "it's", '\\', '100%']) {
    it(`equality and ranges take ${JSON.stringify(name)} literally (no LIKE, no injection)`, async () => {
      const r = await s.get(`/items/eq?name=${encodeURIComponent(name)}`, JSON_H);
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(json(r), { eq: [name], gte: [name], count: 1 });
    });
  }

  it('a value matching nothing answers nothing (no pattern matching)', async () => {
    assert.deepEqual(json(await s.get(`/items/eq?name=${encodeURIComponent('%%')}`, JSON_H)), { eq: [], gte: ["' OR '1'='1"], count: 0 });
    assert.deepEqual(json(await s.get(`/items/eq?name=${encodeURIComponent('a_')}`, JSON_H)), { eq: [], gte: ['a_b'], count: 0 });
  });

  it('a query on a map field is refused (500), and the map is still stored and read', async () => {
    assert.equal((await s.get('/items/map', JSON_H)).status, 500);
    const r = await s.request('POST', '/items/map-stored', FORM_H, '');
    assert.deepEqual(json(r), { a: 1, b: 'x' });
  });

  it('a query on an unknown field is refused (500), also on a query', async () => {
    for (const path of ['/items/unknown', '/items/unknown-chained']) {
      const r = await s.get(path, JSON_H);
      assert.equal(r.status, 500);
      assert.deepEqual(json(r), { error: `Something went wrong on our side. The error was logged with id ${r.headers['x-request-id']}.` });
    }
  });

  it('limit(600) on an unordered query is refused; ordered, it is a plain limit', async () => {
    assert.equal((await s.get('/items/limit600', JSON_H)).status, 500);
    const r = await s.get('/items/limit600-ordered', JSON_H);
    assert.equal(r.status, 200);
    assert.equal(json(r), names.length + 1);
  });

  it("get() with another model's id: not found; optional() null; exists() false; passing its record is an error", async () => {
    assert.equal((await s.request('POST', '/others', FORM_H, '')).status, 200);
    assert.deepEqual(json(await s.get('/items/other', JSON_H)), { opt: null, exists: false, q: 0 });
    assert.equal((await s.get('/items/other-get', JSON_H)).status, 404, 'Item.get(id of an Other) throws $ModelNotFound');
    assert.equal((await s.get('/items/other-query', JSON_H)).status, 404);
    assert.equal((await s.get('/items/other-record', JSON_H)).status, 500);
  });

  it('a script that throws after creating a record stores nothing (400, 500, 422)', async () => {
    const thrown = await s.request('POST', '/logs/throw', FORM_H, '');
    assert.equal(thrown.status, 400);
    assert.deepEqual(json(thrown), { error: 'no' });
    assert.equal((await s.request('POST', '/logs/crash', FORM_H, '')).status, 500);
    const invalid = await s.request('POST', '/logs/invalid', FORM_H, '');
    assert.equal(invalid.status, 422);
    assert.equal((json(invalid) as { messages: Array<{ field: string }> }).messages[0]!.field, 'Log_n');
    for (const batch of ['thrown', 'crash', 'invalid']) assert.deepEqual(json(await s.get(`/logs?batch=${batch}`, JSON_H)), []);
    assert.equal(json(await s.get('/logs/count', JSON_H)), 0);
  });

  it('101 writes in one request fail (500) and store nothing; 100 are fine', async () => {
    const r = await s.request('POST', '/logs/w101', FORM_H, '');
    assert.equal(r.status, 500);
    assert.equal(json(await s.get('/logs/count', JSON_H)), 0);
    assert.equal((await s.request('POST', '/logs/w100', FORM_H, '')).status, 200);
    assert.equal(json(await s.get('/logs/count', JSON_H)), 100);
  });

  it('a record created and changed in the same request is one write; one created and removed is none', async () => {
    const r = await s.request('POST', '/logs/merged', FORM_H, '');
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(json(await s.get('/logs?batch=merged', JSON_H)), Array.from({ length: 100 }, (_, i) => i));
    assert.deepEqual(json(await s.get('/logs?batch=gone', JSON_H)), []);
  });

  it('records created in one request keep their creation order', async () => {
    const r = await s.request('POST', '/logs/pair', FORM_H, '');
    assert.deepEqual(json(r), { ordered: true });
    assert.deepEqual(json(await s.get('/logs?batch=pair', JSON_H)), [1, 2]);
    await s.request('POST', '/logs/ten', FORM_H, '');
    assert.deepEqual(json(await s.get('/logs?batch=ten', JSON_H)), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });
});
