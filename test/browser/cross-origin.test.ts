/**
 * Cross-site request forgery in a real browser (headless Chromium through playwright-core): a
 * page on another port of the same host, and one on another site (`localhost` against
 * `127.0.0.1`), submit a form and send fetch() POSTs to the app. The app answers 403 and its
 * script never runs. The same form on the app's own page works, and so does the attacker page
 * once its origin is listed under `trusted-origins:`.
 *
 * Skips only when /usr/bin/chromium is missing (`.ci/run` installs it).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serveSpied, type SpiedServer } from '../http/spied-server.js';
import { launch, skip, type Browser, type Page } from './chromium.js';

// The browser globals the functions given to page.evaluate use (no DOM library in this project).
declare const window: { outcome?: string };

const APP = {
  '/api/📮save.js': `import {title} from 'form'\n({ saved: title })`,
  '/form.html': '<!doctype html><title>form</title><form method="post" action="/api/save"><input name="title" value="mine"><button id="go">Save</button></form>\n',
};

/**
 * The attacker: a bare node:http server. `/form?target=URL` auto-submits a form to URL;
 * `/fetch?target=URL&mode=no-cors|cors` POSTs with fetch() and records the outcome in window.outcome.
 */
function attackerPage(path: string): string {
  const url = new URL(path, 'http://attacker.invalid');
  const target = JSON.stringify(url.searchParams.get('target') ?? '');
  if (url.pathname === '/form') {
    return `<!doctype html><title>win a prize</title><form id="f" method="post" action=${target}><input name="title" value="pwned"></form><script>document.getElementById('f').submit()</script>`;
  }
  const mode = JSON.stringify(url.searchParams.get('mode') ?? 'no-cors');
  return `<!doctype html><title>win a prize</title><script>
fetch(${target}, { method: 'POST', mode: ${mode}, headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'title=pwned-fetch' })
  .then((r) => { window.outcome = 'answered ' + r.type + ' ' + r.status; }, (e) => { window.outcome = 'rejected ' + e.name; });
</script>`;
}

describe('cross-site requests in Chromium', { skip }, () => {
  let app: SpiedServer;
  let trustingApp: SpiedServer;
  let attacker: Server;
  let attackerPort = 0;
  let browser: Browser;
  let page: Page;

  before(async () => {
    attacker = createServer((req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      res.end(attackerPage(req.url ?? '/'));
    });
    await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
    attackerPort = (attacker.address() as AddressInfo).port;
    app = await serveSpied(APP);
    trustingApp = await serveSpied({ ...APP, '/🎛.yaml': `trusted-origins: [http://127.0.0.1:${attackerPort}]\n` });
    browser = await launch();
    page = await (await browser.newContext()).newPage();
  });
  after(async () => {
    await browser?.close();
    await app?.close();
    await trustingApp?.close();
    await new Promise((resolve) => attacker?.close(resolve));
  });

  /** Opens an attacker page whose form posts to `target`; returns the status of the app's answer. */
  async function submitFrom(attackerOrigin: string, target: string): Promise<{ status: number; text: string }> {
    const answer = page.waitForResponse((r) => r.url() === target && r.request().method() === 'POST');
    await page.goto(`${attackerOrigin}/form?target=${encodeURIComponent(target)}`);
    const r = await answer;
    return { status: r.status(), text: await r.text() };
  }

  /** Opens an attacker page that POSTs with fetch(); returns what the page saw. */
  async function fetchFrom(attackerOrigin: string, target: string, mode: 'no-cors' | 'cors'): Promise<string> {
    await page.goto(`${attackerOrigin}/fetch?target=${encodeURIComponent(target)}&mode=${mode}`);
    await page.waitForFunction(() => window.outcome !== undefined);
    return page.evaluate(() => window.outcome!);
  }

  function lastPost(server: SpiedServer) {
    const seen = server.seen.filter((r) => r.method === 'POST').at(-1);
    const logged = server.access.filter((e) => e.method === 'POST').at(-1);
    return { secFetchSite: seen?.secFetchSite, origin: seen?.origin, status: logged?.status };
  }

  test('a form on another port of the same host (same-site) is refused and the script does not run', async () => {
    const runs = app.runs.length;
    const r = await submitFrom(`http://127.0.0.1:${attackerPort}`, `${app.url}/api/save`);
    assert.equal(r.status, 403);
    assert.match(r.text, /another site/);
    assert.ok(!r.text.includes('pwned'));
    assert.deepEqual(lastPost(app), { secFetchSite: 'same-site', origin: `http://127.0.0.1:${attackerPort}`, status: 403 });
    assert.equal(app.runs.length, runs, 'the script endpoint did not run');
    assert.equal(app.bodyReads.length, 0, 'no body was read');
  });

  test('a form on another site (localhost against 127.0.0.1) is refused', async () => {
    const runs = app.runs.length;
    const r = await submitFrom(`http://localhost:${attackerPort}`, `${app.url}/api/save`);
    assert.equal(r.status, 403);
    assert.deepEqual(lastPost(app), { secFetchSite: 'cross-site', origin: `http://localhost:${attackerPort}`, status: 403 });
    assert.equal(app.runs.length, runs);
  });

  test('fetch() POSTs from another port or site, with and without CORS, are refused before the script', async () => {
    const runs = app.runs.length;
    for (const origin of [`http://127.0.0.1:${attackerPort}`, `http://localhost:${attackerPort}`]) {
      // no-cors: the page cannot read the answer, but a request that changes data would still have done harm.
      assert.equal(await fetchFrom(origin, `${app.url}/api/save`, 'no-cors'), 'answered opaque 0');
      assert.equal(lastPost(app).status, 403, origin);
      // cors with a form content type: sent without a preflight; the browser hides the answer, the server refused it.
      assert.equal(await fetchFrom(origin, `${app.url}/api/save`, 'cors'), 'rejected TypeError');
      assert.equal(lastPost(app).status, 403, origin);
    }
    assert.equal(app.runs.length, runs, 'the script endpoint did not run');
    assert.equal(app.bodyReads.length, 0);
  });

  test("the same form on the app's own page works", async () => {
    await page.goto(`${app.url}/form`);
    const answer = page.waitForResponse((r) => r.url() === `${app.url}/api/save`);
    await page.click('#go');
    const r = await answer;
    assert.equal(r.status(), 200);
    assert.deepEqual(await r.json(), { saved: 'mine' });
    assert.deepEqual(lastPost(app), { secFetchSite: 'same-origin', origin: app.url, status: 200 });
    assert.equal(app.runs.at(-1), 'POST /api/save');
    // And fetch() from the app's own page.
    const fetched = await page.evaluate(async () => {
      const r = await fetch('/api/save', { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'title=fetched' });
      return `${r.status} ${await r.text()}`;
    });
    assert.equal(fetched, '200 {"saved":"fetched"}');
  });

  test('an origin listed under trusted-origins may post; another site still may not', async () => {
    const r = await submitFrom(`http://127.0.0.1:${attackerPort}`, `${trustingApp.url}/api/save`);
    assert.equal(r.status, 200);
    assert.equal(r.text, '{"saved":"pwned"}');
    assert.equal(trustingApp.runs.at(-1), 'POST /api/save');
    const runs = trustingApp.runs.length;
    const other = await submitFrom(`http://localhost:${attackerPort}`, `${trustingApp.url}/api/save`);
    assert.equal(other.status, 403);
    assert.equal(trustingApp.runs.length, runs);
  });
});
