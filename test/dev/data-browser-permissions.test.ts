/**
 * The data browser and the app's permissions (docs/data-browser.md), over HTTP on each engine,
 * with users signed in by the app's sign-in (the development sign-in's test users):
 *
 * - in development (`/__/dev/data/`), an edit or a removal by a chosen user who may not make it is
 *   refused with 403 and changes nothing;
 * - in production (`/__/data/`, switched on by `dataBrowser`, what `LANEWAY_DATA_BROWSER_SECRET`
 *   gives): only a signed-in user holding the role who has given the secret gets in (a cookie
 *   bound to that sign-in), reads show only what that user may read (records of other containers
 *   are not listed, unreadable fields not shown), writes run as that user and are logged.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { closeAppData, loadApp, openAppData, type App } from '../../src/app/index.js';
import { parseDevUsers } from '../../src/auth/index.js';
import { createServer } from '../../src/http/index.js';
import { writeApp, type Response } from '../helpers.js';
import { ENGINES } from '../support/engines.js';
import { setCookies, TestVisitor } from '../support/visitor.js';

const SECRET = 'correct horse battery staple, and more: 0123456789';
const JSON_ACCEPT = { Accept: 'application/json' };

const APP: Record<string, string> = {
  '👤.yaml': [
    'providers: [github]',
    'auth: required',
    '',
    'Admin: all',
    '',
    // The data browser's role in production: may list and read tasks (not change them), read an item's title only.
    'Clerk:',
    '  📦.Task: access, list',
    '  📦.Task.title: read',
    '  📦.Task.done: read',
    '  📦.Item: access, list',
    '  📦.Item.title: read',
    '  📦.Team: access, list, read',
    '',
    'TeamViewer:',
    '  📦.Board: access, list, read',
    '',
  ].join('\n'),
  '📦/🌐Task.yaml': 'title: string\ndone: boolean\n',
  '📦/🌐Item.yaml': 'title: string\nsecret?: integer\n',
  '📦/👤Member.yaml': 'nickname?: string\n',
  '📦/🌐Team.yaml': 'name: string\n',
  '📦/Team/👤TeamMember.yaml': 'nickname?: string\n',
  '📦/Team/🌐Board.yaml': 'title: string\n',
  'setup/📮seed.js': [
    "import {Task, Item, Team, Board} from '📦';",
    "const task = new Task().title('kept').done(false);",
    "const item = new Item().title('Alpha').secret(4242);",
    "const a = new Team().name('A');",
    "const b = new Team().name('B');",
    "const a1 = new Board(a).title('board-of-a');",
    "const b1 = new Board(b).title('board-of-b');",
    '({task: task.id, item: item.id, a: a.id, b: b.id, a1: a1.id, b1: b1.id});',
  ].join('\n'),
  'setup/📮seed.yaml': '👤: {as: Admin}\n',
  'setup/📮member.js': "import {Me} from '👤';\nimport {Member} from '📦';\nimport {role} from 'form';\nnew Member().user(Me).role(role);\n({ok: true});\n",
  'setup/📮member.yaml': '👤: {as: Admin}\n',
  'setup/teams/{team}/🔗.yaml': 'field: 📦.Team.id\n',
  'setup/teams/{team}/📮join.js': "import {Me} from '👤';\nimport {team} from '🔗';\nimport {TeamMember} from '📦';\nimport {role} from 'form';\nnew TeamMember(team).user(Me).role(role);\n({ok: true});\n",
  'setup/teams/{team}/📮join.yaml': '👤: {as: Admin}\n',
  // What the store holds, read as Admin.
  'api/🖥task.js': "import {Task} from '📦';\nimport {id} from '&';\n({exists: Task.exists(id), title: Task.exists(id) ? Task.get(id).title : null});\n",
  'api/🖥task.yaml': '👤: {as: Admin}\n',
};

type Ids = { task: string; item: string; a: string; b: string; a1: string; b1: string };

interface World {
  app: App;
  port: number;
  ids: Ids;
  lines: Array<{ message: string; fields: Record<string, unknown> }>;
  /** Bob's sign-in made by the setup. */
  bob: TestVisitor;
  signIn(id: string): Promise<TestVisitor>;
  close(): Promise<void>;
}

async function ok(r: Promise<Response>): Promise<unknown> {
  const res = await r;
  assert.equal(res.status, 200, res.text);
  return JSON.parse(res.text);
}

