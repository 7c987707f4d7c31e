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
 * Every file is written under a temporary name in its final directory, flushed to disk, then
 * given its name by a hard link, which (unlike a rename) fails rather than replace a file that is
 * already there. A reader sees a whole file or none, and a crash never leaves a half-written file
 * under a real name; the temporary files a crash leaves are swept (`removeTemporary`). Only names
 * of a strict form (`UPLOAD_ID`, `RESULT_NAME`) become paths.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, promises as fs } from 'node:fs';
import path from 'node:path';
import type { ImageStore, StoredImage } from './store.js';

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

/**
 * Writes `bytes` to `target` all at once; throws an error with `code` 'EEXIST', and leaves the
 * existing file as it was, when `target` exists.
 */
async function writeNew(target: string, bytes: Uint8Array): Promise<void> {
  const dir = path.dirname(target);
  await fs.mkdir(dir, { recursive: true, mode: DIR_MODE });
  const temp = path.join(dir, `.${randomBytes(12).toString('hex')}.tmp`);
  try {
    await writeDurably(temp, bytes);
    await fs.link(temp, target);
  } finally {
    await fs.rm(temp, { force: true });
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

  /** Stores an upload's bytes; throws an error with `code` 'EEXIST' when `id` is already taken. */
  async saveUpload(id: string, bytes: Buffer): Promise<void> {
    await writeNew(this.uploadPath(id), bytes);
  }

  /** The bytes of an upload, or undefined when there is none under `id`. */
  async readUpload(id: string): Promise<Buffer | undefined> {
    try {
      return await fs.readFile(this.uploadPath(id));
    } catch (e) {
      if (isMissing(e)) return undefined;
      throw e;
    }
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
    if (!file) return undefined;
    let size: number;
    try {
      size = (await fs.stat(file)).size;
    } catch (e) {
      if (isMissing(e)) return undefined;
      throw e;
    }
    return {
      size,
      read: (start = 0, end = size - 1) => createReadStream(file, { start, end, highWaterMark: 256 * 1024 }),
    };
  }

  private resultFile(name: string): string {
    return path.join(this.dir, name.slice(0, 2), name);
  }
}
