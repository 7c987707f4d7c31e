/**
 * The images of an app in its store: one table, `lw__image`, with a row per upload (docs/images.md
 * "Where the images are"). The bytes live in files (files.ts) or in the database (database.ts); the row says whose they are and where
 * they stand:
 *
 * | column        | meaning                                                                   |
 * |---------------|---------------------------------------------------------------------------|
 * | `id`          | the upload's random id: what a record's image field stores                |
 * | `model`,`field` | the field the upload URL was made for (`Post`, `image`)                  |
 * | `public`      | 1 when that field is `public: true` (non-expiring, cacheable URLs)         |
 * | `created`     | when the bytes arrived                                                     |
 * | `attached`    | 1 once a committed write stored the image in a field; else swept in a day |
 * | `state`       | `uploaded` → `ready` (processed) or `failed` (not an image after all)      |
 * | `src`         | the processed file (`<sha256>.jpg`), once ready                           |
 * | `width`,`height` | of the processed image (of the upload, before)                          |
 * | `lease_until` | a worker is processing it until this time (renewed while it works)        |
 * | `lease_holder` | which worker: `<pid>@<host>#<instance>` (see worker.ts, leaseHolder)       |
 * | `error`       | why processing failed                                                      |
 *
 * A row is written only by the PUT that brought the bytes (so an upload URL is used once: a
 * second PUT meets the primary key), attached in the transaction of the write that stores it,
 * and finished by the worker (worker.ts).
 */
import { ensureTables, type Dialect, type Engine, type Reader, type Row, type Writer } from '../store/index.js';

export const IMAGE_TABLE = 'lw__image';

/** What a view and the image server need of one image. */
export interface ImageRow {
  id: string;
  model: string;
  field: string;
  public: boolean;
  state: 'uploaded' | 'ready' | 'failed';
  attached: boolean;
  created: number;
  src: string | null;
  width: number | null;
  height: number | null;
}

const T = `"${IMAGE_TABLE}"`;
const COLUMNS = `"id", "model", "field", "public", "state", "attached", "created", "src", "width", "height"`;

const TEXTS = {
  insert: `INSERT INTO ${T} ("id", "model", "field", "public", "state", "attached", "created", "width", "height") VALUES (?, ?, ?, ?, 'uploaded', 0, ?, ?, ?)`,
  get: `SELECT ${COLUMNS} FROM ${T} WHERE "id" = ?`,
  attach: `UPDATE ${T} SET "attached" = 1 WHERE "id" = ?`,
  /** Ids of attached images waiting for processing: [now]. */
  due: `SELECT "id" FROM ${T} WHERE "attached" = 1 AND "state" = 'uploaded' AND ("lease_until" IS NULL OR "lease_until" < ?) ORDER BY "created" LIMIT 10`,
  /** [leaseUntil, holder, id, now]. */
  claim: `UPDATE ${T} SET "lease_until" = ?, "lease_holder" = ? WHERE "id" = ? AND "state" = 'uploaded' AND ("lease_until" IS NULL OR "lease_until" < ?) RETURNING "id"`,
  /** The heartbeat of the worker processing an image: [leaseUntil, id, holder]. */
  renew: `UPDATE ${T} SET "lease_until" = ? WHERE "id" = ? AND "lease_holder" = ? AND "state" = 'uploaded'`,
  /** Leases still running, with their holders: [now]. */
  held: `SELECT "id", "lease_holder" FROM ${T} WHERE "attached" = 1 AND "state" = 'uploaded' AND "lease_until" >= ? LIMIT 100`,
  /** A lease whose holder is gone, given back: [id, holder]. */
  release: `UPDATE ${T} SET "lease_until" = NULL, "lease_holder" = NULL WHERE "id" = ? AND "lease_holder" = ? AND "state" = 'uploaded'`,
  /** [src, width, height, id]. */
  ready: `UPDATE ${T} SET "state" = 'ready', "src" = ?, "width" = ?, "height" = ?, "lease_until" = NULL, "lease_holder" = NULL, "error" = NULL WHERE "id" = ?`,
  /** [error, id]. */
  failed: `UPDATE ${T} SET "state" = 'failed', "error" = ?, "lease_until" = NULL, "lease_holder" = NULL WHERE "id" = ?`,
  /** Uploads never attached: [createdBefore]. */
  stale: `SELECT "id" FROM ${T} WHERE "attached" = 0 AND "created" < ? LIMIT 500`,
  remove: `DELETE FROM ${T} WHERE "id" = ? AND "attached" = 0`,
};

