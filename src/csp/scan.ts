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
 *   - inline `<script>`/`<style>` blocks: each is hashed now, from the text the developer wrote.
 *     Data never becomes code: a template tag inside an executable script or a style is a build
 *     error, and so is a value tag where it would name an element or an attribute. A JSON data
 *     block (`<script type="application/json">`) may hold tags: each is marked with the JSON
 *     escaping its place needs (inside a string, or a whole value), and nothing is hashed;
 *   - references to rewrite (fingerprinted assets) and private files to inline (through hooks).
 *
 * A block site (`{{$name}}default{{/name}}`) written inside one quoted attribute value is allowed
 * when the attribute takes text (not a handler, a style, srcdoc, a URL, nor an attribute of
 * `<script>`, `<style>` or `<link>`): its default content is checked here, and the site is recorded
 * (`ScanResult.attributeBlocks`) so that the walk over each page's files (PolicyCompiler) checks
 * every override that can fill it, in the file that writes the override. What may fill such a
 * block is `attributeProblems`: text without quotes, `<`, `>` or backticks, escaped values,
 * sections and blocks holding the same; that text makes no element, so it adds nothing to a policy.
 *
 * A static block inside a partial or a block that may be rendered with indentation is recorded
 * with its line starts (`ScanResult.indented`): the policy of each page hashes it once per
 * indentation that page can give it (PolicyCompiler.viewPolicy).
 *
 * Rewrites edit the text nodes in place (before code generation). When a file has edits, it is
 * scanned a second time, silently, so that hashes and the JSON escaping marks describe the edited text.
 *
 * Each pass is a FileScanner: its fields hold the result being built, its methods handle one kind
 * of token, one element (a table from element name to start-tag handler) or one kind of record
 * (policy sources, rewrites, inline blocks).
 */
import type { Code } from '../diag/index.js';
import { HOLE, tokenizeHtml, type Attribute, type EndTag, type HtmlToken, type RawText, type StartTag } from './html.js';

const HOLE_CODE = HOLE.charCodeAt(0);
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

/** How a value tag inside a JSON data block is escaped (set by this pass, read by the code generator). */
export type JsonEscape = 'json-string' | 'json-value';

/**
 * The node shapes the pass reads; the template engine's `Node` fits them. `indent` is the
 * indentation a standalone partial, parent or block is rendered with (null: not standalone).
 */
export type NodeLike =
  | TextLike
  | { type: 'section'; start: number; end: number; body: NodeLike[] }
  | { type: 'block'; start: number; end: number; body: NodeLike[]; name: string; indent: string | null }
  | { type: 'parent'; start: number; end: number; name: string; dynamic?: unknown; indent: string | null; blocks: ReadonlyArray<{ name: string; body: NodeLike[] }> }
  | { type: 'var'; start: number; end: number; raw: boolean; escape?: JsonEscape; attributes?: true; expr?: { kind: string; root?: string; segs?: readonly string[] } }
  | { type: 'pragma'; start: number; end: number; name: string; escape?: JsonEscape }
  | { type: 'partial'; start: number; end: number; name: string; dynamic?: unknown; indent: string | null };

/** One file: a template's parse tree, or a plain page as one text node. */
export interface TemplateLike {
  file: string;
  source: string;
  nodes: NodeLike[];
  partials?: Record<string, { kind: 'partial' | 'svg'; file: string }>;
}

/**
 * An inline block (static, as every executable one is) with line starts inside it: rendered
 * with indentation, its text gets the indentation at each of `starts`, so its hash changes.
 */
export interface IndentedBlock {
  kind: 'script' | 'style';
  /** The block's text as written. */
  text: string;
  /** Offsets into `text` where the renderer writes the current indentation. */
  starts: number[];
  /** Where the block is, for problems. */
  file: string;
  source: string;
  offset: number;
}

/** What the app does with references (assets, inlining); see PolicyCompiler. */
export interface ReferenceHooks {
  /** Reads an app file (inlined SVG icons; a partial of literal attributes inside a start tag). */
  read?(path: string): string | undefined;
  /**
   * `<script src>` or stylesheet `<link href>`: the text to put inline when the URL names a
   * private file, a problem to report, or undefined for an ordinary reference.
   */
  inline?(url: string, kind: 'script' | 'style', file: string): { text: string } | { code: Code; message: string } | undefined;
  /** A static reference in `src`, `href`, `srcset` or `content` (`attribute`): the URL to write instead. */
  rewrite?(url: string, file: string, attribute: string): string | undefined;
  /**
   * A start tag whose name has a dot (a connector tag, `<clicky.com-script async/>`): what to write
   * instead, or undefined to leave the element as written. Its end tag, if any, is removed.
   */
  element?(use: ElementUse, file: string): ElementExpansion | undefined;
}

/** A custom element as written: lower-cased names, raw values, and each attribute's source text. */
export interface ElementUse {
  name: string;
  attrs: ReadonlyArray<{ name: string; value: string | null; text: string }>;
}

/** What replaces a custom element: markup ('' removes it), policy sources, problems to report. */
export interface ElementExpansion {
  html: string;
  sources: ReadonlyArray<{ directive: Directive; sources: readonly string[] }>;
  /** `attribute`: report at that attribute rather than at the tag. */
  problems: ReadonlyArray<{ severity: 'error' | 'warning'; code: Code; message: string; attribute?: string }>;
}

export interface Reporter {
  (severity: 'error' | 'warning', code: Code, message: string, file: string, source: string, offset: number): void;
}

export interface ScanOptions {
  algorithm: HashAlgorithm;
  hooks: ReferenceHooks;
  /** Undefined: a silent re-scan. */
  report?: Reporter;
  /** An inlined SVG file: problems are warnings (the file is an asset, often exported by a tool). */
  svg?: boolean;
}

export interface ScanResult {
  facts: FileFacts;
  /** Static blocks that indentation would change, by the text node holding their start. */
  indented: Map<TextLike, IndentedBlock[]>;
  /** Executable inline blocks found (a warning for HTML suppliers, whose output is never hashed). */
  inlineBlocks: number;
  /** Block sites inside a quoted attribute value that takes text, by block node (see attributeProblems). */
  attributeBlocks: Map<NodeLike, AttributeBlock>;
}

/** A block site written inside one quoted attribute value: whatever fills it must be attribute text. */
export interface AttributeBlock {
  /** The block's name. */
  name: string;
  /** The attribute and element it is written in (lower-cased). */
  attribute: string;
  element: string;
  /** Where the block's opening tag is. */
  file: string;
  source: string;
  offset: number;
}

/**
 * Characters that text filling a block inside an attribute value may not hold: quotes would end
 * the value (and what follows would be attributes), `<` and `>` would be markup wherever the
 * text is also used outside the value, and old browsers read a backtick as a quote.
 */
