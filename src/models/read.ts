/**
 * Reads every model definition under `/📦/` into a ModelSchema.
 *
 * 1. Name every file: `/📦/<prefix><Name>.yaml`, and one level of containers,
 *    `/📦/<Container>/<prefix><Name>.yaml`, where the container is a Universal model.
 * 2. Parse each file (fields.ts) knowing every model name, so types can name models.
 * 3. Check that embedded types do not contain each other in a cycle.
 */
import type { DiagnosticList } from '../diag/index.js';
import type { SourceTree } from '../shared/index.js';
import { parseDefinition, type ModelHeader, type ParseContext } from './fields.js';
import { NAME_MAX, type ModelDefinition, type ModelKind, type ModelSchema } from './schema.js';

const ROOT = '/📦';
const PREFIXES: Record<string, ModelKind> = { '🌐': 'universal', '📄': 'content', '👤': 'profile', '📎': 'embedded' };
const PASCAL = /^[A-Z][A-Za-z0-9]*$/;

export interface ReadModelOptions {
  /**
   * Every directory of the app (`/📦/List`, app-relative, no trailing slash), so that directories
   * under `/📦/` with no container model, or nested too deep, are reported. Without it, only the
   * directories named after Universal models are read.
   */
  dirs?: readonly string[];
}

/** Reads and checks `/📦/`; every problem goes to `diagnostics`, and the schema holds what is valid. */
export function readModelDefinitions(tree: SourceTree, diagnostics: DiagnosticList, options: ReadModelOptions = {}): ModelSchema {
  const schema: ModelSchema = { models: new Map(), embedded: new Map() };
  const rootFiles = tree.list(ROOT + '/');
  if (rootFiles === undefined) return schema;

  // 1. Name the files.
  const headers: ModelHeader[] = [];
  const unavailable = (schema.unavailable = new Map<string, string>());
  for (const name of visible(rootFiles)) {
    if (keyVault(`${ROOT}/${name}`, name, unavailable, diagnostics)) continue;
    const header = nameFile(`${ROOT}/${name}`, name, undefined, diagnostics);
    if (header) headers.push(header);
  }
  const rootKinds = new Map(headers.map((h) => [h.name, h.kind]));
  const containerDirs = options.dirs
    ? options.dirs.filter((d) => d.startsWith(ROOT + '/')).sort()
    : headers.filter((h) => h.kind === 'universal').map((h) => `${ROOT}/${h.name}`);
  for (const dir of containerDirs) {
    const rest = dir.slice(ROOT.length + 1);
    if (rest.includes('/')) {
      // The platform's models contained in a contained model: degraded (docs/status.md "What degrades").
      const names = visible(tree.list(dir + '/') ?? []).flatMap((n) => {
        const m = DEFINITION.exec(n);
        return m ? [m[1]!] : [];
      });
      if (names.length === 0) {
        diagnostics.error('LW_MODEL_CONTAINER', `containers are one level deep: ${dir} is inside a container; move its definitions up to ${ROOT}/${rest.slice(0, rest.indexOf('/'))}/`, dir);
        continue;
      }
      for (const n of names) unavailable.set(n, NESTED);
      diagnostics.warn(
        'LW_MODEL_NOT_AVAILABLE',
        `${dir} is a container inside a container, and Laneway's containers are one level deep (docs/status.md, "Not available": ${NESTED}): ${names.join(', ')} ${names.length === 1 ? 'is' : 'are'} left out, and every file that uses ${names.length === 1 ? 'it' : 'them'} answers 501`,
        dir,
      );
      continue;
    }
    const files = visible(tree.list(dir + '/') ?? []);
    if (files.length === 0 && !options.dirs) continue;
    const kind = rootKinds.get(rest);
    if (kind === undefined) {
      diagnostics.error('LW_MODEL_CONTAINER', `${dir}/ holds the models contained in ${rest}, but there is no ${ROOT}/🌐${rest}.yaml: add it, or move the files to ${ROOT}/`, dir);
      continue;
    }
    if (kind !== 'universal') {
      diagnostics.error('LW_MODEL_CONTAINER', `only Universal (🌐) models contain others; ${rest} is not one: rename ${ROOT}/${prefixOf(kind)}${rest}.yaml to ${ROOT}/🌐${rest}.yaml, or move the files to ${ROOT}/`, dir);
      continue;
    }
    for (const name of files) {
      if (keyVault(`${dir}/${name}`, name, unavailable, diagnostics)) continue;
      const header = nameFile(`${dir}/${name}`, name, rest, diagnostics);
      if (!header) continue;
      if (header.kind === 'embedded') {
        diagnostics.error('LW_MODEL_CONTAINER', `embedded types are global: move ${name} to ${ROOT}/`, header.file);
        continue;
      }
      headers.push(header);
    }
  }

  // Names are global: one definition per name.
  const known = new Map<string, ModelKind>();
  const unique: ModelHeader[] = [];
  const firstFile = new Map<string, string>();
  for (const header of headers) {
    const first = firstFile.get(header.name);
    if (first !== undefined) {
      diagnostics.error('LW_MODEL_DUPLICATE', `${header.name} is already defined by ${first}; model names are unique across the app: rename one of them`, header.file);
      continue;
    }
    firstFile.set(header.name, header.file);
    known.set(header.name, header.kind);
    unique.push(header);
  }

  // 2. Parse.
  const ctx: ParseContext = { diagnostics, known, inline: new Map() };
  for (const header of unique) {
    const model = parseDefinition(header, tree.read(header.file) ?? '', ctx);
    if (!model) continue;
    if (model.kind === 'embedded') schema.embedded.set(model.name, model);
    else schema.models.set(model.name, model);
  }
  for (const [name, model] of ctx.inline) schema.embedded.set(name, model);

  // 3. Embedded cycles.
  reportEmbeddedCycles(schema, diagnostics);
  return schema;
}

