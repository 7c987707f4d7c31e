/**
 * What an upload is, told from its first bytes as they arrive (docs/images.md "The upload, in
 * three steps"): its format by the magic bytes (sniff.ts), its size in pixels and its EXIF
 * orientation, read from the header as sharp reads it, so that a decompression bomb is refused
 * before the rest of it has arrived, let alone been decoded.
 *
 * - PNG: the IHDR chunk (it comes first), then the chunks up to the first IDAT, for an `eXIf`.
 * - GIF: the logical screen's width and height (bytes 6 to 9).
 * - JPEG: the markers up to SOS (the start of the scan): the first SOFn gives the size, an APP1
 *   `Exif` segment the orientation (the last one wins, as in libvips).
 *
 * The scanner is pushed the pieces of the body and keeps none of them: it copies only what it
 * looks at (at most one 64 KiB EXIF segment) and skips the rest by counting. The worker checks
 * the whole image again before decoding it (process.ts); this is the early refusal.
 */
import { sniffImage, type ImageFormat } from './sniff.js';

export interface ImageHeader {
  format: ImageFormat;
  width: number;
  height: number;
  /** EXIF orientation 1 to 8 (1: none or unreadable); 5 to 8 swap width and height when upright. */
  orientation: number;
}

/** Why the first bytes are refused: not one of the three formats, or one whose header is broken. */
export type HeaderProblem = 'not-image' | 'unreadable';

/** What the scanner asks for next: `take` that many bytes (handed to it), or `skip` them. */
type Need = { take: number } | { skip: number };
type Scan<T> = Generator<Need, T, Buffer>;

const EMPTY = Buffer.alloc(0);
/** The largest EXIF block looked at (a JPEG segment cannot be larger). */
const EXIF_MAX = 65_536;
/** How many stray or fill bytes may come before a JPEG marker's code. */
const MARKER_SEARCH = 1024;
/** SOF0..SOF15 without DHT (C4), JPG (C8) and DAC (CC): the markers that carry the frame's size. */
const SOF = new Set([0xc0, 0xc1, 0xc2, 0xc3, 0xc5, 0xc6, 0xc7, 0xc9, 0xca, 0xcb, 0xcd, 0xce, 0xcf]);

/**
 * Reads an image header from pieces pushed in order. `result` is undefined while more bytes are
 * needed, then the header or the problem; `end()` settles it when the body ends first.
 */
export class HeaderScanner {
  result: ImageHeader | HeaderProblem | undefined;
  readonly #scan: Scan<ImageHeader | HeaderProblem>;
  #need: Need = { take: 0 };
  readonly #taken: Buffer[] = [];
  #takenBytes = 0;
  /** The first bytes, until the format is known (to tell a short non-image from a short image). */
  #first = EMPTY;

  constructor() {
    this.#scan = scanImage();
    this.#advance(EMPTY);
  }

