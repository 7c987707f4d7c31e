/**
 * A rich-text field's value as views read it (docs/content.md "Members of a rich-text value"), for
 * `markdown` and `html` fields: printed raw (`{{{ post.body }}}`) it is its HTML with the field's
 * `render:` options, printed escaped (`{{ post.body }}`) its source; its members give the rest —
 * `value` (the source: Markdown, or the field's cleaned HTML), `markdown()` (the Markdown source;
 * for an `html` field, Markdown made from its HTML), `empty`, `length`,
 * `valid`/`invalid`, `text()`, `html(options)` (per call, merged over the field's: `{{{ a.body.html
 * minimumHeaderLevel=2 h2='title' }}}`) and `sections()` (the top-level headings, each `{id,
 * title}`).
 *
 * Renderings are cached per text and option set by the `RichTextRenderer` of the field, which
 * the app builds at load (a static document's body is rendered there, once): a page request
 * renders only option sets it is the first to ask for. Scripts reach the same renderer through
 * their model channel (`htmlWith`, `sections`, `text`; src/script/realm/41-models.js `RichValue`).
 */
import { PLAIN_TEXT, SAFE_HTML, WebSafe } from '../shared/index.js';
import { htmlMarkdown, htmlSections, htmlText, markdownSections, markdownText, parseRenderOptions, renderHtml, renderMarkdown, type MarkdownOptions, type MarkdownSection, type RenderContext } from './markdown.js';

/** What a field's source is: Markdown (`markdown`, `document-markdown`) or cleaned HTML (`html`). */
export type RichTextKind = 'markdown' | 'html';

/** Renders one field's text: the field's options, the app's link resolver (Markdown), a cache. */
export class RichTextRenderer {
  readonly kind: RichTextKind;
  readonly #options: MarkdownOptions;
  /** No `render:` options: an `html` field's HTML is shown as it was stored. */
  readonly #plain: boolean;
  readonly #context: RenderContext;
  readonly #cache = new Map<string, string>();
  readonly #sections = new Map<string, MarkdownSection[]>();
  readonly #limit: number;
  readonly #valid: (text: string) => boolean;

  /**
   * `render` is the field's `render:` map (already checked at load); `valid` says whether a text
   * meets the field's definition now (its bounds may have changed since the text was stored).
   */
  constructor(render: Record<string, unknown> | undefined, context: RenderContext = {}, limit = 5000, kind: RichTextKind = 'markdown', valid: (text: string) => boolean = () => true) {
    const parsed = render ? parseRenderOptions(render) : {};
    this.#options = typeof parsed === 'string' ? {} : parsed;
    this.#plain = Object.keys(this.#options).length === 0;
    this.#context = context;
    this.#limit = limit;
    this.kind = kind;
    this.#valid = valid;
  }

