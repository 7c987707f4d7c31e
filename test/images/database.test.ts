/**
 * Images kept in PostgreSQL (docs/images.md "Where the images are"; src/images/database.ts):
 *
 * - the store itself on a real server: bytes in 256 KiB chunks, read back whole and by ranges
 *   across chunk boundaries, an id taken once, a processed image stored once, removal;
 * - black-box, two `bin/laneway serve` processes on one database, each with a data directory of
 *   its own (no shared volume): an image uploaded through one, stored through the other, is
 *   processed by either and served by both, with the same bytes and ETag, 304 and ranges; neither
 *   writes an image file;
 * - `laneway migrate --images` copies the image files of before into the database, after which
 *   they are served with the directory gone; with a nested site, its images too (from its own
 *   directory into its own schema), one line per site.
 *
 * Needs `npm run build` (bin/laneway). The timings printed (test diagnostics) are for
 * docs/deploy.md; nothing here depends on them.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import sharp from 'sharp';
import { rawRequest, writeApp } from '../helpers.js';
import { startPostgres } from '../support/postgres.js';
import { BIN, serve, type Served } from '../support/served-process.js';
import { TestVisitor } from '../support/visitor.js';
import { openPostgres } from '../../src/store/postgres.js';
import { CHUNK_BYTES, DatabaseImages, ensureImageStoreTables } from '../../src/images/index.js';
import { readUpload } from '../support/image-store.js';

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

async function collect(parts: AsyncIterable<Buffer>): Promise<Buffer> {
  const all: Buffer[] = [];
  for await (const p of parts) all.push(p);
  return Buffer.concat(all);
}

async function until<T>(f: () => Promise<T | undefined>, what: string, limitMs = 30_000): Promise<T> {
  const end = Date.now() + limitMs;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`not within ${limitMs / 1000} s: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A PNG of noise: it stays large once processed (hundreds of KB: more than one chunk). */
async function noisyPng(width: number, height: number): Promise<Buffer> {
  return sharp(randomBytes(width * height * 3), { raw: { width, height, channels: 3 } }).png({ compressionLevel: 0 }).toBuffer();
}

/** Files of an images directory (uploads and processed), none when it does not exist. */
function imageFilesIn(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => e.name);
}

describe('DatabaseImages on PostgreSQL', () => {
  it('keeps bytes in 256 KiB chunks, reads them whole and by ranges, takes an id once', async () => {
    const url = await (await startPostgres()).createDatabase();
    const engine = await openPostgres(url);
    try {
      await ensureImageStoreTables(engine);
      const store = new DatabaseImages(engine);
      const bytes = randomBytes(2 * CHUNK_BYTES + 1234);
      await store.saveUpload('upload-one-0001', bytes);
      const chunks = await engine.reader.all(`SELECT "seq", length("data") FROM "lw__image_chunk" WHERE "key" = $1 ORDER BY "seq"`, ['u/upload-one-0001']);
      assert.deepEqual(chunks, [[0, CHUNK_BYTES], [1, CHUNK_BYTES], [2, 1234]]);
      assert.deepEqual(await readUpload(store, 'upload-one-0001'), bytes);
      await assert.rejects(store.saveUpload('upload-one-0001', Buffer.from('other')), (e: NodeJS.ErrnoException) => e.code === 'EEXIST');
      assert.deepEqual(await readUpload(store, 'upload-one-0001'), bytes, 'the first upload stays');
      assert.deepEqual((await store.listUploads()).map((u) => u.id), ['upload-one-0001']);

      const name = await store.saveResult(bytes, 'png');
      assert.match(name, /^[0-9a-f]{64}\.png$/);
      assert.equal(await store.saveResult(bytes, 'png'), name, 'the same image twice is one');
      const image = (await store.openResult(name))!;
      assert.equal(image.size, bytes.length);
      assert.deepEqual(await collect(image.read()), bytes);
      for (const [start, end] of [[0, 0], [CHUNK_BYTES - 10, CHUNK_BYTES + 10], [5, 2 * CHUNK_BYTES + 5], [bytes.length - 1, bytes.length - 1], [CHUNK_BYTES, 2 * CHUNK_BYTES - 1]] as const) {
        assert.deepEqual(await collect(image.read(start, end)), bytes.subarray(start, end + 1), `${start}-${end}`);
      }
      assert.equal(await store.openResult('0'.repeat(64) + '.png'), undefined);
      assert.equal(await store.openResult('../../etc/passwd'), undefined);

      await store.removeUpload('upload-one-0001');
      assert.equal(await readUpload(store, 'upload-one-0001'), undefined);
      assert.deepEqual(await engine.reader.all(`SELECT count(*) FROM "lw__image_chunk" WHERE "key" LIKE 'u/%'`, []), [[0]]);
    } finally {
      await engine.close();
    }
  });
});

