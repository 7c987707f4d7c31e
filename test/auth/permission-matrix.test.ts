/**
 * The permissions suite: every model operation × resource level × role source,
 * black-box over HTTP against a real server, with real sign-ins (oidc-provider on 127.0.0.1), on
 * both engines. The rules are docs/permissions.md.
 *
 * The app: teams (`🌐Team`, a container) holding docs (`/📦/Team/🌐Doc.yaml`: `title`, `note`, a
 * `status` and an inline embedded `address`, the type `Doc.Address`), team profiles
 * (`👤TeamMember`) and top-level profiles (`👤Member`).
 *
 * - **Resource levels** (LEVELS): one role per level, granting operations on `📦`, `📦.Doc`, fields
 *   of Doc, the embedded type `📦.Doc.Address`, or `all` / `none`. The grants leave out an operation
 *   here and there (`📦` has no `state`, `📦.Doc` no `update`), so that "only `all` includes other
 *   operations" is checked along the way.
 * - **Role sources** (SOURCES): the same level's grant reaches the visitor as `default` (written in
 *   `/default/<level>/👤.yaml`, so that it does not leak into the other rows; for a signed-in user
 *   and for a visitor who is not signed in), as the role an endpoint runs `as`, as the role of the
 *   visitor's top-level profile, as the role of their profile in team A (and not in team B, where
 *   their profile holds `None`), and as a role declared `none` in `/👤.yaml` and granted in
 *   `/sub/👤.yaml` only (allowed under `/sub/`, refused at `/`).
 * - **Operations** (ROWS): endpoint scripts that each do one operation — access (`q.get()`,
 *   `q.exists()`), list (`all()`, `count()`), read (a field of Doc, a field of its container),
 *   create, update (a field, an embedded value), state, delete — generated once per directory they
 *   are tested in. A write first loads its doc by id, which everyone may do: `/👤.yaml` gives
 *   `default` read on `📦.Doc.id` (loading a record by its id reads it); the `access` rows
 *   therefore select by title, not by id.
 *
 * Allowed: 200 and the effect visible afterwards. Refused: 403, `{error}` naming the operation and
 * the resource, and nothing written (read back by a user with `all`).
 *
 * Beside the matrix: a record as JSON and in a view leaves out the fields the visitor may not
 * read; `👤: {only}` counts the roles of profiles, not `as` roles; a refusal keeps nothing the
 * request wrote before it; a refused query in a view answers 403; `M.exists(id)` of a missing
 * record answers false to a member of the container the path selects.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { jsonWithoutId, serve, type Response, type Served } from '../helpers.js';
import { ENGINES } from '../support/engines.js';
import { TestVisitor } from '../support/visitor.js';
import { DEFAULT_ACCOUNTS, startOidcProvider, type TestOidcProvider } from '../support/oidc.js';

const JSON_ACCEPT = { Accept: 'application/json' };

// ---- Resource levels: one role each; every source below hands out the same grant --------------

interface Level {
  /** The resource level, as the matrix names it. */
  name: string;
  /** The role holding the level's grant (and `Sub<role>`, the same grant in /sub/👤.yaml only). */
  role: string;
  grant: Readonly<Record<string, string>> | 'all' | 'none';
}

const LEVELS: readonly Level[] = [
  { name: '📦', role: 'Pkg', grant: { '📦': 'access, read, list, create, update, delete' } },
  { name: '📦.Doc', role: 'Model', grant: { '📦.Doc': 'access, read, list, create, state, delete' } },
  { name: '📦.Doc.field', role: 'Field', grant: { '📦.Doc.title': 'read, update', '📦.Doc.status': 'state' } },
  { name: '📦.Doc.Address', role: 'Embedded', grant: { '📦.Doc.Address': 'update' } },
  { name: 'all', role: 'All', grant: 'all' },
  { name: 'none', role: 'None', grant: 'none' },
];

const slug = (l: Level) => l.role.toLowerCase();

/** `Role:` and its grant as a 👤.yaml entry. */
function roleYaml(role: string, grant: Level['grant']): string {
  if (grant === 'all' || grant === 'none') return `${role}: ${grant}\n`;
  return `${role}:\n` + Object.entries(grant).map(([resource, ops]) => `  ${resource}: ${ops}\n`).join('');
}

