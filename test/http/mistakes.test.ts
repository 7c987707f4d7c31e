/**
 * Mistakes over HTTP (docs/routing.md "File → URL"): server code with a client-side name never
 * reaches a client (the app does not load), while real client modules and plain pages are still
 * served as they are.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BuildError } from '../../src/diag/index.js';
import { serve, type AppFiles } from '../helpers.js';

describe('silent mistakes, seen from a client', () => {
  it('an app whose save.js imports form values does not start, so its source is never served', async () => {
    const apps: Array<[AppFiles, string]> = [
      [{ '/tasks/save.js': "import {title} from 'form'\nimport {Task} from '📦'\nTask.create({title})\n'/tasks/'" }, 'LW_ROUTE_SERVER_CODE_AS_ASSET'],
      [{ '/get.js': "import {Notes} from '📤'\nNotes" }, 'LW_ROUTE_SERVER_CODE_AS_ASSET'],
      [{ '/🖱verify.js': "'/'" }, 'LW_ROUTE_NOT_AVAILABLE'],
    ];
    for (const [files, code] of apps) {
      await assert.rejects(serve(files), (e) => e instanceof BuildError && e.diagnostics.some((d) => d.severity === 'error' && d.code === code));
    }
  });

  it('client modules are served as they are; a verb-like client name is not served (a warning says why)', async () => {
    const app = await serve({
      '/js/app.js': "import {a} from './lib.js'\nimport {b} from 'https://cdn.example/é.js'\nconsole.log(a, b)\n",
      '/js/lib.js': 'export const a = 1\n',
      '/js/get.js': 'fetch("/api")\n',
      '/page.html': '<!doctype html>\n<p>{{title}}</p>\n',
    });
    try {
      const js = await app.get('/js/app.js');
      assert.equal(js.status, 200);
      assert.match(js.text, /from '\.\/lib\.js'/);
      // get.js, all lower case, is a usual client-side name: served, with a warning (LW_ROUTE_VERB_NAME_CASE).
      assert.equal((await app.get('/js/get.js')).status, 200);
      // The page is served raw (the warning says why); nothing renders the tag.
      const page = await app.get('/page');
      assert.equal(page.status, 200);
      assert.match(page.text, /\{\{title\}\}/);
    } finally {
      await app.close();
    }
  });
});
