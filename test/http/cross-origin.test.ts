/**
 * Cross-site writes over HTTP (docs/security.md "Cross-site requests"): POST, PUT, PATCH and
 * DELETE sent by a page of another site are refused with 403 before any body is read or any
 * script runs; same-origin requests, safe methods, clients that are not browsers and trusted
 * origins go through.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { serveSpied, type SpiedServer } from './spied-server.js';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const APP = {
  '/api/📮save.js': `import {title} from 'form'\n({ saved: title })`,
  '/api/PUT.js': `import {title} from 'form'\n({ put: title })`,
  '/api/DELETE.js': `({ deleted: true })`,
  '/api/GET.js': `({ read: true })`,
  '/page.html': '<p>page</p>',
};

describe('cross-site writes are refused', () => {
  let s: SpiedServer;
  before(async () => {
    s = await serveSpied(APP);
  });
  after(() => s.close());

  /** Sends a request and checks that no endpoint ran and no body was read for it. */
  async function refused(method: string, path: string, headers: Record<string, string>, body?: string) {
    const runs = s.runs.length;
    const reads = s.bodyReads.length;
    const r = await s.request(method, path, headers, body);
    assert.equal(r.status, 403, `${method} ${path} ${JSON.stringify(headers)} → ${r.status} ${r.text}`);
    assert.equal(s.runs.length, runs, 'the endpoint must not run');
    assert.equal(s.bodyReads.length, reads, 'the body must not be read');
    return r;
  }

  test('a cross-site form POST: 403 HTML page with a reason and the request id, logged, script not run', async () => {
    const r = await refused('POST', '/api/save', { ...FORM, 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' }, 'title=pwned');
    assert.match(String(r.headers['content-type']), /^text\/html/);
    assert.match(r.text, /403 Forbidden/);
    assert.match(r.text, /another site/);
    assert.ok(!r.text.includes('pwned') && !r.text.includes('evil.example'), 'the answer echoes nothing of the request');
    assert.ok(r.headers['content-security-policy'], 'the error page carries a policy');
    const id = r.headers['x-request-id'];
    assert.match(String(id), /^[0-9a-f]+-[0-9a-z]+$/);
    assert.deepEqual(s.access.at(-1), { id, method: 'POST', path: '/api/save', status: 403 });
  });

  test('a client that prefers JSON gets {"error": …}', async () => {
    const r = await refused('POST', '/api/save', { ...FORM, accept: 'application/json', 'sec-fetch-site': 'cross-site' }, 'title=x');
    assert.match(String(r.headers['content-type']), /^application\/json/);
    assert.match(JSON.parse(r.text).error, /another site/);
    assert.ok(r.headers['x-request-id']);
  });

  test('every unsafe method, from another site or another port of the same host (same-site)', async () => {
    for (const site of ['cross-site', 'same-site']) {
      await refused('POST', '/api/save', { ...FORM, 'sec-fetch-site': site }, 'title=x');
      await refused('PUT', '/api', { ...FORM, 'sec-fetch-site': site }, 'title=x');
      await refused('DELETE', '/api', { 'sec-fetch-site': site });
      await refused('PATCH', '/api', { 'sec-fetch-site': site });
    }
  });

  test('old browsers (no Sec-Fetch-Site): an Origin other than Host, null, or with user information is refused', async () => {
    const host = `127.0.0.1:${s.port}`;
    for (const origin of ['https://evil.example', `http://127.0.0.1:${s.port + 1}`, `http://localhost:${s.port}`, 'null', `http://user@${host}`, `http://${host}/x`, 'not a url']) {
      await refused('POST', '/api/save', { ...FORM, origin }, 'title=x');
    }
  });

  test('refused before the body-size check and before routing', async () => {
    // Announces a body far over the limit and sends none: the answer is 403, not 413.
    await refused('POST', '/api/save', { ...FORM, 'sec-fetch-site': 'cross-site', 'content-length': String(50 * 1024 * 1024) });
    // No endpoint here: still 403 rather than 404 or 405.
    await refused('POST', '/nothing-here', { 'sec-fetch-site': 'cross-site' });
    await refused('POST', '/page', { 'sec-fetch-site': 'cross-site' });
  });

  test('same-origin requests, typed addresses and matching Origin headers go through', async () => {
    const host = `127.0.0.1:${s.port}`;
    const cases: Record<string, string>[] = [
      { 'sec-fetch-site': 'same-origin', origin: `http://${host}` },
      { 'sec-fetch-site': 'none' },
      { origin: `http://${host}` }, // an old browser on this site
    ];
    for (const headers of cases) {
      const r = await s.request('POST', '/api/save', { ...FORM, ...headers }, 'title=ok');
      assert.equal(r.status, 200, JSON.stringify(headers));
      assert.deepEqual(JSON.parse(r.text), { saved: 'ok' });
      assert.equal(s.runs.at(-1), 'POST /api/save');
    }
    assert.equal((await s.request('DELETE', '/api', { 'sec-fetch-site': 'same-origin' })).status, 200);
  });

  test('clients that are not browsers (no Origin, no Sec-Fetch-Site) go through', async () => {
    const r = await s.request('POST', '/api/save', FORM, 'title=curl');
    assert.equal(r.status, 200);
    assert.deepEqual(JSON.parse(r.text), { saved: 'curl' });
    assert.equal((await s.request('PUT', '/api', FORM, 'title=p')).status, 200);
  });

  test('safe methods go through from anywhere', async () => {
    const cross = { 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' };
    assert.equal((await s.request('GET', '/api', cross)).status, 200);
    assert.equal((await s.request('HEAD', '/api', cross)).status, 200);
    assert.equal((await s.request('GET', '/page', cross)).status, 200);
    const options = await s.request('OPTIONS', '/api', cross);
    assert.equal(options.status, 204);
    assert.ok(options.headers.allow);
  });
});

describe('trusted-origins in /🎛.yaml', () => {
  let s: SpiedServer;
  before(async () => {
    s = await serveSpied({ ...APP, '/🎛.yaml': 'trusted-origins:\n  - https://admin.example.com\n  - http://localhost:8081\n' });
  });
  after(() => s.close());

  test('a listed origin may send cross-site writes, with or without Sec-Fetch-Site', async () => {
    for (const headers of [
      { 'sec-fetch-site': 'cross-site', origin: 'https://admin.example.com' },
      { 'sec-fetch-site': 'same-site', origin: 'http://localhost:8081' },
      { origin: 'https://admin.example.com' },
    ] as Record<string, string>[]) {
      const r = await s.request('POST', '/api/save', { ...FORM, ...headers }, 'title=trusted');
      assert.equal(r.status, 200, JSON.stringify(headers));
      assert.deepEqual(JSON.parse(r.text), { saved: 'trusted' });
    }
    assert.equal((await s.request('DELETE', '/api', { 'sec-fetch-site': 'cross-site', origin: 'https://admin.example.com' })).status, 200);
  });

  test('other origins, other ports and other schemes of a listed host are still refused', async () => {
    for (const origin of ['https://evil.example', 'https://admin.example.com:8443', 'http://admin.example.com', 'http://localhost:8082', 'null']) {
      const runs = s.runs.length;
      const r = await s.request('POST', '/api/save', { ...FORM, 'sec-fetch-site': 'cross-site', origin }, 'title=x');
      assert.equal(r.status, 403, origin);
      assert.equal(s.runs.length, runs);
    }
    // Sec-Fetch-Site without an Origin cannot name a trusted site.
    assert.equal((await s.request('POST', '/api/save', { ...FORM, 'sec-fetch-site': 'cross-site' }, 'title=x')).status, 403);
  });
});
