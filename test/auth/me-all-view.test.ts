/**
 * `{{#Profile.me.all}}` in a view (docs/users.md): accepted at load as `{{#Profile.me}}` is, and
 * lists the signed-in user's profiles in every container. Black-box on both engines, with the
 * development sign-in.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { closeAppData, loadApp, openAppData } from '../../src/app/index.js';
import { parseDevUsers } from '../../src/auth/index.js';
import { createServer } from '../../src/http/index.js';
import { diagnosticsOf, writeApp } from '../helpers.js';
import { ENGINES } from '../support/engines.js';
import { TestVisitor } from '../support/visitor.js';

const LIST = (path: string) =>
  "<!--TEMPLATE mustache-->\n<!doctype html><html><head><title>Teams</title>{{% import {TeamMember} from '📦' }}</head><body>\n" +
  `{{#${path} as m}}<p class="team">{{m.nickname}}</p>{{/${path}}}\n</body></html>\n`;

const APP: Record<string, string> = {
  '👤.yaml': 'providers: [corp]\nauth: required\n\ndefault:\n  📦.TeamMember: access, list, read\n\nTeamOwner:\n  📦.Team: all\n  📦.TeamMember: all\n',
  '📦/🌐Team.yaml': 'name: string\n',
  '📦/Team/👤TeamMember.yaml': 'nickname?: string\n',
  'teams/📮new.js':
    "import {Me, Role} from '👤';\nimport {Team, TeamMember} from '📦';\nimport {name} from 'form';\n" +
    'let team = new Team().name(name);\nnew TeamMember(team).role(Role.TeamOwner).user(Me).nickname(name);\n({id: team.id});\n',
  'teams/📮new.yaml': '👤: TeamOwner\n',
  'index.html': LIST('TeamMember.me.all'),
  'count.html': LIST('TeamMember.me.all.asc'),
};

describe('{{#Profile.me.all}} at load', () => {
  it('is accepted, as {{#Profile.me}} is; other members after it are not', () => {
    assert.deepEqual(diagnosticsOf(APP), []);
    const bad = diagnosticsOf({ ...APP, 'bad.html': LIST('TeamMember.me.all.remove') });
    assert.equal(bad.length, 1, bad.join('\n'));
    assert.match(bad[0]!, /^bad.html:\d+:\d+: a view can read .* of TeamMember.me.all; make other queries in a supplier \[LW_MODEL_MEMBER\]$/);
  });
});

for (const engine of ENGINES) {
  describe(`{{#Profile.me.all}} rendered (${engine.name})`, () => {
    let dir = '';
    let close: () => Promise<void> = async () => {};
    let port = 0;
    before(async () => {
      dir = writeApp(APP);
      const app = loadApp(dir);
      await openAppData(app, { ...(await engine.data()), log: { info: () => {}, error: () => {} } });
      const users = parseDevUsers('Ada, Bob');
      if ('error' in users) throw new Error(users.error);
      app.data!.auth!.enableDevSignIn(users.users);
      const server = createServer(app, { log: 'off' });
      port = (await server.listen(0, '127.0.0.1')).port;
      close = async () => {
        await server.close();
        await closeAppData(app);
      };
    });
    after(async () => {
      await close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it("lists the signed-in user's profiles in every container, and no one else's", async () => {
      const signIn = async (id: string) => {
        const v = new TestVisitor(port);
        assert.equal((await v.post(`/__/auth/dev/${id}`)).status, 303);
        return v;
      };
      const ada = await signIn('ada');
      const bob = await signIn('bob');
      for (const name of ['Red', 'Blue']) assert.equal((await ada.post('/teams/new', { name }, { Accept: 'application/json' })).status, 200);
      assert.equal((await bob.post('/teams/new', { name: 'Green' }, { Accept: 'application/json' })).status, 200);
      const teams = (html: string) => [...html.matchAll(/<p class="team">([^<]*)<\/p>/g)].map((m) => m[1]).sort();
      const page = await ada.get('/');
      assert.equal(page.status, 200, page.text);
      assert.deepEqual(teams(page.text), ['Blue', 'Red']);
      assert.deepEqual(teams((await ada.get('/count')).text), ['Blue', 'Red']);
      assert.deepEqual(teams((await bob.get('/')).text), ['Green']);
    });
  });
}
