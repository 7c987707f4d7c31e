/**
 * What the HTTP layer sees of an app: endpoints that turn a matched request into a Reply.
 * Everything an endpoint needs was compiled at load; `handle` only runs it.
 */
import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import mime from 'mime-types';
import type { Code } from '../../diag/index.js';
import type { Method, ParamValue } from '../../router/index.js';
import type { RequestPermissions, SignedInUser } from '../../auth/index.js';
import type { ClientInfo } from '../../shared/index.js';

/** Who an endpoint runs as: its file decides the permission scope; `as` adds roles. */
export interface EndpointPermit {
  file: string;
  as: readonly string[];
}

/** The request as endpoints see it. */
export interface RequestInfo {
  id: string;
  method: string;
  /** Decoded, normalised path (`/a/b`, `/d/`). */
  path: string;
  /** The raw query string without `?` ('' when none). */
  query: string;
  headers: IncomingHttpHeaders;
  params: ParamValue[];
  /** Whether the client prefers JSON over HTML (Accept). */
  acceptsJson: boolean;
  /**
   * Who sent the request: address, scheme and host, after the trusted proxies (src/http/proxy.ts),
   * worked out on first call. Absent (requests made without a connection): read `clientOf`.
   */
  client?: (() => ClientInfo) | undefined;
  /** The record id of each model-backed parameter (model-params.ts), once resolved. */
  paramIds?: Map<ParamValue, string>;
  /**
   * The signed-in user (null: a visitor who is not signed in), read by the auth gate in areas
   * with `auth: required` or `optional`; undefined where users do not apply.
   */
  user?: SignedInUser | null;
  /** The request is in an `auth: required` area: its pages are single-user pages. */
  signedInOnly?: boolean;
  /** Users: the endpoint's permission scope and `👤: {as}` roles (permissions.ts). */
  permit?: EndpointPermit;
  /** Users: the request's permissions when the endpoint's gate needed them first (`👤: {only}`). */
  permissions?: RequestPermissions;
  /** The record each model-backed parameter named, as the store read it at the path match. */
  paramRows?: Map<ParamValue, unknown[]>;
  /**
   * Reads the whole body, enforcing the app's body limit, or `limit` (rejects with a 413
   * LanewayError past it). Read once: a second call gets the same body.
   */
  readBody(limit?: number): Promise<Buffer>;
  /**
   * The body as it arrives, in the pieces the connection gives (the uploads of `/__/images/`,
   * docs/images.md): nothing is kept once handed on, and a reader that stops early leaves the
   * rest unread (its answer closes the connection). Throws a 400 LanewayError when the client goes
   * away mid-body. Either this or `readBody`, once. Absent on requests made without a connection.
   */
  bodyStream?: (() => AsyncIterable<Buffer>) | undefined;
}

/** Headers of a Reply; `Set-Cookie` may repeat. */
export type ReplyHeaders = Record<string, string | string[]>;

/**
 * Where a request failed, for development answers (`ErrorReply.site`): what went wrong, without
 * the position the log line starts with, and the file, line and column when known.
 */
export interface FailureSite {
  message: string;
  file?: string;
  line?: number;
  column?: number;
}

export type Reply =
  /** A file's bytes, with validators and compressed variants handled by the HTTP layer. */
  | { type: 'asset'; asset: Asset; status?: number; headers?: ReplyHeaders }
  /**
   * A generated body (JSON, rendered HTML). `etag: true` adds an ETag (the body's SHA-1) and answers
   * 304 when it matches; a string is that ETag, computed before (a cached page).
   */
  | { type: 'body'; status: number; contentType: string; body: string | Buffer; headers?: ReplyHeaders; etag?: boolean | string }
  | { type: 'redirect'; status: number; location: string; headers?: ReplyHeaders }
  /**
   * Bytes read in pieces (an uploaded image, from its file or from the database): the HTTP layer
   * answers If-None-Match with 304 and one byte range, and writes the pieces as they come.
   */
  | { type: 'stored'; contentType: string; stored: { size: number; read(start?: number, end?: number): AsyncIterable<Buffer> }; etag: string; headers?: ReplyHeaders }
  /**
   * An error the HTTP layer renders (HTML page or JSON). 404 uses the nearest ⚡NotFound.html.
   * `detail`: development mode only (file:line:column and a code frame), shown below the message.
   */
  | {
      type: 'error';
      status: number;
      code: Code;
      message: string;
      detail?: string;
      /** Development mode only: where it failed, for JSON clients (answers.ts `errorJson`). */
      site?: FailureSite;
      headers?: ReplyHeaders;
      /** A line for the server's log, written by the HTTP layer with its logger (a built-in endpoint's failure). */
      log?: { level: 'info' | 'error'; message: string; fields: Record<string, unknown> };
      /** A refusal of a limit per visitor (429): its kind, counted by the metrics. */
      limit?: string;
    }
  /**
   * A server-sent event stream (`⏱` scripts, events.ts): the HTTP layer sends the head (200,
   * `text/event-stream`, `no-store`, never compressed), then `open`s the stream on the connection.
   * `open` returns `stop`, which the HTTP layer calls when the connection closes ('gone') or the
   * server stops ('shutdown'); `settings` are the app's `events:` of /🎛.yaml.
   */
  | { type: 'events'; status: 200; headers?: ReplyHeaders; open(sink: EventSink, settings?: Partial<EventSettings>): (reason: 'gone' | 'shutdown') => void };

