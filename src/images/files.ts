/**
 * Where images live on disk, under one directory (created on first use, private to the server):
 *
 * - `uploads/<id>`: the bytes of an upload as received, kept until it is processed and swept
 *   afterwards. An id names one upload only: a second save under the same id is refused (EEXIST),
 *   never written over the first.
 * - `<ab>/<sha256>.jpg|png`: processed images, named by the SHA-256 of their bytes (`ab` being
 *   its first two hex digits, so that no directory grows too large). The same image saved twice
 *   is one file, and a name, once handed out, always means the same bytes, so that it can be
 *   served with an immutable cache lifetime.
 *
 * Every file is written under a temporary name in its final directory (an upload piece by piece
 * as it arrives, never whole in memory), flushed to disk, then given its name by a hard link,
 * which (unlike a rename) fails rather than replace a file that is already there. A reader sees a
 * whole file or none, and a crash never leaves a half-written file under a real name; an upload
 * cut short deletes its temporary file at once, and those a crash leaves are swept
 * (`removeTemporary`). Only names of a strict form (`UPLOAD_ID`, `RESULT_NAME`) become paths.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, promises as fs } from 'node:fs';
import path from 'node:path';
import { writeAll, type ImageStore, type StoredImage, type UploadWriter } from './store.js';

/** What an upload id looks like (ids are made by the server, e.g. random base64url). */
export const UPLOAD_ID = /^[A-Za-z0-9_-]{10,64}$/;
/** What the name of a processed image looks like: `<sha256 hex>.jpg` or `.png`. */
export const RESULT_NAME = /^[0-9a-f]{64}\.(?:jpg|png)$/;

/** The temporary name of a file being written (writeNew). */
const TEMP_NAME = /^\.[0-9a-f]{24}\.tmp$/;
/** The directories of processed images: the first two hex digits of their names. */
const RESULT_DIR = /^[0-9a-f]{2}$/;

const EXTENSIONS = { jpeg: 'jpg', png: 'png' } as const;
const DIR_MODE = 0o700;
const FILE_MODE = 0o600;

function isMissing(e: unknown): boolean {
  return (e as NodeJS.ErrnoException).code === 'ENOENT';
}

