/**
 * Images kept in the app's PostgreSQL database (docs/images.md "Where the images are"): the
 * default on PostgreSQL, so that several machines serving one app need no shared volume.
 *
 * Two tables. `lw__image_object` has a row per stored thing, named by a key (`u/<upload id>`,
 * `r/<sha256>.jpg|png`), with its size, its number of chunks and when it was stored;
 * `lw__image_chunk` holds the bytes, in chunks of CHUNK_BYTES (256 KiB) numbered from 0.
 *
 * An upload is written as it arrives, never whole in memory and never in one long transaction (a
 * slow client would hold a pooled connection for its whole upload): its row first, `partial`, which
 * takes the id (a second upload under it meets the primary key: EEXIST, as a second file would);
 * then each chunk once it is full, one statement each; and at the end the last chunk and the row's
 * size and count, with `partial` cleared, in one short transaction. Until then no read sees it
 * (`partial` rows are not there for `openUpload`). An upload cut short deletes its rows at once;
 * those of a process that died are swept with the uploads never attached (listUploads lists them).
 * A processed image (at most 500 KB, made whole by sharp) is written in one transaction; stored
 * twice, it is stored once.
 *
 * Reads go chunk by chunk: an image is sent (and a range of it) one statement per chunk, and an
 * upload is read by the worker the same way, never whole in memory.
 *
 * `legacy`: the images directory of before (the data directory's `images/`), read when the
 * database does not hold an image, until `laneway migrate --images` copies its files in
 * (`copyImageFiles`).
 */
import { createHash } from 'node:crypto';
import { ensureTables, type Engine, type Writer } from '../store/index.js';
import { RESULT_NAME, UPLOAD_ID, type ImageFiles } from './files.js';
import { writeAll, type ImageStore, type StoredImage, type UploadWriter } from './store.js';
import { IMAGE_TABLE } from './table.js';

export const IMAGE_OBJECT_TABLE = 'lw__image_object';
export const IMAGE_CHUNK_TABLE = 'lw__image_chunk';
export const CHUNK_BYTES = 256 * 1024;

const O = `"${IMAGE_OBJECT_TABLE}"`;
const C = `"${IMAGE_CHUNK_TABLE}"`;

const SQL = {
  create: `INSERT INTO ${O} ("key", "size", "chunks", "created") VALUES ($1, $2, $3, $4) ON CONFLICT ("key") DO NOTHING RETURNING "key"`,
  /** An upload's row while its chunks arrive: [key, created]. */
  begin: `INSERT INTO ${O} ("key", "size", "chunks", "created", "partial") VALUES ($1, 0, 0, $2, 1) ON CONFLICT ("key") DO NOTHING RETURNING "key"`,
  /** The upload whole: [key, size, chunks]. */
  finish: `UPDATE ${O} SET "size" = $2, "chunks" = $3, "partial" = NULL WHERE "key" = $1 AND "partial" = 1 RETURNING "key"`,
  chunk: `INSERT INTO ${C} ("key", "seq", "data") VALUES ($1, $2, $3::bytea)`,
  head: `SELECT "size", "chunks" FROM ${O} WHERE "key" = $1 AND "partial" IS NULL`,
  read: `SELECT "data" FROM ${C} WHERE "key" = $1 AND "seq" = $2`,
  removeChunks: `DELETE FROM ${C} WHERE "key" = $1`,
  removeObject: `DELETE FROM ${O} WHERE "key" = $1`,
  uploads: `SELECT "key", "created" FROM ${O} WHERE "key" LIKE 'u/%' ORDER BY "created" LIMIT 10000`,
};

/** Creates the two tables when missing, and adds `partial` to a table made before it existed. */
export async function ensureImageStoreTables(engine: Engine): Promise<void> {
  await ensureTables(engine, [
    {
      table: IMAGE_OBJECT_TABLE,
      create: `CREATE TABLE IF NOT EXISTS ${O} ("key" TEXT PRIMARY KEY, "size" BIGINT NOT NULL, "chunks" INTEGER NOT NULL, "created" BIGINT NOT NULL, "partial" INTEGER)`,
      indexes: [],
      added: [{ column: 'partial', type: 'INTEGER' }],
    },
    { table: IMAGE_CHUNK_TABLE, create: `CREATE TABLE IF NOT EXISTS ${C} ("key" TEXT NOT NULL, "seq" INTEGER NOT NULL, "data" BYTEA NOT NULL, PRIMARY KEY ("key", "seq"))`, indexes: [] },
  ]);
}

function exists(): NodeJS.ErrnoException {
  return Object.assign(new Error('already stored'), { code: 'EEXIST' });
}

/** bytea in and out as text: `\x` and hex digits (the engine's rows hold text, never Buffers). */
const toBytea = (b: Buffer): string => '\\x' + b.toString('hex');
const fromBytea = (v: unknown): Buffer => Buffer.from(String(v).slice(2), 'hex');

export class DatabaseImages implements ImageStore {
  readonly where = 'the database';
  readonly #engine: Engine;
  readonly #legacy: ImageFiles | undefined;
  readonly #now: () => number;

