/**
 * The page pass: one file's HTML, read through its template structure.
 *
 * A template's parse tree is flattened into "fragments": the text nodes' text, with one HOLE per
 * tag (and per opening and closing tag of a section or block). The body of each block override
 * of `{{<parent}}` is a fragment of its own, scanned from the data state, because the markup
 * around it lives in another file. A plain page is one fragment of one text node.
 *
 * The HTML tokenizer then finds, per fragment:
 *   - restrictions: `style=`, `on*=`, `javascript:` URLs (build errors);
 *   - sources: `<script src>`, stylesheet and preload `<link href>`, images and media, and the
 *     `data-*-src` attributes of `<script>`/`<link>`;
 *   - the `<link itemprop="content-security-policy">` declaration (removed from the output);
 *   - inline `<script>`/`<style>` blocks: a block of text only is hashed now; a block holding a
 *     tag is marked for capture, and hashed per response from the rendered text;
 *   - references to rewrite (fingerprinted assets) and private files to inline (through hooks).
 *
 * Rewrites edit the text nodes in place (before code generation). When a file has edits, it is
 * scanned a second time, silently, so that hashes and capture points describe the edited text.
 */
import type { Code } from '../diag/index.js';
import { HOLE, tokenizeHtml, type Attribute, type StartTag } from './html.js';
import { addSource, checkSource, emptyFacts, hashSource, sourceOfUrl, type Directive, type FileFacts, type HashAlgorithm } from './policy.js';

/** A text node of a parse tree, as the template engine builds it (ast.ts `TextNode`). */
export interface TextLike {
  type: 'text';
  start: number;
  end: number;
  bol: boolean;
  text: string;
  marks: number[];
}

/** The node shapes the pass reads; the template engine's `Node` fits them. */
export type NodeLike =
  | TextLike
  | { type: 'section' | 'block'; start: number; end: number; body: NodeLike[] }
  | { type: 'parent'; start: number; end: number; blocks: ReadonlyArray<{ body: NodeLike[] }> }
  | { type: 'var'; start: number; end: number; raw: boolean }
  | { type: 'pragma'; start: number; end: number; name: string }
  | { type: 'partial'; start: number; end: number };

/** One file: a template's parse tree, or a plain page as one text node. */
export interface TemplateLike {
  file: string;
  source: string;
  nodes: NodeLike[];
  partials?: Record<string, { kind: 'partial' | 'svg'; file: string }>;
}

/**
 * A point where the renderer records the output offset (RenderOutput.captured): the start or the
 * end of a dynamic inline block. `indentedOnly`: a static block whose lines get indented when
 * its partial is included with indentation; recorded only then.
 */
export interface CapturePoint {
  node: TextLike;
  /** Index into `node.text`. */
  index: number;
  id: number;
  edge: 'start' | 'end';
  indentedOnly: boolean;
}

/** What the app does with references (assets, inlining); see PolicyCompiler. */
export interface ReferenceHooks {
  /**
   * `<script src>` or stylesheet `<link href>`: the text to put inline when the URL names a
   * private file, a problem to report, or undefined for an ordinary reference.
   */
  inline?(url: string, kind: 'script' | 'style', file: string): { text: string } | { code: Code; message: string } | undefined;
  /** A static reference in `src`, `href`, `srcset` or `content`: the URL to write instead. */
  rewrite?(url: string, file: string): string | undefined;
}

export interface Reporter {
  (severity: 'error' | 'warning', code: Code, message: string, file: string, source: string, offset: number): void;
}

export interface ScanOptions {
  algorithm: HashAlgorithm;
  hooks: ReferenceHooks;
  /** Undefined: a silent re-scan. */
  report?: Reporter;
  /** Registry of dynamic block kinds; a block k captures with ids 2k and 2k+1. */
  kinds: Array<'script' | 'style'>;
  /** An inlined SVG file: problems are warnings (the file is an asset, often exported by a tool). */
  svg?: boolean;
}

export interface ScanResult {
  facts: FileFacts;
  captures: CapturePoint[];
  /** Inline blocks found (a warning for HTML suppliers, whose output is never hashed). */
  inlineBlocks: number;
}