// ---- Operations: what each does, its script, and what the matrix expects per level -------------

interface Team {
  id: string;
  /** A doc every read-only row reads (title `Fixed`). */
  fixture: string;
}

interface Case {
  actor: TestVisitor;
  /** The URL prefix of the directory the row is tested in (`` for /, `/sub`, `/as/pkg`…). */
  base: string;
  team: Team;
  /** The doc acted on: a fresh one for writes, else the team's fixture. */
  doc: string;
  /** Unique per case (titles of created docs). */
  label: string;
}

interface Row {
  name: string;
  /** What a refusal names: `Permission denied: <denied>.` */
  denied: string;
  /**
   * Allowed (✓) or refused (·) per level, in the order of LEVELS:
   *                        📦  Doc field Address all none
   */
  marks: string;
  /** The row acts on a fresh doc of its own (writes). */
  fresh?: boolean;
  act(c: Case): Promise<Response>;
  /** After a 200: the answer and the effect. */
  allowed(c: Case, answer: Record<string, unknown>): Promise<void>;
  /** After a 403: nothing was written. */
  refused?(c: Case): Promise<void>;
}

/** Scripts of one tested directory, relative to `<base>/teams/{team}/`. */
const OPERATION_SCRIPTS: Record<string, string> = {
  '🔗.yaml': 'field: 📦.Team.id\n',
  'docs/{doc}/🔗.yaml': 'field: 📦.Doc.id\n',
  // access: a query answering one record, and exists() on a query.
  '🖥get.js': "import {Doc} from '📦';\nimport {title} from '&';\n({id: Doc.title(title).get().id});\n",
  '🖥exists.js': "import {Doc} from '📦';\nimport {title} from '&';\n({exists: Doc.title(title).exists()});\n",
  // list: a query that may answer several, and count().
  '🖥all.js': "import {Doc} from '📦';\n({ids: Doc.all().map((d) => d.id)});\n",
  '🖥count.js': "import {Doc} from '📦';\n({count: Doc.all().count()});\n",
  // read: a field of a path parameter's record (no query: only the read is checked).
  'docs/{doc}/🖥read.js': "import {doc} from '🔗';\n({title: doc.title});\n",
  '🖥team.js': "import {team} from '🔗';\n({name: team.name});\n",
  // create, update, state, update of an embedded value, delete.
  '📮create.js': "import {Doc} from '📦';\nimport {title} from 'form';\nnew Doc().title(title).status('draft');\n({created: true});\n",
  'docs/{doc}/📮rename.js': "import {doc} from '🔗';\nimport {to} from 'form';\ndoc.get().title = to;\n({ok: true});\n",
  'docs/{doc}/📮close.js': "import {doc} from '🔗';\ndoc.get().status('final');\n({ok: true});\n",
  'docs/{doc}/📮move.js': "import {doc} from '🔗';\nimport {to} from 'form';\ndoc.get().address = {street: 'New Street', city: to};\n({ok: true});\n",
  'docs/{doc}/📮remove.js': "import {doc} from '🔗';\ndoc.get().remove();\n({ok: true});\n",
};

// The admin (a top-level `All` profile) seeds docs and reads them back.
const ADMIN_SCRIPTS: Record<string, string> = {
  'admin/teams/{team}/🔗.yaml': 'field: 📦.Team.id\n',
  'admin/teams/{team}/📮seed.js':
    "import {Doc} from '📦';\nimport {title} from 'form';\n" +
    "let d = new Doc().title(title).note('private').status('draft').address({street: 'Old Street', city: 'Oslo'});\n({id: d.id});\n",
  'admin/teams/{team}/🖥doc.js': "import {Doc} from '📦';\nimport {id} from '&';\n({doc: Doc.optional(id)});\n",
  'admin/teams/{team}/🖥find.js': "import {Doc} from '📦';\nimport {title} from '&';\n({ids: Doc.title(title).map((d) => d.id)});\n",
};

