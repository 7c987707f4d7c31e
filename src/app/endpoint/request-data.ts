/**
 * Request data modules (docs/request.md): `'🔗'` path parameters and `Request`, `'form'`,
 * `'form[]'`, `'form{}'` (request bodies), `'&'` (query string), `'🍪'` (cookies, read only).
 *
 * Every value is plain data (strings, arrays, null-prototype records) so it can cross into a
 * script without carrying host behaviour. Names with dashes are imported in camelCase
 * (`this-that` → `thisThat`).
 */
import type Busboy from 'busboy';
import { createRequire } from 'node:module';
import { Readable } from 'node:stream';
import { LanewayError } from '../../diag/index.js';
import { slots } from '../../shared/index.js';
import type { RequestInfo } from './endpoint.js';

// busboy is loaded with the first multipart body: a process that only checks or loads an app never needs it.
let loadedBusboy: typeof Busboy | undefined;
const busboy = (...args: Parameters<typeof Busboy>): ReturnType<typeof Busboy> => (loadedBusboy ??= createRequire(import.meta.url)('busboy') as typeof Busboy)(...args);

/** Field name → every submitted value, in order. */
export type FieldMap = Map<string, string[]>;

/**
 * The most values one body or query string may hold (every value counts: `t=1&t=2` is two). A
 * script list cannot be longer than this anyway under the default `array-length` limit. Past it,
 * a body answers 413 and a query string 400 (LW_HTTP_TOO_MANY_FIELDS), never a silent cut.
 */
export const MAX_FIELDS = 100_000;

export function camelCase(name: string): string {
  // One pass (a regular expression for "dashes, then a letter" backtracks on long runs of dashes):
  // a run of dashes followed by a letter or digit is dropped and the letter upper-cased; any other
  // run of dashes stays as it is.
  if (!name.includes('-')) return name;
  let out = '';
  let i = 0;
  while (i < name.length) {
    if (name[i] !== '-') {
      out += name[i++];
      continue;
    }
    let j = i;
    while (j < name.length && name[j] === '-') j++;
    const next = name[j];
    if (next !== undefined && /[a-zA-Z0-9]/.test(next)) {
      out += next.toUpperCase();
      i = j + 1;
    } else {
      out += name.slice(i, j);
      i = j;
    }
  }
  return out;
}

function badRequest(message: string): LanewayError {
  return new LanewayError('LW_HTTP_BAD_BODY', message, { status: 400, expose: true });
}

function tooManyFields(where: 'body' | 'query'): LanewayError {
  return where === 'body'
    ? new LanewayError('LW_HTTP_TOO_MANY_FIELDS', `the request body holds more than ${MAX_FIELDS} values (a name sent twice counts twice); send fewer`, { status: 413, expose: true })
    : new LanewayError('LW_HTTP_TOO_MANY_FIELDS', `the query string holds more than ${MAX_FIELDS} values (a name sent twice counts twice); send fewer`, { status: 400, expose: true });
}

/**
 * Collects fields in arrival order. Each value is appended in place (never by copying the list),
 * so parsing stays linear in the body size however often a name repeats.
 */
