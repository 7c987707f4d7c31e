/**
 * Turning an uploaded image into the one the app keeps and serves (with sharp):
 *
 * 1. The bytes must be a PNG, JPEG or GIF by their magic bytes (sniff.ts), else LW_IMAGE_INVALID.
 * 2. The pixel count the header declares is checked before anything is decoded: a PNG of one
 *    colour at 30000×30000 is a few KB on disk and gigabytes in memory (a decompression bomb).
 *    More than `maxPixels`: LW_IMAGE_TOO_LARGE. Sharp's own `limitInputPixels` stays on as well.
 * 3. One decode, which fails on truncated or corrupt data (LW_IMAGE_INVALID): turned upright
 *    from the EXIF Orientation, the longest side scaled down to `maxSide` (never up), converted to
 *    sRGB, only the first frame of an animated GIF. Its raw pixels are what every encoding below
 *    starts from, so a large input is decoded once however many sizes are tried.
 * 4. A JPEG becomes a progressive JPEG; a PNG or GIF becomes an interlaced PNG, or, when that
 *    PNG is not under `maxBytes`, a progressive JPEG with transparency flattened onto white.
 * 5. A JPEG not under `maxBytes` is encoded again at lower qualities, then at lower sizes (×0.8
 *    each time) at the lowest quality, until it is. The result is always under `maxBytes` (a
 *    `maxBytes` too small for even a 1×1 JPEG is LW_IMAGE_TOO_LARGE).
 *
 * No metadata reaches the output: sharp writes none (EXIF with GPS positions and camera serial
 * numbers, XMP, IPTC, comments, ICC profiles) unless asked, and nothing here asks.
 */
import { promises as fs } from 'node:fs';
import { createRequire } from 'node:module';
import type SharpModule from 'sharp';
import type { Channels, Metadata, Sharp } from 'sharp';

// sharp (libvips) is loaded on first use: apps without image fields never load it.
const require = createRequire(import.meta.url);
let loadedSharp: typeof SharpModule | undefined;
const sharp: typeof SharpModule = ((...args: Parameters<typeof SharpModule>) => (loadedSharp ??= require('sharp') as typeof SharpModule)(...args)) as typeof SharpModule;
import { sniffImage } from './sniff.js';

export type ImageErrorCode = 'LW_IMAGE_INVALID' | 'LW_IMAGE_TOO_LARGE';

/** An upload refused: not an image we take or a broken one (INVALID), or too many pixels (TOO_LARGE). */
export class ImageError extends Error {
  readonly code: ImageErrorCode;
  constructor(code: ImageErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ImageError';
    this.code = code;
  }
}

export interface ProcessOptions {
  /** Longest side of the result, in pixels. */
  maxSide?: number;
  /** The result's size in bytes is below this. */
  maxBytes?: number;
  /** Inputs declaring more pixels (width × height) are refused undecoded. */
  maxPixels?: number;
}

export interface ProcessedImage {
  data: Buffer;
  format: 'jpeg' | 'png';
  /** After rotation and resizing. */
  width: number;
  height: number;
}

export const DEFAULT_IMAGE_LIMITS = { maxSide: 1000, maxBytes: 500 * 1024, maxPixels: 50_000_000 } as const;

/** Qualities tried in turn for a JPEG that is too large; the last one is kept while shrinking. */
const JPEG_QUALITIES = [82, 72, 62, 52, 42] as const;
/** Factor applied to both sides each time the lowest quality is still too large. */
const SHRINK = 0.8;
const WHITE = '#ffffff';

/** Decoded pixels: 8 bits per channel, sRGB (a grey input too), with or without alpha. */
interface Pixels {
  data: Buffer;
  width: number;
  height: number;
  channels: Channels;
}

/** An option's value, or its default; a RangeError unless it is a positive integer. */
function limit(options: ProcessOptions, name: keyof ProcessOptions): number {
  const value = options[name] ?? DEFAULT_IMAGE_LIMITS[name];
  if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`processImage: ${name} must be a positive integer, not ${value}`);
  return value;
}

/**
 * Checks, orients, resizes, strips and re-encodes an upload; throws an ImageError when refused.
 * `input`: the bytes, or the path of the file they are in, which libvips then reads itself, in
 * sequence, as it decodes (the upload is never whole in JavaScript's memory: docs/images.md).
 */
