/**
 * Images end to end (docs/images.md), black-box over HTTP on both engines, in
 * the shape of the images blueprint (own fixture): a POST script answers a one-time upload
 * address (`Post.image.newPutUrl(name)`), the client PUTs the bytes there, a form stores the
 * address in the field, the image is processed after the commit (upright, no metadata, ≤ 1000 px)
 * and shown as `<img>` with its size; copy keeps the image; private images get signed, expiring
 * addresses; reused, expired, forged and non-image uploads are refused; an address never PUT
 * cannot be stored.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { crc32 } from 'node:zlib';
import { serve, rawRequest, type Served } from '../helpers.js';
import { ENGINES } from '../support/engines.js';
import { TestVisitor } from '../support/visitor.js';

const APP = {
  '📦/🌐Post.yaml': 'title: string\nimage:\n  type: image\n  public: true\n',
  '📦/🌐Doc.yaml': 'title: string\nscan:\n  type: image\n',
  'index.html':
    "<!--TEMPLATE mustache-->\n<!doctype html><html><head><title>Images</title>{{% import {Post, Doc} from '📦' }}</head><body>\n" +
    '<link itemprop="content-security-policy" data-img-upload="true">\n' +
    '{{#Messages.all}}<p class="msg">{{this.value}}</p>{{/Messages.all}}\n' +
    '{{#Post.Form.view as form}}<form action="/posts?_form={{form.id}}" method="POST" data-max="{{Post.image.sizeMax}}">' +
    '<input name="{{form.title.path}}"><input type="hidden" name="{{form.image.path}}"></form>{{/Post.Form.view}}\n' +
    '{{#Post.all as post}}<div class="post" data-id="{{post.id}}" data-w="{{post.image.width}}" data-square="{{post.image.square}}" data-ratio="{{post.image.ratio}}" data-processed="{{post.image.processed}}">{{post.title}} {{{post.image}}}</div>\n{{/Post.all}}' +
    '{{#Doc.all as doc}}<div class="doc">{{{doc.scan}}}</div>{{/Doc.all}}\n</body></html>\n',
  '📮newImageUrl.js':
    "import {Post} from '📦';\nimport {name} from 'form';\nif (!Post.image.isValidFileName(name)) throw 'InvalidImageFileName';\n({url: Post.image.newPutUrl(name)});\n",
  '📮newScanUrl.js': "import {Doc} from '📦';\n({url: Doc.scan.newPutUrl('scan.png')});\n",
  'posts/POST.js':
    "import {Post} from '📦';\nconst post = new Post();\ntry {\n  Post.Form.submit(post);\n  Redirect.home().success('Added ' + post.title);\n} catch ($ModelInvalid) {\n  Redirect.home().invalid($ModelInvalid);\n}\n",
  'posts/{post}/🔗.yaml': 'field: 📦.Post.id\n',
  'posts/{post}/📮copy.js': "import {post} from '🔗';\nconst copy = post.get().copy();\ncopy.title += ' (copy)';\nRedirect.home().success('Copied');\n",
  '📮doc.js': "import {Doc} from '📦';\nimport {url} from 'form';\nnew Doc().title('d').scan(url);\n({ok: true});\n",
  // A script may not store an image id it got as text.
  '📮steal.js': "import {Post} from '📦';\nimport {id} from 'form';\nnew Post().title('x').image(id);\n({ok: true});\n",
};

async function jpeg(width: number, height: number, orientation?: number): Promise<Buffer> {
  let img = sharp({ create: { width, height, channels: 3, background: { r: 200, g: 40, b: 90 } } }).jpeg();
  if (orientation) img = img.withMetadata({ orientation });
  return img.toBuffer();
}

/** A PNG whose header declares 30000 × 30000 pixels (a decompression bomb), with a 16 × 16 image's data. */
async function bomb(): Promise<Buffer> {
  const png = await sharp({ create: { width: 16, height: 16, channels: 3, background: '#fff' } }).png().toBuffer();
  const ihdr = Buffer.from(png.subarray(8, 33));
  ihdr.writeUInt32BE(30000, 8);
  ihdr.writeUInt32BE(30000, 12);
  ihdr.writeUInt32BE(crc32(ihdr.subarray(4, 21)), 21);
  return Buffer.concat([png.subarray(0, 8), ihdr, png.subarray(33)]);
}

async function until<T>(f: () => Promise<T | undefined>, what: string): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const v = await f();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

