/**
 * The limits of sign-in starts and of uploads (docs/security.md "Limits per visitor"), black-box
 * on both engines, behind a trusted proxy so that each test is a visitor of its own
 * (`X-Forwarded-For`):
 *
 * - `sign-ins: 3/minute`: the 4th `POST /__/auth/provider/<name>` answers 429 with Retry-After and
 *   starts nothing (no sign-in attempt stored, the visitor is not sent to the provider);
 * - `uploads: 2/hour`: the 3rd upload address a script makes (`newPutUrl`, in a POST script or a
 *   GET script) answers 429, and what its request wrote is rolled back; the two addresses given
 *   take their PUT (the PUT does not count again); a `⏱` stream's body that makes the 3rd answers
 *   429 and writes nothing, and a polled call that makes it ends the stream with `exception`;
 * - `upload-mb: 1/hour`: a PUT past a MiB of images answers 429 and keeps nothing (no row, no file).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import sharp from 'sharp';
import { rawRequest, serve, type Served } from '../helpers.js';
import { ENGINES } from '../support/engines.js';
import { providerEnv, startOidcProvider, type TestOidcProvider } from '../support/oidc.js';

const APP = {
  '🎛.yaml': 'name: Limits\nlimits:\n  sign-ins: 3/minute\n  uploads: 2/hour\n  upload-mb: 1/hour\nevents:\n  poll-ms: 10\n',
  '👤.yaml': 'providers: [corp]\nauth: optional\n\ndefault:\n  👤.User.name: read\n  📦: all\n',
  '📦/🌐Post.yaml': 'title: string\nimage:\n  type: image\n  public: true\n',
  '📦/🌐Ask.yaml': 'title: string\n',
  'index.html': '<!doctype html><html><head><title>Limits</title></head><body>limits</body></html>\n',
  // A POST script that writes a record and makes an upload address: over `uploads`, neither.
  '📮newImageUrl.js': "import {Post, Ask} from '📦';\nnew Ask().title('asked');\n({url: Post.image.newPutUrl('photo.png')});\n",
  'urls/GET.js': "import {Post} from '📦';\n({url: Post.image.newPutUrl('photo.png')});\n",
  // ⏱ streams: an address made by the body (in its transaction), and one by each polled call.
  '⏱urlFeed.js': "import {Post, Ask} from '📦';\nnew Ask().title('streamed');\nconst url = Post.image.newPutUrl('photo.png');\n(lastEventId) => [{url, $event: {last: true}}]\n",
  '⏱urlPoll.js': "import {Post} from '📦';\n(lastEventId) => [{url: Post.image.newPutUrl('photo.png')}]\n",
};

/** Rows of a query, read straight from the database (SQLite file or PostgreSQL). */
async function count(dir: string, databaseUrl: string | undefined, sql: string): Promise<number> {
  if (databaseUrl) {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      return Number((await client.query(sql)).rows[0].n);
    } finally {
      await client.end();
    }
  }
  const db = new Database(join(dir, '.laneway', 'laneway.db'), { readonly: true });
  try {
    return Number((db.prepare(sql).get() as { n: number }).n);
  } finally {
    db.close();
  }
}

/** Files under a directory, none when it does not exist. */
function filesIn(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => e.name);
}

/** A PNG of noise of about `width × height × 3` bytes (it does not compress). */
function noisyPng(width: number, height: number): Promise<Buffer> {
  return sharp(randomBytes(width * height * 3), { raw: { width, height, channels: 3 } }).png({ compressionLevel: 0 }).toBuffer();
}

function assertRetryAfter(value: string | string[] | undefined, most: number): void {
  const n = Number(value);
  assert.ok(Number.isInteger(n) && n >= 1 && n <= most, `Retry-After ${String(value)}`);
}

