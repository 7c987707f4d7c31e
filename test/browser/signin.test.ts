/**
 * Signing in in a real browser (docs/users.md "Signing in"): headless Chromium, a Laneway server serving
 * test/fixtures/signin-app (a private site: `/👤.yaml` with one generic OpenID Connect provider,
 * `corp`, and `auth: required`; `/auth/` `optional`; `/style/` `none`) and a real OpenID Connect
 * provider (oidc-provider, test/support/oidc.ts), each on 127.0.0.1, port 0.
 *
 * The browser asks for a required page and is sent to `/auth/?next=…`; it presses the provider's
 * button (the form's POST answers with a redirect to the provider, which the page's `form-action`
 * must allow), fills the provider's login page, and comes back to the page it asked for with the
 * user's name; it reaches another required area; it signs out and is sent to `/auth/` again, and
 * the session it had is signed out at the server too. Along the way: the `sid` cookie is HttpOnly
 * and changes at sign-in and at sign-out, and the browser reports no Content-Security-Policy
 * violation on any page (securitypolicyviolation events and the console).
 *
 * Laneway is reached as `localhost` and the provider as `127.0.0.1`: two sites, as in real life
 * (the cookies of one are not the other's, and the way back from the provider is a cross-site
 * navigation, which the `SameSite=Lax` session cookie must survive).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve, type Served } from '../helpers.js';
import { startOidcProvider, type TestOidcProvider } from '../support/oidc.js';
import { launch, skip, type Browser, type Page } from './chromium.js';

type BrowserContext = import('playwright-core').BrowserContext;
type Cookie = Awaited<ReturnType<BrowserContext['cookies']>>[number];

const APP = fileURLToPath(new URL('../fixtures/signin-app', import.meta.url));

// The browser globals the functions given to the browser use (this project compiles without the
// DOM library; these declarations are local to this module).
declare const window: { __lwViolation(report: string): void };
declare const document: {
  documentElement: unknown;
  addEventListener(type: string, listener: (e: { effectiveDirective: string; blockedURI: string; sourceFile: string; documentURI: string }) => void): void;
};
declare function getComputedStyle(element: unknown): { getPropertyValue(name: string): string };

/** The provider's settings, given to the server in its environment. */
const ENV = ['LANEWAY_AUTH_CORP_CLIENT_ID', 'LANEWAY_AUTH_CORP_SECRET', 'LANEWAY_AUTH_CORP_ISSUER', 'LANEWAY_AUTH_CORP_NAME'] as const;

