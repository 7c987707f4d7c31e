/**
 * An upload's body, from the request into the store as it arrives (docs/images.md "The upload,
 * in three steps"). No more than a chunk of it is ever in memory:
 *
 * 1. Each piece is counted: past `maxBytes` the upload is refused at once (chunked bodies, which
 *    give no Content-Length, included).
 * 2. The first pieces go through the header scanner (header.ts, which copies up to 512 KiB of
 *    them for the `image-size` package) until it knows the format and the size in pixels: not an
 *    image, a broken header or too many pixels refuse the upload then, with the rest of the body
 *    unread. Meanwhile they are held (up to CHUNK_BYTES; a header that runs longer is scanned
 *    while the pieces go on to the store).
 * 3. The store's writer (createUpload) is opened once the header is known or a chunk's worth is
 *    held, and takes every piece from then on (the database stores each 256 KiB chunk as it
 *    fills; a directory appends to a temporary file).
 * 4. At the end: `admit` with the size (the limit of uploaded bytes, when it could not be asked
 *    before with a Content-Length), then the commit, which makes the upload readable under its id.
 *
 * Whatever ends it early (a refusal, the client gone, an error) deletes what was written.
 */
import { CHUNK_BYTES } from './database.js';
import { HeaderScanner, type ImageHeader } from './header.js';
import type { ImageStore, UploadWriter } from './store.js';

export interface ReceiveOptions<R> {
  maxBytes: number;
  maxPixels: number;
  /** Asked with the upload's size before the commit: a value refuses it (and is answered back). */
  admit?: ((size: number) => R | undefined | Promise<R | undefined>) | undefined;
}

/** How a received upload ended: stored (with its size in pixels, upright), or why not. */
export type Received<R> =
  | { stored: true; size: number; width: number; height: number }
  | { stored: false; why: 'not-image' | 'unreadable' | 'too-large' | 'too-many-pixels' | 'used' }
  | { stored: false; why: 'refused'; refusal: R };

/** Reads `body` into the store under `id` (steps 1 to 4 above). Rejects with what `body` rejects with. */
export async function receiveUpload<R>(store: ImageStore, id: string, body: AsyncIterable<Buffer>, options: ReceiveOptions<R>): Promise<Received<R>> {
  const scanner = new HeaderScanner();
  let header: ImageHeader | undefined;
  let writer: UploadWriter | undefined;
  let held: Buffer[] = [];
  let heldBytes = 0;
  let size = 0;
  let committed = false;
  const open = async (): Promise<boolean> => {
    try {
      writer = await store.createUpload(id);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw e;
    }
    for (const piece of held) await writer.write(piece);
    held = [];
    return true;
  };
  try {
    for await (const piece of body) {
      size += piece.length;
      if (size > options.maxBytes) return { stored: false, why: 'too-large' };
      if (!header) {
        scanner.push(piece);
        const r = scanner.result;
        if (typeof r === 'string') return { stored: false, why: r };
        if (r) {
          if (r.width * r.height > options.maxPixels) return { stored: false, why: 'too-many-pixels' };
          header = r;
        }
      }
      if (writer) await writer.write(piece);
      else {
        held.push(piece);
        heldBytes += piece.length;
        if ((header || heldBytes >= CHUNK_BYTES) && !(await open())) return { stored: false, why: 'used' };
      }
    }
    if (!header) {
      const r = scanner.end();
      if (typeof r === 'string') return { stored: false, why: r };
      header = r;
    }
    if (!writer && !(await open())) return { stored: false, why: 'used' };
    const refusal = await options.admit?.(size);
    if (refusal !== undefined) return { stored: false, why: 'refused', refusal };
    try {
      await writer!.commit();
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST') return { stored: false, why: 'used' };
      throw e;
    }
    committed = true;
    const turned = header.orientation >= 5;
    return { stored: true, size, width: turned ? header.height : header.width, height: turned ? header.width : header.height };
  } finally {
    // Deleted at once; should that fail too (the database gone), the sweep deletes it in a day.
    if (writer && !committed) await (writer as UploadWriter).abort().catch(() => {});
  }
}