/** What docs/status.md calls the models Laneway cannot define. */
const NESTED = 'models nested two containers deep';
const KEY_VAULT = 'key-vault models (🔑)';
/** A model definition's file name, any prefix: its model name. */
const DEFINITION = /^(?:🌐|📄|👤|📎|🔑)([A-Z][A-Za-z0-9]*)\.ya?ml$/;

/** A `🔑Name.yaml` key-vault model: reported and left out (docs/status.md "What degrades"). */
function keyVault(path: string, fileName: string, unavailable: Map<string, string>, diagnostics: DiagnosticList): boolean {
  if (!fileName.startsWith('🔑')) return false;
  const m = DEFINITION.exec(fileName);
  if (m) unavailable.set(m[1]!, KEY_VAULT);
  diagnostics.warn(
    'LW_MODEL_NOT_AVAILABLE',
    `${fileName} is a key-vault model, which Laneway does not have (docs/status.md, "Not available": ${KEY_VAULT}): ${m ? `${m[1]} is left out, and every file that uses it answers 501` : 'it is left out'}`,
    path,
  );
  return true;
}

function visible(names: string[]): string[] {
  return names.filter((n) => !n.startsWith('.')).sort();
}

function prefixOf(kind: ModelKind): string {
  return Object.keys(PREFIXES).find((p) => PREFIXES[p] === kind)!;
}

/** `🌐Task.yaml` → {name: Task, kind: universal}; reports names that are not definitions. */
function nameFile(path: string, fileName: string, container: string | undefined, diagnostics: DiagnosticList): ModelHeader | undefined {
  const prefix = Object.keys(PREFIXES).find((p) => fileName.startsWith(p));
  const ext = fileName.endsWith('.yaml') ? '.yaml' : fileName.endsWith('.yml') ? '.yml' : '';
  if (!prefix || ext !== '.yaml') {
    const stem = fileName.replace(/\.[^.]*$/, '').replace(/^[^A-Za-z0-9]+/, '') || 'Name';
    const suggestion = `${prefix ?? '🌐'}${stem.charAt(0).toUpperCase()}${stem.slice(1)}.yaml`;
    diagnostics.error(
      'LW_MODEL_FILE_NAME',
      `${fileName} is not a model definition: name it ${suggestion} (prefix 🌐 Universal, 📄 Content, 👤 User Profile, 📎 Embedded; extension .yaml), or move it out of ${ROOT}/`,
      path,
    );
    return undefined;
  }
  const name = fileName.slice(prefix.length, -ext.length);
  if (!PASCAL.test(name) || name.length > NAME_MAX) {
    const pascal = name.split(/[^A-Za-z0-9]+/).filter(Boolean).map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('').slice(0, NAME_MAX);
    const hint = /^[A-Z]/.test(pascal) ? `, such as ${prefix}${pascal}.yaml` : '';
    diagnostics.error('LW_MODEL_NAME', `"${name}" is not a model name: use PascalCase letters and digits, at most ${NAME_MAX} characters${hint}`, path);
    return undefined;
  }
  return { name, kind: PREFIXES[prefix]!, file: path, ...(container === undefined ? {} : { container }) };
}

/** An embedded type that contains itself, directly or through others, could never be written out. */
function reportEmbeddedCycles(schema: ModelSchema, diagnostics: DiagnosticList): void {
  const state = new Map<string, 'visiting' | 'done'>();
  const reported = new Set<string>();
  const visit = (type: ModelDefinition, path: string[]): void => {
    state.set(type.name, 'visiting');
    for (const field of type.fields) {
      if (field.type !== 'embedded' || !field.embedded) continue;
      const next = schema.embedded.get(field.embedded);
      if (!next) continue;
      const s = state.get(next.name);
      if (s === 'visiting') {
        const trail = [...path, type.name];
        const cycle = [...trail.slice(trail.indexOf(next.name)), next.name];
        const key = cycle.slice(0, -1).sort().join(',');
        if (!reported.has(key)) {
          reported.add(key);
          diagnostics.at('error', 'LW_MODEL_EMBEDDED_CYCLE', `embedded types contain each other (${cycle.join(' → ')}): make "${field.name}" a link to a model, or remove it`, field.at.file, field.at);
        }
      } else if (s === undefined) {
        visit(next, [...path, type.name]);
      }
    }
    state.set(type.name, 'done');
  };
  for (const model of [...schema.models.values(), ...schema.embedded.values()]) {
    if (state.get(model.name) === undefined) visit(model, []);
  }
}
