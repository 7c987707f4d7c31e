/**
 * The starters of `laneway new` in a real browser (docs/cli.md "`laneway new DIR`"): headless
 * Chromium opens every page of each starter with zero Content-Security-Policy violations
 * (stylesheet, icon and form included), and the app starter's form creates a note and shows the
 * flash message.
 *
 * Skips only when /usr/bin/chromium is missing (`.ci/run` installs it).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launch, skip, violationRecordingPage, type Browser, type Page } from './chromium.js';
import { serve, type Served } from '../helpers.js';

declare const window: { __violations: string[] };
declare const document: { querySelectorAll(s: string): ArrayLike<{ textContent: string | null }>; styleSheets: ArrayLike<unknown> };

const BIN = fileURLToPath(new URL('../../bin/laneway', import.meta.url));

/** Writes a starter with the command itself, as a user would. */
function writeStarter(template: string): string {
  const dir = join(mkdtempSync(join(tmpdir(), 'laneway-starter-')), template);
  const r = spawnSync(process.execPath, [BIN, 'new', dir, '--template', template], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, r.stderr);
  return dir;
}

/** Opens a page, lets late violations arrive, and reads what the test checks. */
async function visit(page: Page, url: string): Promise<{ status: number; violations: string[]; styled: boolean }> {
  const res = await page.goto(url, { waitUntil: 'load' });
  await page.evaluate(() => new Promise((r) => setTimeout(r, 30)));
  const violations = await page.evaluate(() => window.__violations);
  // The stylesheet loaded (a policy that refused it would leave none).
  const styled = await page.evaluate(() => document.styleSheets.length > 0);
  return { status: res?.status() ?? 0, violations, styled };
}

describe('the starters in Chromium', { skip }, () => {
  let app: Served;
  let minimal: Served;
  let browser: Browser;
  let page: Page;

  before(async () => {
    app = await serve(writeStarter('app'), { data: { dataDir: mkdtempSync(join(tmpdir(), 'laneway-starter-data-')) } });
    minimal = await serve(writeStarter('minimal'));
    browser = await launch();
    page = await violationRecordingPage(browser);
  });
  after(async () => {
    await browser?.close();
    await app?.close();
    await minimal?.close();
  });

  test('every page loads with its stylesheet and zero violations', async () => {
    const pages: Array<[string, number]> = [
      [`${app.url}/`, 200],
      [`${app.url}/notes/`, 200],
      [`${app.url}/nowhere`, 404],
      [`${minimal.url}/`, 200],
    ];
    for (const [url, status] of pages) {
      const seen = await visit(page, url);
      assert.equal(seen.status, status, url);
      assert.deepEqual(seen.violations, [], url);
      assert.ok(seen.styled, `${url}: no stylesheet`);
    }
  });

  test('the form creates a note and shows the message, with zero violations', async () => {
    await page.goto(`${app.url}/notes/`);
    await page.fill('input[name="Note_title"]', 'Call the plumber');
    await page.fill('input[name="Note_details"]', 'before <Friday>');
    await page.click('button');
    await page.waitForSelector('p.message.is-success');
    assert.equal(page.url(), `${app.url}/notes/`);
    assert.equal(await page.textContent('p.message.is-success'), 'Added the note "Call the plumber"');
    const items = await page.evaluate(() => Array.from(document.querySelectorAll('.notes li'), (li) => li.textContent));
    assert.deepEqual(items, ['Call the plumberbefore <Friday>']);
    assert.deepEqual(await page.evaluate(() => window.__violations), []);
    // The JSON endpoint lists it.
    const json = await page.goto(`${app.url}/api/notes`);
    const body = (await json?.json()) as { count: number; notes: Array<{ title: string }> };
    assert.equal(body.count, 1);
    assert.equal(body.notes[0]?.title, 'Call the plumber');
  });
});
