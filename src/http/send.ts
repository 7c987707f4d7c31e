/**
 * Writing a Reply to the socket: validators (ETag, Last-Modified → 304), content negotiation of
 * compressed variants, HEAD, and the headers every response carries.
 */
import { bodyDigest, strongEtag, utf8Bytes } from '../shared/index.js';
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { brotliCompress, brotliCompressSync, constants as zlib, gzip, gzipSync } from 'node:zlib';
import type { Asset } from '../app/index.js';

/** Sent with every response (docs/security.md "Other headers"). */
export const COMMON_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'strict-origin-when-cross-origin',
});

/**
 * The policy of an HTML answer that has none of its own: the built-in error pages, which hold
 * text only. Views and pages carry the policy built from their files (src/csp).
 */
export const ERROR_PAGE_POLICY = "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'self'";

type Encoding = 'br' | 'gzip' | undefined;

/**
 * The encodings of the Accept-Encoding values seen, by header text: browsers send a handful of
 * distinct values, so the answer is worked out once per value (bounded, cleared when full).
 */
const encodings = new Map<string, Encoding>();

/** The best encoding the client accepts (br over gzip), ignoring ones given q=0. */
export function pickEncoding(header: string | undefined): Encoding {
  if (!header) return undefined;
  const known = encodings.get(header);
  if (known !== undefined || encodings.has(header)) return known;
  const picked = parseEncoding(header);
  if (encodings.size >= 256) encodings.clear();
  encodings.set(header, picked);
  return picked;
}

