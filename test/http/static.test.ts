/** Static files: types, validators, 304s, HEAD, compression, streaming of large files. */
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { serve, type Served } from '../helpers.js';

const css = 'body { color: #333; }\n'.repeat(100);
const big = Buffer.alloc(300_000, 'abcdefghij');

describe('static files', () => {
  let s: Served;
  before(async () => {
    s = await serve(
      {
        '/site.css': css,
        '/tiny.txt': 'hi',
        '/data.json': JSON.stringify({ list: Array.from({ length: 100 }, (_, i) => i) }),
        '/img.png': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]),
        '/font.woff2': Buffer.from('wOF2'),
        '/noext': 'plain',
        '/big.txt': big,
      },
      { memoryLimit: 100_000 },
    );
  });
  after(() => s.close());

  test('Content-Type has a charset for text and none for binary', async () => {
    assert.equal((await s.get('/site.css')).headers['content-type'], 'text/css; charset=utf-8');
    assert.equal((await s.get('/data.json')).headers['content-type'], 'application/json; charset=utf-8');
    assert.equal((await s.get('/img.png')).headers['content-type'], 'image/png');
    assert.equal((await s.get('/font.woff2')).headers['content-type'], 'font/woff2');
    assert.equal((await s.get('/noext')).headers['content-type'], 'application/octet-stream');
  });

  test('ETag and If-None-Match → 304 without a body', async () => {
    const r = await s.get('/site.css');
    assert.equal(r.status, 200);
    assert.equal(r.text, css);
    const etag = r.headers.etag!;
    assert.match(etag, /^"[\w-]+"$/);
    const again = await s.get('/site.css', { 'if-none-match': etag });
    assert.equal(again.status, 304);
    assert.equal(again.body.length, 0);
    assert.equal(again.headers.etag, etag);
    assert.equal((await s.get('/site.css', { 'if-none-match': `"other", ${etag}` })).status, 304);
    assert.equal((await s.get('/site.css', { 'if-none-match': `W/${etag}` })).status, 304);
    assert.equal((await s.get('/site.css', { 'if-none-match': '"nope"' })).status, 200);
  });

  test('Last-Modified and If-Modified-Since', async () => {
    const r = await s.get('/tiny.txt');
    const lm = r.headers['last-modified']!;
    assert.ok(!Number.isNaN(Date.parse(lm)));
    assert.equal((await s.get('/tiny.txt', { 'if-modified-since': lm })).status, 304);
    assert.equal((await s.get('/tiny.txt', { 'if-modified-since': new Date(Date.parse(lm) - 60_000).toUTCString() })).status, 200);
    // If-None-Match takes precedence over If-Modified-Since.
    assert.equal((await s.get('/tiny.txt', { 'if-modified-since': lm, 'if-none-match': '"x"' })).status, 200);
  });

  test('gzip and brotli for compressible types when accepted', async () => {
    const br = await s.get('/site.css', { 'accept-encoding': 'gzip, deflate, br' });
    assert.equal(br.headers['content-encoding'], 'br');
    assert.equal(br.headers.vary, 'Accept-Encoding');
    assert.equal(brotliDecompressSync(br.body).toString(), css);
    assert.ok(br.body.length < css.length);
    const gz = await s.get('/site.css', { 'accept-encoding': 'gzip' });
    assert.equal(gz.headers['content-encoding'], 'gzip');
    assert.equal(gunzipSync(gz.body).toString(), css);
    assert.notEqual(gz.headers.etag, br.headers.etag, 'each encoding has its own entity tag');
    assert.equal((await s.get('/site.css', { 'accept-encoding': 'gzip', 'if-none-match': gz.headers.etag! })).status, 304);
    const none = await s.get('/site.css', { 'accept-encoding': 'br;q=0, gzip;q=0' });
    assert.equal(none.headers['content-encoding'], undefined);
    const png = await s.get('/img.png', { 'accept-encoding': 'br' });
    assert.equal(png.headers['content-encoding'], undefined, 'binary images are not compressed');
    const tiny = await s.get('/tiny.txt', { 'accept-encoding': 'br' });
    assert.equal(tiny.headers['content-encoding'], undefined, 'tiny files are not worth compressing');
  });

  test('HEAD has the headers of GET and no body', async () => {
    const get = await s.get('/site.css');
    const head = await s.request('HEAD', '/site.css');
    assert.equal(head.status, 200);
    assert.equal(head.body.length, 0);
    assert.equal(head.headers['content-length'], String(css.length));
    assert.equal(head.headers.etag, get.headers.etag);
  });

  test('files above the memory limit are streamed from disk, with a weak ETag', async () => {
    const r = await s.get('/big.txt');
    assert.equal(r.status, 200);
    assert.equal(r.body.length, big.length);
    assert.ok(r.body.equals(big));
    assert.match(r.headers.etag!, /^W\/"/);
    assert.equal((await s.get('/big.txt', { 'if-none-match': r.headers.etag! })).status, 304);
    const head = await s.request('HEAD', '/big.txt');
    assert.equal(head.headers['content-length'], String(big.length));
    assert.equal(head.body.length, 0);
  });

  test('original asset paths revalidate (Cache-Control: no-cache)', async () => {
    assert.equal((await s.get('/site.css')).headers['cache-control'], 'no-cache');
  });
});

