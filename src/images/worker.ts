/**
 * The image worker: processes attached uploads after the commit that attached them, from every
 * process that serves the app (docs/images.md "Processing").
 *
 * A pass reads the ids of attached uploads still `uploaded`, takes a lease on each (an UPDATE that
 * succeeds only while nobody holds it), processes the upload (process.ts: upright, metadata
 * removed, at most 1000 px, under 500 KB), saves the result under its content hash, marks the row
 * `ready` and deletes the upload. Sharp reads the upload from a file: its own, in an images
 * directory; in the database, a temporary copy the worker writes chunk by chunk (`spoolUpload`,
 * in the system's temporary directory, removed once processed). Sharp would gather a stream into
 * one Buffer before decoding it; a file it reads as it decodes. Bytes that turn out not to be a usable image
 * mark the row `failed`. An upload file this process cannot see (another instance's directory
 * that is not shared) is left alone for `missingMs`, and logged.
 *
 * A lease names its holder (`leaseHolder`: pid, host, instance) and is short (`leaseMs`): the
 * holder renews it while it works (a heartbeat every third of it). A process that dies while
 * processing stops renewing, so any instance takes the image over once the lease ends; and a
 * lease whose holder ran on this host and whose process no longer exists (a restart after a
 * kill, a replaced worker) is given back at once, by the first pass (docs/images.md).
 *
 * The same pass deletes uploads nobody attached within `keepUnattachedMs` (a day): rows and files,
 * files without a row (a PUT that died between its file and its row, or before its end: in the
 * database, a `partial` upload), the temporary files of writes that died (files.ts), and the
 * temporary copies of a worker that died, from the start and then every `sweepEveryMs`.
 *
 * Images are processed one at a time: sharp runs on libuv's threads, but two large decodes at once
 * would double the memory a pass needs. Passes run one at a time (src/shared/passes.ts).
 */
import { randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, promises as fs, readFileSync, readlinkSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Passes } from '../shared/index.js';
import type { Engine } from '../store/index.js';
import type { ImageStore, StoredImage } from './store.js';
import { ImageError, processImage } from './process.js';
import { imageSql, type ImageSql } from './table.js';

