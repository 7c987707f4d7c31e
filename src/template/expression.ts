/**
 * The expression grammar inside view tags (docs/views.md "Expressions"):
 *
 *   expr    := path arg* named*         e.g.  article.get.content.html minimumHeaderLevel=2
 *   path    := 'this' | '.' | segment ('.' segment)*    segments may hold '-', '$' and emoji
 *   arg     := path | 'string' | "string" | number | true | false | null
 *   named   := key '=' arg
 *   section := expr ['by' N] ['as' alias]  |  ('$any' | '$all') path+
 *
 * Whitespace (line breaks included) separates tokens, so a tag may span several lines.
 */
import type { Expr, LiteralExpr, PathExpr } from './ast.js';
import type { Reporter } from './tokenize.js';

interface Token {
  text: string;
  start: number;
  /** A quoted string literal's value. */
  str?: string;
  /** `key=value`: the key and the value token. */
  key?: string;
  value?: Token;
}

const SEGMENT = /^[^\s.'"=(){}[\]<>,;|!?*+\\^`~#@&%]+$/;
const NUMBER = /^-?\d+(?:\.\d+)?$/;
const KEY = /^[A-Za-z_$][\w$-]*$/;

function isSpace(ch: string | undefined): boolean {
  return ch === ' ' || ch === '\t' || ch === '\n' || ch === '\r';
}

/** Reads a quoted string starting at `i` (the quote). Returns the value and the index after it, or null. */
function readString(text: string, i: number): { value: string; next: number } | null {
  const quote = text[i];
  let value = '';
  for (let j = i + 1; j < text.length; j++) {
    const ch = text[j];
    if (ch === '\\' && j + 1 < text.length) {
      value += text[++j];
    } else if (ch === quote) {
      return { value, next: j + 1 };
    } else {
      value += ch;
    }
  }
  return null;
}

function lex(text: string, base: number, report: Reporter): Token[] | null {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    while (i < text.length && isSpace(text[i])) i++;
    if (i >= text.length) break;
    const start = i;
    if (text[i] === "'" || text[i] === '"') {
      const s = readString(text, i);
      if (!s) {
        report('LW_VIEW_EXPRESSION', `unterminated string literal in "${text}"`, base + start);
        return null;
      }
      tokens.push({ text: text.slice(start, s.next), start: base + start, str: s.value });
      i = s.next;
      continue;
    }
    while (i < text.length && !isSpace(text[i]) && text[i] !== '=') i++;
    if (text[i] === '=') {
      const key = text.slice(start, i);
      i++;
      let value: Token;
      const vstart = i;
      if (text[i] === "'" || text[i] === '"') {
        const s = readString(text, i);
        if (!s) {
          report('LW_VIEW_EXPRESSION', `unterminated string literal in "${text}"`, base + vstart);
          return null;
        }
        value = { text: text.slice(vstart, s.next), start: base + vstart, str: s.value };
        i = s.next;
      } else {
        while (i < text.length && !isSpace(text[i])) i++;
        value = { text: text.slice(vstart, i), start: base + vstart };
      }
      tokens.push({ text: text.slice(start, i), start: base + start, key, value });
      continue;
    }
    tokens.push({ text: text.slice(start, i), start: base + start });
  }
  return tokens;
}

/** Parses a path token (`a.b-c.🎨`, `this`, `.`); reports and returns null when malformed. */
export function parsePath(text: string, start: number, report: Reporter): PathExpr | null {
  // Emoji roots are matched without the variation selector U+FE0F (`🎨️` is `🎨`).
  if (text.includes('\uFE0F')) text = text.replace(/\uFE0F/g, '');
  if (text === '.' || text === 'this') return { kind: 'path', root: 'this', segs: [], args: [], named: [], start, text };
  const parts = text.split('.');
  for (let i = parts[0] === 'this' ? 1 : 0; i < parts.length; i++) {
    if (!SEGMENT.test(parts[i]!)) {
      report('LW_VIEW_EXPRESSION', `malformed name "${text}": expected dotted names like a.b-c`, start);
      return null;
    }
  }
  return { kind: 'path', root: parts[0]!, segs: parts.slice(1), args: [], named: [], start, text };
}

function parseArg(tok: Token, report: Reporter): Expr | null {
  if (tok.str !== undefined) return { kind: 'literal', value: tok.str, start: tok.start };
  if (tok.text === '') {
    report('LW_VIEW_EXPRESSION', 'an argument has no value after "="', tok.start);
    return null;
  }
  if (tok.key !== undefined) {
    report('LW_VIEW_EXPRESSION', `unexpected "${tok.text}"`, tok.start);
    return null;
  }
  if (NUMBER.test(tok.text)) return { kind: 'literal', value: Number(tok.text), start: tok.start };
  if (tok.text === 'true' || tok.text === 'false') return { kind: 'literal', value: tok.text === 'true', start: tok.start };
  if (tok.text === 'null') return { kind: 'literal', value: null, start: tok.start };
  return parsePath(tok.text, tok.start, report);
}

