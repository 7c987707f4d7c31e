/**
 * The data browser (docs/data-browser.md) in Chromium, served as `laneway dev` serves it (the
 * development hooks: the live-reload client on its pages): from the models to a record, an edit
 * refused and then saved, a removal, with zero policy violations on every page.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { closeAppData, loadApp, openAppData, type App } from '../../src/app/index.js';
import { createDevTools } from '../../src/dev/index.js';
import { createServer, type LanewayServer } from '../../src/http/index.js';
import { rawRequest, writeApp } from '../helpers.js';
import { BROWSER_APP } from '../dev/data-browser-app.js';
import { launch, skip, violationRecordingPage, type Browser, type Page } from './chromium.js';

declare const window: { __violations: string[] };

describe('the data browser in Chromium (laneway dev)', { skip }, () => {
  let dir: string;
  let app: App;
  let server: LanewayServer;
  let url: string;
  let browser: Browser;
  let page: Page;
  let first: string;
  before(async () => {
    dir = writeApp(BROWSER_APP);
    app = loadApp(dir, { dev: true });
    await openAppData(app);
    const tools = createDevTools({ root: dir });
    server = createServer(app, { log: 'off', devHooks: tools.hooks });
    const listening = await server.listen(0, '127.0.0.1');
    url = `http://localhost:${listening.port}`;
    const seeded = await rawRequest(listening.port, 'POST', '/seed', { 'sec-fetch-site': 'same-origin', accept: 'application/json' });
    first = (JSON.parse(seeded.text) as { first: string }).first;
    browser = await launch();
    page = await violationRecordingPage(browser);
  });
  after(async () => {
    await browser?.close();
    await server?.close();
    if (app) await closeAppData(app);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('models, a filtered list, a record; an edit refused then saved; a removal; no violation', async () => {
    await page.goto(`${url}/__/dev/data/`);
    assert.equal(await page.textContent('h1'), 'Models');
    await page.click('a[href="/__/dev/data/Task/"]');
    assert.match((await page.textContent('p.total')) ?? '', /^30 records/);
    await page.selectOption('select[name="field"]', 'title');
    await page.fill('input[name="value"]', 'task 10');
    await page.click('form[method="GET"] button');
    await page.waitForURL(/field=title/);
    assert.match((await page.textContent('p.total')) ?? '', /^1 record with title = task 10/);
    await page.click('a.record');
    await page.waitForURL(new RegExp(`/__/dev/data/Task/${first}$`));
    assert.equal(await page.textContent('a.link'), await page.evaluate(() => (globalThis as unknown as { document: { querySelector(s: string): { getAttribute(n: string): string } } }).document.querySelector('a.link').getAttribute('href').split('/').pop()));
    // Empty, and the title is required: the form's message, nothing saved.
    await page.fill('input[name="Task_title"]', '');
    await page.click('form[novalidate] button');
    assert.equal(await page.textContent('p.message'), 'Title is required');
    assert.match((await page.textContent('div.error')) ?? '', /Nothing was saved/);
    await page.fill('input[name="Task_title"]', 'Tea & <biscuits>');
    await page.click('form[novalidate] button');
    await page.waitForURL(new RegExp(`/__/dev/data/Task/${first}$`));
    assert.ok((await page.content()).includes('<span>Tea &amp; &lt;biscuits&gt;</span>'));
    // A record without children goes.
    await page.goto(`${url}/__/dev/data/Task/?field=title&value=task%2039`);
    await page.click('a.record');
    await page.click('button:text-is("Remove this record")');
    await page.waitForURL(/\/__\/dev\/data\/Task\/$/);
    assert.match((await page.textContent('p.total')) ?? '', /^29 records/);
    assert.deepEqual(await page.evaluate(() => window.__violations), []);
  });
});
