/**
 * The parser: tags (tokenize.ts) → nested tree of `Node`s (ast.ts).
 *
 * Three steps:
 *   1. nest the tags into sections, parents and blocks, reporting unclosed and mismatched ones;
 *   2. decide which tags stand alone on their line (the spec removes such lines from the output;
 *      a parent or block counts as standalone when its opening tag is clear on the left and its
 *      closing tag clear on the right, even on one line);
 *   3. cut the text between tags accordingly, de-indent block contents whose opening tag ends its
 *      line ("intrinsic indentation", ~inheritance.json), and mark line starts for re-indentation.
 *
 * The whitespace rules follow the official spec and its inheritance module as wontache
 * implements them (the one peer that passes all of it).
 */
import type { BlockNode, Expr, Node, PathExpr, PragmaNode, SectionNode, TextNode } from './ast.js';
import { locate } from '../diag/index.js';
import { parseExpression, parsePath, parseSectionHead } from './expression.js';
import { parsePragma, type Pragma } from './pragma.js';
import { tokenize, type Reporter, type Tag } from './tokenize.js';

export interface ParseOptions {
  /** Offset where the template starts (after the marker line in views). */
  from: number;
  /** Views: pragmas, expressions with arguments, `as`/`by`, `$any`/`$all`. */
  view: boolean;
  report: Reporter;
  /** Delimiters to start with (lambda results keep the section's delimiters). */
  delims?: [string, string];
}

export interface ParsedTemplate {
  nodes: Node[];
  /** Declaration pragmas in source order (views). */
  pragmas: Pragma[];
}

interface Entry {
  tag: Tag;
  /** Containers only: nested entries and the closing tag (synthetic when missing). */
  children?: Entry[];
  close?: Tag;
  /** Containers: the name the closing tag must repeat. */
  name?: string;
}

const CONTAINERS = new Set(['section', 'inverted', 'parent', 'block']);

/**
 * How deep sections, parents and blocks may nest in one file. Parsing, code generation and
 * rendering recurse once per level; past this, a template is refused with a located error rather
 * than running out of call stack.
 */
export const MAX_NESTING = 500;

function syntheticClose(at: number, delims: [string, string]): Tag {
  return { kind: 'close', start: at, end: at, content: '', contentStart: at, lineBegin: -1, trailEnd: -1, delims };
}

/** The name a container's closing tag repeats: the first word of a view section, else the content. */
function containerName(tag: Tag, view: boolean): string {
  if (view && (tag.kind === 'section' || tag.kind === 'inverted')) return /^\S*/.exec(tag.content)![0];
  return tag.content;
}

function nest(tags: Tag[], source: string, view: boolean, report: Reporter): Entry[] {
  const root: Entry = { tag: syntheticClose(0, ['{{', '}}']), children: [] };
  const stack: Entry[] = [root];
  // Sections closed early by a mismatched closing tag: their own closing tag, met later, is not
  // reported again.
  const forced: string[] = [];
  for (const tag of tags) {
    if (tag.content === '' && tag.kind !== 'comment' && tag.kind !== 'delimiters') continue;
    const top = stack[stack.length - 1]!;
    if (tag.kind === 'close') {
      const name = tag.content;
      let depth = stack.length - 1;
      while (depth > 0 && stack[depth]!.name !== name) depth--;
      if (depth === 0) {
        const f = forced.indexOf(name);
        if (f >= 0) forced.splice(f, 1);
        else report('LW_VIEW_UNEXPECTED_CLOSE', `closing tag "${source.slice(tag.start, tag.end)}" has no open section "${name}"`, tag.start);
        continue;
      }
      for (let i = stack.length - 1; i > depth; i--) {
        const open = stack[i]!;
        const at = locate(source, open.tag.start);
        report(
          'LW_VIEW_MISMATCHED_SECTION',
          `closing tag "${source.slice(tag.start, tag.end)}" does not match the open section "${open.name}" (opened at ${at.line}:${at.column}); close "${open.name}" first`,
          tag.start,
        );
        open.close = syntheticClose(tag.start, tag.delims);
        forced.push(open.name!);
      }
      stack.length = depth + 1;
      stack[depth]!.close = tag;
      stack.pop();
      continue;
    }
    if (CONTAINERS.has(tag.kind) && stack.length > MAX_NESTING) {
      report(
        'LW_VIEW_NESTING_DEPTH',
        `"${source.slice(tag.start, tag.end)}" opens a section ${stack.length} levels deep; sections, parents and blocks may nest at most ${MAX_NESTING} levels: close the open sections first, or move the inner part into a partial`,
        tag.start,
      );
      // Nothing past this tag is read: the sections still open are closed here, unreported.
      for (let i = stack.length - 1; i > 0; i--) stack[i]!.close = syntheticClose(tag.start, stack[i]!.tag.delims);
      return root.children!;
    }
    const entry: Entry = { tag };
    top.children!.push(entry);
    if (CONTAINERS.has(tag.kind)) {
      entry.children = [];
      entry.name = containerName(tag, view);
      stack.push(entry);
    }
  }
  for (let i = stack.length - 1; i > 0; i--) {
    const open = stack[i]!;
    report('LW_VIEW_UNCLOSED_SECTION', `section "${open.name}" is never closed; add {{/${open.name}}}`, open.tag.start);
    open.close = syntheticClose(source.length, open.tag.delims);
  }
  return root.children!;
}

