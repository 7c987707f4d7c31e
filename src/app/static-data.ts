/**
 * Wires static models (`/🗄/`, src/content) to the script runtime: at load, the definitions become
 * the realm's `'🗄'` namespace — the same model runtime as `'📦'` (records, links, queries,
 * stream-aware output), whose channel answers queries from the documents read at load instead of
 * a database. Nothing here writes: creating, changing or removing a document is refused at build
 * (src/script/model-use.ts) and, should a script get that far, at run time.
 */
import { LanewayError } from '../diag/index.js';
import { DocumentIndex, type DocumentQuery, type StaticContent } from '../content/index.js';
import { renderMarkdown, type ModelSchema } from '../models/index.js';
import { installModels, type ModelShape } from '../script/index.js';
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
  readonly #markdown = new Map<string, string>();

  constructor(content: StaticContent) {
    this.content = content;
    this.schema = content.schema;
    this.index = new DocumentIndex(content);
    this.shapes = new Map([...content.schema.models.values()].map((m) => [m.name, shapeOf(m)]));
    const aliases = new Map<string, Map<string, string>>();
    for (const [model, docs] of content.documents) aliases.set(model, new Map(docs.filter((d) => d.alias !== undefined).map((d) => [d.alias!, d.uid])));
    this.aliases = aliases;
    // Rendered at load: a page request never parses Markdown.
    for (const m of content.schema.models.values()) {
      const fi = m.fields.filter((f) => !f.builtIn).findIndex((f) => f.type === 'markdown');
      if (fi === -1) continue;
      for (const d of content.documents.get(m.name) ?? []) {
        const text = d.row[4 + fi];
        if (typeof text === 'string') this.#render(text);
      }
    }
    const installed = installModels(describe(content.schema, { static: true }), (op: unknown, a: unknown, b: unknown, c: unknown) => this.#channel(String(op), a, b, c));
    this.namespace = installed.namespace;
    this.link = installed.link;
  }

  #channel(op: string, a: unknown, b: unknown, c: unknown): unknown {
    try {
      switch (op) {
        case 'q':
          return this.index.select(a as DocumentQuery);
        case 'a':
          return this.index.aggregate(a as DocumentQuery, b as 'count', c as string | undefined);
        case 'md':
          return this.#render(String(a));
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

  #render(text: string): string {
    let html = this.#markdown.get(text);
    if (html === undefined) {
      html = renderMarkdown(text);
      this.#markdown.set(text, html);
    }
    return html;
  }
}
