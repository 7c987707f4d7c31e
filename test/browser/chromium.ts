/**
 * Headless Chromium for the browser tests (Debian's package, driven by playwright-core; `.ci/run`
 * installs it). The tests skip only when it is missing.
 */
import { existsSync } from 'node:fs';

export const CHROMIUM = '/usr/bin/chromium';
export const skip = existsSync(CHROMIUM) ? false : `Chromium is not installed at ${CHROMIUM} (CI installs it with apt-get install -y chromium)`;

export type Browser = import('playwright-core').Browser;
export type Page = import('playwright-core').Page;

// The browser globals the init script uses (this project compiles without the DOM library).
declare const window: { __violations: string[] };
declare const document: { addEventListener(type: string, listener: (e: { effectiveDirective: string; blockedURI: string }) => void): void };

export async function launch(): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}

/** A page that records every Content-Security-Policy violation in `window.__violations`. */
export async function violationRecordingPage(browser: Browser): Promise<Page> {
  const context = await browser.newContext();
  await context.addInitScript(() => {
    window.__violations = [];
    document.addEventListener('securitypolicyviolation', (e) => window.__violations.push(`${e.effectiveDirective} ${e.blockedURI}`));
  });
  return context.newPage();
}
