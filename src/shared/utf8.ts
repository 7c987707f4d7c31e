/**
 * Text to UTF-8 bytes for answers (docs/architecture.md "Bytes of an answer").
 *
 * `Buffer.from(text)` takes bytes from Node's shared pool only for text of up to 1,365 characters
 * (three bytes each must fit half of its 8 KiB); longer text gets a memory block of its own,
 * allocated in C++ after a first pass that counts the bytes, which costs more than the encoding of
 * a page of a few kilobytes. `utf8Bytes` does what the pool does, with larger slabs: the text is
 * written once into the free end of a 256 KiB slab and the answer is a view of those bytes. A slab
 * is freed by the garbage collector when no view of it is left, so whatever keeps bytes for long
 * (a cache) keeps its own copy (`ownBytes`).
 */

const SLAB_SIZE = 256 * 1024;
/** Text longer than this (in UTF-16 units) gets its own block, as from Buffer.from. */
const SLAB_TEXT = 16 * 1024;
/** Node's pool takes text up to this many units. */
const POOLED_TEXT = 1365;

let slab: Buffer | undefined;
let used = SLAB_SIZE;

/** The UTF-8 bytes of `text`. The Buffer may share its memory with other answers' bytes (never exposed: only its own range is). */
export function utf8Bytes(text: string): Buffer {
  const n = text.length;
  if (n <= POOLED_TEXT || n > SLAB_TEXT) return Buffer.from(text, 'utf8');
  if (used + n * 3 > SLAB_SIZE) {
    slab = Buffer.allocUnsafeSlow(SLAB_SIZE);
    used = 0;
  }
  const start = used;
  const written = slab!.write(text, start, 'utf8');
  // The next view starts on an 8-byte boundary, as the pool's do.
  used = (start + written + 7) & ~7;
  return slab!.subarray(start, start + written);
}

/** `bytes`, copied when they are a small view of a larger block (what a cache keeps must not hold a slab alive). */
export function ownBytes(bytes: Buffer): Buffer {
  return bytes.buffer.byteLength > bytes.length * 2 + 64 ? Buffer.from(bytes) : bytes;
}
