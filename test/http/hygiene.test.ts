/** HTTP hygiene: body limits, unexpected errors, access log, timeouts, graceful stop. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { loadApp, type App, type Endpoint } from '../../src/app/index.js';
import { createServer, createLogger } from '../../src/http/index.js';
import { createRouter, parseRouteFile } from '../../src/router/index.js';
import { rawRequest, serve, writeApp } from '../helpers.js';

/** An app whose endpoints are given directly, to exercise the HTTP layer's own paths. */
function appWith(endpoints: Array<{ file: string; handle: Endpoint['handle'] }>, bodyLimit = 1024): App {
  const base = loadApp(writeApp({ '/index.html': '<p>x</p>' }), { bodyLimit });
  const entries = endpoints.map(({ file, handle }) => {
    const spec = parseRouteFile(file, 'script')!;
    return { spec, value: { kind: 'script' as const, method: spec.method, pattern: file, file, dir: '', handle } };
  });
  return { ...base, router: createRouter(entries, () => true) };
}

test('a body over the limit by Content-Length answers 413', async () => {
  const s = await serve({ '/index.html': '<p>hi</p>' }, { bodyLimit: 10 });
  const r = await s.request('POST', '/', { 'content-type': 'text/plain' }, 'x'.repeat(11));
  assert.equal(r.status, 413);
  const ok = await s.request('POST', '/', { 'content-type': 'text/plain' }, 'x'.repeat(10));
  assert.equal(ok.status, 405);
  await s.close();
});

test('a chunked body over the limit answers 413 while it is read', async () => {
  const app = appWith([{ file: '/📮upload.js', handle: async (req) => ({ type: 'body', status: 200, contentType: 'text/plain', body: String((await req.readBody()).length) }) }], 100);
  const server = createServer(app, { log: 'off' });
  const { port } = await server.listen(0, '127.0.0.1');
  const small = await rawRequest(port, 'POST', '/upload', { 'transfer-encoding': 'chunked' }, 'y'.repeat(50));
  assert.equal(small.text, '50');
  const big = await rawRequest(port, 'POST', '/upload', { 'transfer-encoding': 'chunked' }, 'y'.repeat(500));
  assert.equal(big.status, 413);
  await server.close();
});

test('an unexpected exception answers 500 with a request id, logs it, and the server lives on', async () => {
  const lines: string[] = [];
  const errors: string[] = [];
  const app = appWith([
    { file: '/🖥boom.js', handle: () => { throw new Error('secret internal detail'); } },
    { file: '/🖥later.js', handle: async () => { await new Promise((r) => setTimeout(r, 1)); throw new TypeError('async detail'); } },
    { file: '/🖥fine.js', handle: () => ({ type: 'body', status: 200, contentType: 'text/plain', body: 'fine' }) },
  ]);
  const logger = createLogger('json', (l) => lines.push(l), (l) => errors.push(l));
  const server = createServer(app, { log: logger });
  const { port } = await server.listen(0, '127.0.0.1');
  const r = await rawRequest(port, 'GET', '/boom');
  assert.equal(r.status, 500);
  assert.doesNotMatch(r.text, /secret internal detail|at .*\.ts/);
  const id = r.headers['x-request-id'] as string;
  assert.ok(id);
  assert.ok(r.text.includes(id));
  const r2 = await rawRequest(port, 'GET', '/later', { accept: 'application/json' });
  assert.equal(r2.status, 500);
  assert.doesNotMatch(r2.text, /async detail/);
  assert.equal(typeof JSON.parse(r2.text).error, 'string');
  assert.equal((await rawRequest(port, 'GET', '/fine')).text, 'fine');
  const logged = errors.map((l) => JSON.parse(l));
  assert.ok(logged.some((e) => e.id === id && e.message === 'secret internal detail'));
  const access = lines.map((l) => JSON.parse(l)).filter((e) => e.type === 'access');
  assert.deepEqual(access.map((a) => [a.method, a.path, a.status]), [['GET', '/boom', 500], ['GET', '/later', 500], ['GET', '/fine', 200]]);
  assert.ok(access.every((a) => typeof a.ms === 'number'));
  await server.close();
});