// Profiles and teams are made by endpoints that run as All.
const SETUP_SCRIPTS: Record<string, string> = {
  'setup/📮team.js': "import {Team} from '📦';\nimport {name} from 'form';\nlet t = new Team().name(name);\n({id: t.id});\n",
  'setup/📮team.yaml': '👤: {as: All}\n',
  'setup/📮member.js': "import {Me} from '👤';\nimport {Member} from '📦';\nimport {role} from 'form';\nnew Member().role(role).user(Me);\n({ok: true});\n",
  'setup/📮member.yaml': '👤: {as: All}\n',
  'setup/teams/{team}/🔗.yaml': 'field: 📦.Team.id\n',
  'setup/teams/{team}/📮join.js':
    "import {Me} from '👤';\nimport {team} from '🔗';\nimport {TeamMember} from '📦';\nimport {role} from 'form';\nnew TeamMember(team).role(role).user(Me);\n({ok: true});\n",
  'setup/teams/{team}/📮join.yaml': '👤: {as: All}\n',
};

// The checks beside the matrix: records as JSON and in views, `👤: {only}`, a refusal after
// allowed writes, and a record that is not there.
const EXTRA_SCRIPTS: Record<string, string> = {
  'teams/{team}/docs/{doc}/🖥json.js': "import {doc} from '🔗';\n({doc: doc.get()});\n",
  'teams/{team}/docs/{doc}/🖥note.js': "import {doc} from '🔗';\n({note: doc.note});\n",
  'teams/{team}/docs/{doc}/page.html':
    "<!--TEMPLATE mustache-->\n{{% import {doc} from '🔗' }}{{#doc.get as d}}<p class=\"title\">{{d.title}}</p><p class=\"note\">{{d.note}}</p>{{/doc.get}}\n",
  'teams/{team}/list.html': "<!--TEMPLATE mustache-->\n{{% import {Doc} from '📦' }}<ul>{{#Doc.all as d}}<li>{{d.title}}</li>{{/Doc.all}}</ul>\n",
  'teams/{team}/📮guarded.js': "import {Doc} from '📦';\n({count: Doc.all().count()});\n",
  'teams/{team}/📮guarded.yaml': '👤:\n  as: Model\n  only: Model\n',
  // Model may create and find docs, not update them: the new doc is written (the query finds it),
  // then the update is refused.
  'teams/{team}/docs/{doc}/📮sneak.js':
    "import {Doc} from '📦';\nimport {doc} from '🔗';\nimport {title} from 'form';\n" +
    "new Doc().title(title).status('draft');\nlet seen = Doc.title(title).exists();\ndoc.get().title = title;\n({seen});\n",
  'teams/{team}/docs/{doc}/📮sneak.yaml': '👤: {as: Model}\n',
  'teams/{team}/🖥task.js': "import {Task} from '📦';\nimport {id} from '&';\n({exists: Task.exists(id)});\n",
  'admin/teams/{team}/📮task.js': "import {Task} from '📦';\nimport {title} from 'form';\nlet t = new Task().title(title);\n({id: t.id});\n",
  'admin/teams/{team}/📮untask.js': "import {Task} from '📦';\nimport {id} from 'form';\nTask.get(id).remove();\n({ok: true});\n",
};

