/**
 * Field permissions on every way a value leaves a record, and on queries (docs/permissions.md
 * "What each call needs", docs/security.md "Field permissions and queries"), black-box over HTTP
 * against a real server on both engines, with users signed in by the development sign-in.
 *
 * Bob, a `Viewer`, may find, list and create items and read their `title`, not their `secret`,
 * `code` or `spot`; he may list people (ordered by `name`, which he may not read) and steps (ordered
 * by their `hierarchy` field, which he may not read). In team A he is a `TeamViewer` (every field
 * of a board), in team B a `TeamLister` (a board's `title` only). Ada is an `Admin`.
 *
 * - A value the visitor may not read never leaves the record: not through `copy()` (read, copied
 *   again, in a view, a form view or an event stream), `map`, `forEach`, `flatMap`, `filter`,
 *   `sum`/`avg`, `distinct`, JSON of a record or a list, a view, a form view started from the
 *   record, an event stream's data, `hasRole` on another user's profile, nor a new record's
 *   hierarchy position (taken from the last stored one).
 * - A query that filters on such a field (equality, ranges, embedded matches), or is ordered by
 *   it (the natural order of `order: true` and hierarchy fields), answers as reading the field
 *   does — 403, `Permission denied: read on 📦.Item.secret.` — before it runs, so that the answer
 *   is the same whether records match or not.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { closeAppData, loadApp, openAppData } from '../../src/app/index.js';
import { parseDevUsers } from '../../src/auth/index.js';
import { createServer } from '../../src/http/index.js';
import { jsonWithoutId, writeApp, type Response } from '../helpers.js';
import { ENGINES } from '../support/engines.js';
import { TestVisitor } from '../support/visitor.js';

const JSON_ACCEPT = { Accept: 'application/json' };
const DENIED_SECRET = { error: 'Permission denied: read on 📦.Item.secret.' };

const APP: Record<string, string> = {
  '👤.yaml': [
    // github is not configured in the tests: the development sign-in's test users sign in.
    'providers: [github]',
    'auth: required',
    '',
    'default:',
    '  📦.Member: access, list',
    '  📦.Member.nickname: read',
    '',
    'Admin: all',
    '',
    'Viewer:',
    '  📦.Item: access, list, create, delete',
    '  📦.Item.title: read, update',
    '  📦.Item.secret: update',
    '  📦.Person: access, list',
    '  📦.Step: access, list, create',
    '  📦.Step.title: read, update',
    '  📦.Team: access, list, read',
    '',
    'TeamViewer:',
    '  📦.Board: access, list, read',
    '',
    'TeamLister:',
    '  📦.Board: access, list',
    '  📦.Board.title: read',
    '',
  ].join('\n'),
  '📦/🌐Item.yaml': 'title: string\nsecret?: integer\ncode?: string\nspot?:\n  type:\n    city: string\n',
  '📦/🌐Person.yaml': 'name:\n  type: string\n  order: true\n',
  '📦/🌐Step.yaml': 'title: string\nhierarchy: hierarchy\n',
  '📦/👤Member.yaml': 'nickname?: string\n',
  '📦/🌐Team.yaml': 'name: string\n',
  '📦/Team/👤TeamMember.yaml': 'nickname?: string\n',
  '📦/Team/🌐Board.yaml': 'title: string\nsecret?: integer\n',

  // Setup, run as Admin: the records, and the signed-in user's profiles.
  'setup/📮seed.js': [
    "import {Item, Person, Step, Team, Board} from '📦';",
    "const alpha = new Item().title('Alpha').secret(42).code('k-1').spot({city: 'Oslo'});",
    "new Item().title('Beta').secret(7).code('k-2');",
    "const zed = new Person().name('Zed');",
    "new Person().name('Ann');",
    "new Step().title('One');",
    "new Step().title('Two');",
    "const a = new Team().name('A');",
    "const b = new Team().name('B');",
    "new Board(a).title('a1').secret(5);",
    "new Board(b).title('b1').secret(50);",
    '({item: alpha.id, person: zed.id, a: a.id, b: b.id});',
  ].join('\n'),
  'setup/📮seed.yaml': '👤: {as: Admin}\n',
  'setup/📮member.js': "import {Me} from '👤';\nimport {Member} from '📦';\nimport {role} from 'form';\nnew Member().user(Me).role(role).nickname(Me.name);\n({ok: true});\n",
  'setup/📮member.yaml': '👤: {as: Admin}\n',
  'setup/teams/{team}/🔗.yaml': 'field: 📦.Team.id\n',
  'setup/teams/{team}/📮join.js': "import {Me} from '👤';\nimport {team} from '🔗';\nimport {TeamMember} from '📦';\nimport {role} from 'form';\nnew TeamMember(team).user(Me).role(role);\n({ok: true});\n",
  'setup/teams/{team}/📮join.yaml': '👤: {as: Admin}\n',

  // ---- Every way a value leaves a record ----------------------------------------------------
  'api/🖥read.js': "import {Item} from '📦';\nimport {id} from '&';\n({secret: Item.get(id).secret});\n",
  // A copy is not written (removed before the end): only its values are read.
  'api/📮copy.js': "import {Item} from '📦';\nimport {id} from '&';\nconst c = Item.get(id).copy();\nconst secret = c.secret;\nc.remove();\n({secret});\n",
  'api/📮copy-copy.js':
    "import {Item} from '📦';\nimport {id} from '&';\nconst first = Item.get(id).copy();\nconst c = first.copy();\nconst secret = c.secret;\nc.remove();\nfirst.remove();\n({secret});\n",
  // A value the script sets on the copy is its own.
  'api/📮copy-set.js':
    "import {Item} from '📦';\nimport {id} from '&';\nconst c = Item.get(id).copy();\nc.secret = 3;\nconst out = {secret: c.secret, title: c.title};\nc.remove();\n(out);\n",
  // A copy that is written is a stored record: its fields take read, as the original's.
  'api/📮copy-saved.js': "import {Item} from '📦';\nimport {id} from '&';\nconst c = Item.get(id).copy();\nc.title = 'Alpha copy';\n({copy: c});\n",
  'api/📮remove.js': "import {Item} from '📦';\nimport {id} from '&';\nItem.get(id).remove();\n({ok: true});\n",
  // A copy a supplier makes (not written: a page only reads), shown by a page and a form view.
  '📤/Copy.js': "import {Item} from '📦';\nimport {id} from '&';\nconst Copied = Item.get(id).copy();\nexport {Copied};\n",
  'copied.html':
    "<!--TEMPLATE mustache-->\n{{% import {Copied} from '📤' }}{{% import {Item} from '📦' }}<p>{{Copied.title}}={{Copied.secret}}</p>" +
    '{{#Item.Form.view Copied}}<input name="{{secret.path}}" {{{secret.input.attributes}}}>{{/Item.Form.view}}\n',
  'api/🖥json.js': "import {Item} from '📦';\nimport {id} from '&';\n({item: Item.get(id), all: Item.title('Alpha').asc()});\n",
  'api/🖥map.js': "import {Item} from '📦';\n(Item.all().map((i) => i.secret));\n",
  'api/🖥foreach.js': "import {Item} from '📦';\nlet total = 0;\nItem.all().forEach((i) => { total += i.secret; });\n({total});\n",
  'api/🖥flatmap.js': "import {Item} from '📦';\n(Item.all().flatMap((i) => [i.title, i.secret]));\n",
  'api/🖥filter.js': "import {Item} from '📦';\n({n: Item.all().filter((i) => i.secret > 10).count()});\n",
  'api/🖥sum.js': "import {Item} from '📦';\n({sum: Item.all().sum(Item.secret)});\n",
  'api/🖥avg-after-filter.js': "import {Item} from '📦';\n({avg: Item.all().filter((i) => true).avg(Item.secret)});\n",
  'api/🖥distinct.js': "import {Item} from '📦';\n(Item.all().map((i) => i.secret).distinct());\n",
  'api/🖥distinct-records.js': "import {Item} from '📦';\n(Item.title('Alpha').asc().distinct());\n",
  'api/🖥roles.js': "import {Role} from '👤';\nimport {Member} from '📦';\n({admins: Member.all().map((m) => m.hasRole(Role.Admin))});\n",
  'api/🖥my-role.js': "import {Role} from '👤';\nimport {Member} from '📦';\nconst m = Member.me().get();\n({viewer: m.hasRole(Role.Viewer), nickname: m.nickname});\n",
  'api/📮step.js': "import {Step} from '📦';\nconst s = new Step().title('Three');\nconst position = s.hierarchy.value;\ns.remove();\n({position});\n",
  'api/📮step-moved.js': "import {Step} from '📦';\nconst s = new Step().title('Three').hierarchy('/7/');\nconst position = s.hierarchy.value;\ns.remove();\n({position});\n",
  'items.html': "<!--TEMPLATE mustache-->\n{{% import {Item} from '📦' }}<ul>{{#Item.all as i}}<li>{{i.title}}={{i.secret}}</li>{{/Item.all}}</ul>\n",
  'items/{item}/🔗.yaml': 'field: 📦.Item.id\n',
  'items/{item}/edit.html':
    "<!--TEMPLATE mustache-->\n{{% import {item} from '🔗' }}{{% import {Item} from '📦' }}{{#item.get as it}}{{#Item.Form.view it}}" +
    '<input name="{{title.path}}" {{{title.input.attributes}}}><input name="{{secret.path}}" {{{secret.input.attributes}}}>' +
    '{{/Item.Form.view}}{{/item.get}}\n',
  'api/⏱stream.js': "import {Item} from '📦';\nimport {id} from '&';\n(lastEventId) => [{item: Item.get(id), $event: {last: true}}];\n",
  // A polled call only reads: its copy is never written.
  'api/⏱stream-copy.js': "import {Item} from '📦';\nimport {id} from '&';\n(lastEventId) => [{copy: Item.get(id).copy(), $event: {last: true}}];\n",

  // ---- Queries that filter, order or aggregate on a field -----------------------------------
  'api/🖥query.js': [
    "import {Item, Person, Step} from '📦';",
    "import {which, v, id} from '&';",
    'const n = Number(v);',
    'const cases = {',
    '  gt: () => Item.secret_gt(n).count(),',
    '  gte: () => Item.secret_gte(n).exists(),',
    '  lt: () => Item.secret_lt(n).map((i) => i.title),',
    '  lte: () => Item.secret_lte(n).asc().get().title,',
    '  eq: () => Item.secret(n).optional(),',
    '  chained: () => Item.all().secret(n).count(),',
    "  code: () => Item.code('k-1').count(),",
    "  spot: () => Item.spot({city: 'Oslo'}).count(),",
    "  title: () => Item.title('Alpha').count(),",
    "  titleRange: () => Item.title_gte('B').map((i) => i.title),",
    "  created: () => Item.created_gt('2000-01-01').count(),",
    '  people: () => Person.all().map((p) => p.id),',
    '  peopleDesc: () => Person.all().desc().get().id,',
    '  peopleCount: () => Person.all().count(),',
    '  peopleLimited: () => Person.all().limit(1).count(),',
    '  person: () => Person.get(id).id,',
    '  steps: () => Step.all().map((s) => s.title),',
    '  stepsCount: () => Step.all().count(),',
    '};',
    '({value: cases[which]()});',
  ].join('\n'),
  'teams/{team}/🔗.yaml': 'field: 📦.Team.id\n',
  'teams/{team}/🖥boards.js': "import {team} from '🔗';\nimport {Board} from '📦';\nimport {v} from '&';\n({count: Board.team(team).secret_gt(Number(v)).count()});\n",
  'api/🖥any-boards.js': "import {Board} from '📦';\nimport {v, title} from '&';\n(title ? Board.anyTeam().title(title).map((b) => b.title) : Board.anyTeam().secret_gt(Number(v)).map((b) => b.title));\n",
  'teams/{team}/🖥titles.js': "import {team} from '🔗';\nimport {Board} from '📦';\nimport {title} from '&';\n(Board.team(team).title(title).map((b) => b.title));\n",
  'api/🖥grouping.js':
    "import {Team, Board} from '📦';\nimport {v, title} from '&';\n" +
    '(Team.grouping(title ? Board.anyTeam().title(title) : Board.anyTeam().secret_gt(Number(v))).map((g) => g.team.name));\n',
};

interface World {
  ada: TestVisitor;
  bob: TestVisitor;
  ids: { item: string; person: string; a: string; b: string };
}

const json = (r: Response): unknown => {
  try {
    return jsonWithoutId(r);
  } catch {
    throw new Error(`not JSON (${r.status}): ${r.text.slice(0, 300)}`);
  }
};

/** A 200 and its JSON. */
async function ok(r: Promise<Response>): Promise<unknown> {
  const res = await r;
  assert.equal(res.status, 200, res.text);
  return json(res);
}

