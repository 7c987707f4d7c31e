/**
 * The request panel of `laneway dev` (docs/scripting.md "Logging") over HTTP: every answer of the
 * app is listed at `/__/dev/requests`, the newest first, with its status, path, time and the
 * console lines its scripts and suppliers wrote (level, text, file and line), successful requests
 * included; the list and the panel exist only with the development hooks.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { closeAppData, loadApp, openAppData, type App } from '../../src/app/index.js';
import { createDevTools } from '../../src/dev/index.js';
import { createServer, type LanewayServer } from '../../src/http/index.js';
import { rawRequest, serve, writeApp } from '../helpers.js';
import { PANEL_APP } from './request-panel-app.js';


describe('the request panel of laneway dev', () => {
  let dir: string;
  let app: App;
  let server: LanewayServer;
  let port: number;
  before(async () => {
    dir = writeApp(PANEL_APP);
    const tools = createDevTools({ root: dir });
    app = loadApp(dir, { dev: true, log: tools.captureLog(() => {}) });
    await openAppData(app);
    server = createServer(app, { log: 'off', devHooks: tools.hooks });
    ({ port } = await server.listen(0, '127.0.0.1'));
  });
  after(async () => {
    await server.close();
    await closeAppData(app);
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists a successful JSON answer with the console lines of its script', async () => {
    const r = await rawRequest(port, 'GET', '/api/hello', { accept: 'application/json' });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.headers['x-laneway-log'], undefined, 'the lines are in the panel, not in a header');
    const list = await rawRequest(port, 'GET', '/__/dev/requests');
    assert.equal(list.status, 200);
    assert.equal(list.headers['cache-control'], 'no-store');
    const [newest] = JSON.parse(list.text).requests;
    assert.match(newest.id, /^[0-9a-f]+-[0-9a-z]+$/);
    assert.equal(newest.method, 'GET');
    assert.equal(newest.path, '/api/hello');
    assert.equal(newest.status, 200);
    assert.match(newest.time, /^\d{4}-\d\d-\d\dT/);
    assert.deepEqual(
      newest.lines.map((l: { level: string; text: string; file: string; line: number }) => [l.level, l.text, l.file, l.line]),
      [
        ['log', 'hello panel {"n":1}', '/api/🖥hello.js', 1],
        ['warn', 'careful <b>', '/api/🖥hello.js', 2],
      ],
    );
  });

  it("lists a page with its supplier's line, and one without lines, the newest first", async () => {
    const home = await rawRequest(port, 'GET', '/');
    assert.equal(home.status, 200);
    assert.match(home.text, /<p id="greeting">hi<\/p>/);
    const quiet = await rawRequest(port, 'GET', '/quiet');
    assert.equal(quiet.status, 200);
    const { requests } = JSON.parse((await rawRequest(port, 'GET', '/__/dev/requests')).text);
    assert.deepEqual(requests.slice(0, 2).map((r: { path: string; lines: unknown[] }) => [r.path, r.lines.length]), [['/quiet', 0], ['/', 1]]);
    assert.equal(requests[1].lines[0].text, 'greeting for the panel');
    assert.equal(requests[1].lines[0].level, 'info');
    // The panel's own reads are not listed.
    assert.ok(requests.every((r: { path: string }) => !r.path.startsWith('/__/dev/')));
  });
});

describe('the request panel is development only', () => {
  it('serve: no /__/dev/requests, no panel in pages', async () => {
    const s = await serve(PANEL_APP);
    try {
      assert.equal((await s.get('/api/hello', { accept: 'application/json' })).status, 200);
      assert.equal((await s.get('/__/dev/requests')).status, 404);
      assert.doesNotMatch((await s.get('/')).text, /<script|lw-dev/);
    } finally {
      await s.close();
    }
  });
});