describe('lw__image_object of before', () => {
  it('gets its `partial` column at start; what it held is read as before', async () => {
    const url = await (await startPostgres()).createDatabase();
    const engine = await openPostgres(url);
    try {
      const w = await engine.begin();
      await w.run(`CREATE TABLE "lw__image_object" ("key" TEXT PRIMARY KEY, "size" BIGINT NOT NULL, "chunks" INTEGER NOT NULL, "created" BIGINT NOT NULL)`, []);
      await w.run(`CREATE TABLE "lw__image_chunk" ("key" TEXT NOT NULL, "seq" INTEGER NOT NULL, "data" BYTEA NOT NULL, PRIMARY KEY ("key", "seq"))`, []);
      await w.run(`INSERT INTO "lw__image_object" VALUES ('u/upload-before-1', 3, 1, 1)`, []);
      await w.run(`INSERT INTO "lw__image_chunk" VALUES ('u/upload-before-1', 0, '\\x616263'::bytea)`, []);
      await w.commit();
      await ensureImageStoreTables(engine);
      const columns = await engine.reader.all(`SELECT column_name FROM information_schema.columns WHERE table_name = 'lw__image_object' ORDER BY ordinal_position`, []);
      assert.deepEqual(columns.flat(), ['key', 'size', 'chunks', 'created', 'partial']);
      assert.deepEqual(await readUpload(new DatabaseImages(engine), 'upload-before-1'), Buffer.from('abc'));
    } finally {
      await engine.close();
    }
  });
});

describe('two instances on one PostgreSQL, no shared volume', () => {
  let a: Served | undefined;
  let b: Served | undefined;
  after(async () => {
    await a?.stop();
    await b?.stop();
  });

  it('an image uploaded through one is processed by either and served by both', async (t) => {
    const url = await (await startPostgres()).createDatabase();
    const app = writeApp(APP, temporaryDir('laneway-images-two-app-'));
    const dataA = temporaryDir('laneway-images-a-');
    const dataB = temporaryDir('laneway-images-b-');
    // Started one after the other: the first creates the tables and the app's secret.
    a = await serve(app, ['--workers', '1', '--data', dataA], { DATABASE_URL: url });
    b = await serve(app, ['--workers', '1', '--data', dataB], { DATABASE_URL: url });

    const va = new TestVisitor(a.port);
    const asked = await va.post('/newImageUrl', {}, { Accept: 'application/json' });
    assert.equal(asked.status, 200, asked.text);
    const uploadUrl = JSON.parse(asked.text).url as string;
    const id = /\/([A-Za-z0-9_-]{22})\./.exec(uploadUrl)![1]!;
    const png = await noisyPng(1000, 900);
    let t0 = performance.now();
    const put = await va.request('PUT', uploadUrl, png, { 'Content-Type': '' });
    const putMs = performance.now() - t0;
    assert.equal(put.status, 200, put.text);
    // Stored in a record through the other instance.
    const stored = await new TestVisitor(b.port).post('/store', { url: uploadUrl }, { Accept: 'application/json' });
    assert.equal(stored.status, 200, stored.text);
    t0 = performance.now();
    const fromB = await until(async () => {
      const r = await rawRequest(b!.port, 'GET', `/__/images/${id}`);
      return r.status === 200 ? r : undefined;
    }, 'the image served by the instance that stored it');
    const readyMs = performance.now() - t0;
    t0 = performance.now();
    const fromA = await rawRequest(a.port, 'GET', `/__/images/${id}`);
    const getMs = performance.now() - t0;
    assert.equal(fromA.status, 200, fromA.text);
    assert.deepEqual(fromA.body, fromB.body, 'the same bytes from both');
    assert.equal(fromA.headers.etag, fromB.headers.etag);
    assert.equal(fromA.headers['cache-control'], 'public, max-age=31536000, immutable');
    // Noise makes a PNG over 500 KB: it becomes a JPEG, still over a chunk (docs/images.md "Processing").
    assert.equal(fromA.headers['content-type'], 'image/jpeg');
    assert.ok(fromA.body.length > CHUNK_BYTES, `the processed image spans chunks (${fromA.body.length} bytes)`);
    const meta = await sharp(fromA.body).metadata();
    assert.deepEqual([meta.width, meta.height], [1000, 900]);

    // The same validators and ranges as any image.
    const etag = String(fromA.headers.etag);
    assert.equal((await rawRequest(b.port, 'GET', `/__/images/${id}`, { 'If-None-Match': etag })).status, 304);
    const start = CHUNK_BYTES - 100;
    const part = await rawRequest(b.port, 'GET', `/__/images/${id}`, { Range: `bytes=${start}-${start + 199}` });
    assert.equal(part.status, 206);
    assert.equal(part.headers['content-range'], `bytes ${start}-${start + 199}/${fromA.body.length}`);
    assert.deepEqual(part.body, fromA.body.subarray(start, start + 200));
    const head = await rawRequest(a.port, 'HEAD', `/__/images/${id}`);
    assert.equal(head.headers['content-length'], String(fromA.body.length));

    // Processed by one of them, and nobody wrote a file.
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query(`SELECT "state" FROM "lw__image" WHERE "id" = $1`, [id]);
      assert.equal(rows[0].state, 'ready');
      const { rows: left } = await client.query(`SELECT count(*)::int AS n FROM "lw__image_object" WHERE "key" LIKE 'u/%'`);
      assert.equal(left[0].n, 0, 'the upload is deleted once processed');
    } finally {
      await client.end();
    }
    assert.deepEqual([...imageFilesIn(join(dataA, 'images')), ...imageFilesIn(join(dataB, 'images'))], []);
    t.diagnostic(`PUT of ${png.length} bytes ${putMs.toFixed(0)} ms; stored through the other instance, served ${readyMs.toFixed(0)} ms later; GET of ${fromA.body.length} bytes from the first ${getMs.toFixed(0)} ms`);
  });
});