/** A 403 answered as reading `resource` is: the same status, code and message. */
async function deniedRead(r: Promise<Response>, resource = '📦.Item.secret'): Promise<void> {
  const res = await r;
  assert.equal(res.status, 403, res.text);
  assert.deepEqual(json(res), { error: `Permission denied: read on ${resource}.` });
}


for (const engine of ENGINES) {
  describe(`field permissions on values and queries (${engine.name})`, () => {
    let dir = '';
    let close: () => Promise<void> = async () => {};
    let w: World;

    before(async () => {
      dir = writeApp(APP);
      const app = loadApp(dir);
      await openAppData(app, { ...(await engine.data()), log: { info: () => {}, error: () => {} } });
      const devUsers = parseDevUsers('Ada, Bob');
      if ('error' in devUsers) throw new Error(devUsers.error);
      app.data!.auth!.enableDevSignIn(devUsers.users);
      const server = createServer(app, { log: 'off' });
      const { port } = await server.listen(0, '127.0.0.1');
      close = async () => {
        await server.close();
        await closeAppData(app);
      };
      const signIn = async (id: string) => {
        const v = new TestVisitor(port);
        const done = await v.post(`/__/auth/dev/${id}`);
        assert.equal(done.status, 303, done.text);
        return v;
      };
      const ada = await signIn('ada');
      const bob = await signIn('bob');
      const ids = (await ok(ada.post('/setup/seed', {}, JSON_ACCEPT))) as World['ids'];
      await ok(ada.post('/setup/member', { role: 'Admin' }, JSON_ACCEPT));
      await ok(bob.post('/setup/member', { role: 'Viewer' }, JSON_ACCEPT));
      await ok(bob.post(`/setup/teams/${ids.a}/join`, { role: 'TeamViewer' }, JSON_ACCEPT));
      await ok(bob.post(`/setup/teams/${ids.b}/join`, { role: 'TeamLister' }, JSON_ACCEPT));
      w = { ada, bob, ids };
    });
    after(async () => {
      await close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    describe('a value the visitor may not read never leaves the record', () => {
      it('reading the field: 403 (the answer every other way is measured against)', async () => {
        await deniedRead(w.bob.get(`/api/read?id=${w.ids.item}`, JSON_ACCEPT));
        assert.deepEqual(await ok(w.ada.get(`/api/read?id=${w.ids.item}`, JSON_ACCEPT)), { secret: 42 });
      });

      it('copy(): the copied value reads as reading the original, also when copied again', async () => {
        await deniedRead(w.bob.post(`/api/copy?id=${w.ids.item}`, {}, JSON_ACCEPT));
        await deniedRead(w.bob.post(`/api/copy-copy?id=${w.ids.item}`, {}, JSON_ACCEPT));
        assert.deepEqual(await ok(w.ada.post(`/api/copy?id=${w.ids.item}`, {}, JSON_ACCEPT)), { secret: 42 });
        assert.deepEqual(await ok(w.ada.post(`/api/copy-copy?id=${w.ids.item}`, {}, JSON_ACCEPT)), { secret: 42 });
      });

      it('a value the script sets on a copy is its own', async () => {
        assert.deepEqual(await ok(w.bob.post(`/api/copy-set?id=${w.ids.item}`, {}, JSON_ACCEPT)), { secret: 3, title: 'Alpha' });
      });

      it('a copy in a view and in a form view started from it shows nothing for the field', async () => {
        const bob = await w.bob.get(`/copied?id=${w.ids.item}`);
        assert.equal(bob.status, 200, bob.text);
        assert.match(bob.text, /<p>Alpha=<\/p>/);
        const secret = /<input name="Item_secret"[^>]*>/.exec(bob.text)?.[0] ?? '';
        assert.ok(secret !== '' && !/value=/.test(secret), secret);
        const ada = await w.ada.get(`/copied?id=${w.ids.item}`);
        assert.match(ada.text, /<p>Alpha=42<\/p><input name="Item_secret" [^>]*value="42"/);
      });

      it('a copy that is written reads as the stored record it is', async () => {
        const copy = ((await ok(w.bob.post(`/api/copy-saved?id=${w.ids.item}`, {}, JSON_ACCEPT))) as { copy: Record<string, unknown> }).copy;
        assert.equal(copy.title, 'Alpha copy');
        assert.ok(!('secret' in copy), JSON.stringify(copy));
        const stored = (await ok(w.ada.get(`/api/read?id=${String(copy.id)}`, JSON_ACCEPT))) as { secret: unknown };
        assert.equal(stored.secret, 42, 'the copy holds the value all the same');
        await ok(w.bob.post(`/api/remove?id=${String(copy.id)}`, {}, JSON_ACCEPT));
      });

      it('JSON of a record and of a list leaves the field out', async () => {
        const a = (await ok(w.bob.get(`/api/json?id=${w.ids.item}`, JSON_ACCEPT))) as { item: Record<string, unknown>; all: Array<Record<string, unknown>> };
        for (const r of [a.item, ...a.all]) {
          assert.equal(r.title, 'Alpha');
          assert.ok(!('secret' in r) && !('code' in r) && !('spot' in r), JSON.stringify(r));
        }
        const full = (await ok(w.ada.get(`/api/json?id=${w.ids.item}`, JSON_ACCEPT))) as { item: Record<string, unknown> };
        assert.deepEqual([full.item.secret, full.item.code, full.item.spot], [42, 'k-1', { city: 'Oslo' }]);
      });

      it('map, forEach, flatMap, filter, sum and avg after a filter, distinct: 403 as reading', async () => {
        for (const path of ['/api/map', '/api/foreach', '/api/flatmap', '/api/filter', '/api/sum', '/api/avg-after-filter', '/api/distinct']) {
          await deniedRead(w.bob.get(path, JSON_ACCEPT));
        }
        assert.deepEqual(await ok(w.ada.get('/api/map', JSON_ACCEPT)), [42, 7]);
        assert.deepEqual(await ok(w.ada.get('/api/foreach', JSON_ACCEPT)), { total: 49 });
        assert.deepEqual(await ok(w.ada.get('/api/flatmap', JSON_ACCEPT)), ['Alpha', 42, 'Beta', 7]);
        assert.deepEqual(await ok(w.ada.get('/api/filter', JSON_ACCEPT)), { n: 1 });
        assert.deepEqual(await ok(w.ada.get('/api/sum', JSON_ACCEPT)), { sum: 49 });
        assert.deepEqual(await ok(w.ada.get('/api/avg-after-filter', JSON_ACCEPT)), { avg: 24.5 });
        assert.deepEqual(await ok(w.ada.get('/api/distinct', JSON_ACCEPT)), [42, 7]);
        const records = (await ok(w.bob.get('/api/distinct-records', JSON_ACCEPT))) as Array<Record<string, unknown>>;
        assert.equal(records.length, 1);
        assert.ok(!('secret' in records[0]!), JSON.stringify(records));
      });

      it('a view shows nothing for the field', async () => {
        const bob = await w.bob.get('/items');
        assert.equal(bob.status, 200, bob.text);
        assert.match(bob.text, /<li>Alpha=<\/li><li>Beta=<\/li>/);
        assert.match((await w.ada.get('/items')).text, /<li>Alpha=42<\/li><li>Beta=7<\/li>/);
      });

      it('a form view started from the record leaves the field empty', async () => {
        const bob = await w.bob.get(`/items/${w.ids.item}/edit`);
        assert.equal(bob.status, 200, bob.text);
        assert.match(bob.text, /<input name="Item_title" [^>]*value="Alpha"/);
        const secret = /<input name="Item_secret"[^>]*>/.exec(bob.text)?.[0] ?? '';
        assert.ok(secret !== '' && !/value=/.test(secret), secret);
        const ada = await w.ada.get(`/items/${w.ids.item}/edit`);
        assert.match(ada.text, /<input name="Item_secret" [^>]*value="42"/);
      });

      it("an event stream's data leaves the field out, of a record and of a copy", async () => {
        for (const path of ['/api/stream', '/api/stream-copy']) {
          const bob = await w.bob.get(`${path}?id=${w.ids.item}`);
          assert.equal(bob.status, 200, bob.text);
          const data = /^data: (.*)$/m.exec(bob.text)?.[1];
          assert.ok(data, bob.text);
          const record = Object.values(JSON.parse(data) as Record<string, Record<string, unknown>>)[0]!;
          assert.equal(record.title, 'Alpha');
          assert.ok(!('secret' in record), data);
          const ada = await w.ada.get(`${path}?id=${w.ids.item}`);
          assert.match(ada.text, /"secret":42/);
        }
      });

      it("hasRole on another user's profile answers as reading its role; the visitor's own roles are theirs to know", async () => {
        await deniedRead(w.bob.get('/api/roles', JSON_ACCEPT), '📦.Member.role');
        assert.deepEqual(await ok(w.bob.get('/api/my-role', JSON_ACCEPT)), { viewer: true, nickname: 'Bob' });
        assert.deepEqual(await ok(w.ada.get('/api/roles', JSON_ACCEPT)), { admins: [true, false] });
      });

      it("a new record's hierarchy position, taken from the last stored one, reads as reading it until the script sets it", async () => {
        await deniedRead(w.bob.post('/api/step', {}, JSON_ACCEPT), '📦.Step.hierarchy');
        assert.deepEqual(await ok(w.bob.post('/api/step-moved', {}, JSON_ACCEPT)), { position: '/7/' });
        assert.deepEqual(await ok(w.ada.post('/api/step', {}, JSON_ACCEPT)), { position: '/2/' });
      });
    });

    describe('a query that filters or orders on a field takes read on it', () => {
      const query = (v: TestVisitor, which: string, extra = '') => v.get(`/api/query?which=${which}${extra}`, JSON_ACCEPT);

      it('ranges, equality and embedded matches: 403 as reading the field, for Bob; the values for Ada', async () => {
        const cases: Array<[string, string, unknown]> = [
          ['gt', '&v=10', 1],
          ['gte', '&v=42', true],
          ['lt', '&v=10', ['Beta']],
          ['lte', '&v=42', 'Alpha'],
          ['eq', '&v=7', 'Beta'],
          ['chained', '&v=42', 1],
        ];
        for (const [which, extra, value] of cases) {
          await deniedRead(query(w.bob, which, extra));
          const answer = (await ok(query(w.ada, which, extra))) as { value: unknown };
          assert.deepEqual(which === 'eq' ? (answer.value as { title: string }).title : answer.value, value, which);
        }
        await deniedRead(query(w.bob, 'code'), '📦.Item.code');
        await deniedRead(query(w.bob, 'spot'), '📦.Item.spot');
        assert.deepEqual(await ok(query(w.ada, 'spot')), { value: 1 });
      });

      it('is no oracle: the answer is the same whether records match or not', async () => {
        const answers = new Set<string>();
        for (const v of [0, 41, 42, 43, 1000]) {
          const r = await query(w.bob, 'gt', `&v=${v}`);
          answers.add(`${r.status} ${JSON.stringify(json(r))}`);
        }
        assert.deepEqual([...answers], [`403 ${JSON.stringify(DENIED_SECRET)}`]);
      });

      it('fields the visitor may read, and id, created and modified, filter as before', async () => {
        assert.deepEqual(await ok(query(w.bob, 'title')), { value: 1 });
        assert.deepEqual(await ok(query(w.bob, 'titleRange')), { value: ['Beta'] });
        assert.deepEqual(await ok(query(w.bob, 'created')), { value: 2 });
        assert.deepEqual(await ok(w.bob.get('/api/my-role', JSON_ACCEPT)), { viewer: true, nickname: 'Bob' }, 'P.me() filters on the visitor\'s own id');
      });

      it('the natural order reads its field (order: true, hierarchy): ordered queries take read on it', async () => {
        await deniedRead(query(w.bob, 'people'), '📦.Person.name');
        await deniedRead(query(w.bob, 'peopleDesc'), '📦.Person.name');
        await deniedRead(query(w.bob, 'peopleLimited'), '📦.Person.name');
        await deniedRead(query(w.bob, 'steps'), '📦.Step.hierarchy');
        // Unordered: a count of every record, a record by its id.
        assert.deepEqual(await ok(query(w.bob, 'peopleCount')), { value: 2 });
        assert.deepEqual(await ok(query(w.bob, 'stepsCount')), { value: 2 });
        assert.deepEqual(await ok(query(w.bob, 'person', `&id=${w.ids.person}`)), { value: w.ids.person });
        assert.equal(((await ok(query(w.ada, 'people'))) as { value: string[] }).value.length, 2);
        assert.deepEqual(await ok(query(w.ada, 'steps')), { value: ['One', 'Two'] });
      });

      it("in a container, with the roles there: allowed in team A, refused in team B (TeamLister may not read secret)", async () => {
        assert.deepEqual(await ok(w.bob.get(`/teams/${w.ids.a}/boards?v=1`, JSON_ACCEPT)), { count: 1 });
        await deniedRead(w.bob.get(`/teams/${w.ids.b}/boards?v=1`, JSON_ACCEPT), '📦.Board.secret');
        assert.deepEqual(await ok(w.ada.get(`/teams/${w.ids.b}/boards?v=1`, JSON_ACCEPT)), { count: 1 });
      });

      it('across containers (anyTeam, grouping): judged before the query runs, never by the records found', async () => {
        for (const path of ['/api/any-boards', '/api/grouping']) {
          const answers = new Set<string>();
          // 1 matches boards in both teams, 10 only team B's, 1000 none.
          for (const v of [1, 10, 1000]) {
            const r = await w.bob.get(`${path}?v=${v}`, JSON_ACCEPT);
            assert.equal(r.status, 403, `${path}?v=${v}: ${r.text}`);
            answers.add(JSON.stringify(json(r)));
          }
          assert.equal(answers.size, 1, [...answers].join('\n'));
        }
        // Roles in some teams do not count for a query of every team, even for a field they may read.
        const title = await w.bob.get('/api/any-boards?title=b1', JSON_ACCEPT);
        assert.equal(title.status, 403, title.text);
        assert.deepEqual(json(title), { error: 'Permission denied: list on 📦.Board.' });
        // Naming the team, or the teams of a grouping, uses the roles there.
        assert.deepEqual(await ok(w.bob.get(`/teams/${w.ids.b}/titles?title=b1`, JSON_ACCEPT)), ['b1']);
        assert.deepEqual(await ok(w.bob.get('/api/grouping?title=b1', JSON_ACCEPT)), ['B']);
        assert.deepEqual(await ok(w.ada.get('/api/any-boards?v=10', JSON_ACCEPT)), ['b1']);
        assert.deepEqual(await ok(w.ada.get('/api/grouping?v=1', JSON_ACCEPT)), ['A', 'B']);
      });
    });
  });
}

