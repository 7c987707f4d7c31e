/**
 * Profiles and permissions end to end (docs/permissions.md "One profile per user and container"),
 * black-box over HTTP with real sign-ins (oidc-provider on 127.0.0.1), on both engines: profiles
 * made with `.role(Role.X) .user(Me)`, `P.me().get()`, `get(container)`, `all()`,
 * `shared(container)`, `hasRole`; every model operation checked against default, the top-level
 * profile's roles and the roles of the profile in the record's container; `👤: {as}` and `👤: {only}`
 * endpoint configurations; 403 (JSON) and nothing written when refused.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { serve, type Served } from '../helpers.js';
import { ENGINES } from '../support/engines.js';
import { TestVisitor } from '../support/visitor.js';
import { startOidcProvider, type TestOidcProvider } from '../support/oidc.js';

const JSON_ACCEPT = { Accept: 'application/json' };

export const PROFILES_APP: Record<string, string> = {
  '👤.yaml': [
    'providers: [corp]',
    'auth: required',
    '',
    'default:',
    '  📦.Member: access, create, read, update',
    '  📦.TeamMember: access, list',
    '  📦.Note: list, read',
    '',
    'Admin: all',
    '',
    'TeamOwner:',
    '  📦.Team: all',
    '  📦.TeamMember: all',
    '  📦.Board: all',
    '',
    'Reviewer:',
    '  📦.Team: access, read',
    '  📦.Board: access, read, list',
    '  📦.TeamMember: read',
    '',
  ].join('\n'),
  'auth/👤.yaml': 'auth: optional\n',
  'auth/index.html':
    "<!--TEMPLATE mustache-->\n<!doctype html><html><head><title>Sign in</title>{{% import {Providers} from '👤' }}\n" +
    "<link itemprop='content-security-policy' data-form-action-auth='true'></head><body>\n" +
    '{{#Providers.all as provider}}<form id="{{provider.type}}" method="post" action="{{provider.authPath}}"><button>{{provider.name}}</button></form>\n{{/Providers.all}}\n</body></html>\n',
  '📦/🌐Team.yaml': 'name: string\n',
  '📦/Team/👤TeamMember.yaml': 'nickname?: string\n',
  '📦/Team/🌐Board.yaml': 'title: string\nstatus:\n  type: options\n  values: [open, closed]\n',
  '📦/👤Member.yaml': 'bio?: string\n',
  '📦/🌐Note.yaml': 'text: string\n',
  // A new team, run as TeamOwner (the visitor holds no role yet), with its owner's profile.
  'teams/📮new.js':
    "import {Me, Role} from '👤';\nimport {Team, TeamMember} from '📦';\nimport {name} from 'form';\n" +
    'let team = new Team().name(name);\nnew TeamMember(team).role(Role.TeamOwner).user(Me).nickname(Me.name);\n({id: team.id});\n',
  'teams/📮new.yaml': '👤: TeamOwner\n',
  'teams/{team}/🔗.yaml': 'field: 📦.Team.id\n',
  'teams/{team}/GET.js':
    "import {team} from '🔗';\nimport {Board, TeamMember} from '📦';\nimport {Role} from '👤';\n" +
    '({name: team.name, boards: Board.team(team).asc().map((b) => b.title), owner: TeamMember.me().get(team).hasRole(Role.TeamOwner)});\n',
  'teams/{team}/boards/POST.js': "import {team} from '🔗';\nimport {Board} from '📦';\nimport {title} from 'form';\nlet b = new Board(team).title(title).status('open');\n({id: b.id});\n",
  'teams/{team}/board-status/POST.js':
    "import {team} from '🔗';\nimport {Board} from '📦';\nimport {title, status} from 'form';\nlet b = Board.team(team).title(title).get();\nb.status = status;\n({status: b.status});\n",
  'teams/{team}/board-title/POST.js':
    "import {team} from '🔗';\nimport {Board} from '📦';\nimport {title, to} from 'form';\nlet b = Board.team(team).title(title).get();\nb.title = to;\n({title: b.title});\n",
  // Renaming: only a TeamOwner (of this team: the path names it).
  'teams/{team}/📮rename.js': "import {team} from '🔗';\nimport {name} from 'form';\nlet t = team.get();\nt.name = name;\n({name: t.name});\n",
  'teams/{team}/📮rename.yaml': '👤:\n  only: TeamOwner\n',
  // Joining as a reviewer: creating a profile in someone else's team takes TeamOwner's permissions.
  'teams/{team}/📮join.js': "import {team} from '🔗';\nimport {Me, Role} from '👤';\nimport {TeamMember} from '📦';\nnew TeamMember(team).role(Role.Reviewer).user(Me);\n({joined: true});\n",
  'teams/{team}/📮join.yaml': '👤:\n  as: TeamOwner\n',
  'teams/{team}/shared/GET.js': "import {team} from '🔗';\nimport {TeamMember} from '📦';\n({shared: TeamMember.me().shared(team)});\n",
  'teams/{team}/📮leave.yaml': '👤: TeamOwner\n',
  'teams/{team}/📮leave.js': "import {team} from '🔗';\nimport {TeamMember} from '📦';\nTeamMember.me().get(team).remove();\n({left: true});\n",
  'mine/GET.js':
    "import {Role} from '👤';\nimport {TeamMember} from '📦';\n" +
    '({teams: TeamMember.me().all().map((m) => ({team: m.team().id, name: m.team().name, owner: m.hasRole(Role.TeamOwner), reviewer: m.hasRole(Role.Reviewer)}))});\n',
  'profile/POST.js': "import {Me} from '👤';\nimport {Member} from '📦';\nimport {bio} from 'form';\nnew Member().bio(bio).user(Me);\n({ok: true});\n",
  'profile/GET.js': "import {Member} from '📦';\nlet m = Member.me().optional();\n({bio: m === null ? null : m.bio});\n",
  'notes/GET.js': "import {Note} from '📦';\n(Note.all().map((n) => n.text));\n",
  'notes/latest/GET.js': "import {Note} from '📦';\n(Note.all().desc().limit(1).map((n) => n.text));\n",
  'notes/POST.js': "import {Note} from '📦';\nimport {text} from 'form';\nnew Note().text(text);\n({ok: true});\n",
  // A profile's role must be one /👤.yaml declares.
  'bad-role/POST.js': "import {Me} from '👤';\nimport {Member} from '📦';\nnew Member().user(Me).role('Wizard');\n({ok: true});\n",
  'avatar/GET.js': "import {Me} from '👤';\n({svg: Me.avatar()});\n",
  'session/GET.js': "import {SessionId} from '👤';\n({id: SessionId});\n",
  // A page listing the user's teams through their profiles (a view reading a query).
  'index.html':
    "<!--TEMPLATE mustache-->\n<!doctype html><html><head><title>Teams</title>{{% import {Me} from '👤' }}{{% import {TeamMember} from '📦' }}</head><body>\n" +
    '<p class="me">{{Me.name}}</p>{{#TeamMember.me as m}}<p class="team">{{m.nickname}}</p>{{/TeamMember.me}}\n</body></html>\n',
};

const json = (r: { status: number; text: string }) => {
  try {
    return JSON.parse(r.text) as Record<string, unknown>;
  } catch {
    throw new Error(`not JSON (${r.status}): ${r.text.slice(0, 300)}`);
  }
};

for (const engine of ENGINES) {
  describe(`profiles and permissions (${engine.name})`, () => {
    let s: Served;
    let op: TestOidcProvider;
    const saved = { ...process.env };
    let ann: TestVisitor;
    let bob: TestVisitor;
    let annTeam = '';
    let bobTeam = '';

    async function signIn(v: TestVisitor, account: string) {
      const page = await v.get('/auth/');
      const action = /<form id="corp" method="post" action="([^"]+)"/.exec(page.text)![1]!.replace(/&amp;/g, '&');
      const started = await v.post(action);
      assert.equal(started.status, 303);
      const back = await op.login(String(started.headers.location), { account });
      const done = await v.get(back.pathname + back.search);
      assert.equal(done.status, 303, done.text);
    }

    before(async () => {
      op = await startOidcProvider();
      process.env.LANEWAY_AUTH_CORP_CLIENT_ID = op.clientId;
      process.env.LANEWAY_AUTH_CORP_SECRET = op.clientSecret;
      process.env.LANEWAY_AUTH_CORP_ISSUER = op.issuer;
      s = await serve(PROFILES_APP, { data: await engine.data() });
      await op.setRedirectUris([`http://localhost:${s.port}/__/auth/handler`]);
      ann = new TestVisitor(s.port);
      bob = new TestVisitor(s.port);
      await signIn(ann, 'ann');
      await signIn(bob, 'bob');
      const a = await ann.post('/teams/new', { name: 'Red' }, JSON_ACCEPT);
      assert.equal(a.status, 200, a.text);
      annTeam = String(json(a).id);
      const b = await bob.post('/teams/new', { name: 'Blue' }, JSON_ACCEPT);
      assert.equal(b.status, 200, b.text);
      bobTeam = String(json(b).id);
    });
    after(async () => {
      await s?.close();
      await op?.stop();
      for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
      Object.assign(process.env, saved);
    });

    it('a contained profile made with .role(Role.X).user(Me) gives its role in that container only', async () => {
      const made = await ann.post(`/teams/${annTeam}/boards`, { title: 'Plan' }, JSON_ACCEPT);
      assert.equal(made.status, 200, made.text);
      const team = json(await ann.get(`/teams/${annTeam}`, JSON_ACCEPT));
      assert.deepEqual(team, { name: 'Red', boards: ['Plan'], owner: true });
      // Bob owns Blue, not Red: creating a board in Red is refused, and nothing is written.
      const refused = await bob.post(`/teams/${annTeam}/boards`, { title: 'Intruder' }, JSON_ACCEPT);
      assert.equal(refused.status, 403, refused.text);
      assert.match(String(json(refused).error), /create on 📦\.Board/);
      assert.deepEqual(json(await ann.get(`/teams/${annTeam}`, JSON_ACCEPT)).boards, ['Plan']);
      // …and reading Red's name takes read on Team, which default does not give.
      const read = await bob.get(`/teams/${annTeam}`, JSON_ACCEPT);
      assert.equal(read.status, 403, read.text);
      // In his own team, he may.
      assert.equal((await bob.post(`/teams/${bobTeam}/boards`, { title: 'Mine' }, JSON_ACCEPT)).status, 200);
    });

    it("P.me().all() lists the user's profiles; hasRole reads the stored role", async () => {
      const mine = json(await ann.get('/mine', JSON_ACCEPT));
      // m.team().name: the container's fields read through the link, as apps written for the platform do.
      assert.deepEqual(mine, { teams: [{ team: annTeam, name: 'Red', owner: true, reviewer: false }] });
    });

    it('👤: {only: Role} refuses a visitor without the role in the container the path names', async () => {
      const refused = await bob.post(`/teams/${annTeam}/rename`, { name: 'Hacked' }, JSON_ACCEPT);
      assert.equal(refused.status, 403, refused.text);
      const ok = await ann.post(`/teams/${annTeam}/rename`, { name: 'Crimson' }, JSON_ACCEPT);
      assert.equal(ok.status, 200, ok.text);
      assert.equal(json(await ann.get(`/teams/${annTeam}`, JSON_ACCEPT)).name, 'Crimson');
    });

    it('👤: {as: Role} runs with the role; a Reviewer reads and lists but does not create; state and update apart', async () => {
      const joined = await bob.post(`/teams/${annTeam}/join`, {}, JSON_ACCEPT);
      assert.equal(joined.status, 200, joined.text);
      assert.deepEqual(json(await bob.get(`/teams/${annTeam}/shared`, JSON_ACCEPT)), { shared: true });
      assert.deepEqual(json(await bob.get(`/teams/${bobTeam}/shared`, JSON_ACCEPT)), { shared: false });
      const seen = json(await bob.get(`/teams/${annTeam}`, JSON_ACCEPT));
      assert.deepEqual(seen, { name: 'Crimson', boards: ['Plan'], owner: false });
      const create = await bob.post(`/teams/${annTeam}/boards`, { title: 'Nope' }, JSON_ACCEPT);
      assert.equal(create.status, 403, create.text);
      const state = await bob.post(`/teams/${annTeam}/board-status`, { title: 'Plan', status: 'closed' }, JSON_ACCEPT);
      assert.equal(state.status, 403, state.text);
      assert.match(String(json(state).error), /state on 📦\.Board\.status/);
      const owner = await ann.post(`/teams/${annTeam}/board-status`, { title: 'Plan', status: 'closed' }, JSON_ACCEPT);
      assert.deepEqual(json(owner), { status: 'closed' });
      const rename = await bob.post(`/teams/${annTeam}/board-title`, { title: 'Plan', to: 'Mine' }, JSON_ACCEPT);
      assert.equal(rename.status, 403);
      assert.match(String(json(rename).error), /update on 📦\.Board\.title/);
      // The only: check counts roles on profiles, not roles an endpoint runs as.
      assert.equal((await bob.post(`/teams/${annTeam}/rename`, { name: 'Again' }, JSON_ACCEPT)).status, 403);
    });

    it('a top-level profile: P.me().get() after creating it; create allowed by default, others refused', async () => {
      assert.deepEqual(json(await ann.get('/profile', JSON_ACCEPT)), { bio: null });
      assert.equal((await ann.post('/profile', { bio: 'Hello' }, JSON_ACCEPT)).status, 200);
      assert.deepEqual(json(await ann.get('/profile', JSON_ACCEPT)), { bio: 'Hello' });
      assert.deepEqual(json(await bob.get('/profile', JSON_ACCEPT)), { bio: null }, "Bob does not see Ann's profile as his");
      const notes = await ann.post('/notes', { text: 'x' }, JSON_ACCEPT);
      assert.equal(notes.status, 403);
      assert.match(String(json(notes).error), /create on 📦\.Note/);
      assert.deepEqual(json(await ann.get('/notes', JSON_ACCEPT)), [] as unknown as Record<string, unknown>);
      // A query limited to one record is still a list (default may list notes, not find one).
      const latest = await ann.get('/notes/latest', JSON_ACCEPT);
      assert.equal(latest.status, 200, latest.text);
    });

    it('a role that /👤.yaml does not declare cannot be stored on a profile', async () => {
      const r = await ann.post('/bad-role', {}, JSON_ACCEPT);
      assert.equal(r.status, 500);
      assert.deepEqual(json(await bob.get('/profile', JSON_ACCEPT)), { bio: null });
    });

    it("a view lists the user's profiles", async () => {
      const page = await ann.get('/');
      assert.equal(page.status, 200, page.text);
      assert.match(page.text, /<p class="team">/);
      assert.match(String(page.headers['cache-control']), /no-store|private/);
    });

    it("Me.avatar() takes read on the user's name and picture", async () => {
      const r = await ann.get('/avatar', JSON_ACCEPT);
      assert.equal(r.status, 403, r.text);
      assert.match(String(json(r).error), /read on 👤\.User\.name/);
    });

    it('SessionId names the session without being its cookie', async () => {
      const one = String(json(await ann.get('/session', JSON_ACCEPT)).id);
      assert.match(one, /^[A-Za-z0-9_-]{32}$/);
      assert.equal(json(await ann.get('/session', JSON_ACCEPT)).id, one, 'the same for the session');
      assert.notEqual(json(await bob.get('/session', JSON_ACCEPT)).id, one);
      assert.ok(!ann.cookieHeader.includes(one), 'not the sid cookie');
    });

    it('leaving: the profile is removed, and the role goes with it', async () => {
      assert.equal((await bob.post(`/teams/${annTeam}/leave`, {}, JSON_ACCEPT)).status, 200);
      assert.equal((await bob.get(`/teams/${annTeam}`, JSON_ACCEPT)).status, 403);
      assert.deepEqual(json(await ann.get(`/teams/${annTeam}/shared`, JSON_ACCEPT)), { shared: false });
    });
  });
}
