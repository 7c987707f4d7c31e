/**
 * What an upload is, told from its bytes: the three formats Laneway accepts (PNG, JPEG, GIF) are
 * recognised by their magic bytes only. A file name or a Content-Type header is whatever the
 * visitor's browser (or a script) says; an SVG named `cat.png`, or HTML sent as `image/jpeg`, must
 * not reach the image decoder as if it were a picture.
 *
 * The file name an upload came with is kept only to show it back; it is checked here so that it
 * can be shown (and put in a Content-Disposition header) without surprises.
 */

export type ImageFormat = 'png' | 'jpeg' | 'gif';

/** Largest upload accepted, in bytes, before any processing. */
export const UPLOAD_MAX_BYTES = 10 * 1024 * 1024;

/** Longest file name accepted, in UTF-16 code units (as JavaScript counts a string's length). */
const MAX_NAME = 200;

function ascii(text: string): number[] {
  return [...text].map((c) => c.charCodeAt(0));
}

// The first bytes of each format: PNG's 8-byte signature, a JPEG's SOI marker followed by the
// first byte of the next marker, and GIF's two version headers.
const SIGNATURES: ReadonlyArray<readonly [ImageFormat, readonly number[]]> = [
  ['png', [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]],
  ['jpeg', [0xff, 0xd8, 0xff]],
  ['gif', ascii('GIF87a')],
  ['gif', ascii('GIF89a')],
];

// A base name of at least one character, then the extension; no path separator and no control
// character (C0, DEL, C1) anywhere.
const IMAGE_NAME = /^[^/\\\p{Cc}]+\.(?:png|jpe?g|gif)$/iu;

function startsWith(bytes: Uint8Array, magic: readonly number[]): boolean {
  return bytes.length >= magic.length && magic.every((b, i) => bytes[i] === b);
}

/** The format `bytes` begin with, or undefined for anything else (an empty file included). */
export function sniffImage(bytes: Uint8Array): ImageFormat | undefined {
  return SIGNATURES.find(([, magic]) => startsWith(bytes, magic))?.[0];
}

/**
 * True for a string of 1 to 200 characters ending in `.png`, `.jpg`, `.jpeg` or `.gif` (in any
 * case), with a base name before the extension and neither `/`, `\` nor a control character.
 */
export function isValidImageFileName(name: unknown): boolean {
  return typeof name === 'string' && name.length <= MAX_NAME && IMAGE_NAME.test(name);
}
