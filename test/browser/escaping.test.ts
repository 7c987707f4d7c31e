/**
 * Contextual escaping in a real browser (docs/views.md "Values for scripts and styles"). The
 * reported injection — request values written into a script's string literals (`var first =
 * "{{A}}", second = "{{B}}"` with `?a=\&b=;window.x=1//`) or into a template literal — is now a
 * build error; the safe way (a JSON data block and data-* attributes) keeps every hostile value
 * inert: nothing of it runs, the page's own scripts run, and the policy reports no violation.
 *
 * Skips only when /usr/bin/chromium is missing (`.ci/run` installs it).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { checkApp } from '../../src/app/index.js';
import { formatDiagnostic } from '../../src/diag/index.js';
import { launch, skip, violationRecordingPage, type Browser, type Page } from './chromium.js';
import { serve, writeApp, type Served } from '../helpers.js';

const M = '<!--TEMPLATE mustache-->\n';


// Browser globals used inside page.evaluate (compiled without the DOM library).
declare const window: { __violations: string[]; x?: unknown };
declare const document: {
  documentElement: { dataset: Record<string, string> };
  scripts: { length: number };
  addEventListener(type: string, listener: (e: { effectiveDirective: string; blockedURI: string }) => void): void;
};

const SUPPLIER = "import {a, b} from '&'\nconst A = a ?? ''\nconst B = b ?? ''\nexport {A, B}";

// The page, written the safe way: values in a JSON data block and in data-* attributes; the
// scripts themselves are literal, so their hashes are made at load.
const SAFE = `${M}{{% import {A, B} from '📤' }}<!doctype html>
<html>
<body>
<script type="application/json" id="data">{"first": "{{A}}", "second": "{{B}}", "values": [{{A}}, {{B}}]}</script>
<p id="out" data-a="{{A}}" data-b="{{B}}">{{A}}</p>
<script>
  var data = JSON.parse(document.getElementById('data').textContent);
  var out = document.getElementById('out').dataset;
  var d = document.documentElement.dataset;
  d.first = data.first;
  d.second = data.second;
  d.values = JSON.stringify(data.values);
  d.attrA = out.a;
  d.attrB = out.b;
  d.ran = 'yes';
</script>
<script data-greeting="{{A}}">
  document.documentElement.dataset.greeting = \`Hello \${document.currentScript.dataset.greeting}\`;
</script>
</body>
</html>
`;

const HOSTILE: Array<[string, string]> = [
  ['\\', ';window.x=1//'],
  ['</script><script>window.x=2</script>', '<!--<script>'],
  ['"-(window.x=3)-"', "'-(window.x=4)-'"],
  ['${window.x=5}`', '\u2028window.x=6\u2029'],
  ['"}]; window.x=7; //', '<img src=x onerror="window.x=8">'],
];

describe('escaping in Chromium', { skip }, () => {
  let s: Served;
  let browser: Browser;
  let page: Page;

  before(async () => {
    s = await serve({ '/📤/Q.js': SUPPLIER, '/index.html': SAFE });
    browser = await launch();
    page = await violationRecordingPage(browser);
  });
  after(async () => {
    await browser?.close();
    await s?.close();
  });

  test('the reported views are build errors, at each tag', () => {
    const dir = writeApp({
      '/📤/Q.js': SUPPLIER,
      '/index.html': `${M}{{% import {A, B} from '📤' }}<script>var first = "{{A}}", second = "{{B}}";</script>\n`,
      '/hello.html': `${M}{{% import {A} from '📤' }}<script>var s = \`Hello {{A}}\`;</script>\n`,
    });
    const lines = checkApp(dir).filter((d) => d.severity === 'error').map(formatDiagnostic);
    assert.deepEqual(
      lines.map((l) => l.replace(/: [^[]*\[/, ' [')).sort(),
      ['hello.html:2:50 [LW_CSP_TAG_IN_SCRIPT]', 'index.html:2:51 [LW_CSP_TAG_IN_SCRIPT]', 'index.html:2:69 [LW_CSP_TAG_IN_SCRIPT]'],
    );
  });

  test('hostile values stay data: they read back exactly, nothing of them runs, no violation', async () => {
    for (const [a, b] of HOSTILE) {
      const url = `${s.url}/?a=${encodeURIComponent(a)}&b=${encodeURIComponent(b)}`;
      const res = await page.goto(url, { waitUntil: 'load' });
      assert.equal(res?.status(), 200);
      const r = await page.evaluate(async () => {
        await new Promise((done) => setTimeout(done, 30));
        return { violations: window.__violations, x: window.x, data: { ...document.documentElement.dataset }, scripts: document.scripts.length };
      });
      const label = JSON.stringify([a, b]);
      assert.deepEqual(r.violations, [], label);
      assert.equal(r.x, undefined, label);
      assert.equal(r.scripts, 3, label);
      assert.equal(r.data.ran, 'yes', label);
      assert.deepEqual(
        [r.data.first, r.data.second, r.data.values, r.data.attrA, r.data.attrB, r.data.greeting],
        [a, b, JSON.stringify([a, b]), a, b, `Hello ${a}`],
        label,
      );
    }
  });
});