test('pretty access log: method, path, status, ms', async () => {
  const lines: string[] = [];
  const app = loadApp(writeApp({ '/index.html': '<p>x</p>' }));
  const server = createServer(app, { log: createLogger('pretty', (l) => lines.push(l)) });
  const { port } = await server.listen(0, '127.0.0.1');
  await rawRequest(port, 'GET', '/');
  await rawRequest(port, 'GET', '/missing?q=1');
  await server.close();
  assert.match(lines[0]!, /^GET \/ 200 \d+\.\dms$/);
  assert.match(lines[1]!, /^GET \/missing 404 \d+\.\dms$/);
});

test('a client that never finishes its headers is cut off by the headers timeout', async () => {
  const app = loadApp(writeApp({ '/index.html': '<p>x</p>' }));
  const server = createServer(app, { log: 'off', headersTimeoutMs: 300, requestTimeoutMs: 300 });
  const { port } = await server.listen(0, '127.0.0.1');
  const started = Date.now();
  const closed = await new Promise<string>((resolve) => {
    const socket = connect(port, '127.0.0.1', () => socket.write('GET / HTTP/1.1\r\nHost: x\r\n'));
    let data = '';
    socket.on('data', (d) => (data += d));
    socket.on('close', () => resolve(data));
    setTimeout(() => { socket.destroy(); resolve('still open'); }, 5000).unref();
  });
  assert.notEqual(closed, 'still open');
  assert.match(closed, /408|^$/);
  assert.ok(Date.now() - started < 5000);
  await server.close();
});

test('a connection that sends nothing is closed once the header time is up (Node counts it from the connection)', async () => {
  const app = loadApp(writeApp({ '/index.html': '<p>x</p>' }));
  const server = createServer(app, { log: 'off', headersTimeoutMs: 300, requestTimeoutMs: 300 });
  const { port } = await server.listen(0, '127.0.0.1');
  const closed = await new Promise<string>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let data = '';
    socket.on('data', (d) => (data += d));
    socket.on('close', () => resolve(data));
    // Generous: the limit is 300 ms and Node's check of it every 150 ms.
    setTimeout(() => { socket.destroy(); resolve('still open'); }, 20_000).unref();
  });
  assert.match(closed, /^HTTP\/1\.1 408 Request Timeout\r\n/);
  await server.close();
});

test('close() lets a request in flight finish', async () => {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const app = appWith([{ file: '/🖥slow.js', handle: async () => { await gate; return { type: 'body', status: 200, contentType: 'text/plain', body: 'done' }; } }]);
  const server = createServer(app, { log: 'off' });
  const { port } = await server.listen(0, '127.0.0.1');
  const pending = rawRequest(port, 'GET', '/slow');
  await new Promise((r) => setTimeout(r, 50));
  const closing = server.close();
  setTimeout(release, 50);
  const r = await pending;
  assert.equal(r.text, 'done');
  await closing;
});

test('malformed request lines get 400 from the server, not a crash', async () => {
  const app = loadApp(writeApp({ '/index.html': '<p>x</p>' }));
  const server = createServer(app, { log: 'off' });
  const { port } = await server.listen(0, '127.0.0.1');
  const reply = await new Promise<string>((resolve) => {
    const socket = connect(port, '127.0.0.1', () => socket.write('GARBAGE\r\n\r\n'));
    let data = '';
    socket.on('data', (d) => (data += d));
    socket.on('close', () => resolve(data));
  });
  assert.match(reply, /^HTTP\/1\.1 400/);
  assert.equal((await rawRequest(port, 'GET', '/')).status, 200);
  await server.close();
});

test('a client that disconnects mid-body does not leave the request hanging', async () => {
  let settled = '';
  const app = appWith([
    {
      file: '/📮upload.js',
      handle: async (req) => {
        try {
          await req.readBody();
          settled = 'resolved';
        } catch (err) {
          settled = (err as Error).message;
        }
        return { type: 'body', status: 200, contentType: 'text/plain', body: 'x' };
      },
    },
  ], 1000);
  const server = createServer(app, { log: 'off' });
  const { port } = await server.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write('POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123456789');
      setTimeout(() => { socket.destroy(); resolve(); }, 50);
    });
  });
  for (let i = 0; i < 50 && !settled; i++) await new Promise((r) => setTimeout(r, 10));
  assert.match(settled, /cut off/);
  assert.equal((await rawRequest(port, 'POST', '/upload', {}, 'ok')).status, 200);
  const started = Date.now();
  await server.close();
  assert.ok(Date.now() - started < 2000, 'nothing is left in flight');
});
