/**
 * The manifest `/🎛.yaml` (docs/manifest.md): `name` (required in a manifest; an app without one
 * still runs), `locale`, `type` (a resource site serves no pages of its own), the keys Laneway
 * accepts and ignores, unknown keys, and the `'🎛'` module of views.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { basename } from 'node:path';
import { loadApp } from '../../src/app/index.js';
import { diagnosticsOf, serve, writeApp, type AppFiles } from '../helpers.js';

const M = '<!--TEMPLATE mustache-->\n';


/** The settings an app loads with. */
function settingsOf(files: AppFiles): { name: string; locale: string; type: string | undefined; manifest: boolean; dir: string } {
  const dir = writeApp(files);
  try {
    const { settings } = loadApp(dir);
    return { name: settings.name, locale: settings.locale, type: settings.type, manifest: settings.manifest, dir };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('name', () => {
  it('is read from the manifest', () => {
    const s = settingsOf({ '/🎛.yaml': 'name: The Great App\n' });
    assert.deepEqual([s.name, s.locale, s.type, s.manifest], ['The Great App', 'en', undefined, true]);
  });

  it('is the app directory\'s name when there is no manifest: an app needs none to run', async () => {
    const s = settingsOf({ '/index.html': '<p>hi</p>' });
    assert.deepEqual([s.name, s.locale, s.type, s.manifest], [basename(s.dir), 'en', undefined, false]);
    assert.deepEqual(diagnosticsOf({ '/index.html': '<p>hi</p>' }), []);
    const served = await serve({ '/index.html': '<p>hi</p>' });
    try {
      assert.equal((await served.get('/')).text, '<p>hi</p>');
    } finally {
      await served.close();
    }
  });

  it('is expected when the manifest exists: without it, a warning, and the directory\'s name (older manifests held only settings)', () => {
    const warning = "🎛.yaml:1:1: warning: the manifest has no `name:`; every /🎛.yaml names its site, as `name: My site` (meanwhile the site takes its directory's name) [LW_SETTINGS_NAME]";
    assert.deepEqual(diagnosticsOf({ '/🎛.yaml': 'limits: {cpu-ms: 200}\n' }), [warning]);
    assert.deepEqual(diagnosticsOf({ '/🎛.yaml': '' }), [warning]);
    const s = settingsOf({ '/🎛.yaml': 'locale: fr\n' });
    assert.deepEqual([s.name, s.locale], [basename(s.dir), 'fr']);
  });

  it('is text', () => {
    assert.deepEqual(diagnosticsOf({ '/🎛.yaml': '# site\nname: 2048\n' }), [
      "🎛.yaml:2:1: `name:` is the site's name as text, such as `name: My site` (quote it if it looks like a number) [LW_SETTINGS_NAME]",
    ]);
  });
});

describe('the file as a whole', () => {
  it('reports YAML that does not parse at its line and column', () => {
    const lines = diagnosticsOf({ '/🎛.yaml': 'name: A\nlimits: {cpu-ms: 1\n' });
    assert.equal(lines.length, 1, lines.join('\n'));
    assert.match(lines[0]!, /^🎛\.yaml:\d+:\d+: YAML: .*\[LW_APP_YAML\]$/);
  });

  it('reports a manifest that is not a map', () => {
    assert.deepEqual(diagnosticsOf({ '/🎛.yaml': '- name: A\n' }), ['🎛.yaml:1:1: /🎛.yaml is a map of keys, such as `name: My site` [LW_SETTINGS_MANIFEST]']);
  });

  it('warns about unknown keys and loads', () => {
    const files = { '/🎛.yaml': 'name: A\ncolour: red\nrest-api: {prefix: /v1}\n' };
    const lines = diagnosticsOf(files);
    assert.equal(lines.length, 2, lines.join('\n'));
    // The list of keys grows with Laneway: only its start is pinned here.
    assert.match(lines[0]!, /^🎛\.yaml:2:1: warning: `colour:` is not a manifest key Laneway knows; it is ignored \(the keys are name, locale, app, domain, path, type, csp, limits, trusted-origins\b.*\) \[LW_SETTINGS_UNKNOWN_KEY\]$/);
    assert.match(lines[1]!, /^🎛\.yaml:3:1: warning: `rest-api:` is not a manifest key Laneway knows; it is ignored .*\[LW_SETTINGS_UNKNOWN_KEY\]$/);
    assert.equal(settingsOf(files).name, 'A');
  });

  it('accepts app, domain and path as booleans (and ignores them), and reports other values', () => {
    assert.deepEqual(diagnosticsOf({ '/🎛.yaml': 'name: A\napp: true\ndomain: false\npath: true\n' }), []);
    assert.deepEqual(diagnosticsOf({ '/🎛.yaml': 'name: A\napp: yes please\ndomain: 1\n' }), [
      '🎛.yaml:2:1: `app:` is true or false, not "yes please" [LW_SETTINGS_VALUE]',
      '🎛.yaml:3:1: `domain:` is true or false, not 1 [LW_SETTINGS_VALUE]',
    ]);
  });

  it('keeps the existing settings keys working beside the new ones', () => {
    assert.deepEqual(diagnosticsOf({ '/🎛.yaml': 'name: A\nlocale: en-US\nlimits: {cpu-ms: 200}\ntrusted-origins: [https://admin.example.com]\ncsp: {hash: sha384}\n' }), []);
  });
});

describe('locale', () => {
  it('takes a language with an optional region', () => {
    for (const locale of ['en', 'en-US', 'de-DE', 'fr', 'zh-Hant-TW', 'es-419']) {
      assert.equal(settingsOf({ '/🎛.yaml': `name: A\nlocale: ${locale}\n` }).locale, locale);
    }
  });

  it('reports anything else at the key, with the canonical form when there is one', () => {
    assert.deepEqual(diagnosticsOf({ '/🎛.yaml': 'name: A\nlocale: en_us\n' }), [
      '🎛.yaml:2:1: `locale: en_us` is not a language tag: write a language, optionally with a region, as en, en-US or de-DE; did you mean en-US? [LW_SETTINGS_LOCALE]',
    ]);
    assert.deepEqual(diagnosticsOf({ '/🎛.yaml': 'name: A\nlocale: English\n' }), [
      '🎛.yaml:2:1: `locale: English` is not a language tag: write a language, optionally with a region, as en, en-US or de-DE [LW_SETTINGS_LOCALE]',
    ]);
  });

  it('formats the messages of /🎨.scss', async () => {
    const s = await serve({
      '/🎛.yaml': 'name: A\nlocale: de-DE\n',
      '/🎨.scss': "$total: 'Summe: {0, number}';\n",
      '/index.html': `${M}{{🎨.total 1234.5}}`,
    });
    try {
      assert.equal((await s.get('/')).text, 'Summe: 1.234,5');
    } finally {
      await s.close();
    }
  });
});

describe('type', () => {
  it('resource: serves the files of the site, but no views, pages or scripts of its own', async () => {
    const files: AppFiles = {
      '/🎛.yaml': 'name: UI kit\ntype: resource\n',
      '/🎛.svg': '<svg xmlns="http://www.w3.org/2000/svg"/>',
      '/index.html': `${M}<p>demo</p>`,
      '/plain.html': '<p>plain</p>',
      '/api/GET.js': '({a: 1})',
      '/⚡NotFound.html': '<p>custom 404</p>',
      '/css/kit.scss': '$c: red;\n.kit { color: $c; }\n',
      '/js/kit.js': 'console.log(1)\n',
      '/_partials/card.html': `${M}<div>{{this}}</div>`,
    };
    assert.deepEqual(diagnosticsOf(files, 'LW_SETTINGS'), [
      'api/GET.js:1:1: warning: GET.js is not served: /🎛.yaml says type: resource, and a resource site serves its files, not pages or scripts of its own; remove type: resource to serve it [LW_SETTINGS_RESOURCE_PAGE]',
      'index.html:1:1: warning: index.html is not served: /🎛.yaml says type: resource, and a resource site serves its files, not pages or scripts of its own; remove type: resource to serve it [LW_SETTINGS_RESOURCE_PAGE]',
      'plain.html:1:1: warning: plain.html is not served: /🎛.yaml says type: resource, and a resource site serves its files, not pages or scripts of its own; remove type: resource to serve it [LW_SETTINGS_RESOURCE_PAGE]',
      '⚡NotFound.html:1:1: warning: ⚡NotFound.html is not served: /🎛.yaml says type: resource, and a resource site serves its files, not pages or scripts of its own; remove type: resource to serve it [LW_SETTINGS_RESOURCE_PAGE]',
    ]);
    const s = await serve(files);
    try {
      for (const path of ['/', '/plain', '/plain.html', '/api']) {
        const r = await s.get(path);
        assert.equal(r.status, 404, path);
        assert.doesNotMatch(r.text, /custom 404|demo|plain/, path);
      }
      assert.equal((await s.get('/css/kit.scss')).text, '.kit{color:red}');
      assert.equal((await s.get('/js/kit.js')).text, 'console.log(1)\n');
      assert.equal((await s.get('/%F0%9F%8E%9B.svg')).status, 200);
    } finally {
      await s.close();
    }
  });

  it('connector and management are accepted; a connector may carry rest-api:', () => {
    assert.equal(settingsOf({ '/🎛.yaml': 'name: Console\ntype: management\n' }).type, 'management');
    assert.deepEqual(diagnosticsOf({ '/🎛.yaml': 'name: stripe.com\ntype: connector\nrest-api: {prefix: https://api.stripe.com/v1}\n' }), []);
  });

  it('reports any other type', () => {
    assert.deepEqual(diagnosticsOf({ '/🎛.yaml': 'name: A\ntype: website\n' }), [
      '🎛.yaml:2:1: `type: website` is not a site type: leave it out for an ordinary site, or write connector, management or resource [LW_SETTINGS_VALUE]',
    ]);
  });
});

describe("the '🎛' module", () => {
  it('gives views Manage.name and Manage.icon (the URL of /🎛.svg)', async () => {
    const s = await serve({
      '/🎛.yaml': 'name: Console <dev>\n',
      '/🎛.svg': '<svg xmlns="http://www.w3.org/2000/svg"/>',
      '/index.html': `${M}{{% import {Manage} from '🎛' }}<h1>{{Manage.name}}</h1><img src="{{Manage.icon}}" alt="">`,
      '/ns.html': `${M}{{% import * as Site from '🎛' }}{{Site.Manage.name}}`,
    });
    try {
      assert.equal((await s.get('/')).text, '<h1>Console &lt;dev&gt;</h1><img src="/🎛.svg" alt="">');
      assert.equal((await s.get('/ns')).text, 'Console &lt;dev&gt;');
    } finally {
      await s.close();
    }
  });

  it('has no icon without /🎛.svg, and the directory name without a manifest', async () => {
    const dir = writeApp({ '/index.html': `${M}{{% import {Manage} from '🎛' }}{{Manage.name}}|{{^Manage.icon}}no icon{{/Manage.icon}}` });
    const s = await serve(dir);
    try {
      assert.equal((await s.get('/')).text, `${basename(dir)}|no icon`);
    } finally {
      await s.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('is for views: scripts, and names other than Manage, are build errors', () => {
    assert.deepEqual(diagnosticsOf({ '/🎛.yaml': 'name: A\n', '/a/GET.js': "import {Manage} from '🎛';\nManage", '/b.html': `${M}{{% import {Site} from '🎛' }}` }, 'LW_SCRIPT_IMPORT').concat(
      diagnosticsOf({ '/🎛.yaml': 'name: A\n', '/b.html': `${M}{{% import {Site} from '🎛' }}` }, 'LW_VIEW_IMPORT'),
    ), [
      "a/GET.js:1:9: '🎛' is imported by views only: {{% import {Manage} from '🎛' }} [LW_SCRIPT_IMPORT]",
      "b.html:2:13: cannot import \"Site\" from '🎛': '🎛' exports Manage (Manage.name, Manage.icon); not \"Site\" [LW_VIEW_IMPORT]",
    ]);
  });
});