/** The app served (development mode or production with the browser on), Ada an Admin, Bob a Clerk and a TeamViewer in team A only. */
async function world(engine: (typeof ENGINES)[number], mode: 'dev' | 'production', more: Record<string, string> = {}): Promise<World> {
  const dir = writeApp({ ...APP, ...more });
  const lines: World['lines'] = [];
  const log = (message: string, fields: Record<string, unknown>) => void lines.push({ message, fields });
  const app = loadApp(dir, mode === 'dev' ? { dev: true, log } : { log, dataBrowser: { secret: SECRET, role: 'Clerk' } });
  await openAppData(app, { ...(await engine.data()), log: { info: () => {}, error: () => {} } });
  const devUsers = parseDevUsers('Ada, Bob, Carl');
  if ('error' in devUsers) throw new Error(devUsers.error);
  app.data!.auth!.enableDevSignIn(devUsers.users);
  const server = createServer(app, { log: 'off' });
  const { port } = await server.listen(0, '127.0.0.1');
  const signIn = async (id: string) => {
    const v = new TestVisitor(port);
    const done = await v.post(`/__/auth/dev/${id}`);
    assert.equal(done.status, 303, done.text);
    return v;
  };
  const ada = await signIn('ada');
  const bob = await signIn('bob');
  const ids = (await ok(ada.post('/setup/seed', {}, JSON_ACCEPT))) as Ids;
  await ok(ada.post('/setup/member', { role: 'Admin' }, JSON_ACCEPT));
  await ok(bob.post('/setup/member', { role: 'Clerk' }, JSON_ACCEPT));
  await ok(bob.post(`/setup/teams/${ids.a}/join`, { role: 'TeamViewer' }, JSON_ACCEPT));
  return {
    app,
    port,
    ids,
    lines,
    bob,
    signIn,
    async close() {
      await server.close();
      await closeAppData(app);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const formAction = (html: string) => /<form method="POST" action="([^"]+\?_form=[^"]+)" novalidate>/.exec(html)?.[1]?.replaceAll('&#38;', '&');
const records = (html: string) => [...html.matchAll(/<a class="record" href="([^"]+)"/g)].map((m) => m[1]!);

/** An edit and a removal the user may not make: 403 each, and the task as it was. */
async function refusedWrites(w: World, v: TestVisitor, base: string): Promise<void> {
  const admin = await w.signIn('ada');
  const pageOf = await v.get(`${base}Task/${w.ids.task}`);
  assert.equal(pageOf.status, 200, pageOf.text);
  const action = formAction(pageOf.text);
  assert.ok(action, pageOf.text);
  const save = await v.post(action, { lw_id: w.ids.task, lw_action: 'save', Task_title: 'changed', Task_done: 'true' });
  assert.equal(save.status, 403, save.text);
  assert.match(save.text, /Not saved \(403\): Permission denied: update on 📦\.Task\.(title|done)\./);
  const remove = await v.post(`${base}Task/${w.ids.task}`, { lw_id: w.ids.task, lw_action: 'remove' });
  assert.equal(remove.status, 403, remove.text);
  assert.match(remove.text, /Not removed \(403\): Permission denied: delete on 📦\.Task\./);
  assert.deepEqual(await ok(admin.get(`/api/task?id=${w.ids.task}`, JSON_ACCEPT)), { exists: true, title: 'kept' });
}

for (const engine of ENGINES) {
  describe(`the data browser refuses what the chosen user may not do, in development (${engine.name})`, () => {
    let w: World;
    before(async () => {
      w = await world(engine, 'dev');
    });
    after(() => w.close());

    it('an edit and a removal by a user without the permission: 403, nothing changed', async () => {
      await refusedWrites(w, await w.signIn('bob'), '/__/dev/data/');
    });

    it('the same edit by a user with it is saved', async () => {
      const ada = await w.signIn('ada');
      const pageOf = await ada.get(`/__/dev/data/Task/${w.ids.task}`);
      const saved = await ada.post(formAction(pageOf.text)!, { lw_id: w.ids.task, lw_action: 'save', Task_title: 'by ada', Task_done: 'false' });
      assert.equal(saved.status, 303, saved.text);
      assert.deepEqual(await ok(ada.get(`/api/task?id=${w.ids.task}`, JSON_ACCEPT)), { exists: true, title: 'by ada' });
    });

    it('there is no production data browser in development mode', async () => {
      assert.equal((await (await w.signIn('bob')).get('/__/data/')).status, 404);
    });
  });

  describe(`the data browser in production: a role, a secret, and the user's permissions (${engine.name})`, () => {
    let w: World;
    let bob: TestVisitor;
    before(async () => {
      w = await world(engine, 'production');
      bob = await w.signIn('bob');
    });
    after(() => w.close());

    it('sends a visitor who is not signed in to sign in; refuses a user without the role', async () => {
      const anonymous = new TestVisitor(w.port);
      const r = await anonymous.get('/__/data/');
      assert.equal(r.status, 302);
      assert.match(String(r.headers.location), /^\/auth\/\?next=%2F__%2Fdata%2F/);
      assert.equal((await anonymous.post('/__/data/', { lw_secret: SECRET })).status, 401);
      for (const who of ['ada', 'carl']) {
        const v = await w.signIn(who);
        const page = await v.get('/__/data/');
        assert.equal(page.status, 403, page.text);
        assert.match(page.text, /is for users who hold the role Clerk/);
        const unlock = await v.post('/__/data/', { lw_secret: SECRET });
        assert.equal(unlock.status, 403);
        assert.deepEqual(setCookies(unlock), []);
        assert.equal((await v.get('/__/data/Task/')).status, 403);
      }
      // The development browser stays absent.
      assert.equal((await bob.get('/__/dev/data/')).status, 404);
    });

    it('asks for the secret once: a wrong one is refused, the right one sets a short, strict cookie bound to the sign-in', async () => {
      const locked = await bob.get('/__/data/Task/');
      assert.equal(locked.status, 403);
      assert.match(locked.text, /<input id="lw-secret" type="password" name="lw_secret"/);
      assert.doesNotMatch(locked.text, /kept/);
      const wrong = await bob.post('/__/data/', { lw_secret: SECRET.slice(0, -1) });
      assert.equal(wrong.status, 403);
      assert.match(wrong.text, /That is not the secret/);
      assert.deepEqual(setCookies(wrong), []);
      // A cross-site post of the secret is refused before it is read.
      const cross = await bob.request('POST', '/__/data/', `lw_secret=${encodeURIComponent(SECRET)}`, { Origin: 'http://elsewhere.example', 'Sec-Fetch-Site': 'cross-site' });
      assert.equal(cross.status, 403);
      assert.deepEqual(setCookies(cross), []);
      const right = await bob.post('/__/data/', { lw_secret: SECRET });
      assert.equal(right.status, 303, right.text);
      assert.equal(right.headers.location, '/__/data/');
      const [cookie] = setCookies(right);
      assert.match(cookie!, /^lw_data=\d+\.[A-Za-z0-9_-]{32}; Path=\/__\/data\/; Max-Age=1800; HttpOnly; SameSite=Strict$/);
      assert.equal((await bob.get('/__/data/')).status, 200);
      // Another sign-in of the same user does not inherit it.
      const again = await w.signIn('bob');
      again.jar.set('lw_data', bob.jar.get('lw_data')!);
      assert.equal((await again.get('/__/data/')).status, 403);
      // Nor does another user's.
      const carl = await w.signIn('carl');
      carl.jar.set('lw_data', bob.jar.get('lw_data')!);
      assert.equal((await carl.get('/__/data/')).status, 403);
    });

    it("lists only the records the user may list, and only the fields the user may read", async () => {
      const models = await bob.get('/__/data/');
      assert.match(models.text, /signed in as <strong>Bob<\/strong>/);
      assert.match(models.text, /<a href="\/__\/data\/Task\/">Task<\/a><\/td><td class="count">1</);
      // Boards are listed only inside team A for Bob: no count that would tell team B's.
      assert.match(models.text, /Board<\/a> \(in Team\)<\/td><td class="count">–</);
      const boards = await bob.get('/__/data/Board/');
      assert.equal(boards.status, 200);
      assert.deepEqual(records(boards.text), [`/__/data/Board/${w.ids.a1}`]);
      assert.match(boards.text, /board-of-a/);
      assert.doesNotMatch(boards.text, /board-of-b/);
      assert.match(boards.text, /1 record you may list on this page\./);
      assert.equal((await bob.get(`/__/data/Board/${w.ids.b1}`)).status, 404);
      assert.equal((await bob.get(`/__/data/Board/${w.ids.a1}`)).status, 200);
      // An item's secret is not Bob's to read: not in the list, not on the record, which offers no form.
      const items = await bob.get('/__/data/Item/');
      assert.match(items.text, /Alpha/);
      assert.doesNotMatch(items.text, /4242/);
      assert.match(items.text, /<td class="hidden"><\/td>/);
      const item = await bob.get(`/__/data/Item/${w.ids.item}`);
      assert.equal(item.status, 200);
      assert.doesNotMatch(item.text, /4242|<th>secret<\/th>/);
      assert.match(item.text, /You may not read the field secret of this record, so it cannot be edited here\./);
      assert.equal(formAction(item.text), undefined);
      // Nor filtered on.
      const filtered = await bob.get('/__/data/Item/?field=secret&value=4242');
      assert.match(filtered.text, /You may not read the field secret of Item, so it cannot be filtered on\./);
      assert.deepEqual(records(filtered.text), []);
    });

    it('an edit and a removal the user may not make: 403, nothing changed; each write is logged with the user and the request id', async () => {
      w.lines.length = 0;
      await refusedWrites(w, bob, '/__/data/');
      const writes = w.lines.filter((l) => l.message.startsWith('data browser: '));
      assert.deepEqual(
        writes.map((l) => [l.fields.action, l.fields.model, l.fields.record, l.fields.status]),
        [
          ['save', 'Task', w.ids.task, 403],
          ['remove', 'Task', w.ids.task, 403],
        ],
      );
      for (const l of writes) {
        assert.equal(typeof l.fields.user, 'string');
        assert.match(String(l.fields.request), /^[A-Za-z0-9_-]+$/);
      }
    });
  });
}

describe('the production data browser counts each secret given as a sign-in started', () => {
  let w: World;
  before(async () => {
    // The world signs in two users from this address (the third sign-in and on would be refused); Bob's tries count as Bob's.
    w = await world(ENGINES[0]!, 'production', { '🎛.yaml': 'name: limited\nlimits:\n  sign-ins: 3/minute\n' });
  });
  after(() => w.close());

  it('past the limit, 429 with Retry-After, even to the right secret', async () => {
    // Bob's sign-in of the setup, reused: no new sign-in from this address.
    const v = w.bob;
    let last: Response | undefined;
    for (let i = 0; i < 4 && last?.status !== 429; i++) last = await v.post('/__/data/', { lw_secret: 'a guess' });
    assert.equal(last!.status, 429, last!.text);
    assert.match(String(last!.headers['retry-after']), /^\d+$/);
    assert.equal((await v.post('/__/data/', { lw_secret: SECRET })).status, 429);
  });
});

describe('the production data browser is off unless switched on, and refuses a weak switch', () => {
  it('without the secret, /__/data/ is not found', async () => {
    const dir = writeApp(APP);
    const app = loadApp(dir);
    await openAppData(app, { log: { info: () => {}, error: () => {} } });
    const server = createServer(app, { log: 'off' });
    const { port } = await server.listen(0, '127.0.0.1');
    try {
      const v = new TestVisitor(port);
      assert.equal((await v.get('/__/data/')).status, 404);
      assert.equal((await v.post('/__/data/', { lw_secret: SECRET })).status, 404);
    } finally {
      await server.close();
      await closeAppData(app);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  for (const [what, files, access, message] of [
    ['a short secret', APP, { secret: 'short', role: 'Clerk' }, /shorter than 32 characters/],
    ['an undeclared role', APP, { secret: SECRET, role: 'Owner' }, /its role Owner \(LANEWAY_DATA_BROWSER_ROLE\) is not declared in \/👤\.yaml/],
    ['an app without users', { '📦/🌐Task.yaml': 'title: string\n' }, { secret: SECRET, role: 'Admin' }, /the app has no users/],
  ] as const) {
    it(`does not load with ${what} (LW_AUTH_DATA_BROWSER)`, () => {
      const dir = writeApp(files);
      try {
        assert.throws(() => loadApp(dir, { dataBrowser: access }), (e: Error) => /LW_AUTH_DATA_BROWSER/.test(e.message) && message.test(e.message));
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});
