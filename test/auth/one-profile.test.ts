/**
 * One profile per user and container (docs/permissions.md), on both engines: sharing a record
 * twice with the same user, or a second top-level profile, is refused with 409
 * (LW_AUTH_PROFILE_EXISTS), sequentially and when the requests run at the same moment; a database
 * that already holds such duplicates still starts, says so, and refuses new ones; once they are
 * removed, the next start makes the unique index.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { serve, writeApp, type Served } from '../helpers.js';
import { ENGINES } from '../support/engines.js';
import { closeAppData, loadApp, openAppData, type App } from '../../src/app/index.js';
import type { DataOptions } from '../../src/app/services/data.js';

const J = { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded' };
const form = (o: Record<string, string>) => new URLSearchParams(o).toString();

const APP = {
  '📦/🌐Team.yaml': 'name: string\n',
  '📦/Team/👤TeamMember.yaml': 'nickname?: string\n',
  '📦/👤Member.yaml': 'bio?: string\n',
  'teams/POST.js': "import {Team} from '📦';\nimport {name} from 'form';\n({id: new Team().name(name).id});\n",
  // Sharing a team with a user: a profile of that user in the team.
  'share/POST.js': "import {Team, TeamMember} from '📦';\nimport {team, user} from 'form';\nnew TeamMember(Team.get(team)).user(user);\n({shared: true});\n",
  'unshare/POST.js': "import {Team, TeamMember} from '📦';\nimport {team, user} from 'form';\nTeamMember.team(Team.get(team)).user(user).get().remove();\n({unshared: true});\n",
  'access/GET.js': "import {Team, TeamMember} from '📦';\nimport {team, user} from '&';\n({profiles: TeamMember.team(Team.get(team)).user(user).count()});\n",
  'member/POST.js': "import {Member} from '📦';\nimport {user} from 'form';\nnew Member().user(user);\n({made: true});\n",
  'members/GET.js': "import {Member} from '📦';\nimport {user} from '&';\n({n: Member.user(user).count()});\n",
  'members/remove/POST.js': "import {Member} from '📦';\nimport {user} from 'form';\nconst all = [];\nMember.user(user).forEach((m) => { all.push(m); });\nall.slice(1).forEach((m) => { m.remove(); });\n({left: 1});\n",
};

const post = (s: Served, path: string, body: Record<string, string>) => s.request('POST', path, J, form(body));
const body = (r: { text: string }) => JSON.parse(r.text) as Record<string, unknown>;

/** The names of the unique indexes of a table (each engine's catalogue). */
async function uniqueIndexes(app: App, table: string): Promise<string[]> {
  const engine = app.data!.store!.engine;
  const rows = engine.dialect === 'sqlite'
    ? await engine.reader.all(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql LIKE 'CREATE UNIQUE%'`, [table])
    : await engine.reader.all(`SELECT indexname FROM pg_indexes WHERE tablename = $1 AND indexdef LIKE 'CREATE UNIQUE%' AND indexname NOT LIKE '%_pkey'`, [table]);
  return rows.map((r) => String(r[0])).sort();
}

for (const engine of ENGINES) {
  describe(`one profile per user and container (${engine.name})`, () => {
    let s: Served;
    let team = '';
    before(async () => {
      s = await serve(APP, { data: await engine.data() });
      team = String(body(await post(s, '/teams', { name: 'Red' })).id);
    });
    after(() => s?.close());

    it('sharing a record twice with the same user is refused with 409; one unshare then leaves no access', async () => {
      assert.equal((await post(s, '/share', { team, user: 'usr_ann' })).status, 200);
      const again = await post(s, '/share', { team, user: 'usr_ann' });
      assert.equal(again.status, 409, again.text);
      assert.match(String(body(again).error), /^this user has a TeamMember profile in this Team already \(one profile per user and Team\): change that one, found with TeamMember\.team\(team\)\.user\(id\), instead of making another$/);
      assert.deepEqual(body(await s.get(`/access?team=${team}&user=usr_ann`, J)), { profiles: 1 });
      assert.equal((await post(s, '/unshare', { team, user: 'usr_ann' })).status, 200);
      assert.deepEqual(body(await s.get(`/access?team=${team}&user=usr_ann`, J)), { profiles: 0 });
      // Another user in the team, the same user in another team: each their own profile.
      const blue = String(body(await post(s, '/teams', { name: 'Blue' })).id);
      assert.equal((await post(s, '/share', { team, user: 'usr_ann' })).status, 200);
      assert.equal((await post(s, '/share', { team, user: 'usr_bob' })).status, 200);
      assert.equal((await post(s, '/share', { team: blue, user: 'usr_ann' })).status, 200);
    });

    it('a second top-level profile of a user is refused with 409', async () => {
      assert.equal((await post(s, '/member', { user: 'usr_cat' })).status, 200);
      const again = await post(s, '/member', { user: 'usr_cat' });
      assert.equal(again.status, 409, again.text);
      assert.match(String(body(again).error), /^this user has a Member profile already \(one profile per user\)/);
      assert.deepEqual(body(await s.get('/members?user=usr_cat', J)), { n: 1 });
    });

    it('shares sent at the same moment: one profile is made, every other request gets 409', async () => {
      const answers = await Promise.all(Array.from({ length: 12 }, () => post(s, '/share', { team, user: 'usr_dan' })));
      assert.deepEqual(answers.map((a) => a.status).sort(), [200, ...Array<number>(11).fill(409)], answers.map((a) => `${a.status} ${a.text}`).join('\n'));
      assert.deepEqual(body(await s.get(`/access?team=${team}&user=usr_dan`, J)), { profiles: 1 });
      const members = await Promise.all(Array.from({ length: 12 }, () => post(s, '/member', { user: 'usr_eve' })));
      assert.deepEqual(members.map((a) => a.status).sort(), [200, ...Array<number>(11).fill(409)]);
    });
  });

  describe(`a database that already holds two profiles of a user (${engine.name})`, () => {
    let dir = '';
    let data: DataOptions;
    before(async () => {
      dir = writeApp(APP);
      data = await engine.data();
    });
    after(() => rmSync(dir, { recursive: true, force: true }));

    const open = async () => {
      const app = loadApp(dir);
      await openAppData(app, data);
      return app;
    };

    it('starts, says what it found, refuses new duplicates; after they are removed the next start makes the index', async () => {
      // A database written before the index: the index dropped, then two profiles of one user.
      let app = await open();
      assert.deepEqual(await uniqueIndexes(app, 'lw_Member'), ['lw_Member_user_u']);
      const w = await app.data!.store!.engine.begin();
      await w.run('DROP INDEX "lw_Member_user_u"', []);
      const p = app.data!.store!.engine.dialect === 'sqlite' ? ['?', '?', '?', '?'] : ['$1', '$2', '$3', '$4'];
      for (const id of ['m1', 'm2']) await w.run(`INSERT INTO "lw_Member" ("id", "created", "modified", "f_user") VALUES (${p.join(', ')})`, [id, Date.now(), Date.now(), 'usr_old']);
      // And in a container: two profiles of one user in one team.
      await w.run('DROP INDEX "lw_TeamMember_user_u"', []);
      await w.run(`INSERT INTO "lw_Team" ("id", "created", "modified", "f_name") VALUES (${p.join(', ')})`, ['t1', Date.now(), Date.now(), 'Old']);
      for (const id of ['tm1', 'tm2']) await w.run(`INSERT INTO "lw_TeamMember" ("id", "created", "modified", "container", "f_user") VALUES (${p.join(', ')}, ${p[0] === '?' ? '?' : '$5'})`, [id, Date.now(), Date.now(), 't1', 'usr_old']);
      await w.commit();
      await closeAppData(app);

      app = await open();
      const notices = app.data!.store!.notices;
      assert.equal(notices.length, 2, notices.join('\n'));
      assert.match(notices.find((n) => n.startsWith('Member:'))!, /^Member: 1 user has more than one profile as top-level profiles .*the unique index on lw_Member\.f_user is not made.*Remove the extra profiles/);
      assert.match(notices.find((n) => n.startsWith('TeamMember:'))!, /^TeamMember: 1 user has more than one profile in one Team /);
      assert.deepEqual(await uniqueIndexes(app, 'lw_Member'), []);
      assert.deepEqual(await uniqueIndexes(app, 'lw_TeamMember'), []);
      await closeAppData(app);

      const s = await serve(dir, { data });
      try {
        const third = await post(s, '/member', { user: 'usr_old' });
        assert.equal(third.status, 409, third.text);
        assert.match(String(body(third).error), /^this user has a Member profile already/);
        assert.equal((await post(s, '/member', { user: 'usr_new' })).status, 200);
        assert.equal((await post(s, '/member', { user: 'usr_new' })).status, 409);
        assert.deepEqual(body(await s.get('/members?user=usr_old', J)), { n: 2 });
        assert.equal((await post(s, '/members/remove', { user: 'usr_old' })).status, 200);
        assert.deepEqual(body(await s.get('/members?user=usr_old', J)), { n: 1 });
        const shared = await post(s, '/share', { team: 't1', user: 'usr_old' });
        assert.equal(shared.status, 409, shared.text);
        assert.equal((await post(s, '/share', { team: 't1', user: 'usr_new' })).status, 200);
        assert.equal((await post(s, '/share', { team: 't1', user: 'usr_new' })).status, 409);
        assert.equal((await post(s, '/unshare', { team: 't1', user: 'usr_old' })).status, 200);
        assert.deepEqual(body(await s.get('/access?team=t1&user=usr_old', J)), { profiles: 1 });
      } finally {
        await s.close();
      }

      app = await open();
      assert.deepEqual(app.data!.store!.notices, []);
      assert.deepEqual(await uniqueIndexes(app, 'lw_Member'), ['lw_Member_user_u']);
      assert.deepEqual(await uniqueIndexes(app, 'lw_TeamMember'), ['lw_TeamMember_user_u']);
      await closeAppData(app);
    });
  });
}
