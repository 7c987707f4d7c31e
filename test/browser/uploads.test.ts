/**
 * Two blueprint flows in a real browser (docs/images.md, docs/email.md "Notifications"), with the
 * apps' own client code, in headless Chromium (own fixtures, in the shapes of the public
 * blueprints):
 *
 * - an image upload: the page's own `/upload.js` shows a `blob:` preview of the chosen file, asks
 *   `📮newImageUrl` for a one-time address, PUTs the bytes there and puts the address in the form's
 *   hidden field; the form is sent, the page after the redirect says so once, and the processed
 *   image (1000 × 750 from 2000 × 1500) loads from `/__/images/`;
 * - a contact form whose POST script submits a `📡` notification: an invalid submission comes
 *   back with its values and messages and sends nothing; a valid one shows the thank-you page and
 *   reaches a real SMTP server once, as plain text.
 *
 * Every page of both flows loads without a single Content-Security-Policy violation (recorded on
 * the Node side, so violations from every page visited are kept, not only the last page's).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { serve, type Served } from '../helpers.js';
import { startSmtp, until, type TestSmtp, useSmtpEnv } from '../mail/helpers.js';
import { launch, skip, type Browser, type Page } from './chromium.js';

// The browser globals the functions given to the page use (this project compiles without the DOM library).
declare const window: { __cspViolation(text: string): void };
declare const document: {
  addEventListener(type: string, listener: (e: { effectiveDirective: string; blockedURI: string; sourceFile: string; lineNumber: number }) => void): void;
  querySelectorAll(s: string): ArrayLike<{ textContent: string | null; getAttribute(name: string): string | null; complete: boolean; naturalWidth: number; naturalHeight: number }>;
  querySelector(s: string): { disabled: boolean; value: string; textContent: string | null } | null;
};

const M = '<!--TEMPLATE mustache-->\n';

/** A bound for what the browser and the server do in the background; never a timing assertion. */
const SETTLES_MS = 20_000;

interface Recorder {
  page: Page;
  /** CSP violations (from `securitypolicyviolation` events) on every page since the start. */
  violations: string[];
  /** Console errors and uncaught exceptions on every page since the start. */
  errors: string[];
  close(): Promise<void>;
}

/** A page in a fresh context whose CSP violations, console errors and page errors are all kept on the Node side. */
async function recordingPage(browser: Browser): Promise<Recorder> {
  const violations: string[] = [];
  const errors: string[] = [];
  const context = await browser.newContext();
  await context.exposeFunction('__cspViolation', (text: string) => void violations.push(text));
  await context.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) =>
      window.__cspViolation(`${e.effectiveDirective} ${e.blockedURI} (${e.sourceFile}:${e.lineNumber})`),
    );
  });
  const page = await context.newPage();
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`console: ${m.text()} @ ${m.location().url}`);
  });
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  return { page, violations, errors, close: () => context.close() };
}

/** Lets any violation event queued by the page reach the Node side before the page is left. */
async function settle(page: Page): Promise<void> {
  await page.evaluate(() => new Promise((r) => setTimeout(r, 50)));
}

const cspErrors = (errors: string[]) => errors.filter((e) => /Content Security Policy|Refused to/i.test(e));
/** Console errors other than the browser's own request for `/favicon.ico` (these apps have none). */
const pageErrors = (errors: string[]) => errors.filter((e) => !/\/favicon\.ico$/.test(e));

// ---------------------------------------------------------------------------------------------
// The image-upload fixture (the contact-form fixture is with its tests below)
// ---------------------------------------------------------------------------------------------

/** The page's own client code: preview, one-time address, PUT, then the form may be sent. */
const UPLOAD_JS = `// Upload control: preview the chosen picture, upload it, then let the form be sent.
const picker = document.getElementById('file');
const field = document.getElementById('image-url');
const send = document.getElementById('send');
const state = document.getElementById('upload-state');
const preview = document.getElementById('preview');

function show(text) {
  state.textContent = text;
}

picker.addEventListener('change', async () => {
  const chosen = picker.files && picker.files[0];
  send.disabled = true;
  field.value = '';
  if (!chosen) return;
  preview.src = URL.createObjectURL(chosen);
  preview.hidden = false;
  show('asking');
  try {
    const ask = new FormData();
    ask.append('name', chosen.name);
    const answer = await fetch('/newImageUrl', {
      method: 'POST',
      body: ask,
      headers: { Accept: 'application/json' },
      credentials: 'same-origin',
    });
    if (!answer.ok) return show('no address: ' + answer.status);
    const target = (await answer.json()).url;
    show('sending');
    const sent = await fetch(target, { method: 'PUT', body: chosen, credentials: 'same-origin' });
    if (sent.status !== 200) return show('upload refused: ' + sent.status);
    field.value = target;
    send.disabled = false;
    show('ready');
  } catch (problem) {
    show('failed: ' + problem);
  }
});
`;