function buildApp(): Record<string, string> {
  const files: Record<string, string> = {
    '👤.yaml': [
      'providers: [corp]',
      'auth: required',
      '',
      '# Anyone may load a doc by its id (writes load theirs this way).',
      'default:',
      '  📦.Doc.id: read',
      '',
      ...LEVELS.map((l) => roleYaml(l.role, l.grant)),
      '# Granted in /sub/👤.yaml only.',
      ...LEVELS.map((l) => `Sub${l.role}: none`),
      '',
    ].join('\n'),
    'auth/👤.yaml': 'auth: optional\n',
    'auth/index.html':
      "<!--TEMPLATE mustache-->\n<!doctype html><html><head><title>Sign in</title>{{% import {Providers} from '👤' }}\n" +
      "<link itemprop='content-security-policy' data-form-action-auth='true'></head><body>\n" +
      '{{#Providers.all as provider}}<form id="{{provider.type}}" method="post" action="{{provider.authPath}}"><button>{{provider.name}}</button></form>\n{{/Providers.all}}\n</body></html>\n',
    '📦/🌐Team.yaml': 'name: string\n',
    '📦/Team/👤TeamMember.yaml': 'nickname?: string\n',
    '📦/Team/🌐Doc.yaml': 'title: string\nnote?: string\nstatus:\n  type: options\n  values: [draft, final]\naddress?:\n  type:\n    street: string\n    city: string\n',
    '📦/👤Member.yaml': 'bio?: string\n',
    // A second contained model, without default's read on its id.
    '📦/Team/🌐Task.yaml': 'title: string\n',
    // `none` is for /👤.yaml only: SubNone gets nothing here.
    'sub/👤.yaml': LEVELS.filter((l) => l.grant !== 'none')
      .map((l) => roleYaml(`Sub${l.role}`, l.grant))
      .join('\n'),
    ...ADMIN_SCRIPTS,
    ...SETUP_SCRIPTS,
    ...EXTRA_SCRIPTS,
  };
  const addOperations = (base: string, config?: string) => {
    for (const [path, text] of Object.entries(OPERATION_SCRIPTS)) {
      files[`${base}teams/{team}/${path}`] = text;
      if (config !== undefined && path.endsWith('.js')) files[`${base}teams/{team}/${path.replace(/\.js$/, '.yaml')}`] = config;
    }
  };
  addOperations('');
  addOperations('sub/');
  for (const l of LEVELS) {
    // `default` with the level's grant, in its own directory, open to visitors who are not signed
    // in (there is no `none` outside /👤.yaml: default's `none` there is no grant at all).
    files[`default/${slug(l)}/👤.yaml`] = 'auth: optional\n' + (l.grant === 'none' ? '' : roleYaml('default', l.grant));
    addOperations(`default/${slug(l)}/`);
    addOperations(`as/${slug(l)}/`, `👤: {as: ${l.role}}\n`);
  }
  return files;
}

// ---- Running the matrix ------------------------------------------------------------------------

const json = (r: Response): Record<string, unknown> => {
  try {
    return jsonWithoutId(r) as Record<string, unknown>;
  } catch {
    throw new Error(`not JSON (${r.status}): ${r.text.slice(0, 300)}`);
  }
};

/** The world of one engine's run: the server, the admin and the teams. */
interface World {
  admin: TestVisitor;
  teams: Record<'A' | 'B', Team>;
  users: Map<string, TestVisitor>;
}

let world: World;

const q = (v: string) => encodeURIComponent(v);
const teamPath = (c: Case) => `${c.base}/teams/${c.team.id}`;
const docPath = (c: Case) => `${teamPath(c)}/docs/${c.doc}`;

/** The admin's view of a doc (null: not there). */
async function stored(team: Team, id: string): Promise<Record<string, unknown> | null> {
  const r = await world.admin.get(`/admin/teams/${team.id}/doc?id=${q(id)}`, JSON_ACCEPT);
  assert.equal(r.status, 200, r.text);
  return json(r).doc as Record<string, unknown> | null;
}

async function seed(team: Team, title: string): Promise<string> {
  const r = await world.admin.post(`/admin/teams/${team.id}/seed`, { title }, JSON_ACCEPT);
  assert.equal(r.status, 200, r.text);
  return String(json(r).id);
}

/** The unchanged seeded doc, as the admin reads it. */
async function untouched(c: Case): Promise<void> {
  const doc = await stored(c.team, c.doc);
  assert.ok(doc, 'the doc is still there');
  assert.equal(doc.title, c.label);
  assert.equal(doc.status, 'draft');
  assert.deepEqual(doc.address, { street: 'Old Street', city: 'Oslo' });
}