for (const engine of ENGINES) {
  describe(`images (${engine.name})`, () => {
    let s: Served;
    before(async () => {
      s = await serve(APP, { data: { ...(await engine.data()), log: { info: () => {}, error: () => {} } } });
    });
    after(() => s?.close());

    const putUrl = async (v: TestVisitor, name = 'photo.jpg') => {
      const res = await v.post('/newImageUrl', { name }, { Accept: 'application/json' });
      assert.equal(res.status, 200, res.text);
      return JSON.parse(res.text).url as string;
    };
    const put = (v: TestVisitor, url: string, bytes: Buffer) => v.request('PUT', url, bytes, { 'Content-Type': '' });

    it('upload, store with a form, processed after the commit and shown with its size', async () => {
      const v = new TestVisitor(s.port);
      const page = await v.get('/');
      assert.match(String(page.headers['content-security-policy'] ?? ''), /img-src 'self' blob: data:; .*connect-src 'self'/);
      assert.match(page.text, /data-max="10485760"/);
      const form = /action="(\/posts\?_form=[^"]+)"/.exec(page.text)![1]!;
      const url = await putUrl(v);
      assert.match(url, /^\/__\/images\/upload\/Post\/image\//);
      const photo = await jpeg(2400, 1200, 6); // stored sideways: upright it is 1200 × 2400
      const sent = await put(v, url, photo);
      assert.equal(sent.status, 200, sent.text);
      assert.equal((await put(v, url, photo)).status, 409, 'an upload address is used once');
      const saved = await v.post(form, { Post_title: 'Tall', Post_image: `http://localhost:${s.port}${url}` });
      assert.equal(saved.status, 302);
      assert.match((await v.get('/')).text, /<p class="msg">Added Tall<\/p>/);
      const home = await until(async () => {
        const r = await v.get('/');
        return /data-processed="true"/.test(r.text) ? r : undefined;
      }, 'the image to be processed');
      const img = /<img src="(\/__\/images\/[A-Za-z0-9_-]{22})" width="500" height="1000" alt="" loading="lazy">/.exec(home.text);
      assert.ok(img, home.text);
      assert.match(home.text, /data-w="500" data-square="false" data-ratio="1:2"/);
      const file = await s.get(img![1]!);
      assert.equal(file.status, 200);
      assert.equal(file.headers['content-type'], 'image/jpeg');
      assert.equal(file.headers['cache-control'], 'public, max-age=31536000, immutable');
      const meta = await sharp(file.body).metadata();
      assert.deepEqual([meta.width, meta.height, meta.orientation, meta.exif], [500, 1000, undefined, undefined]);
      assert.ok(file.body.length < 500 * 1024);

      // Copy keeps the image (the same one: images never change).
      const id = /data-id="([^"]+)"/.exec(home.text)![1]!;
      assert.equal((await v.post(`/posts/${id}/copy`)).status, 302);
      const after = await v.get('/');
      assert.equal(after.text.split(img![1]!).length - 1, 2, 'both records show the image');
    });

    it('refuses uploads that are not images, too large, forged, or for another field', async () => {
      const v = new TestVisitor(s.port);
      assert.equal((await put(v, await putUrl(v), Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'))).status, 415);
      const big = await rawRequest(s.port, 'PUT', await putUrl(v), { Host: `localhost:${s.port}`, Origin: `http://localhost:${s.port}`, 'Content-Length': String(11 * 1024 * 1024) });
      assert.equal(big.status, 413);
      assert.equal((await put(v, await putUrl(v), await bomb())).status, 413, 'a decompression bomb is refused from its header');
      const url = await putUrl(v);
      const forged = url.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'));
      assert.equal((await put(v, forged, await jpeg(10, 10))).status, 403);
      assert.equal((await put(v, url.replace('/Post/image/', '/Doc/scan/'), await jpeg(10, 10))).status, 403, 'the signature binds the field');
      const bad = await v.post('/newImageUrl', { name: '../x.exe' }, { Accept: 'application/json' });
      assert.equal(bad.status, 400);
      // Cross-site uploads are refused like any other write.
      const cross = await rawRequest(s.port, 'PUT', await putUrl(v), { Host: `localhost:${s.port}`, Origin: 'https://evil.example', 'Content-Type': '' }, await jpeg(10, 10));
      assert.equal(cross.status, 403);
    });

    it('an address never uploaded to cannot be stored; a text id cannot be stored', async () => {
      const v = new TestVisitor(s.port);
      const page = await v.get('/');
      const form = /action="(\/posts\?_form=[^"]+)"/.exec(page.text)![1]!;
      const res = await v.post(form, { Post_title: 'Nothing', Post_image: await putUrl(v) }, { Accept: 'application/json' });
      assert.equal(res.status, 422, res.text);
      assert.match(res.text, /not uploaded/);
      const home = await v.get('/');
      const id = /src="\/__\/images\/([A-Za-z0-9_-]{22})"/.exec(home.text)![1]!;
      const steal = await v.post('/steal', { id }, { Accept: 'application/json' });
      assert.equal(steal.status, 422, steal.text);
      assert.doesNotMatch(home.text, /Nothing/);
    });

    it('private images have signed addresses that expire', async () => {
      const v = new TestVisitor(s.port);
      await v.get('/');
      const url = JSON.parse((await v.post('/newScanUrl', {}, { Accept: 'application/json' })).text).url as string;
      const png = await sharp({ create: { width: 300, height: 300, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0.5 } } }).png().toBuffer();
      assert.equal((await put(v, url, png)).status, 200);
      assert.equal((await v.post('/doc', { url })).status, 200);
      const src = await until(async () => {
        const r = await v.get('/');
        const m = /<div class="doc"><img src="([^"]+)" width="300" height="300"/.exec(r.text);
        return m?.[1]?.replace(/&amp;/g, '&');
      }, 'the scan to be processed');
      assert.match(src, /^\/__\/images\/[A-Za-z0-9_-]{22}\?e=[0-9a-z]+&s=/);
      const ok = await s.get(src);
      assert.equal(ok.status, 200);
      assert.equal(ok.headers['content-type'], 'image/png');
      assert.match(ok.headers['cache-control'] ?? '', /^private, max-age=\d+$/);
      assert.equal((await s.get(src.replace(/\?.*/, ''))).status, 403, 'no signature');
      assert.equal((await s.get(src.replace(/e=[0-9a-z]+/, 'e=1'))).status, 403, 'another expiry breaks the signature');
      assert.equal((await s.get('/__/images/AAAAAAAAAAAAAAAAAAAAAA')).status, 404);
    });
  });
}
