/**
 * Server-sent events in a real browser (headless Chromium through playwright-core): a Laneway view
 * whose inline script opens an `EventSource` to a `⏱` stream receives its typed events with
 * Laneway's ids, sees the stream end after the `$event.last` event, and the page's policy lets all
 * of it happen without a single `securitypolicyviolation`.
 *
 * Skips only when /usr/bin/chromium is missing (`.ci/run` installs it).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { serveSpied, type SpiedServer } from '../http/spied-server.js';
import { launch, skip, violationRecordingPage, type Browser, type Page } from './chromium.js';

// The browser globals the functions given to page.evaluate use (no DOM library in this project).
declare const window: { __violations: string[]; seen: string[]; ended?: boolean };

const M = '<!--TEMPLATE mustache-->\n';

const APP = {
  '/🎛.yaml': 'name: events in a browser\nevents: {poll-ms: 30}\n',
  '/build/⏱progress.js': [
    'let step = 0;',
    '(lastEventId) => {',
    '  step += 1;',
    "  if (step < 4) return [{percent: step * 25, $event: {type: 'progress'}}];",
    "  return [{percent: 100, $event: {type: 'completed', last: true}}];",
    '}',
  ].join('\n'),
  // A view: its inline script is allowed by its hash, and connect-src 'self' lets it connect.
  '/build/index.html': `${M}<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Build</title></head>
<body>
<p id="status">waiting</p>
<script>
  window.seen = [];
  const source = new EventSource('/build/progress');
  const note = (kind) => (e) => window.seen.push(kind + ' ' + JSON.parse(e.data).percent + ' #' + e.lastEventId);
  source.addEventListener('progress', note('progress'));
  source.addEventListener('completed', note('completed'));
  source.addEventListener('error', () => {
    // The server ended the stream after its last event: the browser would reconnect, the page stops it.
    window.seen.push('ended, readyState ' + source.readyState);
    source.close();
    document.getElementById('status').textContent = 'done';
    window.ended = true;
  });
</script>
</body></html>
`,
};

describe('⏱ event streams in Chromium', { skip }, () => {
  let app: SpiedServer;
  let browser: Browser;
  let page: Page;

  before(async () => {
    app = await serveSpied(APP);
    browser = await launch();
    page = await violationRecordingPage(browser);
  });
  after(async () => {
    await browser?.close();
    await app?.close();
  });

  test('an EventSource on a Laneway view receives typed events and sees the stream end on $event.last, with no CSP violation', async () => {
    const res = await page.goto(`${app.url}/build/`, { waitUntil: 'load' });
    assert.equal(res?.status(), 200);
    assert.match(res?.headers()['content-security-policy'] ?? '', /connect-src 'self'/);
    await page.waitForFunction(() => window.ended === true, undefined, { timeout: 10_000 });
    const seen = await page.evaluate(() => window.seen);
    assert.deepEqual(seen, ['progress 25 #1', 'progress 50 #2', 'progress 75 #3', 'completed 100 #4', 'ended, readyState 0']);
    assert.equal(await page.textContent('#status'), 'done');
    // One connection, answered as a stream and closed by the server; the page did not reconnect.
    assert.deepEqual(app.runs.filter((r) => r.endsWith('/build/progress')), ['GET /build/progress']);
    const stream = app.access.find((e) => e.path === '/build/progress');
    assert.equal(stream?.status, 200);
    assert.deepEqual(await page.evaluate(() => window.__violations), []);
  });
});