/** Creates `file` with `bytes`, flushed to disk before it returns. */
async function writeDurably(file: string, bytes: Uint8Array): Promise<void> {
  const handle = await fs.open(file, 'wx', FILE_MODE);
  try {
    await handle.writeFile(bytes);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** A temporary name beside `target` (TEMP_NAME), its directory made when missing. */
async function temporaryFor(target: string): Promise<string> {
  const dir = path.dirname(target);
  await fs.mkdir(dir, { recursive: true, mode: DIR_MODE });
  return path.join(dir, `.${randomBytes(12).toString('hex')}.tmp`);
}

/**
 * Writes `bytes` to `target` all at once; throws an error with `code` 'EEXIST', and leaves the
 * existing file as it was, when `target` exists.
 */
async function writeNew(target: string, bytes: Uint8Array): Promise<void> {
  const temp = await temporaryFor(target);
  try {
    await writeDurably(temp, bytes);
    await fs.link(temp, target);
  } finally {
    await fs.rm(temp, { force: true });
  }
}

function exists(): NodeJS.ErrnoException {
  return Object.assign(new Error('already stored'), { code: 'EEXIST' });
}

/** An upload written piece by piece to a temporary file, linked to its name when whole (writeNew's steps, spread out). */
class FileUpload implements UploadWriter {
  #done = false;
  constructor(
    readonly target: string,
    readonly temp: string,
    readonly handle: fs.FileHandle,
  ) {}

  async write(piece: Buffer): Promise<void> {
    for (let at = 0; at < piece.length; ) at += (await this.handle.write(piece, at)).bytesWritten;
  }

  async commit(): Promise<void> {
    this.#done = true;
    try {
      await this.handle.sync();
      await this.handle.close();
      await fs.link(this.temp, this.target);
    } finally {
      await fs.rm(this.temp, { force: true });
    }
  }

  async abort(): Promise<void> {
    if (this.#done) return;
    this.#done = true;
    await this.handle.close().catch(() => {});
    await fs.rm(this.temp, { force: true });
  }
}

/** The entries of `dir` whose names match `pattern`, with their modification times (none when `dir` is missing). */
async function listNamed(dir: string, pattern: RegExp): Promise<Array<{ name: string; mtimeMs: number }>> {
  let entries: string[];
  try {
    entries = await fs.readdir(dir);
  } catch (e) {
    if (isMissing(e)) return [];
    throw e;
  }
  const found: Array<{ name: string; mtimeMs: number }> = [];
  for (const name of entries.filter((n) => pattern.test(n))) {
    try {
      found.push({ name, mtimeMs: (await fs.stat(path.join(dir, name))).mtimeMs });
    } catch (e) {
      // Removed between readdir and stat.
      if (!isMissing(e)) throw e;
    }
  }
  return found;
}

export class ImageFiles implements ImageStore {
  /** The directory, absolute. */
  readonly dir: string;

  constructor(dir: string) {
    this.dir = path.resolve(dir);
  }

  get where(): string {
    return `the directory ${this.dir}`;
  }

  private get uploadsDir(): string {
    return path.join(this.dir, 'uploads');
  }

  private uploadPath(id: string): string {
    if (typeof id !== 'string' || !UPLOAD_ID.test(id)) {
      throw new TypeError(`an upload id is 10 to 64 letters, digits, "_" or "-", not ${JSON.stringify(id)}`);
    }
    return path.join(this.uploadsDir, id);
  }

  /**
   * Starts writing an upload to a temporary file; throws an error with `code` 'EEXIST' when `id`
   * is already taken (now, or at the commit: the link decides between two writes at once).
   */
  async createUpload(id: string): Promise<UploadWriter> {
    const target = this.uploadPath(id);
    const temp = await temporaryFor(target);
    if (await fs.stat(target).then(() => true, (e: unknown) => (isMissing(e) ? false : Promise.reject(e)))) throw exists();
    return new FileUpload(target, temp, await fs.open(temp, 'wx', FILE_MODE));
  }

  /** Stores an upload's bytes; throws an error with `code` 'EEXIST' when `id` is already taken. */
  async saveUpload(id: string, bytes: Buffer | AsyncIterable<Buffer>): Promise<void> {
    await writeAll(await this.createUpload(id), bytes);
  }

  /** An upload, read from its file in pieces (its `path` is the file), or undefined when there is none. */
  async openUpload(id: string): Promise<StoredImage | undefined> {
    return this.openFile(this.uploadPath(id));
  }

  /** Deletes an upload; nothing happens when there is none. */
  async removeUpload(id: string): Promise<void> {
    await fs.rm(this.uploadPath(id), { force: true });
  }

  /** Every stored upload with its modification time, for sweeping the ones left too long. */
  async listUploads(): Promise<Array<{ id: string; mtimeMs: number }>> {
    return (await listNamed(this.uploadsDir, UPLOAD_ID)).map((f) => ({ id: f.name, mtimeMs: f.mtimeMs }));
  }

  /**
   * Deletes the temporary files (of writes that a crash or a kill cut short) last modified before
   * `before`, in the uploads directory and in those of processed images; answers how many.
   */
  async removeTemporary(before: number): Promise<number> {
    const dirs = [this.uploadsDir, ...(await listNamed(this.dir, RESULT_DIR)).map((d) => path.join(this.dir, d.name))];
    let removed = 0;
    for (const dir of dirs) {
      for (const f of await listNamed(dir, TEMP_NAME)) {
        if (f.mtimeMs >= before) continue;
        await fs.rm(path.join(dir, f.name), { force: true });
        removed++;
      }
    }
    return removed;
  }

  /** Stores a processed image under its content's name (nothing to do when it is already there). */
  async saveResult(data: Buffer, format: 'jpeg' | 'png'): Promise<string> {
    const name = `${createHash('sha256').update(data).digest('hex')}.${EXTENSIONS[format]}`;
    try {
      await writeNew(this.resultFile(name), data);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    return name;
  }

  /** The absolute path of a processed image, for a name of the exact form RESULT_NAME only. */
  resultPath(name: string): string | undefined {
    return typeof name === 'string' && RESULT_NAME.test(name) ? this.resultFile(name) : undefined;
  }

  /** A processed image, read from its file in pieces (undefined when there is no such file). */
  async openResult(name: string): Promise<StoredImage | undefined> {
    const file = this.resultPath(name);
    return file ? this.openFile(file) : undefined;
  }

  /** A file read in pieces, or undefined when there is none. */
  private async openFile(file: string): Promise<StoredImage | undefined> {
    let size: number;
    try {
      size = (await fs.stat(file)).size;
    } catch (e) {
      if (isMissing(e)) return undefined;
      throw e;
    }
    return {
      size,
      path: file,
      read: (start = 0, end = size - 1) => createReadStream(file, { start, end, highWaterMark: 256 * 1024 }),
    };
  }

  private resultFile(name: string): string {
    return path.join(this.dir, name.slice(0, 2), name);
  }
}