export type ImageSql = typeof TEXTS;

function numbered(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

const BY_DIALECT: Record<Dialect, ImageSql> = {
  sqlite: TEXTS,
  postgres: Object.fromEntries(Object.entries(TEXTS).map(([k, v]) => [k, numbered(v)])) as ImageSql,
};

export function imageSql(dialect: Dialect): ImageSql {
  return BY_DIALECT[dialect];
}

/**
 * Creates the table when missing, and adds `lease_holder` to a table made before it existed
 * (nothing is locked when both are there: src/store/catalog.ts).
 */
export async function ensureImageTables(engine: Engine): Promise<void> {
  const int = engine.dialect === 'sqlite' ? 'INTEGER' : 'BIGINT';
  await ensureTables(engine, [
    {
      table: IMAGE_TABLE,
      create:
        `CREATE TABLE IF NOT EXISTS ${T} ("id" TEXT PRIMARY KEY, "model" TEXT NOT NULL, "field" TEXT NOT NULL, "public" INTEGER NOT NULL, ` +
        `"state" TEXT NOT NULL, "attached" INTEGER NOT NULL, "created" ${int} NOT NULL, "src" TEXT, "width" INTEGER, "height" INTEGER, ` +
        `"lease_until" ${int}, "lease_holder" TEXT, "error" TEXT)`,
      indexes: [{ name: `${IMAGE_TABLE}_due`, columns: ['attached', 'state'], unique: false }],
      added: [{ column: 'lease_holder', type: 'TEXT' }],
    },
  ]);
}

export function rowOf(r: Row): ImageRow {
  return {
    id: String(r[0]),
    model: String(r[1]),
    field: String(r[2]),
    public: Number(r[3]) === 1,
    state: String(r[4]) as ImageRow['state'],
    attached: Number(r[5]) === 1,
    created: Number(r[6]),
    src: r[7] === null ? null : String(r[7]),
    width: r[8] === null ? null : Number(r[8]),
    height: r[9] === null ? null : Number(r[9]),
  };
}

/** One image's row (synchronous on SQLite). */
export function readImage(reader: Reader, dialect: Dialect, id: string): ImageRow | undefined | Promise<ImageRow | undefined> {
  const rows = reader.all(imageSql(dialect).get, [id]);
  const first = (r: Row[]) => (r[0] ? rowOf(r[0]) : undefined);
  return rows instanceof Promise ? rows.then(first) : first(rows);
}

/**
 * Records an upload whose bytes were saved; false when the id is taken (the URL was used before).
 * `width`/`height`: the upload's own, until processing gives the final ones.
 */
export async function insertUpload(engine: Engine, row: { id: string; model: string; field: string; public: boolean; width: number | null; height: number | null }, now = Date.now()): Promise<boolean> {
  const sql = imageSql(engine.dialect);
  const w = await engine.begin();
  try {
    if ((await w.all(sql.get, [row.id])).length) {
      await w.rollback();
      return false;
    }
    await w.run(sql.insert, [row.id, row.model, row.field, row.public ? 1 : 0, now, row.width, row.height]);
    await w.commit();
    return true;
  } catch (e) {
    await w.rollback();
    throw e;
  }
}

/**
 * Attaches images in the caller's write transaction (the write that stores them in a field):
 * answers the ids that have no upload (their URL was made but nothing was PUT to it).
 */
export async function attachImages(writer: Writer, dialect: Dialect, ids: Iterable<string>): Promise<string[]> {
  const sql = imageSql(dialect);
  const missing: string[] = [];
  for (const id of ids) {
    const rows = await writer.all(sql.get, [id]);
    if (!rows.length || String(rows[0]![4]) === 'failed') {
      missing.push(id);
      continue;
    }
    if (Number(rows[0]![5]) !== 1) await writer.run(sql.attach, [id]);
  }
  return missing;
}
