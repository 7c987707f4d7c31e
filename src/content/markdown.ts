/**
 * The rich-text renderer of static documents, `markdown` and `html` fields
 * (docs/content.md "Markdown", docs/models.md "HTML, Markdown and SVG icon"). For Markdown, four
 * functions:
 *
 * - `renderMarkdown(text, options?, context?)`: safe HTML, cleaned by `sanitizeHtml` (the allow-list
 *   of `html` fields, src/models/rich.ts) as the last step;
 * - `markdownText(text)`: the plain text of the document, for `text()`;
 * - `markdownSections(text, options?)`: the headings of the top-most level present, with the id
 *   `renderMarkdown` gives each of them when `generateHeaderId` is on, for `sections()`;
 * - `parseRenderOptions(raw)`: `MarkdownOptions` from a field's `render:` map or the named
 *   arguments of a template call, or a message saying which option is wrong.
 *
 * None of them throws for any text: markdown-it reads every string as some document (unclosed
 * constructs become text, nesting deeper than 100 becomes text).
 *
 * The dialect is markdown-it 15 (CommonMark plus `~~strikethrough~~`) with:
 * - attribute blocks of markdown-it-attrs, limited to ids and classes: `# Title {#top}`,
 *   `paragraph {.lead}`, `[link](/a){.button}`, `{.a .b #x}`; any other attribute in a block
 *   (`{onclick=…}`, `{style=…}`, `{href=…}`) is dropped;
 * - raw HTML off (`html: false`): `<b>` in the source shows as text, as in `markdown` fields. The
 *   sanitizer would make raw HTML safe, but it would also silently reduce it to the allow-list;
 *   text the author can see is the clearer result;
 * - images become their alt text and tables are not recognised (they stay text), because `img`
 *   and the table elements are not in the allow-list; `---` rules are dropped by the sanitizer;
 * - links to other documents by repository path (`[Sahara](/🗄/Article/places/sahara.md#dunes)`):
 *   the path, percent-decoded and without its `#fragment`, goes to `context.resolveLink`; the URL
 *   it returns replaces the link target and the fragment is appended again. When there is no
 *   resolver, it returns nothing, or what it returns is not a usable link (`javascript:` and the
 *   like, refused by markdown-it's link check), the link keeps its written target (a path on the
 *   app's own origin, which answers 404) and gets the class `is-missing-link`, for styling. A
 *   returned URL the sanitizer refuses (`//host`) loses its target like any other link.
 *
 * Options (`MarkdownOptions`; each converter is built once per option set and cached):
 * - `autolink`: bare URLs with a scheme (`https://…`, `http://…`, `mailto:…`) and email addresses
 *   become links; `www.example.com` and file-like names (`sahara.md`) do not. `'blank'` also
 *   gives those links `target="_blank" rel="noopener noreferrer"` (the sanitizer keeps exactly
 *   that pair, and only when asked). `<https://…>` links are CommonMark and always on.
 * - `minimumHeaderLevel` (1–6): when the top-most heading is above this level, every heading moves
 *   down by the same number of levels (at most to `h6`): with 2, `#`/`##` become `h2`/`h3`, and a
 *   document whose headings start at `##` is unchanged.
 * - `generateHeaderId`: headings get `id`s from their text by `slugify` (src/content/slug.ts),
 *   unique within the document (`intro`, `intro-2`, …; `section` when the text has no letter or
 *   digit). An explicit `{#id}` wins: it is kept as written, and generated ids avoid every
 *   explicit id of the document. Explicit `{#id}`s apply without this option too.
 * - `typography`: `--` becomes an em dash and `---` an en dash, the platform's documented mapping
 *   (docs/content.md#options); `--` only with spaces on both sides or on neither, so `--flag`
 *   stays; longer runs stay; not in code or in autolinked URLs. The
 *   rest of markdown-it's typographer is left off on purpose: its other replacements turn
 *   `(c)` into `©` (wrong in lists like `(a) (b) (c)`), and smart quotes would change the quotes
 *   of code-like prose.
 * - `classes`: element name → class names added to every such element (`{ h2: 'title is-4' }`),
 *   after the classes of attribute blocks and headings' shifting (they apply to the final tag).
 *   `pre` classes go on the `pre` of code blocks, `code` classes on every `code`.
 *
 * `html` fields take the same options (`renderHtml`, `htmlText`, `htmlSections`, at the end of
 * this file): their HTML is already clean, so each option is a change to its tree, and the result
 * is cleaned again with the same allow-list.
 */
