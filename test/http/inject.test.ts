/**
 * inject (src/http/inject.ts): a request answered without a socket goes through the same dispatch
 * and send as one off the network. Each case is asked both ways and must get the same answer.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { loadApp } from '../../src/app/index.js';
import { createServer, inject } from '../../src/http/index.js';
import { writeApp } from '../helpers.js';

const APP = {
  '/index.html': '<!doctype html><html><head><title>Home</title></head><body><p>Hello {{name}}</p></body></html>',
  '/style.css': 'body { color: red; }',
  '/api/📮echo.js': "import { text } from 'form';\n({ got: text })",
  '/api/🖥status.js': "({ ok: true })",
  '/⚡NotFound.html': '<!doctype html><html><head><title>Missing</title></head><body><p>No such page</p></body></html>',
};

describe('inject answers as the server does', () => {
  const root = writeApp(APP);
  const app = loadApp(root);
  const server = createServer(app, { log: 'off' });
  let port = 0;
  before(async () => {
    port = (await server.listen(0, '127.0.0.1')).port;
  });
  after(async () => {
    await server.close();
    rmSync(root, { recursive: true, force: true });
  });

  const cases: Array<{ name: string; method?: string; url: string; headers?: Record<string, string>; body?: string }> = [
    { name: 'a page', url: '/' },
    { name: 'a static file', url: '/style.css' },
    { name: 'a JSON endpoint', url: '/api/status' },
    { name: 'a missing page (⚡NotFound.html)', url: '/nope' },
    { name: 'a missing path, JSON', url: '/nope', headers: { accept: 'application/json' } },
    { name: 'a wrong method', method: 'DELETE', url: '/api/status' },
    { name: 'a bad path', url: '/a%00b' },
    { name: 'a cross-site write', method: 'POST', url: '/api/echo', headers: { 'sec-fetch-site': 'cross-site', 'content-type': 'application/json' }, body: '{}' },
    { name: 'a write', method: 'POST', url: '/api/echo', headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin' }, body: 'text=hi' },
    { name: 'a body over the limit', method: 'POST', url: '/api/echo', headers: { 'content-type': 'text/plain', 'sec-fetch-site': 'same-origin' }, body: 'x'.repeat(1024 * 1024 + 1) },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const over = await fetch(`http://127.0.0.1:${port}${c.url}`, { method: c.method ?? 'GET', headers: c.headers ?? {}, ...(c.body !== undefined && { body: c.body }) });
      const overBody = await over.text();
      const injected = await inject(app, { method: c.method ?? 'GET', url: c.url, headers: { host: `127.0.0.1:${port}`, ...c.headers }, ...(c.body !== undefined && { body: c.body }) });
      assert.equal(injected.status, over.status);
      // Error answers name their own request id (X-Request-Id) in the body.
      const withoutId = (text: string, id: string | null) => (id === null ? text : text.replaceAll(id, '<id>'));
      assert.equal(withoutId(injected.text(), String(injected.headers['x-request-id'] ?? null)), withoutId(overBody, over.headers.get('x-request-id')));
      for (const h of ['content-type', 'cache-control', 'content-security-policy', 'allow']) assert.equal(injected.headers[h] ?? null, over.headers.get(h), h);
    });
  }
});
