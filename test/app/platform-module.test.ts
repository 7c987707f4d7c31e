/**
 * The `'🔌'` module (the hosting platform's own services): `Source` is computed here (a git URL read
 * into name, owner, host), so a docs site's `POST /site` creates its mapping and redirects, on both
 * engines; scripts that import a hosted service (`Build`, `Mapping`…) are a warning at load and
 * answer 501, and the rest of the app runs.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { diagnosticsOf, serve, type Served } from '../helpers.js';
import { ENGINES } from '../support/engines.js';

const M = '<!--TEMPLATE mustache-->\n';
const FORM = { 'Content-Type': 'application/x-www-form-urlencoded' };

// In the shape of a documentation site's "open a repository" form: the URL of a git repository is
// checked, read, and mapped to a short key that names the site's pages.
const APP = {
  'index.html': `${M}<!doctype html><html><head><title>Docs</title></head><body><p>still here</p></body></html>\n`,
  '📦/🌐Site.yaml': 'repository: string\nslug: uid\n',
  'site/POST.js': [
    "import {repository} from 'form';",
    "import {Source} from '🔌';",
    "import {Site} from '📦';",
    'if (repository == null || !Source.isValidURLFormat(repository)) throw repository;',
    'let slugOf = () => Source.of(repository).name.toLowerCase();',
    'try {',
    '  let found = Site.repository(repository).get();',
    "  Redirect.dir('site').dir(found.slug);",
    '} catch ($ModelNotFound) {',
    '  let made = new Site().repository(repository).slug(slugOf());',
    "  Redirect.dir('site').dir(made.slug);",
    '}',
    '',
  ].join('\n'),
  'site/{site}/🔗.yaml': 'field: 📦.Site.slug\n',
  'site/{site}/index.html': `${M}{{% import {site} from '🔗' }}<h1>{{site.get.slug}}</h1><p>{{site.get.repository}}</p>`,
  'builds/⏱progress.js': "import {Source, Build} from '🔌';\n(() => ({data: Build.status()}));\n",
  'read/GET.js': [
    "import {Source} from '🔌';",
    "import {u} from '&';",
    'if (!Source.isValidURLFormat(u)) ({valid: false});',
    'else {',
    '  let s = Source.of(u);',
    '  ({valid: true, name: s.name, owner: s.owner, host: s.host, url: s.url, type: s.type, ssh: s.ssh});',
    '}',
    '',
  ].join('\n'),
  'exists/GET.js': "import {Source} from '🔌';\nSource.of('https://github.com/a/b').exists();\n",
  'hosted/GET.js': "import {Build} from '🔌';\n({b: Build});\n",
  'hello/GET.js': "({hello: 'world'});\n",
};

const read = async (s: Served, u: string): Promise<Record<string, unknown>> => {
  const r = await s.get(`/read?u=${encodeURIComponent(u)}`, { Accept: 'application/json' });
  assert.equal(r.status, 200, r.text);
  return JSON.parse(r.text) as Record<string, unknown>;
};

describe("'🔌' Source, computed here", () => {
  let s: Served;
  before(async () => {
    s = await serve(APP);
  });
  after(() => s.close());

  it('reads https and git@ URLs of GitHub, GitLab, Bitbucket and any host', async () => {
    const rows: Array<[string, Record<string, unknown>]> = [
      ['https://github.com/lantern-co/handbook', { name: 'handbook', owner: 'lantern-co', host: 'github.com', type: 'GitHub', ssh: false }],
      ['https://github.com/lantern-co/handbook.git', { name: 'handbook', owner: 'lantern-co', host: 'github.com', type: 'GitHub', ssh: false }],
      ['git@github.com:lantern-co/handbook.git', { name: 'handbook', owner: 'lantern-co', host: 'github.com', type: 'GitHub', ssh: true }],
      ['https://gitlab.com/guild/tools/wicks.git', { name: 'wicks', owner: 'guild/tools', host: 'gitlab.com', type: 'GitLab', ssh: false }],
      ['git@gitlab.com:guild/wicks.git', { name: 'wicks', owner: 'guild', host: 'gitlab.com', type: 'GitLab', ssh: true }],
      ['https://bitbucket.org/oilworks/flame', { name: 'flame', owner: 'oilworks', host: 'bitbucket.org', type: 'Bitbucket', ssh: false }],
      ['git@bitbucket.org:oilworks/flame.git', { name: 'flame', owner: 'oilworks', host: 'bitbucket.org', type: 'Bitbucket', ssh: true }],
      ['https://git.example.org/team/site.git', { name: 'site', owner: 'team', host: 'git.example.org', type: 'Git', ssh: false }],
      ['ssh://git@Git.Example.org/team/site.git', { name: 'site', owner: 'team', host: 'git.example.org', type: 'Git', ssh: true }],
      ['https://github.com/lantern-co/handbook/tree/main/docs', { name: 'handbook', owner: 'lantern-co', host: 'github.com', type: 'GitHub', ssh: false }],
    ];
    for (const [u, want] of rows) assert.deepEqual(await read(s, u), { valid: true, url: u, ...want }, u);
  });

  it('refuses what is not the address of a repository', async () => {
    for (const u of ['', 'handbook', 'https://github.com/only-owner', 'ftp://github.com/a/b', 'https://github.com/a/b/c', 'javascript:alert(1)', 'https://x/a/b', 'git@github.com:', 'https://github.com/a/b?x=1']) {
      assert.deepEqual(await read(s, u), { valid: false }, u);
    }
  });

  it("a member that asks the platform's source service answers 501", async () => {
    const r = await s.get('/exists', { Accept: 'application/json' });
    assert.equal(r.status, 501, r.text);
  });

  it('hosted services (Build) are a warning at load with the position of the import, and answer 501', async () => {
    const problems = diagnosticsOf(APP).filter((p) => p.includes('LW_SCRIPT'));
    assert.deepEqual(
      problems.filter((p) => p.includes('LW_SCRIPT_PLATFORM_MODULE')).map((p) => p.split(' ')[0]),
      ['builds/⏱progress.js:1:17:', 'hosted/GET.js:1:9:'],
      problems.join('\n'),
    );
    assert.match(problems[0]!, /'🔌' is the hosting platform's own services/);
    const r = await s.get('/hosted', { Accept: 'application/json' });
    assert.equal(r.status, 501);
    assert.match(JSON.parse(r.text).error, /hosting platform/);
    assert.equal((await s.get('/builds/progress', { Accept: 'text/event-stream' })).status, 501);
  });

  it('the rest of the app runs', async () => {
    assert.match((await s.get('/')).text, /still here/);
    assert.deepEqual(JSON.parse((await s.get('/hello')).text), { hello: 'world' });
  });
});

for (const engine of ENGINES) {
  describe(`a docs site's POST /site on ${engine.name}`, () => {
    let s: Served;
    before(async () => {
      s = await serve(APP, { data: await engine.data() });
    });
    after(() => s.close());

    it('creates the mapping from the repository name and redirects to it; the same URL again finds it', async () => {
      const body = `repository=${encodeURIComponent('https://github.com/lantern-co/Handbook.git')}`;
      const r = await s.request('POST', '/site', FORM, body);
      assert.equal(r.status, 302, r.text);
      assert.equal(r.headers.location, '/site/handbook/');
      const page = await s.get('/site/handbook/');
      assert.equal(page.status, 200);
      assert.match(page.text, /<h1>handbook<\/h1><p>https:\/\/github.com\/lantern-co\/Handbook.git<\/p>/);
      const again = await s.request('POST', '/site', FORM, body);
      assert.equal(again.status, 302);
      assert.equal(again.headers.location, '/site/handbook/');
    });

    it('refuses a URL that is not a repository (nothing created)', async () => {
      const r = await s.request('POST', '/site', FORM, 'repository=not-a-repository');
      assert.ok(r.status >= 400 && r.status < 500, `${r.status} ${r.text}`);
      assert.equal((await s.get('/site/not-a-repository/')).status, 404);
    });
  });
}
