/**
 * Content-Security-Policy for every page, computed when the app loads from the files the
 * developer wrote (docs/security.md "The policy"), never from data.
 *
 * The loader makes one PolicyCompiler per load. The template engine calls `prepare` once per
 * file before generating its code (the page pass of scan.ts: restrictions, sources, hashes of
 * inline blocks, the JSON escaping of tags in data blocks, rewrites). `viewPolicy` merges the
 * files of one view (with its layouts, partials and inlined SVGs) into a PagePolicy, once per
 * view; `page` does the same for a plain `.html` page and returns its rewritten text.
 */
import { locate, type Code, type DiagnosticList } from '../diag/index.js';
import { buildPolicy, DEFAULT_SETTINGS, emptyFacts, hashSource, type CspSettings, type FileFacts, type HashAlgorithm, type PagePolicy } from './policy.js';
import { ATTRIBUTE_TEXT, attributeProblems, scanFile, type AttributeBlock, type IndentedBlock, type NodeLike, type ReferenceHooks, type ScanResult, type TemplateLike, type TextLike } from './scan.js';

export { tokenizeHtml, HOLE, type HtmlToken, type StartTag, type EndTag, type RawText, type Attribute } from './html.js';
export { buildPolicy, checkSource, hashSource, normalizeInline, sourceOfUrl, DEFAULT_SETTINGS, type CspSettings, type HashAlgorithm, type PagePolicy, type FileFacts, type Directive } from './policy.js';
export { isJavascriptUrl, scriptType, type ElementExpansion, type ElementUse, type JsonEscape, type NodeLike, type ReferenceHooks, type TemplateLike, type TextLike } from './scan.js';

/** Partials and layouts nest at most this deep when rendering (template runtime MAX_DEPTH). */
const MAX_INCLUDE_DEPTH = 200;
/** A page's walk over its includes stops past this many (list, indentation, overrides) states. */
const MAX_WALK_STATES = 20_000;
/** At most this many indentations of one inline block are hashed for one page. */
const MAX_VARIANTS = 64;

export interface PolicyHooks extends ReferenceHooks {
  /** Reads an app file (inlined SVG icons). */
  read?(path: string): string | undefined;
}

export interface PolicyCompilerOptions {
  settings?: CspSettings;
  diagnostics: DiagnosticList;
  hooks?: PolicyHooks;
}

export class PolicyCompiler {
  readonly settings: CspSettings;
  readonly #diagnostics: DiagnosticList;
  readonly #hooks: PolicyHooks;
  readonly #files = new Map<string, ScanResult>();
  readonly #svgs = new Map<string, FileFacts>();
  readonly #warned = new Set<string>();
  readonly #reportedVariants = new Set<IndentedBlock>();
  /** Attribute-text problems already reported (a partial is part of many pages). */
  readonly #reportedFills = new Set<object>();

  constructor(options: PolicyCompilerOptions) {
    this.settings = options.settings ?? DEFAULT_SETTINGS;
    this.#diagnostics = options.diagnostics;
    this.#hooks = options.hooks ?? {};
  }

