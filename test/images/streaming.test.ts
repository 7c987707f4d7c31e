/**
 * Uploads streamed in (docs/images.md "Where the images are"), black-box over HTTP against
 * `bin/laneway serve`:
 *
 * - on PostgreSQL (two instances on one database, no shared volume): an upload sent chunked,
 *   without Content-Length, in small slow pieces, is in the database chunk by chunk while it
 *   arrives, yet nobody sees it before it is whole (the address cannot be stored, the image is
 *   404, the store has no upload under its id); once whole it is the bytes sent, and processed and
 *   served by both instances alike (ETag, 304, ranges, caching);
 * - refused while it arrives, the rest unread: past 10 MB without Content-Length (413), not an
 *   image by its first bytes (415), a decompression bomb by its header (413); no row is left;
 * - a client gone mid-upload leaves no row, and the address takes the upload again;
 * - with an images directory (SQLite's default) the same, through a temporary file.
 *
 * Needs `npm run build` (bin/laneway).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { request as httpRequest, type ClientRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import pg from 'pg';
import sharp from 'sharp';
import { rawRequest, writeApp, type Response } from '../helpers.js';
import { readUpload } from '../support/image-store.js';
import { startPostgres } from '../support/postgres.js';
import { serve, type Served } from '../support/served-process.js';
import { TestVisitor } from '../support/visitor.js';
import { CHUNK_BYTES, DatabaseImages } from '../../src/images/index.js';
import { openPostgres } from '../../src/store/postgres.js';

const APP = {
  '📦/🌐Post.yaml': 'title: string\nimage:\n  type: image\n  public: true\n',
  'index.html': '<p>images</p>\n',
  '📮newImageUrl.js': "import {Post} from '📦';\n({url: Post.image.newPutUrl('photo.png')});\n",
  '📮store.js': "import {Post} from '📦';\nimport {url} from 'form';\nnew Post().title('p').image(url);\n({ok: true});\n",
};

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function temporaryDir(prefix: string): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(f: () => Promise<T | undefined> | T | undefined, what: string, limitMs = 20_000): Promise<T> {
  const end = Date.now() + limitMs;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`not within ${limitMs / 1000} s: ${what}`);
    await sleep(25);
  }
}

/** An uncompressed PNG of noise: `width` × `height` × 3 bytes and a little more. */
function noisyPng(width: number, height: number): Promise<Buffer> {
  return sharp(randomBytes(width * height * 3), { raw: { width, height, channels: 3 } }).png({ compressionLevel: 0 }).toBuffer();
}

/** A PNG whose header declares 30000 × 30000 pixels, then `tail` bytes of its data. */
async function bombHead(): Promise<Buffer> {
  const png = await noisyPng(64, 64);
  const ihdr = Buffer.from(png.subarray(8, 33));
  ihdr.writeUInt32BE(30000, 8);
  ihdr.writeUInt32BE(30000, 12);
  ihdr.writeUInt32BE(crc32(ihdr.subarray(4, 21)), 21);
  return Buffer.concat([png.subarray(0, 8), ihdr, png.subarray(33)]);
}

/**
 * A PUT whose body the test writes piece by piece, chunked (no Content-Length). `answer` is the
 * response once it has ended (it may come before the body does); `sent` counts what was written.
 */