describe('signing in with an OpenID Connect provider in Chromium', { skip }, () => {
  let op: TestOidcProvider;
  let s: Served;
  let dataDir: string;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  /** `http://localhost:PORT`: the site as the browser knows it. */
  let site: string;
  const saved = Object.fromEntries(ENV.map((k) => [k, process.env[k]]));
  /** Every CSP violation the browser reported, on any page: events and console messages. */
  const violations: string[] = [];
  const pageErrors: string[] = [];

  before(async () => {
    op = await startOidcProvider();
    process.env.LANEWAY_AUTH_CORP_CLIENT_ID = op.clientId;
    process.env.LANEWAY_AUTH_CORP_SECRET = op.clientSecret;
    process.env.LANEWAY_AUTH_CORP_ISSUER = op.issuer;
    process.env.LANEWAY_AUTH_CORP_NAME = 'Corp ID';
    // The data (the secret, the SQLite store) goes to a temporary directory, never into the fixture.
    dataDir = mkdtempSync(join(tmpdir(), 'laneway-signin-data-'));
    s = await serve(APP, { data: { dataDir } });
    site = `http://localhost:${s.port}`;
    await op.setRedirectUris([`${site}/__/auth/handler`]);

    browser = await launch();
    context = await browser.newContext();
    // Reported to the test as they happen, so that a page navigated away from loses none.
    await context.exposeFunction('__lwViolation', report);
    await context.addInitScript(() => {
      document.addEventListener('securitypolicyviolation', (e) => window.__lwViolation(`${e.documentURI}: ${e.effectiveDirective} ${e.blockedURI}`));
    });
    page = await context.newPage();
    page.on('console', (m) => {
      if (/content[- ]security[- ]policy/i.test(m.text())) report(`console ${m.type()} at ${m.location().url}: ${m.text()}`);
    });
    page.on('pageerror', (e) => void pageErrors.push(e.message));
  });
  after(async () => {
    await browser?.close();
    await s?.close();
    await op?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    for (const k of ENV) {
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
    }
  });

  /** Stops the step waiting in `arrive` (a violation was reported: the step fails at once). */
  let interrupt: ((e: Error) => void) | undefined;
  function report(violation: string): void {
    violations.push(violation);
    interrupt?.(new Error(`a CSP violation: ${violation}`));
  }

  /**
   * Waits for the browser to have loaded `url` (exact), or a URL `url` accepts; a failure says
   * where the browser is and what the policy blocked. A violation (reported before or during the
   * wait) ends it at once: a blocked navigation would otherwise wait for Playwright's timeout.
   */
  async function arrive(url: string | ((u: URL) => boolean), step: string): Promise<void> {
    const waiting = page.waitForURL(typeof url === 'string' ? (u) => u.href === url : url, { waitUntil: 'load' });
    waiting.catch(() => undefined); // when the violation wins the race
    const blocked = new Promise<never>((_resolve, reject) => {
      interrupt = reject;
      if (violations.length) reject(new Error('a CSP violation before'));
    });
    try {
      await Promise.race([waiting, blocked]);
    } catch (e) {
      throw new Error(`${step}: the browser is at ${page.url()}, not ${typeof url === 'string' ? url : 'the page expected'}; CSP violations: ${JSON.stringify(violations)}`, { cause: e });
    } finally {
      interrupt = undefined;
    }
  }

  /** The `sid` cookie the browser holds for the site. */
  async function sid(): Promise<Cookie | undefined> {
    return (await context.cookies(site)).find((c) => c.name === 'sid');
  }

  function assertSessionCookie(c: Cookie | undefined, when: string): asserts c is Cookie {
    assert.ok(c, `a sid cookie ${when}`);
    assert.equal(c.httpOnly, true, `the sid cookie is HttpOnly ${when}`);
    assert.equal(c.sameSite, 'Lax', `the sid cookie is SameSite=Lax ${when}`);
    assert.equal(c.secure, true, 'Secure (localhost is a secure context, and Chromium keeps it over http)');
    assert.equal(c.path, '/');
    assert.equal(c.domain, 'localhost', 'a host-only cookie of the site');
  }

  const text = (selector: string) => page.textContent(selector).then((t) => t?.trim());

  test('required page → /auth/ → the provider → the page asked for → another area → sign out → /auth/', async () => {
    // 1. A required page sends a visitor who is not signed in to the sign-in page, with the page.
    const asked = `${site}/reports/?period=week&x=%C3%A9`;
    const first = await page.goto(asked);
    const signInPage = `${site}/auth/?next=${encodeURIComponent('/reports/?period=week&x=%C3%A9')}`;
    assert.equal(page.url(), signInPage);
    assert.equal(first?.status(), 200);
    assert.equal(first?.request().redirectedFrom()?.url(), asked);
    assert.equal((await first?.request().redirectedFrom()?.response())?.status(), 302);

    // The sign-in page: the configured provider as a form carrying `next` on, a form-action that
    // lets its POST be answered with a redirect to the provider, and the public stylesheet.
    const csp = first?.headers()['content-security-policy'] ?? '';
    assert.equal(csp.split(';').map((d) => d.trim()).find((d) => d.startsWith('form-action ')), `form-action 'self' ${op.issuer}`);
    assert.equal(await text('#corp button.provider-corp'), 'Sign in with Corp ID');
    assert.equal(await page.getAttribute('form#corp', 'action'), `/__/auth/provider/corp?next=${encodeURIComponent('/reports/?period=week&x=%C3%A9')}`);
    assert.equal(await page.evaluate(() => getComputedStyle(document.documentElement).getPropertyValue('--signin-style').trim()), 'loaded', 'the /style/ stylesheet (auth: none) applies');
    const style = await page.request.get(`${site}/style/site.css`, { maxRedirects: 0 });
    assert.equal(style.status(), 200, 'auth: none needs no sign-in');

    // 2. The provider's button: the POST is answered with a redirect to the provider's login page.
    await page.click('#corp button');
    await arrive((u) => u.origin === op.issuer && /^\/interaction\/[^/]+$/.test(u.pathname), "the provider's login page");
    assert.equal(await text('h1'), 'Sign in to the test provider');
    assert.equal(await text('p code'), op.clientId);
    // The sign-in was bound to this browser's session, whose cookie it now holds.
    const visitorSid = await sid();
    assertSessionCookie(visitorSid, 'before signing in');

    // 3. Signing in at the provider brings the browser back to the page it asked for, signed in.
    await page.fill('input[name="account"]', 'ann');
    await page.click('button[value="login"]');
    await arrive(asked, 'back from the provider');
    assert.equal(await text('h1'), 'Reports');
    assert.equal(await text('.me'), 'Ann Example');
    assert.equal(await page.getAttribute('svg.avatar', 'aria-label'), 'AE');
    const signedInSid = await sid();
    assertSessionCookie(signedInSid, 'after signing in');
    assert.notEqual(signedInSid.value, visitorSid.value, 'a new session id at sign-in');
    assert.ok(signedInSid.expires > Date.now() / 1000 + 29 * 86_400, 'the signed-in session is persistent for 30 days');

    // 4. Another required area, with the same session.
    await page.click('a#home');
    await arrive(`${site}/`, 'the home page');
    assert.equal(await text('h1'), 'Home');
    assert.equal(await text('.me'), 'Ann Example');
    assert.equal(await page.getAttribute('svg.avatar', 'aria-label'), 'AE');
    assert.equal((await sid())?.value, signedInSid.value, 'the session id stays while signed in');
    await page.click('a#reports');
    await arrive(`${site}/reports/`, 'the reports again');
    assert.equal(await text('.me'), 'Ann Example');
    await page.goBack();
    await arrive(`${site}/`, 'back home');

    // 5. Signing out: the session id is replaced, and `/` (required) sends to the sign-in page.
    await page.click('#sign-out');
    await arrive(`${site}/auth/?next=%2F`, 'after signing out');
    assert.equal(await text('#corp button'), 'Sign in with Corp ID', 'signed out: the providers are listed again');
    assert.equal(await page.$('.me'), null);
    const signedOutSid = await sid();
    assertSessionCookie(signedOutSid, 'after signing out');
    assert.notEqual(signedOutSid.value, signedInSid.value, 'a new session id at sign-out');
    assert.notEqual(signedOutSid.value, visitorSid.value);

    // 6. A required page sends to /auth/ again…
    await page.goto(`${site}/reports/`);
    await arrive(`${site}/auth/?next=%2Freports%2F`, 'a required page after signing out');
    // …and the session signed out is over at the server, not only gone from the browser.
    await context.addCookies([{ ...signedInSid }]);
    assert.equal((await sid())?.value, signedInSid.value, 'the browser holds the signed-out session id again');
    await page.goto(`${site}/`);
    await arrive(`${site}/auth/?next=%2F`, 'the old session id after signing out');

    // 7. No page of the flow, the provider's included, reported a CSP violation or a script error.
    await page.evaluate(() => 0); // a round trip: whatever the last page reported has arrived
    assert.deepEqual(violations, []);
    assert.deepEqual(pageErrors, []);
    assert.deepEqual(op.serverErrors, []);
  });
});
