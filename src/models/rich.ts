/**
 * Rich text: the `html` and `markdown` field types (docs/models.md "HTML, Markdown and SVG icon").
 * With `svg-icon` they are the only values views print raw with `{{{ }}}`, so what they may hold is
 * an allow-list, enforced here:
 *
 * - elements: blocks `h1`–`h6 div p pre blockquote ul ol li`, inline `a br code em s strong sub
 *   sup del ins`; any other element is removed and its text kept, except the elements in
 *   `DROPPED_WITH_CONTENT`, whose content goes too;
 * - attributes: `id` and `class` on every allowed element, `href` on `a` only (and, when the caller
 *   asks for it with `blankTargets`, `target="_blank"` on `a`, always with `rel="noopener noreferrer"`);
 * - links: `http:`, `https:`, `mailto:` and relative URLs (`/a`, `a/b`, `#x`, `?q`); any other
 *   scheme and the protocol-relative forms (`//host`, `\\host`, `/\host`) lose their `href`.
 *
 * `sanitizeHtml` is stable: its output, read by a browser (or parse5) and serialised again, gives
 * the same tree, and sanitising it again gives the same string. That is what rules out mutation
 * XSS, and is why a second pass (`normaliseTree`) rewrites the few nestings that sanitize-html
 * accepts but the HTML parser would rebuild differently.
 */
import type * as HtmlParser2 from 'htmlparser2';
import type MarkdownItModule from 'markdown-it';
import type { MarkdownIt as Converter } from 'markdown-it';
import { createRequire } from 'node:module';
import type Sanitize from 'sanitize-html';

// sanitize-html, htmlparser2 and markdown-it are loaded when an html or Markdown value is first
// read, cleaned or rendered (apps without rich text never load them; htmlparser2 is an ES module,
// loaded by require as Node 20.19 allows, the Node it needs itself).
const require = createRequire(import.meta.url);
let loadedSanitize: typeof Sanitize | undefined;
const sanitize = (html: string, options: Sanitize.IOptions): string => (loadedSanitize ??= require('sanitize-html') as typeof Sanitize)(html, options);
let loadedParser: typeof HtmlParser2.Parser | undefined;
const htmlParser = (): typeof HtmlParser2.Parser => (loadedParser ??= (require('htmlparser2') as typeof HtmlParser2).Parser);
import type { ValueResult } from './value-result.js';

