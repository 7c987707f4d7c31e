/**
 * Images across kills and restarts (docs/images.md "Processing", "Where the files are"), on both
 * engines, with the real server process (`bin/laneway serve`, test/support/served-process.ts;
 * needs `npm run build`):
 *
 * - a process killed (SIGKILL) while it processes an image leaves a lease behind; the process
 *   started next (or, with `--workers 2`, the other worker or the replacement) takes it back at
 *   once (its holder, on this host, no longer exists) and the image is served within seconds, not
 *   when the lease would have ended. The kill is timed with the worker's TEST ONLY hold
 *   (TEST_HOLD_ENV, src/images/worker.ts): while a file exists, it holds the image, lease taken;
 *   the test kills the process, then removes the file;
 * - what a kill leaves in the images directory is swept at the next start: upload files without
 *   a row, upload files of images done since, temporary files, and uploads never attached, once
 *   older than a day (their files' times and their rows' `created` are set into the past here);
 *   younger ones are kept.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import sharp from 'sharp';
import { writeApp } from '../helpers.js';
import { ENGINES } from '../support/engines.js';
import { serve, type Served } from '../support/served-process.js';
import { TestVisitor } from '../support/visitor.js';
import { TEST_HOLD_ENV } from '../../src/images/worker.js';

const APP = {
  '📦/🌐Post.yaml': 'title: string\nimage:\n  type: image\n  public: true\n',
  'index.html': '<p>images</p>\n',
  '📮newImageUrl.js': "import {Post} from '📦';\n({url: Post.image.newPutUrl('photo.jpg')});\n",
  '📮store.js': "import {Post} from '📦';\nimport {url} from 'form';\nnew Post().title('p').image(url);\n({ok: true});\n",
};
const DAY_MS = 24 * 3_600_000;

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function temporaryDir(prefix: string): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
}

/** `what`: said when the wait fails (a function: said as things are then). */
async function until<T>(f: () => Promise<T | undefined> | T | undefined, what: string | (() => string), limitMs = 20_000): Promise<T> {
  const end = Date.now() + limitMs;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`not within ${limitMs / 1000} s: ${typeof what === 'string' ? what : what()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** An upload: asks for an address, PUTs a JPEG there; answers the address and the image's id. */
async function upload(s: Served): Promise<{ url: string; id: string; v: TestVisitor }> {
  const v = new TestVisitor(s.port);
  const asked = await v.post('/newImageUrl', {}, { Accept: 'application/json' });
  assert.equal(asked.status, 200, asked.text);
  const url = JSON.parse(asked.text).url as string;
  const bytes = await sharp({ create: { width: 64, height: 48, channels: 3, background: { r: 10, g: 120, b: 200 } } }).jpeg().toBuffer();
  const put = await v.request('PUT', url, bytes, { 'Content-Type': '' });
  assert.equal(put.status, 200, put.text);
  return { url, id: /\/([A-Za-z0-9_-]{22})\./.exec(url)![1]!, v };
}

/** Runs one SQL statement on the app's database while no server has it open. */
async function sql(engine: string, data: string, url: string | undefined, text: string, params: unknown[]): Promise<void> {
  if (engine === 'postgres') {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query(text.replace(/\?/g, (_, i: number) => `$${text.slice(0, i).split('?').length}`), params);
    } finally {
      await client.end();
    }
  } else {
    const db = new Database(join(data, 'laneway.db'));
    try {
      db.prepare(text).run(...params);
    } finally {
      db.close();
    }
  }
}

for (const engine of ENGINES) {
  describe(`images across kills and restarts (${engine.name})`, () => {
    /** The app's files and data, and a server on them (`--workers 1`: one process on PostgreSQL too, unless told). */
    // `filesOnPostgres`: the images in a directory (LANEWAY_IMAGES_DIR) rather than in the database.
    const setup = async (filesOnPostgres = false) => {
      const dir = writeApp(APP, temporaryDir('laneway-images-app-'));
      const data = temporaryDir('laneway-images-data-');
      const url = (await engine.data()).databaseUrl;
      const hold = join(data, 'hold');
      const imagesDir: Record<string, string> = filesOnPostgres && url ? { LANEWAY_IMAGES_DIR: join(data, 'images') } : {};
      const start = (workers = 1) => serve(dir, ['--workers', String(workers), '--data', data], { ...(url ? { DATABASE_URL: url } : {}), ...imagesDir, NODE_ENV: 'test', [TEST_HOLD_ENV]: hold });
      return { data, url, hold, start };
    };

    /** Stores an upload in a record; answers once a worker holds it, lease taken (the pid of that worker). */
    const storeHeld = async (s: Served, hold: string) => {
      writeFileSync(hold, '');
      const { url, id, v } = await upload(s);
      const mark = s.lines.length;
      assert.equal((await v.post('/store', { url }, { Accept: 'application/json' })).status, 200);
      const held = await s.waitFor((l) => new RegExp(`^TEST ONLY: holding image ${id} \\(pid \\d+\\)$`).test(l.message), 'the image held', mark);
      return { id, pid: Number(/pid (\d+)/.exec(held.message)![1]) };
    };

    /** The image, answered 200 within 10 s: seconds, where a dead process's lease would have held it for its whole length. */
    const servedSoon = async (s: Served, id: string, holder: number) => {
      const served = await until(async () => {
        const r = await s.get(`/__/images/${id}`);
        return r.status === 200 ? r : undefined;
      }, `GET /__/images/${id} answered 200`, 10_000);
      assert.equal(served.headers['content-type'], 'image/jpeg');
      const meta = await sharp(served.body).metadata();
      assert.deepEqual([meta.width, meta.height], [64, 48]);
      assert.ok(s.lines.some((l) => new RegExp(`^images: took back the lease on ${id} from ${holder}@`).test(l.message)), s.text());
    };

    it('an image whose process was killed while processing it is served within seconds of the restart', async () => {
      const { hold, start } = await setup();
      const first = await start();
      // Killed while it holds the image, the process leaves its lease behind.
      const { id, pid } = await storeHeld(first, hold);
      assert.equal(pid, first.child.pid);
      process.kill(pid, 'SIGKILL');
      await first.exited;
      rmSync(hold);
      const second = await start();
      try {
        await servedSoon(second, id, pid);
      } finally {
        assert.equal(await second.stop(), 0);
      }
    });

    it('--workers 2: an image whose worker was killed while processing it is served within seconds (by the other worker or the replacement)', async () => {
      const { hold, start } = await setup();
      const s = await start(2);
      try {
        const { id, pid } = await storeHeld(s, hold);
        const mark = s.lines.length;
        process.kill(pid, 'SIGKILL');
        await s.waitFor((l) => l.code === 'LW_SERVE_WORKER_CRASHED' && l.pid === pid, 'the crash line', mark);
        rmSync(hold);
        await servedSoon(s, id, pid);
      } finally {
        assert.equal(await s.stop(), 0);
      }
    });

    it('the next start sweeps what killed uploads left: orphan and finished upload files, temporary files, unattached uploads; after a day only', async () => {
      // No hold file: images are processed at once. On PostgreSQL, in the directory LANEWAY_IMAGES_DIR names.
      const { data, url: databaseUrl, start } = await setup(true);
      const first = await start();
      const unattached = await upload(first);
      const attached = await upload(first);
      assert.equal((await attached.v.post('/store', { url: attached.url }, { Accept: 'application/json' })).status, 200);
      const ready = await until(async () => {
        const r = await first.get(`/__/images/${attached.id}`);
        return r.status === 200 ? r : undefined;
      }, 'the attached image processed');
      assert.equal(await first.stop(), 0);

      // What a kill leaves: files of uploads that got no row, the upload file of an image that
      // was done since, temporary files of writes cut short (uploads and processed images).
      const images = join(data, 'images');
      const uploads = join(images, 'uploads');
      const resultDir = readdirSync(images).find((n) => /^[0-9a-f]{2}$/.test(n))!;
      assert.ok(resultDir, 'the processed image has its directory');
      const old = (Date.now() - 2 * DAY_MS) / 1000;
      const aged = {
        orphan: join(uploads, 'OrphanOrphanOrphan0001'),
        finished: join(uploads, attached.id),
        uploadTemp: join(uploads, `.${'a'.repeat(24)}.tmp`),
        resultTemp: join(images, resultDir, `.${'b'.repeat(24)}.tmp`),
        unattached: join(uploads, unattached.id),
      };
      const young = {
        orphan: join(uploads, 'OrphanOrphanOrphan0002'),
        uploadTemp: join(uploads, `.${'c'.repeat(24)}.tmp`),
      };
      mkdirSync(uploads, { recursive: true });
      for (const f of [...Object.values(aged), ...Object.values(young)]) if (!existsSync(f)) writeFileSync(f, 'left by a kill');
      for (const f of Object.values(aged)) utimesSync(f, old, old);
      // The unattached upload's row was made two days ago.
      await sql(engine.name, data, databaseUrl, `UPDATE "lw__image" SET "created" = ? WHERE "id" = ?`, [Date.now() - 2 * DAY_MS, unattached.id]);

      const second = await start();
      try {
        await until(() => (Object.values(aged).every((f) => !existsSync(f)) ? true : undefined), () => `the sweep at start to remove ${Object.values(aged).filter(existsSync).join(', ')}`);
        for (const f of Object.values(young)) assert.ok(existsSync(f), `${f} is younger than a day: kept`);
        // The image that was done is still served; the unattached upload's row is gone.
        const again = await second.get(`/__/images/${attached.id}`);
        assert.equal(again.status, 200);
        assert.deepEqual(again.body, ready.body);
        const stored = await new TestVisitor(second.port).post('/store', { url: unattached.url }, { Accept: 'application/json' });
        assert.equal(stored.status, 422, `an upload swept away cannot be stored: ${stored.text}`);
      } finally {
        assert.equal(await second.stop(), 0);
      }
    });
  });
}
