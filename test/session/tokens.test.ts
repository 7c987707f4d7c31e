/**
 * Signed values (src/session/tokens.ts): the Signer computes HMAC-SHA256 from two pads prepared
 * once. Its MACs must be exactly those of `createHmac`, for every key length (shorter than a block,
 * a block, longer: hashed first) and every text (empty, non-ASCII, lone surrogates, longer than the
 * scratch buffer), and a check must refuse a MAC of another purpose, key or text.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { Signer } from '../../src/session/index.js';

const reference = (key: Buffer, purpose: string, data: string) => createHmac('sha256', key).update(purpose).update('\0').update(data).digest('base64url').slice(0, 32);

const TEXTS = ['', 'a', 'abcdefghijklmnopqrstuvwx|tasks/new|f1abcdefg.abcdefghijkl', 'café ✓ 日本 🎉', 'lone \ud800 surrogate', 'x'.repeat(341), 'é'.repeat(700), '🎉'.repeat(600), 'y'.repeat(5000)];

describe('Signer.mac', () => {
  for (const length of [1, 16, 32, 63, 64, 65, 100, 200]) {
    it(`gives createHmac's bytes with a key of ${length} bytes`, () => {
      const key = randomBytes(length);
      const signer = new Signer(key);
      for (const purpose of ['sid', 'form', 'image-upload', 'é']) {
        for (const data of TEXTS) assert.equal(signer.mac(purpose, data), reference(key, purpose, data), `${purpose} / ${data.slice(0, 20)} (${data.length})`);
      }
    });
  }

  it('gives the same MAC again after a long text (the scratch buffer holds nothing over)', () => {
    const key = randomBytes(32);
    const signer = new Signer(key);
    const before = signer.mac('form', 'short');
    signer.mac('form', 'z'.repeat(4000));
    signer.mac('form', 'a much longer text than the first one, to leave bytes behind it');
    assert.equal(signer.mac('form', 'short'), before);
    assert.equal(before, reference(key, 'form', 'short'));
  });

  it('checks its own MACs and refuses those of another purpose, key or text', () => {
    const key = randomBytes(32);
    const signer = new Signer(key);
    const mac = signer.mac('sid', 'abc');
    assert.equal(signer.check('sid', 'abc', mac), true);
    assert.equal(signer.check('form', 'abc', mac), false);
    assert.equal(signer.check('sid', 'abd', mac), false);
    assert.equal(new Signer(randomBytes(32)).check('sid', 'abc', mac), false);
    // The purpose and the text are separated: ('si', 'dabc') is not ('sid', 'abc').
    assert.notEqual(signer.mac('si', 'dabc'), mac);
  });

  it('reads back a sid cookie it made, and no altered one', () => {
    const signer = new Signer(randomBytes(32));
    const { id, cookie } = signer.newSid();
    assert.equal(signer.readSid(cookie), id);
    const altered = cookie.slice(0, -1) + (cookie.endsWith('A') ? 'B' : 'A');
    assert.equal(signer.readSid(altered), undefined);
  });
});