// Marks, one per level:  📦  📦.Doc  📦.Doc.field  📦.Doc.Address  all  none
const ROWS: readonly Row[] = [
  {
    name: 'access · q.get()',
    denied: 'access on 📦.Doc',
    marks: '✓ ✓ · · ✓ ·',
    act: (c) => c.actor.get(`${teamPath(c)}/get?title=Fixed`, JSON_ACCEPT),
    allowed: async (c, a) => assert.deepEqual(a, { id: c.team.fixture }),
  },
  {
    name: 'access · q.exists()',
    denied: 'access on 📦.Doc',
    marks: '✓ ✓ · · ✓ ·',
    act: (c) => c.actor.get(`${teamPath(c)}/exists?title=Fixed`, JSON_ACCEPT),
    allowed: async (_c, a) => assert.deepEqual(a, { exists: true }),
  },
  {
    name: 'list · all()',
    denied: 'list on 📦.Doc',
    marks: '✓ ✓ · · ✓ ·',
    act: (c) => c.actor.get(`${teamPath(c)}/all`, JSON_ACCEPT),
    allowed: async (c, a) => assert.ok((a.ids as string[]).includes(c.team.fixture), JSON.stringify(a)),
  },
  {
    name: 'list · count()',
    denied: 'list on 📦.Doc',
    marks: '✓ ✓ · · ✓ ·',
    act: (c) => c.actor.get(`${teamPath(c)}/count`, JSON_ACCEPT),
    allowed: async (_c, a) => assert.ok(typeof a.count === 'number' && a.count >= 1, JSON.stringify(a)),
  },
  {
    name: 'read · Doc.title',
    denied: 'read on 📦.Doc.title',
    marks: '✓ ✓ ✓ · ✓ ·',
    act: (c) => c.actor.get(`${docPath(c)}/read`, JSON_ACCEPT),
    allowed: async (_c, a) => assert.deepEqual(a, { title: 'Fixed' }),
  },
  {
    // 📦 covers every model; 📦.Doc and its fields do not reach Team.
    name: 'read · Team.name (the container)',
    denied: 'read on 📦.Team.name',
    marks: '✓ · · · ✓ ·',
    act: (c) => c.actor.get(`${teamPath(c)}/team`, JSON_ACCEPT),
    allowed: async (c, a) => assert.deepEqual(a, { name: c.team === world.teams.A ? 'A' : 'B' }),
  },
  {
    name: 'create · new Doc()',
    denied: 'create on 📦.Doc',
    marks: '✓ ✓ · · ✓ ·',
    act: (c) => c.actor.post(`${teamPath(c)}/create`, { title: c.label }, JSON_ACCEPT),
    allowed: async (c, a) => {
      assert.deepEqual(a, { created: true });
      const found = json(await world.admin.get(`/admin/teams/${c.team.id}/find?title=${q(c.label)}`, JSON_ACCEPT));
      assert.equal((found.ids as string[]).length, 1, 'the new doc is there');
    },
    refused: async (c) => {
      const found = json(await world.admin.get(`/admin/teams/${c.team.id}/find?title=${q(c.label)}`, JSON_ACCEPT));
      assert.deepEqual(found.ids, [], 'no doc was created');
    },
  },
  {
    // 📦.Doc has every operation but update.
    name: 'update · Doc.title',
    denied: 'update on 📦.Doc.title',
    marks: '✓ · ✓ · ✓ ·',
    fresh: true,
    act: (c) => c.actor.post(`${docPath(c)}/rename`, { to: `${c.label} renamed` }, JSON_ACCEPT),
    allowed: async (c) => assert.equal((await stored(c.team, c.doc))?.title, `${c.label} renamed`),
    refused: untouched,
  },
  {
    // 📦 has every operation but state: update does not change a status.
    name: 'state · Doc.status',
    denied: 'state on 📦.Doc.status',
    marks: '· ✓ ✓ · ✓ ·',
    fresh: true,
    act: (c) => c.actor.post(`${docPath(c)}/close`, {}, JSON_ACCEPT),
    allowed: async (c) => assert.equal((await stored(c.team, c.doc))?.status, 'final'),
    refused: untouched,
  },
  {
    name: 'update · Doc.address (📦.Doc.Address)',
    denied: 'update on 📦.Doc.address',
    marks: '✓ · · ✓ ✓ ·',
    fresh: true,
    act: (c) => c.actor.post(`${docPath(c)}/move`, { to: 'Bergen' }, JSON_ACCEPT),
    allowed: async (c) => assert.deepEqual((await stored(c.team, c.doc))?.address, { street: 'New Street', city: 'Bergen' }),
    refused: untouched,
  },
  {
    name: 'delete · remove()',
    denied: 'delete on 📦.Doc',
    marks: '✓ ✓ · · ✓ ·',
    fresh: true,
    act: (c) => c.actor.post(`${docPath(c)}/remove`, {}, JSON_ACCEPT),
    allowed: async (c) => assert.equal(await stored(c.team, c.doc), null, 'the doc is gone'),
    refused: untouched,
  },
];

