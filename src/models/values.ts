/**
 * Per-type value checks: each takes one input (from a form, a path parameter or a script) and
 * returns the value to store, or a message that completes a sentence about the field ("must be a
 * whole number…"). Pure functions: no store, no clock except `init` defaults, which are not here.
 *
 * Sanitising html and markdown is not done here (it comes with the rich-text work); these checks
 * only bound their length.
 */
import { createRequire } from 'node:module';
import type * as HtmlParser2 from 'htmlparser2';
import { COUNTRY_CODES } from './countries.js';
import { checkHtml } from './rich.js';
import { parseHierarchy } from './hierarchy.js';
import type { FieldDefinition, ModelSchema } from './schema.js';
import type { ValueResult } from './value-result.js';

// htmlparser2 is loaded when the first html value is checked: apps without html fields never load
// it (an ES module, loaded by require as Node 20.19 allows, the Node htmlparser2 itself needs).
let loadedParser: typeof HtmlParser2.Parser | undefined;
const htmlParser = (): typeof HtmlParser2.Parser => (loadedParser ??= (createRequire(import.meta.url)('htmlparser2') as typeof HtmlParser2).Parser);

const ok = <T>(value: T): ValueResult<T> => ({ ok: true, value });
const fail = (message: string): ValueResult<never> => ({ ok: false, message });

export interface Bounds {
  min?: number;
  max?: number;
}

const codePoints = (s: string): number => {
  let n = 0;
  for (const _ of s) n++;
  return n;
};

/** Text of at most `max` characters (default 100) and at least `min`. */
export function checkString(input: unknown, bounds: Bounds = {}): ValueResult<string> {
  if (typeof input !== 'string') {
    if (typeof input === 'number' && Number.isFinite(input)) input = String(input);
    else return fail('must be text');
  }
  const s = input as string;
  const length = codePoints(s);
  const max = bounds.max ?? 100;
  if (length > max) return fail(`must be at most ${max} characters long (it has ${length})`);
  if (bounds.min !== undefined && length < bounds.min) return fail(`must be at least ${bounds.min} characters long (it has ${length})`);
  return ok(s);
}

/** true/false, or the texts "true", "1", "false", "0". */
export function checkBoolean(input: unknown): ValueResult<boolean> {
  if (typeof input === 'boolean') return ok(input);
  if (input === 'true' || input === '1' || input === 1) return ok(true);
  if (input === 'false' || input === '0' || input === 0) return ok(false);
  return fail('must be true or false (or 1 or 0)');
}

const INT64_MIN = -(2n ** 63n);
const SHORT_INTEGER = /^\s*[+-]?\d{1,15}\s*$/;
const INT64_MAX = 2n ** 63n - 1n;

/**
 * A whole number in the 64-bit range, written without a decimal point. Stored as a number when it
 * is a safe JavaScript integer, as a bigint beyond that. `min` defaults to 0.
 */
export function checkInteger(input: unknown, bounds: Bounds = {}): ValueResult<number | bigint> {
  // Shortcut: a safe integer, or at most 15 digits of text (always one): compared as a number.
  const small = typeof input === 'number' ? (Number.isSafeInteger(input) ? input : undefined) : typeof input === 'string' && SHORT_INTEGER.test(input) ? Number(input) : undefined;
  if (small !== undefined) {
    const min = bounds.min ?? 0;
    if (small < min) return fail(`must be at least ${min}`);
    if (bounds.max !== undefined && small > bounds.max) return fail(`must be at most ${bounds.max}`);
    return ok(small + 0); // -0 is 0
  }
  let n: bigint;
  if (typeof input === 'number') {
    if (!Number.isInteger(input)) return fail('must be a whole number, such as 42');
    if (!Number.isSafeInteger(input)) return fail('must be a whole number written exactly; this one is too large for a number, pass it as text');
    n = BigInt(input);
  } else if (typeof input === 'bigint') {
    n = input;
  } else if (typeof input === 'string' && /^\s*[+-]?\d+\s*$/.test(input)) {
    n = BigInt(input.trim());
  } else {
    return fail('must be a whole number without a decimal point, such as 42');
  }
  if (n < INT64_MIN || n > INT64_MAX) return fail('must be between -9223372036854775808 and 9223372036854775807');
  const min = bounds.min ?? 0;
  if (n < BigInt(min)) return fail(`must be at least ${min}`);
  if (bounds.max !== undefined && n > BigInt(bounds.max)) return fail(`must be at most ${bounds.max}`);
  return ok(n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n);
}

