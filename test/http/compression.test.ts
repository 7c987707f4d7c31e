/**
 * Compression of generated answers (docs/routing.md "Static files", docs/deploy.md "Behind a
 * reverse proxy"): compressed off the event loop, the same
 * bytes reused while the content does not change, identical to the page once decompressed; HEAD,
 * 304 and per-encoding ETags as for files; and text files compressed ahead once the server listens.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { serve, type Served } from '../helpers.js';

const rows = Array.from({ length: 300 }, (_, i) => ({ id: i, name: `Row ${i}`, note: 'the same words on every row, which compress well' }));

describe('compressed generated answers', () => {
  let s: Served;
  before(async () => {
    s = await serve({
      '_rows.yaml': rows.map((r) => `- {id: ${r.id}, name: "${r.name}", note: "${r.note}"}`).join('\n') + '\n',
      'index.html': '<!--TEMPLATE mustache-->\n{{% yaml /_rows as rows }}<!doctype html><html><head><title>Rows</title></head><body><ul>{{#rows}}<li id="r{{id}}">{{name}}: {{note}}</li>{{/rows}}</ul></body></html>\n',
      'api/GET.js': "import {n} from '&';\n({n: n, rows: [" + rows.slice(0, 60).map((r) => `{id: ${r.id}, note: '${r.note}'}`).join(', ') + ']});\n',
      'site.css': 'body { margin: 0; }\n'.repeat(200),
    });
  });
  after(() => s.close());

  it('a page: br and gzip decompress to the identity body; a second answer is the same bytes', async () => {
    const plain = await s.get('/');
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.match(plain.text, /id="r299"/);
    const br1 = await s.get('/', { 'accept-encoding': 'gzip, deflate, br' });
    const br2 = await s.get('/', { 'accept-encoding': 'gzip, deflate, br' });
    assert.equal(br1.headers['content-encoding'], 'br');
    assert.equal(brotliDecompressSync(br1.body).toString(), plain.text);
    assert.deepEqual(br2.body, br1.body);
    assert.equal(Number(br1.headers['content-length']), br1.body.length);
    assert.ok(br1.body.length < plain.body.length / 4);
    assert.equal(br1.headers.vary, 'Accept-Encoding');
    const gz = await s.get('/', { 'accept-encoding': 'gzip' });
    assert.equal(gz.headers['content-encoding'], 'gzip');
    assert.equal(gunzipSync(gz.body).toString(), plain.text);
    assert.notEqual(gz.headers.etag, br1.headers.etag, 'each encoding has its own entity tag');
    assert.equal((await s.get('/', { 'accept-encoding': 'gzip', 'if-none-match': String(gz.headers.etag) })).status, 304);
  });

  it('JSON answers that differ are compressed apart (never the bytes of another answer)', async () => {
    const a = await s.get('/api?n=1', { 'accept-encoding': 'br', accept: 'application/json' });
    const b = await s.get('/api?n=2', { 'accept-encoding': 'br', accept: 'application/json' });
    assert.equal(JSON.parse(brotliDecompressSync(a.body).toString()).n, '1');
    assert.equal(JSON.parse(brotliDecompressSync(b.body).toString()).n, '2');
  });

  it('HEAD has the compressed length and no body', async () => {
    const get = await s.get('/', { 'accept-encoding': 'br' });
    const head = await s.request('HEAD', '/', { 'accept-encoding': 'br' });
    assert.equal(head.status, 200);
    assert.equal(head.body.length, 0);
    assert.equal(head.headers['content-encoding'], 'br');
    assert.equal(head.headers['content-length'], get.headers['content-length']);
  });

  it('a text file is served compressed, the same as it decompresses', async () => {
    const css = await s.get('/site.css', { 'accept-encoding': 'br' });
    assert.equal(css.headers['content-encoding'], 'br');
    assert.equal(brotliDecompressSync(css.body).toString(), 'body { margin: 0; }\n'.repeat(200));
  });
});
