/**
 * receiveUpload (src/images/receive.ts) on a real PostgreSQL, with the engine watched: what the
 * memory claim of docs/images.md "Where the images are" rests on. A 10 MB upload pushed in
 * 1000-byte pieces reaches the database one chunk (≤ 256 KiB) per statement, each chunk in a
 * transaction of its own, never two transactions open at once, and the object row made whole
 * last; refused uploads pull no more of the body than the check needed, and leave no row.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';
import sharp from 'sharp';
import { readUpload } from '../support/image-store.js';
import { startPostgres } from '../support/postgres.js';
import { CHUNK_BYTES, DatabaseImages, ensureImageStoreTables, receiveUpload, UPLOAD_MAX_BYTES } from '../../src/images/index.js';
import { openPostgres } from '../../src/store/postgres.js';
import type { Engine, SqlValue, Writer } from '../../src/store/index.js';

/** What the watched engine saw. */
interface Seen {
  transactions: number;
  open: number;
  mostOpen: number;
  /** The largest parameter of any statement, in characters (a chunk is `\x` and two hex digits a byte). */
  largestParam: number;
  /** The most chunk inserts one transaction made. */
  mostChunksInOne: number;
  chunkInserts: number;
  statements: string[];
}

/** `engine`, with every write transaction and its statements recorded. */
function watch(engine: Engine): { engine: Engine; seen: Seen } {
  const seen: Seen = { transactions: 0, open: 0, mostOpen: 0, largestParam: 0, mostChunksInOne: 0, chunkInserts: 0, statements: [] };
  const note = (sql: string, params: readonly SqlValue[], chunks: { n: number }) => {
    seen.statements.push(sql.split(' ').slice(0, 3).join(' '));
    for (const p of params) if (typeof p === 'string') seen.largestParam = Math.max(seen.largestParam, p.length);
    if (sql.startsWith('INSERT INTO "lw__image_chunk"')) {
      seen.chunkInserts++;
      seen.mostChunksInOne = Math.max(seen.mostChunksInOne, ++chunks.n);
    }
  };
  const watched: Engine = {
    dialect: engine.dialect,
    reader: engine.reader,
    async begin(options) {
      const w = await engine.begin(options);
      seen.transactions++;
      seen.mostOpen = Math.max(seen.mostOpen, ++seen.open);
      const chunks = { n: 0 };
      const end = () => void seen.open--;
      const writer: Writer = {
        all: (sql, params) => (note(sql, params, chunks), w.all(sql, params)),
        run: (sql, params) => (note(sql, params, chunks), w.run(sql, params)),
        commit: async () => {
          end();
          await w.commit();
        },
        rollback: async () => {
          end();
          await w.rollback();
        },
      };
      return writer;
    },
    withSchemaLock: (fn) => engine.withSchemaLock(fn),
    withSchemaSession: (fn) => engine.withSchemaSession(fn),
    close: () => engine.close(),
  };
  return { engine: watched, seen };
}

/** `bytes` in pieces of `size` bytes, counting how many were pulled. */
function pieces(bytes: Buffer, size: number, pulled = { n: 0 }): AsyncIterable<Buffer> {
  return (async function* () {
    for (let at = 0; at < bytes.length; at += size) {
      pulled.n++;
      yield bytes.subarray(at, at + size);
    }
  })();
}

function noisyPng(width: number, height: number): Promise<Buffer> {
  return sharp(randomBytes(width * height * 3), { raw: { width, height, channels: 3 } }).png({ compressionLevel: 0 }).toBuffer();
}

const LIMITS = { maxBytes: UPLOAD_MAX_BYTES, maxPixels: 50_000_000 };

