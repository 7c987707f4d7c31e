/**
 * ImageFiles on a temporary directory: uploads by id (never overwritten, ids checked), processed
 * images by the SHA-256 of their bytes, and resultPath letting through nothing but such names.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ImageFiles } from '../../src/images/index.js';
import { readUpload } from '../support/image-store.js';

const roots: string[] = [];
after(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

/** An ImageFiles over a directory that does not exist yet. */
function files(): ImageFiles {
  const root = mkdtempSync(join(tmpdir(), 'laneway-images-'));
  roots.push(root);
  return new ImageFiles(join(root, 'images'));
}

const ID = 'u_0123456789-abcdef';
const BAD_IDS = ['', 'short', 'x'.repeat(65), '../../../etc/passwd', 'abcdefghij/k', 'abcdefghij\\k', '.abcdefghij', 'abcdefghij.tmp', 'abcdéfghijk', 'abcdefghij\n'];

function isEexist(e: unknown): boolean {
  return e instanceof Error && (e as NodeJS.ErrnoException).code === 'EEXIST';
}

describe('ImageFiles uploads', () => {
  it('saves, reads and removes an upload, creating private directories on first use', async () => {
    const f = files();
    assert.equal(await readUpload(f, ID), undefined);
    assert.deepEqual(await f.listUploads(), []);
    await f.saveUpload(ID, Buffer.from('raw bytes'));
    assert.deepEqual(await readUpload(f, ID), Buffer.from('raw bytes'));
    assert.deepEqual(readFileSync(join(f.dir, 'uploads', ID)), Buffer.from('raw bytes'));
    if (process.platform !== 'win32') {
      assert.equal(statSync(f.dir).mode & 0o777, 0o700);
      assert.equal(statSync(join(f.dir, 'uploads')).mode & 0o777, 0o700);
      assert.equal(statSync(join(f.dir, 'uploads', ID)).mode & 0o777, 0o600);
    }
    await f.removeUpload(ID);
    assert.equal(await readUpload(f, ID), undefined);
    await f.removeUpload(ID);
  });

  it('never overwrites an upload: a second save of the id fails with EEXIST', async () => {
    const f = files();
    await f.saveUpload(ID, Buffer.from('first'));
    await assert.rejects(f.saveUpload(ID, Buffer.from('second')), isEexist);
    assert.deepEqual(await readUpload(f, ID), Buffer.from('first'));
    assert.deepEqual(readdirSync(join(f.dir, 'uploads')), [ID], 'no temporary file left behind');
  });

  it('lets exactly one of two simultaneous saves of an id through', async () => {
    const f = files();
    const results = await Promise.allSettled([f.saveUpload(ID, Buffer.from('a')), f.saveUpload(ID, Buffer.from('b'))]);
    assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
    const failure = results.find((r) => r.status === 'rejected');
    assert.ok(failure && isEexist(failure.reason));
    assert.ok(['a', 'b'].includes(String(await readUpload(f, ID))));
    assert.deepEqual(readdirSync(join(f.dir, 'uploads')), [ID]);
  });

  it('writes an upload piece by piece to a temporary file, under its id only once committed; an abort leaves nothing', async () => {
    const f = files();
    const uploads = join(f.dir, 'uploads');
    const w = await f.createUpload(ID);
    await w.write(Buffer.from('first '));
    await w.write(Buffer.from('second'));
    const [temp, ...others] = readdirSync(uploads);
    assert.match(temp!, /^\.[0-9a-f]{24}\.tmp$/);
    assert.deepEqual(others, []);
    assert.deepEqual(readFileSync(join(uploads, temp!)), Buffer.from('first second'), 'on disk as it arrives');
    assert.equal(await f.openUpload(ID), undefined);
    await w.commit();
    assert.deepEqual(readdirSync(uploads), [ID]);
    assert.deepEqual(await readUpload(f, ID), Buffer.from('first second'));
    assert.equal((await f.openUpload(ID))!.path, join(uploads, ID), 'sharp reads the file itself');
    await assert.rejects(f.createUpload(ID), isEexist, 'taken: refused before anything is written');

    const cut = await f.createUpload('u_cut_short_01');
    await cut.write(Buffer.from('half'));
    await cut.abort();
    assert.deepEqual(readdirSync(uploads), [ID]);
  });

  it('refuses ids that are not 10 to 64 of [A-Za-z0-9_-], before touching the disk', async () => {
    const f = files();
    for (const id of BAD_IDS) {
      await assert.rejects(f.saveUpload(id, Buffer.from('x')), TypeError, JSON.stringify(id));
      await assert.rejects(readUpload(f, id), TypeError);
      await assert.rejects(f.removeUpload(id), TypeError);
    }
    await assert.rejects(readUpload(f, undefined as unknown as string), TypeError);
    assert.deepEqual(await f.listUploads(), []);
    await f.saveUpload('a'.repeat(10), Buffer.from('x'));
    await f.saveUpload('Z'.repeat(64), Buffer.from('x'));
  });

  it('lists uploads with their modification times, and nothing else in the folder', async () => {
    const f = files();
    const start = Date.now();
    await f.saveUpload('upload-one-1', Buffer.from('1'));
    await f.saveUpload('upload-two-2', Buffer.from('2'));
    writeFileSync(join(f.dir, 'uploads', '.0123456789abcdef.tmp'), 'left by a crash');
    const listed = await f.listUploads();
    const end = Date.now();
    assert.deepEqual(listed.map((u) => u.id).sort(), ['upload-one-1', 'upload-two-2']);
    for (const u of listed) {
      // Between the start and the end of the saves; file systems may store times more coarsely.
      assert.ok(u.mtimeMs >= start - 2_000 && u.mtimeMs <= end + 2_000, `${u.mtimeMs} not in ${start}..${end}`);
    }
    await f.removeUpload('upload-one-1');
    assert.deepEqual((await f.listUploads()).map((u) => u.id), ['upload-two-2']);
  });
});