for (const engine of ENGINES) {
  describe(`limits of sign-ins and uploads (${engine.name})`, () => {
    let s: Served;
    let op: TestOidcProvider;
    let databaseUrl: string | undefined;
    const saved = { ...process.env };
    /** Same-origin headers of a visitor at `address` (through the trusted proxy). */
    const from = (address: string, extra: Record<string, string> = {}) => ({ Host: `localhost:${s.port}`, Origin: `http://localhost:${s.port}`, 'X-Forwarded-For': address, ...extra });

    before(async () => {
      op = await startOidcProvider();
      Object.assign(process.env, providerEnv(op, 'corp'));
      const data = await engine.data();
      databaseUrl = data.databaseUrl;
      s = await serve(APP, { data: { ...data, log: { info: () => {}, error: () => {} } }, trustProxy: 'loopback' });
    });
    after(async () => {
      await s?.close();
      await op?.stop();
      for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
      Object.assign(process.env, saved);
    });

    it('sign-ins: 3/minute: the 4th start answers 429 with Retry-After and starts nothing', async () => {
      const starts = [];
      for (let i = 0; i < 4; i++) starts.push(await rawRequest(s.port, 'POST', '/__/auth/provider/corp', from('203.0.113.10')));
      assert.deepEqual(starts.map((r) => r.status), [303, 303, 303, 429], starts.map((r) => r.text).join('\n'));
      for (const r of starts.slice(0, 3)) assert.ok(String(r.headers.location).startsWith(op.issuer), String(r.headers.location));
      const refused = starts[3]!;
      assertRetryAfter(refused.headers['retry-after'], 60);
      assert.equal(refused.headers.location, undefined);
      assert.match(refused.text, /Too many sign-ins were started from here; try again in \d+ seconds?\./);
      assert.equal(await count(s.dir, databaseUrl, 'SELECT count(*) AS n FROM "lw__auth_attempt"'), 3);
      // Another visitor has a count of its own.
      assert.equal((await rawRequest(s.port, 'POST', '/__/auth/provider/corp', from('203.0.113.11'))).status, 303);
      assert.equal(await count(s.dir, databaseUrl, 'SELECT count(*) AS n FROM "lw__auth_attempt"'), 4);
    });

    it('uploads: 2/hour: the 3rd upload address answers 429 and writes nothing; the two given take their PUT', async () => {
      const json = from('203.0.113.20', { Accept: 'application/json', 'Content-Type': 'application/x-www-form-urlencoded' });
      const asked = [];
      for (let i = 0; i < 3; i++) asked.push(await rawRequest(s.port, 'POST', '/newImageUrl', json, ''));
      assert.deepEqual(asked.map((r) => r.status), [200, 200, 429], asked.map((r) => r.text).join('\n'));
      assertRetryAfter(asked[2]!.headers['retry-after'], 3600);
      assert.match(JSON.parse(asked[2]!.text).error, /^Too many image uploads were started from here/);
      assert.doesNotMatch(asked[2]!.text, /__\/images\/upload/);
      assert.equal(await count(s.dir, databaseUrl, `SELECT count(*) AS n FROM "lw_Ask"`), 2, 'the refused request wrote nothing');
      // The PUTs of the two addresses given are not counted again.
      const png = await noisyPng(8, 8);
      for (const r of asked.slice(0, 2)) {
        const put = await rawRequest(s.port, 'PUT', JSON.parse(r.text).url as string, from('203.0.113.20', { 'Content-Type': '' }), png);
        assert.equal(put.status, 200, put.text);
      }
      assert.equal(await count(s.dir, databaseUrl, 'SELECT count(*) AS n FROM "lw__image"'), 2);
      // A GET script counts the same way.
      const got = [];
      for (let i = 0; i < 3; i++) got.push(await rawRequest(s.port, 'GET', '/urls', from('203.0.113.21', { Accept: 'application/json' })));
      assert.deepEqual(got.map((r) => r.status), [200, 200, 429]);
      assert.match(JSON.parse(got[0]!.text).url, /^\/__\/images\/upload\/Post\/image\//);
    });

    it('uploads: 2/hour: upload addresses of ⏱ streams count too, the body\'s and each polled call\'s', async () => {
      const sse = (address: string) => from(address, { Accept: 'text/event-stream' });
      const asks = await count(s.dir, databaseUrl, `SELECT count(*) AS n FROM "lw_Ask"`);
      const feeds = [];
      for (let i = 0; i < 3; i++) feeds.push(await rawRequest(s.port, 'GET', '/urlFeed', sse('203.0.113.22')));
      assert.deepEqual(feeds.map((r) => r.status), [200, 200, 429], feeds.map((r) => r.text).join('\n'));
      assert.match(feeds[0]!.text, /^data: \{"url":"\/__\/images\/upload\/Post\/image\//m);
      assertRetryAfter(feeds[2]!.headers['retry-after'], 3600);
      assert.doesNotMatch(feeds[2]!.text, /__\/images\/upload/);
      assert.equal(await count(s.dir, databaseUrl, `SELECT count(*) AS n FROM "lw_Ask"`), asks + 2, 'the refused body wrote nothing');
      // A polled call that makes an address past the limit ends the stream, its events unsent.
      const polled = await rawRequest(s.port, 'GET', '/urlPoll', sse('203.0.113.23'));
      assert.equal(polled.status, 200);
      assert.equal(polled.text.match(/^data: \{"url":/gm)?.length, 2, polled.text);
      assert.match(polled.text, /event: exception\ndata: \{"error":"Too many image uploads were started from here; try again in \d+ seconds?\."\}\n\n$/);
    });

    it('upload-mb: 1/hour: a PUT past a MiB answers 429 and keeps nothing', async () => {
      const json = from('203.0.113.30', { Accept: 'application/json', 'Content-Type': 'application/x-www-form-urlencoded' });
      const urls = [];
      for (let i = 0; i < 2; i++) urls.push(JSON.parse((await rawRequest(s.port, 'POST', '/newImageUrl', json, '')).text).url as string);
      const png = await noisyPng(400, 400); // about 480 KB
      assert.ok(png.length > 400_000 && png.length < 600_000, `${png.length} bytes`);
      const images = await count(s.dir, databaseUrl, 'SELECT count(*) AS n FROM "lw__image"');
      const first = await rawRequest(s.port, 'PUT', urls[0]!, from('203.0.113.30', { 'Content-Type': '' }), png);
      assert.equal(first.status, 200, first.text);
      const second = await rawRequest(s.port, 'PUT', urls[1]!, from('203.0.113.30', { 'Content-Type': '' }), await noisyPng(450, 450)); // about 610 KB: past 1 MiB in all
      assert.equal(second.status, 429, second.text);
      assertRetryAfter(second.headers['retry-after'], 3600);
      assert.equal(await count(s.dir, databaseUrl, 'SELECT count(*) AS n FROM "lw__image"'), images + 1);
      const id = /\/([A-Za-z0-9_-]{22})\./.exec(urls[1]!)![1]!;
      if (databaseUrl) assert.equal(await count(s.dir, databaseUrl, `SELECT count(*) AS n FROM "lw__image_object" WHERE "key" = 'u/${id}'`), 0);
      else assert.ok(!filesIn(join(s.dir, '.laneway', 'images')).includes(id), 'no file of the refused upload');
    });
  });
}
