/**
 * What an upload is, told from its first bytes as they arrive (docs/images.md "The upload, in
 * three steps"): its format by the magic bytes (sniff.ts), its size in pixels and its EXIF
 * orientation by the `image-size` package, so that a decompression bomb is refused before the
 * rest of it has arrived, let alone been decoded.
 *
 * `image-size` reads a whole buffer and throws when the header is not all in it, so the scanner
 * copies the first bytes into a buffer of its own and asks again as more arrive, until it answers
 * or HEADER_MAX_BYTES are held. The worker checks the whole image again before decoding it
 * (process.ts); this is the early refusal.
 */
import { createRequire } from 'node:module';
import type * as ImageSizeModule from 'image-size';
import { sniffImage, type ImageFormat } from './sniff.js';

// image-size is loaded on the first upload: apps without image fields never load it.
let loadedImageSize: typeof ImageSizeModule | undefined;
const imageSize = (input: Uint8Array) => (loadedImageSize ??= createRequire(import.meta.url)('image-size') as typeof ImageSizeModule).imageSize(input);

export interface ImageHeader {
  format: ImageFormat;
  width: number;
  height: number;
  /** EXIF orientation 1 to 8 (1: none or unreadable); 5 to 8 swap width and height when upright. */
  orientation: number;
}

/** Why the first bytes are refused: not one of the three formats, or one whose header is broken. */
export type HeaderProblem = 'not-image' | 'unreadable';

/**
 * The most bytes held to find the header. A PNG's or a GIF's size is in its first 24 bytes; a
 * JPEG's comes in its frame marker, after its EXIF, ICC and other APP segments (up to 64 KiB
 * each): a JPEG whose frame does not start within 512 KiB is unreadable (docs/images.md).
 */
export const HEADER_MAX_BYTES = 512 * 1024;

const EMPTY = Buffer.alloc(0);

/** The bytes looked at to tell the format (sniff.ts needs 8 for a PNG). */
const SIGNATURE_BYTES = 8;

/** `image-size`'s names of the formats Laneway accepts. */
const FORMATS: ReadonlyMap<string, ImageFormat> = new Map([
  ['png', 'png'],
  ['jpg', 'jpeg'],
  ['gif', 'gif'],
]);

/**
 * Reads an image header from pieces pushed in order. `result` is undefined while more bytes are
 * needed, then the header or the problem; `end()` settles it when the body ends first.
 */
export class HeaderScanner {
  result: ImageHeader | HeaderProblem | undefined;
  /**
   * The first bytes, grown by doubling and let go once `result` is set: a copy, as the scanner
   * must not keep the body's pieces alive.
   */
  #bytes = Buffer.alloc(1024);
  #held = 0;
  #format: ImageFormat | undefined;
  /** How many bytes were held when `image-size` was last asked. */
  #tried = 0;

  /** Looks at the next piece of the body (nothing once `result` is set). */
  push(piece: Buffer): void {
    if (this.result !== undefined) return;
    this.#hold(piece);
    if (this.#held < SIGNATURE_BYTES) return;
    this.#format ??= sniffImage(this.#bytes.subarray(0, SIGNATURE_BYTES));
    if (!this.#format) {
      this.result = 'not-image';
      return;
    }
    // Asked again once the bytes held have doubled: a header found at byte n is found by 2n, and
    // a body sent a byte at a time costs some 20 reads (and copies) of at most 512 KiB, not one per byte.
    if (this.#held >= 2 * this.#tried || this.#held === HEADER_MAX_BYTES) this.#read();
    if (this.result === undefined && this.#held === HEADER_MAX_BYTES) this.result = 'unreadable';
    if (this.result !== undefined) this.#bytes = EMPTY;
  }

  /** The body ended: a header not complete by now is unreadable (or not an image at all). */
  end(): ImageHeader | HeaderProblem {
    if (this.result === undefined && this.#format && this.#held > this.#tried) this.#read();
    this.result ??= sniffImage(this.#bytes.subarray(0, Math.min(this.#held, SIGNATURE_BYTES))) ? 'unreadable' : 'not-image';
    this.#bytes = EMPTY;
    return this.result;
  }

  #hold(piece: Buffer): void {
    const n = Math.min(piece.length, HEADER_MAX_BYTES - this.#held);
    if (this.#held + n > this.#bytes.length) {
      const grown = Buffer.alloc(Math.min(HEADER_MAX_BYTES, Math.max(2 * this.#bytes.length, this.#held + n)));
      this.#bytes.copy(grown, 0, 0, this.#held);
      this.#bytes = grown;
    }
    piece.copy(this.#bytes, this.#held, 0, n);
    this.#held += n;
  }

  /**
   * Asks `image-size`; it throws when the header is cut short (or broken: told only at the end).
   * It is handed a copy of the bytes held, the whole of its memory: it reads through the memory
   * under a view (its `buffer`), past the view's end, and would read our spare room as the image.
   */
  #read(): void {
    this.#tried = this.#held;
    let size: ReturnType<typeof imageSize>;
    try {
      size = imageSize(new Uint8Array(this.#bytes.subarray(0, this.#held)));
    } catch {
      return;
    }
    const { width, height, orientation = 1 } = size;
    if (FORMATS.get(size.type ?? '') !== this.#format || !(width >= 1 && height >= 1)) {
      this.result = 'unreadable';
      return;
    }
    this.result = { format: this.#format!, width, height, orientation: Number.isInteger(orientation) && orientation >= 1 && orientation <= 8 ? orientation : 1 };
  }
}

/** The header of `bytes`, a whole file (or all of it there is). */
export function readImageHeader(bytes: Buffer): ImageHeader | HeaderProblem {
  const s = new HeaderScanner();
  s.push(bytes);
  return s.end();
}
