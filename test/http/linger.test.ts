/**
 * Answers before the body ends (src/http/linger.ts, docs/request.md "Answers before the body ends"):
 * a 413 sent while the client is still sending a body that is too large closes the connection, but
 * only after the client could read it. The client here keeps writing and reads nothing for a
 * while, as a slow browser upload would; closed at once, the server's kernel would answer the
 * unread bytes with a reset, and the client would lose the 413.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { serve, type Served } from '../helpers.js';

let s: Served;
before(async () => {
  s = await serve({ 'upload/POST.js': "({ok: true})\n" }, { bodyLimit: 64 * 1024 });
});
after(() => s.close());

/** POSTs a body announced as `length` bytes, writing 64 KiB pieces for `writeMs`, reading nothing until then. */
function slowLargePost(port: number, length: number, writeMs: number): Promise<{ text: string; error?: string; endedByServer: boolean }> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.pause();
    const chunks: Buffer[] = [];
    let error: string | undefined;
    let endedByServer = false;
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('end', () => {
      endedByServer = true;
      socket.end();
    });
    socket.on('error', (e: NodeJS.ErrnoException) => (error ??= e.code ?? e.message));
    socket.on('close', () => resolve({ text: Buffer.concat(chunks).toString('latin1'), error, endedByServer }));
    socket.write(`POST /upload HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/octet-stream\r\nContent-Length: ${length}\r\n\r\n`);
    const piece = Buffer.alloc(64 * 1024, 'x');
    const started = Date.now();
    const pump = (): void => {
      if (socket.destroyed) return;
      if (Date.now() - started > writeMs) {
        socket.resume();
        return;
      }
      socket.write(piece, () => setTimeout(pump, 5));
    };
    pump();
  });
}

describe('an answer sent before the body ends', () => {
  it('reaches a client that is still writing a body over the limit: 413, then the server ends the connection', async () => {
    const r = await slowLargePost(s.port, 50 * 1024 * 1024, 400);
    assert.match(r.text, /^HTTP\/1\.1 413 /, `answer: ${JSON.stringify(r.text.slice(0, 200))}, error: ${r.error}`);
    assert.match(r.text, /\r\nConnection: close\r\n/i);
    assert.equal(r.error, undefined);
    assert.equal(r.endedByServer, true);
  });

  it('closes a connection whose client never stops sending, after the linger', async () => {
    // allowHalfOpen: the client does not end its side when the server ends its own.
    const socket = connect({ port: s.port, host: '127.0.0.1', allowHalfOpen: true });
    const started = Date.now();
    let got = '';
    socket.on('data', (c: Buffer) => (got += c.toString('latin1')));
    socket.on('error', () => {});
    socket.write(`POST /upload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: ${1024 * 1024 * 1024}\r\n\r\n`);
    const piece = Buffer.alloc(16 * 1024, 'y');
    const timer = setInterval(() => socket.writable && socket.write(piece), 20);
    await new Promise((resolve) => socket.on('close', resolve));
    clearInterval(timer);
    assert.match(got, /^HTTP\/1\.1 413 /);
    const ms = Date.now() - started;
    assert.ok(ms >= 1500 && ms < 8000, `closed after ${ms} ms`);
  });

  it('leaves a body that is read to its end and answered as before', async () => {
    const r = await s.request('POST', '/upload', { 'Content-Type': 'application/octet-stream' }, Buffer.alloc(1000, 'z'));
    assert.equal(r.status, 200, r.text);
  });
});