  #report = (severity: 'error' | 'warning', code: Code, message: string, file: string, source: string, offset: number): void => {
    this.#diagnostics.add(severity, code, message, file, source, offset);
  };

  #scan(t: TemplateLike, svg = false): ScanResult {
    return scanFile(t, { algorithm: this.settings.hash, hooks: this.#hooks, report: this.#report, svg });
  }

  #result(t: TemplateLike): ScanResult {
    let r = this.#files.get(t.file);
    if (r === undefined) {
      r = this.#scan(t);
      this.#files.set(t.file, r);
    }
    return r;
  }

  /**
   * The page pass over one template file, once per load (later calls do nothing). It may rewrite
   * the file's text nodes and marks the escaping of tags in JSON data blocks, so it runs before
   * the file's render code is generated.
   */
  prepare(t: TemplateLike): void {
    this.#result(t);
  }

  /**
   * Checks the files of an HTML supplier: the same restrictions as pages, and a warning for inline
   * blocks, because a supplier's output reaches pages as data and is never hashed.
   */
  checkSupplier(templates: readonly TemplateLike[]): void {
    const [own, ...rest] = templates;
    if (own === undefined) return;
    const r = this.#result(own);
    if (r.inlineBlocks > 0 && !this.#warned.has(own.file)) {
      this.#warned.add(own.file);
      this.#diagnostics.warn(
        'LW_CSP_SUPPLIER_INLINE',
        'this HTML supplier writes an inline <script> or <style>: its output reaches pages as a value, which is never hashed, so browsers will block it; put the block in the view, a partial or a layout',
        own.file,
      );
    }
    for (const t of rest) this.prepare(t);
    // Its blocks inside attribute values are checked as a page's are; the facts go nowhere.
    const sites = this.#attributeSites(templates);
    if (sites.size > 0) this.#walk(templates, false, sites);
  }

  #svgFacts(file: string): FileFacts {
    let facts = this.#svgs.get(file);
    if (facts === undefined) {
      const markup = this.#hooks.read?.(file);
      facts = markup === undefined ? emptyFacts() : this.#scan({ file, source: markup, nodes: [plainNode(markup)] }, true).facts;
      this.#svgs.set(file, facts);
    }
    return facts;
  }

  /**
   * The policy of a view from its files (view first, then every partial and layout it uses),
   * made once per view at load. A static inline block that this page renders with indentation
   * (inside a partial or block included with indentation) is hashed as rendered, once per
   * indentation the page can give it. Block sites inside attribute values are checked against
   * every override this page can fill them with (#walk).
   */
  viewPolicy(templates: readonly TemplateLike[]): PagePolicy {
    const facts: FileFacts[] = [];
    const svgs = new Set<string>();
    let indented = false;
    for (const t of templates) {
      const r = this.#result(t);
      facts.push(r.facts);
      if (r.indented.size > 0) indented = true;
      for (const p of Object.values(t.partials ?? {})) if (p.kind === 'svg') svgs.add(p.file);
    }
    for (const f of svgs) facts.push(this.#svgFacts(f));
    const sites = this.#attributeSites(templates);
    if (indented || sites.size > 0) facts.push(this.#walk(templates, indented, sites));
    return buildPolicy(facts, this.settings);
  }

  /** The block sites inside attribute values of these files (scan.ts `attributeBlocks`). */
  #attributeSites(templates: readonly TemplateLike[]): Map<NodeLike, AttributeBlock> {
    const sites = new Map<NodeLike, AttributeBlock>();
    for (const t of templates) for (const [node, site] of this.#result(t).attributeBlocks) sites.set(node, site);
    return sites;
  }

  /**
   * Walks the page the way the renderer nests files (partials, layouts, block overrides, with the
   * indentation each is rendered with, and the overrides in force: runtime.ts `parent`, `block`).
   * The walk is over the templates, not over data: every indentation and override is static text.
   *
   * - `indented`: hashes every indented inline block for each indentation it meets.
   * - `sites`: at each block site inside an attribute value, the override in force (if any) is
   *   checked with attributeProblems, nested blocks followed to what fills them; problems are
   *   reported in the override's file. This is where a page's overrides meet the partials they
   *   fill, so the check costs no pass of its own, and it sees exactly what the renderer will
   *   put there (an override given to an outer parent wins over an inner one).
   */
  #walk(templates: readonly TemplateLike[], indented: boolean, sites: ReadonlyMap<NodeLike, AttributeBlock>): FileFacts {
    const facts = emptyFacts();
    const byFile = new Map<string, TemplateLike>();
    for (const t of templates) byFile.set(t.file, t);
    const blocksOf = new Map<TextLike, IndentedBlock[]>();
    if (indented) for (const t of templates) for (const [node, list] of this.#result(t).indented) blocksOf.set(node, list);
    const variants = new Map<IndentedBlock, Set<string>>();

    const ids = new Map<object, number>();
    const idOf = (o: object): number => {
      let id = ids.get(o);
      if (id === undefined) ids.set(o, (id = ids.size + 1));
      return id;
    };
    // An override is its body and the overrides in force where it was written (its scope).
    const overrideIds = new Map<string, number>();
    const overrideId = (body: object, scope: ReadonlyMap<string, Override>): number => {
      const key = `${idOf(body)}|${[...scope].map(([n, o]) => `${n}=${o.id}`).join(',')}`;
      let id = overrideIds.get(key);
      if (id === undefined) overrideIds.set(key, (id = -(overrideIds.size + 1)));
      return id;
    };
    const seen = new Set<string>();
    const todo: State[] = [{ list: templates[0]?.nodes ?? [], file: templates[0]!, ind: '', blocks: NO_OVERRIDES, active: [], depth: 0 }];
    let states = 0;
    const push = (s: State): void => {
      const key = `${idOf(s.list)}\u0000${s.ind}\u0000${[...s.blocks].map(([n, o]) => `${n}=${o.id}`).join(',')}\u0000${s.active.map((o) => o.id).join(',')}`;
      if (seen.has(key)) return;
      seen.add(key);
      todo.push(s);
    };
    const include = (s: State, name: string, indent: string | null, own: ReadonlyArray<{ name: string; body: NodeLike[] }> | null): void => {
      const decl = s.file.partials?.[name];
      const target = decl?.kind === 'partial' ? byFile.get(decl.file) : undefined;
      if (target === undefined || s.depth >= MAX_INCLUDE_DEPTH) return;
      let blocks: ReadonlyMap<string, Override> = NO_OVERRIDES;
      if (own !== null) {
        const merged = new Map<string, Override>();
        for (const b of own) merged.set(b.name, { body: b.body, file: s.file, id: overrideId(b.body, s.blocks), scope: s.blocks });
        for (const [n, o] of s.blocks) merged.set(n, o);
        blocks = merged;
      }
      push({ list: target.nodes, file: target, ind: indent === null ? '' : s.ind + indent, blocks, active: s.active, depth: s.depth + 1 });
    };
    let overflow = false;
    while (todo.length > 0) {
      if (++states > MAX_WALK_STATES) {
        overflow = true;
        break;
      }
      const s = todo.pop()!;
      for (const node of s.list) {
        switch (node.type) {
          case 'text': {
            const found = s.ind === '' ? undefined : blocksOf.get(node);
            for (const b of found ?? []) {
              let set = variants.get(b);
              if (set === undefined) variants.set(b, (set = new Set()));
              set.add(s.ind);
            }
            break;
          }
          case 'section':
            push({ ...s, list: node.body });
            break;
          case 'partial':
          case 'parent': {
            const own = node.type === 'parent' ? node.blocks : null;
            if (node.dynamic !== undefined) {
              for (const name of Object.keys(s.file.partials ?? {})) include(s, name, node.indent, own);
            } else include(s, node.name, node.indent, own);
            break;
          }
          case 'block': {
            const o = s.blocks.get(node.name);
            const filled = o !== undefined && !s.active.includes(o);
            const site = sites.get(node);
            if (site !== undefined && filled) this.#checkFill(site, o, [...s.active, o]);
            if (filled) {
              // An override renders with the overrides in force where it is written (runtime.ts `parent`).
              push({ ...s, list: o.body, file: o.file, blocks: o.scope, ind: node.indent === null ? '' : s.ind + node.indent, active: [...s.active, o] });
            } else {
              push({ ...s, list: node.body, ind: node.indent === null ? s.ind : s.ind + node.indent });
            }
            break;
          }
        }
      }
    }
    const tooMany = (b: IndentedBlock, why: string): void => {
      if (this.#reportedVariants.has(b)) return;
      this.#reportedVariants.add(b);
      this.#diagnostics.error(
        'LW_CSP_INDENT_VARIANTS',
        `this inline <${b.kind}> is ${why}: its hash changes with each indentation, and pages hash their blocks when the app loads. Include the partial (or block) holding it without indentation, or put the ${b.kind === 'script' ? 'script in a file of its own (<script src>)' : 'rules in a stylesheet'}`,
        b.file,
        b.source,
        b.offset,
      );
    };
    for (const [b, inds] of variants) {
      if (inds.size > MAX_VARIANTS) {
        tooMany(b, `rendered with more than ${MAX_VARIANTS} different indentations on one page`);
        continue;
      }
      for (const ind of inds) {
        let text = '';
        let last = 0;
        for (const p of b.starts) {
          text += b.text.slice(last, p) + ind;
          last = p;
        }
        text += b.text.slice(last);
        (b.kind === 'script' ? facts.scriptHashes : facts.styleHashes).add(hashSource(this.settings.hash, text));
      }
    }
    if (overflow) {
      for (const list of blocksOf.values()) for (const b of list) tooMany(b, 'in a page whose partials nest in too many ways to follow');
      for (const site of sites.values()) {
        if (this.#reportedFills.has(site)) continue;
        this.#reportedFills.add(site);
        this.#diagnostics.error(
          'LW_CSP_TAG_IN_TAG',
          `block "${site.name}" is written inside ${site.attribute}="…" of <${site.element}>, in a page whose partials nest in too many ways to follow, so Laneway cannot check what fills it; write the attribute without a block, or include fewer partials`,
          site.file,
          site.source,
          site.offset,
        );
      }
    }
    return facts;
  }

  /**
   * Checks an override `o` filling a block site inside an attribute value: its text, and what
   * fills the blocks nested in it (the overrides in force there, else their defaults), as the
   * renderer resolves them. Each problem is reported once, in the file that writes it.
   */
  #checkFill(site: AttributeBlock, o: Override, active: readonly Override[]): void {
    const where = locate(site.source, site.offset);
    const check = (nodes: readonly NodeLike[], file: TemplateLike, blocks: ReadonlyMap<string, Override>, act: readonly Override[], depth: number): void => {
      if (depth > MAX_INCLUDE_DEPTH) return;
      attributeProblems(
        nodes,
        file.source,
        (b) => {
          const inner = blocks.get(b.name);
          if (inner !== undefined && !act.includes(inner)) check(inner.body, inner.file, inner.scope, [...act, inner], depth + 1);
          else check(b.body, file, blocks, act, depth + 1);
        },
        (node, offset, what) => {
          if (this.#reportedFills.has(node)) return;
          this.#reportedFills.add(node);
          this.#diagnostics.error(
            'LW_CSP_TAG_IN_TAG',
            `this fills block "${site.name}", which ${site.file.replace(/^\//, '')}:${where.line}:${where.column} writes inside ${site.attribute}="…" of <${site.element}>: ${what} there could end the value or add markup; ${ATTRIBUTE_TEXT}`,
            file.file,
            file.source,
            offset,
          );
        },
      );
    };
    check(o.body, o.file, o.scope, active, 0);
  }

  /** A plain `.html` page: its text after rewrites (declaration removed, assets inlined) and its policy. */
  page(file: string, source: string): { html: string; policy: PagePolicy } {
    const node = plainNode(source);
    const r = this.#scan({ file, source, nodes: [node] });
    return { html: node.text, policy: buildPolicy([r.facts], this.settings) };
  }
}

