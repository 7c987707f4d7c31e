/**
 * Where the bytes of images are kept: the uploads by id, and the processed images by the name of
 * their content (`<sha256>.jpg|png`). Two kinds (docs/images.md "Where the images are"): files
 * under a directory (files.ts: SQLite's default, and PostgreSQL's with LANEWAY_IMAGES_DIR), and
 * the app's PostgreSQL database itself (database.ts: PostgreSQL's default). The image service,
 * the worker and the sweep see only this interface.
 */

/** A processed image ready to send: its size, and its bytes read in pieces (a range, inclusive). */
export interface StoredImage {
  readonly size: number;
  /** The bytes `start`..`end` (inclusive; default the whole image), in pieces of at most 256 KiB. */
  read(start?: number, end?: number): AsyncIterable<Buffer>;
}

export interface ImageStore {
  /** Where the images are, for messages (`the directory /srv/images`, `the database`). */
  readonly where: string;
  /** Stores an upload's bytes; throws an error with `code` 'EEXIST' when `id` is already taken. */
  saveUpload(id: string, bytes: Buffer): Promise<void>;
  /** The bytes of an upload, or undefined when there is none under `id`. */
  readUpload(id: string): Promise<Buffer | undefined>;
  /** Deletes an upload; nothing happens when there is none. */
  removeUpload(id: string): Promise<void>;
  /** Every stored upload with the time it was stored, for sweeping the ones left too long. */
  listUploads(): Promise<Array<{ id: string; mtimeMs: number }>>;
  /** Deletes what writes cut short left behind before `before`; answers how many. */
  removeTemporary(before: number): Promise<number>;
  /** Stores a processed image under its content's name (nothing to do when it is there); answers the name. */
  saveResult(data: Buffer, format: 'jpeg' | 'png'): Promise<string>;
  /** A processed image by name (RESULT_NAME), or undefined when this store does not hold it. */
  openResult(name: string): Promise<StoredImage | undefined>;
}
