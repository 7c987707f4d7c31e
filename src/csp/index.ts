/**
 * Content-Security-Policy for every page, computed when the app loads from the files the
 * developer wrote (SPEC "Content security policy", REFERENCE §5.1, OQ-16), never from data.
 *
 * The loader makes one PolicyCompiler per load. The template engine calls `prepare` once per
 * file before generating its code (the page pass of scan.ts: restrictions, sources, hashes of
 * static inline blocks, capture points of dynamic ones, rewrites). `viewPolicy` merges the files
 * of one view (with its layouts, partials and inlined SVGs) into a PagePolicy; `page` does the
 * same for a plain `.html` page and returns its rewritten text.
 */
import type { Code, DiagnosticList } from '../diag/index.js';
import { buildPolicy, DEFAULT_SETTINGS, emptyFacts, type CspSettings, type FileFacts, type HashAlgorithm, type PagePolicy } from './policy.js';
import { scanFile, type CapturePoint, type ReferenceHooks, type ScanResult, type TemplateLike, type TextLike } from './scan.js';

export { tokenizeHtml, HOLE, type HtmlToken, type StartTag, type EndTag, type RawText, type Attribute } from './html.js';
export { buildPolicy, checkSource, hashSource, normalizeInline, sourceOfUrl, DEFAULT_SETTINGS, type CspSettings, type HashAlgorithm, type PagePolicy, type FileFacts, type Directive } from './policy.js';
export { isJavascriptUrl, type CapturePoint, type NodeLike, type ReferenceHooks, type TemplateLike, type TextLike } from './scan.js';

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
  readonly #dynamic = { kinds: [] as Array<'script' | 'style'> };

  constructor(options: PolicyCompilerOptions) {
    this.settings = options.settings ?? DEFAULT_SETTINGS;
    this.#diagnostics = options.diagnostics;
    this.#hooks = options.hooks ?? {};
  }

  #report = (severity: 'error' | 'warning', code: Code, message: string, file: string, source: string, offset: number): void => {
    this.#diagnostics.add(severity, code, message, file, source, offset);
  };

  #scan(t: TemplateLike, svg = false): ScanResult {
    return scanFile(t, { algorithm: this.settings.hash, hooks: this.#hooks, report: this.#report, kinds: this.#dynamic.kinds, svg });
  }

  /**
   * The page pass over one template file, once per load (later calls return the first result).
   * May rewrite the file's text nodes; returns the points the renderer must record.
   */
  prepare(t: TemplateLike): CapturePoint[] | undefined {
    let r = this.#files.get(t.file);
    if (r === undefined) {
      r = this.#scan(t);
      this.#files.set(t.file, r);
    }
    return r.captures.length > 0 ? r.captures : undefined;
  }

  /**
   * Checks the files of an HTML supplier: the same restrictions as pages, and a warning for inline
   * blocks, because a supplier's output reaches pages as data and is never hashed.
   */
  checkSupplier(templates: readonly TemplateLike[]): void {
    const [own, ...rest] = templates;
    if (own === undefined) return;
    if (!this.#files.has(own.file)) {
      const r = this.#scan(own);
      this.#files.set(own.file, r);
      if (r.inlineBlocks > 0) {
        this.#diagnostics.warn(
          'LW_CSP_SUPPLIER_INLINE',
          'this HTML supplier writes an inline <script> or <style>: its output reaches pages as a value, which is never hashed, so browsers will block it; put the block in the view, a partial or a layout',
          own.file,
        );
      }
    }
    for (const t of rest) this.prepare(t);
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

  /** The policy of a view from its files (view first, then every partial and layout it uses). */
  viewPolicy(templates: readonly TemplateLike[]): PagePolicy {
    const facts: FileFacts[] = [];
    const svgs = new Set<string>();
    for (const t of templates) {
      let r = this.#files.get(t.file);
      if (r === undefined) {
        this.prepare(t);
        r = this.#files.get(t.file)!;
      }
      facts.push(r.facts);
      for (const p of Object.values(t.partials ?? {})) if (p.kind === 'svg') svgs.add(p.file);
    }
    for (const f of svgs) facts.push(this.#svgFacts(f));
    return buildPolicy(facts, this.settings, this.#dynamic);
  }

  /** A plain `.html` page: its text after rewrites (declaration removed, assets inlined) and its policy. */
  page(file: string, source: string): { html: string; policy: PagePolicy } {
    const node = plainNode(source);
    const r = this.#scan({ file, source, nodes: [node] });
    return { html: node.text, policy: buildPolicy([r.facts], this.settings, this.#dynamic) };
  }
}

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
