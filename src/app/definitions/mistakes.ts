/**
 * Mistakes that would otherwise fail silently (docs/routing.md "File → URL"), found once the files
 * are classified:
 *
 * - a public `.js` that is server code by its content (it imports `'📤'`, `'form'`, `'🔗'`, …) but
 *   not by its name (`get.js`, `save.js`) would be served as a client asset, publishing the
 *   server's source: an error naming the script names it could have meant;
 * - a client `.js` named like a verb in another case (`get.js`, `PATCH.js`): a warning;
 * - `🖱` (click actions) scripts, which this version does not serve as they are meant to be: an
 *   error;
 * - a public `.html` that holds Mustache tags but not the marker on line 1 is served raw: a warning
 *   at the first tag;
 * - special names that are not quite right (special-names.ts): a warning, and the file is not
 *   served. So is a client `.js` named like a verb in another case (`GET.JS`).
 *
 * Files that must not be served are marked `hidden` in `files`.
 */
import * as acorn from 'acorn';
import type { DiagnosticList } from '../../diag/index.js';
import { formatPattern, isMiscasedVerbName, parseRouteFile, scriptNamesFor } from '../../router/index.js';
import { TEMPLATE_MARKER, isTemplate } from '../../template/index.js';
import { isPrivatePath, type ClassifiedFile } from './classify.js';
import { checkSpecialNames } from './special-names.js';

export function checkMistakes(files: ClassifiedFile[], read: (path: string) => string | undefined, diagnostics: DiagnosticList): void {
  const reported = new Set<string>();
  for (const file of files) {
    const ext = file.name.slice(file.name.lastIndexOf('.') + 1).toLowerCase();
    if (file.kind === 'static' && !file.hidden && (ext === 'js' || ext === 'mjs')) {
      if (checkClientScript(file, read(file.path) ?? '', diagnostics)) reported.add(file.path);
    } else if (file.kind === 'script' && !file.hidden) {
      checkUnavailableScript(file, diagnostics);
    } else if ((file.kind === 'page' && !file.hidden) || (file.kind === 'not-found' && !isPrivatePath(file.path))) {
      const source = read(file.path) ?? '';
      if (!isTemplate(source)) checkPlainPage(file, source, diagnostics);
    }
  }
  checkSpecialNames(files, diagnostics, reported);
}

// ---- server code in a client-side .js ---------------------------------------------------------

/** Modules only server scripts can import; any bare module name that is not ASCII is one too. */
const SERVER_MODULES = new Set(['📤', '🔗', 'form', 'form[]', 'form{}', '&', 'util', '🍪']);

export function isServerModule(specifier: string): boolean {
  if (SERVER_MODULES.has(specifier)) return true;
  // `'📦'`, `'👤'`, `'🗄'`…: but `./ünïcode.js`, `/x/é.js` and `https://…` are client modules.
  return /[^\x00-\x7f]/.test(specifier) && !/^[./]/.test(specifier) && !specifier.includes(':');
}

interface ServerImport {
  module: string;
  /** Offset of the module name's string literal. */
  offset: number;
}

/**
 * The server modules a `.js` imports. Parsed with acorn (as a module, then as a classic script,
 * which cannot import); only when neither parses does a line-anchored pattern decide.
 */
