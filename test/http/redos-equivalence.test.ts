/**
 * The linear patterns and scans that replaced backtracking ones (docs/architecture.md "Regular
 * expressions on what a visitor sends") accept, capture and remove exactly what the old ones did:
 * each pair is compared on every string up to a length over an alphabet of the characters that
 * matter to it, and on random longer strings (a fixed seed). The old patterns are written here as
 * they were.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DECIMAL, GEO, SVG_LENGTH } from '../../src/models/values.js';
import { DECIMAL_SPELLING } from '../../src/models/hierarchy.js';
import { trimControlsAndSpaces } from '../../src/models/rich.js';
import { DOUBLE_TEXT } from '../../src/store/session.js';
import { ATTRIBUTE_LIST } from '../../src/template/runtime.js';
import { withoutTrailingBreaks } from '../../src/content/markdown.js';
import { slugify } from '../../src/content/slug.js';
import { rawTextElements } from '../../src/app/request/mounts.js';
import { trimSlashes } from '../../src/script/platform-module.js';

/** Every string of at most `max` characters of `alphabet`, then `random` strings of up to `long` (seeded). */
function* inputs(alphabet: string[], max: number, random: number, long: number, seed = 20240917): Generator<string> {
  let level = [''];
  yield '';
  for (let n = 1; n <= max; n++) {
    const next: string[] = [];
    for (const s of level) for (const c of alphabet) next.push(s + c);
    yield* next;
    level = next;
  }
  // mulberry32: the same strings on every run.
  let a = seed >>> 0;
  const rand = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  for (let i = 0; i < random; i++) {
    const n = Math.floor(rand() * (long + 1));
    let s = '';
    for (let k = 0; k < n; k++) s += alphabet[Math.floor(rand() * alphabet.length)];
    yield s;
  }
}

/** The same match, or none, with the same captures. */
function sameMatch(old: RegExp, next: RegExp, alphabet: string[], max: number, random: number, long: number, skip?: (s: string) => boolean): number {
  let n = 0;
  for (const s of inputs(alphabet, max, random, long)) {
    if (skip?.(s)) continue;
    assert.deepEqual(next.exec(s)?.slice(), old.exec(s)?.slice(), JSON.stringify(s));
    n++;
  }
  return n;
}

const NUMBER_CHARS = ['0', '1', '.', 'e', 'E', '+', '-', 'x'];