class SlowPut {
  readonly req: ClientRequest;
  readonly answer: Promise<Response>;
  answered: Response | undefined;
  sent = 0;
  constructor(port: number, path: string) {
    this.req = httpRequest({ host: '127.0.0.1', port, method: 'PUT', path, agent: false, headers: { Host: `localhost:${port}`, Origin: `http://localhost:${port}`, 'Content-Type': '' } });
    this.answer = new Promise((resolve, reject) => {
      this.req.on('response', (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const body = Buffer.concat(chunks);
          resolve((this.answered = { status: res.statusCode ?? 0, headers: res.headers, body, text: body.toString('utf8') }));
        });
      });
      // Writing on after the server answered and closed: expected; before it answered, a failure.
      this.req.on('error', (e) => {
        if (!this.answered) setTimeout(() => reject(e), 200);
      });
    });
    this.answer.catch(() => {});
    this.req.flushHeaders();
  }

  /** Writes `bytes` in pieces of `piece` bytes, `delayMs` apart; stops early once answered (false then). */
  async write(bytes: Buffer, piece: number, delayMs = 0): Promise<boolean> {
    for (let at = 0; at < bytes.length; at += piece) {
      if (this.answered || this.req.destroyed) return false;
      const part = bytes.subarray(at, at + piece);
      const more = this.req.write(part);
      this.sent += part.length;
      if (!more) await Promise.race([new Promise((r) => this.req.once('drain', r)), this.answer.catch(() => {}), new Promise((r) => this.req.once('close', r))]);
      if (delayMs) await sleep(delayMs);
    }
    return true;
  }

  end(): Promise<Response> {
    this.req.end();
    return this.answer;
  }
}

/** The upload address of a new image (its id too), asked of `port`. */
async function newUpload(port: number): Promise<{ url: string; id: string }> {
  const asked = await new TestVisitor(port).post('/newImageUrl', {}, { Accept: 'application/json' });
  assert.equal(asked.status, 200, asked.text);
  const url = JSON.parse(asked.text).url as string;
  return { url, id: /\/([A-Za-z0-9_-]{22})\./.exec(url)![1]! };
}