/**
 * A decimal number as text: `9.99`, `-.5`, `3.`, `1e3`. Written with one way to match each text
 * (`\d+(?:\.\d*)?`, not `\d+\.?\d*`, which splits a run of digits every way and tries them all
 * before failing): docs/architecture.md "Regular expressions on what a visitor sends".
 */
export const DECIMAL = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/** A number rounded to 2 decimal places, half to even (2.675 → 2.68, 2.665 → 2.66). `min` defaults to 0. */
export function checkDouble(input: unknown, bounds: Bounds = {}): ValueResult<number> {
  let text: string;
  if (typeof input === 'number') {
    if (!Number.isFinite(input)) return fail('must be a finite number, such as 9.99');
    text = String(input);
  } else if (typeof input === 'string' && DECIMAL.test(input.trim())) {
    text = input.trim();
  } else {
    return fail('must be a number, such as 9.99');
  }
  const value = roundHalfEven2(text);
  if (!Number.isFinite(value)) return fail('must be a finite number, such as 9.99');
  const min = bounds.min ?? 0;
  if (value < min) return fail(`must be at least ${min}`);
  if (bounds.max !== undefined && value > bounds.max) return fail(`must be at most ${bounds.max}`);
  return ok(value);
}

/**
 * Rounds a decimal text to 2 places, half to even, working on the digits as written so that
 * "2.675" rounds up (its binary double is slightly below 2.675).
 */
function roundHalfEven2(text: string): number {
  const n = Number(text);
  if (Math.abs(n) >= 1e15) return n; // no digits after the point survive in a double anyway
  // Expand exponent forms to plain digits.
  let plain = /e/i.test(text) ? expandExponent(text) : text.replace(/^\+/, '');
  const negative = plain.startsWith('-');
  if (negative) plain = plain.slice(1);
  const [intPart = '0', frac = ''] = plain.split('.');
  if (frac.length <= 2) return n === 0 ? 0 : n;
  const kept = BigInt((intPart || '0') + frac.slice(0, 2));
  const rest = frac.slice(2);
  const half = '5'.padEnd(rest.length, '0');
  let cents = kept;
  if (rest > half || (rest === half && kept % 2n === 1n)) cents += 1n;
  const result = Number(cents) / 100;
  return negative && result !== 0 ? -result : result;
}

function expandExponent(text: string): string {
  const [mantissa = '0', expText = '0'] = text.toLowerCase().replace(/^\+/, '').split('e');
  const negative = mantissa.startsWith('-');
  const digitsText = mantissa.replace(/^[+-]/, '');
  const point = digitsText.includes('.') ? digitsText.indexOf('.') : digitsText.length;
  const digits = digitsText.replace('.', '');
  const shift = point + Number(expText);
  let out: string;
  if (shift <= 0) out = '0.' + '0'.repeat(-shift) + digits;
  else if (shift >= digits.length) out = digits + '0'.repeat(shift - digits.length);
  else out = digits.slice(0, shift) + '.' + digits.slice(shift);
  return (negative ? '-' : '') + out;
}

