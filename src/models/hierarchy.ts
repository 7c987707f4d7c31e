/**
 * Hierarchy positions (docs/models.md "Ordering"): strings such as `/0/`, `/3.1/` or `/1/2/` that give
 * records a manual, nested order. Each segment between slashes is a canonical decimal number;
 * every function here is pure and does its arithmetic on BigInt-scaled decimals, never on floats.
 *
 * Functions other than `parseHierarchy` take values that are already canonical and throw an Error
 * for anything else, and for a result that would break the limits (more than 30 characters in a
 * segment).
 */

/** At most this many segments (levels) in one position. */
const SEGMENTS_MAX = 20;
/** At most this many characters in one segment, sign and decimal point included. */
const SEGMENT_LENGTH_MAX = 30;

const EXAMPLE = 'must be a position such as /0/, /3.1/ or /1/2/';

/** Canonical segment: optional minus, no leading zeros, no trailing zeros after the point, no exponent. `-0` is refused separately. */
const SEGMENT = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]*[1-9])?$/;

/**
 * Any spelling of a decimal number (`03`, `+3`, `1e3`, `.5`), for the message naming the canonical one.
 * One way to match each text: `[0-9]+\.?[0-9]*` would split a run of digits every way
 * (docs/architecture.md "Regular expressions on what a visitor sends").
 */
export const DECIMAL_SPELLING = /^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$/;

/** A decimal number `n / 10^scale`; `scale` is the number of digits after the point. */
interface Decimal {
  n: bigint;
  scale: number;
}

export type HierarchyParse = { ok: true; segments: string[] } | { ok: false; message: string };

/**
 * Splits a position into its segments, or says why it is not one. The message completes a sentence
 * about the field ("… must be a position such as /0/, /3.1/ or /1/2/") and never repeats the input.
 * Non-canonical spellings (`/03/`, `/3.10/`, `/+3/`, `/-0/`) are refused, not normalised.
 */
export function parseHierarchy(s: string): HierarchyParse {
  if (typeof s !== 'string' || s.length < 3 || s[0] !== '/' || s[s.length - 1] !== '/') return { ok: false, message: EXAMPLE };
  // Bounded before splitting: a long input is refused without building a huge array.
  if (s.length > 1 + SEGMENTS_MAX * (SEGMENT_LENGTH_MAX + 1)) {
    return { ok: false, message: `${EXAMPLE}, with at most ${SEGMENTS_MAX} levels of at most ${SEGMENT_LENGTH_MAX} characters each` };
  }
  const segments = s.slice(1, -1).split('/');
  if (segments.length > SEGMENTS_MAX) return { ok: false, message: `${EXAMPLE}, with at most ${SEGMENTS_MAX} levels (it has ${segments.length})` };
  for (const segment of segments) {
    const problem = segmentProblem(segment);
    if (problem) return { ok: false, message: problem };
  }
  return { ok: true, segments };
}

/** Why one segment is not canonical, or undefined when it is. */
function segmentProblem(segment: string): string | undefined {
  if (SEGMENT.test(segment)) {
    if (segment === '-0') return 'must be written with 0, not -0 (write /0/)';
    if (segment.length > SEGMENT_LENGTH_MAX) return `must have at most ${SEGMENT_LENGTH_MAX} characters in each level (one has ${segment.length})`;
    return undefined;
  }
  if (segment === '') return `${EXAMPLE}, with a number between each pair of slashes`;
  // Numbers that are merely spelled differently get a message naming the canonical spelling.
  if (DECIMAL_SPELLING.test(segment)) {
    if (/[eE]/.test(segment)) return 'must be written without an exponent (write /1000/, not /1e3/)';
    if (segment[0] === '+') return 'must be written without a plus sign (write /3/, not /+3/)';
    const unsigned = segment[0] === '-' ? segment.slice(1) : segment;
    if (unsigned[0] === '.') return 'must have a digit before the decimal point (write /0.5/, not /.5/)';
    if (unsigned.endsWith('.')) return 'must have a digit after the decimal point (write /3/ or /3.5/, not /3./)';
    if (/^0[0-9]/.test(unsigned)) return 'must be written without leading zeros (write /3/ or /0.5/, not /03/ or /00.5/)';
    if (/\.[0-9]*0$/.test(unsigned)) return 'must be written without trailing zeros after the decimal point (write /3.1/ or /3/, not /3.10/ or /3.0/)';
  }
  return `${EXAMPLE}, made of numbers between slashes`;
}

/** The segments of a canonical value; throws for anything else. */
function segmentsOf(v: string, name = 'value'): string[] {
  const parsed = parseHierarchy(v);
  // The input is not repeated: it may come from a request.
  if (!parsed.ok) throw new Error(`the hierarchy ${name} is not valid: it ${parsed.message}`);
  return parsed.segments;
}

