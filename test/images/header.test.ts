/**
 * The header scanner of uploads (src/images/header.ts, over the image-size package) against
 * sharp: for PNG, JPEG (baseline, progressive, with EXIF orientations, with large APP segments
 * before the frame) and GIF, the size and orientation it reads from the first bytes are those
 * sharp's metadata() reads from the whole file, whether the bytes come whole, one at a time, or in
 * pieces of odd sizes; and it needs only the header (a file cut right after it is enough), and no
 * more than HEADER_MAX_BYTES of it. Non-images and broken headers are told apart. Every image is
 * made here with sharp.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import sharp from 'sharp';
import { HEADER_MAX_BYTES, HeaderScanner, readImageHeader } from '../../src/images/index.js';

function flat(width: number, height: number) {
  return sharp({ create: { width, height, channels: 3, background: '#3a6' } });
}

/** A JPEG with `count` APP segments of 60000 bytes each after SOI (as cameras write large EXIF and ICC blocks). */
function withSegments(jpeg: Buffer, count: number, marker = 0xe2): Buffer {
  const segments: Buffer[] = [];
  for (let i = 0; i < count; i++) {
    const s = Buffer.alloc(4 + 59_998, 0x11);
    s.writeUInt8(0xff, 0);
    s.writeUInt8(marker, 1);
    s.writeUInt16BE(60_000, 2);
    segments.push(s);
  }
  return Buffer.concat([jpeg.subarray(0, 2), ...segments, jpeg.subarray(2)]);
}

function scanInPieces(bytes: Buffer, size: number) {
  const s = new HeaderScanner();
  for (let at = 0; at < bytes.length && s.result === undefined; at += size) s.push(bytes.subarray(at, at + size));
  return s.result ?? s.end();
}