const ATTRIBUTE_UNSAFE = /["'<>`]/;

/**
 * Reports what, in `nodes` (a block's default content or an override), may not be written inside
 * an attribute value: a character of ATTRIBUTE_UNSAFE in literal text (the first of each text
 * node), unescaped output (`{{{x}}}`, `{{&x}}`, `{{% show x}}`: web-safe markup holds quotes), a
 * partial or a parent (their text is another file's markup). Escaped values, the other output
 * pragmas and sections are fine, their contents checked the same way; a nested block is handed to
 * `nested`, which knows what fills it.
 */
export function attributeProblems(
  nodes: readonly NodeLike[],
  source: string,
  nested: (block: Extract<NodeLike, { type: 'block' }>) => void,
  problem: (node: NodeLike, offset: number, what: string) => void,
): void {
  for (const n of nodes) {
    switch (n.type) {
      case 'text': {
        const m = ATTRIBUTE_UNSAFE.exec(n.text);
        if (m !== null) problem(n, sourceOffset(n, m.index, source), `the character ${m[0]}`);
        break;
      }
      case 'var':
        if (n.raw) problem(n, n.start, 'unescaped output ({{{ }}} or {{& }})');
        break;
      case 'pragma':
        if (n.name === 'show') problem(n, n.start, 'unescaped output ({{% show }})');
        break;
      case 'section':
        attributeProblems(n.body, source, nested, problem);
        break;
      case 'block':
        nested(n);
        break;
      case 'partial':
        problem(n, n.start, 'a partial');
        break;
      case 'parent':
        problem(n, n.start, 'a parent or layout ({{< }})');
        break;
    }
  }
}

/** The fix shown with every problem of attribute text. */
export const ATTRIBUTE_TEXT = 'write plain text (without " \' < > or `) and {{value}} tags, which are escaped; put markup outside the attribute';

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
const DECLARATION_FLAGS = new Set(['data-connect-self', 'data-form-self', 'data-img-src-data', 'data-img-upload', 'data-form-action-auth']);

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
  const first = new FileScanner(t, options, true).scan();
  if (first.edits.length === 0) return first;
  applyEdits(first.edits);
  const again = new FileScanner(t, { ...options, report: undefined }, false).scan();
  // The declaration link is gone from the text now; its settings stay.
  again.facts.connectSelf = first.facts.connectSelf;
  again.facts.formSelf = first.facts.formSelf;
  again.facts.imgData = first.facts.imgData;
  again.facts.imgUpload = first.facts.imgUpload;
  again.facts.formActionAuth = first.facts.formActionAuth;
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

/** One pass's result, with what scanFile carries over to the silent re-scan. */
interface Once extends ScanResult {
  edits: Edit[];
  /** Sources of the declaration link and of connector tags (kept across the re-scan, which no longer sees them). */
  declared: Array<{ directive: Directive; sources: string[] }>;
}

/**
 * An element whose content the scanner waits for, after its start tag: the raw text that
 * follows (HTML content) or its end tag (foreign content, inlined scripts) decides what it is.
 */
interface OpenElement {
  kind: 'script' | 'style';
  tag: StartTag;
  /** A `<script src>` naming a private file: replaced by an inline block at its end tag. */
  inline?: boolean;
  /** Inside `<svg>` or `<math>`: the content is markup, read up to the end tag. */
  foreign?: boolean;
  /** A script that does not run: a JSON data block, or another data type. */
  data?: 'json' | 'other';
}

/** Where a template tag of a start tag stands: in the quoted value of this attribute, between attributes, or in a name. */
type PlaceInTag = Attribute | 'between' | 'name';

/**
 * What an element's start-tag handler leaves to #startTag: 'rewrite-urls' to rewrite the static
 * references in its src, href, srcset, content and poster; 'done' when none is to be rewritten
 * (the handler rewrote what it had to, or the element is replaced or removed).
 */
type AfterStartTag = 'rewrite-urls' | 'done';

/** One entry of FileScanner's table of elements (see FileScanner.#elements). */
type StartTagHandler = (scanner: FileScanner, tag: StartTag) => AfterStartTag;

/**
 * One pass over one file (see the top of this file): tokenizes each fragment and records what the
 * file adds to a policy (sources, hashes, declaration settings), the edits to make to its text
 * nodes (rewritten and inlined references, the removed declaration link, expanded connector
 * tags), and the problems it reports. Make one per pass and call `scan()` once; scanFile makes
 * the first, reporting pass and, when that pass found edits, the silent re-scan.
 *
 * Each token goes to #rawText, #endTag or #startTag. A start tag has its restrictions checked
 * (on every element), is offered to the element hook (connector tags), goes to its element's
 * handler in the table #elements (elements that add sources, blocks or a declaration), and then
 * has its static references rewritten unless the handler answered 'done'.
 *
 * The fields are the file and its options, the result being built (kept across fragments), and
 * the state of the current fragment, reset at the start of each.
 */
class FileScanner {
  // The file, and how to scan it.
  readonly #file: string;
  readonly #source: string;
  readonly #nodes: readonly NodeLike[];
  readonly #options: ScanOptions;
  readonly #hooks: ReferenceHooks;
  readonly #partials: TemplateLike['partials'];
  /** False for the silent re-scan: nothing is reported, the declaration link is not read again. */
  readonly #reporting: boolean;
  readonly #report: Reporter | undefined;

  // What the pass records.
  readonly #facts = emptyFacts();
  readonly #indented = new Map<TextLike, IndentedBlock[]>();
  readonly #edits: Edit[] = [];
  readonly #declared: Once['declared'] = [];
  readonly #attributeBlocks = new Map<NodeLike, AttributeBlock>();
  #inlineBlocks = 0;

  // The fragment being scanned.
  #frag: Fragment = { s: '', segs: [] };
  /** Names of the custom elements replaced in this fragment: their end tags go too. */
  #replaced = new Set<string>();
  /** The `<script>` or `<style>` whose start tag was seen and whose content comes next. */
  #open: OpenElement | undefined;
  /** The `<video>`, `<audio>` or `<picture>` last opened and not closed: it says what a `<source>` or `<track>` loads. */
  #media: string | undefined;

  constructor(t: TemplateLike, options: ScanOptions, reporting: boolean) {
    this.#file = t.file;
    this.#source = t.source;
    this.#nodes = t.nodes;
    this.#options = options;
    this.#hooks = options.hooks;
    this.#partials = t.partials;
    this.#reporting = reporting;
    this.#report = reporting ? options.report : undefined;
  }

  /** Scans every fragment of the file: the main one, then the body of each block override. */
  scan(): Once {
    for (const frag of fragmentsOf(this.#nodes)) {
      this.#frag = frag;
      this.#replaced = new Set();
      this.#open = undefined;
      this.#media = undefined;
      tokenizeHtml(frag.s, this.#onToken, { foreign: false });
    }
    return { facts: this.#facts, indented: this.#indented, edits: this.#edits, declared: this.#declared, inlineBlocks: this.#inlineBlocks, attributeBlocks: this.#attributeBlocks };
  }

  /** The tokenizer's callback (one function for every fragment). */
  #onToken = (tok: HtmlToken): void => {
    if (tok.kind === 'raw') this.#rawText(tok);
    else if (tok.kind === 'end') this.#endTag(tok);
    else this.#startTag(tok);
  };

  // ---- Positions, problems and edits ----

  /** The source offset of an offset of the fragment (a tag's offset for a hole). */
  #sourceOffsetAt(offset: number): number {
    const frag = this.#frag;
    const seg = segmentAt(frag, Math.min(offset, Math.max(0, frag.s.length - 1)));
    if (seg === undefined) return 0;
    return seg.text ? sourceOffset(seg.node as TextLike, offset - seg.f, this.#source) : seg.node.start;
  }

  /** A build error (a warning in an inlined SVG file). */
  #error(code: Code, message: string, offset: number): void {
    if (this.#options.svg) this.#report?.('warning', 'LW_CSP_SVG_INLINE', `inlined SVG: ${message}`, this.#file, this.#source, this.#sourceOffsetAt(offset));
    else this.#report?.('error', code, message, this.#file, this.#source, this.#sourceOffsetAt(offset));
  }

  #warn(code: Code, message: string, offset: number): void {
    this.#report?.('warning', code, message, this.#file, this.#source, this.#sourceOffsetAt(offset));
  }

  /** The text segment holding all of [from, to), or undefined when a tag or a node boundary is inside. */
  #literal(from: number, to: number): Segment | undefined {
    const seg = segmentAt(this.#frag, from);
    return seg !== undefined && seg.text && to <= seg.end ? seg : undefined;
  }

  /** Records an edit replacing [from, to) of the fragment; reports `what` when that range is not literal text. */
  #edit(from: number, to: number, insert: string, code: Code, what: string): boolean {
    const seg = this.#literal(from, to);
    if (seg === undefined) {
      this.#error(code, `${what} must be written literally, in one piece: no template tags inside it or around parts of it`, from);
      return false;
    }
    this.#edits.push({ node: seg.node as TextLike, from: from - seg.f, to: to - seg.f, insert });
    return true;
  }

  // ---- Tokens ----

  /** The content of a raw-text element: the inline block or JSON data block a `<script>`/`<style>` start tag opened. */
  #rawText(tok: RawText): void {
    const open = this.#open;
    if (open === undefined || open.tag.end !== tok.start || open.foreign) return;
    if (!open.inline) {
      this.#open = undefined;
      if (open.data === 'json') this.#jsonDataBlock(open.tag, tok.start, tok.end, tok.closed);
      else if (open.data === undefined) this.#inlineBlock(open.kind, open.tag, tok.start, tok.end, tok.closed);
    }
  }

  /**
   * An end tag: removed after a replaced connector tag; closes a media element; ends a script
   * to inline (replaced with its block) or a foreign `<script>`/`<style>` (hashed).
   */
  #endTag(tok: EndTag): void {
    if (this.#replaced.has(tok.name)) {
      this.#edit(tok.start, tok.end, '', 'LW_CONTENT_CONNECTOR_TAG', `the end tag </${tok.name}>`);
      return;
    }
    if (tok.name === 'video' || tok.name === 'audio' || tok.name === 'picture') this.#media = undefined;
    const open = this.#open;
    if (open === undefined || tok.name !== open.kind) return;
    this.#open = undefined;
    if (open.inline) {
      const src = attr(open.tag, 'src')!;
      this.#scriptOrStyleReference(open.tag, src, 'script', tok.end);
    } else if (open.foreign) {
      const content = this.#frag.s.slice(open.tag.end, tok.start);
      if (/[<&]/.test(content)) {
        this.#error('LW_CSP_INLINE_FOREIGN', `<${open.kind}> inside <svg> or <math> holds markup or character references; browsers hash its decoded text: write plain text, or move the element out of the <svg>`, open.tag.start);
        return;
      }
      this.#inlineBlock(open.kind, open.tag, open.tag.end, tok.start, true);
    }
  }

  /** A start tag: restrictions, connector tags, the element's handler, then rewrites (see the class). */
  #startTag(tag: StartTag): void {
    const frag = this.#frag;
    // 1. Restrictions, on every element. A value tag may stand only inside a quoted
    // attribute value: elsewhere in a start tag it would name the element or an attribute
    // (an event handler, a style), or end an unquoted value and start another attribute.
    if (frag.s.lastIndexOf(HOLE, tag.end - 1) >= tag.start) this.#templateTagsInStartTag(tag);
    this.#restrictedAttributes(tag);
    // Connector tags (src/content/connectors.ts) are replaced or removed, never sent as written.
    if (this.#hooks.element !== undefined && tag.name.includes('.')) {
      const expansion = this.#hooks.element({ name: tag.name, attrs: tag.attrs.map((a) => ({ name: a.name, value: a.value, text: frag.s.slice(a.nameStart, a.end) })) }, this.#file);
      if (expansion !== undefined) {
        this.#connectorTag(tag, expansion);
        return;
      }
    }
    // 2. Elements that make sources, blocks and declarations (FileScanner.#elements).
    const handler = FileScanner.#elements.get(tag.name);
    if (handler !== undefined && handler(this, tag) === 'done') return;
    // 3. References to the app's own assets.
    for (const a of tag.attrs) if (REWRITTEN.has(a.name)) this.#rewrite(tag, a);
  }

  // ---- Element handlers ----

  /**
   * The start-tag handlers of the elements that add to a policy, by element name: a table in the
   * manner of a tokenizer's transition table, read by #startTag after the restrictions. Each
   * handler says whether the element's static references are still to be rewritten. Any other
   * element only has its restrictions checked and its references rewritten.
   */
  static readonly #elements: ReadonlyMap<string, StartTagHandler> = new Map<string, StartTagHandler>([
    ['script', (scanner, tag) => scanner.#onScript(tag)],
    ['style', (scanner, tag) => scanner.#onStyle(tag)],
    ['link', (scanner, tag) => scanner.#onLink(tag)],
    ['img', (scanner, tag) => scanner.#onImg(tag)],
    ['video', (scanner, tag) => scanner.#onVideoOrAudio(tag)],
    ['audio', (scanner, tag) => scanner.#onVideoOrAudio(tag)],
    ['picture', (scanner, tag) => scanner.#onPicture(tag)],
    ['source', (scanner, tag) => scanner.#onSourceOrTrack(tag)],
    ['track', (scanner, tag) => scanner.#onSourceOrTrack(tag)],
    ['input', (scanner, tag) => scanner.#onInput(tag)],
  ]);

  /**
   * `<script>`. Records its `data-*-src` sources, then: without src, opens an inline block (hashed
   * at its raw text when it runs, escaping marks for a JSON data block, nothing for other data);
   * with a src naming a private file, waits for the end tag to inline it; otherwise the src's
   * source in script-src and the src rewritten. In `<svg>`/`<math>`, the content is hashed at the
   * end tag. Only src is rewritten.
   */
  #onScript(tag: StartTag): AfterStartTag {
    this.#dataSources(tag, false);
    const src = attr(tag, 'src');
    if (tag.foreign) {
      if (src === undefined && !tag.selfClosing) this.#open = { kind: 'script', tag, foreign: true };
      else if (src?.value) this.#scriptOrStyleReference(tag, src, 'script', null);
      return 'done';
    }
    if (src === undefined) {
      const type = scriptType(tag);
      this.#open = type === 'code' ? { kind: 'script', tag } : { kind: 'script', tag, data: type };
      return 'done';
    }
    if (src.value !== null && isStatic(src.value) && this.#hooks.inline?.(src.value, 'script', this.#file) !== undefined) {
      this.#open = { kind: 'script', tag, inline: true };
      return 'done';
    }
    this.#scriptOrStyleReference(tag, src, 'script', null);
    this.#rewrite(tag, src);
    return 'done';
  }

  /** `<style>`: opens an inline block, whose hash goes to style-src (at its raw text, or at the end tag in `<svg>`/`<math>`). */
  #onStyle(tag: StartTag): AfterStartTag {
    if (!tag.selfClosing || !tag.foreign) this.#open = { kind: 'style', tag, foreign: tag.foreign };
    return 'done';
  }

  /**
   * `<link>`. The declaration link (`itemprop="content-security-policy"`): its settings and sources
   * (#declaration). A stylesheet: its `data-*-src` sources and its href's source in style-src, or
   * the link replaced by an inline block when the href names a private file. A preload, module
   * preload, manifest or icon: the href's source in the directive that loads it. Its references
   * are rewritten unless it was inlined or is the declaration.
   */
  #onLink(tag: StartTag): AfterStartTag {
    const itemprop = attr(tag, 'itemprop')?.value?.trim().toLowerCase();
    if (itemprop === 'content-security-policy') {
      this.#declaration(tag);
      return 'done';
    }
    const rel = (attr(tag, 'rel')?.value ?? '').toLowerCase().split(/\s+/);
    const href = attr(tag, 'href');
    if (rel.includes('stylesheet')) {
      this.#dataSources(tag, false);
      if (href?.value != null && this.#scriptOrStyleReference(tag, href, 'style', null) === 'inline') return 'done';
    } else if (href?.value != null && isStatic(href.value)) {
      const directive = linkDirective(rel, tag);
      if (directive === 'img-src') this.#mediaSource('img-src', href.value);
      else if (directive !== undefined) {
        const src = sourceOfUrl(href.value);
        if (src !== undefined && src !== 'data:') addSource(this.#facts, directive, src);
      }
    }
    return 'rewrite-urls';
  }

  /** `<img>`: the origins of its src and srcset in img-src. */
  #onImg(tag: StartTag): AfterStartTag {
    this.#mediaSource('img-src', attr(tag, 'src')?.value ?? null);
    this.#mediaSource('img-src', attr(tag, 'srcset')?.value ?? null);
    return 'rewrite-urls';
  }

  /** `<video>`, `<audio>`: its src in media-src, its poster in img-src; its `<source>`s and `<track>`s load media. */
  #onVideoOrAudio(tag: StartTag): AfterStartTag {
    this.#media = tag.name;
    this.#mediaSource('media-src', attr(tag, 'src')?.value ?? null);
    this.#mediaSource('img-src', attr(tag, 'poster')?.value ?? null);
    return 'rewrite-urls';
  }

  /** `<picture>`: records nothing itself; its `<source>`s load images. */
  #onPicture(tag: StartTag): AfterStartTag {
    this.#media = tag.name;
    return 'rewrite-urls';
  }

  /** `<source>`, `<track>`: in a `<picture>`, the srcset's origins in img-src; in a `<video>` or `<audio>`, the src's in media-src. */
  #onSourceOrTrack(tag: StartTag): AfterStartTag {
    if (this.#media === 'picture') this.#mediaSource('img-src', attr(tag, 'srcset')?.value ?? null);
    else if (this.#media !== undefined) this.#mediaSource('media-src', attr(tag, 'src')?.value ?? null);
    return 'rewrite-urls';
  }

  /** `<input type="image">`: the origin of its src in img-src. */
  #onInput(tag: StartTag): AfterStartTag {
    if (attr(tag, 'type')?.value?.trim().toLowerCase() === 'image') this.#mediaSource('img-src', attr(tag, 'src')?.value ?? null);
    return 'rewrite-urls';
  }

  // ---- Restrictions ----

  /** `style=`, `on*=` and `javascript:` URLs: build errors on every element. */
  #restrictedAttributes(tag: StartTag): void {
    for (const a of tag.attrs) {
      if (a.name === 'style') {
        this.#error('LW_CSP_STYLE_ATTRIBUTE', `style="…" attributes are not allowed: the policy has no 'unsafe-inline'; move the rules into a stylesheet or a <style> block and use a class`, a.nameStart);
      } else if (a.name.length > 2 && a.name.startsWith('on') && !a.name.includes(HOLE)) {
        this.#error('LW_CSP_EVENT_HANDLER', `${a.name}="…" event-handler attributes are not allowed: the policy has no 'unsafe-inline'; add a listener from a script (element.addEventListener('${a.name.slice(2)}', …))`, a.nameStart);
      } else if (a.value !== null && URL_ATTRIBUTES.has(a.name) && (isJavascriptUrl(a.value.split(HOLE)[0]!) || isJavascriptUrl(a.value.split(HOLE).join('')))) {
        this.#error('LW_CSP_JAVASCRIPT_URL', `javascript: URLs are not allowed (${a.name}): the policy blocks them; use a button with a listener added from a script`, a.valueStart);
      }
    }
  }

  /**
   * A partial between the attributes of a start tag (`<input {{>disable-spell}}>`): accepted when
   * its file holds only literal attributes (docs/views.md "Partials"): no template tag, no
   * element, no event handler, `style` or address (this pass sees only this file's attributes, and
   * those are the ones the page's policy and rewrites must know). Anything else is refused.
   */
  #partialInStartTag(n: Extract<NodeLike, { type: 'partial' }>, i: number, w: PlaceInTag): void {
    const refuse = (why: string): void => this.#error('LW_CSP_TAG_IN_TAG', `a partial inside a start tag ${why}; write the attributes in this file`, i);
    if (w !== 'between' || n.dynamic !== undefined) return refuse('other than between attributes: its text could add attributes or move quotes');
    const s = this.#frag.s;
    const near = (from: number, step: number): string => {
      let j = from;
      while (j >= 0 && j < s.length && s.charCodeAt(j) === HOLE_CODE) j += step;
      return s[j] ?? '>';
    };
    if (!/[\s"']/.test(near(i - 1, -1)) || !/[\s/>]/.test(near(i + 1, 1))) return refuse('glued to an attribute: its first or last name would change; leave a space around it');
    const decl = this.#partials?.[n.name];
    const text = decl?.kind === 'partial' ? this.#hooks.read?.(decl.file) : undefined;
    if (text === undefined) return refuse('whose text this pass cannot see');
    const problem = literalAttributesProblem(text);
    if (problem !== undefined) refuse(`(${decl!.file}) that ${problem}: only a partial of fixed attributes may stand there`);
  }

  /**
   * Reports template tags of a start tag that could let data shape the element: value tags not
   * inside a quoted attribute value (or inside srcdoc); any tag inside the element's name or an
   * attribute's name; a section whose two tags are not both between attributes or both inside
   * the same quoted value (rendered zero or several times, it would move which quotes pair up,
   * and data would land outside its value); a partial or parent (its text is not seen here); a
   * block, unless it opens and closes inside one quoted value that takes text (#blockInStartTag).
   * Records the form-control attribute text (`{{{input.attributes}}}`) written between attributes.
   */
  #templateTagsInStartTag(tag: StartTag): void {
    const s = this.#frag.s;
    const quoted = tag.attrs.filter((a) => a.value !== null && a.end === a.valueEnd + 1);
    const nameEnd = tag.start + 1 + tag.name.length;
    /** Where a tag at i stands: a quoted value (the attribute), between attributes, or a name. */
    const where = (i: number): PlaceInTag => {
      const q = quoted.find((a) => i >= a.valueStart && i < a.valueEnd);
      if (q !== undefined) return q;
      if (i < nameEnd) return 'name';
      return tag.attrs.some((a) => i >= a.nameStart && i < a.end) ? 'name' : 'between';
    };
    const sections = new Map<NodeLike, { at: number; w: PlaceInTag }>();
    const blocks = new Map<NodeLike, { at: number; w: PlaceInTag }>();
    const reported = new Set<NodeLike>();
    for (let i = s.indexOf(HOLE, tag.start); i !== -1 && i < tag.end; i = s.indexOf(HOLE, i + 1)) {
      const n = segmentAt(this.#frag, i)!.node;
      const value = n.type === 'var' || (n.type === 'pragma' && (n.name === 'show' || n.name === 'choose-string'));
      if (!value) {
        if (n.type === 'pragma') continue;
        if (n.type === 'block') {
          const first = blocks.get(n);
          if (first === undefined) blocks.set(n, { at: i, w: where(i) });
          else {
            blocks.delete(n);
            this.#blockInStartTag(tag, n, first.at, first.w, where(i));
          }
          continue;
        }
        if (n.type === 'partial') {
          this.#partialInStartTag(n, i, where(i));
          continue;
        }
        if (n.type !== 'section') {
          this.#error('LW_CSP_TAG_IN_TAG', 'a parent or layout inside a start tag: its text could add attributes or move quotes; write the attributes in this file', i);
          continue;
        }
        if (reported.has(n)) continue;
        const w = where(i);
        if (tag.name === 'script' || tag.name === 'style') {
          reported.add(n);
          this.#error('LW_CSP_TAG_IN_TAG', `a section inside the start tag of <${tag.name}>: whether it runs, and what it is, must not depend on data; write two elements inside the section instead`, i);
          continue;
        }
        const opening = !sections.has(n);
        // Between attributes, the section holds whole attributes: nothing glued to its tags
        // (rendered twice or not at all, a glued name would change).
        const near = (from: number, step: number): string => {
          let j = from;
          while (j >= tag.start && j < tag.end && s.charCodeAt(j) === HOLE_CODE) j += step;
          return s[j] ?? '>';
        };
        if (w === 'between' && (opening ? !/[\s"']/.test(near(i - 1, -1)) : !/[\s/>]/.test(near(i + 1, 1)))) {
          reported.add(n);
          sections.delete(n);
          this.#error('LW_CSP_TAG_IN_TAG', 'a section glued to an attribute name in a start tag: rendered zero or several times it would change the name; leave a space between the section\'s tags and the attributes around it', i);
          continue;
        }
        if (w === 'name') {
          reported.add(n);
          sections.delete(n);
          this.#error('LW_CSP_TAG_IN_TAG', 'a section tag inside the name of the element or of an attribute: write whole names, and choose among literal attributes with a section between them ({{#open}}open{{/open}})', i);
          continue;
        }
        const first = sections.get(n);
        if (first === undefined) sections.set(n, { at: i, w });
        else {
          sections.delete(n);
          if (first.w !== w) this.#error('LW_CSP_TAG_IN_TAG', 'a section that opens and closes in different places of a start tag (inside and outside a quoted value, or in two values): rendered zero or several times it would change which quotes pair up; open and close it inside one value, or around whole attributes', first.at);
        }
        continue;
      }
      const inside = quoted.find((a) => i >= a.valueStart && i < a.valueEnd);
      if (inside === undefined && isFormAttributes(n) && where(i) === 'between') {
        // {{{input.attributes}}} of a form control (docs/forms.md): Laneway writes that text, a
        // fixed set of attributes (type, value, required, …) with escaped values, never a handler;
        // the view prints nothing else there (VarNode.attributes).
        (n as Extract<NodeLike, { type: 'var' }>).attributes = true;
        continue;
      }
      if (inside === undefined) {
        this.#error('LW_CSP_TAG_IN_TAG', 'a value tag inside a start tag but outside a quoted attribute value: data would name the element or an attribute, or add attributes; write the attribute and quote its value (class="{{kind}}"), or choose among literal attributes with a section ({{#open}}open{{/open}})', i);
      } else if (inside.name === 'srcdoc') {
        this.#error('LW_CSP_TAG_IN_TAG', 'a value tag inside srcdoc: the browser reads that attribute as a whole HTML document, so escaped markup in it becomes markup again; give the frame a src instead', i);
      }
    }
    // A section opened in this start tag and closed after it (or the reverse) takes part of the tag with it.
    for (const { at } of sections.values()) {
      this.#error('LW_CSP_TAG_IN_TAG', 'a section that opens inside a start tag and closes outside it (or the reverse): rendered zero or several times it would cut the tag; put the section around the whole element, or inside one attribute value', at);
    }
    for (const { at } of blocks.values()) {
      this.#error('LW_CSP_TAG_IN_TAG', 'a block that opens inside a start tag and closes outside it (or the reverse): its text would cut the tag; open and close the block inside one quoted attribute value, or put it around the whole element', at);
    }
  }

  /**
   * A block whose tags are both in one start tag: the opening one at `i`, the two in places
   * `opensIn` and `closesIn`. Inside one quoted value of an attribute that takes text, it is a
   * site that any text without quotes or markup may fill (attributeProblems): its default content
   * is checked here, the overrides where they are written (PolicyCompiler, which follows each
   * page's parents), and the site is recorded in `attributeBlocks`. Anywhere else it is refused.
   */
  #blockInStartTag(tag: StartTag, n: Extract<NodeLike, { type: 'block' }>, i: number, opensIn: PlaceInTag, closesIn: PlaceInTag): void {
    if (opensIn !== closesIn) {
      this.#error('LW_CSP_TAG_IN_TAG', 'a block that opens and closes in different places of a start tag (inside and outside a quoted value, or in two values): its text would change which quotes pair up; open and close it inside one quoted attribute value', i);
      return;
    }
    if (typeof opensIn === 'string') {
      const unquoted = tag.attrs.find((a) => a.value !== null && a.end !== a.valueEnd + 1 && i >= a.valueStart && i <= a.valueEnd);
      this.#error(
        'LW_CSP_TAG_IN_TAG',
        unquoted !== undefined
          ? `a block inside the unquoted value of ${unquoted.name}=: a space in its text would end the value and start another attribute; quote the value (${unquoted.name}="{{$${n.name}}}{{/${n.name}}}")`
          : opensIn === 'name'
            ? 'a block inside the name of the element or of an attribute: write whole names in this file'
            : 'a block between the attributes of a start tag: its text could add any attribute (an event handler, a style); write the attributes in this file, choose among them with a section ({{#open}}open{{/open}}), or put the block inside a quoted value (class="{{$kind}}{{/kind}}")',
        i,
      );
      return;
    }
    const refusal = blockRefusal(tag, opensIn);
    if (refusal !== undefined) {
      this.#error('LW_CSP_TAG_IN_TAG', `a block inside ${opensIn.name}="…" of <${tag.name}>: ${refusal}`, i);
      return;
    }
    this.#attributeBlocks.set(n, { name: n.name, attribute: opensIn.name, element: tag.name, file: this.#file, source: this.#source, offset: this.#sourceOffsetAt(i) });
    attributeProblems(
      n.body,
      this.#source,
      () => undefined, // a nested block is a site of its own: its tags are in this value too
      (_node, offset, what) => {
        const message = `the default content of block "${n.name}", written inside ${opensIn.name}="…" of <${tag.name}>, holds ${what}, which could end the value or add markup; ${ATTRIBUTE_TEXT}`;
        if (this.#options.svg) this.#report?.('warning', 'LW_CSP_SVG_INLINE', `inlined SVG: ${message}`, this.#file, this.#source, offset);
        else this.#report?.('error', 'LW_CSP_TAG_IN_TAG', message, this.#file, this.#source, offset);
      },
    );
  }

  // ---- Policy sources ----

  /**
   * The `data-*-src` attributes of a `<script>`, a `<link>` or a connector tag: sources added to
   * the file's policy. `declaration`: the declaration link's, whose sources are also kept in
   * `declared` (the re-scan no longer sees the link) and whose unknown `data-*` settings are reported.
   */
  #dataSources(tag: StartTag, declaration: boolean): void {
    for (const a of tag.attrs) {
      const directive = DATA_SOURCES[a.name];
      if (directive === undefined) {
        if (declaration && a.name.startsWith('data-') && !DECLARATION_FLAGS.has(a.name)) {
          this.#warn('LW_CSP_DECLARATION_UNKNOWN', `${a.name} is not a setting Laneway knows; it is ignored (known: ${[...DECLARATION_FLAGS, ...Object.keys(DATA_SOURCES)].join(', ')})`, a.nameStart);
        }
        continue;
      }
      const value = a.value ?? '';
      if (!isStatic(value)) {
        this.#error('LW_CSP_DYNAMIC_SOURCE', `${a.name} must be written literally: the policy is built when the app loads, not from data`, a.valueStart);
        continue;
      }
      const tokens = value.split(/[\t\n\f\r ]+/).filter(Boolean);
      const ok: string[] = [];
      for (const token of tokens) {
        const problem = token.toLowerCase() === "'none'" ? "'none' cannot be added to a directive" : checkSource(token);
        if (problem !== undefined) this.#error('LW_CSP_BAD_SOURCE', `${a.name}: "${token}" is not a source: ${problem}`, a.valueStart + value.indexOf(token));
        // Keywords are case-insensitive: 'Unsafe-Inline' is 'unsafe-inline'.
        else ok.push(/^'[a-z-]+'$/i.test(token) ? token.toLowerCase() : token);
      }
      for (const s of ok) addSource(this.#facts, directive, s);
      if (declaration) this.#declared.push({ directive, sources: ok });
      if ((directive === 'script-src' || directive === 'style-src') && ok.some((s) => s.toLowerCase() === "'unsafe-inline'")) {
        this.#warn(
          'LW_CSP_UNSAFE_INLINE',
          `'unsafe-inline' in ${directive}: Laneway leaves the inline-block hashes out of ${directive} on every page using this file (a hash would switch 'unsafe-inline' off), so any inline ${directive === 'script-src' ? 'script' : 'style'} runs there, injected ones included`,
          a.valueStart,
        );
      }
    }
  }

  /** A `true`/`false` setting of the declaration link (a bare attribute is true). */
  #declarationFlag(tag: StartTag, name: string): boolean | undefined {
    const a = attr(tag, name);
    if (a === undefined) return undefined;
    const v = (a.value ?? 'true').trim().toLowerCase();
    if (v === 'true' || v === '') return true;
    if (v === 'false') return false;
    this.#error('LW_CSP_DECLARATION', `${name} is "true" or "false", not "${a.value}"`, a.valueStart);
    return undefined;
  }

  /**
   * `<link itemprop="content-security-policy">`: records its settings in the facts and its sources
   * (kept in `declared`), and removes the link from the output. Read in the first pass only.
   */
  #declaration(tag: StartTag): void {
    if (!this.#reporting) return;
    const facts = this.#facts;
    const connect = this.#declarationFlag(tag, 'data-connect-self');
    const form = this.#declarationFlag(tag, 'data-form-self');
    const img = this.#declarationFlag(tag, 'data-img-src-data');
    // The image upload flow (docs/images.md): a preview from the chosen file (blob:, data:) and
    // requests to the app itself (the upload address, the PUT).
    if (this.#declarationFlag(tag, 'data-img-upload') === true) facts.imgUpload = true;
    // A sign-in form: its POST answers with a redirect to the provider (docs/users.md).
    if (this.#declarationFlag(tag, 'data-form-action-auth') === true) facts.formActionAuth = true;
    if (connect === false) facts.connectSelf = false;
    if (form === false) facts.formSelf = false;
    if (img === true) facts.imgData = true;
    this.#dataSources(tag, true);
    this.#edit(tag.start, tag.end, '', 'LW_CSP_DECLARATION', 'the <link itemprop="content-security-policy"> declaration');
  }

  /**
   * A `<script src>` or stylesheet `<link href>`: inlined when the inline hook gives its text (an
   * edit replacing the element, from its start tag to `closeAt` or to the end of the start tag),
   * else its source added to script-src or style-src (from the literal prefix of a dynamic URL).
   */
  #scriptOrStyleReference(tag: StartTag, a: Attribute, kind: 'script' | 'style', closeAt: number | null): 'inline' | 'source' {
    const value = a.value ?? '';
    const directive: Directive = kind === 'script' ? 'script-src' : 'style-src';
    if (!isStatic(value)) {
      const src = sourceOfPrefix(value.slice(0, value.indexOf(HOLE)));
      if (src === undefined) {
        this.#error('LW_CSP_DYNAMIC_SOURCE', `the ${kind === 'script' ? 'script src' : 'stylesheet href'} comes from data, so its origin is unknown when the policy is built: write it literally, or start it with "/" or "https://host/"`, a.valueStart);
      } else addSource(this.#facts, directive, src);
      return 'source';
    }
    const inline = closeAt !== null || kind === 'style' ? this.#hooks.inline?.(value, kind, this.#file) : undefined;
    if (inline !== undefined) {
      if ('code' in inline) {
        this.#error(inline.code, inline.message, a.valueStart);
        return 'source';
      }
      const keep = tag.attrs.filter((x) => !INLINE_DROPPED[kind].has(x.name)).map((x) => ' ' + this.#frag.s.slice(x.nameStart, x.end));
      const end = closeAt ?? tag.end;
      this.#edit(tag.start, end, `<${kind}${keep.join('')}>${inline.text}</${kind}>`, 'LW_ASSET_INLINE_DYNAMIC', `an element inlining ${value}`);
      return 'inline';
    }
    const src = sourceOfUrl(value);
    if (src === undefined || src === 'data:') {
      this.#error('LW_CSP_BAD_SOURCE', `"${value}" cannot be allowed as a ${kind} source: use a file of the app or an http(s) URL`, a.valueStart);
      return 'source';
    }
    addSource(this.#facts, directive, src);
    if (src !== "'self'" && attr(tag, 'integrity') === undefined) {
      this.#warn('LW_CSP_NO_INTEGRITY', `the external ${kind === 'script' ? 'script' : 'stylesheet'} ${value} has no integrity attribute: add integrity="sha384-…" (and crossorigin="anonymous") so a changed file is refused`, a.nameStart);
    }
    return 'source';
  }

  /** An image or media URL from another origin (or the app's own, for media): its origin added to `directive`. */
  #mediaSource(directive: Directive, value: string | null): void {
    if (value === null || !isStatic(value)) return;
    for (const part of directive === 'img-src' ? value.split(',') : [value]) {
      const url = part.trim().split(/\s+/)[0] ?? '';
      if (url === '' || /^data:/i.test(url)) continue;
      const src = sourceOfUrl(url);
      if (src !== undefined && src !== "'self'") {
        const origin = /^[a-z]+:\/\/[^/]+|^[^/]+/i.exec(src)?.[0];
        if (origin !== undefined) addSource(this.#facts, directive, origin);
      } else if (src === "'self'" && directive !== 'img-src') addSource(this.#facts, directive, "'self'");
    }
  }

  /**
   * A connector tag the element hook expands: its problems reported, its sources added (and kept
   * in `declared`), the tag replaced by the hook's markup (the re-scan reads that markup) and its
   * end tag removed.
   */
  #connectorTag(tag: StartTag, expansion: ElementExpansion): void {
    for (const p of expansion.problems) {
      const a = p.attribute === undefined ? undefined : attr(tag, p.attribute);
      if (p.severity === 'warning') this.#warn(p.code, p.message, a?.nameStart ?? tag.start);
      else this.#error(p.code, p.message, a?.nameStart ?? tag.start);
    }
    // data-*-src attributes pass through to the script: check them here, where problems are reported.
    this.#dataSources(tag, false);
    for (const d of expansion.sources) {
      for (const src of d.sources) addSource(this.#facts, d.directive, src);
      this.#declared.push({ directive: d.directive, sources: [...d.sources] });
    }
    this.#replaced.add(tag.name);
    this.#edit(tag.start, tag.end, expansion.html, 'LW_CONTENT_CONNECTOR_TAG', `the connector tag <${tag.name}>`);
  }

  // ---- Rewrites ----

  /** A static reference in `a` (fingerprint, pin): an edit with the URLs the rewrite hook gives. */
  #rewrite(tag: StartTag, a: Attribute): void {
    const value = a.value;
    const hooks = this.#hooks;
    if (hooks.rewrite === undefined || value === null || value.trim() === '' || !isStatic(value)) return;
    if (a.name === 'content' && !value.trim().startsWith('/')) return;
    let changed = false;
    const one = (url: string): string | undefined => {
      const r = hooks.rewrite!(url, this.#file, a.name);
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
    if (changed) this.#edit(a.valueStart, a.valueEnd, next, 'LW_ASSET_INLINE_DYNAMIC', `the ${a.name} of <${tag.name}>`);
  }

  // ---- Inline blocks ----

  /**
   * The segments of an element's content [cs, ce): undefined (after reporting) when the element
   * is not closed in this file or not in the same section or block as its opening tag.
   */
  #contentOf(what: string, tag: StartTag, cs: number, ce: number, closed: boolean, code: Code): Segment[] | undefined {
    const frag = this.#frag;
    if (!closed) {
      this.#error(code === 'LW_CSP_DATA_BLOCK' ? code : 'LW_CSP_INLINE_UNCLOSED', `${what} is not closed in this file: write its end tag in the same file as its opening tag`, tag.start);
      return undefined;
    }
    const a = segmentAt(frag, cs - 1);
    const b = segmentAt(frag, ce);
    if (a === undefined || b === undefined || !a.text || !b.text || a.list !== b.list) {
      this.#error(code === 'LW_CSP_DATA_BLOCK' ? code : 'LW_CSP_INLINE_SPLIT', `${what} opens and closes in different sections or blocks: keep the whole element, from its opening tag to its end tag, inside one section`, tag.start);
      return undefined;
    }
    const segs: Segment[] = [];
    for (let i = frag.segs.indexOf(a); i < frag.segs.length; i++) {
      const seg = frag.segs[i]!;
      if (seg.f > ce) break;
      segs.push(seg);
    }
    return segs;
  }

  /**
   * An executable inline block's content [cs, ce) (a script that runs, or a style): counted in
   * `inlineBlocks`, its hash added to the facts, and, when it has line starts, recorded in
   * `indented`. A template tag inside it is a build error, and nothing is hashed.
   */
  #inlineBlock(kind: 'script' | 'style', tag: StartTag, cs: number, ce: number, closed: boolean): void {
    const frag = this.#frag;
    this.#inlineBlocks++;
    // A tag inside a block that may not stay open is reported as such first.
    const holes = frag.s.indexOf(HOLE, cs);
    const segs = this.#contentOf(`<${kind}>`, tag, cs, ce, closed, 'LW_CSP_INLINE_SPLIT');
    if (segs === undefined) return;
    const tags = holes !== -1 && holes < ce ? tagsIn(segs, cs, ce) : [];
    for (const seg of tags) {
      const where = kind === 'script' ? 'an inline <script> that runs' : 'a <style>';
      const fix =
        kind === 'script'
          ? 'put the value in a data-* attribute (<script data-user="{{user}}">, read with document.currentScript.dataset.user) or in a JSON data block (<script type="application/json" id="data">{"user": "{{user}}"}</script>, read with JSON.parse), and keep the script itself literal'
          : 'choose among classes written in a stylesheet (class="{{kind}}"), or set a custom property from a script that reads a data-* attribute';
      const n = seg.node;
      const what = n.type === 'section' ? 'a section' : n.type === 'partial' ? 'a partial' : n.type === 'block' || n.type === 'parent' ? 'a block or layout' : 'a value';
      const extra = n.type === 'partial' || n.type === 'block' || n.type === 'parent' ? `; or put the whole <${kind}> element inside the partial or block` : '';
      this.#error('LW_CSP_TAG_IN_SCRIPT', `template tag inside ${where}: ${what} would change the ${kind === 'script' ? 'code' : 'CSS'} with data, and its hash is computed when the app loads. Instead, ${fix}${extra}`, seg.f);
    }
    if (tags.length > 0) return;
    const text = frag.s.slice(cs, ce);
    (kind === 'script' ? this.#facts.scriptHashes : this.#facts.styleHashes).add(hashSource(this.#options.algorithm, text));
    // Line starts inside the block: re-indentation would change its text (see viewPolicy).
    const starts: number[] = [];
    for (const seg of segs) {
      if (!seg.text) continue;
      const n = seg.node as TextLike;
      for (const m of n.bol ? [0, ...n.marks] : n.marks) {
        const p = seg.f + m;
        if (p >= cs && p <= ce && starts[starts.length - 1] !== p - cs) starts.push(p - cs);
      }
    }
    if (starts.length === 0) return;
    const first = segs[0]!.node as TextLike;
    const list = this.#indented.get(first);
    const entry: IndentedBlock = { kind, text, starts, file: this.#file, source: this.#source, offset: this.#sourceOffsetAt(tag.start) };
    if (list === undefined) this.#indented.set(first, [entry]);
    else list.push(entry);
  }

  /**
   * A JSON data block's content [cs, ce): it never runs and is not hashed. Each value tag is
   * marked (`escape` on its node) with the escaping its place needs: inside a string (between
   * quotes), a string body; elsewhere, a whole JSON value.
   */
  #jsonDataBlock(tag: StartTag, cs: number, ce: number, closed: boolean): void {
    const frag = this.#frag;
    const hole = frag.s.indexOf(HOLE, cs);
    if (hole === -1 || hole >= ce) return;
    const segs = this.#contentOf('this JSON data block', tag, cs, ce, closed, 'LW_CSP_DATA_BLOCK');
    if (segs === undefined) return;
    // A small JSON lexer: in a string or not; after a backslash; inside a \uXXXX escape.
    let inString = false;
    let escape = 0;
    // Sections met: the string state at their opening tag, and where that tag is.
    const opened = new Map<NodeLike, { inString: boolean; at: number }>();
    for (let i = cs; i < ce; i++) {
      const c = frag.s.charCodeAt(i);
      if (c !== HOLE_CODE) {
        if (escape > 0) {
          escape = escape === 1 && c === 117 ? 4 : escape - 1;
        } else if (inString && c === 92) escape = 1;
        else if (c === 34) inString = !inString;
        continue;
      }
      const seg = segmentAt(frag, i)!;
      const n = seg.node;
      if (escape > 0) {
        this.#error('LW_CSP_DATA_BLOCK', 'a template tag right after a backslash in a JSON string: the value would be read as an escape sequence; write the escape in full, or move the tag', i);
        escape = 0;
        continue;
      }
      if (n.type === 'var' || (n.type === 'pragma' && (n.name === 'show' || n.name === 'choose-string'))) {
        if ((n.type === 'var' && n.raw) || (n.type === 'pragma' && n.name === 'show')) {
          this.#error('LW_CSP_RAW_IN_INLINE', 'unescaped output inside a JSON data block: write {{value}}, which Laneway escapes for JSON', i);
          continue;
        }
        n.escape = inString ? 'json-string' : 'json-value';
      } else if (n.type === 'section') {
        // The same string state where it opens and where it closes, or its content would
        // move the quotes depending on the data.
        const open = opened.get(n);
        if (open === undefined) opened.set(n, { inString, at: i });
        else if (open.inString !== inString) {
          this.#error('LW_CSP_DATA_BLOCK', 'this section opens a JSON string it does not close (or closes one it did not open): keep each string\'s quotes on the same side of the section\'s tags', open.at);
        }
      } else if (n.type !== 'pragma') {
        this.#error('LW_CSP_DATA_BLOCK', `a ${n.type === 'partial' ? 'partial' : 'block or layout'} inside a JSON data block: its text is not escaped for JSON; write the JSON in this file, with {{value}} tags`, i);
      }
    }
  }
}

/** The directive that loads what a non-stylesheet `<link>` names (by its rel and as), or undefined for none. */
function linkDirective(rel: readonly string[], tag: StartTag): Directive | undefined {
  if (rel.includes('modulepreload')) return 'script-src';
  if (rel.includes('preload')) {
    const as = attr(tag, 'as')?.value?.trim().toLowerCase();
    return PRELOAD_DIRECTIVES[as ?? ''];
  }
  if (rel.includes('manifest')) return 'manifest-src';
  if (rel.some((r) => r === 'icon' || r === 'apple-touch-icon')) return 'img-src';
  return undefined;
}

/** `<link rel="preload" as=…>`: the directive of each kind that a policy allows. */
const PRELOAD_DIRECTIVES: Partial<Record<string, Directive>> = { script: 'script-src', style: 'style-src', font: 'font-src', image: 'img-src' };

/** Tags inside [cs, ce), one per node (a section's opening and closing tags are one node). */
function tagsIn(segs: readonly Segment[], cs: number, ce: number): Segment[] {
  const seen = new Set<NodeLike>();
  const out: Segment[] = [];
  for (const seg of segs) {
    if (seg.text || seg.f < cs || seg.f >= ce || seen.has(seg.node)) continue;
    seen.add(seg.node);
    out.push(seg);
  }
  return out;
}

/** The JavaScript MIME types (HTML "JavaScript MIME type essence match"). */
const JAVASCRIPT_TYPES = new Set([
  'application/ecmascript', 'application/javascript', 'application/x-ecmascript', 'application/x-javascript', 'text/ecmascript',
  'text/javascript', 'text/javascript1.0', 'text/javascript1.1', 'text/javascript1.2', 'text/javascript1.3', 'text/javascript1.4',
  'text/javascript1.5', 'text/jscript', 'text/livescript', 'text/x-ecmascript', 'text/x-javascript',
]);

/**
 * What an inline `<script>` (without src) is, from its type, as the HTML standard decides
 * whether it runs: 'code' for a classic script, a module, an import map or speculation rules
 * (they all change what the page runs or loads), 'json' for a JSON data block, 'other' for any
 * other data block. A type written with a template tag counts as code. A type with parameters
 * (`text/javascript; charset=utf-8`) does not run in browsers, but counts as code too.
 */
export function scriptType(tag: StartTag): 'code' | 'json' | 'other' {
  const typeAttr = attr(tag, 'type');
  const language = attr(tag, 'language');
  let type: string;
  // Character references are decoded as the browser decodes them (type="text&#47;javascript" runs).
  if (typeAttr !== undefined) type = decodeReferences(typeAttr.value ?? '');
  else if (language !== undefined && (language.value ?? '') !== '') type = 'text/' + decodeReferences(language.value ?? '');
  else return 'code';
  if (type.includes(HOLE)) return 'code';
  type = type.trim().toLowerCase();
  const essence = type.split(';')[0]!.trim();
  if (type === '' || type === 'module' || type === 'importmap' || type === 'speculationrules' || JAVASCRIPT_TYPES.has(essence)) return 'code';
  if (essence === 'application/json' || essence === 'text/json' || essence.endsWith('+json')) return 'json';
  return 'other';
}

/** Attributes dropped when an external script or stylesheet becomes an inline block. */
const INLINE_DROPPED: Record<'script' | 'style', Set<string>> = {
  script: new Set(['src', 'integrity', 'crossorigin', 'referrerpolicy', 'fetchpriority', 'defer', 'charset']),
  style: new Set(['rel', 'href', 'integrity', 'crossorigin', 'referrerpolicy', 'fetchpriority', 'type', 'as', 'disabled']),
};

/**
 * Why a block may not stand in this attribute value even with plain text, or undefined when it
 * may. Stricter than for value tags: a block's text is the developer's, so it would have to be
 * checked like text written in the start tag (javascript: URLs, policy sources, fingerprinted
 * URLs, scripts that run), and the page pass sees only the file that holds the attribute.
 */
function blockRefusal(tag: StartTag, a: Attribute): string | undefined {
  const name = a.name;
  if (name.includes(HOLE)) return 'the attribute\'s name is not written literally; write whole names in this file';
  if (tag.name === 'script' || tag.name === 'style' || tag.name === 'link') {
    return `the attributes of <${tag.name}> decide what runs or loads and the policy is built from them when the app loads; write them in this file`;
  }
  if (name.startsWith('on')) return 'an event handler holds code; add a listener from a script';
  if (name === 'style') return 'a style attribute holds CSS; choose among classes (class="{{$kind}}{{/kind}}")';
  if (name === 'srcdoc') return 'the browser reads srcdoc as a whole HTML document; give the frame a src';
  if (URL_ATTRIBUTES.has(name) || REWRITTEN.has(name) || name === 'srcset' || name === 'imagesrcset') {
    return `a URL decides where the page leads and what it loads, and Laneway checks URLs (javascript:, policy sources, fingerprinted assets) in text written in the start tag; write the URL in this file, or print it as a value (${name}="{{url}}", with {{% const url = '/path' }} in the page)`;
  }
  return undefined;
}

/** `{{{input.attributes}}}`, `{{{form.title.textarea.attributes}}}`: a form control's attribute text, printed raw. */
function isFormAttributes(n: NodeLike): boolean {
  if (n.type !== 'var' || !n.raw) return false;
  const e = n.expr;
  if (e?.kind !== 'path' || e.root === undefined || e.segs === undefined) return false;
  const segs = [e.root, ...e.segs];
  return segs.length >= 2 && segs[segs.length - 1] === 'attributes' && ['input', 'textarea', 'selectOne', 'selectMany'].includes(segs[segs.length - 2]!);
}

/** Attributes a partial inside a start tag may not hold: what the page's policy or rewrites must see in the page itself. */
const UNSEEN_ATTRIBUTES = new Set(['style', 'srcdoc', 'src', 'srcset', 'href', 'action', 'formaction', 'poster', 'data', 'content', 'ping', 'background', 'manifest', 'codebase', 'cite', 'xlink:href', 'longdesc', 'usemap', 'itemtype', 'nonce', 'integrity']);

/**
 * Why the text of a partial file is not a list of literal attributes (`autocomplete="off"
 * spellcheck="false"`), or undefined when it is. The view's marker line is left out, as the
 * renderer leaves it out.
 */
export function literalAttributesProblem(file: string): string | undefined {
  let text = file.replace(/^\uFEFF?<!--TEMPLATE[^>]*-->[ \t]*(\r?\n)?/, '');
  if (/\{\{|\}\}/.test(text)) return 'holds a template tag';
  if (/[<>]/.test(text)) return 'holds an element or markup';
  const attribute = /^\s*([^\s"'<>\/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/;
  let count = 0;
  while ((text = text.replace(/^\s+/, '')) !== '') {
    const m = attribute.exec(text);
    if (!m) return `holds "${text.slice(0, 20)}", which is not an attribute`;
    const name = m[1]!.toLowerCase();
    if (name.startsWith('on')) return `holds the event handler ${name}`;
    if (UNSEEN_ATTRIBUTES.has(name)) return `holds ${name}=, which the page's policy must see where it is written`;
    text = text.slice(m[0].length);
    if (text !== '' && !/^\s/.test(text)) return 'holds attributes without a space between them';
    if (++count > 100) return 'holds more than 100 attributes';
  }
  return undefined;
}