/** Where a level's grant comes from, who acts, where, and whether the grant applies there. */
interface Source {
  name: string;
  /** The role that carries the level's grant this way. */
  role: (l: Level) => string;
  /** The visitor holding the level's role this way (by user name). */
  user: (l: Level) => string;
  /** The URL prefix of the directory tested. */
  base: (l: Level) => string;
  team: 'A' | 'B';
  /** false: the grant does not reach here, and every operation is refused. */
  applies: boolean;
}

const DEFAULT = () => 'default';
const ROLE = (l: Level) => l.role;
const SUB = (l: Level) => `Sub${l.role}`;

const SOURCES: readonly Source[] = [
  { name: 'default, granted in /default/<level>/👤.yaml', role: DEFAULT, user: () => 'plain', base: (l) => `/default/${slug(l)}`, team: 'A', applies: true },
  { name: 'default, for a visitor who is not signed in', role: DEFAULT, user: () => 'anonymous', base: (l) => `/default/${slug(l)}`, team: 'A', applies: true },
  { name: '👤: {as: Role} on the endpoint', role: ROLE, user: () => 'plain', base: (l) => `/as/${slug(l)}`, team: 'A', applies: true },
  { name: 'a top-level profile', role: ROLE, user: (l) => `top-${slug(l)}`, base: () => '', team: 'A', applies: true },
  { name: 'a profile in team A, in team A', role: ROLE, user: (l) => `member-${slug(l)}`, base: () => '', team: 'A', applies: true },
  { name: 'a profile in team A, in team B', role: ROLE, user: (l) => `member-${slug(l)}`, base: () => '', team: 'B', applies: false },
  { name: 'a grant in /sub/👤.yaml only, under /sub/', role: SUB, user: (l) => `sub-${slug(l)}`, base: () => '/sub', team: 'A', applies: true },
  { name: 'a grant in /sub/👤.yaml only, at /', role: SUB, user: (l) => `sub-${slug(l)}`, base: () => '', team: 'A', applies: false },
];

/** The users: what each holds, by name. */
interface UserSpec {
  name: string;
  member?: string;
  /** A TeamMember profile per team. */
  teams?: Partial<Record<'A' | 'B', string>>;
}

const USERS: readonly UserSpec[] = [
  { name: 'admin', member: 'All' },
  { name: 'plain' },
  ...LEVELS.map((l) => ({ name: `top-${slug(l)}`, member: l.role })),
  // A profile in both teams: the level's role in A, None in B.
  ...LEVELS.map((l) => ({ name: `member-${slug(l)}`, teams: { A: l.role, B: 'None' } })),
  ...LEVELS.map((l) => ({ name: `sub-${slug(l)}`, member: `Sub${l.role}` })),
];

function expected(row: Row, level: Level): boolean {
  const marks = row.marks.split(/\s+/);
  assert.equal(marks.length, LEVELS.length, `${row.name}: one mark per level`);
  return marks[LEVELS.indexOf(level)] === '✓';
}

/** Cases run so far: the titles of their docs. */
let cases = 0;

async function runCase(row: Row, source: Source, level: Level, allowed: boolean): Promise<void> {
  const team = world.teams[source.team];
  const label = `Doc ${++cases}`;
  const c: Case = {
    actor: world.users.get(source.user(level))!,
    base: source.base(level),
    team,
    label,
    doc: row.fresh ? await seed(team, label) : team.fixture,
  };
  const r = await row.act(c);
  if (allowed) {
    assert.equal(r.status, 200, r.text);
    await row.allowed(c, json(r));
  } else {
    assert.equal(r.status, 403, r.text);
    assert.deepEqual(json(r), { error: `Permission denied: ${row.denied}.` });
    await row.refused?.(c);
  }
}

