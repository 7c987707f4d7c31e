/**
 * A small HTML tokenizer that follows the WHATWG tokenizer where it matters for a policy: tags
 * and their attributes, comments, raw-text elements (`<script>` with its escape states, `<style>`,
 * `<textarea>` …), and foreign content (`<svg>`, `<math>`), where `<style>` and `<script>` are
 * ordinary elements. It reports offsets only; nothing is decoded or copied.
 *
 * Templates are scanned with every Mustache tag replaced by one HOLE character. In the states
 * between attributes a HOLE separates names (`<p {{#x}}hidden{{/x}}>` has an attribute `hidden`);
 * inside a value it is part of the value, which is then dynamic.
 */

/** Stands for one template tag (or a section's opening or closing tag) in scanned text. */
export const HOLE = '\uE000';

export interface Attribute {
  /** Lower-cased name. */
  name: string;
  nameStart: number;
  /** The raw value (not entity-decoded), or null for a bare attribute. */
  value: string | null;
  /** Offsets of the value's text (inside the quotes). */
  valueStart: number;
  valueEnd: number;
  /** Offset just past the attribute (past the closing quote). */
  end: number;
}

export interface StartTag {
  kind: 'start';
  /** Lower-cased tag name. */
  name: string;
  start: number;
  /** Offset just past `>`. */
  end: number;
  attrs: Attribute[];
  selfClosing: boolean;
  /** Inside `<svg>` or `<math>`: `<script>` and `<style>` are not raw text there. */
  foreign: boolean;
}

export interface EndTag {
  kind: 'end';
  name: string;
  start: number;
  end: number;
}

/** The content of a raw-text element (`script`, `style`, …) of HTML content. */
export interface RawText {
  kind: 'raw';
  /** The element's name. */
  name: string;
  start: number;
  end: number;
  /** False when the end tag is missing (the content runs to the end of the text). */
  closed: boolean;
}

export type HtmlToken = StartTag | EndTag | RawText;

// noscript: raw text in a browser with scripting on, which is the browser a policy protects.
const RAWTEXT = new Set(['style', 'xmp', 'iframe', 'noembed', 'noframes', 'noscript']);
const RCDATA = new Set(['textarea', 'title']);

function isSpace(c: number): boolean {
  return c === 32 || c === 9 || c === 10 || c === 12 || c === 13;
}

function isAlpha(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
}

const HOLE_CODE = 0xe000;

/** Whether `s` has `</name` at `i`, followed by a character that ends a tag name. */
function endTagAt(s: string, i: number, name: string): boolean {
  if (s.charCodeAt(i) !== 60 || s.charCodeAt(i + 1) !== 47) return false;
  if (s.slice(i + 2, i + 2 + name.length).toLowerCase() !== name) return false;
  const c = s.charCodeAt(i + 2 + name.length);
  return isSpace(c) || c === 47 || c === 62;
}

/** `<script` (or `</script`) followed by a space, `/` or `>`: the script data double-escape switch. */
function scriptWordAt(s: string, i: number): boolean {
  if (s.slice(i, i + 6).toLowerCase() !== 'script') return false;
  const c = s.charCodeAt(i + 6);
  return isSpace(c) || c === 47 || c === 62;
}

/**
 * Where a `<script>`'s content ends: the offset of its `</script`, or -1. Follows the script data
 * states, so `<!--<script>…</script>…-->` inside a script does not end it.
 */
function scriptEnd(s: string, from: number): number {
  let state: 'data' | 'escaped' | 'double' = 'data';
  let i = from;
  while (i < s.length) {
    const c = s.charCodeAt(i);
    if (state === 'data') {
      if (c === 60) {
        if (endTagAt(s, i, 'script')) return i;
        if (s.startsWith('<!--', i)) {
          state = 'escaped';
          // The dashes of `<!--` count towards `-->`, so `<!-->` goes straight back to data.
          i += 2;
          continue;
        }
      }
      i++;
      continue;
    }
    if (c === 45 && s.startsWith('-->', i)) {
      state = 'data';
      i += 3;
      continue;
    }
    if (c === 60) {
      if (state === 'escaped') {
        if (endTagAt(s, i, 'script')) return i;
        if (scriptWordAt(s, i + 1)) {
          state = 'double';
          i += 7;
          continue;
        }
      } else if (s.charCodeAt(i + 1) === 47 && scriptWordAt(s, i + 2)) {
        state = 'escaped';
        i += 8;
        continue;
      }
    }
    i++;
  }
  return -1;
}

/** Offset of the first `</name` end tag at or after `from`, or -1. */
function rawEnd(s: string, from: number, name: string): number {
  let i = s.indexOf('<', from);
  while (i !== -1) {
    if (endTagAt(s, i, name)) return i;
    i = s.indexOf('<', i + 1);
  }
  return -1;
}

/**
 * Reads the attributes of a tag whose name ends at `i`; returns the offset past `>` (or -1 at
 * the end of the text: a tag cut off by the end of input is dropped, as browsers do).
 */
