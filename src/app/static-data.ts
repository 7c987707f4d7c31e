/**
 * Wires static models (`/🗄/`, src/content) to the script runtime: at load, the definitions become
 * the realm's `'🗄'` namespace — the same model runtime as `'📦'` (records, links, queries,
 * stream-aware output), whose channel answers queries from the documents read at load instead of
 * a database. Nothing here writes: creating, changing or removing a document is refused at build
 * (src/script/model-use.ts) and, should a script get that far, at run time.
 */
import { LanewayError } from '../diag/index.js';
import { DocumentIndex, type DocumentQuery, type StaticContent } from '../content/index.js';
import type { ModelSchema } from '../models/index.js';
import { RichTextRenderer } from '../content/index.js';
import { installModels, ViewRenderers, type ModelShape } from '../script/index.js';
import { describe, hierarchyOp, shapeOf, toScriptError } from './data.js';

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
        for (const d of content.documents.get(m.name) ?? []) if (typeof d.row[4 + i] === 'string') renderer.html(d.row[4 + i] as string);
      });
    }
    const installed = installModels(describe(content.schema, { static: true, richKey: (owner, f) => prefix + `${owner}.${f.name}` }), (op: unknown, a: unknown, b: unknown, c: unknown) =>
      this.#channel(String(op), a, b, c),
    );
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
    const value = field === 'id' ? row[0] : row[4 + i];
    return typeof value === 'string' ? '/' + value.split('/').map(encodeURIComponent).join('/') : undefined;
  }

  #channel(op: string, a: unknown, b: unknown, c: unknown): unknown {
    try {
      switch (op) {
        case 'q':
          return this.index.select(a as DocumentQuery);
        case 'a':
          return this.index.aggregate(a as DocumentQuery, b as 'count', c as string | undefined);
        case 'md':
          return this.#render(String(a), b);
        // A rich-text value of a script (script/realm/41-models.js RichValue): a = its source, b = its field's key.
        case 'rh':
          return this.#renderer(b).htmlWith(String(a), c);
        case 'rs':
          return this.#renderer(b).sections(String(a));
        case 'rx':
          return this.#renderer(b).text(String(a));
        case 'rm':
          return this.#renderer(b).markdown(String(a));
        case 'rv':
          return this.#renderer(b).valid(String(a));
        case 'hy':
          return hierarchyOp(String(a), String(b), c);
        case 'ctx':
          return {};
        default:
          throw new LanewayError('LW_MODEL_READ_ONLY', 'static models (/🗄/) are read-only: their documents are files of the app; edit the files instead', { status: 500 });
      }
    } catch (e) {
      throw toScriptError(e);
    }
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
