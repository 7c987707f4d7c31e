/** An in-memory SourceTree for model tests: app-relative path → text. */
import { DiagnosticList } from '../../src/diag/index.js';
import { readModelDefinitions, type ModelSchema } from '../../src/models/index.js';
import type { SourceTree } from '../../src/shared/index.js';

export function memoryTree(files: Record<string, string>): { tree: SourceTree; dirs: string[] } {
  const dirs = new Set<string>();
  for (const path of Object.keys(files)) {
    const parts = path.split('/');
    for (let i = 2; i < parts.length; i++) dirs.add(parts.slice(0, i).join('/'));
  }
  const tree: SourceTree = {
    read: (path) => files[path],
    list(dir) {
      const d = dir.endsWith('/') ? dir : dir + '/';
      if (!dirs.has(d.slice(0, -1))) return undefined;
      return Object.keys(files)
        .filter((p) => p.startsWith(d) && !p.slice(d.length).includes('/'))
        .map((p) => p.slice(d.length));
    },
  };
  return { tree, dirs: [...dirs] };
}

/** Reads definitions; returns the schema and the diagnostics as `file:line:column CODE` lines. */
export function readModels(files: Record<string, string>): { schema: ModelSchema; problems: string[]; messages: string[] } {
  const { tree, dirs } = memoryTree(files);
  const diagnostics = new DiagnosticList();
  const schema = readModelDefinitions(tree, diagnostics, { dirs });
  const sorted = diagnostics.sorted();
  return {
    schema,
    problems: sorted.map((d) => `${d.file}:${d.line}:${d.column} ${d.code}`),
    messages: sorted.map((d) => d.message),
  };
}
