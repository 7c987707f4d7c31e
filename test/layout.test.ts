/**
 * The layout of src/ (docs/architecture.md, "Folders"): no import cycle between its files, another
 * folder reached only through its index.ts, and every folder importing only folders on a lower
 * floor. Type imports count like any other: a cycle of types is still a knot a reader has to untie.
 *
 * Imports are read with regular expressions (no dependency): static `import … from` and
 * `export … from` statements at the start of a line, side-effect `import '…'`, and `import('…')`
 * (dynamic imports and `typeof import('…')` types). Only relative specifiers are graph edges;
 * packages and `node:` modules are not part of the layout.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const SRC = fileURLToPath(new URL('../src/', import.meta.url));

/**
 * Each folder's floor. A folder imports only folders on a lower floor; floor 1 (the leaves, the
 * compilers and checkers that know nothing of each other) therefore imports only `diag` and
 * `shared`. `.` is the library entry point, src/index.ts. A new folder gets its row here and in
 * the diagram of docs/architecture.md.
 */
const FLOORS: Record<string, number> = {
  diag: 0,
  shared: 0,
  router: 1,
  template: 1,
  script: 1,
  models: 1,
  csp: 1,
  assets: 1,
  content: 2,
  store: 2,
  forms: 2,
  session: 3,
  mail: 3,
  images: 3,
  auth: 3,
  limits: 3,
  app: 4,
  http: 5,
  dev: 6,
  supervisor: 6,
  cli: 7,
  '.': 7,
};

/**
 * Imports of another folder's file other than its index.ts that are allowed, each with its reason,
 * keyed `'supervisor/worker.ts → http/handler.ts'` (paths under src/). None today; an entry here is
 * a last resort, when exporting the name from the folder's index.ts would do harm.
 */
const INDEX_EXCEPTIONS: Record<string, string> = {};

interface Edge {
  from: string;
  to: string;
  line: number;
  /** `import type`, `export type`, or braces holding only `type` names: erased from the output. */
  typeOnly: boolean;
}

