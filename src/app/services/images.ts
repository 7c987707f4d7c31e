/**
 * Images of an app's records (docs/images.md), wired to the app's store:
 *
 * 1. `Post.image.newPutUrl(name)` (a script) → a one-time upload address, signed with the app's
 *    secret: `/__/images/upload/<Model>/<field>/<id>.<expires>.<mac>`, valid for an hour.
 * 2. The browser PUTs the raw bytes there: at most 10 MB, a PNG, JPEG or GIF by its bytes (not
 *    its name or Content-Type), under the pixel cap, checked as they arrive and kept as an upload
 *    chunk by chunk (src/images/receive.ts), never whole in memory; a row of `lw__image` records
 *    it; a second PUT to the address is refused (409), as is an expired one (410).
 * 3. A write stores the address in the field (`new Post().image(url)`, or a form): the value is
 *    checked against its signature and becomes the upload's id; the request's transaction marks
 *    the upload attached. Uploads never attached are deleted after a day.
 * 4. After the commit, the worker (src/images/worker.ts) processes the image.
 *
 * Views get an image value: `{{{post.image}}}` is an `<img>` with `width` and `height`, and the
 * properties `processed`, `width`, `height`, `square`, `horizontal`, `vertical`, `ratio`,
 * `ratioX`, `ratioBy`, `unsafe`, `url`. Its address is `/__/images/<id>`: for a `public: true`
 * field that address is permanent and publicly cacheable; otherwise it carries an expiry and a
 * signature (`?e=…&s=…`, an hour).
 */
import { randomBytes } from 'node:crypto';
import type { Signer } from '../../session/index.js';
import { SAFE_HTML } from '../../shared/index.js';
import { escapeHtml } from '../../template/index.js';
import type { Engine } from '../../store/index.js';
import type { Reply } from '../endpoint/endpoint.js';
import { ImageWorker, UPLOAD_MAX_BYTES, insertUpload, readImage, receiveUpload, DEFAULT_IMAGE_LIMITS, type ImageLog, type ImageRow, type ImageStore, type StoredImage } from '../../images/index.js';

const TOO_LARGE = `An image may be at most ${UPLOAD_MAX_BYTES / 1048576} MB.`;
const USED = 'This upload address was used already; ask for a new one.';
const CLOSE = { Connection: 'close' };

/** How long an upload address takes a PUT. */
const UPLOAD_TTL_MS = 3_600_000;
/** How long after its address expired an upload may still be stored in a field (a slow form). */
const ATTACH_GRACE_MS = 23 * 3_600_000;
/** Private image addresses are valid for about an hour, on 10-minute steps (pages rendered close together share them). */
const PRIVATE_TTL_MS = 3_600_000;
const PRIVATE_STEP_MS = 600_000;
const CACHE_MAX = 5000;

const UPLOAD_PATH = /^\/__\/images\/upload\/([A-Z][A-Za-z0-9]*)\/([a-z][A-Za-z0-9]*)\/([A-Za-z0-9_-]{22})\.([0-9a-z]{1,12})\.([A-Za-z0-9_-]{20,64})$/;
const IMAGE_PATH = /^\/__\/images\/([A-Za-z0-9_-]{22})$/;

/**
 * What the image endpoints answer (the http layer sends it): a small body, an image to stream
 * (from its file or from the database, with its ETag: the http layer answers 304 and ranges), or
 * an error.
 */
export type ImageAnswer =
  | { status: 200; contentType: string; body: Buffer; headers: Record<string, string> }
  | { status: 200; contentType: string; image: StoredImage; etag: string; headers: Record<string, string> }
  | { status: number; error: string; headers?: Record<string, string> }
  /** A limit per visitor refused the upload (429: the answer of `admit`). */
  | { refused: Reply };

/** Asked with an upload's size in bytes: undefined lets it in, a Reply refuses it. */
export type UploadAdmission = (bytes: number) => Reply | undefined | Promise<Reply | undefined>;

/** An image as a view reads it. */
export class ImageView {
  readonly id: string;
  readonly url: string;
  readonly processed: boolean;
  readonly width: number | null;
  readonly height: number | null;
  readonly unsafe = false;
  constructor(id: string, url: string, row: ImageRow | undefined) {
    this.id = id;
    this.url = url;
    this.processed = row?.state === 'ready';
    this.width = row?.width ?? null;
    this.height = row?.height ?? null;
    Object.freeze(this);
  }
  get square(): boolean {
    return this.width !== null && this.width === this.height;
  }
  get horizontal(): boolean {
    return this.width !== null && this.height !== null && this.width > this.height;
  }
  get vertical(): boolean {
    return this.width !== null && this.height !== null && this.height > this.width;
  }
  /** `16:9`, reduced; null while the size is unknown. */
  get ratio(): string | null {
    const r = reduced(this.width, this.height);
    return r && `${r[0]}:${r[1]}`;
  }
  get ratioX(): string | null {
    const r = reduced(this.width, this.height);
    return r && `${r[0]}x${r[1]}`;
  }
  get ratioBy(): string | null {
    const r = reduced(this.width, this.height);
    return r && `${r[0]}by${r[1]}`;
  }
  [SAFE_HTML](): string {
    const size = this.width !== null && this.height !== null ? ` width="${this.width}" height="${this.height}"` : '';
    return `<img src="${escapeHtml(this.url)}"${size} alt="" loading="lazy">`;
  }
  toString(): string {
    return this.url;
  }
}