describe('uploads streamed into PostgreSQL, two instances', () => {
  let url: string;
  let a: Served;
  let b: Served;
  let db: pg.Client;
  before(async () => {
    url = await (await startPostgres()).createDatabase();
    const app = writeApp(APP, temporaryDir('laneway-stream-app-'));
    a = await serve(app, ['--workers', '1', '--data', temporaryDir('laneway-stream-a-')], { DATABASE_URL: url });
    b = await serve(app, ['--workers', '1', '--data', temporaryDir('laneway-stream-b-')], { DATABASE_URL: url });
    db = new pg.Client({ connectionString: url });
    await db.connect();
  });
  after(async () => {
    await db?.end();
    await a?.stop();
    await b?.stop();
  });

  /** The rows an upload has: its object row (`partial` or not) and its number of chunks. */
  async function rowsOf(id: string): Promise<{ object: 'none' | 'partial' | 'whole'; chunks: number }> {
    const o = await db.query(`SELECT "partial" FROM "lw__image_object" WHERE "key" = $1`, [`u/${id}`]);
    const c = await db.query(`SELECT count(*)::int AS n FROM "lw__image_chunk" WHERE "key" = $1`, [`u/${id}`]);
    return { object: o.rows.length === 0 ? 'none' : o.rows[0].partial === null ? 'whole' : 'partial', chunks: c.rows[0].n };
  }

  it('an upload in small slow pieces goes to the database as it arrives, is seen by nobody until whole, then is served by both', async (t) => {
    const { url: uploadUrl, id } = await newUpload(a.port);
    const png = await noisyPng(850, 650);
    assert.ok(png.length > 1.5 * 1024 * 1024);
    const put = new SlowPut(a.port, uploadUrl);
    const firstPart = png.subarray(0, 1024 * 1024);
    assert.equal(await put.write(firstPart, 8 * 1024, 1), true);

    // 1 MiB sent: its full chunks are in the database already, under a row that is still partial.
    const during = await until(async () => {
      const r = await rowsOf(id);
      return r.chunks >= 3 ? r : undefined;
    }, 'the first chunks of the upload in lw__image_chunk while it arrives');
    assert.equal(during.object, 'partial');
    assert.ok(during.chunks <= 4, `${during.chunks} chunks for 1 MiB`);
    // Nobody sees it yet: not the store of another process, not a write, not a reader.
    const engine = await openPostgres(url);
    try {
      assert.equal(await new DatabaseImages(engine).openUpload(id), undefined, 'no upload under the id until it is whole');
    } finally {
      await engine.close();
    }
    const early = await new TestVisitor(b.port).post('/store', { url: uploadUrl }, { Accept: 'application/json' });
    assert.equal(early.status, 422, early.text);
    assert.equal((await rawRequest(b.port, 'GET', `/__/images/${id}`)).status, 404);

    assert.equal(await put.write(png.subarray(firstPart.length), 8 * 1024, 1), true);
    const done = await put.end();
    assert.equal(done.status, 200, done.text);
    assert.deepEqual(await rowsOf(id), { object: 'whole', chunks: Math.ceil(png.length / CHUNK_BYTES) });
    const stored = await openPostgres(url);
    try {
      assert.deepEqual(await readUpload(new DatabaseImages(stored), id), png, 'the bytes sent, whole');
    } finally {
      await stored.close();
    }

    // Stored in a record through the other instance, processed, served by both alike.
    const saved = await new TestVisitor(b.port).post('/store', { url: uploadUrl }, { Accept: 'application/json' });
    assert.equal(saved.status, 200, saved.text);
    const fromB = await until(async () => {
      const r = await rawRequest(b.port, 'GET', `/__/images/${id}`);
      return r.status === 200 ? r : undefined;
    }, 'the image served');
    const fromA = await rawRequest(a.port, 'GET', `/__/images/${id}`);
    assert.equal(fromA.status, 200);
    assert.deepEqual(fromA.body, fromB.body);
    assert.equal(fromA.headers.etag, fromB.headers.etag);
    assert.match(String(fromA.headers.etag), /^"[0-9a-f]{32}"$/);
    assert.equal(fromA.headers['cache-control'], 'public, max-age=31536000, immutable');
    const meta = await sharp(fromA.body).metadata();
    assert.deepEqual([meta.width, meta.height], [850, 650]);
    assert.equal((await rawRequest(a.port, 'GET', `/__/images/${id}`, { 'If-None-Match': String(fromA.headers.etag) })).status, 304);
    const part = await rawRequest(b.port, 'GET', `/__/images/${id}`, { Range: 'bytes=100-299' });
    assert.equal(part.status, 206);
    assert.equal(part.headers['content-range'], `bytes 100-299/${fromA.body.length}`);
    assert.deepEqual(part.body, fromA.body.subarray(100, 300));
    assert.deepEqual(await rowsOf(id), { object: 'none', chunks: 0 }, 'the upload deleted once processed');
    t.diagnostic(`${png.length} bytes in ${Math.ceil(png.length / 8192)} pieces; ${during.chunks} chunks stored after 1 MiB`);
  });

  it('refuses, before the body ends: past 10 MB without Content-Length, a non-image, a decompression bomb; no row is left', async () => {
    // Past 10 MB: the answer comes although the body never ends.
    const big = await noisyPng(1900, 1900);
    assert.ok(big.length > 10 * 1024 * 1024);
    const tooLarge = await newUpload(a.port);
    const put = new SlowPut(a.port, tooLarge.url);
    await put.write(big, 64 * 1024);
    const answer = await put.answer;
    assert.equal(answer.status, 413, answer.text);
    assert.match(answer.text, /at most 10 MB/);
    assert.equal(answer.headers.connection, 'close');
    assert.deepEqual(await rowsOf(tooLarge.id), { object: 'none', chunks: 0 });

    // Not an image: told from the first bytes, with most of the body not sent yet.
    const text = await newUpload(a.port);
    const notImage = new SlowPut(a.port, text.url);
    await notImage.write(Buffer.alloc(64 * 1024, '<svg xmlns="http://www.w3.org/2000/svg">'), 16 * 1024);
    const refused = await until(() => notImage.answered, 'the 415 before the body ends', 10_000);
    assert.equal(refused.status, 415, refused.text);
    notImage.req.destroy();

    // Thirty thousand pixels square, by the header: refused before the rest arrives.
    const bomb = await newUpload(a.port);
    const bombPut = new SlowPut(a.port, bomb.url);
    await bombPut.write(await bombHead(), 4096);
    const tooMany = await until(() => bombPut.answered, 'the 413 before the body ends', 10_000);
    assert.equal(tooMany.status, 413, tooMany.text);
    assert.match(tooMany.text, /too many pixels/);
    bombPut.req.destroy();

    for (const u of [tooLarge, text, bomb]) assert.deepEqual(await rowsOf(u.id), { object: 'none', chunks: 0 }, u.id);
  });

  it('a client gone mid-upload leaves no row, and the address takes the upload again', async () => {
    const { url: uploadUrl, id } = await newUpload(a.port);
    const png = await noisyPng(600, 500);
    const put = new SlowPut(a.port, uploadUrl);
    await put.write(png.subarray(0, 700 * 1024), 16 * 1024, 1);
    await until(async () => ((await rowsOf(id)).chunks >= 2 ? true : undefined), 'chunks of the upload stored');
    put.req.destroy();
    await until(async () => {
      const r = await rowsOf(id);
      return r.object === 'none' && r.chunks === 0 ? true : undefined;
    }, 'the rows of the upload cut short deleted', 5_000);
    const again = await new TestVisitor(a.port).request('PUT', uploadUrl, png, { 'Content-Type': '' });
    assert.equal(again.status, 200, again.text);
    assert.deepEqual(await rowsOf(id), { object: 'whole', chunks: Math.ceil(png.length / CHUNK_BYTES) });
    assert.equal((await new TestVisitor(a.port).request('PUT', uploadUrl, png, { 'Content-Type': '' })).status, 409, 'then, once only');
  });
});