const BLOCK_ELEMENTS = ['h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'div', 'p', 'pre', 'blockquote', 'ul', 'ol', 'li'];
const INLINE_ELEMENTS = ['a', 'br', 'code', 'em', 's', 'strong', 'sub', 'sup', 'del', 'ins'];

/** Removed with everything inside: their content is code, another language, or raw text to a browser. */
const DROPPED_WITH_CONTENT = [
  'script',
  'style',
  'textarea',
  'noscript',
  'iframe',
  'object',
  'embed',
  'svg',
  'math',
  'template',
  'title',
  'xmp',
  'noembed',
  'noframes',
  'plaintext',
];

/** Deeper elements are removed (their text kept): browsers flatten deep trees, and this bounds the work. */
const NESTING_LIMIT = 64;

const SAFE_SCHEMES = ['http', 'https', 'mailto'];

/**
 * Whether a link target may stay. The URL is first reduced as a browser's URL parser reduces it
 * (WHATWG URL, basic URL parser: leading and trailing C0 controls and spaces are stripped, tabs and
 * newlines removed anywhere), so `java\nscript:` and ` \u0001javascript:` are read as
 * `javascript:`. Entities are already decoded by the HTML parser at this point.
 */
function isAllowedHref(href: string): boolean {
  const url = trimControlsAndSpaces(href).replace(/[\t\n\r]/g, '');
  if (/^[/\\]{2}/.test(url)) return false; // protocol-relative: //host, \\host, /\host, \/host
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(url);
  return scheme === null || SAFE_SCHEMES.includes(scheme[1]!.toLowerCase());
}

/**
 * `s` without its leading and trailing C0 controls and spaces (U+0000 to U+0020). A scan, not
 * `/[\u0000-\u0020]+$/`, which tries every run from each of its characters: docs/architecture.md
 * "Regular expressions on what a visitor sends".
 */
export function trimControlsAndSpaces(s: string): string {
  let start = 0;
  let end = s.length;
  while (start < end && s.charCodeAt(start) <= 0x20) start++;
  while (end > start && s.charCodeAt(end - 1) <= 0x20) end--;
  return s.slice(start, end);
}

const SANITIZE_OPTIONS: Sanitize.IOptions = {
  allowedTags: [...BLOCK_ELEMENTS, ...INLINE_ELEMENTS],
  allowedAttributes: { '*': ['id', 'class'], a: ['id', 'class', 'href'] },
  allowedSchemes: SAFE_SCHEMES,
  allowedSchemesByTag: {},
  allowedSchemesAppliedToAttributes: ['href'],
  allowProtocolRelative: false,
  disallowedTagsMode: 'discard',
  nonTextTags: DROPPED_WITH_CONTENT,
  nestingLimit: NESTING_LIMIT,
  parseStyleAttributes: false,
  transformTags: {
    // sanitize-html checks schemes too; this adds the browser's URL reduction and the backslash forms.
    a: (tagName, attribs) => {
      const { href, ...rest } = attribs;
      return { tagName, attribs: href !== undefined && isAllowedHref(href) ? { ...rest, href } : rest };
    },
  },
};

/** What `sanitizeHtml` keeps beyond the allow-list. */
export interface SanitizeOptions {
  /**
   * Keep `target="_blank"` on `a` (any other `target` goes), with `rel` set to exactly
   * `noopener noreferrer` so that the opened page cannot reach this one. For the Markdown
   * `autolink: blank` option; `html` fields never keep `target`.
   */
  blankTargets?: boolean;
}

const SANITIZE_OPTIONS_BLANK_TARGETS: Sanitize.IOptions = {
  ...SANITIZE_OPTIONS,
  allowedAttributes: { '*': ['id', 'class'], a: ['id', 'class', 'href', 'target', 'rel'] },
  transformTags: {
    a: (tagName, attribs) => {
      const { href, target, rel, ...rest } = attribs;
      const kept: Sanitize.Attributes = href !== undefined && isAllowedHref(href) ? { ...rest, href } : rest;
      return { tagName, attribs: target === '_blank' ? { ...kept, target, rel: 'noopener noreferrer' } : kept };
    },
  },
};

/**
 * The tree of sanitize-html's output: elements and text, nothing else. That output is well-formed
 * (every element closed, `<br />` self-closed, only `&amp; &lt; &gt; &quot;` escapes), so an XML
 * reading of it is exact.
 */
export type RichNode = string | RichElement;
export interface RichElement {
  name: string;
  attribs: Record<string, string>;
  children: RichNode[];
}

function readTree(html: string): RichNode[] {
  const root: RichElement = { name: '', attribs: {}, children: [] };
  const stack: RichElement[] = [root];
  const parser = new (htmlParser())(
    {
      onopentag(name, attribs) {
        const element: RichElement = { name, attribs, children: [] };
        stack[stack.length - 1]!.children.push(element);
        stack.push(element);
      },
      onclosetag() {
        if (stack.length > 1) stack.pop();
      },
      ontext(text) {
        stack[stack.length - 1]!.children.push(text);
      },
    },
    { xmlMode: true, decodeEntities: true },
  );
  parser.write(html);
  parser.end();
  return root.children;
}

const HEADINGS = new Set(['h1', 'h2', 'h3', 'h4', 'h5', 'h6']);
const BLOCKS = new Set(BLOCK_ELEMENTS);
/** Elements that end the HTML parser's search for an open `li` when a new `li` starts (the "special" ones other than div and p). */
const LIST_ITEM_BOUNDARIES = new Set(['ul', 'ol', 'blockquote', 'pre', 'li', ...HEADINGS]);

interface TreeContext {
  parent: string;
  inLink: boolean;
  inListItem: boolean;
}

const hasBlock = (nodes: RichNode[]): boolean =>
  nodes.some((n) => typeof n !== 'string' && (BLOCKS.has(n.name) || hasBlock(n.children)));

/**
 * Rewrites the nestings that the HTML parser ("in body" insertion mode, HTML §13.2.6.4.7) would
 * not keep, so that a browser builds exactly this tree:
 * - a `p` holding a block element (any `div p h1–h6 pre blockquote ul ol li` start tag closes an
 *   open `p`) becomes a `div`;
 * - an `a` inside an `a` (a new `a` closes the open one) is unwrapped, its content kept;
 * - an `li` inside an open `li` with only `div`, `p` or inline elements between (a new `li` closes
 *   it) becomes a `div`;
 * - a heading directly inside a heading (a heading start tag closes a heading that is the current
 *   node) is unwrapped;
 * - newlines that begin a `pre` are removed (the parser drops the first one).
 */
function normaliseTree(nodes: RichNode[], context: TreeContext): RichNode[] {
  const out: RichNode[] = [];
  const push = (node: RichNode): void => {
    const last = out[out.length - 1];
    if (typeof node === 'string' && typeof last === 'string') out[out.length - 1] = last + node;
    else if (node !== '') out.push(node);
  };
  for (const node of nodes) {
    if (typeof node === 'string') {
      push(node);
      continue;
    }
    let name = node.name;
    if ((name === 'a' && context.inLink) || (HEADINGS.has(name) && HEADINGS.has(context.parent))) {
      for (const child of normaliseTree(node.children, context)) push(child);
      continue;
    }
    if (name === 'li' && context.inListItem) name = 'div';
    const children = normaliseTree(node.children, {
      parent: name,
      inLink: context.inLink || name === 'a',
      inListItem: node.name === 'li' || (context.inListItem && !LIST_ITEM_BOUNDARIES.has(name)),
    });
    if (name === 'p' && hasBlock(children)) name = 'div';
    if (name === 'pre' && typeof children[0] === 'string') {
      const text = children[0].replace(/^\n+/, '');
      if (text === '') children.shift();
      else children[0] = text;
    }
    push({ name, attribs: node.attribs, children });
  }
  return out;
}

const escapeText = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const escapeAttribute = (s: string): string => escapeText(s).replace(/"/g, '&quot;');

/** Serialises as sanitize-html does, so that sanitising the result again changes nothing. */
function writeTree(nodes: RichNode[]): string {
  let html = '';
  for (const node of nodes) {
    if (typeof node === 'string') {
      html += escapeText(node);
      continue;
    }
    html += `<${node.name}`;
    for (const [name, value] of Object.entries(node.attribs)) html += ` ${name}="${escapeAttribute(value)}"`;
    html += node.name === 'br' ? ' />' : `>${writeTree(node.children)}</${node.name}>`;
  }
  return html;
}

/**
 * Cleans HTML to the rich-text allow-list (see the top of this file). The result is what a
 * browser reads it as: sanitising it again returns it unchanged.
 */
export function sanitizeHtml(input: string, options: SanitizeOptions = {}): string {
  // The browser's input stream preprocessing: CR LF and CR become LF. NUL becomes U+FFFD here
  // (browsers drop it from text), so that no reading of the output depends on it.
  const source = input.replace(/\r\n?/g, '\n').replace(/\0/g, '\uFFFD');
  // Character references can still produce CR (`&#13;`); browsers keep it, but serialising and
  // reading it again would turn it into LF, so it is normalised here too.
  const cleaned = sanitize(source, options.blankTargets ? SANITIZE_OPTIONS_BLANK_TARGETS : SANITIZE_OPTIONS).replace(/\r\n?/g, '\n');
  return writeTree(normaliseTree(readTree(cleaned), { parent: '', inLink: false, inListItem: false }));
}

/**
 * The tree of `html` once cleaned (text decoded, only allowed elements and attributes), for a
 * transform that changes it and writes it out with `writeRichTree`. What such a transform
 * produces is HTML to clean again: the tree is not checked on the way out.
 */
export function readRichTree(html: string): RichNode[] {
  return readTree(sanitizeHtml(html));
}

/** A tree read by `readRichTree`, as HTML (text and attribute values escaped). */
export function writeRichTree(nodes: RichNode[]): string {
  return writeTree(nodes);
}

/**
 * The most bytes of HTML an `html` field of `max` bytes takes as sent, before it is cleaned
 * (docs/models.md): twice its `max`, room for markup that cleaning removes. Longer input is
 * refused unread: the sanitiser's time grows faster than its input.
 */
export function htmlInputLimit(max: number): number {
  return 2 * max;
}

/** Thrown to stop `nestsDeeperThan`'s parser at the first element too deep. */
const TOO_DEEP = Symbol('too deep');

/**
 * Whether `html`, read by the parser sanitize-html uses (htmlparser2, with its implied end tags),
 * opens elements more than `limit` deep. It stops at the first element too deep, so that its
 * parser's stack never holds more than `limit` names: its time is linear in the input.
 */
function nestsDeeperThan(html: string, limit: number): boolean {
  let depth = 0;
  const parser = new (htmlParser())(
    {
      onopentagname() {
        if (++depth > limit) throw TOO_DEEP;
      },
      onclosetag() {
        depth--;
      },
    },
    { decodeEntities: false },
  );
  try {
    parser.write(html);
    parser.end();
  } catch (e) {
    if (e === TOO_DEEP) return true;
    throw e;
  }
  return false;
}

/**
 * HTML cleaned by `sanitizeHtml`, whose cleaned form is at most `max` bytes (default 2000) and at
 * least `min`. Before it is cleaned, the input must hold at most `htmlInputLimit(max)` bytes and
 * nest elements at most 64 deep (NESTING_LIMIT, past which cleaning would remove them): both are
 * read in linear time, so a hostile value is refused before the sanitiser sees it.
 */
export function checkHtml(input: unknown, bounds: { min?: number; max?: number } = {}): ValueResult<string> {
  if (typeof input !== 'string') return { ok: false, message: 'must be HTML text' };
  const max = bounds.max ?? 2000;
  const limit = htmlInputLimit(max);
  const sent = Buffer.byteLength(input, 'utf8');
  if (sent > limit) return { ok: false, message: `must be at most ${limit} bytes of HTML before it is cleaned (it has ${sent})` };
  if (nestsDeeperThan(input, NESTING_LIMIT)) return { ok: false, message: `must not nest elements more than ${NESTING_LIMIT} deep` };
  const html = sanitizeHtml(input);
  const bytes = Buffer.byteLength(html, 'utf8');
  if (bytes > max) return { ok: false, message: `must be at most ${max} bytes of HTML (it has ${bytes})` };
  if (bounds.min !== undefined && bytes < bounds.min) return { ok: false, message: `must be at least ${bounds.min} bytes of HTML (it has ${bytes})` };
  return { ok: true, value: html };
}

/**
 * One converter for the process: markdown-it keeps no state between renders. Raw HTML in the
 * source is shown as text (`html: false`). What markdown-it can emit beyond the allow-list:
 * - images: replaced by their alt text (below), since `img` is not allowed;
 * - tables: the table rule is off, so a table stays a paragraph of its source text (pipes
 *   included) rather than cells run together once the table elements are removed;
 * - `hr`: removed by `sanitizeHtml` (it has no text);
 * - attributes beyond `id class href` (`title` on links, `start` on `ol`): removed.
 */
let converter: Converter | undefined;
function markdown(): Converter {
  if (converter === undefined) {
    const md = new (require('markdown-it') as typeof MarkdownItModule)({ html: false, linkify: false, typographer: false }).disable('table');
    md.renderer.rules.image = (tokens, index, options, env, renderer) =>
      md.utils.escapeHtml(renderer.renderInlineAsText(tokens[index]!.children ?? [], options, env));
    converter = md;
  }
  return converter;
}

/** Markdown converted to HTML within the same allow-list as `sanitizeHtml`, links included. */
export function renderMarkdown(text: string): string {
  return sanitizeHtml(markdown().render(text));
}
