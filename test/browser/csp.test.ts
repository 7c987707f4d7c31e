/**
 * The policies in a real browser (headless Chromium through playwright-core): the example app's
 * pages load with no `securitypolicyviolation` while their inline scripts run and inline styles
 * apply; a script injected at run time is blocked; script elements in data never run.
 *
 * Skips only when /usr/bin/chromium is missing (`.ci/run` installs it).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launch, skip, violationRecordingPage, type Browser, type Page } from './chromium.js';
import { serve, type Served } from '../helpers.js';

const EXAMPLE = fileURLToPath(new URL('../../examples/site', import.meta.url));
const M = '<!--TEMPLATE mustache-->\n';


// The browser globals the functions given to page.evaluate use (this project compiles without
// the DOM library; these declarations are local to this module).
declare const window: { __violations: string[]; injected?: boolean; evil?: number; fromSupplier?: number };
declare const document: {
  documentElement: { dataset: Record<string, string> };
  body: { append(node: unknown): void };
  createElement(tag: string): { textContent: string };
  addEventListener(type: string, listener: (e: { effectiveDirective: string; blockedURI: string }) => void): void;
};
declare function getComputedStyle(element: unknown): { getPropertyValue(name: string): string };

/** Loads a page and returns what the test reads from it, after the violations had time to arrive. */
async function visit(page: Page, url: string): Promise<{ status: number; violations: string[]; data: Record<string, string>; vars: Record<string, string> }> {
  const res = await page.goto(url, { waitUntil: 'load' });
  await page.evaluate(() => new Promise((r) => setTimeout(r, 30)));
  return page.evaluate((status) => {
    const css = getComputedStyle(document.documentElement);
    return {
      status,
      violations: window.__violations,
      data: { ...document.documentElement.dataset },
      vars: { inline: css.getPropertyValue('--inline-style').trim(), scss: css.getPropertyValue('--critical-scss').trim() },
    };
  }, res?.status() ?? 0);
}

describe('policies in Chromium', { skip }, () => {
  let example: Served;
  let fixture: Served;
  let browser: Browser;
  let page: Page;

  before(async () => {
    // The example's data directory goes to a temporary directory, never into the repository.
    example = await serve(EXAMPLE, { data: { dataDir: mkdtempSync(join(tmpdir(), 'laneway-example-data-')) } });
    fixture = await serve({
      '/📤/Data.js': "const Evil = '<script>window.evil = 1</script><img src=x onerror=\"window.evil = 2\">'\nexport {Evil}",
      '/📤/Widget.html': `${M}<div><script>window.fromSupplier = 1;</script></div>`,
      '/text.html': `${M}{{% import {Evil} from '📤' }}<!doctype html><p id="payload">{{Evil}}</p><script>document.documentElement.dataset.ran = 'yes';</script>\n`,
      '/crlf.html': `${M}<!doctype html>\r\n<style>\r\n  :root { --inline-style: crlf; }\r\n</style>\r\n<script>\r\n  document.documentElement.dataset.ran = 'crlf';\r\n</script>\r\n`,
      '/widget.html': `${M}{{% import {Widget} from '📤' }}<!doctype html>{{{Widget}}}\n`,
    });
    browser = await launch();
    page = await violationRecordingPage(browser);
  });
  after(async () => {
    await browser?.close();
    await example?.close();
    await fixture?.close();
  });

  const PAGES: Array<[string, string, number]> = [
    ['/', 'Laneway example', 200],
    ['/about', 'About · Laneway example', 200],
    ['/notes/', 'Notes · Laneway example', 200],
    ['/notes/?tag=security', 'Notes · Laneway example', 200],
    ['/notes/routing', 'Note · Laneway example', 200],
    ['/docs/', 'Docs · Laneway example', 200],
    ['/docs/routing', 'Routing · Laneway example', 200],
    ['/colors/green/', 'Colors · Laneway example', 200],
    ['/todos/', 'To-do · Laneway example', 200],
    ['/no/such/page', 'Not found · Laneway example', 404],
  ];

  test('every page of the example app runs its inline blocks with no violation', async () => {
    for (const [path, title, status] of PAGES) {
      const r = await visit(page, example.url + path);
      assert.equal(r.status, status, path);
      assert.deepEqual(r.violations, [], path);
      // The layout's dynamic <script>, the footer partial's static one, /js/app.js, the inline
      // <style> and the inlined private SCSS.
      assert.equal(r.data.page, title, path);
      assert.equal(r.data.footerScript, 'ran', path);
      assert.equal(r.data.appJs, 'ran', path);
      assert.deepEqual(r.vars, { inline: 'applied', scss: 'inlined' }, path);
    }
    await visit(page, example.url + '/about');
    assert.match(await page.textContent('#about-marker') ?? '', /inline script of \/about.html ran/);
  });

  test('the to-do page of the example: add, reorder, tick and delete items through its forms', async () => {
    await visit(page, example.url + '/todos/');
    const titles = () => page.$$eval('.todo input[name=title]', (inputs) => inputs.map((i) => (i as unknown as { value: string }).value));
    for (const t of ['First', 'Second <b>', 'Third']) {
      await page.fill('.todo-add input[name=title]', t);
      await Promise.all([page.waitForNavigation(), page.click('.todo-add button')]);
    }
    assert.deepEqual(await titles(), ['First', 'Second <b>', 'Third']);
    await Promise.all([page.waitForNavigation(), page.click('.todo:nth-child(3) [aria-label="Move up"]')]);
    assert.deepEqual(await titles(), ['First', 'Third', 'Second <b>']);
    await Promise.all([page.waitForNavigation(), page.click('.todo:nth-child(1) [aria-label="Done"]')]);
    assert.equal(await page.$$eval('.todo.done', (l) => l.length), 1);
    await Promise.all([page.waitForNavigation(), page.click('.todo:nth-child(2) [aria-label="Delete"]')]);
    assert.deepEqual(await titles(), ['First', 'Second <b>']);
    assert.deepEqual(await page.evaluate(() => window.__violations), []);
  });

  test('a script injected at run time is blocked and reported', async () => {
    await visit(page, example.url + '/');
    const injected = await page.evaluate(async () => {
      const s = document.createElement('script');
      s.textContent = 'window.injected = true;';
      document.body.append(s);
      await new Promise((r) => setTimeout(r, 30));
      return { ran: window.injected === true, violations: window.__violations };
    });
    assert.equal(injected.ran, false);
    assert.deepEqual(injected.violations, ['script-src-elem inline']);
  });

  test('a supplier value holding <script> renders as text and nothing of it runs', async () => {
    const r = await visit(page, fixture.url + '/text');
    assert.deepEqual(r.violations, []);
    assert.equal(r.data.ran, 'yes');
    assert.equal(await page.textContent('#payload'), '<script>window.evil = 1</script><img src=x onerror="window.evil = 2">');
    assert.equal(await page.evaluate(() => window.evil), undefined);
  });

  test('blocks written with CR LF are allowed (hashed as the browser reads them)', async () => {
    const r = await visit(page, fixture.url + '/crlf');
    assert.deepEqual(r.violations, []);
    assert.equal(r.data.ran, 'crlf');
    assert.equal(r.vars.inline, 'crlf');
  });

  test("an HTML supplier's <script> reaches the page as data: it is not hashed and does not run", async () => {
    const r = await visit(page, fixture.url + '/widget');
    assert.deepEqual(r.violations, ['script-src-elem inline']);
    assert.equal(await page.evaluate(() => window.fromSupplier), undefined);
  });
});