describe('ImageFiles results', () => {
  it('stores a result under the SHA-256 of its bytes, once', async () => {
    const f = files();
    const data = Buffer.from('pretend this is a JPEG');
    const hash = createHash('sha256').update(data).digest('hex');
    const name = await f.saveResult(data, 'jpeg');
    assert.equal(name, `${hash}.jpg`);
    const path = f.resultPath(name);
    assert.equal(path, join(f.dir, hash.slice(0, 2), name));
    assert.deepEqual(readFileSync(path!), data);

    assert.equal(await f.saveResult(Buffer.from(data), 'jpeg'), name);
    const [again] = await Promise.all([f.saveResult(data, 'jpeg'), f.saveResult(data, 'jpeg')]);
    assert.equal(again, name);
    assert.deepEqual(readdirSync(join(f.dir, hash.slice(0, 2))), [name], 'one file, no temporary file left behind');
    assert.deepEqual(readFileSync(path!), data);
  });

  it('names a PNG .png, and other bytes differently', async () => {
    const f = files();
    const png = await f.saveResult(Buffer.from('pretend this is a PNG'), 'png');
    assert.match(png, /^[0-9a-f]{64}\.png$/);
    const other = await f.saveResult(Buffer.from('pretend this is a PNG!'), 'png');
    assert.notEqual(other, png);
    assert.ok(f.resultPath(png) && f.resultPath(other));
  });

  it('resultPath lets through nothing but <64 lowercase hex>.jpg|png', () => {
    const f = files();
    const hex = 'ab'.repeat(32);
    assert.equal(f.resultPath(`${hex}.png`), join(f.dir, 'ab', `${hex}.png`));
    const bad = [
      '', '../x', `../${hex}.jpg`, `ab/${hex}.jpg`, `${hex}.jpg/..`, 'abc.jpg', `${hex.slice(1)}.jpg`, `${hex}0.jpg`,
      `${hex.toUpperCase()}.jpg`, `${hex}.JPG`, `${hex}.jpeg`, `${hex}.gif`, `${hex}.svg`, hex, `${hex}.jpg\n`,
      `${hex}.jpg\u0000`, ` ${hex}.jpg`, `${'g'.repeat(64)}.jpg`,
    ];
    for (const name of bad) assert.equal(f.resultPath(name), undefined, JSON.stringify(name));
    assert.equal(f.resultPath(42 as unknown as string), undefined);
  });
});
