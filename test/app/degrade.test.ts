/**
 * What degrades instead of stopping the app (docs/status.md "What degrades"): a file that needs a
 * feature Laneway does not have answers 501 with a warning at its line, the files that use it
 * through '📤' too; everything else serves; real mistakes stay errors; --strict makes the
 * warnings errors.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { diagnosticsOf, jsonWithoutId, serve, writeApp, type Served } from '../helpers.js';
import { ENGINES } from '../support/engines.js';
import { runLaneway } from '../support/laneway.js';

const VIEW = '<!--TEMPLATE mustache-->\n';

/** An app in the shapes of a hosted console: billing through a REST connector, platform services, a key vault. */
const APP = {
  '/📦/🌐Team.yaml': 'name: string\nrepo: source\nns:\n  type: namespace\n  init: true\nhost?: domain\n',
  '/📦/Team/🌐Release.yaml': 'tag: string\n',
  '/📦/Team/Release/🌐Secret.yaml': 'value: string\n',
  '/📦/🔑Vault.yaml': 'value: string\n',
  '/index.html': VIEW + '<p>home</p>\n',
  // A supplier needing a connector's REST API, a page importing it, and one that does not.
  '/billing/📤/Plans.js': "import {prices} from 'stripe.com';\nlet Plans = prices.list();\nexport {Plans};\n",
  '/billing/📤/Chain.js': "import {Plans} from '📤';\nlet Cheapest = Plans;\nexport {Cheapest};\n",
  '/billing/plans.html': VIEW + "{{% import {Plans} from '📤' }}\n<p>{{Plans}}</p>\n",
  '/billing/cheapest.html': VIEW + "{{% import {Cheapest} from '📤' }}\n<p>{{Cheapest}}</p>\n",
  '/billing/about.html': VIEW + '<p>about billing</p>\n',
  '/billing/📮subscribe.js': "import {subscriptions} from 'stripe.com';\n({ok: true});\n",
  // A function supplier needing the platform's own services.
  '/📤/{}Builds.js': "import {Build} from '🔌';\nlet Start = (x) => Build.start(x);\nexport {Start};\n",
  '/deploy/GET.js': "import {Start} from '📤';\n({started: Start(1)});\n",
  // Left-out models: used by a script, under a parameter, and in 👤.yaml (users are off here).
  '/vault/GET.js': "import {Vault} from '📦';\n({n: Vault.all().count()});\n",
  '/secrets/{secret}/🔗.yaml': 'field: 📦.Secret.id\n',
  '/secrets/{secret}/index.html': VIEW + "{{% import {secret} from '🔗' }}\n<p>{{secret}}</p>\n",
  '/secrets/{secret}/GET.js': '({ok: true});\n',
  // The platform's own API mounted, in a {param} directory too.
  '/🔌api.yaml': 'feature: management-api\n',
  '/s/{s}/🔗.yaml': 'feature: source-session\n',
  '/s/{s}/🔌api.yaml': 'feature: source-api\n',
  // Platform-internal types are strings.
  '/teams/POST.js': "import {Team} from '📦';\nlet t = new Team();\nt.name = 'a';\nt.repo = 'https://example.test/a.git';\nt.ns = 'ns-1';\nt.host = 'a.example.test';\n({id: t.id});\n",
  '/teams/GET.js': "import {Team} from '📦';\n(Team.all().map((t) => ({repo: t.repo, ns: t.ns, host: t.host})));\n",
};

