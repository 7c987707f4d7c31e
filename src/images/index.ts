/**
 * Uploaded images. The pure layer (no HTTP, no database): recognising an upload by its bytes
 * and checking its file name (sniff.ts), reading its header from its first bytes as they arrive
 * (header.ts, with the `image-size` package); turning it into the image the app serves, upright, without metadata, at most 1000
 * pixels on its longest side and under 500 KB, with decompression bombs refused before decoding
 * (process.ts); and the files on disk, uploads by id and processed images by the SHA-256 of their
 * bytes (files.ts), or the same in PostgreSQL, in chunks (database.ts; both behind store.ts),
 * written as the body arrives (receive.ts). Over it, in the app's store: the image table
 * (table.ts) and the worker that processes attached uploads (worker.ts).
 *
 * Wiring, for the server: `receiveUpload(store, id, body)` (checked and stored as the body
 * arrives, refused past UPLOAD_MAX_BYTES), then the worker's `processImage(file)` and
 * `saveResult(data, format)` (an ImageError is the client's fault: a 4xx); serve
 * `openResult(name)`, and sweep `listUploads()` now and then.
 */
export { sniffImage, isValidImageFileName, UPLOAD_MAX_BYTES, type ImageFormat } from './sniff.js';
export {
  processImage,
  ImageError,
  DEFAULT_IMAGE_LIMITS,
  type ImageErrorCode,
  type ProcessOptions,
  type ProcessedImage,
} from './process.js';
export { ImageFiles, UPLOAD_ID, RESULT_NAME } from './files.js';
export { type ImageStore, type StoredImage, type UploadWriter } from './store.js';
export { HeaderScanner, readImageHeader, HEADER_MAX_BYTES, type ImageHeader, type HeaderProblem } from './header.js';
export { receiveUpload, type Received, type ReceiveOptions } from './receive.js';
export { openImageStore, imagesDirectory, importImageFiles, type ImageStoreOptions } from './open.js';
export { DatabaseImages, ensureImageStoreTables, copyImageFiles, CHUNK_BYTES, IMAGE_OBJECT_TABLE, IMAGE_CHUNK_TABLE, type ImportResult } from './database.js';

// In the app's store: the image table and the worker that processes attached uploads.
export { ensureImageTables, insertUpload, attachImages, readImage, IMAGE_TABLE, type ImageRow } from './table.js';
export { ImageWorker, DEFAULT_IMAGE_TIMINGS, type ImageLog, type ImageTimings, type ImageWorkerOptions } from './worker.js';
