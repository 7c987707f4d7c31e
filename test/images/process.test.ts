/**
 * The image rules without a server: sniffing formats by their bytes, upload file names, and
 * processImage (orientation, metadata removal, sizes, the byte budget, decompression bombs,
 * broken files). Every image is made here with sharp; none is checked in.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import sharp, { type Color, type Metadata, type Sharp } from 'sharp';
import { ImageError, isValidImageFileName, processImage, sniffImage, type ImageErrorCode, type ProcessedImage } from '../../src/images/index.js';

const RED = { r: 255, g: 0, b: 0 };
const BLUE = { r: 0, g: 0, b: 255 };

function flat(width: number, height: number, background: Color = '#3a6'): Sharp {
  return sharp({ create: { width, height, channels: 3, background } });
}

/** Random RGB (or RGBA) pixels: nothing for PNG or JPEG to compress. */
function noise(width: number, height: number, channels: 3 | 4 = 3): Sharp {
  return sharp(randomBytes(width * height * channels), { raw: { width, height, channels } });
}

/** A left half of `left` and a right half of `right`, to see which way an image was turned. */
function halves(width: number, height: number, left: Color, right: Color): Sharp {
  const half = { create: { width: width / 2, height, channels: 3 as const, background: left } };
  return sharp({ create: { width, height, channels: 3, background: right } }).composite([{ input: half, left: 0, top: 0 }]);
}

/** The RGB of one pixel of an encoded image. */
async function pixel(image: Buffer, x: number, y: number): Promise<[number, number, number]> {
  const { data, info } = await sharp(image).raw().toBuffer({ resolveWithObject: true });
  const i = (y * info.width + x) * info.channels;
  return [data[i]!, data[i + 1]!, data[i + 2]!];
}

function near(actual: readonly number[], expected: readonly number[], tolerance = 24): boolean {
  return actual.every((v, i) => Math.abs(v - expected[i]!) <= tolerance);
}

/** Checks what processImage says against the bytes it returns. */
async function described(out: ProcessedImage): Promise<Metadata> {
  const meta = await sharp(out.data).metadata();
  assert.equal(meta.format, out.format);
  assert.equal(sniffImage(out.data), out.format);
  assert.equal(meta.width, out.width);
  assert.equal(meta.height, out.height);
  return meta;
}

async function refused(input: Buffer, code: ImageErrorCode, options?: Parameters<typeof processImage>[1]): Promise<void> {
  await assert.rejects(processImage(input, options), (e: unknown) => e instanceof ImageError && e.code === code && e.name === 'ImageError');
}

/** One PNG chunk: length, type, data and CRC. */
function pngChunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

// CRC-32 as PNG chunks carry it (ISO 3309; node:zlib has crc32 only from Node 20.15).
function crc32(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of bytes) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = crc & 1 ? (crc >>> 1) ^ 0xedb88320 : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

// A PNG made by sharp: the 8-byte signature, then the IHDR chunk (13 bytes of data from byte 16).
const IHDR_DATA = 16;
const IHDR_END = 33;

/**
 * A PNG whose header declares `width`×`height` pixels while its data holds a 16×16 image. Encoding
 * a real 20000×20000 image takes sharp seconds; this one is refused as TOO_LARGE only if the
 * header is checked before decoding: a decode would fail on the missing data (INVALID).
 */
async function declaredPng(width: number, height: number): Promise<Buffer> {
  const png = await flat(16, 16, '#fff').png().toBuffer();
  const ihdr = Buffer.from(png.subarray(IHDR_DATA, IHDR_END - 4));
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  return Buffer.concat([png.subarray(0, 8), pngChunk('IHDR', ihdr), png.subarray(IHDR_END)]);
}