interface Segment {
  f: number;
  end: number;
  node: NodeLike;
  /** Which node list the segment belongs to (a section body is a list of its own). */
  list: number;
  text: boolean;
}

interface Fragment {
  s: string;
  segs: Segment[];
}

interface Edit {
  node: TextLike;
  from: number;
  to: number;
  insert: string;
}

function flatten(nodes: readonly NodeLike[], frag: Fragment, list: number, out: Fragment[], counter: { n: number }): void {
  for (const node of nodes) {
    if (node.type === 'text') {
      frag.segs.push({ f: frag.s.length, end: frag.s.length + node.text.length, node, list, text: true });
      frag.s += node.text;
      continue;
    }
    const hole = (): void => {
      frag.segs.push({ f: frag.s.length, end: frag.s.length + 1, node, list, text: false });
      frag.s += HOLE;
    };
    hole();
    if (node.type === 'section' || node.type === 'block') {
      flatten(node.body, frag, ++counter.n, out, counter);
      hole();
    } else if (node.type === 'parent') {
      for (const b of node.blocks) {
        const own: Fragment = { s: '', segs: [] };
        out.push(own);
        flatten(b.body, own, ++counter.n, out, counter);
      }
    }
  }
}

export function fragmentsOf(nodes: readonly NodeLike[]): Fragment[] {
  const main: Fragment = { s: '', segs: [] };
  const out = [main];
  flatten(nodes, main, 0, out, { n: 0 });
  return out;
}

function segmentAt(frag: Fragment, offset: number): Segment | undefined {
  const segs = frag.segs;
  let lo = 0;
  let hi = segs.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const s = segs[mid]!;
    if (offset < s.f) hi = mid - 1;
    else if (offset >= s.end) lo = mid + 1;
    else return s;
  }
  return undefined;
}

/**
 * The source offset of `index` in a text node. A node's text is its source range with blanks
 * removed at line starts (block de-indentation), so each text line is a suffix of its source line.
 */
export function sourceOffset(node: TextLike, index: number, source: string): number {
  const text = node.text;
  let t = 0;
  let s = node.start;
  for (;;) {
    const tn = text.indexOf('\n', t);
    const sn = source.indexOf('\n', s);
    const tEnd = tn === -1 || tn >= text.length ? text.length : tn;
    const sEnd = sn === -1 || sn >= node.end ? node.end : sn;
    const skip = Math.max(0, sEnd - s - (tEnd - t));
    if (index <= tEnd || tn === -1) return Math.min(s + skip + (index - t), node.end);
    t = tn + 1;
    s = sn + 1;
    if (s >= node.end) return node.end;
  }
}

const URL_ATTRIBUTES = new Set(['href', 'src', 'action', 'formaction', 'xlink:href', 'data', 'poster', 'background', 'cite', 'codebase', 'manifest', 'icon', 'ping']);
const REWRITTEN = new Set(['src', 'href', 'srcset', 'content', 'poster']);

const DATA_SOURCES: Record<string, Directive> = {
  'data-frame-src': 'frame-src',
  'data-connect-src': 'connect-src',
  'data-script-src': 'script-src',
  'data-style-src': 'style-src',
  'data-font-src': 'font-src',
  'data-img-src': 'img-src',
};
const DECLARATION_FLAGS = new Set(['data-connect-self', 'data-form-self', 'data-img-src-data']);