  /** Looks at the next piece of the body (nothing once `result` is set). */
  push(piece: Buffer): void {
    if (this.#first.length < 8) this.#first = Buffer.concat([this.#first, piece.subarray(0, 8 - this.#first.length)]);
    let at = 0;
    while (this.result === undefined && at < piece.length) {
      const need = this.#need;
      if ('skip' in need) {
        const n = Math.min(need.skip, piece.length - at);
        at += n;
        need.skip -= n;
        if (need.skip === 0) this.#advance(EMPTY);
      } else {
        const n = Math.min(need.take - this.#takenBytes, piece.length - at);
        // A copy: the scanner must not keep the body's pieces alive.
        this.#taken.push(Buffer.from(piece.subarray(at, at + n)));
        this.#takenBytes += n;
        at += n;
        if (this.#takenBytes === need.take) {
          const bytes = Buffer.concat(this.#taken, this.#takenBytes);
          this.#taken.length = 0;
          this.#takenBytes = 0;
          this.#advance(bytes);
        }
      }
    }
  }

  /** The body ended: a header not complete by now is unreadable (or not an image at all). */
  end(): ImageHeader | HeaderProblem {
    this.result ??= sniffImage(this.#first) ? 'unreadable' : 'not-image';
    return this.result;
  }

  #advance(value: Buffer): void {
    for (;;) {
      const step = this.#scan.next(value);
      if (step.done) {
        this.result = step.value;
        return;
      }
      const need = step.value;
      if (('take' in need ? need.take : need.skip) > 0) {
        this.#need = need;
        return;
      }
      value = EMPTY;
    }
  }
}

/** The header of `bytes`, a whole file or its beginning (undefined: more bytes are needed). */
export function readImageHeader(bytes: Buffer): ImageHeader | HeaderProblem | undefined {
  const s = new HeaderScanner();
  s.push(bytes);
  return s.result;
}

/**
 * The scan. `take` and `skip` first serve the bytes already read (`rest`), then ask the scanner;
 * a function's `yield*` of them is a wait for the body.
 */
function* scanImage(): Scan<ImageHeader | HeaderProblem> {
  let rest: Buffer = EMPTY;
  function* take(n: number): Scan<Buffer> {
    if (rest.length >= n) {
      const b = rest.subarray(0, n);
      rest = rest.subarray(n);
      return b;
    }
    const more = yield { take: n - rest.length };
    const b = rest.length ? Buffer.concat([rest, more]) : more;
    rest = EMPTY;
    return b;
  }
  function* skip(n: number): Scan<void> {
    if (rest.length >= n) {
      rest = rest.subarray(n);
      return;
    }
    yield { skip: n - rest.length };
    rest = EMPTY;
  }

  const head = yield* take(8);
  const format = sniffImage(head);
  if (!format) return 'not-image';
  if (format === 'gif') {
    const height = yield* take(2);
    return { format, width: head.readUInt16LE(6), height: height.readUInt16LE(0), orientation: 1 };
  }
  if (format === 'png') return yield* scanPng(take, skip);
  rest = head.subarray(2);
  return yield* scanJpeg(take, skip);
}

type Take = (n: number) => Scan<Buffer>;
type Skip = (n: number) => Scan<void>;

/** After the signature: IHDR, then chunks up to the first IDAT (an `eXIf` among them). */
function* scanPng(take: Take, skip: Skip): Scan<ImageHeader | HeaderProblem> {
  const ihdr = yield* take(8 + 13 + 4);
  if (ihdr.readUInt32BE(0) !== 13 || ihdr.toString('latin1', 4, 8) !== 'IHDR') return 'unreadable';
  const width = ihdr.readUInt32BE(8);
  const height = ihdr.readUInt32BE(12);
  if (!width || !height) return 'unreadable';
  let orientation = 1;
  for (;;) {
    const chunk = yield* take(8);
    const length = chunk.readUInt32BE(0);
    const type = chunk.toString('latin1', 4, 8);
    if (length > 0x7fffffff || type === 'IEND') return 'unreadable';
    if (type === 'IDAT') return { format: 'png', width, height, orientation };
    if (type === 'eXIf' && length <= EXIF_MAX) {
      orientation = exifOrientation(yield* take(length));
      yield* skip(4);
    } else yield* skip(length + 4);
  }
}

/** After SOI: marker segments up to SOS. */
function* scanJpeg(take: Take, skip: Skip): Scan<ImageHeader | HeaderProblem> {
  let size: { width: number; height: number } | undefined;
  let orientation = 1;
  for (;;) {
    // A marker is 0xFF (any number of them: fill bytes) and a code; a few bytes before it are
    // skipped, as libjpeg does (with a warning), but not a file's worth, byte by byte.
    let code = (yield* take(1))[0]!;
    for (let n = 0; code !== 0xff; n++) {
      if (n === MARKER_SEARCH) return 'unreadable';
      code = (yield* take(1))[0]!;
    }
    for (let n = 0; code === 0xff; n++) {
      if (n === MARKER_SEARCH) return 'unreadable';
      code = (yield* take(1))[0]!;
    }
    if (code === 0x01 || (code >= 0xd0 && code <= 0xd7)) continue;
    if (code === 0xd8 || code === 0xd9) return 'unreadable';
    if (code === 0xda) return size ? { format: 'jpeg', ...size, orientation } : 'unreadable';
    const length = (yield* take(2)).readUInt16BE(0);
    if (length < 2) return 'unreadable';
    const body = length - 2;
    if (SOF.has(code)) {
      if (size || body < 5) return 'unreadable';
      const frame = yield* take(body);
      size = { height: frame.readUInt16BE(1), width: frame.readUInt16BE(3) };
      if (!size.width || !size.height) return 'unreadable';
    } else if (code === 0xe1 && body >= 6) {
      const tag = yield* take(6);
      if (tag.toString('latin1') === 'Exif\0\0') orientation = exifOrientation(yield* take(body - 6));
      else yield* skip(body - 6);
    } else yield* skip(body);
  }
}

/** The Orientation (tag 0x0112) of IFD0 of a TIFF block (`Exif\0\0` before it or not); 1 when absent. */
export function exifOrientation(block: Buffer): number {
  const tiff = block.toString('latin1', 0, 6) === 'Exif\0\0' ? block.subarray(6) : block;
  if (tiff.length < 8) return 1;
  const order = tiff.toString('latin1', 0, 2);
  if (order !== 'II' && order !== 'MM') return 1;
  const le = order === 'II';
  const u16 = (o: number) => (le ? tiff.readUInt16LE(o) : tiff.readUInt16BE(o));
  const u32 = (o: number) => (le ? tiff.readUInt32LE(o) : tiff.readUInt32BE(o));
  if (u16(2) !== 42) return 1;
  const ifd = u32(4);
  if (ifd + 2 > tiff.length) return 1;
  const count = u16(ifd);
  for (let i = 0; i < count; i++) {
    const entry = ifd + 2 + 12 * i;
    if (entry + 12 > tiff.length) return 1;
    if (u16(entry) !== 0x0112) continue;
    const type = u16(entry + 2);
    const value = type === 3 ? u16(entry + 8) : type === 4 ? u32(entry + 8) : 0;
    return value >= 1 && value <= 8 ? value : 1;
  }
  return 1;
}