  constructor(engine: Engine, legacy?: ImageFiles, now: () => number = Date.now) {
    if (engine.dialect !== 'postgres') throw new TypeError('images are kept in the database on PostgreSQL only');
    this.#engine = engine;
    this.#legacy = legacy;
    this.#now = now;
  }

  /** Stores a processed image under `key` in one transaction (nothing to do when the key is taken). */
  async #store(key: string, bytes: Buffer): Promise<void> {
    const chunks = Math.ceil(bytes.length / CHUNK_BYTES);
    const w = await this.#engine.begin();
    try {
      if (!(await w.all(SQL.create, [key, bytes.length, chunks, this.#now()])).length) {
        await w.rollback();
        return;
      }
      for (let seq = 0; seq < chunks; seq++) await w.run(SQL.chunk, [key, seq, toBytea(bytes.subarray(seq * CHUNK_BYTES, (seq + 1) * CHUNK_BYTES))]);
      await w.commit();
    } catch (e) {
      await w.rollback();
      throw e;
    }
  }

  async #head(key: string): Promise<{ size: number; chunks: number } | undefined> {
    const rows = await this.#engine.reader.all(SQL.head, [key]);
    return rows[0] ? { size: Number(rows[0][0]), chunks: Number(rows[0][1]) } : undefined;
  }

  async *#chunks(key: string, first: number, last: number): AsyncIterable<Buffer> {
    for (let seq = first; seq <= last; seq++) {
      const rows = await this.#engine.reader.all(SQL.read, [key, seq]);
      if (!rows[0]) throw new Error(`images: chunk ${seq} of ${key} is missing from ${IMAGE_CHUNK_TABLE}`);
      yield fromBytea(rows[0][0]);
    }
  }