describe('linear patterns match what the backtracking ones matched', () => {
  it('a decimal number (double fields)', () => {
    sameMatch(/^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/, DECIMAL, NUMBER_CHARS, 6, 20_000, 30);
  });

  it('a spelling of a decimal number (hierarchy segments)', () => {
    sameMatch(/^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$/, DECIMAL_SPELLING, NUMBER_CHARS, 6, 20_000, 30);
  });

  it('a double written as text (query filters)', () => {
    sameMatch(/^\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\s*$/, DOUBLE_TEXT, [...NUMBER_CHARS, ' ', '\t'], 6, 20_000, 30);
  });

  it('latitude,longitude (geo fields), captures included', () => {
    sameMatch(/^\s*([+-]?(?:\d+\.?\d*|\.\d+))\s*,\s*([+-]?(?:\d+\.?\d*|\.\d+))\s*$/, GEO, ['1', '0', '.', '-', '+', ',', ' ', '\t', 'e'], 6, 20_000, 30);
  });

  it('an SVG width or height, captures included', () => {
    sameMatch(/^\s*(\d+(?:\.\d+)?|\.\d+)\s*(?:px)?\s*$/, SVG_LENGTH, ['1', '.', ' ', '\t', 'p', 'x'], 8, 20_000, 30);
  });

  it('a list of form-control attributes', () => {
    const old = /^(?:\s*[a-z][a-z0-9-]*(?:="[^"<>]*")?)*\s*$/;
    const chars = ['a', 'b', '1', '-', '=', '"', ' ', '\n', '<', 'A'];
    // The old pattern takes 2^n steps on a run of n name characters that fails: runs stay short.
    const longRun = (s: string) => /[a-z0-9-]{13,}/.test(s);
    sameMatch(old, ATTRIBUTE_LIST, chars, 6, 20_000, 24, longRun);
    // Lists as Laneway writes them, joined from pieces, and broken at the end.
    const pieces = ['type="text"', ' ', 'required', 'value="a &amp; b"', 'x', '=""', '"', '<', '-', '1', '\t'];
    let n = 0;
    for (const s of inputs(pieces, 4, 5_000, 8)) {
      if (longRun(s)) continue;
      assert.equal(ATTRIBUTE_LIST.test(s), old.test(s), JSON.stringify(s));
      n++;
    }
    assert.ok(n > 10_000);
  });
});

describe('scans remove what the backtracking patterns removed', () => {
  it('leading and trailing C0 controls and spaces of a link address', () => {
    for (const s of inputs(['\u0000', '\u001f', ' ', '\t', '!', 'a', '\u00a0'], 7, 20_000, 40)) {
      assert.equal(trimControlsAndSpaces(s), s.replace(/^[\u0000-\u0020]+|[\u0000-\u0020]+$/g, ''), JSON.stringify(s));
    }
  });

  it('white space and backslash line ends at the end of a Markdown block', () => {
    for (const s of inputs(['\\', '\n', ' ', 'a', '\u00a0', '\u2028', '\r'], 8, 20_000, 40)) {
      assert.equal(withoutTrailingBreaks(s), s.replace(/(?:\\\n|\s)+$/, ''), JSON.stringify(s));
    }
  });

  it('dashes at the ends of a slug', () => {
    const old = (title: string) =>
      title
        .normalize('NFC')
        .toLowerCase()
        .replace(/[^\p{L}\p{M}\p{N}]+/gu, '-')
        .replace(/^-+|-+$/g, '');
    for (const s of inputs(['a', 'É', '-', ' ', '!', '1', 'e\u0301', '—'], 6, 20_000, 30)) {
      assert.equal(slugify(s), old(s), JSON.stringify(s));
    }
  });
});

describe('one pass finds the script and style elements the backtracking pattern found', () => {
  it('in pages of start tags, end tags and text, closed or not', () => {
    const old = /<(script|style)\b[^>]*>[\s\S]*?<\/\1\s*>/gi;
    const pieces = ['<script', '<SCRIPT', '<style', '<scripts', '>', ' a>', '</script', '</SCRIPT >', '</style>', '</script\n>', ' ', 'x', '<', '/', '</style x>'];
    let n = 0;
    for (const html of inputs(pieces, 5, 20_000, 16)) {
      const want = [...html.matchAll(old)].map((m) => ({ start: m.index, openEnd: html.indexOf('>', m.index) + 1, end: m.index + m[0].length }));
      assert.deepEqual(rawTextElements(html), want, JSON.stringify(html));
      n++;
    }
    assert.ok(n > 700_000);
  });

  it('leading and trailing slashes of a repository path', () => {
    for (const s of inputs(['/', 'a', '.', ' '], 8, 5_000, 30)) assert.equal(trimSlashes(s), s.replace(/^\/+|\/+$/g, ''), JSON.stringify(s));
  });
});

describe('the replacements stay fast on the inputs that held the old ones', () => {
  // Each of these took minutes (or, for the attribute list, forever) with the old pattern.
  const hostile: Array<[string, () => unknown]> = [
    ['a double of 10^6 digits and a letter', () => DECIMAL.test('1'.repeat(1_000_000) + 'x')],
    ['a double filter of 10^6 digits and an exponent letter', () => DOUBLE_TEXT.test('1'.repeat(1_000_000) + 'E')],
    ['a hierarchy spelling of 10^6 digits and a letter', () => DECIMAL_SPELLING.test('1'.repeat(1_000_000) + 'x')],
    ['a geo value of 10^5 digits on each side', () => GEO.exec('1'.repeat(100_000) + ',' + '1'.repeat(100_000) + '.0,0')],
    ['an SVG size with 10^6 spaces inside', () => SVG_LENGTH.exec('1 ' + ' '.repeat(1_000_000) + ' 1')],
    ['an attribute list of 10^5 letters and a quote', () => ATTRIBUTE_LIST.test('a'.repeat(100_000) + '"')],
    ['a link address with 10^6 spaces inside', () => trimControlsAndSpaces('x' + ' '.repeat(1_000_000) + 'x')],
    ['a Markdown block of 10^6 newlines and a letter', () => withoutTrailingBreaks('\n'.repeat(1_000_000) + 'x')],
    ['a slug of 10^6 dashes inside', () => slugify('a' + '-'.repeat(1_000_000) + 'a')],
    ['a page of 10^5 script start tags, none closed', () => rawTextElements('<script>'.repeat(100_000))],
    ['a page of 10^5 script start tags without a >', () => rawTextElements('<script '.repeat(100_000))],
    ['a repository path with 10^6 slashes inside', () => trimSlashes('a' + '/'.repeat(1_000_000) + 'a')],
  ];
  for (const [name, run] of hostile) {
    it(name, () => {
      // Milliseconds now; a bound far above that and far below what the old patterns took.
      const t0 = performance.now();
      run();
      assert.ok(performance.now() - t0 < 5000);
    });
  }
});
