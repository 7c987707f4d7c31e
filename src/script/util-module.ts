/**
 * The `'util'` module (docs/scripting.md "The `'util'` module"): `ID`, `Encoding`, `Dates`. Host
 * values, frozen; scripts reach them through the membrane like any import (so the copies are made
 * once and cached). `Identicon` belongs to the image work and is not here yet.
 */
import { randomBytes } from 'node:crypto';

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

const UTIL = Object.freeze({ ID, Encoding, Dates });

/** The values of the `'util'` module, by export name. */
export function utilModule(): Readonly<{ ID: typeof ID; Encoding: typeof Encoding; Dates: typeof Dates }> {
  return UTIL;
}

export { fromNow as relativeTime };