for (const engine of ENGINES) {
  describe(`permission matrix (${engine.name})`, () => {
    let s: Served;
    let op: TestOidcProvider;
    const saved = { ...process.env };

    async function signIn(account: string): Promise<TestVisitor> {
      const v = new TestVisitor(s.port);
      const page = await v.get('/auth/');
      const action = /<form id="corp" method="post" action="([^"]+)"/.exec(page.text)![1]!.replace(/&amp;/g, '&');
      const started = await v.post(action);
      assert.equal(started.status, 303, started.text);
      const back = await op.login(String(started.headers.location), { account });
      const done = await v.get(back.pathname + back.search);
      assert.equal(done.status, 303, done.text);
      return v;
    }

    async function ok(v: TestVisitor, path: string, form: Record<string, string>): Promise<Record<string, unknown>> {
      const r = await v.post(path, form, JSON_ACCEPT);
      assert.equal(r.status, 200, `${path}: ${r.text}`);
      return json(r);
    }

    before(async () => {
      op = await startOidcProvider({ accounts: [...DEFAULT_ACCOUNTS, ...USERS.map((u) => ({ sub: u.name, name: u.name }))] });
      process.env.LANEWAY_AUTH_CORP_CLIENT_ID = op.clientId;
      process.env.LANEWAY_AUTH_CORP_SECRET = op.clientSecret;
      process.env.LANEWAY_AUTH_CORP_ISSUER = op.issuer;
      s = await serve(buildApp(), { data: await engine.data() });
      await op.setRedirectUris([`http://localhost:${s.port}/__/auth/handler`]);
      const users = new Map<string, TestVisitor>([['anonymous', new TestVisitor(s.port)]]);
      await Promise.all(USERS.map(async (u) => users.set(u.name, await signIn(u.name))));
      const admin = users.get('admin')!;
      const teams = {} as Record<'A' | 'B', Team>;
      for (const name of ['A', 'B'] as const) {
        const id = String((await ok(admin, '/setup/team', { name })).id);
        teams[name] = { id, fixture: '' };
      }
      for (const u of USERS) {
        const v = users.get(u.name)!;
        if (u.member) await ok(v, '/setup/member', { role: u.member });
        for (const [team, role] of Object.entries(u.teams ?? {})) await ok(v, `/setup/teams/${teams[team as 'A' | 'B'].id}/join`, { role });
      }
      world = { admin, teams, users };
      for (const t of Object.values(teams)) t.fixture = await seed(t, 'Fixed');
    });

    after(async () => {
      await s?.close();
      await op?.stop();
      for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
      Object.assign(process.env, saved);
    });

    for (const source of SOURCES) {
      describe(source.name, () => {
        for (const level of LEVELS) {
          // The rows of a level are independent (each write has a doc of its own): they run together.
          describe(`${level.name} (${source.role(level)})`, { concurrency: true }, () => {
            for (const row of ROWS) {
              const allowed = source.applies && expected(row, level);
              it(`${row.name}: ${allowed ? 'allowed' : 'refused'}`, () => runCase(row, source, level, allowed));
            }
          });
        }
      });
    }

    it('a record as JSON leaves out the fields the visitor may not read, and keeps the others', async () => {
      const { A, B } = world.teams;
      const get = async (user: string, team: Team) => {
        const r = await world.users.get(user)!.get(`/teams/${team.id}/docs/${team.fixture}/json`, JSON_ACCEPT);
        assert.equal(r.status, 200, r.text);
        return json(r).doc as Record<string, unknown>;
      };
      const all = await get('admin', A);
      assert.deepEqual(Object.keys(all).sort(), ['address', 'created', 'id', 'modified', 'note', 'status', 'title']);
      assert.equal(all.note, 'private');
      // Field: read on title only (status takes state, not read).
      const field = await get('top-field', A);
      assert.deepEqual(Object.keys(field).sort(), ['created', 'id', 'modified', 'title']);
      assert.deepEqual({ id: field.id, title: field.title }, { id: A.fixture, title: 'Fixed' });
      // The same role on a team profile: its title in team A, not in team B.
      assert.deepEqual(Object.keys(await get('member-field', A)).sort(), ['created', 'id', 'modified', 'title']);
      assert.deepEqual(Object.keys(await get('member-field', B)).sort(), ['created', 'id', 'modified']);
      // Reading the left-out field itself is refused.
      const note = await world.users.get('top-field')!.get(`/teams/${A.id}/docs/${A.fixture}/note`, JSON_ACCEPT);
      assert.equal(note.status, 403, note.text);
      assert.deepEqual(json(note), { error: 'Permission denied: read on 📦.Doc.note.' });
    });

    it('👤: {only} counts the roles of profiles, not the roles an endpoint runs as', async () => {
      const { A, B } = world.teams;
      const guarded = (user: string, team: Team) => world.users.get(user)!.post(`/teams/${team.id}/guarded`, {}, JSON_ACCEPT);
      // `plain` runs the endpoint as Model, which `only: Model` does not count.
      const plain = await guarded('plain', A);
      assert.equal(plain.status, 403, plain.text);
      assert.deepEqual(json(plain), { error: 'Only Model may do this.' });
      // A top-level profile with Model, anywhere; a team profile with Model, in its team only.
      const top = await guarded('top-model', A);
      assert.equal(top.status, 200, top.text);
      assert.ok(typeof json(top).count === 'number');
      assert.equal((await guarded('member-model', A)).status, 200);
      const other = await guarded('member-model', B);
      assert.equal(other.status, 403, other.text);
      // A profile with another role does not pass either, though All may do everything.
      assert.equal((await guarded('top-all', A)).status, 403);
    });

    it('a view leaves out the fields the visitor may not read', async () => {
      const { A } = world.teams;
      const page = (user: string) => world.users.get(user)!.get(`/teams/${A.id}/docs/${A.fixture}/page`);
      const admin = await page('admin');
      assert.equal(admin.status, 200, admin.text);
      assert.match(admin.text, /<p class="title">Fixed<\/p><p class="note">private<\/p>/);
      const field = await page('top-field');
      assert.equal(field.status, 200, field.text);
      assert.match(field.text, /<p class="title">Fixed<\/p><p class="note"><\/p>/);
      const list = await world.users.get('top-model')!.get(`/teams/${A.id}/list`);
      assert.equal(list.status, 200, list.text);
      assert.match(list.text, /<li>Fixed<\/li>/);
    });

    // A view whose query is refused answers the refusal (403), as docs/permissions.md says.
    it('a view that lists what the visitor may not list answers 403', async () => {
      const { A } = world.teams;
      const r = await world.users.get('top-field')!.get(`/teams/${A.id}/list`);
      assert.equal(r.status, 403, r.text);
      assert.doesNotMatch(r.text, /Fixed/);
    });

    it('a refusal keeps nothing the request wrote before it', async () => {
      const { A } = world.teams;
      const doc = await seed(A, 'Sneak target');
      const r = await world.users.get('plain')!.post(`/teams/${A.id}/docs/${doc}/sneak`, { title: 'Sneaked in' }, JSON_ACCEPT);
      assert.equal(r.status, 403, r.text);
      assert.deepEqual(json(r), { error: 'Permission denied: update on 📦.Doc.title.' });
      const found = json(await world.admin.get(`/admin/teams/${A.id}/find?title=${q('Sneaked in')}`, JSON_ACCEPT));
      assert.deepEqual(found.ids, [], 'the doc created before the refusal is not kept');
      assert.equal((await stored(A, doc))?.title, 'Sneak target');
    });

    // `M.exists(id)` of a record that is not there answers false to a visitor whose access comes
    // from their profile in the container the path selects (as `Task.title(t).optional()` is null).
    it("M.exists(id) of a removed record is false for a member of the path's team", async () => {
      const { A } = world.teams;
      const made = async (title: string) => String((await ok(world.admin, `/admin/teams/${A.id}/task`, { title })).id);
      const kept = await made('Kept');
      const gone = await made('Gone');
      await ok(world.admin, `/admin/teams/${A.id}/untask`, { id: gone });
      const exists = async (id: string) => {
        const r = await world.users.get('member-pkg')!.get(`/teams/${A.id}/task?id=${q(id)}`, JSON_ACCEPT);
        assert.equal(r.status, 200, r.text);
        return json(r);
      };
      assert.deepEqual(await exists(kept), { exists: true });
      assert.deepEqual(await exists(gone), { exists: false });
    });
  });
}