describe('uploads streamed into an images directory (SQLite)', () => {
  let s: Served;
  let uploads: string;
  before(async () => {
    const app = writeApp(APP, temporaryDir('laneway-stream-files-app-'));
    const data = temporaryDir('laneway-stream-files-data-');
    uploads = join(data, 'images', 'uploads');
    s = await serve(app, ['--workers', '1', '--data', data]);
  });
  after(() => s?.stop());

  const temporary = () => (existsSync(uploads) ? readdirSync(uploads).filter((n) => n.endsWith('.tmp')) : []);

  it('writes a temporary file as the upload arrives, named once whole; a client gone leaves nothing', async () => {
    const { url: uploadUrl, id } = await newUpload(s.port);
    const png = await noisyPng(700, 600);
    const put = new SlowPut(s.port, uploadUrl);
    await put.write(png.subarray(0, 800 * 1024), 16 * 1024, 1);
    const [temp] = await until(() => {
      const t = temporary();
      return t.length === 1 && statSync(join(uploads, t[0]!)).size >= 256 * 1024 ? t : undefined;
    }, 'a temporary file growing while the upload arrives');
    assert.equal(existsSync(join(uploads, id)), false, 'not under its id before it is whole');
    await put.write(png.subarray(800 * 1024), 16 * 1024);
    assert.equal((await put.end()).status, 200);
    assert.deepEqual(readFileSync(join(uploads, id)), png);
    assert.deepEqual(temporary(), [], `${temp} is gone`);

    const cut = await newUpload(s.port);
    const gone = new SlowPut(s.port, cut.url);
    await gone.write(png.subarray(0, 600 * 1024), 16 * 1024, 1);
    await until(() => (temporary().length === 1 ? true : undefined), 'the temporary file of the second upload');
    gone.req.destroy();
    await until(() => (temporary().length === 0 ? true : undefined), 'the temporary file removed', 5_000);
    assert.equal(existsSync(join(uploads, cut.id)), false);
    assert.equal((await new TestVisitor(s.port).request('PUT', cut.url, png, { 'Content-Type': '' })).status, 200, 'the address takes the upload again');
  });
});