describe('laneway migrate --images', () => {
  it('copies the image files into the database; they are served with the directory gone', async () => {
    const url = await (await startPostgres()).createDatabase();
    const app = writeApp(APP, temporaryDir('laneway-images-import-app-'));
    const data = temporaryDir('laneway-images-import-data-');
    const imagesDir = join(data, 'images');
    // Before: the images in a directory (LANEWAY_IMAGES_DIR).
    const before = await serve(app, ['--workers', '1', '--data', data], { DATABASE_URL: url, LANEWAY_IMAGES_DIR: imagesDir });
    let id: string;
    let body: Buffer;
    try {
      const v = new TestVisitor(before.port);
      const uploadUrl = JSON.parse((await v.post('/newImageUrl', {}, { Accept: 'application/json' })).text).url as string;
      id = /\/([A-Za-z0-9_-]{22})\./.exec(uploadUrl)![1]!;
      assert.equal((await v.request('PUT', uploadUrl, await noisyPng(40, 30), { 'Content-Type': '' })).status, 200);
      assert.equal((await v.post('/store', { url: uploadUrl }, { Accept: 'application/json' })).status, 200);
      body = (await until(async () => {
        const r = await before.get(`/__/images/${id}`);
        return r.status === 200 ? r : undefined;
      }, 'the image processed into the directory')).body;
    } finally {
      await before.stop();
    }
    assert.equal(imageFilesIn(imagesDir).length, 1, 'one processed file');

    const run = (args: string[]) => spawnSync(process.execPath, [BIN, 'migrate', app, '--data', data, '--database', url, ...args], { encoding: 'utf8', env: { ...process.env, DATABASE_URL: '', LANEWAY_IMAGES_DIR: '', NO_COLOR: '1' } });
    const first = run(['--images']);
    assert.equal(first.status, 0, first.stderr);
    assert.match(first.stdout, /images: 1 copied from .*images into the database, 0 there already/);
    const again = run(['--images']);
    assert.match(again.stdout, /images: 0 copied from .* 1 there already/, 'safe to run again');

    rmSync(imagesDir, { recursive: true, force: true });
    const after = await serve(app, ['--workers', '1', '--data', data], { DATABASE_URL: url });
    try {
      const served = await after.get(`/__/images/${id}`);
      assert.equal(served.status, 200, served.text);
      assert.deepEqual(served.body, body);
    } finally {
      await after.stop();
    }

    const sqlite = spawnSync(process.execPath, [BIN, 'migrate', app, '--data', temporaryDir('laneway-images-sqlite-'), '--images'], { encoding: 'utf8', env: { ...process.env, DATABASE_URL: '', NO_COLOR: '1' } });
    assert.equal(sqlite.status, 1);
    assert.match(sqlite.stderr, /--images copies images into a PostgreSQL database/);
  });

  it('copies the images of a nested site too, from its own directory into its own schema, one line per site', async () => {
    const url = await (await startPostgres()).createDatabase();
    const base = temporaryDir('laneway-images-nested-');
    writeApp(APP, join(base, 'shop'));
    const app = writeApp({ ...APP, '🔌shop.yaml': 'source: ../shop\nnamespace: shop-data\n' }, join(base, 'site'));
    const data = temporaryDir('laneway-images-nested-data-');
    const imagesDir = join(data, 'images');
    const before = await serve(app, ['--workers', '1', '--data', data], { DATABASE_URL: url, LANEWAY_IMAGES_DIR: imagesDir });
    const ids: Record<string, string> = {};
    const bodies: Record<string, Buffer> = {};
    try {
      const v = new TestVisitor(before.port);
      // Two images in the site, one in the nested site.
      for (const [name, prefix] of [['site1', ''], ['site2', ''], ['shop', '/shop']] as const) {
        const asked = await v.post(`${prefix}/newImageUrl`, {}, { Accept: 'application/json' });
        assert.equal(asked.status, 200, asked.text);
        const uploadUrl = JSON.parse(asked.text).url as string;
        const target = uploadUrl.startsWith(`${prefix}/`) ? uploadUrl : prefix + uploadUrl;
        ids[name] = /\/([A-Za-z0-9_-]{22})\./.exec(uploadUrl)![1]!;
        assert.equal((await v.request('PUT', target, await noisyPng(40, 30), { 'Content-Type': '' })).status, 200);
        assert.equal((await v.post(`${prefix}/store`, { url: uploadUrl }, { Accept: 'application/json' })).status, 200);
        bodies[name] = (await until(async () => {
          const r = await before.get(`${prefix}/__/images/${ids[name]}`);
          return r.status === 200 ? r : undefined;
        }, `the image ${name} processed into the directory`)).body;
      }
    } finally {
      await before.stop();
    }
    assert.equal(imageFilesIn(join(imagesDir, 'shop-data')).length, 1, 'the nested site has a directory of its own');

    const run = () => spawnSync(process.execPath, [BIN, 'migrate', app, '--data', data, '--database', url, '--images'], { encoding: 'utf8', env: { ...process.env, DATABASE_URL: '', LANEWAY_IMAGES_DIR: imagesDir, NO_COLOR: '1' } });
    const first = run();
    assert.equal(first.status, 0, first.stderr);
    const lines = first.stdout.split('\n').filter((l) => l.startsWith('images'));
    assert.equal(lines.length, 2, first.stdout);
    assert.match(lines[0]!, /^images: 2 copied from .*images into the database, 0 there already$/);
    assert.match(lines[1]!, /^images of \/shop \(namespace shop-data\): 1 copied from .*images\/shop-data into the database, 0 there already$/);
    assert.match(run().stdout, /images of \/shop \(namespace shop-data\): 0 copied from .* 1 there already/, 'safe to run again');
    // In the nested site's own schema.
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query(`SELECT count(*)::int AS n FROM "lw_shop_data"."lw__image_object" WHERE "key" LIKE 'r/%'`);
      assert.equal(rows[0].n, 1);
    } finally {
      await client.end();
    }

    rmSync(imagesDir, { recursive: true, force: true });
    const after = await serve(app, ['--workers', '1', '--data', data], { DATABASE_URL: url });
    try {
      for (const [name, prefix] of [['site1', ''], ['site2', ''], ['shop', '/shop']] as const) {
        const served = await after.get(`${prefix}/__/images/${ids[name]}`);
        assert.equal(served.status, 200, `${name}: ${served.text}`);
        assert.deepEqual(served.body, bodies[name]);
      }
    } finally {
      await after.stop();
    }
  });
});