/** The relative imports of one file's source text, in order. */
function readImports(text: string): Array<{ specifier: string; line: number; typeOnly: boolean }> {
  const found: Array<{ index: number; specifier: string; typeOnly: boolean }> = [];
  for (const m of text.matchAll(/^[ \t]*(?:import|export)\b([^'"`;]*?)\bfrom\s*(['"])(.+?)\2/gm)) {
    const clause = m[1]!.trim();
    const braces = /^(?:type\s+)?\{([^}]*)\}$/.exec(clause);
    const names = braces ? braces[1]!.split(',').map((n) => n.trim()).filter(Boolean) : [];
    const typeOnly = /^type\b/.test(clause) || (names.length > 0 && names.every((n) => /^type\s/.test(n)));
    found.push({ index: m.index!, specifier: m[3]!, typeOnly });
  }
  for (const m of text.matchAll(/^[ \t]*import\s*(['"])(.+?)\1/gm)) found.push({ index: m.index!, specifier: m[2]!, typeOnly: false });
  for (const m of text.matchAll(/\bimport\(\s*(['"])([^'"]+)\1\s*\)/g)) found.push({ index: m.index!, specifier: m[2]!, typeOnly: false });
  return found
    .filter((f) => f.specifier.startsWith('.'))
    .sort((a, b) => a.index - b.index)
    .map((f) => ({ specifier: f.specifier, line: text.slice(0, f.index).split('\n').length, typeOnly: f.typeOnly }));
}

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) sourceFiles(path, out);
    else if (/\.(?:ts|js|mjs)$/.test(name) && !/\.test\.|\.d\.ts$/.test(name)) out.push(relative(SRC, path).split(sep).join('/'));
  }
  return out;
}

const FILES = sourceFiles(SRC);
const FILE_SET = new Set(FILES);
const EDGES: Edge[] = [];
const UNRESOLVED: string[] = [];
for (const from of FILES) {
  for (const { specifier, line, typeOnly } of readImports(readFileSync(join(SRC, from), 'utf8'))) {
    // `./x.js` names x.ts (NodeNext resolution), or x.js itself where the file is JavaScript.
    const named = relative(SRC, resolve(dirname(join(SRC, from)), specifier)).split(sep).join('/');
    const to = [named.replace(/\.js$/, '.ts'), named].find((f) => FILE_SET.has(f));
    if (to) EDGES.push({ from, to, line, typeOnly });
    else UNRESOLVED.push(`src/${from}:${line} imports '${specifier}', which is no source file of src/`);
  }
}

const folderOf = (file: string): string => (file.includes('/') ? file.slice(0, file.indexOf('/')) : '.');
const show = (e: Edge): string => `src/${e.from}:${e.line} → src/${e.to}${e.typeOnly ? ' (type)' : ''}`;

test('the import reader sees every form of import', () => {
  const text = [
    "import { a } from './a.js';",
    "import type { B } from '../b/index.js';",
    'import {',
    '  type C,',
    '  type D,',
    "} from './c.js';",
    "export { e } from './e.js';",
    "export type { F } from './f.js';",
    "export * from './g.js';",
    "import './h.js';",
    "const i = await import('./i.js');",
    "type J = typeof import('./j.js');",
    "import { readFileSync } from 'node:fs';",
    "// import { k } from './k.js';",
    " * import { l } from './l.js';",
  ].join('\n');
  assert.deepEqual(
    readImports(text).map((i) => `${i.line} ${i.specifier}${i.typeOnly ? ' type' : ''}`),
    ['1 ./a.js', '2 ../b/index.js type', '3 ./c.js type', '7 ./e.js', '8 ./f.js type', '9 ./g.js', '10 ./h.js', '11 ./i.js', '12 ./j.js'],
  );
});

test('every relative import of src/ names one of its source files', () => {
  assert.deepEqual(UNRESOLVED, []);
  assert.ok(EDGES.length > 500, `only ${EDGES.length} imports read: the reader misses some`);
});

/**
 * The import cycles of a graph (Tarjan's strongly connected components), each told as its files
 * and one shortest cycle through the first of them, to show where to cut.
 */
function importCycles(files: readonly string[], edges: readonly Edge[]): string[] {
  const next = new Map<string, Edge[]>(files.map((f) => [f, []]));
  for (const e of edges) next.get(e.from)!.push(e);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const { to } of next.get(v)!) {
      if (!index.has(to)) {
        visit(to);
        low.set(v, Math.min(low.get(v)!, low.get(to)!));
      } else if (onStack.has(to)) low.set(v, Math.min(low.get(v)!, index.get(to)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || next.get(v)!.some((e) => e.to === v)) components.push(component.sort());
    }
  };
  for (const f of files) if (!index.has(f)) visit(f);

  return components.map((component) => {
    const inside = new Set(component);
    const start = component[0]!;
    const via = new Map<string, Edge>();
    const queue = [start];
    let closing: Edge | undefined;
    while (queue.length && !closing) {
      for (const e of next.get(queue.shift()!)!) {
        if (!inside.has(e.to)) continue;
        if (e.to === start) {
          closing = e;
          break;
        }
        if (!via.has(e.to)) {
          via.set(e.to, e);
          queue.push(e.to);
        }
      }
    }
    const path: Edge[] = [closing!];
    while (path[0]!.from !== start) path.unshift(via.get(path[0]!.from)!);
    return [`${component.length} file${component.length === 1 ? '' : 's'} in one cycle: ${component.map((f) => `src/${f}`).join(', ')}`, '  for example:', ...path.map((e) => `    ${show(e)}`)].join('\n');
  });
}

test('the cycle finder sees a cycle closed by a type import, and a file importing itself', () => {
  const edge = (from: string, to: string, typeOnly = false): Edge => ({ from, to, line: 1, typeOnly });
  const files = ['a/x.ts', 'a/y.ts', 'a/z.ts', 'b/w.ts', 'b/index.ts'];
  assert.deepEqual(importCycles(files, [edge('a/x.ts', 'a/y.ts'), edge('a/y.ts', 'a/z.ts'), edge('b/w.ts', 'b/index.ts')]), []);
  assert.deepEqual(importCycles(files, [edge('a/x.ts', 'a/y.ts'), edge('a/y.ts', 'a/z.ts'), edge('a/z.ts', 'a/x.ts', true), edge('b/w.ts', 'b/w.ts')]), [
    '3 files in one cycle: src/a/x.ts, src/a/y.ts, src/a/z.ts\n  for example:\n    src/a/x.ts:1 → src/a/y.ts\n    src/a/y.ts:1 → src/a/z.ts\n    src/a/z.ts:1 → src/a/x.ts (type)',
    '1 file in one cycle: src/b/w.ts\n  for example:\n    src/b/w.ts:1 → src/b/w.ts',
  ]);
});

test('no import cycle among the files of src/ (type imports included)', () => {
  const problems = importCycles(FILES, EDGES);
  assert.equal(problems.length, 0, `import cycles in src/ (move the shared types to a file that imports neither side):\n${problems.join('\n')}`);
});

test("a file imports another folder's files only through its index.ts", () => {
  const bypasses = EDGES.filter((e) => folderOf(e.from) !== folderOf(e.to) && e.to !== `${folderOf(e.to)}/index.ts`);
  const unexplained = bypasses.filter((e) => !(`${e.from} → ${e.to}` in INDEX_EXCEPTIONS)).map(show);
  assert.deepEqual(unexplained, [], "export the name from the target folder's index.ts and import it from there");
  const used = new Set(bypasses.map((e) => `${e.from} → ${e.to}`));
  assert.deepEqual(Object.keys(INDEX_EXCEPTIONS).filter((k) => !used.has(k)), [], 'INDEX_EXCEPTIONS lists an import that is gone');
});

test('every folder of src/ has a floor', () => {
  const folders = [...new Set(FILES.map(folderOf))].sort();
  assert.deepEqual(folders, Object.keys(FLOORS).sort());
});

test('a folder imports only folders on a lower floor', () => {
  const upward = EDGES.filter((e) => folderOf(e.from) !== folderOf(e.to))
    .filter((e) => !(FLOORS[folderOf(e.to)]! < FLOORS[folderOf(e.from)]!))
    .map((e) => `${show(e)}: ${folderOf(e.from)} is on floor ${FLOORS[folderOf(e.from)]}, ${folderOf(e.to)} on floor ${FLOORS[folderOf(e.to)]}`);
  assert.deepEqual(upward, []);
});

/**
 * The floors inside src/app/, named by when their code runs (docs/architecture.md "Inside app/"):
 * the contract with http, then what reads an app's files at load, what an app holds open, what
 * runs per request, and the loader that puts them together. `.` is app/index.ts, the surface.
 * A file imports files of its own floor or of a lower one.
 */
const APP_FLOORS: Record<string, number> = {
  endpoint: 0,
  definitions: 1,
  services: 2,
  request: 3,
  load: 4,
  '.': 5,
};

const appFloorOf = (file: string): string => {
  const rest = file.slice('app/'.length);
  return rest.includes('/') ? rest.slice(0, rest.indexOf('/')) : '.';
};

test('every file of src/app/ is on a floor (app/index.ts alone at the top)', () => {
  const app = FILES.filter((f) => f.startsWith('app/'));
  assert.deepEqual(app.filter((f) => !(appFloorOf(f) in APP_FLOORS)).map((f) => `src/${f}`), [], 'put the file in one of the folders of APP_FLOORS');
  assert.deepEqual(app.filter((f) => appFloorOf(f) === '.'), ['app/index.ts']);
});

test('inside src/app/, a file imports only its own floor or lower ones', () => {
  const upward = EDGES.filter((e) => e.from.startsWith('app/') && e.to.startsWith('app/'))
    .filter((e) => APP_FLOORS[appFloorOf(e.to)]! > APP_FLOORS[appFloorOf(e.from)]!)
    .map((e) => `${show(e)}: app/${appFloorOf(e.from)} is on floor ${APP_FLOORS[appFloorOf(e.from)]}, app/${appFloorOf(e.to)} on floor ${APP_FLOORS[appFloorOf(e.to)]}`);
  assert.deepEqual(upward, []);
});
