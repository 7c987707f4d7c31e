/**
 * Request data modules (REFERENCE §3.2–§3.5): `'🔗'` path parameters and `Request`, `'form'`,
 * `'form[]'`, `'form{}'` (request bodies), `'&'` (query string), `'🍪'` (cookies, read only).
 *
 * Every value is plain data (strings, arrays, null-prototype records) so it can cross into a
 * script without carrying host behaviour. Names with dashes are imported in camelCase
 * (`this-that` → `thisThat`).
 */
import busboy from 'busboy';
import { Readable } from 'node:stream';
import { LanewayError } from '../diag/index.js';
import type { RequestInfo } from './endpoint.js';

/** Field name → every submitted value, in order. */
export type FieldMap = Map<string, string[]>;

export function camelCase(name: string): string {
  return name.replace(/-+([a-zA-Z0-9])/g, (_, c: string) => c.toUpperCase());
}

function badRequest(message: string): LanewayError {
  return new LanewayError('LW_HTTP_BAD_BODY', message, { status: 400, expose: true });
}

/** Parses a query string into fields (names as sent). */
export function parseQuery(query: string): FieldMap {
  const fields: FieldMap = new Map();
  if (!query) return fields;
  let params: URLSearchParams;
  try {
    params = new URLSearchParams(query);
  } catch {
    return fields;
  }
  for (const [k, v] of params) fields.set(k, [...(fields.get(k) ?? []), v]);
  return fields;
}

/**
 * Parses a request body: `application/x-www-form-urlencoded`, `multipart/form-data` (text fields
 * only; file parts are refused) or a JSON object (REFERENCE OQ-13). Anything malformed is a 400.
 */
export async function parseBody(req: RequestInfo): Promise<FieldMap> {
  const type = (req.headers['content-type'] ?? '').toLowerCase();
  const hasBody = req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined;
  if (!hasBody) return new Map();
  const body = await req.readBody();
  if (body.length === 0) return new Map();
  if (type.startsWith('application/x-www-form-urlencoded')) return parseQuery(body.toString('utf8'));
  if (type.startsWith('application/json')) return parseJsonBody(body);
  if (type.startsWith('multipart/form-data')) return parseMultipart(req.headers['content-type']!, body);
  throw badRequest('unsupported body type: send a form (urlencoded or multipart) or a JSON object');
}

function parseJsonBody(body: Buffer): FieldMap {
  let data: unknown;
  try {
    data = JSON.parse(body.toString('utf8'));
  } catch {
    throw badRequest('the JSON body does not parse');
  }
  if (!data || typeof data !== 'object' || Array.isArray(data)) throw badRequest('the JSON body must be an object');
  const fields: FieldMap = new Map();
  for (const [k, v] of Object.entries(data)) {
    const list = Array.isArray(v) ? v : [v];
    const strings: string[] = [];
    for (const item of list) {
      if (item === null || item === undefined) continue;
      if (typeof item === 'object') throw badRequest(`the JSON field "${k.slice(0, 40)}" must be a string, number, boolean or a list of them`);
      strings.push(String(item));
    }
    fields.set(k, strings);
  }
  return fields;
}

function parseMultipart(contentType: string, body: Buffer): Promise<FieldMap> {
  return new Promise((resolve, reject) => {
    const fields: FieldMap = new Map();
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: { 'content-type': contentType }, limits: { fields: 1000, parts: 1000, fieldSize: body.length } });
    } catch {
      reject(badRequest('malformed multipart body'));
      return;
    }
    parser.on('field', (name, value) => fields.set(name, [...(fields.get(name) ?? []), value]));
    parser.on('file', (_name, stream) => {
      stream.resume();
      reject(badRequest('file uploads are not accepted here'));
    });
    parser.on('error', () => reject(badRequest('malformed multipart body')));
    parser.on('close', () => resolve(fields));
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

/** Looks a field up by its imported (camelCase) name. */
function lookup(fields: FieldMap, name: string): string[] | undefined {
  const direct = fields.get(name);
  if (direct) return direct;
  for (const [k, v] of fields) if (camelCase(k) === name) return v;
  return undefined;
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
