/**
 * A Markdown field's value as views read it (REFERENCE §6.11): printed raw (`{{{ post.body }}}`)
 * it is its HTML with the field's `render:` options; its members give the rest —
 * `value`/`markdown()` (the source), `empty`, `length`, `valid`/`invalid`, `text()`,
 * `html(options)` (per call, merged over the field's: `{{{ a.body.html minimumHeaderLevel=2
 * h2='title' }}}`) and `sections()` (the top-level headings, each `{id, title}`).
 *
 * Renderings are cached per text and option set by the `RichTextRenderer` of the field, which
 * the app builds at load (a static document's body is rendered there, once): a page request
 * renders only option sets it is the first to ask for.
 */
import { SAFE_HTML, WebSafe } from '../shared/index.js';
import { markdownSections, markdownText, parseRenderOptions, renderMarkdown, type MarkdownOptions, type MarkdownSection, type RenderContext } from './markdown.js';

/** Renders one field's Markdown: the field's options, the app's link resolver, a cache. */
export class RichTextRenderer {
  readonly #options: MarkdownOptions;
  readonly #context: RenderContext;
  readonly #cache = new Map<string, string>();
  readonly #sections = new Map<string, MarkdownSection[]>();
  readonly #limit: number;

  /** `render` is the field's `render:` map (already checked at load). */
  constructor(render: Record<string, unknown> | undefined, context: RenderContext = {}, limit = 5000) {
    const parsed = render ? parseRenderOptions(render) : {};
    this.#options = typeof parsed === 'string' ? {} : parsed;
    this.#context = context;
    this.#limit = limit;
  }

  /** HTML of `text` with the field's options, merged with `extra` (a call's named arguments). */
  html(text: string, extra?: MarkdownOptions): string {
    const options = extra ? { ...this.#options, ...extra, classes: { ...this.#options.classes, ...extra.classes } } : this.#options;
    const key = (extra ? JSON.stringify(extra) : '') + '\u0000' + text;
    let html = this.#cache.get(key);
    if (html === undefined) {
      html = renderMarkdown(text, options, this.#context);
      if (this.#cache.size >= this.#limit) this.#cache.clear();
      this.#cache.set(key, html);
    }
    return html;
  }

  sections(text: string): MarkdownSection[] {
    let sections = this.#sections.get(text);
    if (sections === undefined) {
      sections = Object.freeze(markdownSections(text, this.#options).map((x) => Object.freeze(x))) as MarkdownSection[];
      if (this.#sections.size >= this.#limit) this.#sections.clear();
      this.#sections.set(text, sections);
    }
    return sections;
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

  /** The Markdown source. */
  get value(): string {
    return this.#text;
  }
  /** No text but white space. */
  get empty(): boolean {
    return this.#text.trim() === '';
  }
  /** Characters (code points) of the source. */
  get length(): number {
    let n = 0;
    for (const _ of this.#text) n++;
    return n;
  }
  get valid(): boolean {
    return true;
  }
  get invalid(): boolean {
    return false;
  }
  markdown(): string {
    return this.#text;
  }
  /** Plain text of the document, one line per block. */
  text(): string {
    return markdownText(this.#text);
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
  toString(): string {
    return this.#renderer.html(this.#text);
  }
}
Object.freeze(RichText.prototype);