import { createRequire } from 'node:module';
import type MarkdownItModule from 'markdown-it';
import type { MarkdownIt as Converter, StateCore, Token } from 'markdown-it';
import type MarkdownItAnchor from 'markdown-it-anchor';
import type MarkdownItAttrs from 'markdown-it-attrs';
import { readRichTree, sanitizeHtml, writeRichTree, type RichElement, type RichNode } from '../models/index.js';
import { slugify } from './slug.js';

// markdown-it and its plugins are loaded when the first converter is made: apps without Markdown
// never load them (their CommonJS builds, as models/rich.ts and dev/docs.ts load markdown-it).
const require = createRequire(import.meta.url);
const MarkdownIt = (...args: ConstructorParameters<typeof MarkdownItModule>): Converter => new (require('markdown-it') as typeof MarkdownItModule)(...args);
const markdownItAnchor = (): typeof MarkdownItAnchor => require('markdown-it-anchor') as typeof MarkdownItAnchor;
const markdownItAttrs = (): typeof MarkdownItAttrs => require('markdown-it-attrs') as typeof MarkdownItAttrs;

/** Display options of rich text: a field's `render:` map merged with a call's named arguments. */
export interface MarkdownOptions {
  /** Link bare URLs (`true`), and open them in a new tab (`'blank'`). Default `false`. */
  autolink?: boolean | 'blank';
  /** The highest level (1–6) the top-most heading may have; headings shift down to reach it. */
  minimumHeaderLevel?: number;
  /** Give headings ids made from their text. Default `false`. */
  generateHeaderId?: boolean;
  /** `--` and `---` become em and en dashes. Default `false`. */
  typography?: boolean;
  /** Element name → class names (space-separated) added to every such element. */
  classes?: Record<string, string>;
}

/** What a render needs from the app. */
export interface RenderContext {
  /**
   * The page URL of a document, from its repository path (`/🗄/Article/places/sahara.md`,
   * percent-decoded, without fragment), or `undefined` when no page shows it. Exceptions
   * propagate: a failing resolver is a bug to see, not a missing link.
   */
  resolveLink?(path: string): string | undefined;
}

/** A heading of the top-most level of a document. */
export interface MarkdownSection {
  id: string;
  title: string;
}