/** The connection of an event stream as the HTTP layer hands it over. */
export interface EventSink {
  /** Writes event-stream text; false when the client is not reading it (wait for `onDrain`). */
  write(text: string): boolean;
  onDrain(listener: () => void): void;
  /** Ends the response. */
  end(): void;
}

/** Timings of event streams (defaults in events.ts, overrides in `events:` of /🎛.yaml). */
export interface EventSettings {
  /** Pause between two calls of the polled function, in ms. */
  pollMs: number;
  /** A `:` comment line is sent after this long without anything written, in ms. */
  keepAliveMs: number;
  /** The stream ends after this long without an event, in ms. */
  idleTimeoutMs: number;
  /** The stream ends after this long, whatever it sends, in ms. */
  maxDurationMs: number;
  /** CPU budget of one call of the polled function, in ms. */
  cpuMs: number;
  /** Streams open at once (per app); one more is answered 503 before its script runs. */
  maxStreams: number;
}

/** The timings of every stream unless `/🎛.yaml` says otherwise (`events:`). */
export const EVENT_DEFAULTS: Readonly<EventSettings> = Object.freeze({
  pollMs: 1000,
  keepAliveMs: 15_000,
  idleTimeoutMs: 300_000,
  maxDurationMs: 1_800_000,
  cpuMs: 50,
  maxStreams: 1000,
});

/** `service`: a built-in endpoint of an app with a store (`/__/images/*`, `/__/auth/*`). */
export type EndpointKind = 'script' | 'events' | 'view' | 'page' | 'static' | 'redirect' | 'service';

export interface Endpoint {
  kind: EndpointKind;
  method: Method;
  /** URL pattern, e.g. `/a/{id}/name`. */
  pattern: string;
  /** App path of the source file. */
  file: string;
  /** Source directory the endpoint belongs to (for ⚡NotFound.html). */
  dir: string;
  /** The endpoint checks the size of its body itself (image uploads): the app's body limit does not apply. */
  ownBodyLimit?: true;
  handle(req: RequestInfo): Reply | Promise<Reply>;
}

/** The request's client (RequestInfo.client); without one, the `Host` header and plain HTTP. */
export function clientOf(req: Pick<RequestInfo, 'client' | 'headers'>): ClientInfo {
  if (req.client) return req.client();
  const host = req.headers.host;
  return { address: '', proto: 'http', host: typeof host === 'string' && /^[A-Za-z0-9.:\[\]-]+$/.test(host) ? host : '' };
}

/** Types worth compressing (text, and a few binary formats that are not compressed already). */
const COMPRESSIBLE = /^(text\/|application\/(json|javascript|xml|manifest\+json|ld\+json|wasm)|image\/svg\+xml)/;

/**
 * A static file ready to send. Small files are held in memory (and their compressed variants are
 * made once, on first demand); larger ones are streamed from disk.
 */
export class Asset {
  readonly type: string;
  readonly etag: string;
  readonly lastModified: string;
  readonly compressible: boolean;
  readonly size: number;
  /** Compressed variants, made lazily and kept. */
  readonly variants = new Map<'br' | 'gzip', Buffer>();

  constructor(
    readonly body: Buffer | undefined,
    readonly abs: string,
    info: { size: number; mtimeMs: number; type: string },
    public cacheControl = 'no-cache',
  ) {
    this.type = info.type;
    this.size = info.size;
    this.lastModified = new Date(Math.floor(info.mtimeMs / 1000) * 1000).toUTCString();
    this.etag = body
      ? '"' + createHash('sha256').update(body).digest('base64url').slice(0, 22) + '"'
      : `W/"${info.size.toString(36)}-${Math.floor(info.mtimeMs).toString(36)}"`;
    this.compressible = body !== undefined && body.length >= 256 && COMPRESSIBLE.test(this.type);
    if (this.compressible) {
      if (freshAssets.length >= FRESH_MAX) freshAssets.splice(0, FRESH_MAX / 2);
      freshAssets.push(this);
    }
  }
}

/** Compressible assets made since the server last took them (it compresses them ahead: send.ts precompressAssets). */
const freshAssets: Asset[] = [];
const FRESH_MAX = 20_000;

/** The compressible assets made since the last call (a load of an app, or a reload). */
export function takeFreshAssets(): Asset[] {
  return freshAssets.splice(0, freshAssets.length);
}

/** Content-Type of a file name, with `charset=utf-8` for text. */
export function contentTypeOf(name: string): string {
  const type = mime.contentType(name.includes('.') ? name.slice(name.lastIndexOf('.')) : '');
  return type || 'application/octet-stream';
}
