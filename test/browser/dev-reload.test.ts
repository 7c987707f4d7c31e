/**
 * `laneway dev` in a real browser (headless Chromium through playwright-core): a page reloads by
 * itself after an edit; a stylesheet change applies without a reload (a marker set in the page
 * survives); a broken edit turns the page into the error overlay, which turns back into the page
 * once fixed; and none of it causes a single Content-Security-Policy violation.
 *
 * The server is bin/laneway in a child process. Every wait is for something to happen in the
 * page, with a generous limit; nothing measures time. Skips only when /usr/bin/chromium is missing.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launch, skip, violationRecordingPage, type Browser, type Page } from './chromium.js';

// The browser globals the functions given to page.evaluate use (no DOM library in this project).
declare const window: { __violations: string[]; __marker?: string };
declare const document: {
  getElementById(id: string): { textContent: string | null } | null;
  querySelectorAll(selector: string): { length: number };
  body: unknown;
};
declare const getComputedStyle: (element: unknown) => { color: string };

const BIN = fileURLToPath(new URL('../../bin/laneway', import.meta.url));
const FIXTURE = fileURLToPath(new URL('../fixtures/dev-app', import.meta.url));
const PATIENCE_MS = 30_000;

describe('laneway dev in Chromium', { skip }, () => {
  let dir: string;
  let url: string;
  let stop: () => Promise<number | string | null>;
  let browser: Browser;
  let page: Page;
  /** What the browser said about the policy, across reloads (the init script's list starts again on each). */
  const refused: string[] = [];
  const errors: string[] = [];

  /** Opens `path` and waits until its live-reload client is connected. */
  async function open(path: string): Promise<void> {
    const connected = page.waitForResponse((r) => r.url().endsWith('/__/dev/events'), { timeout: PATIENCE_MS });
    await page.goto(url + path, { waitUntil: 'load' });
    assert.equal((await connected).status(), 200);
  }

  /** The violations the current document recorded. */
  const violations = () => page.evaluate(() => window.__violations);

  before(async () => {
    dir = join(mkdtempSync(join(tmpdir(), 'laneway-dev-browser-')), 'app');
    cpSync(FIXTURE, dir, { recursive: true });
    const child = spawn(process.execPath, [BIN, 'dev', dir, '--port', '0', '--log', 'off'], { env: { ...process.env, PORT: '', LANEWAY_SOURCES: '' } });
    let out = '';
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    const exited = new Promise<number | string | null>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
    url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no listening line\n${out}\n${err}`)), PATIENCE_MS);
      child.stdout.on('data', (d) => {
        out += d;
        const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      });
      void exited.then((code) => reject(new Error(`exited ${code}\n${out}\n${err}`)));
    });
    stop = () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    };
    browser = await launch();
    page = await violationRecordingPage(browser);
    page.on('console', (m) => {
      if (/Content.Security.Policy|Refused to/i.test(m.text())) refused.push(m.text());
    });
    page.on('pageerror', (e) => errors.push(e.message));
  });
  after(async () => {
    await browser?.close();
    if (stop) assert.equal(await stop(), 0);
  });

  test('the page reloads by itself after an edit', async () => {
    await open('/');
    assert.equal(await page.textContent('#title'), 'Version one');
    await page.evaluate(() => {
      window.__marker = 'before the edit';
    });
    assert.deepEqual(await violations(), []);
    writeFileSync(join(dir, 'index.html'), readFileSync(join(FIXTURE, 'index.html'), 'utf8').replace('Version one', 'Version two'));
    await page.waitForFunction(() => document.getElementById('title')?.textContent === 'Version two', undefined, { timeout: PATIENCE_MS });
    assert.equal(await page.evaluate(() => window.__marker), undefined, 'a new document');
    // The page's own inline script still runs under the policy that now allows the client too.
    assert.equal(await page.getAttribute('html', 'data-layout-script'), 'ran');
    assert.deepEqual(await violations(), []);
  });

  test('a stylesheet change applies without a reload', async () => {
    await open('/');
    assert.equal(await page.evaluate(() => getComputedStyle(document.body).color), 'rgb(0, 0, 0)');
    await page.evaluate(() => {
      window.__marker = 'kept';
    });
    writeFileSync(join(dir, 'css/site.css'), 'body { color: rgb(1, 2, 3); }\n');
    await page.waitForFunction(() => getComputedStyle(document.body).color === 'rgb(1, 2, 3)', undefined, { timeout: PATIENCE_MS });
    assert.equal(await page.evaluate(() => window.__marker), 'kept', 'the same document: no reload');
    // The old link goes once the new one has loaded: one stylesheet, the fresh one.
    await page.waitForFunction(() => document.querySelectorAll('link[rel="stylesheet"]').length === 1, undefined, { timeout: PATIENCE_MS });
    assert.match(String(await page.getAttribute('link[rel="stylesheet"]', 'href')), /^\/css\/site\.css\?lw-dev=/);
    assert.deepEqual(await violations(), []);
  });

  test('an edit of the properties (/🎨.scss) reloads the pages that print them', async () => {
    await open('/motto');
    assert.equal(await page.textContent('#motto'), 'Motto one');
    writeFileSync(join(dir, '🎨.scss'), "/** @category messages */\n$ui-motto: 'Motto two';\n");
    await page.waitForFunction(() => document.getElementById('motto')?.textContent === 'Motto two', undefined, { timeout: PATIENCE_MS });
    assert.deepEqual(await violations(), []);
  });

  test('a broken edit shows the error overlay, which turns back into the page once fixed', async () => {
    await open('/about');
    assert.match(String(await page.textContent('h1')), /About/);
    writeFileSync(join(dir, 'index.html'), "<!--TEMPLATE mustache-->\n{{% partial /_layout }}\n{{<layout}}\n{{$content}}\n    <h1>{{#open}}Broken</h1>\n{{/content}}\n{{/layout}}\n");
    await page.waitForSelector('#laneway-overlay', { timeout: PATIENCE_MS });
    const overlay = String(await page.textContent('#laneway-overlay'));
    assert.match(overlay, /The app does not compile/);
    assert.match(overlay, /index\.html:6:1/);
    assert.match(overlay, /LW_VIEW_MISMATCHED_SECTION/);
    assert.equal(await page.getAttribute('a.code', 'href'), '/__/dev/docs/errors.md#lw_view_mismatched_section');
    assert.deepEqual(await violations(), [], 'the overlay keeps its own policy');
    // The overlay's client is connected: fixing the file brings the page back by itself.
    writeFileSync(join(dir, 'index.html'), readFileSync(join(FIXTURE, 'index.html'), 'utf8'));
    await page.waitForFunction(() => document.getElementById('laneway-overlay') === null && /About/.test(document.getElementById('title')?.textContent ?? ''), undefined, { timeout: PATIENCE_MS });
    assert.deepEqual(await violations(), []);
    // The documentation the overlay links to opens, under its own policy.
    await page.goto(url + '/__/dev/docs/errors.md#lw_view_mismatched_section', { waitUntil: 'load' });
    assert.equal(await page.textContent('h3#lw_view_mismatched_section'), 'LW_VIEW_MISMATCHED_SECTION');
    assert.deepEqual(await violations(), []);
  });

  test('no Content-Security-Policy violation and no script error in any document along the way', () => {
    assert.deepEqual(refused, []);
    assert.deepEqual(errors, []);
  });
});