  async #remove(key: string): Promise<void> {
    await transaction(this.#engine, async (w) => {
      await w.run(SQL.removeChunks, [key]);
      await w.run(SQL.removeObject, [key]);
    });
  }

  /** Starts an upload: its `partial` row takes the id (EEXIST when taken), in a statement of its own. */
  async createUpload(id: string): Promise<UploadWriter> {
    if (typeof id !== 'string' || !UPLOAD_ID.test(id)) throw new TypeError(`an upload id is 10 to 64 letters, digits, "_" or "-", not ${JSON.stringify(id)}`);
    const key = `u/${id}`;
    if (!(await transaction(this.#engine, async (w) => (await w.all(SQL.begin, [key, this.#now()])).length))) throw exists();
    return new DatabaseUpload(this.#engine, key, () => this.#remove(key));
  }

  async saveUpload(id: string, bytes: Buffer | AsyncIterable<Buffer>): Promise<void> {
    await writeAll(await this.createUpload(id), bytes);
  }

  async openUpload(id: string): Promise<StoredImage | undefined> {
    return (await this.#open(`u/${id}`)) ?? this.#legacy?.openUpload(id);
  }

  async removeUpload(id: string): Promise<void> {
    await this.#remove(`u/${id}`);
    await this.#legacy?.removeUpload(id);
  }

  async listUploads(): Promise<Array<{ id: string; mtimeMs: number }>> {
    return (await this.#engine.reader.all(SQL.uploads, [])).map((r) => ({ id: String(r[0]).slice(2), mtimeMs: Number(r[1]) }));
  }

  /** Uploads cut short by a process that died are `partial` rows, swept as uploads (listUploads); the old directory's temporary files are swept here. */
  async removeTemporary(before: number): Promise<number> {
    return (await this.#legacy?.removeTemporary(before)) ?? 0;
  }

  async saveResult(data: Buffer, format: 'jpeg' | 'png'): Promise<string> {
    const name = `${createHash('sha256').update(data).digest('hex')}.${format === 'jpeg' ? 'jpg' : 'png'}`;
    await this.#store(`r/${name}`, data);
    return name;
  }

  async openResult(name: string): Promise<StoredImage | undefined> {
    if (typeof name !== 'string' || !RESULT_NAME.test(name)) return undefined;
    return (await this.#open(`r/${name}`)) ?? this.#legacy?.openResult(name);
  }

  /** What `key` holds, read chunk by chunk, or undefined when the database does not hold it whole. */
  async #open(key: string): Promise<StoredImage | undefined> {
    const head = await this.#head(key);
    if (!head) return undefined;
    const { size } = head;
    const chunks = (start: number, end: number) => this.#chunks(key, Math.floor(start / CHUNK_BYTES), Math.floor(end / CHUNK_BYTES));
    return {
      size,
      read: (start = 0, end = size - 1) => sliced(chunks(start, end), start % CHUNK_BYTES, end - start + 1),
    };
  }

  /** Whether the database holds the processed image `name` (copyImageFiles). */
  async hasResult(name: string): Promise<boolean> {
    return (await this.#head(`r/${name}`)) !== undefined;
  }

  /** Whether the database holds the upload `id` (copyImageFiles). */
  async hasUpload(id: string): Promise<boolean> {
    return (await this.#head(`u/${id}`)) !== undefined;
  }
}

/**
 * Runs `fn` in a write transaction of its own: committed when it resolves, rolled back when it
 * throws. Its writes are held back to the first read or the commit (one write alone is then one
 * round trip: the store's `holdWrites`).
 */
async function transaction<T>(engine: Engine, fn: (w: Writer) => Promise<T>): Promise<T> {
  const w = await engine.begin({ holdWrites: true });
  try {
    const value = await fn(w);
    await w.commit();
    return value;
  } catch (e) {
    await w.rollback();
    throw e;
  }
}

/**
 * An upload on its way in (DatabaseImages.createUpload): pieces are copied into one chunk's
 * buffer, and each full chunk is inserted at once, in a transaction of its own; the buffer is
 * then filled again. The last chunk goes with the commit.
 */
class DatabaseUpload implements UploadWriter {
  readonly #engine: Engine;
  readonly #key: string;
  readonly #remove: () => Promise<void>;
  #chunk: Buffer | undefined;
  #filled = 0;
  #seq = 0;
  #size = 0;
  #done = false;

  constructor(engine: Engine, key: string, remove: () => Promise<void>) {
    this.#engine = engine;
    this.#key = key;
    this.#remove = remove;
  }

  async write(piece: Buffer): Promise<void> {
    for (let at = 0; at < piece.length; ) {
      const chunk = (this.#chunk ??= Buffer.allocUnsafe(CHUNK_BYTES));
      const n = piece.copy(chunk, this.#filled, at);
      at += n;
      this.#filled += n;
      this.#size += n;
      if (this.#filled === CHUNK_BYTES) await transaction(this.#engine, (w) => this.#insertChunk(w));
    }
  }

  /** Inserts the chunk filled so far (its bytes are copied into the statement: the buffer is free again). */
  async #insertChunk(w: Writer): Promise<void> {
    const data = toBytea(this.#chunk!.subarray(0, this.#filled));
    this.#filled = 0;
    await w.run(SQL.chunk, [this.#key, this.#seq++, data]);
  }

  async commit(): Promise<void> {
    const finished = await transaction(this.#engine, async (w) => {
      if (this.#filled) await this.#insertChunk(w);
      return (await w.all(SQL.finish, [this.#key, this.#size, this.#seq])).length > 0;
    });
    // Its row was deleted meanwhile (a sweep does not: the row is less than a day old).
    if (!finished) throw new Error(`images: the upload ${this.#key.slice(2)} was removed while it was written`);
    this.#done = true;
    this.#chunk = undefined;
  }

  async abort(): Promise<void> {
    if (this.#done) return;
    this.#done = true;
    this.#chunk = undefined;
    await this.#remove();
  }
}

/** `length` bytes of `parts` from `skip` in the first part on. */
async function* sliced(parts: AsyncIterable<Buffer>, skip: number, length: number): AsyncIterable<Buffer> {
  let left = length;
  for await (let part of parts) {
    if (skip) {
      part = part.subarray(skip);
      skip = 0;
    }
    if (part.length > left) part = part.subarray(0, left);
    left -= part.length;
    if (part.length) yield part;
    if (left <= 0) return;
  }
}

/** What `importImageFiles` did. */
export interface ImportResult {
  /** Processed images and uploads copied into the database. */
  copied: number;
  /** Already there. */
  present: number;
  /** Named by the image table but in neither place (listed by id). */
  missing: string[];
}

/**
 * Copies the images of the image table from `files` (an images directory) into the database
 * (`laneway migrate --images`, docs/images.md): the processed image of every ready row, and the
 * upload of every row not processed yet. The files are left in place; the database is read first
 * from now on. Safe to run again (what is there already is skipped) and while the app serves.
 */
export async function copyImageFiles(engine: Engine, db: DatabaseImages, files: ImageFiles): Promise<ImportResult> {
  const result: ImportResult = { copied: 0, present: 0, missing: [] };
  const rows = await engine.reader.all(`SELECT "id", "state", "src" FROM "${IMAGE_TABLE}" ORDER BY "created"`, []);
  for (const [idValue, stateValue, srcValue] of rows) {
    const id = String(idValue);
    const state = String(stateValue);
    if (state === 'ready' && srcValue !== null) {
      const src = String(srcValue);
      if (await db.hasResult(src)) {
        result.present++;
        continue;
      }
      const file = files.resultPath(src);
      const stored = file && (await files.openResult(src));
      if (!stored) {
        result.missing.push(id);
        continue;
      }
      const parts: Buffer[] = [];
      for await (const part of stored.read()) parts.push(part);
      const name = await db.saveResult(Buffer.concat(parts), src.endsWith('.png') ? 'png' : 'jpeg');
      if (name !== src) throw new Error(`images: the file of ${src} in ${files.dir} does not hold the bytes its name says (its SHA-256 is ${name.slice(0, 64)}); it was not copied in correctly`);
      result.copied++;
    } else if (state === 'uploaded') {
      if (await db.hasUpload(id)) {
        result.present++;
        continue;
      }
      const upload = await files.openUpload(id);
      if (!upload) {
        result.missing.push(id);
        continue;
      }
      try {
        await db.saveUpload(id, upload.read());
        result.copied++;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
        result.present++;
      }
    }
  }
  return result;
}