function readAttributes(s: string, i: number, attrs: Attribute[] | null): { end: number; selfClosing: boolean } {
  const n = s.length;
  for (;;) {
    while (i < n && (isSpace(s.charCodeAt(i)) || s.charCodeAt(i) === HOLE_CODE)) i++;
    if (i >= n) return { end: -1, selfClosing: false };
    let c = s.charCodeAt(i);
    if (c === 62) return { end: i + 1, selfClosing: false };
    if (c === 47) {
      if (s.charCodeAt(i + 1) === 62) return { end: i + 2, selfClosing: true };
      i++;
      continue;
    }
    // Attribute name: a leading `=` belongs to it; it ends at a space, `/`, `>`, `=` or a HOLE.
    const nameStart = i;
    i++;
    while (i < n) {
      c = s.charCodeAt(i);
      if (isSpace(c) || c === 47 || c === 62 || c === 61 || c === HOLE_CODE) break;
      i++;
    }
    const name = s.slice(nameStart, i).toLowerCase();
    let j = i;
    while (j < n && isSpace(s.charCodeAt(j))) j++;
    if (s.charCodeAt(j) !== 61) {
      attrs?.push({ name, nameStart, value: null, valueStart: i, valueEnd: i, end: i });
      continue;
    }
    j++;
    while (j < n && isSpace(s.charCodeAt(j))) j++;
    if (j >= n) return { end: -1, selfClosing: false };
    const q = s.charCodeAt(j);
    let valueStart: number;
    let valueEnd: number;
    let end: number;
    if (q === 34 || q === 39) {
      valueStart = j + 1;
      valueEnd = s.indexOf(q === 34 ? '"' : "'", valueStart);
      if (valueEnd === -1) return { end: -1, selfClosing: false };
      end = valueEnd + 1;
    } else if (q === 62) {
      // `<a href=>`: an empty value.
      attrs?.push({ name, nameStart, value: '', valueStart: j, valueEnd: j, end: j });
      i = j;
      continue;
    } else {
      valueStart = j;
      while (j < n && !isSpace(s.charCodeAt(j)) && s.charCodeAt(j) !== 62) j++;
      valueEnd = end = j;
    }
    attrs?.push({ name, nameStart, value: s.slice(valueStart, valueEnd), valueStart, valueEnd, end });
    i = end;
  }
}

/**
 * Tokenizes `s`, calling `on` for every start tag, end tag and raw-text content, in order.
 * `foreign` starts inside `<svg>` (an inlined SVG file).
 */
export function tokenizeHtml(s: string, on: (token: HtmlToken) => void, options: { foreign?: boolean } = {}): void {
  const n = s.length;
  let foreign = options.foreign ? 1 : 0;
  let i = 0;
  while (i < n) {
    const lt = s.indexOf('<', i);
    if (lt === -1 || lt + 1 >= n) return;
    i = lt + 1;
    const c = s.charCodeAt(i);
    if (c === 33) {
      // `<!`: comment, CDATA (foreign content only), or a bogus comment such as the doctype.
      if (s.startsWith('--', i + 1)) {
        if (s.charCodeAt(i + 3) === 62) i += 4;
        else if (s.startsWith('->', i + 3)) i += 5;
        else {
          const close = /--!?>/g;
          close.lastIndex = i + 3;
          const m = close.exec(s);
          if (!m) return;
          i = m.index + m[0].length;
        }
      } else if (foreign > 0 && s.startsWith('[CDATA[', i + 1)) {
        const end = s.indexOf(']]>', i + 8);
        if (end === -1) return;
        i = end + 3;
      } else {
        const end = s.indexOf('>', i);
        if (end === -1) return;
        i = end + 1;
      }
      continue;
    }
    if (c === 63) {
      const end = s.indexOf('>', i);
      if (end === -1) return;
      i = end + 1;
      continue;
    }
    if (c === 47) {
      if (!isAlpha(s.charCodeAt(i + 1))) {
        if (s.charCodeAt(i + 1) === 62) {
          i += 2;
          continue;
        }
        const end = s.indexOf('>', i);
        if (end === -1) return;
        i = end + 1;
        continue;
      }
      let j = i + 1;
      while (j < n && !isSpace(s.charCodeAt(j)) && s.charCodeAt(j) !== 47 && s.charCodeAt(j) !== 62) j++;
      const name = s.slice(i + 1, j).toLowerCase();
      const r = readAttributes(s, j, null);
      if (r.end === -1) return;
      on({ kind: 'end', name, start: lt, end: r.end });
      if (foreign > 0 && (name === 'svg' || name === 'math')) foreign--;
      i = r.end;
      continue;
    }
    if (!isAlpha(c)) continue;
    let j = i + 1;
    while (j < n && !isSpace(s.charCodeAt(j)) && s.charCodeAt(j) !== 47 && s.charCodeAt(j) !== 62) j++;
    const name = s.slice(i, j).toLowerCase();
    const attrs: Attribute[] = [];
    const r = readAttributes(s, j, attrs);
    if (r.end === -1) return;
    on({ kind: 'start', name, start: lt, end: r.end, attrs, selfClosing: r.selfClosing, foreign: foreign > 0 });
    i = r.end;
    if (name === 'svg' || name === 'math') {
      if (!r.selfClosing) foreign++;
      continue;
    }
    if (foreign > 0) continue;
    if (name === 'plaintext') return;
    let end = -1;
    if (name === 'script') end = scriptEnd(s, i);
    else if (RAWTEXT.has(name) || RCDATA.has(name)) end = rawEnd(s, i, name);
    else continue;
    if (name === 'script' || RAWTEXT.has(name)) on({ kind: 'raw', name, start: i, end: end === -1 ? n : end, closed: end !== -1 });
    if (end === -1) return;
    i = end;
  }
}