/** A canonical segment as a scaled decimal. */
function toDecimal(segment: string): Decimal {
  const point = segment.indexOf('.');
  if (point < 0) return { n: BigInt(segment), scale: 0 };
  return { n: BigInt(segment.slice(0, point) + segment.slice(point + 1)), scale: segment.length - point - 1 };
}

/** The canonical spelling of a decimal: trailing fraction zeros dropped, never `-0`. */
function fromDecimal({ n, scale }: Decimal): string {
  while (scale > 0 && n % 10n === 0n) {
    n /= 10n;
    scale--;
  }
  const negative = n < 0n;
  let digits = (negative ? -n : n).toString();
  if (scale > 0) {
    digits = digits.padStart(scale + 1, '0');
    digits = `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
  }
  return negative ? `-${digits}` : digits;
}

/** Both decimals at the larger scale. */
function align(a: Decimal, b: Decimal): [bigint, bigint, number] {
  const scale = Math.max(a.scale, b.scale);
  return [a.n * 10n ** BigInt(scale - a.scale), b.n * 10n ** BigInt(scale - b.scale), scale];
}

function compareDecimal(a: Decimal, b: Decimal): number {
  const [x, y] = align(a, b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** floor(n / d) for d > 0 (BigInt division truncates toward zero). */
function floorDiv(n: bigint, d: bigint): bigint {
  const q = n / d;
  return n % d !== 0n && n < 0n ? q - 1n : q;
}

/** Joins segments into a value, checking the one that was computed against the length limit. */
function join(segments: string[], computed: string, operation: string): string {
  if (computed.length > SEGMENT_LENGTH_MAX) {
    throw new Error(`hierarchy ${operation} would need more than ${SEGMENT_LENGTH_MAX} characters in one level; renumber the positions at that level`);
  }
  return `/${segments.join('/')}/`;
}

/**
 * The whole number next to the last segment: the shared body of next() and previous(). Positions
 * keep integer steps: `delta` 1 gives floor + 1 (`/3.1/` → `/4/`), -1 gives ceiling - 1
 * (`/0.1/` → `/0/`, never below zero from a positive position).
 */
function shiftLast(v: string, delta: 1n | -1n, operation: string): string {
  const segments = segmentsOf(v);
  const last = toDecimal(segments[segments.length - 1]!);
  const unit = 10n ** BigInt(last.scale);
  const floor = floorDiv(last.n, unit);
  const whole = delta > 0n || last.n % unit === 0n ? floor : floor + 1n;
  const shifted = fromDecimal({ n: whole + delta, scale: 0 });
  segments[segments.length - 1] = shifted;
  return join(segments, shifted, operation);
}

/** The next sibling position: the next whole number (`/3/` → `/4/`, `/1/2/` → `/1/3/`, `/3.5/` → `/4/`). */
export function hierarchyNext(v: string): string {
  return shiftLast(v, 1n, 'next()');
}

/** The previous sibling position: the whole number before (`/4/` → `/3/`, `/0/` → `/-1/`, `/3.5/` → `/3/`, `/0.1/` → `/0/`). */
export function hierarchyPrevious(v: string): string {
  return shiftLast(v, -1n, 'previous()');
}

/** The parent position (`/1/2/` → `/1/`), or null for a top-level one. */
export function hierarchyParent(v: string): string | null {
  const segments = segmentsOf(v);
  return segments.length > 1 ? `/${segments.slice(0, -1).join('/')}/` : null;
}

/** True when the position has more than one segment. */
export function hierarchyHasParent(v: string): boolean {
  return segmentsOf(v).length > 1;
}

/**
 * A sibling position strictly between `v` and the larger sibling `other`, preferring a whole
 * number: `/4/`,`/15/` → `/5/`; `/3/`,`/4/` → `/3.1/`; `/3.1/`,`/3.2/` → `/3.11/`; `/-1/`,`/0/` → `/-0.9/`.
 *
 * For k = 0, 1, 2, … the candidate is floor(v·10^k + 1) / 10^k, and the first one below `other`
 * wins. At k = 0 that is the smallest integer above `v`. Every candidate is above `v` (by at most
 * 10^-k), so the loop ends once 10^-k is smaller than the gap. Throws when the two are not
 * siblings, when `other` is not larger, or when the result would exceed 30 characters.
 */
export function hierarchyBefore(v: string, other: string): string {
  const segments = segmentsOf(v);
  const otherSegments = segmentsOf(other, 'bound');
  const depth = segments.length;
  if (otherSegments.length !== depth || segments.some((s, i) => i < depth - 1 && s !== otherSegments[i])) {
    throw new Error(`hierarchy before(): ${v} and ${other} are not siblings; both must have the same parent`);
  }
  const x = toDecimal(segments[depth - 1]!);
  const y = toDecimal(otherSegments[depth - 1]!);
  if (compareDecimal(x, y) >= 0) throw new Error(`hierarchy before(): ${other} must be larger than ${v}`);
  for (let k = 0; ; k++) {
    // x·10^k as an integer over 10^scale; flooring it gives an exact integer count of 10^-k steps.
    const scaled = x.n * 10n ** BigInt(k);
    const candidate: Decimal = { n: floorDiv(scaled, 10n ** BigInt(x.scale)) + 1n, scale: k };
    if (compareDecimal(candidate, y) < 0) {
      const segment = fromDecimal(candidate);
      segments[depth - 1] = segment;
      return join(segments, segment, 'before()');
    }
  }
}

/**
 * The `init: true` position for a new record: `/0/` when there is none yet, else the smallest whole
 * number above the first segment of the current last top-level value (`/4/` → `/5/`, `/4.5/` → `/5/`,
 * `/2/7/` → `/3/`).
 */
export function hierarchyAfterLast(last: string | null): string {
  if (last === null) return '/0/';
  const first = toDecimal(segmentsOf(last, 'last value')[0]!);
  const segment = fromDecimal({ n: floorDiv(first.n, 10n ** BigInt(first.scale)) + 1n, scale: 0 });
  return join([segment], segment, 'init');
}

/**
 * Depth-first numeric order: negative when `a` comes first, 0 when equal, positive after. A parent
 * comes before its children, and they before the parent's next sibling (`/0/ < /0/5/ < /1/ < /10/`).
 */
export function hierarchyCompare(a: string, b: string): number {
  const as = segmentsOf(a);
  const bs = segmentsOf(b);
  const common = Math.min(as.length, bs.length);
  for (let i = 0; i < common; i++) {
    if (as[i] === bs[i]) continue;
    const c = compareDecimal(toDecimal(as[i]!), toDecimal(bs[i]!));
    if (c !== 0) return c;
  }
  return as.length === bs.length ? 0 : as.length < bs.length ? -1 : 1;
}

/*
 * Sort key: an ASCII string whose binary (code unit / byte) order is hierarchyCompare's order, for
 * an indexed column with binary collation (SQLite's default, PostgreSQL `COLLATE "C"`).
 *
 * The key is the concatenation of one code per segment, with no separator. Each code is
 * order-preserving and prefix-free (no code is a proper prefix of another), so the first segment
 * that differs decides, and a parent's key is a proper prefix of its children's keys: it sorts first.
 *
 *   zero:     `N`
 *   positive: `P` + integer digit count d as 2 digits + integer digits + fraction digits + `.`
 *   negative: `M` + (99 - d) as 2 digits + each digit of |x| replaced by 9 - digit + `~`
 *
 * d is 0 for |x| < 1 (the integer `0` is not written). `M` < `N` < `P` orders by sign. Among
 * positives a longer integer part is larger; with equal d the digits compare numerically, and the
 * terminator `.` sorts below every digit, so 3.1 < 3.11 (`P0131.` < `P01311.`). Negatives mirror
 * this: the count and the digits are complemented, and `~` sorts above every digit, so
 * -3.11 < -3.1 (`M98688~` < `M9868~`). Examples: /0/ → `N`, /1/2/ → `P011.P012.`, /-0.9/ → `M990~`.
 *
 * A segment of at most 30 characters has at most 30 digits (d ≤ 30), so a code has at most
 * 34 characters and a key at most 680.
 */
export function hierarchySortKey(v: string): string {
  let key = '';
  for (const segment of segmentsOf(v)) {
    if (segment === '0') {
      key += 'N';
      continue;
    }
    const negative = segment[0] === '-';
    const unsigned = negative ? segment.slice(1) : segment;
    const point = unsigned.indexOf('.');
    const integer = point < 0 ? unsigned : unsigned.slice(0, point);
    const fraction = point < 0 ? '' : unsigned.slice(point + 1);
    const digits = (integer === '0' ? '' : integer) + fraction;
    const d = integer === '0' ? 0 : integer.length;
    if (negative) {
      key += `M${String(99 - d).padStart(2, '0')}`;
      for (const c of digits) key += String.fromCharCode(105 - c.charCodeAt(0)); // '0' + '9' = 48 + 57
      key += '~';
    } else {
      key += `P${String(d).padStart(2, '0')}${digits}.`;
    }
  }
  return key;
}