/** Element names that take classes: the rich-text allow-list of rich.ts (some never come from Markdown). */
const CLASS_ELEMENTS = new Set(['h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'div', 'p', 'pre', 'blockquote', 'ul', 'ol', 'li', 'a', 'br', 'code', 'em', 's', 'strong', 'sub', 'sup', 'del', 'ins']);

/** Repository paths of documents: `/🗄/…`. */
const REPOSITORY_PREFIX = '/🗄/';
/** The same, still percent-encoded (markdown-it encodes link targets), for targets that do not decode. */
const ENCODED_REPOSITORY_PREFIX = /^\/%F0%9F%97%84\//i;

const MISSING_LINK_CLASS = 'is-missing-link';
/** The id of a heading whose text has no letter or digit. */
const FALLBACK_SLUG = 'section';

/** Keys of the markdown-it `env` of one render. */
const RESOLVE_LINK = 'lanewayResolveLink';
const EXPLICIT_IDS = 'lanewayExplicitIds';

/** Options with every default filled in: the cache key of a converter. */
interface SettledOptions {
  autolink: boolean | 'blank';
  minimumHeaderLevel: number;
  generateHeaderId: boolean;
  typography: boolean;
  classes: Array<[element: string, classes: string]>;
}

function settleOptions(options: MarkdownOptions = {}): SettledOptions {
  const level = options.minimumHeaderLevel;
  return {
    autolink: options.autolink === 'blank' ? 'blank' : options.autolink === true,
    minimumHeaderLevel: Number.isInteger(level) ? Math.min(6, Math.max(1, level!)) : 1,
    generateHeaderId: options.generateHeaderId === true,
    typography: options.typography === true,
    classes: Object.entries(options.classes ?? {})
      .filter(([element]) => CLASS_ELEMENTS.has(element))
      .map(([element, names]): [string, string] => [element, String(names).trim().split(/\s+/).filter(Boolean).join(' ')])
      .filter(([, names]) => names !== '')
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  };
}

/** Text of inline tokens: images give their alt text, breaks give `hardBreak` or a space. */
function inlineText(tokens: Token[], hardBreak = ' '): string {
  let text = '';
  for (const token of tokens) {
    if (token.type === 'text' || token.type === 'text_special' || token.type === 'code_inline') text += token.content;
    else if (token.type === 'softbreak') text += ' ';
    else if (token.type === 'hardbreak') text += hardBreak;
    else if (token.type === 'image') text += inlineText(token.children ?? [], hardBreak);
  }
  return text;
}

/** Calls `visit` on every token, block and inline. */
function eachToken(tokens: Token[], visit: (token: Token) => void): void {
  for (const token of tokens) {
    visit(token);
    if (token.children) eachToken(token.children, visit);
  }
}

const headingLevel = (token: Token): number => Number(token.tag.slice(1));

/** `minimumHeaderLevel`: one shift for all headings, so that their relative levels stay. */
function shiftHeadings(state: StateCore, minimum: number): void {
  let top = 7;
  for (const token of state.tokens) if (token.type === 'heading_open') top = Math.min(top, headingLevel(token));
  if (top === 7 || top >= minimum) return;
  const shift = minimum - top;
  for (const token of state.tokens) {
    if (token.type === 'heading_open' || token.type === 'heading_close') token.tag = `h${Math.min(6, headingLevel(token) + shift)}`;
  }
}

/**
 * `typography`: `--` → em dash (`&mdash;`) when it has whitespace (or the edge of the text) on
 * both sides or on neither; `---` → en dash (`&ndash;`), as the platform documents it (the reverse
 * of the usual typesetting convention, kept so that its apps read as written). Runs of four or more
 * hyphens are left alone.
 */
function replaceDashes(text: string): string {
  return text.replace(/(?<!-)---(?!-)/g, '\u2013').replace(/(?<!-)--(?!-)/g, (dashes, at: number) => {
    const spaceBefore = at === 0 || /\s/.test(text.charAt(at - 1));
    const spaceAfter = at + 2 >= text.length || /\s/.test(text.charAt(at + 2));
    return spaceBefore === spaceAfter ? '\u2014' : dashes;
  });
}

function typesetDashes(state: StateCore): void {
  for (const block of state.tokens) {
    if (block.type !== 'inline' || !block.content.includes('--') || !block.children) continue;
    let inAutolink = false;
    for (const token of block.children) {
      if (token.type === 'link_open' && token.info === 'auto') inAutolink = true;
      else if (token.type === 'link_close' && token.info === 'auto') inAutolink = false;
      else if (token.type === 'text' && !inAutolink) token.content = replaceDashes(token.content);
    }
  }
}

/** Rewrites a link to a repository path (see the top of this file); other links are left as they are. */
function rewriteRepositoryLink(md: Converter, token: Token, resolve: RenderContext['resolveLink']): void {
  const href = String(token.attrGet('href') ?? '');
  const hash = href.indexOf('#');
  const written = hash < 0 ? href : href.slice(0, hash);
  const fragment = hash < 0 ? '' : href.slice(hash);
  let path: string | undefined;
  try {
    path = decodeURIComponent(written);
  } catch {
    path = undefined; // a malformed escape: still a repository link if it says so, but one nothing resolves
  }
  if (path === undefined ? !ENCODED_REPOSITORY_PREFIX.test(written) : !path.startsWith(REPOSITORY_PREFIX)) return;
  const url = path === undefined || resolve === undefined ? undefined : resolve(path);
  if (typeof url === 'string' && url !== '' && md.validateLink(url)) token.attrSet('href', md.normalizeLink(url) + fragment);
  else token.attrJoin('class', MISSING_LINK_CLASS);
}

function processLinks(state: StateCore, blankTargets: boolean): void {
  const resolve = state.env[RESOLVE_LINK] as RenderContext['resolveLink'];
  eachToken(state.tokens, (token) => {
    if (token.type !== 'link_open') return;
    rewriteRepositoryLink(state.md, token, resolve);
    if (blankTargets && token.markup === 'linkify') {
      token.attrSet('target', '_blank');
      token.attrSet('rel', 'noopener noreferrer');
    }
  });
}

/** Every explicit `{#id}` of the document, before markdown-it-anchor numbers the headings. */
function collectExplicitIds(state: StateCore): void {
  const ids = new Set<string>();
  eachToken(state.tokens, (token) => {
    const id = token.attrGet('id');
    if (id !== null) ids.add(String(id));
  });
  state.env[EXPLICIT_IDS] = ids;
}

/**
 * The base id of a heading for markdown-it-anchor, which then makes it unique among the ids it
 * has given so far (`env.markdownItAnchor.slugs`). Numbering here first (`-2`, `-3`, …) keeps the
 * generated ids off the explicit ones, including those of headings further down.
 */
function headingSlug(title: string, state: { env: StateCore['env'] }): string {
  const base = slugify(title) || FALLBACK_SLUG;
  const explicit = (state.env[EXPLICIT_IDS] as Set<string> | undefined) ?? new Set<string>();
  const given = (state.env.markdownItAnchor as { slugs?: Record<string, true> } | undefined)?.slugs ?? {};
  let slug = base;
  for (let n = 2; explicit.has(slug) || Object.hasOwn(given, slug); n++) slug = `${base}-${n}`;
  return slug;
}

function addClasses(state: StateCore, classes: Map<string, string>): void {
  eachToken(state.tokens, (token) => {
    if (token.nesting === -1 || token.type === 'softbreak') return;
    // Code blocks are one token (tag `code`) rendered as `pre` + `code`: its attributes go on `pre`.
    const element = token.type === 'fence' || token.type === 'code_block' ? 'pre' : token.tag;
    const names = classes.get(element);
    if (names !== undefined) token.attrJoin('class', names);
  });
}

/** A converter for one option set; see the top of this file for what each option does. */
function createConverter(options: SettledOptions): Converter {
  const md = MarkdownIt('default', { html: false, linkify: options.autolink !== false, typographer: false });
  md.disable('table');
  // Links need a scheme (`www.x.org` and `sahara.md` stay text); `ftp:` and `//host` would lose their target in the sanitizer.
  md.linkify.set({ fuzzyLink: false, fuzzyIP: false, fuzzyEmail: true }).add('ftp:', null).add('//', null);
  const rulesBefore = new Set(md.core.ruler.getRules(''));
  md.use(markdownItAttrs(), { allowedAttributes: ['id', 'class'], fenceAttrsOnPre: false, errorHandler: () => {} });
  // The attribute-block rule tries each of its patterns at every token, doubling markdown-it's time;
  // a source without `{` has no attribute block, so it is skipped there.
  const attributeBlocks = md.core.ruler.getRules('').find((rule) => !rulesBefore.has(rule));
  if (attributeBlocks) {
    md.core.ruler.at('curly_attributes', (state) => {
      if (state.src.includes('{')) attributeBlocks(state);
    });
  }
  const classes = new Map(options.classes);

  if (options.typography) md.core.ruler.after('linkify', 'laneway_dashes', typesetDashes);
  md.core.ruler.push('laneway_links', (state) => processLinks(state, options.autolink === 'blank'));
  if (options.minimumHeaderLevel > 1) md.core.ruler.push('laneway_headings', (state) => shiftHeadings(state, options.minimumHeaderLevel));
  if (options.generateHeaderId) {
    md.core.ruler.push('laneway_explicit_ids', collectExplicitIds);
    // Pushes its rule after ours. `tabIndex: false`: no `tabindex` attribute; `failOnNonUnique`: a repeated {#id} is numbered, not thrown.
    md.use(markdownItAnchor(), {
      slugifyWithState: headingSlug,
      getTokensText: (tokens: Token[]) => inlineText(tokens),
      uniqueSlugStartIndex: 2,
      failOnNonUnique: false,
      tabIndex: false,
    });
  }
  if (classes.size > 0) md.core.ruler.push('laneway_classes', (state) => addClasses(state, classes));

  const { escapeHtml, unescapeAll } = md.utils;
  const codeClass = (more: string): string => {
    const names = [more, classes.get('code') ?? ''].filter(Boolean).join(' ');
    return names === '' ? '' : ` class="${escapeHtml(names)}"`;
  };
  md.renderer.rules.image = (tokens, index) => escapeHtml(inlineText(tokens[index]!.children ?? []));
  md.renderer.rules.hardbreak = (tokens, index, _options, _env, renderer) => `<br${renderer.renderAttrs(tokens[index]!)}>\n`;
  md.renderer.rules.code_block = (tokens, index, _options, _env, renderer) => {
    const token = tokens[index]!;
    return `<pre${renderer.renderAttrs(token)}><code${codeClass('')}>${escapeHtml(token.content)}</code></pre>\n`;
  };
  md.renderer.rules.fence = (tokens, index, _options, _env, renderer) => {
    const token = tokens[index]!;
    const language = unescapeAll(token.info).trim().split(/\s+/)[0] ?? '';
    return `<pre${renderer.renderAttrs(token)}><code${codeClass(language === '' ? '' : `language-${language}`)}>${escapeHtml(token.content)}</code></pre>\n`;
  };
  return md;
}

/** Converters by option set. Option sets come from definitions and templates, so there are few; the bound is a safeguard. */
const converters = new Map<string, Converter>();
const CONVERTER_LIMIT = 100;

function converterFor(options: SettledOptions): Converter {
  const key = JSON.stringify(options);
  let md = converters.get(key);
  if (md === undefined) {
    md = createConverter(options);
    if (converters.size >= CONVERTER_LIMIT) converters.delete(converters.keys().next().value!);
    converters.set(key, md);
  }
  return md;
}

/** Markdown to safe HTML (see the top of this file). */
export function renderMarkdown(text: string, options?: MarkdownOptions, context: RenderContext = {}): string {
  const settled = settleOptions(options);
  const resolve = context.resolveLink?.bind(context);
  const html = converterFor(settled).render(String(text), { [RESOLVE_LINK]: resolve });
  return sanitizeHtml(html, { blankTargets: settled.autolink === 'blank' });
}

/**
 * The plain text of a document: one line per block (paragraph, heading, list item; soft line
 * breaks become spaces, hard ones newlines), code blocks line by line, images as their alt text,
 * attribute blocks and markup removed, entities and escapes decoded.
 */
export function markdownText(text: string): string {
  const lines: string[] = [];
  for (const token of converterFor(settleOptions()).parse(String(text), {})) {
    if (token.type === 'inline') lines.push(inlineText(token.children ?? [], '\n'));
    else if (token.type === 'fence' || token.type === 'code_block') lines.push(token.content.replace(/\n$/, ''));
  }
  return lines.join('\n');
}

/**
 * The headings of the top-most level present in the source (all `##` when there is no `#`), in
 * order, with the id `renderMarkdown` gives them with the same options plus `generateHeaderId`,
 * and their text. Of the options only `typography` matters (it changes titles); the others change
 * neither ids nor titles, and `minimumHeaderLevel` is ignored so that capping at `h6` cannot merge
 * levels.
 */
export function markdownSections(text: string, options?: MarkdownOptions): MarkdownSection[] {
  const converter = converterFor(settleOptions({ generateHeaderId: true, typography: options?.typography === true }));
  const tokens = converter.parse(String(text), {});
  let top = 7;
  for (const token of tokens) if (token.type === 'heading_open') top = Math.min(top, headingLevel(token));
  const sections: MarkdownSection[] = [];
  tokens.forEach((token: Token, index: number) => {
    if (token.type !== 'heading_open' || headingLevel(token) !== top) return;
    sections.push({ id: String(token.attrGet('id') ?? ''), title: inlineText(tokens[index + 1]?.children ?? []) });
  });
  return sections;
}

const show = (value: unknown): string => {
  const shown = typeof value === 'string' ? JSON.stringify(value) : String(value);
  return shown.length > 40 ? `${shown.slice(0, 39)}…` : shown;
};

/** `true`/`false`, also as the strings of template arguments; `undefined` for anything else. */
function readBoolean(value: unknown): boolean | undefined {
  if (value === true || value === 'true') return true;
  if (value === false || value === 'false') return false;
  return undefined;
}

/**
 * Options from a field's `render:` map (`{autolink: blank, minimumHeaderLevel: 2, p: lead}`) or
 * a template call's named arguments (`autolink='blank' minimumHeaderLevel=2`, where every value
 * may be a string). Returns a message naming the first unknown option or bad value.
 */
export function parseRenderOptions(raw: Record<string, unknown>): MarkdownOptions | string {
  const options: MarkdownOptions = {};
  const classes: Record<string, string> = {};
  for (const [key, value] of Object.entries(raw)) {
    switch (key) {
      case 'autolink': {
        const autolink = value === 'blank' ? 'blank' : readBoolean(value);
        if (autolink === undefined) return `autolink takes true, false or blank, not ${show(value)}`;
        options.autolink = autolink;
        break;
      }
      case 'minimumHeaderLevel': {
        const level = typeof value === 'string' && /^[1-6]$/.test(value.trim()) ? Number(value) : value;
        if (typeof level !== 'number' || !Number.isInteger(level) || level < 1 || level > 6) {
          return `minimumHeaderLevel takes a whole number from 1 to 6, not ${show(value)}`;
        }
        options.minimumHeaderLevel = level;
        break;
      }
      case 'generateHeaderId':
      case 'typography': {
        const flag = readBoolean(value);
        if (flag === undefined) return `${key} takes true or false, not ${show(value)}`;
        options[key] = flag;
        break;
      }
      default:
        if (!CLASS_ELEMENTS.has(key)) {
          return `"${key}" is not a rendering option; use autolink, minimumHeaderLevel, generateHeaderId, typography, or an element name (p, h1, a…) with class names`;
        }
        if (typeof value !== 'string' || !/^[A-Za-z0-9_ -]*$/.test(value)) {
          return `${key} takes class names separated by spaces, such as '${key}=lead wide', not ${show(value)}`;
        }
        if (value.trim() !== '') classes[key] = value.trim().split(/\s+/).join(' ');
    }
  }
  if (Object.keys(classes).length > 0) options.classes = classes;
  return options;
}

// ---- HTML (`html` fields) ------------------------------------------------------------------------

const HTML_HEADING = /^h[1-6]$/;
/** The converter whose linkify-it instance finds URLs in HTML text (every converter sets it up alike). */
const LINKIFY_OPTIONS = settleOptions({ autolink: true });
/** Elements that make lines of `htmlText` (the blocks of the allow-list). */
const HTML_BLOCKS = new Set(['h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'div', 'p', 'pre', 'blockquote', 'ul', 'ol', 'li']);

/** Calls `visit` on every element of the tree, parents first. */
function eachElement(nodes: RichNode[], visit: (element: RichElement) => void): void {
  for (const node of nodes) {
    if (typeof node === 'string') continue;
    visit(node);
    eachElement(node.children, visit);
  }
}

/** The text of a heading as one line: white space collapsed, as a browser shows it. */
function elementTitle(element: RichElement): string {
  let text = '';
  const walk = (nodes: RichNode[]): void => {
    for (const node of nodes) {
      if (typeof node === 'string') text += node;
      else if (node.name === 'br') text += ' ';
      else walk(node.children);
    }
  };
  walk(element.children);
  return text.replace(/[ \t\n\f\r]+/g, ' ').trim();
}

const elementLevel = (element: RichElement): number => Number(element.name.slice(1));

/**
 * `autolink` and `typography` on the text of the tree: not in `code` or `pre`, no link inside a
 * link, and no dashes inside the URL of a link made here. The URLs found are those Markdown finds
 * (the same linkify-it settings), and their targets go through the same checks.
 */
function typesetText(nodes: RichNode[], options: SettledOptions, inCode: boolean, inLink: boolean): RichNode[] {
  const out: RichNode[] = [];
  const dashes = (text: string): string => (options.typography && !inCode ? replaceDashes(text) : text);
  for (const node of nodes) {
    if (typeof node !== 'string') {
      const code = inCode || node.name === 'code' || node.name === 'pre';
      out.push({ ...node, children: typesetText(node.children, options, code, inLink || node.name === 'a') });
      continue;
    }
    const md = options.autolink !== false && !inCode && !inLink ? converterFor(LINKIFY_OPTIONS) : undefined;
    const links = md?.linkify.test(node) ? (md.linkify.match(node) ?? []) : [];
    let at = 0;
    for (const link of links) {
      const href = md!.normalizeLink(link.url);
      if (!md!.validateLink(href)) continue;
      let text = link.text;
      if (!link.schema) text = md!.normalizeLinkText(`http://${text}`).replace(/^http:\/\//, '');
      else if (link.schema === 'mailto:' && !/^mailto:/i.test(text)) text = md!.normalizeLinkText(`mailto:${text}`).replace(/^mailto:/, '');
      else text = md!.normalizeLinkText(text);
      if (link.index > at) out.push(dashes(node.slice(at, link.index)));
      const attribs: Record<string, string> = options.autolink === 'blank' ? { href, target: '_blank', rel: 'noopener noreferrer' } : { href };
      out.push({ name: 'a', attribs, children: [text] });
      at = link.lastIndex;
    }
    if (at < node.length) out.push(dashes(node.slice(at)));
  }
  return out;
}

/** `minimumHeaderLevel` on a tree: one shift for all headings, as for Markdown. */
function shiftHtmlHeadings(nodes: RichNode[], minimum: number): void {
  let top = 7;
  eachElement(nodes, (e) => {
    if (HTML_HEADING.test(e.name)) top = Math.min(top, elementLevel(e));
  });
  if (top === 7 || top >= minimum) return;
  eachElement(nodes, (e) => {
    if (HTML_HEADING.test(e.name)) e.name = `h${Math.min(6, elementLevel(e) + minimum - top)}`;
  });
}

/**
 * `generateHeaderId` on a tree: a heading without an `id` gets one from its text, numbered as in
 * Markdown (`intro`, `intro-2`…, `section` when the text has no letter or digit), and never one
 * that an element of the document has already.
 */
function identifyHtmlHeadings(nodes: RichNode[]): void {
  const taken = new Set<string>();
  eachElement(nodes, (e) => {
    if (e.attribs.id !== undefined) taken.add(e.attribs.id);
  });
  eachElement(nodes, (e) => {
    if (!HTML_HEADING.test(e.name) || e.attribs.id !== undefined) return;
    const base = slugify(elementTitle(e)) || FALLBACK_SLUG;
    let slug = base;
    for (let n = 2; taken.has(slug); n++) slug = `${base}-${n}`;
    taken.add(slug);
    e.attribs = { id: slug, ...e.attribs };
  });
}

/** Element classes on a tree: added to the element's own, each name once. */
function classifyHtml(nodes: RichNode[], classes: Map<string, string>): void {
  eachElement(nodes, (e) => {
    const added = classes.get(e.name);
    if (added === undefined) return;
    const names = [...new Set([...(e.attribs.class ?? '').split(/\s+/), ...added.split(' ')].filter(Boolean))];
    e.attribs = { ...e.attribs, class: names.join(' ') };
  });
}

/**
 * The HTML of an `html` field with display options: the same options as Markdown, applied to the
 * cleaned tree in Markdown's order (links and dashes in the text, headings shifted, ids, classes),
 * and the result cleaned again (keeping `target="_blank"` only on the links `autolink: blank` made:
 * the field's own HTML has none, it was cleaned without). Without options, the HTML is returned as
 * it is: it was cleaned when it was written.
 */
export function renderHtml(html: string, options?: MarkdownOptions): string {
  const settled = settleOptions(options);
  if (settled.autolink === false && settled.minimumHeaderLevel === 1 && !settled.generateHeaderId && !settled.typography && settled.classes.length === 0) {
    return String(html);
  }
  let nodes = readRichTree(String(html));
  if (settled.autolink !== false || settled.typography) nodes = typesetText(nodes, settled, false, false);
  if (settled.minimumHeaderLevel > 1) shiftHtmlHeadings(nodes, settled.minimumHeaderLevel);
  if (settled.generateHeaderId) identifyHtmlHeadings(nodes);
  if (settled.classes.length > 0) classifyHtml(nodes, new Map(settled.classes));
  return sanitizeHtml(writeRichTree(nodes), { blankTargets: settled.autolink === 'blank' });
}

/**
 * The plain text of an `html` field, as `markdownText` gives it for Markdown: one line per block
 * (white space collapsed as a browser collapses it, `<br>` ending a line), `pre` line by line as
 * written, entities decoded, empty lines left out.
 */
export function htmlText(html: string): string {
  const lines: string[] = [];
  let line = '';
  const end = (): void => {
    const text = line.replace(/[ \t\n\f\r]+/g, ' ').trim();
    if (text !== '') lines.push(text);
    line = '';
  };
  const walk = (nodes: RichNode[]): void => {
    for (const node of nodes) {
      if (typeof node === 'string') line += node;
      else if (node.name === 'br') end();
      else if (node.name === 'pre') {
        end();
        const text = elementText(node.children).replace(/\n$/, '');
        if (text !== '') lines.push(text);
      } else if (HTML_BLOCKS.has(node.name)) {
        end();
        walk(node.children);
        end();
      } else walk(node.children);
    }
  };
  walk(readRichTree(String(html)));
  end();
  return lines.join('\n');
}

/** Text as written (`pre`): `<br>` is a newline. */
function elementText(nodes: RichNode[]): string {
  let text = '';
  for (const node of nodes) text += typeof node === 'string' ? node : node.name === 'br' ? '\n' : elementText(node.children);
  return text;
}

/**
 * The headings of the top-most level present in an `html` field, in order, with the id
 * `renderHtml` gives them with the same options plus `generateHeaderId` (an `id` written in the
 * HTML is kept), and their text. As for Markdown, only `typography` of the options matters.
 */
export function htmlSections(html: string, options?: MarkdownOptions): MarkdownSection[] {
  let nodes = readRichTree(String(html));
  if (options?.typography === true) nodes = typesetText(nodes, settleOptions({ typography: true }), false, false);
  identifyHtmlHeadings(nodes);
  let top = 7;
  eachElement(nodes, (e) => {
    if (HTML_HEADING.test(e.name)) top = Math.min(top, elementLevel(e));
  });
  const sections: MarkdownSection[] = [];
  eachElement(nodes, (e) => {
    if (HTML_HEADING.test(e.name) && elementLevel(e) === top) sections.push({ id: e.attribs.id ?? '', title: elementTitle(e) });
  });
  return sections;
}

/**
 * `text` without the white space and backslash line ends (`\` and a newline) it ends with, scanned
 * from the end: `/(?:\\\n|\s)+$/` would try the rest of a long run from each of its characters
 * (docs/architecture.md "Regular expressions on what a visitor sends"). A newline after a
 * backslash is taken with it; the backslash alone would stay.
 */
export function withoutTrailingBreaks(text: string): string {
  let end = text.length;
  for (;;) {
    if (end >= 2 && text[end - 1] === '\n' && text[end - 2] === '\\') end -= 2;
    else if (end >= 1 && WHITE_SPACE.test(text[end - 1]!)) end--;
    else return text.slice(0, end);
  }
}
const WHITE_SPACE = /\s/;

/**
 * Markdown for an `html` field's HTML (`markdown()` of a rich-text value, docs/content.md "Members
 * of a rich-text value"): headings as `#`…, paragraphs and `div`s as paragraphs, `pre` as a fenced
 * block, quotes with `>`, lists with `-` and `1.`, and inline `em`, `strong`, `code`, links, `s`
 * and `del` (as `~~`), `br` (as a backslash line end). `sub`, `sup` and `ins` have no Markdown and
 * keep only their text; a heading's `id` is kept as `{#id}`. Rendering the result gives the
 * same structure back (classes aside).
 */
export function htmlMarkdown(html: string): string {
  const escape = (s: string): string => s.replace(/[\\`*_[\]<>~|]/g, (c) => '\\' + c).replace(/[ \t\n\f\r]+/g, ' ');
  const inline = (nodes: RichNode[]): string => {
    let out = '';
    for (const node of nodes) {
      if (typeof node === 'string') {
        out += escape(node);
        continue;
      }
      const inner = (): string => inline(node.children);
      switch (node.name) {
        case 'em':
          out += wrap('*', inner());
          break;
        case 'strong':
          out += wrap('**', inner());
          break;
        case 's':
        case 'del':
          out += wrap('~~', inner());
          break;
        case 'code': {
          const text = elementText(node.children);
          const fence = text.includes('`') ? '`` ' : '`';
          out += fence + text + (fence === '`' ? '`' : ' ``');
          break;
        }
        case 'a': {
          const href = node.attribs.href;
          out += href ? `[${inner()}](<${href.replace(/[<>\s]/g, (c) => encodeURIComponent(c))}>)` : inner();
          break;
        }
        case 'br':
          out += '\\\n';
          break;
        default:
          out += HTML_BLOCKS.has(node.name) ? blocks([node]) : inner();
      }
    }
    return out;
  };
  const wrap = (mark: string, text: string): string => {
    const core = text.trim();
    if (core === '') return text;
    const lead = text.slice(0, text.length - text.trimStart().length);
    const tail = text.slice(text.trimEnd().length);
    return `${lead}${mark}${core}${mark}${tail}`;
  };
  const lineStart = (text: string): string => text.replace(/^(#|[-+]\s|\d+[.)]\s|=+$)/gm, '\\$1');
  const blocks = (nodes: RichNode[]): string => {
    const parts: string[] = [];
    let loose: RichNode[] = [];
    // A line break at the end of a block shows nothing: it is left out.
    const content = (nodes: RichNode[]): string => withoutTrailingBreaks(inline(nodes)).trim();
    const flush = (): void => {
      const text = lineStart(content(loose));
      if (text !== '') parts.push(text);
      loose = [];
    };
    for (const node of nodes) {
      if (typeof node === 'string' || !HTML_BLOCKS.has(node.name)) {
        loose.push(node);
        continue;
      }
      flush();
      const name = node.name;
      if (/^h[1-6]$/.test(name)) {
        const id = node.attribs.id;
        parts.push(`${'#'.repeat(Number(name[1]))} ${content(node.children)}${id ? ` {#${id}}` : ''}`);
      } else if (name === 'pre') {
        const text = elementText(node.children).replace(/\n$/, '');
        const fence = text.includes('```') ? '~~~~' : '```';
        parts.push(`${fence}\n${text}\n${fence}`);
      } else if (name === 'blockquote') {
        const inner = blocks(node.children);
        if (inner !== '') parts.push(inner.split('\n').map((l) => (l === '' ? '>' : `> ${l}`)).join('\n'));
      } else if (name === 'ul' || name === 'ol') {
        let n = 0;
        const items: string[] = [];
        for (const item of node.children) {
          if (typeof item === 'string' || item.name !== 'li') continue;
          const marker = name === 'ol' ? `${++n}. ` : '- ';
          const body = blocks(item.children);
          items.push(marker + body.split('\n').join('\n' + ' '.repeat(marker.length)).replace(/\n +\n/g, '\n\n'));
        }
        if (items.length) parts.push(items.join('\n'));
      } else {
        const inner = blocks(node.children);
        if (inner !== '') parts.push(inner);
      }
    }
    flush();
    return parts.join('\n\n');
  };
  return blocks(readRichTree(String(html)));
}
