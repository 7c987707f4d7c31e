/**
 * The request panel of `laneway dev` in Chromium (docs/scripting.md "Logging"): a page whose
 * supplier logs shows the line in the panel the live-reload client adds; a request made after the
 * page opened (a JSON script that logs) comes in through the event stream; and none of it causes
 * a Content-Security-Policy violation, on the app's page (its own strict policy) as on the data
 * browser's and the overlay's.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { closeAppData, loadApp, openAppData, type App } from '../../src/app/index.js';
import { createDevTools } from '../../src/dev/index.js';
import { createServer, type LanewayServer } from '../../src/http/index.js';
import { rawRequest, writeApp } from '../helpers.js';
import { PANEL_APP } from '../dev/request-panel-app.js';
import { launch, skip, violationRecordingPage, type Browser, type Page } from './chromium.js';

declare const window: { __violations: string[] };

const PATIENCE_MS = 15_000;

describe('the request panel in Chromium (laneway dev)', { skip }, () => {
  let dir: string;
  let app: App;
  let server: LanewayServer;
  let url: string;
  let port: number;
  let browser: Browser;
  let page: Page;
  const refused: string[] = [];
  before(async () => {
    dir = writeApp({ ...PANEL_APP, 'broken/🖥index.js': "console.log('before the failure');\nnull.x\n" });
    const tools = createDevTools({ root: dir });
    app = loadApp(dir, { dev: true, log: tools.captureLog(() => {}) });
    await openAppData(app);
    server = createServer(app, { log: 'off', devHooks: tools.hooks });
    ({ port } = await server.listen(0, '127.0.0.1'));
    url = `http://localhost:${port}`;
    browser = await launch();
    page = await violationRecordingPage(browser);
    page.on('console', (m) => {
      if (/Content.Security.Policy|Refused to/i.test(m.text())) refused.push(m.text());
    });
  });
  after(async () => {
    await browser?.close();
    await server?.close();
    if (app) await closeAppData(app);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test("a page's logged line is in the panel; later requests come in live; no violation", async () => {
    const connected = page.waitForResponse((r) => r.url().endsWith('/__/dev/events'), { timeout: PATIENCE_MS });
    const response = await page.goto(`${url}/`);
    assert.match(String(response?.headers()['content-security-policy']), /script-src 'sha256-/);
    assert.doesNotMatch(String(response?.headers()['content-security-policy']), /unsafe-inline/);
    await connected;
    await page.waitForSelector('#lw-dev-badge:has-text("1 log line")', { timeout: PATIENCE_MS });
    await page.click('#lw-dev-badge');
    const mine = page.locator('#lw-dev-requests li.lw-dev-request', { hasText: '(this page)' });
    await mine.waitFor({ timeout: PATIENCE_MS });
    const text = (await mine.textContent()) ?? '';
    assert.match(text, /^GET \/ 200 · \d\d:\d\d:\d\d · /);
    assert.match(text, /info \/📤\/Greeting\.js:1:\d+ greeting for the panel/);
    // A JSON request made elsewhere: its lines arrive through the event stream, escaped as text.
    const json = await rawRequest(port, 'GET', '/api/hello', { host: `localhost:${port}`, accept: 'application/json' });
    assert.equal(json.status, 200);
    const hello = page.locator('#lw-dev-requests li.lw-dev-request', { hasText: '/api/hello' });
    await hello.waitFor({ timeout: PATIENCE_MS });
    assert.deepEqual(await hello.locator('.lw-dev-line').allTextContents(), ['log /api/🖥hello.js:1:9 hello panel {"n":1}', 'warn /api/🖥hello.js:2:9 careful <b>']);
    assert.equal(await page.locator('#lw-dev-requests b').count(), 0, 'a logged text is never markup');
    assert.deepEqual(await page.evaluate(() => window.__violations), []);
    // The overlay of a failed request has the panel too, under its own policy.
    await page.goto(`${url}/broken/`);
    await page.waitForSelector('#lw-dev-badge', { timeout: PATIENCE_MS });
    assert.deepEqual(await page.evaluate(() => window.__violations), []);
    assert.deepEqual(refused, []);
  });
});
