/**
 * Which store an app's images go to (docs/images.md "Where the images are"): on PostgreSQL, the
 * database itself unless LANEWAY_IMAGES_DIR names a directory; on SQLite, a directory
 * (LANEWAY_IMAGES_DIR, else `<data>/images`). A nested site with a namespace keeps its images
 * apart: a sub-directory of that name, or its own PostgreSQL schema (the engine is opened on it).
 */
import path from 'node:path';
import type { Engine } from '../store/index.js';
import { copyImageFiles, DatabaseImages, ensureImageStoreTables, type ImportResult } from './database.js';
import { ImageFiles } from './files.js';
import type { ImageStore } from './store.js';

export interface ImageStoreOptions {
  dataDir: string;
  namespace?: string | undefined;
  /** LANEWAY_IMAGES_DIR. */
  imagesDir?: string | undefined;
}

/** The images directory the options name (LANEWAY_IMAGES_DIR, else `<data>/images`, per namespace). */
export function imagesDirectory(options: ImageStoreOptions): string {
  const dir = options.imagesDir ? path.resolve(options.imagesDir) : path.join(options.dataDir, 'images');
  return options.namespace ? path.join(dir, options.namespace) : dir;
}

/** Opens the app's image store, creating the database tables it needs. */
export async function openImageStore(engine: Engine, options: ImageStoreOptions): Promise<ImageStore> {
  const files = new ImageFiles(imagesDirectory(options));
  if (engine.dialect !== 'postgres' || options.imagesDir) return files;
  await ensureImageStoreTables(engine);
  // The directory of before stays readable until `laneway migrate --images` copies it in.
  return new DatabaseImages(engine, files);
}

/**
 * `laneway migrate --images` (docs/images.md): copies the images directory the options name
 * (LANEWAY_IMAGES_DIR, else `<data>/images`) into the PostgreSQL database; answers what it did.
 */
export async function importImageFiles(engine: Engine, options: ImageStoreOptions): Promise<ImportResult & { from: string }> {
  if (engine.dialect !== 'postgres') throw new TypeError('images are kept in the database on PostgreSQL only');
  const files = new ImageFiles(imagesDirectory(options));
  await ensureImageStoreTables(engine);
  return { ...(await copyImageFiles(engine, new DatabaseImages(engine), files)), from: files.dir };
}