/** Parses `path arg* k=v*` from tokens; returns null after reporting a problem. */
function parseCall(tokens: Token[], report: Reporter): Expr | null {
  const head = tokens[0]!;
  if (head.str !== undefined || NUMBER.test(head.text)) {
    if (tokens.length > 1) {
      report('LW_VIEW_EXPRESSION', `a literal takes no arguments: "${tokens[1]!.text}"`, tokens[1]!.start);
      return null;
    }
    return parseArg(head, report);
  }
  if (head.key !== undefined) {
    report('LW_VIEW_EXPRESSION', `expected a name before "${head.text}"`, head.start);
    return null;
  }
  const path = parsePath(head.text, head.start, report);
  if (!path) return null;
  for (const tok of tokens.slice(1)) {
    if (tok.key !== undefined) {
      if (!KEY.test(tok.key)) {
        report('LW_VIEW_EXPRESSION', `malformed argument name "${tok.key}"`, tok.start);
        return null;
      }
      const value = parseArg(tok.value!, report);
      if (!value) return null;
      path.named.push({ key: tok.key, value });
    } else {
      if (path.named.length > 0) {
        report('LW_VIEW_EXPRESSION', `positional argument "${tok.text}" after k=v arguments`, tok.start);
        return null;
      }
      const arg = parseArg(tok, report);
      if (!arg) return null;
      path.args.push(arg);
    }
  }
  return path;
}

/** Parses the expression of `{{x}}`, `{{{x}}}`, `{{% show x}}` and the like. */
export function parseExpression(text: string, start: number, report: Reporter): Expr | null {
  const tokens = lex(text, start, report);
  if (!tokens) return null;
  if (tokens.length === 0) {
    report('LW_VIEW_EXPRESSION', 'empty expression', start);
    return null;
  }
  return parseCall(tokens, report);
}

export interface SectionHead {
  /** The name the closing tag must repeat. */
  name: string;
  expr?: Expr;
  test?: { op: 'any' | 'all'; exprs: Expr[] };
  alias?: string;
  by?: number;
}

/** Parses the head of `{{#…}}` / `{{^…}}` in a view. */
export function parseSectionHead(text: string, start: number, report: Reporter): SectionHead | null {
  const tokens = lex(text, start, report);
  if (!tokens || tokens.length === 0) return null;
  const head = tokens[0]!;
  if (head.text === '$any' || head.text === '$all') {
    const exprs: Expr[] = [];
    for (const tok of tokens.slice(1)) {
      const e = parseArg(tok, report);
      if (!e) return null;
      exprs.push(e);
    }
    if (exprs.length === 0) {
      report('LW_VIEW_EXPRESSION', `${head.text} needs at least one value, e.g. {{#${head.text} a b}}`, head.start);
      return null;
    }
    return { name: head.text, test: { op: head.text === '$any' ? 'any' : 'all', exprs } };
  }
  const call: Token[] = [];
  let i = 0;
  while (i < tokens.length && tokens[i]!.text !== 'by' && tokens[i]!.text !== 'as') call.push(tokens[i++]!);
  if (call.length === 0) {
    report('LW_VIEW_EXPRESSION', `expected a name before "${head.text}"`, head.start);
    return null;
  }
  const expr = parseCall(call, report);
  if (!expr) return null;
  const result: SectionHead = { name: head.text, expr };
  if (tokens[i]?.text === 'by') {
    const n = tokens[i + 1];
    if (!n || !/^-?\d+$/.test(n.text)) {
      report('LW_VIEW_EXPRESSION', `"by" needs a whole number of items per group, e.g. {{#${head.text} by 3 as row}}`, tokens[i]!.start);
      return null;
    }
    const by = Number(n.text);
    if (by < 1 || by > 10) {
      report('LW_VIEW_BY_RANGE', `"by ${n.text}": groups hold 1 to 10 items`, n.start);
      return null;
    }
    result.by = by;
    i += 2;
  }
  if (tokens[i]?.text === 'as') {
    const alias = tokens[i + 1];
    if (!alias || alias.str !== undefined || alias.key !== undefined || !SEGMENT.test(alias.text) || alias.text === 'this') {
      report('LW_VIEW_EXPRESSION', `"as" needs a plain name, e.g. {{#${head.text} as item}}`, tokens[i]!.start);
      return null;
    }
    result.alias = alias.text;
    i += 2;
  }
  if (i < tokens.length) {
    report('LW_VIEW_EXPRESSION', `unexpected "${tokens[i]!.text}" in section tag`, tokens[i]!.start);
    return null;
  }
  return result;
}

/** A literal used where a value is expected in pragmas (`const x = 'text'`). */
export function literalOf(expr: Expr): LiteralExpr | null {
  return expr.kind === 'literal' ? expr : null;
}