const IMAGE_APP = {
  '📦/🌐Post.yaml': 'title: string\nimage:\n  type: image\n  public: true\n',
  '📮newImageUrl.js':
    "import {Post} from '📦';\nimport {name} from 'form';\nif (!Post.image.isValidFileName(name)) throw 'InvalidImageFileName';\n({url: Post.image.newPutUrl(name)});\n",
  'posts/POST.js':
    "import {Post} from '📦';\nconst post = new Post();\ntry {\n  Post.Form.submit(post);\n  Redirect.home().success('Added ' + post.title);\n} catch ($ModelInvalid) {\n  Redirect.home().invalid($ModelInvalid);\n}\n",
  'index.html':
    M +
    "{{% import {Post} from '📦' }}\n" +
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Pictures</title>\n' +
    '<link itemprop="content-security-policy" data-img-upload="true">\n</head><body>\n' +
    '{{#Messages.all}}<p class="msg">{{this.value}}</p>{{/Messages.all}}\n' +
    '{{#Post.Form.view as form}}<form action="/posts?_form={{form.id}}" method="POST">\n' +
    '<input type="file" id="file" accept="image/*">\n' +
    '<img id="preview" alt="" hidden>\n<span id="upload-state"></span>\n' +
    '<input type="hidden" id="image-url" name="{{form.image.path}}">\n' +
    '<input id="title" name="{{form.title.path}}">\n' +
    '<button id="send" disabled>Add</button>\n</form>{{/Post.Form.view}}\n' +
    '<section id="posts">{{#Post.all as post}}<figure>{{{post.image}}}<figcaption>{{post.title}}</figcaption></figure>{{/Post.all}}</section>\n' +
    '<script src="/upload.js" defer></script>\n</body></html>\n',
  'upload.js': UPLOAD_JS,
};

interface ShownImage {
  src: string | null;
  width: string | null;
  height: string | null;
  complete: boolean;
  naturalWidth: number;
  naturalHeight: number;
}

const shownImages = (page: Page) =>
  page.evaluate(() =>
    Array.from(document.querySelectorAll('figure img'), (img) => ({
      src: img.getAttribute('src'),
      width: img.getAttribute('width'),
      height: img.getAttribute('height'),
      complete: img.complete,
      naturalWidth: img.naturalWidth,
      naturalHeight: img.naturalHeight,
    })),
  ) as Promise<ShownImage[]>;

const messages = (page: Page) => page.evaluate(() => Array.from(document.querySelectorAll('p.msg'), (p) => p.textContent));

