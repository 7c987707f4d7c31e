/**
 * Answers' bytes from text (src/shared/utf8.ts): the UTF-8 of the text whatever its length and
 * characters, each answer's bytes its own range (writing the next one never changes them), and
 * what a cache keeps not a view of a shared slab.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ownBytes, utf8Bytes } from '../../src/shared/index.js';

const SAMPLES = ['', 'a', 'x'.repeat(1365), 'é'.repeat(1366), '€ & <b>'.repeat(700), '😀'.repeat(3000), 'plain text '.repeat(1489), 'y'.repeat(16 * 1024), 'z'.repeat(16 * 1024 + 1), '\ud800 lone'.repeat(300)];

describe('utf8Bytes', () => {
  it('gives the same bytes as Buffer.from for text of every size around the limits, ASCII or not', () => {
    for (const text of SAMPLES) assert.ok(utf8Bytes(text).equals(Buffer.from(text, 'utf8')), `length ${text.length}`);
  });

  it('keeps the bytes of earlier answers intact while later ones fill and replace slabs', () => {
    const made: Array<[Buffer, Buffer]> = [];
    for (let i = 0; i < 400; i++) {
      const text = `<p>${i}</p>` + '€·'.repeat(700 + ((i * 37) % 2000));
      made.push([utf8Bytes(text), Buffer.from(text)]);
    }
    for (const [got, want] of made) assert.ok(got.equals(want));
    // Views of a slab start on 8-byte boundaries and never overlap.
    const inSlab = made.map(([b]) => b).filter((b) => b.buffer.byteLength > b.length * 2);
    assert.ok(inSlab.length > 100, 'page-sized text is written into slabs');
    for (const b of inSlab) assert.equal(b.byteOffset % 8, 0);
  });

  it('ownBytes copies a view of a slab and leaves a Buffer of its own as it is', () => {
    const shared = utf8Bytes('€'.repeat(2000));
    assert.ok(shared.buffer.byteLength > shared.length * 2);
    const kept = ownBytes(shared);
    assert.notEqual(kept.buffer, shared.buffer);
    assert.ok(kept.equals(shared));
    const own = Buffer.from('x'.repeat(50_000));
    assert.equal(ownBytes(own), own);
  });
});