function reduced(w: number | null, h: number | null): [number, number] | null {
  if (!w || !h) return null;
  const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
  const g = gcd(w, h);
  return [w / g, h / g];
}

export class ImageService {
  /** Where the bytes are: a directory (files.ts) or the database (database.ts). */
  readonly files: ImageStore;
  readonly worker: ImageWorker;
  readonly #engine: Engine;
  readonly #signer: Signer;
  readonly #fields: ReadonlyMap<string, { public: boolean }>;
  /** Rows of processed images (they never change), most recent last. */
  readonly #ready = new Map<string, ImageRow>();

  /** `fields`: `Model.field` of every image field, with its `public:`. */
  constructor(engine: Engine, signer: Signer, store: ImageStore, fields: ReadonlyMap<string, { public: boolean }>, log: ImageLog) {
    this.#engine = engine;
    this.#signer = signer;
    this.#fields = fields;
    this.files = store;
    this.worker = new ImageWorker(engine, this.files, { log });
  }

  /** A one-time upload address for `Model.field`. */
  putUrl(model: string, field: string, now = Date.now()): string {
    if (!this.#fields.has(`${model}.${field}`)) throw new TypeError(`${model}.${field} is not an image field`);
    const id = randomBytes(16).toString('base64url').slice(0, 22);
    const expires = (now + UPLOAD_TTL_MS).toString(36);
    return `/__/images/upload/${model}/${field}/${id}.${expires}.${this.#signer.mac('image-upload', `${model}.${field}.${id}.${expires}`)}`;
  }

  /**
   * The image id an upload address stored in `Model.field` stands for, or a message saying why it
   * cannot be stored. The address may be absolute (`https://site/__/images/upload/…`).
   */
  checkValue(model: string, field: string, value: unknown, now = Date.now()): { id: string } | { problem: string } {
    if (typeof value !== 'string') return { problem: 'must be the address of an uploaded image' };
    let path = value;
    if (/^https?:\/\//i.test(path)) {
      try {
        path = new URL(path).pathname;
      } catch {
        return { problem: 'must be the address of an uploaded image' };
      }
    }
    const m = UPLOAD_PATH.exec(path);
    if (!m) return { problem: 'must be the address of an uploaded image (from newPutUrl)' };
    const [, mModel, mField, id, expires, mac] = m;
    if (!this.#signer.check('image-upload', `${mModel}.${mField}.${id}.${expires}`, mac!)) return { problem: 'must be the address of an uploaded image (this one is not signed by this site)' };
    if (mModel !== model || mField !== field) return { problem: `holds an image uploaded for ${mModel}.${mField}; upload it again for ${model}.${field}` };
    if (parseInt(expires!, 36) + ATTACH_GRACE_MS < now) return { problem: 'holds an upload that expired; upload the image again' };
    return { id: id! };
  }

  /** How a view sees the image `id` (synchronous on SQLite). */
  view(id: string, now = Date.now()): ImageView | Promise<ImageView> {
    const make = (row: ImageRow | undefined) => new ImageView(id, this.url(id, row, now), row);
    const hit = this.#ready.get(id);
    if (hit) return make(hit);
    const row = readImage(this.#engine.reader, this.#engine.dialect, id);
    return row instanceof Promise ? row.then((r) => make(this.#remember(r))) : make(this.#remember(row));
  }

  #remember(row: ImageRow | undefined): ImageRow | undefined {
    if (row?.state === 'ready') {
      if (this.#ready.size >= CACHE_MAX) this.#ready.delete(this.#ready.keys().next().value!);
      this.#ready.set(row.id, row);
    }
    return row;
  }

  /** The address of an image: permanent when public, else signed until about an hour from now. */
  url(id: string, row: ImageRow | undefined, now = Date.now()): string {
    if (row?.public) return `/__/images/${id}`;
    const e = (Math.ceil((now + PRIVATE_TTL_MS) / PRIVATE_STEP_MS) * PRIVATE_STEP_MS).toString(36);
    return `/__/images/${id}?e=${e}&s=${this.#signer.mac('image-get', `${id}.${e}`)}`;
  }

  /** Whether a path is one of the image endpoints (`/__/images/…`). */
  static handles(path: string): boolean {
    return path.startsWith('/__/images/');
  }

  /**
   * Answers `PUT /__/images/upload/…` and `GET /__/images/<id>`. `body`: the request's body as it
   * arrives. `admit`: the limits of uploads (docs/security.md "Limits per visitor"), asked with the
   * upload's size before anything is kept (with its Content-Length before the body is read; without
   * one, with the bytes counted, before the upload is committed); its answer refuses the upload.
   */
  async answer(method: string, path: string, query: URLSearchParams, contentLength: number | undefined, body: () => AsyncIterable<Buffer>, now = Date.now(), admit?: UploadAdmission): Promise<ImageAnswer> {
    const upload = UPLOAD_PATH.exec(path);
    if (upload) {
      if (method !== 'PUT') return { status: 405, error: 'An upload address takes PUT only.', headers: { Allow: 'PUT' } };
      return this.#upload(upload, contentLength, body, now, admit);
    }
    const image = IMAGE_PATH.exec(path);
    if (image) {
      if (method !== 'GET' && method !== 'HEAD') return { status: 405, error: 'An image address takes GET only.', headers: { Allow: 'GET, HEAD' } };
      return this.#image(image[1]!, query, now);
    }
    return { status: 404, error: 'There is no image at this address.' };
  }

  async #upload(m: RegExpExecArray, contentLength: number | undefined, body: () => AsyncIterable<Buffer>, now: number, admit: UploadAdmission | undefined): Promise<ImageAnswer> {
    const [, model, field, id, expires, mac] = m;
    if (!this.#signer.check('image-upload', `${model}.${field}.${id}.${expires}`, mac!) || !this.#fields.has(`${model}.${field}`)) {
      return { status: 403, error: 'This upload address is not valid for this site.' };
    }
    if (parseInt(expires!, 36) < now) return { status: 410, error: 'This upload address has expired; ask for a new one.' };
    if (contentLength !== undefined && contentLength > UPLOAD_MAX_BYTES) return { status: 413, error: TOO_LARGE, headers: CLOSE };
    if (contentLength !== undefined) {
      const refused = await admit?.(contentLength);
      if (refused) return { refused };
    }
    const received = await receiveUpload(this.files, id!, body(), {
      maxBytes: UPLOAD_MAX_BYTES,
      maxPixels: DEFAULT_IMAGE_LIMITS.maxPixels,
      admit: contentLength === undefined ? admit : undefined,
    });
    if (!received.stored) {
      // The rest of the body may be unread: the connection cannot carry another request.
      switch (received.why) {
        case 'refused':
          return { refused: received.refusal };
        case 'too-large':
          return { status: 413, error: TOO_LARGE, headers: CLOSE };
        case 'too-many-pixels':
          return { status: 413, error: 'The image has too many pixels.', headers: CLOSE };
        case 'not-image':
          return { status: 415, error: 'The upload is not a PNG, JPEG or GIF image.', headers: CLOSE };
        case 'unreadable':
          return { status: 415, error: 'The upload is not a readable image.', headers: CLOSE };
        case 'used':
          return { status: 409, error: USED, headers: CLOSE };
      }
    }
    const { width, height } = received;
    const inserted = await insertUpload(this.#engine, { id: id!, model: model!, field: field!, public: this.#fields.get(`${model}.${field}`)!.public, width, height }, now).catch(async (e: unknown) => {
      await this.files.removeUpload(id!);
      throw e;
    });
    if (!inserted) return { status: 409, error: USED };
    return { status: 200, contentType: 'application/json; charset=utf-8', body: Buffer.from('{"ok":true}'), headers: { 'Cache-Control': 'no-store' } };
  }

  async #image(id: string, query: URLSearchParams, now: number): Promise<ImageAnswer> {
    let row = this.#ready.get(id) ?? this.#remember(await readImage(this.#engine.reader, this.#engine.dialect, id));
    if (!row || !row.attached || row.state === 'failed') return { status: 404, error: 'There is no image at this address.' };
    let cache = 'public, max-age=31536000, immutable';
    if (!row.public) {
      const e = query.get('e') ?? '';
      const s = query.get('s') ?? '';
      if (!/^[0-9a-z]{1,12}$/.test(e) || !this.#signer.check('image-get', `${id}.${e}`, s)) return { status: 403, error: 'This image address is not valid; reload the page that showed it.' };
      const left = parseInt(e, 36) - now;
      if (left <= 0) return { status: 403, error: 'This image address has expired; reload the page that showed it.' };
      cache = `private, max-age=${Math.floor(left / 1000)}`;
    }
    if (row.state !== 'ready') {
      // Processing runs right after the commit; a page shown at once may ask before it is done.
      await this.worker.kick();
      row = this.#remember(await readImage(this.#engine.reader, this.#engine.dialect, id));
      if (row?.state !== 'ready') return { status: 503, error: 'The image is still being processed; try again in a moment.', headers: { 'Retry-After': '2' } };
    }
    const image = await this.files.openResult(row.src ?? '');
    if (!image) return { status: 404, error: `The image is missing from ${this.files.where} of this server (with several instances, every one must share the images directory, or keep the images in the database).` };
    return {
      status: 200,
      contentType: row.src!.endsWith('.png') ? 'image/png' : 'image/jpeg',
      image,
      etag: `"${row.src!.slice(0, 32)}"`,
      headers: { 'Cache-Control': cache },
    };
  }
}