describe('sniffImage', () => {
  it('recognises PNG, JPEG and both GIF versions by their first bytes', async () => {
    assert.equal(sniffImage(await flat(8, 8).png().toBuffer()), 'png');
    assert.equal(sniffImage(await flat(8, 8).jpeg().toBuffer()), 'jpeg');
    const gif = await flat(8, 8).gif().toBuffer();
    assert.equal(sniffImage(gif), 'gif');
    assert.equal(sniffImage(Buffer.concat([Buffer.from('GIF87a'), gif.subarray(6)])), 'gif');
    assert.equal(sniffImage(new Uint8Array([0xff, 0xd8, 0xff])), 'jpeg');
  });

  it('goes by the bytes, not the name: a PNG named photo.jpg is a PNG', async () => {
    const png = await flat(8, 8).png().toBuffer();
    assert.equal(isValidImageFileName('photo.jpg'), true);
    assert.equal(sniffImage(png), 'png');
  });

  it('refuses text, SVG, other formats, empty and cut-off signatures', async () => {
    assert.equal(sniffImage(Buffer.from('hello, world\n')), undefined);
    assert.equal(sniffImage(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>')), undefined);
    assert.equal(sniffImage(Buffer.from('<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"/>')), undefined);
    assert.equal(sniffImage(await flat(8, 8).webp().toBuffer()), undefined);
    assert.equal(sniffImage(new Uint8Array()), undefined);
    assert.equal(sniffImage(new Uint8Array([0x89, 0x50, 0x4e, 0x47])), undefined);
    assert.equal(sniffImage(new Uint8Array([0xff, 0xd8])), undefined);
    assert.equal(sniffImage(Buffer.from('GIF88a')), undefined);
    assert.equal(sniffImage(Buffer.from(' GIF89a')), undefined);
  });
});

describe('isValidImageFileName', () => {
  it('accepts the four extensions in any case', () => {
    for (const name of ['a.png', 'photo.jpg', 'Photo.JPEG', 'anim.Gif', 'my holiday (2).jpeg', 'été 日本.png', 'x'.repeat(196) + '.png']) {
      assert.equal(isValidImageFileName(name), true, name);
    }
  });

  it('refuses other extensions, a missing base name, separators, control characters, length and non-strings', () => {
    const bad: unknown[] = [
      '', '.png', 'png', 'photo', 'photo.svg', 'photo.webp', 'photo.jpg.exe', 'photo.png ', 'photo.jpe', 'photo.',
      'a/b.png', '../b.png', 'a\\b.png', 'C:\\x\\b.png',
      'a\u0000.png', 'a\n.png', 'a\r.png', 'a\t.png', 'a\u007f.png', 'a\u0085.png', 'photo.png\n',
      'x'.repeat(197) + '.png',
      undefined, null, 42, ['a.png'], { name: 'a.png' },
    ];
    for (const name of bad) assert.equal(isValidImageFileName(name), false, JSON.stringify(name));
  });
});

describe('processImage', () => {
  it('scales a 3000×2000 JPEG down to 1000×667 as a progressive JPEG', async () => {
    const out = await processImage(await flat(3000, 2000).jpeg().toBuffer());
    const meta = await described(out);
    assert.equal(out.format, 'jpeg');
    assert.equal(out.width, 1000);
    assert.ok(Math.abs(out.height - 667) <= 1, `height ${out.height}`);
    assert.equal(meta.isProgressive, true);
    assert.ok(out.data.length < 500 * 1024);
  });

  it('never enlarges a small image, and keeps a small flat PNG a PNG (interlaced)', async () => {
    const jpeg = await processImage(await flat(300, 200).jpeg().toBuffer());
    assert.deepEqual([jpeg.format, jpeg.width, jpeg.height], ['jpeg', 300, 200]);
    const png = await processImage(await flat(300, 200).png().toBuffer());
    const meta = await described(png);
    assert.deepEqual([png.format, png.width, png.height], ['png', 300, 200]);
    assert.equal(meta.isProgressive, true);
  });

  it('honours maxSide, for the longest side whichever it is', async () => {
    const out = await processImage(await flat(200, 800).png().toBuffer(), { maxSide: 100 });
    assert.deepEqual([out.width, out.height], [25, 100]);
  });

  it('turns an image upright from EXIF orientation 6 and removes every piece of metadata', async () => {
    // 400×200, red left half, stored as orientation 6: shown turned 90° clockwise, red on top.
    const input = await halves(400, 200, RED, BLUE)
      .jpeg()
      .withMetadata({ orientation: 6 })
      .withExif({ IFD0: { Make: 'TestCam', Model: 'T-1000' }, IFD3: { GPSLatitudeRef: 'N', GPSLatitude: '51/1 30/1 0/1' } })
      .withXmp('<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"/></x:xmpmeta>')
      .withIccProfile('p3')
      .toBuffer();
    const before = await sharp(input).metadata();
    assert.equal(before.orientation, 6);
    assert.ok(before.exif?.includes('TestCam'));
    assert.ok(before.exif?.includes(Buffer.from([0x25, 0x88])), 'the GPS IFD pointer (tag 0x8825, little-endian)');
    assert.ok(before.xmp);
    assert.ok(before.icc);

    const out = await processImage(input);
    const after = await described(out);
    assert.deepEqual([out.format, out.width, out.height], ['jpeg', 200, 400]);
    assert.equal(after.orientation, undefined);
    assert.equal(after.exif, undefined);
    assert.equal(after.xmp, undefined);
    assert.equal(after.iptc, undefined);
    assert.equal(after.icc, undefined);
    assert.equal(after.comments, undefined);
    assert.equal(out.data.includes('TestCam'), false);
    assert.ok(near(await pixel(out.data, 100, 50), [255, 0, 0]), 'red on top');
    assert.ok(near(await pixel(out.data, 100, 350), [0, 0, 255]), 'blue below');
  });

  it('removes the text chunks of a PNG', async () => {
    const png = await flat(30, 20).png().toBuffer();
    const text = pngChunk('tEXt', Buffer.from('Comment\0taken at 12 Secret Street', 'latin1'));
    const input = Buffer.concat([png.subarray(0, IHDR_END), text, png.subarray(IHDR_END)]);
    assert.deepEqual((await sharp(input).metadata()).comments, [{ keyword: 'Comment', text: 'taken at 12 Secret Street' }]);
    const out = await processImage(input);
    assert.equal(out.format, 'png');
    assert.equal((await described(out)).comments, undefined);
    assert.equal(out.data.includes('Secret Street'), false);
  });

  it('turns a noisy 1000×1000 PNG of several MB into a JPEG under 500 KB', async () => {
    const input = await noise(1000, 1000).png().toBuffer();
    assert.ok(input.length > 2 * 1024 * 1024, `the input is ${input.length} bytes`);
    const out = await processImage(input);
    await described(out);
    assert.equal(out.format, 'jpeg');
    assert.deepEqual([out.width, out.height], [1000, 1000]);
    assert.ok(out.data.length < 500 * 1024, `${out.data.length} bytes`);
  });

  it('scales down when the lowest quality is still too large, and always ends under maxBytes', async () => {
    const input = await noise(600, 400).jpeg({ quality: 95 }).toBuffer();
    for (const maxBytes of [60_000, 20_000, 5_000]) {
      const out = await processImage(input, { maxBytes });
      await described(out);
      assert.ok(out.data.length < maxBytes, `${out.data.length} bytes for maxBytes ${maxBytes}`);
      assert.ok(out.width < 600 && out.height < 400, `${out.width}×${out.height}`);
      assert.ok(Math.abs(out.width / out.height - 1.5) < 0.1, 'about the same proportions');
    }
    // Below the size of any JPEG at all.
    await refused(input, 'LW_IMAGE_TOO_LARGE', { maxBytes: 100 });
  });

  it('flattens transparency onto white when a PNG must become a JPEG', async () => {
    // Noise, with the left half fully transparent.
    const width = 800;
    const height = 800;
    const rgba = randomBytes(width * height * 4);
    for (let y = 0; y < height; y++) for (let x = 0; x < width / 2; x++) rgba[(y * width + x) * 4 + 3] = 0;
    const input = await sharp(rgba, { raw: { width, height, channels: 4 } }).png().toBuffer();
    assert.ok(input.length > 500 * 1024);
    const out = await processImage(input);
    const meta = await described(out);
    assert.equal(out.format, 'jpeg');
    assert.equal(meta.hasAlpha, false);
    assert.equal(meta.channels, 3);
    assert.ok(near(await pixel(out.data, 100, 400), [255, 255, 255]), 'white where it was transparent');
  });

  it('keeps transparency in a PNG that fits', async () => {
    const input = await sharp({ create: { width: 50, height: 50, channels: 4, background: { r: 0, g: 0, b: 255, alpha: 0.5 } } }).png().toBuffer();
    const out = await processImage(input);
    const meta = await described(out);
    assert.equal(out.format, 'png');
    assert.equal(meta.hasAlpha, true);
  });

  it('turns a GIF into a PNG, and an animated GIF into a PNG of its first frame', async () => {
    const plain = await processImage(await flat(40, 30, RED).gif().toBuffer());
    await described(plain);
    assert.deepEqual([plain.format, plain.width, plain.height], ['png', 40, 30]);

    const frames = await Promise.all([RED, '#00ff00', BLUE].map((c) => flat(50, 40, c).png().toBuffer()));
    const animated = await sharp(frames, { join: { animated: true } }).gif().toBuffer();
    assert.equal((await sharp(animated).metadata()).pages, 3);
    const out = await processImage(animated);
    const meta = await described(out);
    assert.deepEqual([out.format, out.width, out.height], ['png', 50, 40]);
    assert.ok(!meta.pages || meta.pages === 1);
    assert.ok(near(await pixel(out.data, 25, 20), [255, 0, 0]), 'the red first frame');
  });

  it('refuses a decompression bomb from its header, before decoding it', async () => {
    const bomb = await declaredPng(20000, 20000);
    assert.deepEqual(
      await sharp(bomb, { limitInputPixels: false }).metadata().then((m) => [m.width, m.height]),
      [20000, 20000],
    );
    await refused(bomb, 'LW_IMAGE_TOO_LARGE');
    await refused(await declaredPng(30000, 30000), 'LW_IMAGE_TOO_LARGE');
    // Under the limit, the same trick is a broken image.
    await refused(await declaredPng(2000, 2000), 'LW_IMAGE_INVALID');
  });

  it('refuses more pixels than maxPixels on a normal image, and takes exactly maxPixels', async () => {
    const jpeg = await flat(300, 200).jpeg().toBuffer();
    await refused(jpeg, 'LW_IMAGE_TOO_LARGE', { maxPixels: 59_999 });
    const out = await processImage(jpeg, { maxPixels: 60_000 });
    assert.deepEqual([out.width, out.height], [300, 200]);
    await refused(await flat(4000, 3000, '#fff').png().toBuffer(), 'LW_IMAGE_TOO_LARGE', { maxPixels: 10_000_000 });
  });

  it('refuses limits that are not positive integers', async () => {
    const png = await flat(10, 10).png().toBuffer();
    for (const options of [{ maxSide: 0 }, { maxBytes: -1 }, { maxPixels: 1.5 }, { maxSide: Number.NaN }, { maxBytes: Infinity }]) {
      await assert.rejects(processImage(png, options), RangeError, JSON.stringify(options));
    }
  });

  it('refuses truncated, corrupt and unrecognised bytes as LW_IMAGE_INVALID', async () => {
    const jpeg = await noise(200, 200).jpeg().toBuffer();
    await refused(jpeg.subarray(0, Math.floor(jpeg.length / 2)), 'LW_IMAGE_INVALID');
    await refused(jpeg.subarray(0, 3), 'LW_IMAGE_INVALID');
    const png = await noise(200, 200).png().toBuffer();
    await refused(png.subarray(0, Math.floor(png.length / 2)), 'LW_IMAGE_INVALID');
    await refused(Buffer.concat([png.subarray(0, 8), randomBytes(4096)]), 'LW_IMAGE_INVALID');
    await refused(randomBytes(4096), 'LW_IMAGE_INVALID');
    await refused(Buffer.alloc(0), 'LW_IMAGE_INVALID');
    await refused(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>'), 'LW_IMAGE_INVALID');
    await refused(await flat(20, 20).webp().toBuffer(), 'LW_IMAGE_INVALID');
  });
});