export interface ImageLog {
  info(message: string): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

export interface ImageTimings {
  pollMs: number;
  /** A lease's length; its holder renews it every third of it while it works. */
  leaseMs: number;
  /** An upload whose file this instance cannot see is left to the others this long. */
  missingMs: number;
  keepUnattachedMs: number;
  sweepEveryMs: number;
}

export const DEFAULT_IMAGE_TIMINGS: ImageTimings = {
  pollMs: 30_000,
  leaseMs: 30_000,
  missingMs: 5 * 60_000,
  keepUnattachedMs: 24 * 3_600_000,
  sweepEveryMs: 10 * 60_000,
};

/**
 * TEST ONLY: with NODE_ENV=test, while the file this names exists, the worker holds each image it
 * has taken a lease on before processing it (renewing the lease meanwhile; 2 minutes at most),
 * having logged `TEST ONLY: holding image <id> (pid <pid>)`, so that a test can kill the process
 * while it processes an image, then remove the file. Inert otherwise, announced when on.
 */
export const TEST_HOLD_ENV = 'LANEWAY_TEST_ONLY_IMAGE_HOLD';
const TEST_HOLD_LIMIT_MS = 120_000;

/**
 * What tells this host's processes from others': the host name, the boot (a restarted machine
 * reuses pids) and the pid namespace (containers on one host each count pids from 1).
 */
let thisHost: string | undefined;
function hostKey(): string {
  if (thisHost !== undefined) return thisHost;
  const read = (f: () => string) => {
    try {
      return f().trim();
    } catch {
      return '';
    }
  };
  const boot = read(() => readFileSync('/proc/sys/kernel/random/boot_id', 'utf8')).slice(0, 8);
  const ns = /\[(\d+)\]/.exec(read(() => readlinkSync('/proc/self/ns/pid')))?.[1] ?? '';
  return (thisHost = [hostname(), boot, ns].filter(Boolean).join('~'));
}

const HOLDER = /^(\d+)@(.+)#([A-Za-z0-9_-]+)$/;

/** The holder a lease names: `<pid>@<host key>#<instance>`, the instance random for each worker. */
export function leaseHolder(instance: string, pid = process.pid, host = hostKey()): string {
  return `${pid}@${host}#${instance}`;
}

/**
 * Whether the holder of a lease is gone for sure: a process of this host (same host key) that
 * no longer exists. Holders elsewhere, and a pid that exists (perhaps reused), are left to the
 * end of their lease.
 */
export function holderIsGone(holder: string, host = hostKey(), alive = pidAlive): boolean {
  const m = HOLDER.exec(holder);
  if (!m || m[2] !== host) return false;
  const pid = Number(m[1]);
  return pid !== process.pid && !alive(pid);
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: it exists, under another user.
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export interface ImageWorkerOptions {
  log: ImageLog;
  now?: () => number;
  timings?: Partial<ImageTimings>;
  /** Called with each image made ready (the app's cache of image rows). */
  onReady?: (id: string) => void;
}

export class ImageWorker {
  readonly #engine: Engine;
  readonly #files: ImageStore;
  readonly #log: ImageLog;
  readonly #now: () => number;
  readonly #t: ImageTimings;
  readonly #sql: ImageSql;
  readonly #onReady: ((id: string) => void) | undefined;
  readonly #passes: Passes;
  readonly #holder = leaseHolder(randomBytes(6).toString('base64url'));
  readonly #testHold: string | undefined;
  #lastSweep = -Infinity;
  #lastError: string | undefined;

  constructor(engine: Engine, files: ImageStore, options: ImageWorkerOptions) {
    this.#engine = engine;
    this.#files = files;
    this.#log = options.log;
    this.#now = options.now ?? Date.now;
    this.#t = { ...DEFAULT_IMAGE_TIMINGS, ...options.timings };
    this.#sql = imageSql(engine.dialect);
    this.#onReady = options.onReady;
    this.#passes = new Passes(() => this.#run(), this.#t.pollMs);
    this.#testHold = testHoldFile(this.#log);
  }

  start(): void {
    this.#passes.start();
  }

  /** Looks for attached uploads now; resolves (never rejects) when a pass begun after the call has finished. */
  kick(): Promise<void> {
    return this.#passes.kick();
  }

  /** Stops polling and waits for the image being processed. */
  async stop(): Promise<void> {
    await this.#passes.stop();
  }

  async #run(): Promise<void> {
    try {
      const start = this.#now();
      if (start - this.#lastSweep >= this.#t.sweepEveryMs) {
        this.#lastSweep = start;
        await this.#sweep(start);
      }
      await this.#reclaim();
      for (;;) {
        if (this.#passes.stopped) break;
        const rows = await this.#engine.reader.all(this.#sql.due, [this.#now()]);
        let taken = 0;
        for (const row of rows) {
          if (this.#passes.stopped) break;
          const id = String(row[0]);
          if (await this.#claim(id)) {
            taken++;
            await this.#process(id);
          }
        }
        if (rows.length < 10 || taken === 0) break;
      }
      this.#lastError = undefined;
    } catch (e) {
      const message = (e as Error).message ?? String(e);
      if (this.#lastError !== message) {
        this.#lastError = message;
        this.#log.error(`images: cannot read or update the image table (tried again every ${this.#t.pollMs / 1000} s): ${message}`, { code: 'LW_IMAGE_STORE' });
      }
    }
  }

  async #write(sql: string, params: Array<string | number | null>): Promise<void> {
    const w = await this.#engine.begin();
    try {
      await w.run(sql, params);
      await w.commit();
    } catch (e) {
      await w.rollback();
      throw e;
    }
  }

  async #claim(id: string): Promise<boolean> {
    const now = this.#now();
    const w = await this.#engine.begin();
    try {
      const rows = await w.all(this.#sql.claim, [now + this.#t.leaseMs, this.#holder, id, now]);
      await w.commit();
      return rows.length > 0;
    } catch (e) {
      await w.rollback();
      throw e;
    }
  }

  /** Gives back the leases of holders that are gone (holderIsGone): their images are due at once. */
  async #reclaim(): Promise<void> {
    for (const row of await this.#engine.reader.all(this.#sql.held, [this.#now()])) {
      const holder = row[1] === null ? '' : String(row[1]);
      if (holderIsGone(holder)) {
        await this.#write(this.#sql.release, [String(row[0]), holder]);
        this.#log.info(`images: took back the lease on ${row[0]} from ${holder}, a process that no longer exists`);
      }
    }
  }

  /** Processes one leased image, renewing the lease meanwhile (the heartbeat). */
  async #process(id: string): Promise<void> {
    const renew = (ms: number) => this.#write(this.#sql.renew, [this.#now() + ms, id, this.#holder]);
    const heartbeat = setInterval(() => void renew(this.#t.leaseMs).catch(() => {}), Math.max(10, this.#t.leaseMs / 3));
    heartbeat.unref();
    try {
      await this.#processHeld(id, renew);
    } finally {
      clearInterval(heartbeat);
    }
  }

  async #processHeld(id: string, renew: (ms: number) => Promise<void>): Promise<void> {
    const upload = await this.#files.openUpload(id);
    if (!upload) {
      await renew(this.#t.missingMs);
      this.#log.error(`images: the upload ${id} is not in ${this.#files.where} on this instance; with several instances, every one must share the images directory, or keep the images in the database (docs/images.md)`, { code: 'LW_IMAGE_STORE', id });
      return;
    }
    if (this.#testHold && existsSync(this.#testHold)) {
      this.#log.info(`TEST ONLY: holding image ${id} (pid ${process.pid})`);
      const end = Date.now() + TEST_HOLD_LIMIT_MS;
      while (existsSync(this.#testHold) && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
    }
    let result;
    const copy = upload.path === undefined ? await spoolUpload(upload) : undefined;
    try {
      result = await processImage(upload.path ?? copy!.file);
    } catch (e) {
      if (!(e instanceof ImageError)) throw e;
      await this.#write(this.#sql.failed, [e.message.slice(0, 500), id]);
      await this.#files.removeUpload(id);
      this.#log.error(`images: upload ${id} cannot be used: ${e.message}`, { code: e.code, id });
      return;
    } finally {
      await copy?.remove();
    }
    const src = await this.#files.saveResult(result.data, result.format);
    await this.#write(this.#sql.ready, [src, result.width, result.height, id]);
    await this.#files.removeUpload(id);
    this.#onReady?.(id);
  }

  /**
   * Deletes uploads nobody attached in time; and, left by a process that died, upload files
   * without a row or whose image is done (ready or failed), and temporary files.
   */
  async #sweep(now: number): Promise<void> {
    const before = now - this.#t.keepUnattachedMs;
    const rows = await this.#engine.reader.all(this.#sql.stale, [before]);
    for (const row of rows) {
      const id = String(row[0]);
      await this.#write(this.#sql.remove, [id]);
      await this.#files.removeUpload(id);
    }
    for (const u of await this.#files.listUploads()) {
      if (u.mtimeMs >= before) continue;
      const known = await this.#engine.reader.all(this.#sql.get, [u.id]);
      if (!known.length || String(known[0]![4]) !== 'uploaded') await this.#files.removeUpload(u.id);
    }
    await this.#files.removeTemporary(before);
    // Files of this machine, by its own clock (a test's clock may run ahead).
    await removeSpooled(Date.now() - this.#t.keepUnattachedMs);
  }
}

/** The temporary copies of uploads (spoolUpload): `laneway-upload-<random>` in the system's temporary directory. */
const SPOOLED = /^laneway-upload-[0-9a-f]{24}$/;

/** Writes an upload to a temporary file, chunk by chunk, for sharp to read (mode 0600). */
async function spoolUpload(upload: StoredImage): Promise<{ file: string; remove(): Promise<void> }> {
  const file = path.join(tmpdir(), `laneway-upload-${randomBytes(12).toString('hex')}`);
  const remove = () => fs.rm(file, { force: true });
  try {
    await pipeline(Readable.from(upload.read()), createWriteStream(file, { flags: 'wx', mode: 0o600 }));
  } catch (e) {
    await remove();
    throw e;
  }
  return { file, remove };
}

/** Deletes the copies a process that died left (spoolUpload) last modified before `before`. */
async function removeSpooled(before: number): Promise<void> {
  const dir = tmpdir();
  let names: string[];
  try {
    names = (await fs.readdir(dir)).filter((n) => SPOOLED.test(n));
  } catch {
    return;
  }
  for (const name of names) {
    const file = path.join(dir, name);
    const stat = await fs.stat(file).catch(() => undefined);
    if (stat && stat.mtimeMs < before) await fs.rm(file, { force: true });
  }
}

/** The file of the test-only hold (TEST_HOLD_ENV); none unless NODE_ENV is `test`. */
function testHoldFile(log: ImageLog): string | undefined {
  const file = process.env[TEST_HOLD_ENV];
  if (!file || process.env.NODE_ENV !== 'test') return undefined;
  log.error(`TEST ONLY: ${TEST_HOLD_ENV}=${file} with NODE_ENV=test: while that file exists, every image is held before it is processed`);
  return file;
}
