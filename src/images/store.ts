/**
 * Where the bytes of images are kept: the uploads by id, and the processed images by the name of
 * their content (`<sha256>.jpg|png`). Two kinds (docs/images.md "Where the images are"): files
 * under a directory (files.ts: SQLite's default, and PostgreSQL's with LANEWAY_IMAGES_DIR), and
 * the app's PostgreSQL database itself (database.ts: PostgreSQL's default). The image service,
 * the worker and the sweep see only this interface.
 *
 * An upload goes in as it arrives (`createUpload`: pieces written one after the other, never
 * gathered whole) and comes out the same way (`openUpload`); nothing under its id can be read
 * until it is committed whole.
 */

/** Stored bytes ready to read: their size, and the bytes read in pieces (a range, inclusive). */
export interface StoredImage {
  readonly size: number;
  /** The file the bytes are in, when they are in one of their own (sharp then reads it itself). */
  readonly path?: string;
  /** The bytes `start`..`end` (inclusive; default the whole image), in pieces of at most 256 KiB. */
  read(start?: number, end?: number): AsyncIterable<Buffer>;
}

/**
 * An upload being written: `write` each piece as it arrives (awaited: the next waits), then
 * `commit` makes it readable under its id, or `abort` deletes what was written.
 */
export interface UploadWriter {
  write(piece: Buffer): Promise<void>;
  /** Makes the upload readable; throws an error with `code` 'EEXIST' when its id was taken meanwhile. */
  commit(): Promise<void>;
  /** Deletes what was written (nothing happens after a commit). */
  abort(): Promise<void>;
}

export interface ImageStore {
  /** Where the images are, for messages (`the directory /srv/images`, `the database`). */
  readonly where: string;
  /** Starts writing an upload; throws an error with `code` 'EEXIST' when `id` is already taken. */
  createUpload(id: string): Promise<UploadWriter>;
  /** Stores an upload whole (createUpload, each piece, commit); EEXIST when `id` is already taken. */
  saveUpload(id: string, bytes: Buffer | AsyncIterable<Buffer>): Promise<void>;
  /** An upload, read in pieces, or undefined when there is none (whole) under `id`. */
  openUpload(id: string): Promise<StoredImage | undefined>;
  /** Deletes an upload; nothing happens when there is none. */
  removeUpload(id: string): Promise<void>;
  /** Every stored upload (and upload being written) with the time it was begun, for sweeping the ones left too long. */
  listUploads(): Promise<Array<{ id: string; mtimeMs: number }>>;
  /** Deletes what writes cut short left behind before `before`; answers how many. */
  removeTemporary(before: number): Promise<number>;
  /** Stores a processed image under its content's name (nothing to do when it is there); answers the name. */
  saveResult(data: Buffer, format: 'jpeg' | 'png'): Promise<string>;
  /** A processed image by name (RESULT_NAME), or undefined when this store does not hold it. */
  openResult(name: string): Promise<StoredImage | undefined>;
}

/** Writes `bytes` (one Buffer or pieces) through `writer` and commits; aborts when anything fails. */
export async function writeAll(writer: UploadWriter, bytes: Buffer | AsyncIterable<Buffer>): Promise<void> {
  try {
    if (Buffer.isBuffer(bytes)) await writer.write(bytes);
    else for await (const piece of bytes) await writer.write(piece);
    await writer.commit();
  } catch (e) {
    await writer.abort();
    throw e;
  }
}