export function serverImports(source: string): ServerImport[] {
  // Cheap prefilter: every static import names its module right after `from` or `import`.
  const candidates = [...source.matchAll(/\b(?:from|import)\s*(['"])([^'"\r\n]*)\1/g)];
  if (!candidates.some((m) => isServerModule(m[2]!))) return [];
  const options = { ecmaVersion: 'latest', allowHashBang: true, allowReturnOutsideFunction: true, allowAwaitOutsideFunction: true } as const;
  let program: acorn.Program | undefined;
  try {
    program = acorn.parse(source, { ...options, sourceType: 'module' });
  } catch {
    try {
      acorn.parse(source, { ...options, sourceType: 'script' });
      return []; // a classic script: it has no imports
    } catch {
      program = undefined;
    }
  }
  if (!program) {
    const found: ServerImport[] = [];
    // `import … from 'm'`, `import 'm'`, `export … from 'm'` at the start of a line.
    const statement = /^[ \t]*(?:import|export)\b(?:[\s\w$*{},]*?\bfrom)?\s*(['"])([^'"\r\n]+)\1/gm;
    for (const m of source.matchAll(statement)) {
      if (isServerModule(m[2]!)) found.push({ module: m[2]!, offset: m.index! + m[0].length - m[2]!.length - 2 });
    }
    return found;
  }
  const found: ServerImport[] = [];
  for (const node of program.body) {
    if ((node.type === 'ImportDeclaration' || node.type === 'ExportAllDeclaration' || node.type === 'ExportNamedDeclaration') && node.source) {
      const module = String(node.source.value);
      if (isServerModule(module)) found.push({ module, offset: node.source.start });
    }
  }
  return found;
}

/** Whether the file was reported. */
function checkClientScript(file: ClassifiedFile, source: string, diagnostics: DiagnosticList): boolean {
  const imports = serverImports(source);
  if (imports.length > 0) {
    const first = imports[0]!;
    const posted = imports.some((i) => i.module.startsWith('form'));
    const names = scriptNamesFor(file.name, posted).map((n) => `${n} (${answers(file.dir + '/' + n)})`);
    diagnostics.error(
      'LW_ROUTE_SERVER_CODE_AS_ASSET',
      `${file.name} imports from '${first.module}', so it is server code, but its name makes it a client-side file served as-is (its source would be public): ` +
        `rename it to ${orList(names)}; values shared by several scripts go in a supplier, 📤/Name.js`,
      file.path,
      source,
      first.offset,
    );
    return true;
  }
  if (isMiscasedVerbName(file.name)) {
    const names = scriptNamesFor(file.name).map((n) => `${n} (${answers(file.dir + '/' + n)})`);
    const verb = file.name.slice(0, -3).toUpperCase();
    const why = verb === 'PATCH' ? 'Laneway routes GET, POST, PUT and DELETE scripts, not PATCH' : 'verb names are upper case';
    // An all-lower-case name (`get.js`) is a usual name of a client-side file, served as it is
    // (server code is refused above by its imports); another case (`GET.JS`, `Get.js`) reads as a
    // script misnamed by a letter's case and is not published until renamed.
    const lower = file.name === file.name.toLowerCase();
    if (!lower) file.hidden = true;
    diagnostics.warn(
      'LW_ROUTE_VERB_NAME_CASE',
      lower
        ? `${file.name} is served as a client-side file, not run as a script (${why}): if it is server code, rename it to ${orList(names)}`
        : `${file.name} is neither run as a script (${why}) nor served: if it is server code, rename it to ${orList(names)}; if it is a client-side file, give it another name`,
      file.path,
    );
    return true;
  }
  return false;
}

/** What a script file name answers: `GET /a/`. */
function answers(path: string): string {
  const spec = parseRouteFile(path, 'script');
  return spec ? `${spec.method} ${formatPattern(spec)}` : 'no URL';
}

function orList(items: string[]): string {
  return items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} or ${items[items.length - 1]}`;
}

// ---- 🖱 ------------------------------------------------------------------------------------

function checkUnavailableScript(file: ClassifiedFile, diagnostics: DiagnosticList): void {
  if (!file.name.startsWith('🖱')) return;
  const base = file.name.slice('🖱'.length, -'.js'.length);
  const message =
    `click actions (🖱) are not available in this version of Laneway: ${file.name} would answer ${answers(file.path)} like any GET script, without the redirect-only rule; ` +
    `write a page that posts a form to 📮${base}.js (which redirects when done), or 🖥${base}.js if it changes nothing`;
  diagnostics.error('LW_ROUTE_NOT_AVAILABLE', message, file.path);
}

// ---- Mustache tags in a plain page --------------------------------------------------------

const NAME = String.raw`[\p{L}\p{N}_$.\-\p{Extended_Pictographic}\u{FE0F}]+`;
/** Real Mustache tag shapes only: a name, a section, a partial, a raw value, a pragma. */
const MUSTACHE_TAG = new RegExp(
  [
    String.raw`\{\{\{\s*${NAME}\s*\}\}\}`, // {{{raw}}}
    String.raw`\{\{[#^/]\s*${NAME}(?:[ \t][^{}\r\n]*)?\}\}`, // {{#section}}, {{^inverted}}, {{/section}}
    String.raw`\{\{>\s*[^\s{}]+\s*\}\}`, // {{>partial}}
    String.raw`\{\{%\s*[A-Za-z]+\b`, // {{% pragma … }}
    String.raw`\{\{[&!]?\s*${NAME}\s*\}\}`, // {{name}}, {{&name}}, {{!comment}}
  ].join('|'),
  'u',
);
/** The marker, misspelled or misplaced: other spacing or case, or not on line 1. */
const MARKER_LIKE = /<!--\s*TEMPLATE\s+mustache\s*-->/i;

function checkPlainPage(file: ClassifiedFile, source: string, diagnostics: DiagnosticList): void {
  const text = blankClientRegions(source);
  const marker = MARKER_LIKE.exec(text);
  const tag = MUSTACHE_TAG.exec(text);
  if (marker) {
    diagnostics.warn(
      'LW_APP_MUSTACHE_WITHOUT_MARKER',
      `${file.name} is served as plain HTML: the template marker must be exactly ${TEMPLATE_MARKER}, alone on line 1; move or correct this line`,
      file.path,
      source,
      marker.index,
    );
  } else if (tag) {
    diagnostics.warn(
      'LW_APP_MUSTACHE_WITHOUT_MARKER',
      `${file.name} holds the Mustache tag ${tag[0]} but is served as plain HTML, tags and all: add ${TEMPLATE_MARKER} as line 1 to make it a view`,
      file.path,
      source,
      tag.index,
    );
  }
}

/**
 * The page with its HTML comments (but a comment that looks like the marker) and the contents of
 * `<script>`, `<style>`, `<textarea>`, `<pre>` and `<code>` blanked out (offsets kept): braces
 * there belong to client-side code, templates and examples, not to Laneway.
 */
function blankClientRegions(source: string): string {
  const blank = (m: string) => m.replace(/[^\n]/g, ' ');
  return source
    .replace(/<!--[\s\S]*?(?:-->|$)/g, (m) => (MARKER_LIKE.test(m) ? m : blank(m)))
    .replace(/(<(script|style|textarea|pre|code)\b[^>]*>)([\s\S]*?)(<\/\2\s*>|$)/gi, (_m, open: string, _n, body: string, close: string) => open + blank(body) + close);
}
