/**
 * Requests Node's parser refuses before Laneway sees them (a malformed request line, headers too
 * large) are answered like every other error: a status, `Connection: close`, and an
 * `X-Request-Id` that the access log line carries too.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { loadApp } from '../../src/app/index.js';
import { createServer } from '../../src/http/index.js';
import { writeApp } from '../helpers.js';

function raw(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.end(text));
    let out = '';
    socket.on('data', (c) => (out += c.toString('latin1')));
    socket.on('end', () => resolve(out));
    socket.on('error', reject);
    socket.setTimeout(10_000, () => socket.destroy(new Error('no answer within 10 s')));
  });
}

describe('requests the HTTP parser refuses', () => {
  const access: Array<{ id: string; status: number }> = [];
  let server: ReturnType<typeof createServer>;
  let port: number;
  before(async () => {
    const app = loadApp(writeApp({ '/index.html': '<p>hi</p>\n' }));
    server = createServer(app, {
      log: { format: 'json', access: (e) => access.push(e), error: () => {}, info: () => {} },
    });
    port = (await server.listen(0, '127.0.0.1')).port;
  });
  after(() => server.close());

  for (const [name, request, status] of [
    ['a malformed request line', 'GARBAGE\r\n\r\n', 400],
    ['a lowercase method', 'post / HTTP/1.1\r\nHost: x\r\n\r\n', 400],
    ['headers larger than the limit', `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431],
  ] as const) {
    test(`${name}: ${status} with a request id, logged`, async () => {
      const answer = await raw(port, request);
      assert.match(answer, new RegExp(`^HTTP/1\\.1 ${status} `));
      const id = /\r\nX-Request-Id: ([^\r]+)\r\n/i.exec(answer)?.[1];
      assert.ok(id, answer);
      assert.ok(access.some((e) => e.id === id && e.status === status), 'the access log has the same id');
    });
  }
});
