/** Shared helpers for the template tests: an in-memory source tree and a view renderer. */
import { DiagnosticList, formatDiagnostic } from '../../src/diag/index.js';
import type { SourceTree } from '../../src/shared/index.js';
import { compileView, type CompiledView, type RenderInput, type RenderOutput } from '../../src/template/index.js';

export const MARKER = '<!--TEMPLATE mustache-->\n';

/** A SourceTree over a map of app paths to file contents. */
export function memoryTree(files: Record<string, string>): SourceTree {
  return {
    read: (path) => (Object.hasOwn(files, path) ? files[path] : undefined),
    list: (dir) => {
      const names = Object.keys(files)
        .filter((p) => p.startsWith(dir) && !p.slice(dir.length).includes('/'))
        .map((p) => p.slice(dir.length));
      return names.length > 0 ? names : undefined;
    },
  };
}

export interface Built {
  view: CompiledView | undefined;
  diagnostics: DiagnosticList;
  /** Diagnostics as `file:line:column: message [code]`. */
  messages: string[];
}

/** Compiles `/page.html` (or `file`) of an in-memory app. */
export function build(files: Record<string, string>, file = '/page.html', checkImport?: (m: string, n: string, f: string) => true | string): Built {
  const diagnostics = new DiagnosticList();
  const options = checkImport === undefined ? { tree: memoryTree(files), diagnostics } : { tree: memoryTree(files), diagnostics, checkImport };
  const view = compileView(file, files[file]!, options);
  return { view, diagnostics, messages: diagnostics.sorted().map(formatDiagnostic) };
}

/** Compiles and renders synchronously; fails the test when compiling reported errors. */
export function renderSync(files: Record<string, string>, values: Record<string, unknown> = {}, extra: Partial<RenderInput> = {}, thisValue?: unknown): RenderOutput {
  const { view, messages } = build(files);
  if (!view) throw new Error('compile failed:\n' + messages.join('\n'));
  const out = view.render({ importValue: (_m, n) => values[n], dev: false, now: new Date('2031-06-01T00:00:00Z'), ...extra }, thisValue);
  if (out instanceof Promise) throw new Error('render went async');
  return out;
}

/** Compiles and renders, awaiting the result. */
export async function renderAsync(files: Record<string, string>, values: Record<string, unknown> = {}, extra: Partial<RenderInput> = {}, thisValue?: unknown): Promise<RenderOutput> {
  const { view, messages } = build(files);
  if (!view) throw new Error('compile failed:\n' + messages.join('\n'));
  return view.render({ importValue: (_m, n) => values[n], dev: false, now: new Date('2031-06-01T00:00:00Z'), ...extra }, thisValue);
}

/** Shorthand: a one-file view with the marker prepended. */
export function page(body: string, more: Record<string, string> = {}): Record<string, string> {
  return { '/page.html': MARKER + body, ...more };
}
