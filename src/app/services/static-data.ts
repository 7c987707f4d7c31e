/**
 * Wires static models (`/🗄/`, src/content) to the script runtime: at load, the definitions become
 * the realm's `'🗄'` namespace — the same model runtime as `'📦'` (records, links, queries,
 * stream-aware output), whose channel answers queries from the documents read at load instead of
 * a database. Nothing here writes: creating, changing or removing a document is refused at build
 * (src/script/model-use.ts) and, should a script get that far, at run time.
 */
import { LanewayError } from '../../diag/index.js';
import { DocumentIndex, type StaticContent } from '../../content/index.js';
import type { ModelSchema } from '../../models/index.js';
import { RichTextRenderer } from '../../content/index.js';
import { installModels, mapChannelErrors, ROW, ViewRenderers, type HostChannel, type ModelShape } from '../../script/index.js';
import { describe, HIERARCHY_CHANNEL, shapeOf, toScriptError } from './data.js';

export class StaticData {
  readonly schema: ModelSchema;
  readonly content: StaticContent;
  readonly index: DocumentIndex;
  /** `'🗄'` for scripts and views: shared realm values (models and embedded types) by name. */
  readonly namespace: Record<string, unknown>;
  /** A link (realm value) to a document: static-backed path parameters. */
  readonly link: (model: string, id: string) => unknown;
  readonly shapes: ReadonlyMap<string, ModelShape>;
  /** Legacy uids (front-matter `uid:`) by model: alias → path uid. */
  readonly aliases: ReadonlyMap<string, ReadonlyMap<string, string>>;
  /** Renderers of the Markdown and html fields by rich-text key; '' renders `Model.markdown(text)`. */
  readonly #renderers = new Map<string, RichTextRenderer>([['', new RichTextRenderer(undefined)]]);

  /**
   * `pages`: for the static models that have a page per document (a root `{name}.html` whose
   * parameter is `field: 🗄.Model.field`), that field: links to their documents become page URLs.
   * `renderers`: what the app's views render rich text with (one per app load, ViewRenderers).
   */
  constructor(content: StaticContent, pages: ReadonlyMap<string, string> = new Map(), options: { prerender?: boolean; renderers?: ViewRenderers } = {}) {
    const renderers = options.renderers ?? new ViewRenderers();
    this.content = content;
    this.schema = content.schema;
    this.index = new DocumentIndex(content);
    this.shapes = new Map([...content.schema.models.values()].map((m) => [m.name, shapeOf(m)]));
    const aliases = new Map<string, Map<string, string>>();
    for (const [model, docs] of content.documents) aliases.set(model, new Map(docs.filter((d) => d.alias !== undefined).map((d) => [d.alias!, d.uid])));
    this.aliases = aliases;
    const context = { resolveLink: (path: string) => this.#pageUrl(path, pages) };
    const prefix = '🗄:';
    for (const m of [...content.schema.models.values(), ...content.schema.embedded.values()]) {
      for (const f of m.fields) {
        if (f.type !== 'markdown' && f.type !== 'html') continue;
        const renderer = new RichTextRenderer(f.render, context, undefined, f.type);
        this.#renderers.set(prefix + `${m.name}.${f.name}`, renderer);
        renderers.registerRichText(prefix + `${m.name}.${f.name}`, (text) => renderer.value(text));
      }
    }
    // Rendered at load, with the field's options: a page request never parses Markdown for them
    // (`laneway check` skips it: rendering finds no problem that reading did not).
    for (const m of options.prerender === false ? [] : content.schema.models.values()) {
      const fields = m.fields.filter((f) => !f.builtIn);
      fields.forEach((f, i) => {
        const renderer = this.#renderers.get(prefix + `${m.name}.${f.name}`);
        if (!renderer) return;
        for (const d of content.documents.get(m.name) ?? []) if (typeof d.row[ROW.fields + i] === 'string') renderer.html(d.row[ROW.fields + i] as string);
      });
    }
    const installed = installModels(describe(content.schema, { static: true, richKey: (owner, f) => prefix + `${owner}.${f.name}` }), mapChannelErrors(this.#channel(), toScriptError));
    this.namespace = installed.namespace;
    this.link = installed.link;
  }

  /** `/🗄/Guide/basics/intro.md` → the document's page URL, when it has one. */
  #pageUrl(path: string, pages: ReadonlyMap<string, string>): string | undefined {
    const m = /^\/🗄\/([^/]+)\/(.+?)(?:\.(?:md|markdown|ya?ml))?$/.exec(path);
    if (!m) return undefined;
    const field = pages.get(m[1]!);
    const model = this.schema.models.get(m[1]!);
    if (!field || !model) return undefined;
    const row = this.index.row(model.name, m[2]!);
    if (!row) return undefined;
    const i = model.fields.filter((f) => !f.builtIn).findIndex((f) => f.name === field);
    const value = field === 'id' ? row[ROW.id] : row[ROW.fields + i];
    return typeof value === 'string' ? '/' + value.split('/').map(encodeURIComponent).join('/') : undefined;
  }

  /** The model channel of static models (script/channel.ts): reads only; anything else is refused. */
  #channel(): HostChannel {
    const readOnly = (): never => {
      throw new LanewayError('LW_MODEL_READ_ONLY', 'static models (/🗄/) are read-only: their documents are files of the app; edit the files instead', { status: 500 });
    };
    return {
      query: (spec) => this.index.select(spec),
      aggregate: (spec, kind, field) => this.index.aggregate(spec, kind, field),
      markdown: (text, key) => this.#render(String(text), key),
      // A rich-text value of a script (script/realm/41-models.js RichValue): its source and its field's key.
      richHtml: (text, key, options) => this.#renderer(key).htmlWith(String(text), options),
      richSections: (text, key) => this.#renderer(key).sections(String(text)),
      richText: (text, key) => this.#renderer(key).text(String(text)),
      richMarkdown: (text, key) => this.#renderer(key).markdown(String(text)),
      richValid: (text, key) => this.#renderer(key).valid(String(text)),
      ...HIERARCHY_CHANNEL,
      pathContainers: () => ({}),
      pause: readOnly,
      write: readOnly,
      newId: readOnly,
      positionAtEnd: readOnly,
      checkValue: readOnly,
      checkListItem: readOnly,
      mayRead: readOnly,
      mayFind: readOnly,
      userId: readOnly,
      imageUploadUrl: readOnly,
      submitForm: readOnly,
      readForm: readOnly,
    };
  }

  /** HTML of a field's Markdown (`key`: the field's rich-text key), or of a text with no field's options (`Model.markdown(text)`). */
  #render(text: string, key: unknown): string {
    return this.#renderer(key).html(text);
  }

  /** The renderer of a field by its rich-text key; the plain Markdown one for none. */
  #renderer(key: unknown): RichTextRenderer {
    return this.#renderers.get(typeof key === 'string' ? key : '') ?? this.#renderers.get('')!;
  }

}