class FieldCollector {
  readonly fields: FieldMap = new Map();
  #count = 0;
  constructor(readonly where: 'body' | 'query') {}
  add(name: string, value: string): void {
    if (++this.#count > MAX_FIELDS) throw tooManyFields(this.where);
    const list = this.fields.get(name);
    if (list) list.push(value);
    else this.fields.set(name, [value]);
  }
  /** A field with all its values at once (JSON: names are unique); one with no value counts as one. */
  put(name: string, values: string[]): void {
    this.#count += Math.max(1, values.length);
    if (this.#count > MAX_FIELDS) throw tooManyFields(this.where);
    this.fields.set(name, values);
  }
}

/** Parses `a=1&b=2` (URL query strings and urlencoded bodies; WHATWG rules: `+` is a space). */
function parseUrlencoded(text: string, where: 'body' | 'query'): FieldMap {
  const out = new FieldCollector(where);
  if (!text) return out.fields;
  for (const [k, v] of new URLSearchParams(text)) out.add(k, v);
  return out.fields;
}

/** Parses a query string into fields (names as sent). More than MAX_FIELDS values is a 400. */
export function parseQuery(query: string): FieldMap {
  return parseUrlencoded(query, 'query');
}

/**
 * Parses a request body: `application/x-www-form-urlencoded`, `multipart/form-data` (text fields
 * only; file parts are refused) or a JSON object (docs/request.md "JSON bodies"). Anything
 * malformed is a 400; more than MAX_FIELDS values is a 413. Every parser is linear in the body
 * size.
 */
export async function parseBody(req: RequestInfo): Promise<FieldMap> {
  if (!hasBody(req)) return new Map();
  return parseBodyBytes(req, await req.readBody());
}

/**
 * parseBody of a body already read: without a wait (the fields of a urlencoded or JSON body are
 * there at once; a malformed one throws), except for a multipart body, parsed as a stream.
 */
export function parseBodyBytes(req: RequestInfo, body: Buffer): FieldMap | Promise<FieldMap> {
  if (!hasBody(req) || body.length === 0) return new Map();
  const type = (req.headers['content-type'] ?? '').toLowerCase();
  if (type.startsWith('application/x-www-form-urlencoded')) return parseUrlencoded(body.toString('utf8'), 'body');
  if (type.startsWith('application/json')) return parseJsonBody(body);
  if (type.startsWith('multipart/form-data')) return parseMultipart(req.headers['content-type']!, body);
  throw badRequest('unsupported body type: send a form (urlencoded or multipart) or a JSON object');
}

function hasBody(req: RequestInfo): boolean {
  return req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined;
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** Ordinal of a field in messages ("the 3rd field"): request text is never echoed back. */
function ordinal(n: number): string {
  const tens = n % 100;
  const suffix = tens >= 11 && tens <= 13 ? 'th' : ['th', 'st', 'nd', 'rd'][n % 10] ?? 'th';
  return `${n}${suffix}`;
}

function parseJsonBody(body: Buffer): FieldMap {
  let text: string;
  try {
    text = UTF8.decode(body);
  } catch {
    throw badRequest('the JSON body is not valid UTF-8: send it encoded as UTF-8');
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    // The parser's own message quotes the body; the answer never does.
    throw badRequest('the JSON body does not parse: send one JSON object, such as {"name": "value"}');
  }
  if (!data || typeof data !== 'object' || Array.isArray(data)) throw badRequest('the JSON body must be an object, such as {"name": "value"}');
  const out = new FieldCollector('body');
  let index = 0;
  for (const k in data) {
    if (!Object.prototype.hasOwnProperty.call(data, k)) continue;
    index++;
    const v = (data as Record<string, unknown>)[k];
    const values: string[] = [];
    for (const item of Array.isArray(v) ? v : [v]) {
      if (item === null) continue;
      if (typeof item === 'object') {
        throw badRequest(`the ${ordinal(index)} field of the JSON body holds an object or a nested list: each field must be a string, number, boolean, null or a list of them`);
      }
      values.push(String(item));
    }
    out.put(k, values);
  }
  return out.fields;
}

function parseMultipart(contentType: string, body: Buffer): Promise<FieldMap> {
  return new Promise((resolve, reject) => {
    const out = new FieldCollector('body');
    let parser: Busboy.Busboy;
    try {
      // One more than MAX_FIELDS: busboy then reports the excess instead of skipping it silently.
      parser = busboy({ headers: { 'content-type': contentType }, limits: { fields: MAX_FIELDS + 1, parts: MAX_FIELDS + 1, fieldSize: body.length } });
    } catch {
      reject(badRequest('malformed multipart body: the Content-Type needs a boundary, as in multipart/form-data; boundary=…'));
      return;
    }
    let failed = false;
    const fail = (error: LanewayError) => {
      if (failed) return;
      failed = true;
      reject(error);
      parser.removeAllListeners('field');
    };
    parser.on('field', (name, value, info) => {
      try {
        if (info.valueTruncated || info.nameTruncated) throw badRequest('a multipart field was cut short');
        out.add(name, value);
      } catch (e) {
        fail(e as LanewayError);
      }
    });
    parser.on('fieldsLimit', () => fail(tooManyFields('body')));
    parser.on('partsLimit', () => fail(tooManyFields('body')));
    parser.on('file', (_name, stream) => {
      stream.resume();
      fail(badRequest('file uploads are not accepted here: send text fields only'));
    });
    parser.on('error', () => fail(badRequest('malformed multipart body')));
    parser.on('close', () => {
      if (!failed) resolve(out.fields);
    });
    Readable.from([body]).pipe(parser);
  });
}

/** Cookie header → name → value (first wins, as browsers send the most specific first). */
export function parseCookies(header: string | undefined): Map<string, string> {
  const cookies = new Map<string, string>();
  if (!header) return cookies;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq === -1) continue;
    const name = part.slice(0, eq).trim();
    let value = part.slice(eq + 1).trim();
    if (value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    try {
      value = decodeURIComponent(value);
    } catch {
      // Keep the raw value.
    }
    if (name && !cookies.has(name)) cookies.set(name, value);
  }
  return cookies;
}

/** camelCase name → the values of the first field with that camelCase form; built once per map. */
const camelIndexes = slots<FieldMap, Map<string, string[]>>(); // not a WeakMap: a FieldMap lives for one request (shared/slots.ts)

/** Looks a field up by its name as sent, or its imported (camelCase) name: one map lookup either way. */
function lookup(fields: FieldMap, name: string): string[] | undefined {
  const direct = fields.get(name);
  if (direct) return direct;
  let index = camelIndexes.get(fields);
  if (!index) {
    index = new Map();
    for (const [k, v] of fields) {
      const camel = camelCase(k);
      if (camel !== k && !index.has(camel)) index.set(camel, v);
    }
    camelIndexes.set(fields, index);
  }
  return index.get(name);
}

/** `'form'` and `'&'`: one value, or null when absent. */
export function singleValue(fields: FieldMap, name: string): string | null {
  return lookup(fields, name)?.[0] ?? null;
}

/** `'form[]'`: always a list. */
export function listValue(fields: FieldMap, name: string): string[] {
  return [...(lookup(fields, name) ?? [])];
}

/**
 * `'form{}'`: every field as a property (first value), plus `keys()`, `has(k)` (true even when
 * submitted empty) and `values(k)` (never null). A class, so scripts get the methods as bridges
 * while the fields stay plain data.
 */
export class FormFields {
  readonly #fields: FieldMap;
  [field: string]: unknown;
  constructor(fields: FieldMap) {
    this.#fields = fields;
    for (const [k, v] of fields) {
      if (k === 'keys' || k === 'has' || k === 'values' || k === '__proto__' || k === 'constructor') continue;
      Object.defineProperty(this, k, { value: v[0] ?? null, enumerable: true, writable: true, configurable: true });
      const camel = camelCase(k);
      if (camel !== k && !Object.prototype.hasOwnProperty.call(this, camel)) {
        Object.defineProperty(this, camel, { value: v[0] ?? null, enumerable: false, writable: true, configurable: true });
      }
    }
  }
  keys(): string[] {
    return [...this.#fields.keys()];
  }
  has(name: string): boolean {
    return lookup(this.#fields, String(name)) !== undefined;
  }
  values(name: string): string[] {
    return listValue(this.#fields, String(name));
  }
}

/** `import * as P from '&'` (and `'form'`): a plain record of every field's first value, by name and camelCase name. */
export function fieldsRecord(fields: FieldMap): Record<string, string | null> {
  const obj: Record<string, string | null> = Object.create(null);
  for (const [k, v] of fields) {
    obj[k] = v[0] ?? null;
    const camel = camelCase(k);
    if (!(camel in obj)) obj[camel] = v[0] ?? null;
  }
  return obj;
}