describe('receiveUpload into PostgreSQL', () => {
  it('hands the database one chunk at a time, each in a transaction of its own, for a 10 MB upload in 1000-byte pieces', async () => {
    const engine = await openPostgres(await (await startPostgres()).createDatabase());
    try {
      await ensureImageStoreTables(engine);
      const { engine: watched, seen } = watch(engine);
      const png = await noisyPng(1800, 1900);
      assert.ok(png.length > 10_000_000 && png.length <= UPLOAD_MAX_BYTES, String(png.length));
      const received = await receiveUpload(new DatabaseImages(watched), 'upload-memory-01', pieces(png, 1000), LIMITS);
      assert.deepEqual(received, { stored: true, size: png.length, width: 1800, height: 1900 });

      const chunks = Math.ceil(png.length / CHUNK_BYTES);
      assert.equal(seen.chunkInserts, chunks);
      assert.ok(seen.largestParam <= 2 + 2 * CHUNK_BYTES, `the largest statement parameter is ${seen.largestParam} characters: one chunk at most`);
      assert.equal(seen.mostChunksInOne, 1, 'one chunk per transaction');
      assert.equal(seen.mostOpen, 1, 'never two transactions open at once');
      // The partial row, every chunk but the last alone, then the last with the row made whole.
      assert.equal(seen.transactions, 1 + (chunks - 1) + 1);
      assert.equal(seen.statements[0], 'INSERT INTO "lw__image_object"');
      assert.deepEqual(seen.statements.slice(-2), ['INSERT INTO "lw__image_chunk"', 'UPDATE "lw__image_object" SET']);
      assert.deepEqual(await readUpload(new DatabaseImages(engine), 'upload-memory-01'), png);
    } finally {
      await engine.close();
    }
  });

  it('pulls no more of a refused body than its check needed, and leaves no row', async () => {
    const engine = await openPostgres(await (await startPostgres()).createDatabase());
    try {
      await ensureImageStoreTables(engine);
      const store = new DatabaseImages(engine);
      const rows = async () => (await engine.reader.all(`SELECT (SELECT count(*) FROM "lw__image_object") + (SELECT count(*) FROM "lw__image_chunk")`, []))[0]![0];
      // A PNG declaring 8000 × 7000 pixels (its IHDR rewritten), followed by 2 MB.
      const bomb = Buffer.concat([await noisyPng(16, 16), Buffer.alloc(2_000_000)]);
      bomb.writeUInt32BE(8000, 16);
      bomb.writeUInt32BE(7000, 20);
      bomb.writeUInt32BE(crc32(bomb.subarray(12, 29)), 29);
      const cases: Array<[string, Buffer, string]> = [
        ['not-image', Buffer.alloc(2_000_000, 'GIF90a'), 'not-image'],
        ['too-many-pixels', bomb, 'too-many-pixels'],
      ];
      for (const [id, bytes, why] of cases) {
        const pulled = { n: 0 };
        const r = await receiveUpload(store, `upload-${id}`, pieces(bytes, 1000, pulled), LIMITS);
        assert.deepEqual(r, { stored: false, why }, id);
        assert.equal(pulled.n, 1, `${id}: only the first piece was read`);
      }
      const big = await noisyPng(1900, 1900);
      const pulled = { n: 0 };
      assert.deepEqual(await receiveUpload(store, 'upload-too-large', pieces(big, 4096, pulled), LIMITS), { stored: false, why: 'too-large' });
      assert.equal(pulled.n, Math.floor(UPLOAD_MAX_BYTES / 4096) + 1, 'read to the limit, not to the end');
      // Refused by the limit of uploaded bytes at the end: what was written is deleted.
      const png = await noisyPng(400, 400);
      assert.deepEqual(await receiveUpload(store, 'upload-refused-1', pieces(png, 1000), { ...LIMITS, admit: (size) => (size === png.length ? 'over' : undefined) }), { stored: false, why: 'refused', refusal: 'over' });
      assert.equal(Number(await rows()), 0);
      // A body that fails (the client gone) likewise, and the error goes on.
      const failing = (async function* () {
        yield png.subarray(0, 300_000);
        throw new Error('cut off');
      })();
      await assert.rejects(receiveUpload(store, 'upload-cut-off-1', failing, LIMITS), /cut off/);
      assert.equal(Number(await rows()), 0);
      // Taken: the second upload under an id.
      await store.saveUpload('upload-taken-01', png);
      assert.deepEqual(await receiveUpload(store, 'upload-taken-01', pieces(png, 1000), LIMITS), { stored: false, why: 'used' });
      assert.deepEqual(await readUpload(store, 'upload-taken-01'), png, 'the first stays');
    } finally {
      await engine.close();
    }
  });
});