describe('what degrades (docs/status.md)', () => {
  it('is a warning at the line that needs the feature, naming it and docs/status.md; the app has no errors', () => {
    const problems = diagnosticsOf(APP);
    assert.ok(problems.every((p) => p.includes(': warning: ')), problems.join('\n'));
    const at = (file: string) => problems.filter((p) => p.startsWith(file + ':'));
    assert.match(at('billing/📤/Plans.js')[0]!, /^billing\/📤\/Plans.js:1:9: warning: 'stripe.com' is a connector's REST API.*docs\/status.md, "Not available": connectors' REST APIs.*supplies nothing.*\[LW_APP_NOT_AVAILABLE\]$/);
    assert.match(at('billing/📤/Chain.js')[0]!, /:1:9: warning: "Plans" comes from \/billing\/📤\/Plans.js, which needs connectors' REST APIs/);
    assert.match(at('billing/plans.html')[0]!, /:2:13: warning: cannot import "Plans"/);
    assert.match(at('billing/cheapest.html')[0]!, /"Cheapest" comes from \/billing\/📤\/Chain.js/);
    assert.equal(at('billing/📮subscribe.js').length, 1, 'one warning per line');
    assert.match(at('📤/{}Builds.js')[0]!, /'🔌' is the hosting platform's own services.*\[LW_SCRIPT_PLATFORM_MODULE\]$/);
    assert.match(at('deploy/GET.js')[0]!, /"Start" comes from \/📤\/{}Builds.js.*\[LW_SCRIPT_PLATFORM_MODULE\]$/);
    assert.match(at('vault/GET.js')[0]!, /the model Vault is left out: it is one of the key-vault models/);
    assert.match(at('secrets/{secret}/🔗.yaml')[0]!, /the model Secret is left out: it is one of the models nested two containers deep.*\[LW_APP_NOT_AVAILABLE\]$/);
    assert.match(at('📦/🔑Vault.yaml')[0]!, /\[LW_MODEL_NOT_AVAILABLE\]$/);
    assert.match(at('📦/Team/Release')[0]!, /Secret is left out.*\[LW_MODEL_NOT_AVAILABLE\]$/);
    assert.deepEqual(at('📦/🌐Team.yaml').map((p) => p.split(' ')[0]), ['📦/🌐Team.yaml:2:7:', '📦/🌐Team.yaml:4:9:', '📦/🌐Team.yaml:5:3:', '📦/🌐Team.yaml:6:8:']);
    assert.equal(at('🔌api.yaml').length, 1);
    assert.equal(at('s/{s}/🔌api.yaml').length, 1);
    assert.ok(!problems.some((p) => p.startsWith('billing/about.html') || p.startsWith('index.html') || p.startsWith('teams/')), problems.join('\n'));
  });

  it('a rule of 👤.yaml for a left-out model is skipped with a warning', () => {
    const problems = diagnosticsOf({
      '/📦/🔑Vault.yaml': 'value: string\n',
      '/📦/👤Member.yaml': 'name: string\n',
      '/👤.yaml': 'auth: optional\nproviders: [google]\nOwner:\n  📦.Member: all\n  📦.Vault: all\n',
    }).filter((p) => p.startsWith('👤.yaml'));
    assert.equal(problems.length, 1, problems.join('\n'));
    assert.match(problems[0]!, /^👤.yaml:5:3: warning: the model Vault is left out.*the rule for "📦.Vault" is skipped \[LW_APP_NOT_AVAILABLE\]$/);
  });

  it('real mistakes stay errors, also beside a feature that is not available', () => {
    const problems = diagnosticsOf({
      '/📤/Plans.js': "import {prices} from 'stripe.com';\nlet Plans = prices;\nlet Free = 0;\nexport {Plans, Free};\n",
      '/inner/📤/Local.js': 'let Local = 1;\nexport {Local};\n',
      // A name exported out of the page's scope (under /inner/), beside a degraded one: an error.
      '/both.html': VIEW + "{{% import {Plans, Local} from '📤' }}\n",
      // A script or supplier importing a name no supplier exports: an error.
      '/POST.js': "import {Nope} from '📤';\n({});\n",
      '/📤/Uses.js': "import {Nope} from '📤';\nlet Uses = Nope;\nexport {Uses};\n",
      // A model never defined.
      '/GET.js': "import {Ghost} from '📦';\n({});\n",
      '/📦/🌐Task.yaml': 'title: string\n',
    });
    const errors = problems.filter((p) => !p.includes(': warning: '));
    assert.deepEqual(
      errors.map((p) => p.split(' ')[0]),
      ['GET.js:1:9:', 'POST.js:1:9:', 'both.html:2:13:', 'both.html:2:20:', '📤/Uses.js:1:9:'],
      problems.join('\n'),
    );
  });

  it('a page importing a name no supplier of the app exports answers 501, with a warning at the import', async () => {
    const files = {
      '/📤/Site.js': "let Free = 0;\nexport {Free};\n",
      // "Not currently in use": the platform served the rest of such an app.
      '/old.html': VIEW + "{{% import {Fre} from '📤' }}\n<p>old</p>\n",
      '/index.html': VIEW + "{{% import {Free} from '📤' }}\n<p>{{Free}}</p>\n",
    };
    const problems = diagnosticsOf(files);
    assert.deepEqual(problems.filter((p) => !p.includes(': warning: ')), []);
    assert.match(problems.find((p) => p.startsWith('old.html:'))!, /^old.html:2:13: warning: cannot import "Fre" from '📤': no supplier in scope exports "Fre".*this page answers 501 Not Implemented \(docs\/status.md, "What degrades"\).*\[LW_APP_NOT_AVAILABLE\]$/);
    const s = await serve(files);
    try {
      assert.equal((await s.get('/old')).status, 501);
      const home = await s.get('/');
      assert.equal(home.status, 200);
      assert.match(home.text, /<p>0<\/p>/);
    } finally {
      await s.close();
    }
  });

  it('laneway check --strict turns every such warning into an error (exit 1); without it, exit 0', async () => {
    const dir = writeApp({ '/index.html': VIEW + '<p>x</p>\n', '/x/GET.js': "import {Build} from '🔌';\n({});\n", '/📦/🌐Site.yaml': 'src: source\n' });
    try {
      const plain = await runLaneway(['check', dir]);
      assert.equal(plain.code, 0, plain.out + plain.err);
      assert.match(plain.out, /0 errors, 2 warnings/);
      const strict = await runLaneway(['check', '--strict', dir]);
      assert.equal(strict.code, 1, strict.out + strict.err);
      assert.match(strict.out, /x\/GET.js:1:9: '🔌' is the hosting platform's own services.*\[LW_SCRIPT_PLATFORM_MODULE\]/);
      assert.match(strict.out, /📦\/🌐Site.yaml:1:6: source .*\[LW_MODEL_TYPE_NOT_AVAILABLE\]/);
      assert.match(strict.out, /2 errors/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  for (const engine of ENGINES) {
    describe(`serving, on ${engine.name}`, () => {
      let s: Served;
      before(async () => {
        s = await serve(APP, { data: await engine.data() });
      });
      after(() => s.close());

      it('answers 501 with a short page naming the feature where it is needed', async () => {
        for (const path of ['/billing/plans', '/billing/cheapest', '/deploy', '/vault', '/secrets/x/', '/secrets/x']) {
          const r = await s.get(path);
          assert.equal(r.status, 501, path);
          assert.match(r.text, /This part of the site (needs|uses the hosting platform)/, path);
        }
        const j = await s.get('/billing/plans', { Accept: 'application/json' });
        assert.deepEqual(jsonWithoutId(j), { error: "This part of the site needs connectors' REST APIs, which this server does not provide." });
        const post = await s.request('POST', '/billing/subscribe', { Origin: s.url, 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' }, 'a=1');
        assert.equal(post.status, 501);
      });

      it('serves everything else; nothing is mounted for feature:', async () => {
        assert.match((await s.get('/')).text, /home/);
        assert.match((await s.get('/billing/about')).text, /about billing/);
        assert.equal((await s.get('/api/')).status, 404);
        assert.equal((await s.get('/s/a/api/')).status, 404);
      });

      it('stores and reads the platform-internal types as strings', async () => {
        const made = await s.request('POST', '/teams', { Origin: s.url, 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' }, 'a=1');
        assert.equal(made.status, 200, made.text);
        assert.deepEqual(JSON.parse((await s.get('/teams')).text), [{ repo: 'https://example.test/a.git', ns: 'ns-1', host: 'a.example.test' }]);
      });
    });
  }
});
