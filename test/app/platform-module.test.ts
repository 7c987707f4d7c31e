/**
 * Scripts that import '🔌' (the hosting platform's own services, as the public docs site's build
 * endpoints do): a warning at load, 501 for that script, and the rest of the app runs.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { diagnosticsOf, serve, type Served } from '../helpers.js';

const APP = {
  'index.html': '<!--TEMPLATE mustache-->\n<!doctype html><html><head><title>Docs</title></head><body><p>still here</p></body></html>\n',
  'site/POST.js': "import {Source} from '🔌';\nimport {name} from 'form';\n({source: Source.create(name)});\n",
  'site/{site}/🔗.yaml': 'values: [a, b]\n',
  'site/{site}/⏱build.js': "import {Source, Build} from '🔌';\n(() => ({data: Build.status()}));\n",
  'hello/GET.js': "({hello: 'world'});\n",
};

describe("scripts that import '🔌'", () => {
  let s: Served;
  before(async () => {
    s = await serve(APP);
  });
  after(() => s.close());

  it('are a warning at load, with the position of the import, not an error', () => {
    const problems = diagnosticsOf(APP);
    assert.deepEqual(
      problems.filter((p) => p.includes('LW_SCRIPT_PLATFORM_MODULE')).map((p) => p.split(' ')[0]),
      ['site/POST.js:1:9:', 'site/{site}/⏱build.js:1:9:'],
      problems.join('\n'),
    );
    assert.ok(!problems.some((p) => p.includes('LW_SCRIPT_IMPORT')), problems.join('\n'));
  });

  it('answer 501 with a reason, JSON for JSON clients', async () => {
    const r = await s.request('POST', '/site', { Accept: 'application/json', Origin: `http://127.0.0.1:${s.port}`, 'Content-Type': 'application/x-www-form-urlencoded' }, 'name=x');
    assert.equal(r.status, 501);
    assert.match(JSON.parse(r.text).error, /hosting platform/);
    assert.equal((await s.get('/site/a/build', { Accept: 'text/event-stream' })).status, 501);
  });

  it('leave the rest of the app running', async () => {
    assert.match((await s.get('/')).text, /still here/);
    assert.deepEqual(JSON.parse((await s.get('/hello')).text), { hello: 'world' });
  });
});
