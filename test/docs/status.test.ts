/**
 * docs/status.md: the statements marked "(tested)" — what Laneway answers today where the
 * platform had a feature Laneway does not. When one of these tests fails because the feature
 * arrived, the status page (and the page it links to) must change with it.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { diagnosticsOf, serve } from '../helpers.js';
import { readDoc } from './markdown.js';

describe('docs/status.md', () => {
  const page = readDoc('status.md');

  it('click actions (🖱) are a build error', () => {
    const d = diagnosticsOf({ '/🖱verify.js': "'/'\n" });
    assert.equal(d.length, 1);
    assert.match(d[0]!, /\[LW_ROUTE_NOT_AVAILABLE\]$/);
  });

  it("a script importing a connector's REST API is a warning and answers 501", () => {
    assert.deepEqual(diagnosticsOf({ '/GET.js': "import {charges} from 'stripe.com'\n({charges})\n" }), [
      `GET.js:1:9: warning: 'stripe.com' is a connector's REST API, which Laneway does not have (docs/status.md, "Not available": connectors' REST APIs): this file answers 501 Not Implemented, and the rest of the app runs [LW_APP_NOT_AVAILABLE]`,
    ]);
  });

  it("the platform-internal field types are strings, with a warning", () => {
    assert.deepEqual(diagnosticsOf({ '/📦/🌐Site.yaml': 'src: source\n' }), [
      '📦/🌐Site.yaml:1:6: warning: source (a git URL of a site) is a platform-internal type that Laneway does not check (docs/status.md, "Not available": the platform-internal field types): the field is a string; write `string` to say so [LW_MODEL_TYPE_NOT_AVAILABLE]',
    ]);
  });

  it('no web-app properties: 🎨.WebApp is an unknown property, and app: true is accepted', () => {
    assert.deepEqual(diagnosticsOf({ '/🎛.yaml': 'name: X\napp: true\n', '/🎨.scss': "$name: 'X';\n", '/index.html': '<!--TEMPLATE mustache-->\n{{{🎨.WebApp}}}\n' }), [
      'index.html:2:4: /🎨.scss defines no property "WebApp"; it defines name [LW_SETTINGS_UNKNOWN_PROPERTY]',
    ]);
  });

  it("`keys:` of a nested site is a warning, without effect", () => {
    const d = diagnosticsOf({ '/🔌store.yaml': 'source: .\nkeys: [api:stripe.com]\n' }).filter((l) => l.includes('keys:'));
    assert.equal(d.length, 1);
    assert.match(d[0]!, /warning: `keys:` has no effect yet/);
  });

  it("a script importing '🔌' is a warning and answers 501; the rest of the app runs; no locale overlay of the properties", async () => {
    assert.deepEqual(diagnosticsOf({ '/x/GET.js': "import {Source, Build} from '🔌'\n({})\n" }), [
      `x/GET.js:1:17: warning: '🔌' is the hosting platform's own services (its sources, builds and deployments), which Laneway does not have (docs/status.md, "Not available": '🔌', the platform's own services): this file answers 501 Not Implemented, and the rest of the app runs [LW_SCRIPT_PLATFORM_MODULE]`,
    ]);
    const s = await serve({
      '/🎛.yaml': 'name: X\nlocale: en\n',
      '/🎨.scss': "$hello: 'Hello';\n",
      '/🎨.de.scss': "$hello: 'Hallo';\n",
      '/index.html': '<!--TEMPLATE mustache-->\n<p>{{🎨.hello}}</p>\n',
      '/x/GET.js': "import {Build} from '🔌'\n({})\n",
    });
    try {
      assert.equal((await s.get('/x')).status, 501);
      const home = await s.get('/', { 'Accept-Language': 'de' });
      assert.equal(home.status, 200);
      assert.equal(home.text.trim(), '<p>Hello</p>');
      const overlay = await s.get(encodeURI('/🎨.de.scss'));
      assert.equal(overlay.status, 200, 'served as an ordinary stylesheet');
      assert.match(String(overlay.headers['content-type']), /^text\/css/);
    } finally {
      await s.close();
    }
  });

  it('key-vault models and models nested two containers deep are left out, with a warning', () => {
    const d = diagnosticsOf({
      '/📦/🌐Project.yaml': 'name: string\n',
      '/📦/🔑Secret.yaml': 'value: string\n',
      '/📦/Project/🌐Version.yaml': 'name: string\n',
      '/📦/Project/Version/🌐Key.yaml': 'name: string\n',
    });
    assert.equal(d.length, 2, d.join('\n'));
    assert.match(d[0]!, /^📦\/Project\/Version:1:1: warning: .*Key is left out.*\[LW_MODEL_NOT_AVAILABLE\]$/);
    assert.match(d[1]!, /^📦\/🔑Secret.yaml:1:1: warning: .*key-vault.*Secret is left out.*\[LW_MODEL_NOT_AVAILABLE\]$/);
  });

  it('a nested site the platform provides (`feature:`) mounts nothing, with a warning, also in a {param} directory', () => {
    const d = diagnosticsOf({ '/🔌api.yaml': 'feature: management-api\n', '/s/{s}/🔗.yaml': 'feature: source-session\n', '/s/{s}/🔌api.yaml': 'feature: source-api\n' });
    assert.equal(d.length, 2, d.join('\n'));
    for (const line of d) assert.match(line, /warning: 🔌api.yaml mounts the platform's own ".*" \(`feature:`\).*nothing is mounted.*\[LW_APP_NOT_AVAILABLE\]$/);
  });

  it('every "(tested)" statement has a test here', () => {
    // 🖱, REST connectors, '🔌', 🎨.WebApp, Accept-Language, /🎨.de.scss, source type,
    // key-vault and nested models, feature: mounts, keys:.
    assert.equal(page.match(/\(tested\)/g)?.length, 11);
  });
});