describe('HeaderScanner', () => {
  it('reads the size and orientation sharp reads, from pieces of any size', async () => {
    const cases: Array<[string, Buffer]> = [
      ['png', await flat(301, 199).png().toBuffer()],
      ['interlaced png with alpha', await sharp({ create: { width: 64, height: 65, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0.5 } } }).png({ progressive: true }).toBuffer()],
      ['jpeg', await flat(640, 480).jpeg().toBuffer()],
      ['progressive jpeg, orientation 8', await flat(120, 80).jpeg({ progressive: true }).withMetadata({ orientation: 8 }).toBuffer()],
      ['jpeg, orientation 3', await flat(12, 8).jpeg().withMetadata({ orientation: 3 }).toBuffer()],
      ['jpeg, five 60 KB segments before its frame', withSegments(await flat(40, 30).jpeg().withMetadata({ orientation: 5 }).toBuffer(), 5)],
      ['gif', await flat(33, 17).gif().toBuffer()],
    ];
    for (const [name, bytes] of cases) {
      const meta = await sharp(bytes).metadata();
      const expected = { format: meta.format === 'jpeg' ? 'jpeg' : meta.format, width: meta.width, height: meta.height, orientation: meta.orientation ?? 1 };
      assert.deepEqual(readImageHeader(bytes), expected, name);
      for (const size of [1, 7, 1000, 65_536]) assert.deepEqual(scanInPieces(bytes, size), expected, `${name}, in pieces of ${size}`);
    }
  });

  it("reads no EXIF orientation from a PNG (image-size reads a PNG's IHDR only): its size is as stored", async () => {
    const png = await flat(30, 20).png().withMetadata({ orientation: 6 }).toBuffer();
    assert.equal((await sharp(png).metadata()).orientation, 6, 'sharp reads its eXIf chunk');
    assert.deepEqual(readImageHeader(png), { format: 'png', width: 30, height: 20, orientation: 1 });
  });

  it('needs only the header: the bytes after it are never asked for', async () => {
    const scan = (bytes: Buffer) => {
      const s = new HeaderScanner();
      s.push(bytes);
      return s.result;
    };
    const png = await sharp(randomBytes(200 * 200 * 3), { raw: { width: 200, height: 200, channels: 3 } }).png().toBuffer();
    // The signature and IHDR's length, type, width and height.
    assert.deepEqual(scan(png.subarray(0, 24)), { format: 'png', width: 200, height: 200, orientation: 1 });
    assert.equal(scan(png.subarray(0, 23)), undefined, 'not yet');
    const jpeg = await flat(50, 60).jpeg().withMetadata({ orientation: 7 }).toBuffer();
    const sos = jpeg.indexOf(Buffer.from([0xff, 0xda]));
    assert.deepEqual(scan(jpeg.subarray(0, sos + 2)), { format: 'jpeg', width: 50, height: 60, orientation: 7 });
    const sof = jpeg.indexOf(Buffer.from([0xff, 0xc0]));
    assert.equal(scan(jpeg.subarray(0, sof + 6)), undefined, 'not yet: cut inside the frame');
  });

  it('gives up on a JPEG whose frame does not start within HEADER_MAX_BYTES, as soon as that much is held', async () => {
    const jpeg = await flat(40, 30).jpeg().toBuffer();
    const s = new HeaderScanner();
    const long = withSegments(jpeg, Math.ceil(HEADER_MAX_BYTES / 60_000));
    let pushed = 0;
    for (; pushed < long.length && s.result === undefined; pushed += 4096) s.push(long.subarray(pushed, pushed + 4096));
    assert.equal(s.result, 'unreadable');
    assert.equal(pushed, HEADER_MAX_BYTES, 'refused at the cap, not at the end');
    // Just under the cap is still read.
    const under = withSegments(jpeg, Math.floor((HEADER_MAX_BYTES - jpeg.length) / 60_000));
    assert.deepEqual(scanInPieces(under, 4096), { format: 'jpeg', width: 40, height: 30, orientation: 1 });
  });

  it('tells a non-image from a broken header', async () => {
    const png = await flat(10, 10).png().toBuffer();
    assert.equal(readImageHeader(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>')), 'not-image');
    const empty = new HeaderScanner();
    assert.equal(empty.end(), 'not-image');
    assert.equal(readImageHeader(png.subarray(0, 20)), 'unreadable', 'a whole file cut inside its header');
    const short = new HeaderScanner();
    short.push(png.subarray(0, 20));
    assert.equal(short.result, undefined);
    assert.equal(short.end(), 'unreadable', 'a PNG cut inside its header');
    const gifShort = new HeaderScanner();
    gifShort.push(Buffer.from('GIF8'));
    assert.equal(gifShort.end(), 'not-image', 'too short to be a GIF');
    const noIhdr = Buffer.from(png);
    noIhdr.write('IHDX', 12, 'latin1');
    assert.equal(readImageHeader(noIhdr), 'unreadable');
    // A JPEG whose scan starts before any frame, and one of stray bytes instead of markers.
    assert.equal(readImageHeader(Buffer.from([0xff, 0xd8, 0xff, 0xda, 0, 2, 0, 0, 0, 0])), 'unreadable');
    assert.equal(readImageHeader(Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(4000)])), 'unreadable');
    assert.equal(readImageHeader(Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 4, 0, 0]), Buffer.alloc(4000, 1)])), 'unreadable');
    // A PNG declaring no pixels.
    const zero = Buffer.from(png);
    zero.writeUInt32BE(0, 16);
    assert.equal(readImageHeader(zero), 'unreadable');
  });

  it('does not read a JPEG whose frame is its first segment (image-size 2.1.0 looks for it after one), which sharp reads', async () => {
    const jpeg = await flat(40, 30).jpeg().toBuffer();
    const segments: Buffer[] = [];
    let at = 2;
    while (jpeg[at + 1] !== 0xda) {
      const end = at + 2 + jpeg.readUInt16BE(at + 2);
      segments.push(jpeg.subarray(at, end));
      at = end;
    }
    const frame = segments.find((s) => s[1] === 0xc0)!;
    const frameFirst = Buffer.concat([jpeg.subarray(0, 2), frame, ...segments.filter((s) => s !== frame), jpeg.subarray(at)]);
    assert.deepEqual([(await sharp(frameFirst).metadata()).width, (await sharp(frameFirst).raw().toBuffer()).length], [40, 40 * 30 * 3]);
    assert.equal(readImageHeader(frameFirst), 'unreadable');
  });
});
