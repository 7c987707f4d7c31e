/**
 * The image worker: processes attached uploads after the commit that attached them, from every
 * process that serves the app (docs/images.md "Processing").
 *
 * A pass reads the ids of attached uploads still `uploaded`, takes a lease on each (an UPDATE that
 * succeeds only while nobody holds it), reads the upload's bytes, processes them (process.ts:
 * upright, metadata removed, at most 1000 px, under 500 KB), saves the result under its content
 * hash, marks the row `ready` and deletes the upload. Bytes that turn out not to be a usable image
 * mark the row `failed`. An upload file this process cannot see (another instance's directory
 * that is not shared) is left for its lease to end, and logged.
 *
 * The same pass deletes uploads nobody attached within `keepUnattachedMs` (a day): rows and files,
 * and files without a row (a PUT that died between its file and its row).
 *
 * Images are processed one at a time: sharp runs on libuv's threads, but two large decodes at once
 * would double the memory a pass needs. Passes run one at a time (src/shared/passes.ts).
 */
import { Passes } from '../shared/index.js';
import type { Engine } from '../store/index.js';
import type { ImageFiles } from './files.js';
import { ImageError, processImage } from './process.js';
import { imageSql, type ImageSql } from './table.js';

export interface ImageLog {
  info(message: string): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

export interface ImageTimings {
  pollMs: number;
  leaseMs: number;
  keepUnattachedMs: number;
  sweepEveryMs: number;
}

export const DEFAULT_IMAGE_TIMINGS: ImageTimings = {
  pollMs: 30_000,
  leaseMs: 5 * 60_000,
  keepUnattachedMs: 24 * 3_600_000,
  sweepEveryMs: 10 * 60_000,
};

export interface ImageWorkerOptions {
  log: ImageLog;
  now?: () => number;
  timings?: Partial<ImageTimings>;
  /** Called with each image made ready (the app's cache of image rows). */
  onReady?: (id: string) => void;
}

export class ImageWorker {
  readonly #engine: Engine;
  readonly #files: ImageFiles;
  readonly #log: ImageLog;
  readonly #now: () => number;
  readonly #t: ImageTimings;
  readonly #sql: ImageSql;
  readonly #onReady: ((id: string) => void) | undefined;
  readonly #passes: Passes;
  #lastSweep = -Infinity;
  #lastError: string | undefined;

  constructor(engine: Engine, files: ImageFiles, options: ImageWorkerOptions) {
    this.#engine = engine;
    this.#files = files;
    this.#log = options.log;
    this.#now = options.now ?? Date.now;
    this.#t = { ...DEFAULT_IMAGE_TIMINGS, ...options.timings };
    this.#sql = imageSql(engine.dialect);
    this.#onReady = options.onReady;
    this.#passes = new Passes(() => this.#run(), this.#t.pollMs);
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
      const rows = await w.all(this.#sql.claim, [now + this.#t.leaseMs, id, now]);
      await w.commit();
      return rows.length > 0;
    } catch (e) {
      await w.rollback();
      throw e;
    }
  }

  async #process(id: string): Promise<void> {
    const bytes = await this.#files.readUpload(id);
    if (!bytes) {
      this.#log.error(`images: the upload ${id} is not in ${this.#files.dir} on this instance; with several instances, every one must share that directory (docs/images.md)`, { code: 'LW_IMAGE_STORE', id });
      return;
    }
    let result;
    try {
      result = await processImage(bytes);
    } catch (e) {
      if (!(e instanceof ImageError)) throw e;
      await this.#write(this.#sql.failed, [e.message.slice(0, 500), id]);
      await this.#files.removeUpload(id);
      this.#log.error(`images: upload ${id} cannot be used: ${e.message}`, { code: e.code, id });
      return;
    }
    const src = await this.#files.saveResult(result.data, result.format);
    await this.#write(this.#sql.ready, [src, result.width, result.height, id]);
    await this.#files.removeUpload(id);
    this.#onReady?.(id);
  }

  /** Deletes uploads nobody attached in time, and upload files without a row. */
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
      if (!known.length) await this.#files.removeUpload(u.id);
    }
  }
}