describe('blueprint flows in Chromium', { skip }, () => {
  let browser: Browser;
  before(async () => {
    browser = await launch();
  });
  after(async () => {
    await browser?.close();
  });

  describe('image upload with the page’s own script', () => {
    let s: Served;
    let r: Recorder;
    before(async () => {
      s = await serve(IMAGE_APP, { data: { log: { info: () => {}, error: () => {} } } });
      r = await recordingPage(browser);
    });
    after(async () => {
      await r?.close();
      await s?.close();
    });

    test('preview, address, PUT, form: the message once, the processed image loads, zero violations', async () => {
      const { page } = r;
      const photo = await sharp({ create: { width: 2000, height: 1500, channels: 3, background: { r: 30, g: 120, b: 200 } } }).jpeg().toBuffer();

      const home = await page.goto(`${s.url}/`);
      assert.equal(home?.status(), 200);
      const csp = (await home!.allHeaders())['content-security-policy'] ?? '';
      assert.equal(await page.isDisabled('#send'), true, 'nothing to send before the upload');

      await page.setInputFiles('#file', { name: 'photo.jpg', mimeType: 'image/jpeg', buffer: photo });
      await page.waitForFunction(() => document.querySelector('#send')?.disabled === false || /^(no address|upload refused|failed)/.test(document.querySelector('#upload-state')?.textContent ?? ''), undefined, {
        timeout: SETTLES_MS,
        polling: 50,
      });
      const state = await page.textContent('#upload-state');
      assert.equal(state, 'ready', `the upload finished (policy: ${csp})`);
      const stored = await page.inputValue('#image-url');
      assert.match(stored, /^\/__\/images\/upload\/Post\/image\//);
      // The preview is the chosen file itself, shown from a blob: address.
      const previewShown = () => page.evaluate(() => (document.querySelectorAll('#preview')[0]?.naturalWidth ?? 0) > 0);
      await until(async () => r.violations.length > 0 || (await previewShown()), 'the preview shows (or is refused)', SETTLES_MS);
      await settle(page);
      assert.deepEqual(r.violations, [], `no violation on the upload page (policy: ${csp})`);
      assert.ok(await previewShown(), 'the preview shows');
      assert.match((await page.getAttribute('#preview', 'src')) ?? '', /^blob:/);

      await page.fill('#title', 'Harbour at dusk');
      const posted = page.waitForResponse((res) => res.request().method() === 'POST' && new URL(res.url()).pathname === '/posts', { timeout: SETTLES_MS });
      await page.click('#send');
      assert.equal((await posted).status(), 302, 'the form is accepted');
      // The page was already at `/`: the new one is the one listing the post.
      await page.waitForSelector('figcaption', { timeout: SETTLES_MS });
      assert.equal(new URL(page.url()).pathname + new URL(page.url()).search, '/');
      assert.deepEqual(await messages(page), ['Added Harbour at dusk'], 'the success message shows once');
      const first = await shownImages(page);
      assert.equal(first.length, 1, 'one post is listed');
      assert.match(first[0]!.src ?? '', /^\/__\/images\/[A-Za-z0-9_-]+$/);
      assert.equal(await page.textContent('figcaption'), 'Harbour at dusk');
      await settle(page);
      assert.deepEqual(r.violations, [], 'no violation on the page after the redirect');

      // The processed image (longest side 1000) may need a moment: reload, a bounded number of times.
      let shown: ShownImage | undefined;
      const giveUp = Date.now() + 30_000;
      for (let attempt = 0; attempt < 40 && !shown && Date.now() < giveUp; attempt++) {
        if (attempt > 0) {
          await new Promise((res) => setTimeout(res, 250));
          await page.reload();
        }
        const imgs = await shownImages(page);
        if (imgs[0]?.width !== '1000') continue;
        try {
          await page.waitForFunction(() => {
            const img = document.querySelectorAll('figure img')[0];
            return !!img && img.complete && img.naturalWidth === 1000;
          }, undefined, { timeout: 5_000, polling: 50 });
          shown = (await shownImages(page))[0];
        } catch {
          // Not loaded yet (e.g. asked for while it was still being processed): reload.
        }
      }
      assert.ok(shown, `the processed image loads (last seen: ${JSON.stringify(await shownImages(page))})`);
      assert.deepEqual([shown.width, shown.height, shown.naturalWidth, shown.naturalHeight], ['1000', '750', 1000, 750]);
      assert.match(shown.src ?? '', /^\/__\/images\/[A-Za-z0-9_-]+$/);

      await page.reload();
      assert.deepEqual(await messages(page), [], 'the message is gone after a reload');
      await settle(page);
      assert.deepEqual(r.violations, [], 'zero CSP violations on every page');
      assert.deepEqual(cspErrors(r.errors), [], 'no CSP error in the console');
      assert.deepEqual(r.errors.filter((e) => e.startsWith('pageerror')), [], 'the page’s script throws nothing');
      const unexpected = r.errors.filter((e) => !/status of 503 .* @ \S+\/__\/images\/[A-Za-z0-9_-]+$/.test(e));
      assert.deepEqual(pageErrors(unexpected), [], 'no console error but an image asked for while it was being processed');
    });
  });

  describe('contact form with a 📡 notification over SMTP', () => {
    const CONTACT_APP = {
      '📡/Contact.yaml':
        '🎛:\n  default: sales@example.test\n  subject: "Contact: {{firstName}}"\n\n' +
        'firstName: string\nemail: string\ncontent:\n  type: markdown\n  min: 5\n  max: 2000\n',
      '📡/Contact/email.txt': 'From: {{firstName}} <{{email}}>\n---\n{{content}}\n',
      '📤/Control.html':
        M +
        '{{#updatable}}<label for="{{path}}">{{label}}</label>\n' +
        '{{#input as input}}<input id="{{path}}" name="{{path}}" value="{{value}}" {{{input.attributes}}}>{{/input}}' +
        '{{#textarea as textarea}}<textarea id="{{path}}" name="{{path}}" {{{textarea.attributes}}}>{{value}}</textarea>{{/textarea}}' +
        '{{#invalid}}<p class="err">{{message.value}}</p>{{/invalid}}\n{{/updatable}}\n',
      'contact.html':
        M +
        "{{% import {Control} from '📤' }}\n{{% import {Contact} from '📡' }}\n" +
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Talk to sales</title></head><body>\n' +
        '{{#Contact.Form.view}}<form action="/contact-sales?_form={{id}}" method="POST" novalidate>\n' +
        '{{{ Control firstName }}}{{{ Control email }}}{{{ Control content }}}\n<button>Send</button></form>{{/Contact.Form.view}}\n</body></html>\n',
      'contact-result.html': M + '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Thanks</title></head><body><h1 id="thanks">Thanks, we will be in touch.</h1></body></html>\n',
      '📮contact-sales.js':
        "import {Contact} from '📡';\ntry {\n  const n = new Contact();\n  Contact.Form.submit(n);\n  n.submit();\n  Redirect.home().name('contact-result');\n" +
        "} catch ($ModelInvalid) {\n  Redirect.home().name('contact').invalid($ModelInvalid);\n}\n",
    };

    let smtp: TestSmtp;
    let s: Served;
    let r: Recorder;
    let restoreEnv: (() => void) | undefined;
    before(async () => {
      smtp = await startSmtp();
      restoreEnv = useSmtpEnv(smtp.port);
      s = await serve(CONTACT_APP, { data: { log: { info: () => {}, error: () => {} } } });
      r = await recordingPage(browser);
    });
    after(async () => {
      await r?.close();
      await s?.close();
      await smtp?.close();
      restoreEnv?.();
    });

    test('invalid: back with values and messages, nothing sent; valid: thank-you page and one plain-text message', async () => {
      const { page } = r;
      const errs = () => page.evaluate(() => Array.from(document.querySelectorAll('p.err'), (p) => p.textContent));

      await page.goto(`${s.url}/contact`);
      await page.fill('#Contact_firstName', 'Zoë & Co');
      await page.fill('#Contact_content', 'hi');
      await page.click('button');
      await page.waitForURL((u) => u.pathname === '/contact' && u.search.includes('_form='), { timeout: SETTLES_MS });
      assert.equal(await page.inputValue('#Contact_firstName'), 'Zoë & Co', 'the typed name is kept');
      assert.equal(await page.inputValue('#Contact_content'), 'hi', 'the typed content is kept');
      assert.equal(await page.inputValue('#Contact_email'), '');
      const invalid = await errs();
      assert.equal(invalid.length, 2, JSON.stringify(invalid));
      assert.ok(invalid.some((m) => /Email is required/i.test(m ?? '')), JSON.stringify(invalid));
      assert.ok(invalid.some((m) => /Content must be at least 5/i.test(m ?? '')), JSON.stringify(invalid));
      await settle(page);
      assert.deepEqual(r.violations, [], 'no violation on the form pages');
      // Give a wrongly queued message time to go out; it must not.
      await new Promise((res) => setTimeout(res, 500));
      assert.equal(smtp.received.length, 0, 'an invalid submission sends nothing');
      assert.equal(smtp.counts.rcpt, 0);

      await page.fill('#Contact_email', 'zoe@example.test');
      await page.fill('#Contact_content', 'Fish & chips for 12 <people>, please.');
      await page.click('button');
      await page.waitForURL((u) => u.pathname === '/contact-result', { timeout: SETTLES_MS });
      assert.equal(await page.textContent('#thanks'), 'Thanks, we will be in touch.');
      await settle(page);

      await until(() => smtp.received.length >= 1, 'the notification arrives', SETTLES_MS);
      await new Promise((res) => setTimeout(res, 500));
      assert.equal(smtp.received.length, 1, 'sent exactly once');
      const m = smtp.received[0]!;
      assert.deepEqual(m.to, ['sales@example.test']);
      assert.equal(m.parsed.from?.value[0]?.address, 'site@example.test');
      assert.equal(String(m.parsed.subject), 'Contact: Zoë & Co');
      assert.equal(m.parsed.html, false, 'plain text only');
      assert.equal(String(m.parsed.text).replace(/\r/g, '').trim(), 'From: Zoë & Co <zoe@example.test>\n---\nFish & chips for 12 <people>, please.');

      assert.deepEqual(r.violations, [], 'zero CSP violations on every page');
      assert.deepEqual(cspErrors(r.errors), [], 'no CSP error in the console');
      assert.deepEqual(pageErrors(r.errors), [], 'no console error at all');
    });
  });
});