const TIMESTAMP =
  /^(\d{4})(?:-(\d{2})(?:-(\d{2})(?:T(\d{2})(?::(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?(Z|[+-]\d{2}(?::?\d{2})?)?)?)?)?$/;

/**
 * An ISO-8601 time, possibly partial (`2024`, `2024-05`, `2024-05-06T10:30`); without a zone it is
 * UTC. Stored as the full UTC form, `2024-05-06T10:30:00.000Z`.
 */
export function checkTimestamp(input: unknown): ValueResult<string> {
  if (input instanceof Date) {
    return Number.isNaN(input.getTime()) ? fail('must be a valid time') : ok(input.toISOString());
  }
  const m = typeof input === 'string' ? TIMESTAMP.exec(input.trim()) : null;
  if (!m) return fail('must be an ISO-8601 time, such as 2024-05-06T14:30:00Z (or a part of one, such as 2024-05-06)');
  const [, y, mo = '01', d = '01', h = '00', mi = '00', s = '00', fraction = '', zone = 'Z'] = m;
  const date = calendarDate(Number(y), Number(mo), Number(d));
  if (!date || Number(h) > 23 || Number(mi) > 59 || Number(s) > 59) return fail('must be a real date and time, such as 2024-05-06T14:30:00Z');
  let offsetMinutes = 0;
  if (zone !== 'Z') {
    const digits = zone.slice(1).replace(':', '');
    const zh = Number(digits.slice(0, 2));
    const zm = Number(digits.slice(2) || '0');
    if (zh > 23 || zm > 59) return fail('must have a zone offset such as +02:00 or Z');
    offsetMinutes = (zone.startsWith('-') ? -1 : 1) * (zh * 60 + zm);
  }
  const ms = Number((fraction + '000').slice(0, 3));
  date.setUTCHours(Number(h), Number(mi) - offsetMinutes, Number(s), ms);
  if (Number.isNaN(date.getTime())) return fail('must be a valid time');
  return ok(date.toISOString());
}

/** A date without time: `2024-05-06` (or `2024-05`, `2024`, which mean the first day). Stored as `YYYY-MM-DD`. */
export function checkDate(input: unknown): ValueResult<string> {
  if (input instanceof Date) {
    return Number.isNaN(input.getTime()) ? fail('must be a valid date') : ok(input.toISOString().slice(0, 10));
  }
  const m = typeof input === 'string' ? /^(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?$/.exec(input.trim()) : null;
  if (!m) {
    const timed = typeof input === 'string' && TIMESTAMP.test(input.trim());
    return fail(timed ? 'must be a date without a time, such as 2024-05-06' : 'must be an ISO-8601 date, such as 2024-05-06');
  }
  const date = calendarDate(Number(m[1]), Number(m[2] ?? '1'), Number(m[3] ?? '1'));
  if (!date) return fail('must be a real date, such as 2024-05-06');
  return ok(date.toISOString().slice(0, 10));
}

/** A UTC Date at midnight of y-m-d, or undefined when there is no such day (2023-02-29). */
function calendarDate(y: number, m: number, d: number): Date | undefined {
  if (m < 1 || m > 12 || d < 1) return undefined;
  const date = new Date(0);
  date.setUTCFullYear(y, m - 1, d);
  if (date.getUTCMonth() !== m - 1 || date.getUTCDate() !== d) return undefined;
  return date;
}

/** One of the field's values. */
export function checkOption(input: unknown, values: readonly string[]): ValueResult<string> {
  const value = typeof input === 'number' ? String(input) : input;
  if (typeof value === 'string' && values.includes(value)) return ok(value);
  return fail(`must be one of ${values.join(', ')}`);
}

/** An ISO 3166-1 alpha-3 code (`FRA`, `usa`), stored in capitals. */
export function checkCountry(input: unknown): ValueResult<string> {
  const code = typeof input === 'string' ? input.trim().toUpperCase() : '';
  if (COUNTRY_CODES.has(code)) return ok(code);
  return fail('must be a three-letter ISO 3166-1 country code, such as FRA or USA');
}

export type MapValue = Record<string, string | number | boolean>;

/** A flat map of texts, numbers and true/false. Never null: nothing gives `{}`. */
export function checkMap(input: unknown): ValueResult<MapValue> {
  if (input === null || input === undefined) return ok({});
  if (typeof input !== 'object' || Array.isArray(input)) return fail('must be a map of names to texts, numbers or true/false');
  const out: MapValue = {};
  for (const [key, value] of Object.entries(input)) {
    if (typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value))) out[key] = value;
    else return fail(`must hold only texts, numbers and true/false; "${key}" holds ${value === null ? 'null' : Array.isArray(value) ? 'a list' : typeof value}`);
  }
  return ok(out);
}

export interface GeoValue {
  latitude: number;
  longitude: number;
}

/** `latitude,longitude`, each a number as DECIMAL has it without an exponent, spaces allowed around both. */
export const GEO = /^\s*([+-]?(?:\d+(?:\.\d*)?|\.\d+))\s*,\s*([+-]?(?:\d+(?:\.\d*)?|\.\d+))\s*$/;

/** `"lat,long"` or `{latitude, longitude}`: latitude −90..90, longitude −180..180. */
export function checkGeo(input: unknown): ValueResult<GeoValue> {
  let lat: number;
  let long: number;
  if (typeof input === 'string') {
    const m = GEO.exec(input);
    if (!m) return fail('must be "latitude,longitude", such as "48.8566,2.3522"');
    lat = Number(m[1]);
    long = Number(m[2]);
  } else if (input && typeof input === 'object' && typeof (input as GeoValue).latitude === 'number' && typeof (input as GeoValue).longitude === 'number') {
    lat = (input as GeoValue).latitude;
    long = (input as GeoValue).longitude;
  } else {
    return fail('must be "latitude,longitude", such as "48.8566,2.3522"');
  }
  if (!(lat >= -90 && lat <= 90)) return fail('must have a latitude from -90 to 90');
  if (!(long >= -180 && long <= 180)) return fail('must have a longitude from -180 to 180');
  return ok({ latitude: lat, longitude: long });
}

const UID = /^[a-z0-9][a-z0-9-]*[a-z0-9]$/;

/** A URL slug: lowercase letters, digits and inner hyphens, 2 to 100 characters. */
export function checkUid(input: unknown): ValueResult<string> {
  if (typeof input !== 'string' || input.length < 2 || input.length > 100 || !UID.test(input)) {
    return fail('must be 2 to 100 lowercase letters, digits and hyphens, not starting or ending with a hyphen, such as "my-first-post"');
  }
  return ok(input);
}

/** A hierarchy position: `/0/`, `/3.1/`, `/1/2/`, canonical only (see hierarchy.ts). */
export function checkHierarchy(input: unknown): ValueResult<string> {
  if (typeof input !== 'string') return fail('must be a position such as /0/, /3.1/ or /1/2/');
  const parsed = parseHierarchy(input);
  return parsed.ok ? ok(input) : fail(parsed.message);
}

const SVG_ICON_MAX = 2000;
/** A width or height in user units or px: `24`, ` 24px `. The space before `px` is read once, not twice. */
export const SVG_LENGTH = /^\s*(\d+(?:\.\d+)?|\.\d+)\s*(?:px\s*)?$/;

/** Canonical spellings, looked up by lowercase name: a browser's HTML parser fixes the case of SVG names too. */
const SVG_ELEMENTS = new Map(
  ['svg', 'g', 'path', 'circle', 'ellipse', 'line', 'polyline', 'polygon', 'rect', 'title', 'desc', 'defs', 'use', 'symbol', 'linearGradient', 'radialGradient', 'stop', 'clipPath', 'mask'].map((n) => [n.toLowerCase(), n]),
);
const SVG_FORBIDDEN_ELEMENTS = new Set(['script', 'style', 'foreignobject', 'animate', 'animatemotion', 'animatetransform', 'animatecolor', 'set', 'iframe', 'object', 'embed']);
const SVG_ATTRIBUTES = new Map(
  [
    'id', 'class', 'xmlns', 'xmlns:xlink', 'version', 'viewBox', 'preserveAspectRatio', 'width', 'height',
    'x', 'y', 'x1', 'y1', 'x2', 'y2', 'cx', 'cy', 'r', 'rx', 'ry', 'fx', 'fy', 'fr', 'd', 'points', 'pathLength',
    'transform', 'fill', 'fill-opacity', 'fill-rule', 'stroke', 'stroke-width', 'stroke-linecap', 'stroke-linejoin',
    'stroke-miterlimit', 'stroke-dasharray', 'stroke-dashoffset', 'stroke-opacity', 'opacity', 'clip-path', 'clip-rule',
    'mask', 'color', 'display', 'visibility', 'vector-effect', 'shape-rendering', 'paint-order', 'gradientUnits',
    'gradientTransform', 'spreadMethod', 'offset', 'stop-color', 'stop-opacity', 'clipPathUnits', 'maskUnits',
    'maskContentUnits', 'href', 'xlink:href', 'role', 'aria-hidden', 'aria-label', 'focusable',
  ].map((n) => [n.toLowerCase(), n]),
);
const SVG_FIXED_VALUES: Record<string, string> = { xmlns: 'http://www.w3.org/2000/svg', 'xmlns:xlink': 'http://www.w3.org/1999/xlink' };
const SVG_ID = /^[A-Za-z_][\w.-]*$/;
const SVG_LOCAL_URL = /url\(\s*(['"]?)#[A-Za-z_][\w.-]*\1\s*\)/gi;
/** Numbers, lengths, colours, path data, transforms, keywords: what presentation attributes hold. */
const SVG_PLAIN_VALUE = /^[\w\s#%.,()+-]*$/;

/** The message for one attribute, or undefined if it may stay. Values are read with entities decoded. */
function svgAttributeProblem(name: string, value: string): string | undefined {
  const shown = /^[\w:.-]{1,40}$/.test(name) ? name : 'that attribute';
  if (/^on/i.test(name)) return 'must not contain event handlers (onclick=…)';
  if (name.toLowerCase() === 'style') return 'must not contain style attributes; use presentation attributes such as fill="…"';
  const canonical = SVG_ATTRIBUTES.get(name.toLowerCase());
  if (canonical === undefined) return `must use only presentation attributes such as fill, stroke and d; ${shown} is not one of them`;
  if (/(?:javascript|vbscript|data)\s*:|@import/i.test(value)) return 'must not contain javascript:, data: or @import references';
  if (canonical === 'href' || canonical === 'xlink:href') {
    return value.startsWith('#') && SVG_ID.test(value.slice(1)) ? undefined : 'must not refer to other files; href may only point inside the icon (#id)';
  }
  if (canonical in SVG_FIXED_VALUES) return value === SVG_FIXED_VALUES[canonical] ? undefined : `must declare ${canonical}="${SVG_FIXED_VALUES[canonical]}" or leave it out`;
  if (canonical === 'aria-label') return /[\u0000-\u001f]/.test(value) ? `has a control character in ${canonical}` : undefined;
  if (canonical === 'id') return SVG_ID.test(value) ? undefined : 'must use ids made of letters, digits, "_", "-" and "."';
  const rest = value.replace(SVG_LOCAL_URL, '');
  if (/url\s*\(/i.test(rest)) return 'must not refer to other files; url() may only point inside the icon (#id)';
  if (!SVG_PLAIN_VALUE.test(rest) || /expression\s*\(/i.test(rest)) return `has a value for ${canonical} that is not allowed; use numbers, colours, transforms and url(#id)`;
  return undefined;
}

interface SvgElement {
  name: string;
  attributes: [name: string, value: string][];
  children: (SvgElement | string)[];
}

const escapeSvgText = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function writeSvg(element: SvgElement): string {
  let out = `<${element.name}`;
  for (const [name, value] of element.attributes) out += ` ${name}="${escapeSvgText(value).replace(/"/g, '&quot;')}"`;
  if (element.children.length === 0) return `${out}/>`;
  out += '>';
  for (const child of element.children) out += typeof child === 'string' ? escapeSvgText(child) : writeSvg(child);
  return `${out}</${element.name}>`;
}

/**
 * A small, self-contained SVG icon: at most 2000 bytes, one `<svg>` element, square, with no
 * script, no style, no event handler, no external reference. Deliberately conservative: anything
 * unusual is refused rather than cleaned. The markup is read with an XML tokenizer (htmlparser2)
 * against an allow-list of elements and attributes, and the value stored is written again from
 * what was read (same names, attributes in order, values double-quoted, empty elements
 * self-closed), so the browser reads exactly what was checked.
 */
export function checkSvgIcon(input: unknown): ValueResult<string> {
  if (typeof input !== 'string') return fail('must be SVG markup, <svg …>…</svg>');
  const bytes = Buffer.byteLength(input, 'utf8');
  if (bytes > SVG_ICON_MAX) return fail(`must be at most ${SVG_ICON_MAX} bytes (it has ${bytes})`);
  const source = input.trim();
  const structure = 'must be one <svg …>…</svg> element, without an XML declaration or doctype';
  const roots: SvgElement[] = [];
  const stack: SvgElement[] = [];
  let attributes: [string, string][] = [];
  let problem: string | undefined;
  let ending = false;
  const refuse = (message: string): void => {
    problem ??= message;
  };
  const parser = new (htmlParser())(
    {
      onattribute(name, value) {
        if (attributes.some(([n]) => n.toLowerCase() === name.toLowerCase())) refuse(`must not repeat the attribute ${/^[\w:.-]{1,40}$/.test(name) ? name : ''}`.trimEnd());
        const p = svgAttributeProblem(name, value);
        if (p !== undefined) refuse(p);
        attributes.push([SVG_ATTRIBUTES.get(name.toLowerCase()) ?? name, value]);
      },
      onopentagname(tag) {
        // Before its attributes, so that an element that is not allowed is named first.
        const lower = tag.toLowerCase();
        if (SVG_FORBIDDEN_ELEMENTS.has(lower)) refuse('must not contain scripts, styles, animations or embedded documents');
        else if (!SVG_ELEMENTS.has(lower)) refuse(`must use only the elements ${[...SVG_ELEMENTS.values()].join(', ')}${/^[\w:.-]{1,40}$/.test(tag) ? `; <${tag}> is not one of them` : ''}`);
      },
      onopentag(tag) {
        const lower = tag.toLowerCase();
        const name = SVG_ELEMENTS.get(lower);
        const element: SvgElement = { name: name ?? tag, attributes, children: [] };
        attributes = [];
        if (stack.length === 0) {
          if (roots.length > 0 || lower !== 'svg') refuse(structure);
          roots.push(element);
        } else {
          stack[stack.length - 1]!.children.push(element);
        }
        stack.push(element);
      },
      onclosetag(_tag, isImplied) {
        // An implied close is a self-closed element, or an element left open (refused).
        const selfClosed = isImplied && !ending && source.startsWith('/>', parser.endIndex - 1);
        if (isImplied && !selfClosed) refuse('must be well-formed: close every element it opens, in order');
        stack.pop();
      },
      ontext(text) {
        const parent = stack[stack.length - 1];
        if (/^\s*$/.test(text)) {
          if (parent !== undefined) parent.children.push(text);
        } else if (parent !== undefined && (parent.name === 'title' || parent.name === 'desc')) {
          parent.children.push(text);
        } else {
          refuse(parent === undefined ? structure : 'may hold text only in <title> and <desc>');
        }
      },
      oncomment() {
        refuse('must not contain comments or CDATA sections');
      },
      oncdatastart() {
        refuse('must not contain comments or CDATA sections');
      },
      onprocessinginstruction() {
        refuse(structure);
      },
    },
    { xmlMode: true, decodeEntities: true },
  );
  parser.write(source);
  ending = true;
  parser.end();
  if (problem !== undefined) return fail(problem);
  const svg = roots[0];
  if (svg === undefined) return fail(structure);
  const attribute = (name: string): string | undefined => svg.attributes.find(([n]) => n === name)?.[1];
  const viewBox = attribute('viewBox');
  const width = SVG_LENGTH.exec(attribute('width') ?? '')?.[1];
  const height = SVG_LENGTH.exec(attribute('height') ?? '')?.[1];
  if (viewBox !== undefined) {
    const box = viewBox.trim().split(/[\s,]+/).map(Number);
    if (box.length !== 4 || !box.every(Number.isFinite) || box[2]! <= 0 || box[3]! <= 0) return fail('must have a viewBox of four numbers with a positive size, such as viewBox="0 0 24 24"');
    if (box[2] !== box[3]) return fail(`must be square; its viewBox is ${box[2]} × ${box[3]}`);
  } else if (width !== undefined && height !== undefined) {
    if (Number(width) !== Number(height)) return fail(`must be square; it is ${width} × ${height}`);
  } else {
    return fail('must say its size: add viewBox="0 0 24 24" (square) to the <svg> element');
  }
  const out = writeSvg(svg);
  const outBytes = Buffer.byteLength(out, 'utf8');
  if (outBytes > SVG_ICON_MAX) return fail(`must be at most ${SVG_ICON_MAX} bytes (it has ${outBytes} once written out)`);
  return ok(out);
}

/** HTML of at most `max` bytes (default 2000). Not sanitised here. */
export function checkHtmlLength(input: unknown, bounds: Bounds = {}): ValueResult<string> {
  if (typeof input !== 'string') return fail('must be HTML text');
  const bytes = Buffer.byteLength(input, 'utf8');
  const max = bounds.max ?? 2000;
  if (bytes > max) return fail(`must be at most ${max} bytes of HTML (it has ${bytes})`);
  if (bounds.min !== undefined && bytes < bounds.min) return fail(`must be at least ${bounds.min} bytes of HTML (it has ${bytes})`);
  return ok(input);
}

/** Markdown of at most `max` characters (default 2000). Not converted here. */
export function checkMarkdownLength(input: unknown, bounds: Bounds = {}): ValueResult<string> {
  if (typeof input !== 'string') return fail('must be Markdown text');
  const length = codePoints(input);
  const max = bounds.max ?? 2000;
  if (length > max) return fail(`must be at most ${max} characters of Markdown (it has ${length})`);
  if (bounds.min !== undefined && length < bounds.min) return fail(`must be at least ${bounds.min} characters of Markdown (it has ${length})`);
  return ok(input);
}

/**
 * Checks one input for a field and returns the value to store, or a message naming the field
 * ("Title must be at most 100 characters long"). Handles missing values (null, undefined, "" →
 * required fields fail, optional ones store null; maps store `{}`, lists `[]`), lists (at most the
 * list size, string values distinct) and embedded values (each field of the embedded type, which
 * `schema` provides). Link values are checked by the store, which knows the records; here only
 * their shape (a non-empty id) is.
 */
export function checkFieldValue(field: FieldDefinition, input: unknown, schema?: ModelSchema): ValueResult {
  const r = checkInner(field, input, schema);
  return r.ok ? r : fail(`${field.label} ${r.message}`);
}

function checkInner(field: FieldDefinition, input: unknown, schema: ModelSchema | undefined): ValueResult {
  if (field.list !== undefined) {
    if (input === null || input === undefined || input === '') return field.optional ? ok([]) : fail('needs at least one entry');
    const items = Array.isArray(input) ? input : [input];
    if (items.length > field.list) return fail(`holds at most ${field.list} entries (it has ${items.length})`);
    const out: unknown[] = [];
    for (const item of items) {
      const r = checkSingle(field, item, schema);
      if (!r.ok) return r;
      if (r.value === null) continue;
      if (typeof r.value === 'string' && out.includes(r.value)) continue; // string lists hold distinct values
      out.push(r.value);
    }
    if (out.length === 0 && !field.optional) return fail('needs at least one entry');
    return ok(out);
  }
  if (field.type !== 'map' && (input === null || input === undefined || input === '')) {
    return field.optional ? ok(null) : fail('is required');
  }
  return checkSingle(field, input, schema);
}

function checkSingle(field: FieldDefinition, input: unknown, schema: ModelSchema | undefined): ValueResult {
  const bounds: Bounds = {
    ...(field.min === undefined ? {} : { min: field.min }),
    ...(field.max === undefined ? {} : { max: field.max }),
  };
  switch (field.type) {
    case 'string':
      return checkString(input, bounds);
    case 'boolean':
      return checkBoolean(input);
    case 'integer':
      return checkInteger(input, bounds);
    case 'double':
      return checkDouble(input, bounds);
    case 'timestamp':
      return checkTimestamp(input);
    case 'date':
      return checkDate(input);
    case 'options':
      return checkOption(input, (field.values ?? []).map((v) => v.value));
    case 'country':
      return checkCountry(input);
    case 'map':
      return checkMap(input);
    case 'geo':
      return checkGeo(input);
    case 'hierarchy':
      return checkHierarchy(input);
    case 'svg-icon':
      return checkSvgIcon(input);
    case 'uid':
      return checkUid(input);
    case 'html':
      return checkHtml(input, bounds);
    case 'markdown':
      return checkMarkdownLength(input, bounds);
    case 'image':
      // The upload URL a visitor's browser received (checked against its signature by the app).
      return typeof input === 'string' && input.length > 0 && input.length <= 2000 ? ok(input) : fail('must be the address of an uploaded image');
    case 'id':
    case 'link':
      return typeof input === 'string' && /^[A-Za-z0-9_-]{1,64}$/.test(input) ? ok(input) : fail(`must be the id of ${field.type === 'link' ? `a ${field.model}` : 'a record'}`);
    case 'embedded': {
      const type = field.embedded === undefined ? undefined : schema?.embedded.get(field.embedded);
      if (!type) return fail(`cannot be checked without the definition of ${field.embedded ?? 'its embedded type'}`);
      if (typeof input !== 'object' || input === null || Array.isArray(input)) return fail(`must be a map of the fields of ${type.name}`);
      const out: Record<string, unknown> = {};
      for (const sub of type.fields) {
        const r = checkInner(sub, (input as Record<string, unknown>)[sub.name], schema);
        if (!r.ok) return fail(`is not valid: ${sub.label} ${r.message}`);
        out[sub.name] = r.value;
      }
      const unknown = Object.keys(input).find((k) => !type.fields.some((f) => f.name === k));
      if (unknown !== undefined) return fail(`has no field "${unknown}"; ${type.name} has ${type.fields.map((f) => f.name).join(', ')}`);
      return ok(out);
    }
  }
}
