/**
 * The scanner: finds every tag of a Mustache source, following `{{=<% %>=}}` delimiter changes,
 * and records where each tag sits on its line (for the standalone-line rules of the spec).
 *
 * Token shape: `Tag` below. Text between tags is implicit (the gaps between `end` and the next
 * `start`). A tag is "clear left" when only spaces or tabs separate it from the start of its line,
 * "clear right" when only spaces or tabs separate it from the end of its line (or of the file).
 */
import type { Code } from '../diag/index.js';

export type TagKind =
  | 'var'
  | 'raw'
  | 'section'
  | 'inverted'
  | 'close'
  | 'partial'
  | 'parent'
  | 'block'
  | 'comment'
  | 'delimiters'
  | 'pragma';

export interface Tag {
  kind: TagKind;
  /** Offset of the opening delimiter. */
  start: number;
  /** Offset just after the closing delimiter. */
  end: number;
  /** Content after the sigil, trimmed (for pragmas: after `%`). */
  content: string;
  /** Offset of `content` in the source. */
  contentStart: number;
  /** Start of the tag's line when clear left, else -1. */
  lineBegin: number;
  /** Offset after the trailing blanks and line break when clear right, else -1. */
  trailEnd: number;
  /** Delimiters in effect when the tag was read. */
  delims: [string, string];
  /** Pragmas: true when it prints something (year, show, …) and so never stands alone. */
  output?: boolean;
}

/** Receives every problem; the plain API throws on the first, views collect them all. */
export type Reporter = (code: Code, message: string, offset: number) => void;

export const DEFAULT_DELIMS: [string, string] = ['{{', '}}'];

/** Pragmas that write output; every other pragma is a declaration and may stand alone. */
export const OUTPUT_PRAGMAS = new Set(['year', 'show', 'choose-string', 'lorem-title', 'lorem-paragraph']);

const SIGILS: Record<string, TagKind> = {
  '#': 'section',
  '^': 'inverted',
  '/': 'close',
  '>': 'partial',
  '<': 'parent',
  $: 'block',
  '&': 'raw',
  '!': 'comment',
};

function isBlank(code: number): boolean {
  return code === 32 || code === 9;
}

/**
 * Scans `source` from offset `from` (views start after the marker line). `pragmas` enables the
 * `{{% … }}` tags of Laneway views; the plain API reads `%` as part of a name.
 */
export function tokenize(source: string, from: number, pragmas: boolean, report: Reporter, delims = DEFAULT_DELIMS): Tag[] {
  const tags: Tag[] = [];
  let [open, close] = delims;
  let pos = from;
  const len = source.length;
  while (pos < len) {
    const start = source.indexOf(open, pos);
    if (start < 0) break;
    let i = start + open.length;
    const sigil = source[i];
    let kind: TagKind = 'var';
    let closer = close;
    if (sigil === '{') {
      kind = 'raw';
      closer = '}' + close;
      i++;
    } else if (sigil === '=') {
      kind = 'delimiters';
      closer = '=' + close;
      i++;
    } else if (sigil !== undefined && SIGILS[sigil] !== undefined) {
      kind = SIGILS[sigil];
      i++;
    }
    const stop = source.indexOf(closer, i);
    if (stop < 0) {
      report('LW_VIEW_TAG_SYNTAX', `unclosed tag: "${open}" has no matching "${closer}"`, start);
      break;
    }
    const end = stop + closer.length;
    let raw = source.slice(i, stop);
    let contentStart = i;
    let output: boolean | undefined;
    if (kind === 'var' && pragmas) {
      const lead = raw.length - raw.trimStart().length;
      if (raw[lead] === '%') {
        kind = 'pragma';
        contentStart = i + lead + 1;
        raw = raw.slice(lead + 1);
        const word = /^\s*([^\s]*)/.exec(raw)![1];
        output = OUTPUT_PRAGMAS.has(word);
      }
    }
    const lead = raw.length - raw.trimStart().length;
    const content = raw.trim();
    contentStart += lead;

    let b = start;
    while (b > from && isBlank(source.charCodeAt(b - 1))) b--;
    const lineBegin = b === from || source.charCodeAt(b - 1) === 10 ? b : -1;
    let e = end;
    while (e < len && isBlank(source.charCodeAt(e))) e++;
    let trailEnd = -1;
    if (e === len) trailEnd = len;
    else if (source.charCodeAt(e) === 10) trailEnd = e + 1;
    else if (source.charCodeAt(e) === 13 && source.charCodeAt(e + 1) === 10) trailEnd = e + 2;

    const tag: Tag = { kind, start, end, content, contentStart, lineBegin, trailEnd, delims: [open, close] };
    if (output !== undefined) tag.output = output;
    tags.push(tag);
    pos = end;

    if (kind === 'delimiters') {
      const parts = content.split(/\s+/);
      if (parts.length !== 2 || parts.some((p) => p === '' || p.includes('='))) {
        report('LW_VIEW_TAG_SYNTAX', `malformed delimiter change "${source.slice(start, end)}": expected two delimiters separated by a space, e.g. {{=<% %>=}}`, start);
      } else {
        [open, close] = parts as [string, string];
      }
    } else if (kind !== 'comment' && content === '') {
      report('LW_VIEW_TAG_SYNTAX', `empty tag "${source.slice(start, end)}"`, start);
    }
  }
  return tags;
}
