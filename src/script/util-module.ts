/**
 * The `'util'` module (docs/scripting.md "The `'util'` module"): `ID`, `Encoding`, `Dates`,
 * `Identicon`. Host values, frozen; scripts reach them through the membrane like any import (so the
 * copies are made once and cached).
 */
import { createHash, randomBytes } from 'node:crypto';
import { WebSafe } from '../shared/index.js';

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** `ID.generate()`: 22 characters of base64url (128 random bits): URL- and HTML-safe, unique. */
const ID = Object.freeze({
  generate: (): string => randomBytes(16).toString('base64url'),
});

const base64Url = Object.freeze({
  /** UTF-8 bytes of the string, base64url without padding. */
  encode: (s: unknown): string => Buffer.from(String(s), 'utf8').toString('base64url'),
  /** A non-negative integer in base 64 (url alphabet), most significant digit first: 0 → "A", 64 → "BA". */
  encodeNum: (n: unknown): string => {
    let v = Math.trunc(Number(n));
    if (!Number.isSafeInteger(v) || v < 0) throw new RangeError('encodeNum expects a non-negative safe integer');
    let out = '';
    do {
      out = BASE64URL[v % 64] + out;
      v = Math.floor(v / 64);
    } while (v > 0);
    return out;
  },
});

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const html = Object.freeze({
  /** Escapes & < > " ' (docs/scripting.md "The `'util'` module": `Encoding.html().escape(s)`). */
  escape: (s: unknown): string => String(s ?? '').replace(/[&<>"']/g, (c) => ESCAPES[c]!),
});

const Encoding = Object.freeze({
  base64Url: () => base64Url,
  html: () => html,
});

const DAY = 86_400_000;
const MAX_STREAM = 10_000;

function toDate(d: unknown): Date {
  const date = d instanceof Date ? new Date(d.getTime()) : new Date(d as string | number);
  if (Number.isNaN(date.getTime())) throw new RangeError('expected a date');
  return date;
}

function count(n: unknown): number {
  const v = Math.trunc(Number(n));
  if (!Number.isFinite(v) || Math.abs(v) > MAX_STREAM) throw new RangeError(`expected a count between -${MAX_STREAM} and ${MAX_STREAM}`);
  return v;
}

/** Relative text: "now", "3 seconds ago", "in 5 minutes", "1.4 years ago" (only years get a decimal). */
function fromNow(d: unknown, now = Date.now()): string {
  const diff = now - toDate(d).getTime();
  const s = Math.abs(diff) / 1000;
  const say = (n: number, unit: string): string => {
    const text = `${n} ${unit}${n === 1 ? '' : 's'}`;
    return diff >= 0 ? `${text} ago` : `in ${text}`;
  };
  if (s < 1) return 'now';
  if (s < 60) return say(Math.floor(s), 'second');
  if (s < 3600) return say(Math.floor(s / 60), 'minute');
  if (s < 86_400) return say(Math.floor(s / 3600), 'hour');
  if (s < 30 * 86_400) return say(Math.floor(s / 86_400), 'day');
  if (s < 365 * 86_400) return say(Math.floor(s / (30 * 86_400)), 'month');
  return say(Math.floor((s / (365.25 * 86_400)) * 10) / 10, 'year');
}

const Dates = Object.freeze({
  /** `n` dates one day apart starting at `date` (n < 0: going back into the past). */
  days: (date: unknown, n: unknown): Date[] => {
    const start = toDate(date).getTime();
    const k = count(n);
    return Array.from({ length: Math.abs(k) }, (_, i) => new Date(start + Math.sign(k) * i * DAY));
  },
  /** `n` dates one calendar month apart starting at `date` (n < 0: going back into the past). */
  months: (date: unknown, n: unknown): Date[] => {
    const start = toDate(date);
    const k = count(n);
    return Array.from({ length: Math.abs(k) }, (_, i) => {
      const d = new Date(start.getTime());
      d.setUTCMonth(d.getUTCMonth() + Math.sign(k) * i);
      return d;
    });
  },
  fromNow: (date: unknown): string => fromNow(date),
});

/**
 * An identicon: a 5×5 grid, mirrored left to right, of cells on or off, in one colour, all read
 * from the SHA-256 of the text (the same text gives the same picture, everywhere and always). The
 * SVG is inline markup with presentation attributes only (no `style`), so a page's policy needs
 * nothing for it (docs/security.md).
 */
function identiconSvg(seed: Buffer): string {
  const hue = ((seed[0]! << 8) | seed[1]!) % 360;
  const saturation = 45 + (seed[2]! % 25);
  const lightness = 40 + (seed[3]! % 20);
  const fill = `hsl(${hue},${saturation}%,${lightness}%)`;
  const cells: string[] = [];
  for (let row = 0; row < 5; row++) {
    for (let col = 0; col < 3; col++) {
      const bit = seed[4 + row * 3 + col]! & 1;
      if (!bit) continue;
      cells.push(`M${col + 1} ${row + 1}h1v1h-1z`);
      if (col < 2) cells.push(`M${5 - col} ${row + 1}h1v1h-1z`);
    }
  }
  return (
    '<svg xmlns="http://www.w3.org/2000/svg" class="identicon" width="64" height="64" viewBox="0 0 7 7" role="img" aria-hidden="true">' +
    '<rect width="7" height="7" fill="#f0f0f0"/>' +
    (cells.length ? `<path fill="${fill}" d="${cells.join('')}"/>` : '') +
    '</svg>'
  );
}

const Identicon = Object.freeze({
  /** The identicon of `s` (a string; other values by their text): the same for the same text. */
  of: (s: unknown): WebSafe => new WebSafe(identiconSvg(createHash('sha256').update(String(s ?? ''), 'utf8').digest())),
  /** An identicon of 128 random bits. */
  random: (): WebSafe => new WebSafe(identiconSvg(createHash('sha256').update(randomBytes(16)).digest())),
});

const UTIL = Object.freeze({ ID, Encoding, Dates, Identicon });

/** The values of the `'util'` module, by export name. */
export function utilModule(): Readonly<{ ID: typeof ID; Encoding: typeof Encoding; Dates: typeof Dates; Identicon: typeof Identicon }> {
  return UTIL;
}

export { fromNow as relativeTime };