const NAMED: Record<string, string> = { colon: ':', tab: '\t', newline: '\n', amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0', sol: '/', lpar: '(', rpar: ')' };

/** Decodes the character references that matter for a URL scheme check. */
function decodeReferences(v: string): string {
  if (!v.includes('&')) return v;
  return v.replace(/&(#[xX][0-9a-fA-F]+|#\d+|[a-zA-Z]+);?/g, (m, e: string) => {
    if (e[0] === '#') {
      const code = e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : m;
    }
    return NAMED[e.toLowerCase()] ?? m;
  });
}

/** Whether a (possibly partial) attribute value starts a `javascript:` URL, as a browser reads it. */
export function isJavascriptUrl(value: string): boolean {
  // The URL parser drops tabs and newlines anywhere and C0 controls and spaces at the start.
  const v = decodeReferences(value).replace(/[\t\n\r]/g, '').replace(/^[\u0000-\u0020]+/, '');
  return /^javascript:/i.test(v);
}

function attr(tag: StartTag, name: string): Attribute | undefined {
  return tag.attrs.find((a) => a.name === name);
}

function isStatic(value: string): boolean {
  return !value.includes(HOLE);
}

/** A source for a reference whose value is partly dynamic: known only from a literal prefix. */
function sourceOfPrefix(prefix: string): string | undefined {
  if (/^\/(?!\/)/.test(prefix)) return "'self'";
  const m = /^(https?:\/\/[^/\s\uE000?#]+)\//i.exec(prefix);
  return m ? m[1]!.toLowerCase() : undefined;
}

/** Scans one file; `edits` are applied to its text nodes before the silent re-scan. */
export function scanFile(t: TemplateLike, options: ScanOptions): ScanResult {
  const first = scanOnce(t, options, true);
  if (first.edits.length === 0) return first;
  applyEdits(first.edits);
  const again = scanOnce(t, { ...options, report: undefined }, false);
  // The declaration link is gone from the text now; its settings stay.
  again.facts.connectSelf = first.facts.connectSelf;
  again.facts.formSelf = first.facts.formSelf;
  again.facts.imgData = first.facts.imgData;
  for (const d of first.declared) for (const s of d.sources) addSource(again.facts, d.directive, s);
  return again;
}

function applyEdits(edits: Edit[]): void {
  const byNode = new Map<TextLike, Edit[]>();
  for (const e of edits) byNode.set(e.node, [...(byNode.get(e.node) ?? []), e]);
  // Right to left within a node, so earlier offsets stay valid.
  for (const e of [...byNode.values()].flatMap((list) => list.sort((a, b) => b.from - a.from))) {
    const n = e.node;
    const delta = e.insert.length - (e.to - e.from);
    n.text = n.text.slice(0, e.from) + e.insert + n.text.slice(e.to);
    // Line starts inside the replaced range are gone; the inserted text gets none (it is sent
    // as is, never re-indented, so a hash computed now stays valid).
    n.marks = n.marks.filter((m) => m <= e.from || m >= e.to).map((m) => (m >= e.to && m > e.from ? m + delta : m));
  }
}

interface Once extends ScanResult {
  edits: Edit[];
  /** Sources of the declaration link (kept across the re-scan, which no longer sees it). */
  declared: Array<{ directive: Directive; sources: string[] }>;
}

function scanOnce(t: TemplateLike, options: ScanOptions, reporting: boolean): Once {
  const { file, source } = t;
  const facts = emptyFacts();
  const captures: CapturePoint[] = [];
  const edits: Edit[] = [];
  const declared: Once['declared'] = [];
  const report = reporting ? options.report : undefined;
  const hooks = options.hooks;
  let inlineBlocks = 0;

  for (const frag of fragmentsOf(t.nodes)) {
    const at = (offset: number): number => {
      const seg = segmentAt(frag, Math.min(offset, Math.max(0, frag.s.length - 1)));
      if (seg === undefined) return 0;
      return seg.text ? sourceOffset(seg.node as TextLike, offset - seg.f, source) : seg.node.start;
    };
    const error = (code: Code, message: string, offset: number): void => {
      if (options.svg) report?.('warning', 'LW_CSP_SVG_INLINE', `inlined SVG: ${message}`, file, source, at(offset));
      else report?.('error', code, message, file, source, at(offset));
    };
    const warn = (code: Code, message: string, offset: number): void => report?.('warning', code, message, file, source, at(offset));
    /** The text segment holding all of [from, to), or undefined when a tag or a node boundary is inside. */
    const literal = (from: number, to: number): Segment | undefined => {
      const seg = segmentAt(frag, from);
      return seg !== undefined && seg.text && to <= seg.end ? seg : undefined;
    };
    const edit = (from: number, to: number, insert: string, code: Code, what: string): boolean => {
      const seg = literal(from, to);
      if (seg === undefined) {
        error(code, `${what} must be written literally, in one piece: no template tags inside it or around parts of it`, from);
        return false;
      }
      edits.push({ node: seg.node as TextLike, from: from - seg.f, to: to - seg.f, insert });
      return true;
    };

    const dataSources = (tag: StartTag, flags: boolean): void => {
      for (const a of tag.attrs) {
        const directive = DATA_SOURCES[a.name];
        if (directive === undefined) {
          if (flags && a.name.startsWith('data-') && !DECLARATION_FLAGS.has(a.name)) {
            warn('LW_CSP_DECLARATION_UNKNOWN', `${a.name} is not a setting Laneway knows; it is ignored (known: ${[...DECLARATION_FLAGS, ...Object.keys(DATA_SOURCES)].join(', ')})`, a.nameStart);
          }
          continue;
        }
        const value = a.value ?? '';
        if (!isStatic(value)) {
          error('LW_CSP_DYNAMIC_SOURCE', `${a.name} must be written literally: the policy is built when the app loads, not from data`, a.valueStart);
          continue;
        }
        const tokens = value.split(/[\t\n\f\r ]+/).filter(Boolean);
        const ok: string[] = [];
        for (const token of tokens) {
          const problem = token.toLowerCase() === "'none'" ? "'none' cannot be added to a directive" : checkSource(token);
          if (problem !== undefined) error('LW_CSP_BAD_SOURCE', `${a.name}: "${token}" is not a source: ${problem}`, a.valueStart + value.indexOf(token));
          // Keywords are case-insensitive: 'Unsafe-Inline' is 'unsafe-inline'.
          else ok.push(/^'[a-z-]+'$/i.test(token) ? token.toLowerCase() : token);
        }
        for (const s of ok) addSource(facts, directive, s);
        if (flags) declared.push({ directive, sources: ok });
        if ((directive === 'script-src' || directive === 'style-src') && ok.some((s) => s.toLowerCase() === "'unsafe-inline'")) {
          warn(
            'LW_CSP_UNSAFE_INLINE',
            `'unsafe-inline' in ${directive}: Laneway leaves the inline-block hashes out of ${directive} on every page using this file (a hash would switch 'unsafe-inline' off), so any inline ${directive === 'script-src' ? 'script' : 'style'} runs there, injected ones included`,
            a.valueStart,
          );
        }
      }
    };

    const flag = (tag: StartTag, name: string): boolean | undefined => {
      const a = attr(tag, name);
      if (a === undefined) return undefined;
      const v = (a.value ?? 'true').trim().toLowerCase();
      if (v === 'true' || v === '') return true;
      if (v === 'false') return false;
      error('LW_CSP_DECLARATION', `${name} is "true" or "false", not "${a.value}"`, a.valueStart);
      return undefined;
    };

    /** A `<script src>` or stylesheet `<link href>`: inline it, or allow its source. */
    const reference = (tag: StartTag, a: Attribute, kind: 'script' | 'style', closeAt: number | null): 'inline' | 'source' => {
      const value = a.value ?? '';
      const directive: Directive = kind === 'script' ? 'script-src' : 'style-src';
      if (!isStatic(value)) {
        const src = sourceOfPrefix(value.slice(0, value.indexOf(HOLE)));
        if (src === undefined) {
          error('LW_CSP_DYNAMIC_SOURCE', `the ${kind === 'script' ? 'script src' : 'stylesheet href'} comes from data, so its origin is unknown when the policy is built: write it literally, or start it with "/" or "https://host/"`, a.valueStart);
        } else addSource(facts, directive, src);
        return 'source';
      }
      const inline = closeAt !== null || kind === 'style' ? hooks.inline?.(value, kind, file) : undefined;
      if (inline !== undefined) {
        if ('code' in inline) {
          error(inline.code, inline.message, a.valueStart);
          return 'source';
        }
        const keep = tag.attrs.filter((x) => !INLINE_DROPPED[kind].has(x.name)).map((x) => ' ' + frag.s.slice(x.nameStart, x.end));
        const name = kind === 'script' ? 'script' : 'style';
        const end = closeAt ?? tag.end;
        edit(tag.start, end, `<${name}${keep.join('')}>${inline.text}</${name}>`, 'LW_ASSET_INLINE_DYNAMIC', `an element inlining ${value}`);
        return 'inline';
      }
      const src = sourceOfUrl(value);
      if (src === undefined || src === 'data:') {
        error('LW_CSP_BAD_SOURCE', `"${value}" cannot be allowed as a ${kind} source: use a file of the app or an http(s) URL`, a.valueStart);
        return 'source';
      }
      addSource(facts, directive, src);
      if (src !== "'self'" && attr(tag, 'integrity') === undefined) {
        warn('LW_CSP_NO_INTEGRITY', `the external ${kind === 'script' ? 'script' : 'stylesheet'} ${value} has no integrity attribute: add integrity="sha384-…" (and crossorigin="anonymous") so a changed file is refused`, a.nameStart);
      }
      return 'source';
    };

    /** An inline block's content [cs, ce), the element opened by `tag`. */
    const block = (kind: 'script' | 'style', tag: StartTag, cs: number, ce: number, closed: boolean): void => {
      inlineBlocks++;
      if (!closed) {
        error('LW_CSP_INLINE_UNCLOSED', `<${kind}> is not closed in this file: write </${kind}> in the same file as its opening tag`, tag.start);
        return;
      }
      const a = segmentAt(frag, cs - 1);
      const b = segmentAt(frag, ce);
      if (a === undefined || b === undefined || !a.text || !b.text || a.list !== b.list) {
        error('LW_CSP_INLINE_SPLIT', `<${kind}> opens and closes in different sections or blocks: keep the whole element, from <${kind}> to </${kind}>, inside one section`, tag.start);
        return;
      }
      let dynamic = false;
      let indentable = false;
      for (let i = frag.segs.indexOf(a); i < frag.segs.length; i++) {
        const seg = frag.segs[i]!;
        if (seg.f > ce) break;
        if (!seg.text) {
          if (seg.f >= cs && seg.f < ce) {
            dynamic = true;
            const n = seg.node;
            if ((n.type === 'var' && n.raw) || (n.type === 'pragma' && n.name === 'show')) {
              error('LW_CSP_RAW_IN_INLINE', `unescaped output inside an inline <${kind}>: web-safe markup is not ${kind === 'script' ? 'script' : 'CSS'}; use {{ }}`, seg.f);
            }
          }
          continue;
        }
        const n = seg.node as TextLike;
        const lineStarts = n.bol ? [0, ...n.marks] : n.marks;
        for (const m of lineStarts) {
          const p = seg.f + m;
          if (p > cs && p <= ce) indentable = true;
        }
      }
      if (!dynamic) {
        const h = hashSource(options.algorithm, frag.s.slice(cs, ce));
        (kind === 'script' ? facts.scriptHashes : facts.styleHashes).add(h);
        if (!indentable) return;
      }
      facts.dynamic = true;
      const k = options.kinds.push(kind) - 1;
      captures.push(
        { node: a.node as TextLike, index: cs - a.f, id: 2 * k, edge: 'start', indentedOnly: !dynamic },
        { node: b.node as TextLike, index: ce - b.f, id: 2 * k + 1, edge: 'end', indentedOnly: !dynamic },
      );
    };

    /** Rewrites a static reference (fingerprint, pin) in place. */
    const rewrite = (tag: StartTag, a: Attribute): void => {
      const value = a.value;
      if (hooks.rewrite === undefined || value === null || value.trim() === '' || !isStatic(value)) return;
      if (a.name === 'content' && !value.trim().startsWith('/')) return;
      let changed = false;
      const one = (url: string): string | undefined => {
        const r = hooks.rewrite!(url, file);
        if (r !== undefined) changed = true;
        return r;
      };
      const next =
        a.name === 'srcset'
          ? value.replace(/(^|,)(\s*)([^\s,]+)/g, (m, comma: string, space: string, url: string) => {
              const r = one(url);
              return r === undefined ? m : comma + space + r;
            })
          : value.replace(/^(\s*)(.*?)(\s*)$/s, (m, lead: string, url: string, trail: string) => {
              const r = one(url);
              return r === undefined ? m : lead + r + trail;
            });
      if (changed) edit(a.valueStart, a.valueEnd, next, 'LW_ASSET_INLINE_DYNAMIC', `the ${a.name} of <${tag.name}>`);
    };

    /** An image or media URL from another origin: allowed where it is written. */
    const mediaSource = (directive: Directive, value: string | null): void => {
      if (value === null || !isStatic(value)) return;
      for (const part of directive === 'img-src' ? value.split(',') : [value]) {
        const url = part.trim().split(/\s+/)[0] ?? '';
        if (url === '' || /^data:/i.test(url)) continue;
        const src = sourceOfUrl(url);
        if (src !== undefined && src !== "'self'") {
          const origin = /^[a-z]+:\/\/[^/]+|^[^/]+/i.exec(src)?.[0];
          if (origin !== undefined) addSource(facts, directive, origin);
        } else if (src === "'self'" && directive !== 'img-src') addSource(facts, directive, "'self'");
      }
    };

    let pending: { kind: 'script' | 'style'; tag: StartTag; inline?: boolean; foreign?: boolean } | undefined;
    let media: string | undefined;

    tokenizeHtml(
      frag.s,
      (tok) => {
        if (tok.kind === 'raw') {
          const p = pending;
          if (p === undefined || p.tag.end !== tok.start || p.foreign) return;
          if (!p.inline) {
            pending = undefined;
            block(p.kind, p.tag, tok.start, tok.end, tok.closed);
          }
          return;
        }
        if (tok.kind === 'end') {
          if (tok.name === 'video' || tok.name === 'audio' || tok.name === 'picture') media = undefined;
          const p = pending;
          if (p === undefined || tok.name !== (p.kind === 'script' ? 'script' : 'style')) return;
          pending = undefined;
          if (p.inline) {
            const src = attr(p.tag, 'src')!;
            reference(p.tag, src, 'script', tok.end);
          } else if (p.foreign) {
            const content = frag.s.slice(p.tag.end, tok.start);
            if (/[<&]/.test(content)) {
              error('LW_CSP_INLINE_FOREIGN', `<${p.kind}> inside <svg> or <math> holds markup or character references; browsers hash its decoded text: write plain text, or move the element out of the <svg>`, p.tag.start);
              return;
            }
            block(p.kind, p.tag, p.tag.end, tok.start, true);
          }
          return;
        }
        const tag = tok;
        // 1. Restrictions, on every element.
        for (const a of tag.attrs) {
          if (a.name === 'style') {
            error('LW_CSP_STYLE_ATTRIBUTE', `style="…" attributes are not allowed: the policy has no 'unsafe-inline'; move the rules into a stylesheet or a <style> block and use a class`, a.nameStart);
          } else if (a.name.length > 2 && a.name.startsWith('on') && !a.name.includes(HOLE)) {
            error('LW_CSP_EVENT_HANDLER', `${a.name}="…" event-handler attributes are not allowed: the policy has no 'unsafe-inline'; add a listener from a script (element.addEventListener('${a.name.slice(2)}', …))`, a.nameStart);
          } else if (a.value !== null && URL_ATTRIBUTES.has(a.name) && isJavascriptUrl(a.value.split(HOLE)[0]!)) {
            error('LW_CSP_JAVASCRIPT_URL', `javascript: URLs are not allowed (${a.name}): the policy blocks them; use a button with a listener added from a script`, a.valueStart);
          }
        }
        // 2. Elements that make sources, blocks and declarations.
        switch (tag.name) {
          case 'script': {
            dataSources(tag, false);
            const src = attr(tag, 'src');
            if (tag.foreign) {
              if (src === undefined && !tag.selfClosing) pending = { kind: 'script', tag, foreign: true };
              else if (src?.value) reference(tag, src, 'script', null);
              return;
            }
            if (src === undefined) {
              pending = { kind: 'script', tag };
              return;
            }
            if (src.value !== null && isStatic(src.value) && hooks.inline?.(src.value, 'script', file) !== undefined) {
              pending = { kind: 'script', tag, inline: true };
              return;
            }
            reference(tag, src, 'script', null);
            rewrite(tag, src);
            return;
          }
          case 'style':
            if (!tag.selfClosing || !tag.foreign) pending = { kind: 'style', tag, foreign: tag.foreign };
            return;
          case 'link': {
            const itemprop = attr(tag, 'itemprop')?.value?.trim().toLowerCase();
            if (itemprop === 'content-security-policy') {
              declaration(tag);
              return;
            }
            const rel = (attr(tag, 'rel')?.value ?? '').toLowerCase().split(/\s+/);
            const href = attr(tag, 'href');
            if (rel.includes('stylesheet')) {
              dataSources(tag, false);
              if (href?.value != null && reference(tag, href, 'style', null) === 'inline') return;
            } else if (href?.value != null && isStatic(href.value)) {
              const as = attr(tag, 'as')?.value?.trim().toLowerCase();
              const directive: Directive | undefined = rel.includes('modulepreload')
                ? 'script-src'
                : rel.includes('preload')
                  ? ({ script: 'script-src', style: 'style-src', font: 'font-src', image: 'img-src' } as Record<string, Directive>)[as ?? '']
                  : rel.includes('manifest')
                    ? 'manifest-src'
                    : rel.some((r) => r === 'icon' || r === 'apple-touch-icon')
                      ? 'img-src'
                      : undefined;
              if (directive === 'img-src') mediaSource('img-src', href.value);
              else if (directive !== undefined) {
                const src = sourceOfUrl(href.value);
                if (src !== undefined && src !== 'data:') addSource(facts, directive, src);
              }
            }
            break;
          }
          case 'img':
            mediaSource('img-src', attr(tag, 'src')?.value ?? null);
            mediaSource('img-src', attr(tag, 'srcset')?.value ?? null);
            break;
          case 'video':
          case 'audio':
            media = tag.name;
            mediaSource('media-src', attr(tag, 'src')?.value ?? null);
            mediaSource('img-src', attr(tag, 'poster')?.value ?? null);
            break;
          case 'picture':
            media = tag.name;
            break;
          case 'source':
          case 'track':
            if (media === 'picture') mediaSource('img-src', attr(tag, 'srcset')?.value ?? null);
            else if (media !== undefined) mediaSource('media-src', attr(tag, 'src')?.value ?? null);
            break;
          case 'input':
            if (attr(tag, 'type')?.value?.trim().toLowerCase() === 'image') mediaSource('img-src', attr(tag, 'src')?.value ?? null);
            break;
        }
        // 3. References to the app's own assets.
        for (const a of tag.attrs) if (REWRITTEN.has(a.name)) rewrite(tag, a);
      },
      { foreign: false },
    );

    function declaration(tag: StartTag): void {
      if (!reporting) return;
      const connect = flag(tag, 'data-connect-self');
      const form = flag(tag, 'data-form-self');
      const img = flag(tag, 'data-img-src-data');
      if (connect === false) facts.connectSelf = false;
      if (form === false) facts.formSelf = false;
      if (img === true) facts.imgData = true;
      dataSources(tag, true);
      edit(tag.start, tag.end, '', 'LW_CSP_DECLARATION', 'the <link itemprop="content-security-policy"> declaration');
    }
  }
  return { facts, captures, edits, declared, inlineBlocks };
}

/** Attributes dropped when an external script or stylesheet becomes an inline block. */
const INLINE_DROPPED: Record<'script' | 'style', Set<string>> = {
  script: new Set(['src', 'integrity', 'crossorigin', 'referrerpolicy', 'fetchpriority', 'defer', 'charset']),
  style: new Set(['rel', 'href', 'integrity', 'crossorigin', 'referrerpolicy', 'fetchpriority', 'type', 'as', 'disabled']),
};