/** A block override in force during the walk: its body and the file that writes it. */
interface Override {
  body: NodeLike[];
  file: TemplateLike;
  id: number;
  /** The overrides in force where it is written: what its own blocks and parents see. */
  scope: ReadonlyMap<string, Override>;
}

/** One list of nodes the walk renders, with what the renderer would have in force there. */
interface State {
  list: readonly NodeLike[];
  file: TemplateLike;
  ind: string;
  /** Block overrides in force, by name (a parent's, merged with those from further out). */
  blocks: ReadonlyMap<string, Override>;
  /** Overrides being rendered: a block site of the same name inside one shows its default. */
  active: readonly Override[];
  depth: number;
}

const NO_OVERRIDES: ReadonlyMap<string, Override> = new Map();

function plainNode(text: string): TextLike {
  return { type: 'text', start: 0, end: text.length, bol: false, text, marks: [] };
}

const ALGORITHMS = new Set<HashAlgorithm>(['sha256', 'sha384', 'sha512']);

/**
 * Reads the `csp:` settings of the manifest: `{ hash: sha256|sha384|sha512, report-only: bool,
 * report-uri: URL }`. Problems are reported as LW_CSP_SETTINGS; the defaults apply for them.
 */
export function parseCspSettings(value: unknown, report: (message: string, severity?: 'error' | 'warning') => void): CspSettings {
  if (value === undefined || value === null) return DEFAULT_SETTINGS;
  if (typeof value !== 'object' || Array.isArray(value)) {
    report('"csp:" is a map, e.g. csp: { hash: sha384, report-only: true, report-uri: /csp-report }');
    return DEFAULT_SETTINGS;
  }
  const settings: CspSettings = { ...DEFAULT_SETTINGS };
  for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
    switch (key) {
      case 'hash':
        if (typeof v === 'string' && ALGORITHMS.has(v.toLowerCase() as HashAlgorithm)) settings.hash = v.toLowerCase() as HashAlgorithm;
        else report(`csp.hash is sha256, sha384 or sha512, not ${JSON.stringify(v)}`);
        break;
      case 'report-only':
        if (typeof v === 'boolean') settings.reportOnly = v;
        else report(`csp.report-only is true or false, not ${JSON.stringify(v)}`);
        break;
      case 'report-uri':
        if (typeof v === 'string' && /^(\/(?!\/)|https:\/\/)[^\s;,"']*$/.test(v)) settings.reportUri = v;
        else report(`csp.report-uri is a path of the app (/csp-report) or an https:// URL without spaces, ";", "," or quotes; found ${JSON.stringify(v)}`);
        break;
      default:
        report(`unknown key csp.${key}: use hash, report-only or report-uri`);
    }
  }
  if (settings.reportOnly && settings.reportUri === undefined) {
    report('csp.report-only without csp.report-uri: browsers report violations only to the console; add report-uri: /csp-report (a POST script of the app) to collect them', 'warning');
  }
  return settings;
}