export async function processImage(input: Buffer | string, options: ProcessOptions = {}): Promise<ProcessedImage> {
  const maxSide = limit(options, 'maxSide');
  const maxBytes = limit(options, 'maxBytes');
  const maxPixels = limit(options, 'maxPixels');

  const format = sniffImage(typeof input === 'string' ? await firstBytes(input, 8) : input);
  if (!format) throw new ImageError('LW_IMAGE_INVALID', 'the file is not a PNG, JPEG or GIF image');
  await checkPixelCount(input, maxPixels);
  const pixels = await decode(input, maxSide, maxPixels);
  if (format !== 'jpeg') {
    const png = await toPng(pixels);
    if (png.data.length < maxBytes) return png;
  }
  return jpegUnder(pixels, maxBytes);
}

/** The first `n` bytes of a file (fewer when it is shorter). */
async function firstBytes(file: string, n: number): Promise<Buffer> {
  const handle = await fs.open(file, 'r');
  try {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(n), 0, n, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/** The image's header (sharp's metadata() decodes no pixels). */
async function readHeader(input: Buffer | string): Promise<Metadata> {
  try {
    // No pixel limit here: the point is to read the dimensions of an image over it.
    return await sharp(input, { limitInputPixels: false }).metadata();
  } catch (e) {
    throw new ImageError('LW_IMAGE_INVALID', 'the image header cannot be read', { cause: e });
  }
}

async function checkPixelCount(input: Buffer | string, maxPixels: number): Promise<void> {
  const { width, height } = await readHeader(input);
  if (width * height > maxPixels) {
    throw new ImageError('LW_IMAGE_TOO_LARGE', `the image is ${width}×${height} pixels, more than ${maxPixels} in all`);
  }
}

async function decode(input: Buffer | string, maxSide: number, maxPixels: number): Promise<Pixels> {
  try {
    const { data, info } = await sharp(input, {
      limitInputPixels: maxPixels,
      // Refuses truncated and corrupt data. 'warning' (sharp's default) would also refuse the
      // many camera and phone files that only carry a harmless oddity (extraneous bytes, an
      // imperfect ICC profile), which decode correctly.
      failOn: 'error',
      sequentialRead: true,
      autoOrient: true,
      // The first frame of an animated GIF.
      pages: 1,
    })
      .resize({ width: maxSide, height: maxSide, fit: 'inside', withoutEnlargement: true })
      .raw({ depth: 'uchar' })
      .toBuffer({ resolveWithObject: true });
    return { data, width: info.width, height: info.height, channels: info.channels };
  } catch (e) {
    throw new ImageError('LW_IMAGE_INVALID', 'the image cannot be decoded (truncated or corrupt)', { cause: e });
  }
}

/** The pixels as a sharp pipeline, resized to `width`×`height` when that differs. */
function fromPixels(p: Pixels, width = p.width, height = p.height): Sharp {
  const image = sharp(p.data, { raw: { width: p.width, height: p.height, channels: p.channels } });
  return width === p.width && height === p.height ? image : image.resize({ width, height, fit: 'fill' });
}

async function finish(image: Sharp, format: ProcessedImage['format']): Promise<ProcessedImage> {
  const { data, info } = await image.toBuffer({ resolveWithObject: true });
  return { data, format, width: info.width, height: info.height };
}

function toPng(p: Pixels): Promise<ProcessedImage> {
  return finish(fromPixels(p).png({ progressive: true, compressionLevel: 9 }), 'png');
}

interface JpegAttempt {
  quality: number;
  width: number;
  height: number;
}

function toJpeg(p: Pixels, { quality, width, height }: JpegAttempt): Promise<ProcessedImage> {
  return finish(fromPixels(p, width, height).flatten({ background: WHITE }).jpeg({ quality, progressive: true }), 'jpeg');
}

/** The encodings tried in turn: each quality at full size, then smaller and smaller at the lowest. */
function* jpegAttempts(p: Pixels): Generator<JpegAttempt> {
  let { width, height } = p;
  for (const quality of JPEG_QUALITIES) yield { quality, width, height };
  const quality = JPEG_QUALITIES[JPEG_QUALITIES.length - 1];
  while (width > 1 || height > 1) {
    width = Math.max(1, Math.floor(width * SHRINK));
    height = Math.max(1, Math.floor(height * SHRINK));
    yield { quality, width, height };
  }
}

async function jpegUnder(p: Pixels, maxBytes: number): Promise<ProcessedImage> {
  for (const attempt of jpegAttempts(p)) {
    const jpeg = await toJpeg(p, attempt);
    if (jpeg.data.length < maxBytes) return jpeg;
  }
  // Only a maxBytes below the size of a 1×1 JPEG (a few hundred bytes) ends here.
  throw new ImageError('LW_IMAGE_TOO_LARGE', `the image cannot be encoded in less than ${maxBytes} bytes`);
}