/** Plain Mustache names: `.` or dotted keys, no arguments. */
function plainPath(content: string, start: number): PathExpr {
  if (content === '.') return { kind: 'path', root: 'this', segs: [], args: [], named: [], start, text: content };
  const parts = content.split('.');
  return { kind: 'path', root: parts[0]!, segs: parts.slice(1), args: [], named: [], start, text: content };
}

/** Parses one template. Problems go to `report`; the result is usable even after problems. */
export function parseTemplate(source: string, options: ParseOptions): ParsedTemplate {
  const { from, view, report } = options;
  const tags = tokenize(source, from, view, report, options.delims);
  const pragmas: Pragma[] = [];
  const pragmaOf = new Map<Tag, Pragma | null>();
  for (const tag of tags) {
    if (tag.kind !== 'pragma') continue;
    const p = parsePragma(tag.content, tag.contentStart, report);
    pragmaOf.set(tag, p);
    if (p && !tag.output) pragmas.push(p);
  }
  const entries = nest(tags, source, view, report);

  // Characters removed from the start of a line by block de-indentation, by line-start offset.
  const removed = new Map<number, number>();
  const isLineStart = (p: number): boolean => p === from || source.charCodeAt(p - 1) === 10;
  const eff = (p: number): number => p + (removed.get(p) ?? 0);
  const isBreak = (p: number): boolean => {
    const c = source.charCodeAt(p);
    return c === 10 || c === 13;
  };

  function dedent(prefix: string, a: number, b: number): void {
    for (let p = a; p < b; p++) {
      if (p !== a && source.charCodeAt(p - 1) !== 10) continue;
      if (source.startsWith(prefix, eff(p))) removed.set(p, (removed.get(p) ?? 0) + prefix.length);
    }
  }

  function leadingBlanks(p: number, limit: number): string {
    const s = eff(p);
    let e = s;
    while (e < limit && (source.charCodeAt(e) === 32 || source.charCodeAt(e) === 9)) e++;
    return source.slice(s, e);
  }

  /**
   * Adds the text between `a` and `b`. `startsLine`: a tag that prints nothing (a comment, a
   * declaration) began this line just before `a`, so the text is where the line's indentation goes.
   */
  function text(a: number, b: number, out: Node[], startsLine = false): void {
    if (a >= b) {
      // Tags that printed nothing began a line that ends here: the line is not empty, so it
      // still gets its indentation.
      if (startsLine && a === b) out.push({ type: 'text', start: a, end: a, bol: true, text: '', marks: [] });
      return;
    }
    let p = a;
    let bol = false;
    if (startsLine) bol = true;
    else if (isLineStart(a)) {
      p = Math.min(eff(a), b);
      bol = p < b && !isBreak(p);
    }
    let t = '';
    const marks: number[] = [];
    for (;;) {
      const nl = source.indexOf('\n', p);
      if (nl < 0 || nl >= b - 1) break;
      t += source.slice(p, nl + 1);
      const q = nl + 1;
      const e = Math.min(eff(q), b);
      if (e < b && !isBreak(e)) marks.push(t.length);
      p = e;
    }
    t += source.slice(p, b);
    if (t === '' && !bol) return;
    const node: TextNode = { type: 'text', start: a, end: b, bol, text: t, marks };
    out.push(node);
  }

  const standalone = (t: Tag): boolean => t.lineBegin >= 0 && t.trailEnd >= 0;
  const tagBol = (t: Tag): boolean => t.lineBegin >= 0 && eff(t.lineBegin) === t.start;

  function expressionOf(tag: Tag): Expr | null {
    return view ? parseExpression(tag.content, tag.contentStart, report) : plainPath(tag.content, tag.contentStart);
  }

  function dynamicName(tag: Tag): { name: string; dynamic?: Expr } | null {
    if (!tag.content.startsWith('*')) return { name: tag.content };
    const rest = tag.content.slice(1).trimStart();
    const at = tag.contentStart + tag.content.length - rest.length;
    const dynamic = view ? parsePath(rest, at, report) : plainPath(rest, at);
    if (!dynamic) return null;
    return { name: tag.content, dynamic };
  }

  /** Builds a block (site or override); returns the node and where the surrounding text is cut. */
  function block(e: Entry, inParent: boolean): { node: BlockNode; cutBefore: number; cutAfter: number } {
    const o = e.tag;
    const c = e.close!;
    const alone = !inParent && o.lineBegin >= 0 && c.trailEnd >= 0;
    let nonEmpty = false;
    if (o.trailEnd >= 0) {
      nonEmpty = e.children!.length > 0 || source.slice(o.trailEnd, c.start).replace(/(?:\r?\n|\r)?[ \t]*$/, '') !== '';
    }
    const intrinsic = (inParent || alone) && o.trailEnd >= 0 && nonEmpty;
    let indent: string | null = alone ? source.slice(eff(o.lineBegin), o.start) : null;
    let bodyStart = o.end;
    let bodyEnd = c.start;
    if (intrinsic) {
      bodyStart = o.trailEnd;
      bodyEnd = c.lineBegin >= 0 ? c.lineBegin : c.start;
      const d = leadingBlanks(bodyStart, bodyEnd);
      if (d !== '') dedent(d, bodyStart, bodyEnd);
      indent = d;
    }
    const body = build(e.children!, bodyStart, bodyEnd);
    if (!intrinsic && !standalone(c)) closeLine(c, body);
    const first = body[0];
    const lead = (alone || inParent) && !isLineStart(bodyStart) && first !== undefined && first.start === bodyStart && (first.type !== 'text' || !isBreak(bodyStart));
    const node: BlockNode = {
      type: 'block',
      start: o.start,
      end: c.end,
      bol: !alone && tagBol(o),
      name: o.content,
      nameStart: o.contentStart,
      indent,
      body,
      lead,
    };
    return {
      node,
      cutBefore: alone ? o.lineBegin : o.start,
      cutAfter: alone ? (c.lineBegin >= 0 ? c.trailEnd : c.end) : c.end,
    };
  }

  /**
   * A closing tag that begins its line but does not stand alone (`{{/a}}x`): the spec indents
   * every line of a partial, so that line's indentation comes before the closing tag, inside the
   * body: an empty line-start text at the body's end writes it each time the body renders.
   */
  function closeLine(c: Tag, body: Node[]): void {
    if (tagBol(c)) body.push({ type: 'text', start: c.start, end: c.start, bol: true, text: '', marks: [] });
  }

  function build(list: Entry[], a: number, b: number): Node[] {
    const out: Node[] = [];
    let cur = a;
    // Where a tag that printed nothing left the start of its line (see `text`).
    let carry = -1;
    for (const e of list) {
      const t = e.tag;
      let cutBefore = t.start;
      let cutAfter = t.end;
      let node: Node | null = null;
      switch (t.kind) {
        case 'comment':
        case 'delimiters':
          if (standalone(t)) {
            cutBefore = t.lineBegin;
            cutAfter = t.trailEnd;
          }
          break;
        case 'pragma': {
          const p = pragmaOf.get(t) ?? null;
          if (!t.output) {
            if (standalone(t)) {
              cutBefore = t.lineBegin;
              cutAfter = t.trailEnd;
            }
            break;
          }
          if (!p) break;
          const base = { type: 'pragma' as const, start: t.start, end: t.end, bol: tagBol(t) };
          if (p.kind === 'year') node = { ...base, name: 'year' };
          else if (p.kind === 'lorem') node = { ...base, name: p.which };
          else if (p.kind === 'show') node = { ...base, name: 'show', expr: p.expr };
          else if (p.kind === 'choose-string') node = { ...base, name: 'choose-string', expr: p.expr, map: p.map } satisfies PragmaNode;
          break;
        }
        case 'var':
        case 'raw': {
          const expr = expressionOf(t);
          if (expr) node = { type: 'var', start: t.start, end: t.end, bol: tagBol(t), expr, raw: t.kind === 'raw' };
          break;
        }
        case 'partial': {
          const alone = standalone(t);
          if (alone) {
            cutBefore = t.lineBegin;
            cutAfter = t.trailEnd;
          }
          const n = dynamicName(t);
          if (n) {
            node = {
              type: 'partial',
              start: t.start,
              end: t.end,
              bol: !alone && tagBol(t),
              ...n,
              indent: alone ? source.slice(eff(t.lineBegin), t.start) : null,
            };
          }
          break;
        }
        case 'section':
        case 'inverted': {
          const c = e.close!;
          const openAlone = standalone(t);
          const closeAlone = standalone(c);
          if (openAlone) cutBefore = t.lineBegin;
          const bodyStart = openAlone ? t.trailEnd : t.end;
          const bodyEnd = closeAlone ? c.lineBegin : c.start;
          cutAfter = closeAlone ? c.trailEnd : c.end;
          const body = build(e.children!, bodyStart, Math.max(bodyStart, bodyEnd));
          if (!closeAlone) closeLine(c, body);
          let head: Omit<SectionNode, 'type' | 'start' | 'end' | 'bol' | 'inverted' | 'body' | 'rawBody' | 'delims'> | null;
          if (view) head = parseSectionHead(t.content, t.contentStart, report);
          else head = { name: t.content, expr: plainPath(t.content, t.contentStart) };
          // A malformed head was reported; keep the body so problems inside it are found too.
          head ??= { name: e.name!, expr: { kind: 'literal', value: null, start: t.contentStart } };
          node = {
            type: 'section',
            start: t.start,
            end: c.end,
            bol: !openAlone && tagBol(t),
            inverted: t.kind === 'inverted',
            ...head,
            body,
            rawBody: source.slice(t.end, c.start),
            delims: t.delims,
          };
          break;
        }
        case 'parent': {
          const c = e.close!;
          const alone = t.lineBegin >= 0 && c.trailEnd >= 0;
          if (alone) {
            cutBefore = t.lineBegin;
            cutAfter = c.trailEnd;
          } else {
            cutAfter = c.end;
          }
          const blocks: BlockNode[] = [];
          for (const child of e.children!) {
            if (child.tag.kind === 'block') blocks.push(block(child, true).node);
            else if (view && child.tag.kind !== 'comment' && child.tag.kind !== 'delimiters' && !(child.tag.kind === 'pragma' && !child.tag.output)) {
              report('LW_VIEW_IGNORED_IN_PARENT', `"${source.slice(child.tag.start, child.tag.end)}" inside {{<${t.content}}} but outside a block is ignored`, child.tag.start);
            }
          }
          const n = dynamicName(t);
          if (n) {
            node = {
              type: 'parent',
              start: t.start,
              end: c.end,
              bol: !alone && tagBol(t),
              ...n,
              indent: alone ? source.slice(eff(t.lineBegin), t.start) : null,
              blocks,
            };
          }
          break;
        }
        case 'block': {
          const r = block(e, false);
          cutBefore = r.cutBefore;
          cutAfter = r.cutAfter;
          node = r.node;
          break;
        }
        case 'close':
          break;
      }
      const before = out.length;
      text(cur, cutBefore, out, carry === cur);
      if (node) {
        if (carry === cutBefore && out.length === before && cutBefore === node.start) node.bol = true;
        out.push(node);
        carry = -1;
      } else if (!standalone(t) && (tagBol(t) || (out.length === before && carry === t.start))) {
        carry = t.end;
      } else {
        carry = -1;
      }
      cur = cutAfter;
    }
    text(cur, b, out, carry === cur);
    return out;
  }

  return { nodes: build(entries, from, source.length), pragmas };
}