describe('byte ranges', () => {
  let s: Served;
  const text = 'abcdefghijklmnopqrstuvwxyz'.repeat(20);
  const big = Buffer.alloc(200_000, 'xyz');
  before(async () => {
    s = await serve({ '/a.txt': text, '/big.bin': big }, { memoryLimit: 100_000 });
  });
  after(() => s.close());

  test('a single range answers 206 with Content-Range; Accept-Ranges is announced', async () => {
    const full = await s.get('/a.txt');
    assert.equal(full.headers['accept-ranges'], 'bytes');
    const r = await s.get('/a.txt', { range: 'bytes=2-5' });
    assert.equal(r.status, 206);
    assert.equal(r.text, 'cdef');
    assert.equal(r.headers['content-range'], `bytes 2-5/${text.length}`);
    assert.equal(r.headers['content-length'], '4');
    assert.equal((await s.get('/a.txt', { range: 'bytes=-3' })).text, text.slice(-3));
    assert.equal((await s.get('/a.txt', { range: `bytes=${text.length - 2}-` })).text, text.slice(-2));
    assert.equal((await s.get('/a.txt', { range: 'bytes=0-99999' })).body.length, text.length, 'an end past the file is clamped');
  });

  test('an unsatisfiable range answers 416; malformed or multiple ranges get the whole file', async () => {
    const r = await s.get('/a.txt', { range: `bytes=${text.length}-` });
    assert.equal(r.status, 416);
    assert.equal(r.headers['content-range'], `bytes */${text.length}`);
    assert.equal((await s.get('/a.txt', { range: 'bytes=0-1,4-5' })).status, 200);
    assert.equal((await s.get('/a.txt', { range: 'items=0-1' })).status, 200);
    assert.equal((await s.get('/a.txt', { range: 'bytes=5-2' })).status, 200);
  });

  test('If-Range: the range applies only while the validator matches', async () => {
    const etag = (await s.get('/a.txt')).headers.etag!;
    assert.equal((await s.get('/a.txt', { range: 'bytes=0-0', 'if-range': etag })).status, 206);
    assert.equal((await s.get('/a.txt', { range: 'bytes=0-0', 'if-range': '"stale"' })).status, 200);
  });

  test('ranges of streamed files are read from disk', async () => {
    const r = await s.get('/big.bin', { range: 'bytes=150000-150009' });
    assert.equal(r.status, 206);
    assert.ok(r.body.equals(big.subarray(150000, 150010)));
  });
});