function parseEncoding(header: string): Encoding {
  let br = false;
  let gzip = false;
  for (const part of header.split(',')) {
    const [token = '', ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    if (q && Number(q.slice(2)) <= 0) continue;
    if (token === 'br') br = true;
    else if (token === 'gzip' || token === 'x-gzip') gzip = true;
    else if (token === '*') br = gzip = true;
  }
  return br ? 'br' : gzip ? 'gzip' : undefined;
}

/** Whether an If-None-Match header matches an entity tag (weak comparison, RFC 9110 §13.1.2). */
export function etagMatches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  const bare = (t: string) => t.trim().replace(/^W\//, '').replace(/-(br|gz)"$/, '"');
  const want = bare(etag);
  return header.split(',').some((t) => bare(t) === want);
}

function compress(body: Buffer, encoding: 'br' | 'gzip', large: boolean): Buffer {
  return encoding === 'br'
    ? brotliCompressSync(body, { params: { [zlib.BROTLI_PARAM_QUALITY]: large ? 5 : 9, [zlib.BROTLI_PARAM_SIZE_HINT]: body.length } })
    : gzipSync(body, { level: large ? 6 : 9 });
}

/** The compressed variant of an asset, made once and kept; undefined when it would not be smaller. */
function variantOf(asset: Asset, encoding: 'br' | 'gzip'): Buffer | undefined {
  let variant = asset.variants.get(encoding);
  if (!variant) {
    variant = compress(asset.body!, encoding, asset.body!.length > 1024 * 1024);
    asset.variants.set(encoding, variant);
  }
  return variant.length < asset.body!.length ? variant : undefined;
}

/**
 * The headers of an in-memory asset's plain 200 answer (no validators or range asked, no extra
 * header), per encoding, made once per asset and Cache-Control: the usual request for a static
 * file builds no header object of its own.
 */
const plainHeaders = new WeakMap<Asset, { cacheControl: string; identity?: OutgoingHttpHeaders; br?: OutgoingHttpHeaders; gzip?: OutgoingHttpHeaders }>();

function plainHeadersOf(asset: Asset, encoding: 'br' | 'gzip' | undefined, body: Buffer): OutgoingHttpHeaders {
  let cached = plainHeaders.get(asset);
  if (cached === undefined || cached.cacheControl !== asset.cacheControl) plainHeaders.set(asset, (cached = { cacheControl: asset.cacheControl }));
  const key = encoding ?? 'identity';
  let headers = cached[key];
  if (headers === undefined) {
    headers = { ...COMMON_HEADERS, 'Content-Type': asset.type, 'Cache-Control': asset.cacheControl, ETag: asset.etag, 'Last-Modified': asset.lastModified };
    if (asset.compressible) headers['Vary'] = 'Accept-Encoding';
    headers['Accept-Ranges'] = 'bytes';
    if (encoding) {
      headers['Content-Encoding'] = encoding;
      headers['ETag'] = asset.etag.slice(0, -1) + (encoding === 'br' ? '-br"' : '-gz"');
    }
    headers['Content-Length'] = body.length;
    cached[key] = Object.freeze(headers);
  }
  return headers;
}

export function sendAsset(req: IncomingMessage, res: ServerResponse, asset: Asset, status = 200, extra?: Record<string, string | string[]>): number {
  // The usual request: the whole file from memory, nothing conditional.
  const h = req.headers;
  if (status === 200 && extra === undefined && asset.body !== undefined && h.range === undefined && h['if-none-match'] === undefined && h['if-modified-since'] === undefined) {
    let body = asset.body;
    let encoding: 'br' | 'gzip' | undefined;
    if (asset.compressible) {
      encoding = pickEncoding(h['accept-encoding']);
      const variant = encoding && variantOf(asset, encoding);
      if (variant) body = variant;
      else encoding = undefined;
    }
    res.writeHead(200, plainHeadersOf(asset, encoding, body));
    res.end(req.method === 'HEAD' ? undefined : body);
    return 200;
  }
  const headers: OutgoingHttpHeaders = {
    ...COMMON_HEADERS,
    'Content-Type': asset.type,
    'Cache-Control': asset.cacheControl,
    ETag: asset.etag,
    'Last-Modified': asset.lastModified,
    ...extra,
  };
  if (asset.compressible) headers['Vary'] = 'Accept-Encoding';
  if (status === 200 && isNotModified(req, asset.etag, asset.lastModified)) {
    delete headers['Content-Type'];
    res.writeHead(304, headers);
    res.end();
    return 304;
  }
  if (status === 200) {
    // Byte ranges (RFC 9110 §14): one range per request; several, or a stale If-Range, get the whole file.
    headers['Accept-Ranges'] = 'bytes';
    const range = req.headers.range === undefined || !ifRangeHolds(req, asset) ? undefined : parseRange(req.headers.range, asset.size);
    if (range === 'unsatisfiable') {
      delete headers['Content-Type'];
      headers['Content-Range'] = `bytes */${asset.size}`;
      headers['Content-Length'] = 0;
      res.writeHead(416, headers);
      res.end();
      return 416;
    }
    if (range) {
      headers['Content-Range'] = `bytes ${range.start}-${range.end}/${asset.size}`;
      headers['Content-Length'] = range.end - range.start + 1;
      res.writeHead(206, headers);
      if (req.method === 'HEAD') res.end();
      else if (asset.body) res.end(asset.body.subarray(range.start, range.end + 1));
      else {
        const stream = createReadStream(asset.abs, { start: range.start, end: range.end });
        stream.on('error', () => res.destroy());
        stream.pipe(res);
      }
      return 206;
    }
  }
  if (!asset.body) {
    headers['Content-Length'] = asset.size;
    res.writeHead(status, headers);
    if (req.method === 'HEAD') {
      res.end();
      return status;
    }
    const stream = createReadStream(asset.abs);
    stream.on('error', () => res.destroy());
    stream.pipe(res);
    return status;
  }
  let body = asset.body;
  if (asset.compressible) {
    const encoding = pickEncoding(req.headers['accept-encoding']);
    const variant = encoding && variantOf(asset, encoding);
    if (encoding && variant) {
      body = variant;
      headers['Content-Encoding'] = encoding;
      headers['ETag'] = asset.etag.slice(0, -1) + (encoding === 'br' ? '-br"' : '-gz"');
    }
  }
  headers['Content-Length'] = body.length;
  res.writeHead(status, headers);
  res.end(req.method === 'HEAD' ? undefined : body);
  return status;
}

/**
 * Sends bytes read in pieces (an uploaded image, from its file or from the database): its ETag
 * with 304 for a matching If-None-Match, one byte range (206, 416; If-Range by ETag), HEAD without
 * reading anything. The pieces are written as they come, never gathered in memory.
 */
export function sendStored(
  req: IncomingMessage,
  res: ServerResponse,
  contentType: string,
  stored: { size: number; read(start?: number, end?: number): AsyncIterable<Buffer> },
  etag: string,
  extra: Record<string, string>,
): number {
  const headers: OutgoingHttpHeaders = { ...COMMON_HEADERS, 'Content-Type': contentType, ETag: etag, 'Accept-Ranges': 'bytes', ...extra };
  if (etagMatches(req.headers['if-none-match'], etag)) {
    delete headers['Content-Type'];
    res.writeHead(304, headers);
    res.end();
    return 304;
  }
  const size = stored.size;
  const ifRange = req.headers['if-range'];
  const range = req.headers.range === undefined || (ifRange !== undefined && ifRange !== etag) ? undefined : parseRange(req.headers.range, size);
  if (range === 'unsatisfiable') {
    delete headers['Content-Type'];
    headers['Content-Range'] = `bytes */${size}`;
    headers['Content-Length'] = 0;
    res.writeHead(416, headers);
    res.end();
    return 416;
  }
  const status = range ? 206 : 200;
  if (range) headers['Content-Range'] = `bytes ${range.start}-${range.end}/${size}`;
  headers['Content-Length'] = range ? range.end - range.start + 1 : size;
  res.writeHead(status, headers);
  if (req.method === 'HEAD' || size === 0) {
    res.end();
    return status;
  }
  const stream = Readable.from(range ? stored.read(range.start, range.end) : stored.read());
  stream.on('error', () => res.destroy());
  stream.pipe(res);
  return status;
}

/**
 * The one `bytes=` range of a `size`-byte file, inclusive; 'unsatisfiable' (416); or undefined
 * when the header is malformed or asks for several ranges (the whole file is sent).
 */
export function parseRange(header: string, size: number): { start: number; end: number } | 'unsatisfiable' | undefined {
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return undefined;
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (start >= size) return 'unsatisfiable';
  if (end < start) return undefined;
  return { start, end };
}

/** If-Range: the range applies only while the client's validator still names this file. */
function ifRangeHolds(req: IncomingMessage, asset: Asset): boolean {
  const header = req.headers['if-range'];
  if (header === undefined) return true;
  const ifRange = Array.isArray(header) ? header[0] ?? '' : header;
  return ifRange.startsWith('"') || ifRange.startsWith('W/') ? ifRange === asset.etag && !ifRange.startsWith('W/') : ifRange === asset.lastModified;
}

function isNotModified(req: IncomingMessage, etag: string, lastModified: string | undefined): boolean {
  const inm = req.headers['if-none-match'];
  if (inm !== undefined) return etagMatches(inm, etag);
  const ims = req.headers['if-modified-since'];
  if (ims && lastModified) {
    const since = Date.parse(ims);
    return !Number.isNaN(since) && Date.parse(lastModified) <= since;
  }
  return false;
}

/** Sends a generated body; with `etag` (true, or the ETag already computed), adds a strong ETag and answers 304 when it matches. */
export function sendBody(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  contentType: string,
  content: string | Buffer,
  options: { etag?: boolean | string; headers?: Record<string, string | string[]> } = {},
): number {
  let body = typeof content === 'string' ? utf8Bytes(content) : content;
  const headers: OutgoingHttpHeaders = { ...COMMON_HEADERS, 'Content-Type': contentType, ...options.headers };
  if (status >= 400 && contentType.startsWith('text/html') && !headers['Content-Security-Policy'] && !headers['Content-Security-Policy-Report-Only']) {
    headers['Content-Security-Policy'] = ERROR_PAGE_POLICY;
  }
  if (options.etag && status === 200) {
    // A string is the body's ETag computed before (a cached page); true computes it here.
    const etag = typeof options.etag === 'string' ? options.etag : strongEtag(body);
    headers['ETag'] = etag;
    if (etagMatches(req.headers['if-none-match'], etag)) {
      delete headers['Content-Type'];
      res.writeHead(304, headers);
      res.end();
      return 304;
    }
  }
  if (body.length >= 1024 && /^(text\/|application\/json)/.test(contentType)) {
    const encoding = pickEncoding(req.headers['accept-encoding']);
    headers['Vary'] = 'Accept-Encoding';
    if (encoding) {
      const tag = typeof headers['ETag'] === 'string' ? headers['ETag'] : undefined;
      headers['Content-Encoding'] = encoding;
      if (tag !== undefined) headers['ETag'] = tag.slice(0, -1) + (encoding === 'br' ? '-br"' : '-gz"');
      // The same bytes compressed before (a page whose content has not changed) are sent again;
      // otherwise they are compressed on libuv's thread pool, off the event loop.
      const key = `${encoding}:${tag ?? bodyDigest(body)}`;
      const done = compressedBodies.get(key);
      if (done !== undefined) {
        compressedBodies.delete(key);
        compressedBodies.set(key, done); // most recently used last
        body = done;
      } else {
        const plain = body;
        compressAsync(plain, encoding, (err, out) => {
          if (res.destroyed) return;
          if (err) {
            // Compression failed (out of memory…): send the bytes as they are.
            delete headers['Content-Encoding'];
            if (typeof headers['ETag'] === 'string') headers['ETag'] = headers['ETag'].replace(/-(br|gz)"$/, '"');
            out = plain;
          } else remember(key, out);
          headers['Content-Length'] = out.length;
          res.writeHead(status, headers);
          res.end(req.method === 'HEAD' ? undefined : out);
        });
        return status;
      }
    }
  }
  headers['Content-Length'] = body.length;
  res.writeHead(status, headers);
  res.end(req.method === 'HEAD' ? undefined : body);
  return status;
}

/**
 * Compressed generated bodies by encoding and content hash (or ETag), most recently used last,
 * up to COMPRESSED_CACHE_BYTES: a page that does not change is compressed once per process.
 * A cache of bytes the server made itself, never state: losing it only costs a compression.
 */
const compressedBodies = new Map<string, Buffer>();
const COMPRESSED_CACHE_BYTES = 32 * 1024 * 1024;
let compressedBytes = 0;

function remember(key: string, body: Buffer): void {
  if (body.length > COMPRESSED_CACHE_BYTES / 16) return;
  const old = compressedBodies.get(key);
  if (old !== undefined) compressedBytes -= old.length;
  compressedBodies.set(key, body);
  compressedBytes += body.length;
  for (const [k, v] of compressedBodies) {
    if (compressedBytes <= COMPRESSED_CACHE_BYTES) break;
    compressedBodies.delete(k);
    compressedBytes -= v.length;
  }
}

/**
 * Levels chosen by measurement on 50 KB HTML pages (bench/README.md): brotli 4 compresses as
 * well as gzip 9 at a third of its time; gzip 6 for clients without brotli.
 */
function compressAsync(body: Buffer, encoding: 'br' | 'gzip', callback: (err: Error | null, out: Buffer) => void): void {
  if (encoding === 'br') brotliCompress(body, { params: { [zlib.BROTLI_PARAM_QUALITY]: 4, [zlib.BROTLI_PARAM_SIZE_HINT]: body.length } }, callback);
  else gzip(body, { level: 6 }, callback);
}

/**
 * Compresses the compressible assets held in memory ahead of their first request, on the thread
 * pool and one at a time (the server answers meanwhile; a request that comes first compresses
 * its variant itself, as before).
 */
export function precompressAssets(assets: Iterable<Asset>): Promise<void> {
  const list = [...assets].filter((a) => a.compressible && a.body !== undefined && a.body.length >= 1024);
  return new Promise((resolve) => {
    let i = 0;
    const next = (): void => {
      const asset = list[i++];
      if (asset === undefined) return resolve();
      const todo = (['br', 'gzip'] as const).filter((e) => !asset.variants.has(e));
      let left = todo.length;
      if (left === 0) return next();
      for (const encoding of todo) {
        const large = asset.body!.length > 1024 * 1024;
        const done = (err: Error | null, out: Buffer): void => {
          if (!err && !asset.variants.has(encoding)) asset.variants.set(encoding, out);
          if (--left === 0) setImmediate(next);
        };
        if (encoding === 'br') brotliCompress(asset.body!, { params: { [zlib.BROTLI_PARAM_QUALITY]: large ? 5 : 9, [zlib.BROTLI_PARAM_SIZE_HINT]: asset.body!.length } }, done);
        else gzip(asset.body!, { level: large ? 6 : 9 }, done);
      }
    };
    next();
  });
}

export function sendRedirect(req: IncomingMessage, res: ServerResponse, status: number, location: string, extra?: Record<string, string | string[]>): number {
  // Never let CR/LF reach a header, whatever produced the location.
  if (/[\r\n]/.test(location)) throw new Error('redirect location contains a line break');
  res.writeHead(status, { ...COMMON_HEADERS, Location: location, 'Content-Length': 0, ...extra });
  res.end();
  void req;
  return status;
}