  /** HTML of `text` with the field's options, merged with `extra` (a call's named arguments). */
  html(text: string, extra?: MarkdownOptions): string {
    if (this.kind === 'html' && this.#plain && extra === undefined) return text;
    const key = (extra ? JSON.stringify(extra) : '') + '\u0000' + text;
    let html = this.#cache.get(key);
    if (html === undefined) {
      html = this.#render(text, extra);
      if (this.#cache.size >= this.#limit) this.#cache.clear();
      this.#cache.set(key, html);
    }
    return html;
  }

  /**
   * HTML of `text` with the options a script passes (`post.body.html({minimumHeaderLevel: 2})`):
   * none (undefined, null, `{}`) gives the field's HTML; an unknown option or a bad value is a
   * TypeError naming it, which the script sees (a view's options are not checked at run time).
   * Not cached: a view's options are a fixed set written in the app, a script's may be any, and
   * a cache filled by them would outlive the request that paid for it.
   */
  htmlWith(text: string, options: unknown): string {
    if (options === undefined || options === null) return this.html(text);
    if (typeof options !== 'object' || Array.isArray(options)) throw new TypeError('html(options) takes an object, such as html({minimumHeaderLevel: 2, h2: \'title\'})');
    if (Object.keys(options).length === 0) return this.html(text);
    const parsed = parseRenderOptions(options as Record<string, unknown>);
    if (typeof parsed === 'string') throw new TypeError(`html(options): ${parsed}`);
    return this.#render(text, parsed);
  }

  /** The field's options merged with `extra`, a call's, which win (element classes by element). */
  #render(text: string, extra: MarkdownOptions | undefined): string {
    const options = extra ? { ...this.#options, ...extra, classes: { ...this.#options.classes, ...extra.classes } } : this.#options;
    return this.kind === 'html' ? renderHtml(text, options) : renderMarkdown(text, options, this.#context);
  }

  sections(text: string): MarkdownSection[] {
    let sections = this.#sections.get(text);
    if (sections === undefined) {
      const found = this.kind === 'html' ? htmlSections(text, this.#options) : markdownSections(text, this.#options);
      sections = Object.freeze(found.map((x) => Object.freeze(x))) as MarkdownSection[];
      if (this.#sections.size >= this.#limit) this.#sections.clear();
      this.#sections.set(text, sections);
    }
    return sections;
  }

  /** Plain text, one line per block. */
  text(text: string): string {
    return this.kind === 'html' ? htmlText(text) : markdownText(text);
  }

  /**
   * No text but white space: of the source for Markdown (where any other character shows), of
   * the plain text for HTML (`<p> </p>` and `<p><br></p>` show nothing).
   */
  empty(text: string): boolean {
    return (this.kind === 'html' ? htmlText(text) : text).trim() === '';
  }

  /** Whether `text` meets the field's definition (`valid`; `invalid` is its opposite). */
  valid(text: string): boolean {
    return this.#valid(text);
  }

  /** The Markdown of `text`: itself for a Markdown field, made from the HTML for an `html` field. */
  markdown(text: string): string {
    return this.kind === 'markdown' ? text : htmlMarkdown(text);
  }

  value(text: string): RichText {
    return new RichText(text, this);
  }
}

export class RichText {
  readonly #text: string;
  readonly #renderer: RichTextRenderer;

  constructor(text: string, renderer: RichTextRenderer) {
    this.#text = text;
    this.#renderer = renderer;
    Object.freeze(this);
  }

  /** The source: Markdown, or the cleaned HTML of an `html` field. */
  get value(): string {
    return this.#text;
  }
  /** No text but white space (see `RichTextRenderer.empty`). */
  get empty(): boolean {
    return this.#renderer.empty(this.#text);
  }
  /** Characters (code points) of the source. */
  get length(): number {
    let n = 0;
    for (const _ of this.#text) n++;
    return n;
  }
  /** Whether the source meets the field's definition (its bounds), as it is now. */
  get valid(): boolean {
    return this.#renderer.valid(this.#text);
  }
  get invalid(): boolean {
    return !this.#renderer.valid(this.#text);
  }
  /** The Markdown source; for an `html` field, Markdown made from its HTML. */
  markdown(): string {
    return this.#renderer.markdown(this.#text);
  }
  /** Plain text of the document, one line per block. */
  text(): string {
    return this.#renderer.text(this.#text);
  }
  /**
   * HTML with the field's options, merged with `options` (a view's named arguments: values may
   * be text, `'true'`, `'2'`). Unknown options are ignored here (a view's literal options are
   * checked at build where the view compiler can).
   */
  html(options?: Record<string, unknown>): WebSafe {
    if (options === undefined || options === null || typeof options !== 'object' || Object.keys(options).length === 0) return new WebSafe(this.#renderer.html(this.#text));
    const parsed = parseRenderOptions(options);
    return new WebSafe(this.#renderer.html(this.#text, typeof parsed === 'string' ? undefined : parsed));
  }
  /** The top-most headings, each with the id `generateHeaderId` gives it and its title text. */
  sections(): MarkdownSection[] {
    return this.#renderer.sections(this.#text);
  }
  [SAFE_HTML](): string {
    return this.#renderer.html(this.#text);
  }
  /** In `{{ }}`: the source, which the view escapes. */
  [PLAIN_TEXT](): string {
    return this.#text;
  }
  toString(): string {
    return this.#renderer.html(this.#text);
  }
  /** In JSON, the HTML (docs/content.md "Rich text in scripts"), as a script's output gives it. */
  toJSON(): string {
    return this.#renderer.html(this.#text);
  }
}
Object.freeze(RichText.prototype);
