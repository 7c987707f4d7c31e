/**
 * Compiling the suppliers of an app. Two passes: the first learns what each supplier exports and
 * imports (with a throwaway diagnostic list and every import accepted), which is what the
 * supplier index needs; the second compiles each one for real, checking its imports against
 * that index and reporting to the load's diagnostics.
 */
import { parseFormFile } from '../../forms/index.js';
import { DiagnosticList } from '../../diag/index.js';
import { paramName } from '../../router/index.js';
import { compileScript } from '../../script/index.js';
import { compileView } from '../../template/index.js';
import type { ClassifiedFile } from '../definitions/classify.js';
import type { CompileContext } from '../request/endpoints.js';
import { importChecker, paramModels, paramsInScope, scriptModelOptions, viewMemberChecker, viewRecords, withPropertyChecks, type SupplierCode } from '../request/scope.js';
import { routeNameOf, SupplierIndex, type SupplierFile } from '../definitions/suppliers.js';
import { settleUnit, UnitNeeds } from '../definitions/degrade.js';

export function compileSuppliers(files: ClassifiedFile[], ctx: CompileContext): SupplierIndex {
  const { tree, modules } = ctx;
  // Route names of endpoints per directory, for endpoint-specific suppliers (📤/<route>.js).
  const routesByDir = new Map<string, Set<string>>();
  for (const f of files) {
    if (f.hidden && f.kind !== 'not-found') continue;
    if (f.kind !== 'view' && f.kind !== 'page' && f.kind !== 'script') continue;
    const route = routeNameOf(f.name);
    if (route === undefined) continue;
    routesByDir.set(f.dir, (routesByDir.get(f.dir) ?? new Set()).add(route));
  }

  // Pass 1: exports and imports.
  const suppliers: Array<{ file: ClassifiedFile; info: SupplierFile; source: string }> = [];
  for (const f of files) {
    if (f.kind !== 'supplier' && f.kind !== 'function-supplier' && f.kind !== 'html-supplier' && f.kind !== 'form-definition') continue;
    const source = tree.read(f.path) ?? '';
    if (f.kind === 'form-definition') {
      // 📤/⏳NewTask.yaml exports NewTask (a form type).
      const base = f.name.slice('⏳'.length, -'.yaml'.length);
      const level = f.dir.slice(0, f.dir.lastIndexOf('/'));
      const info: SupplierFile = { path: f.path, level, base, kind: 'form-supplier', pinned: false, endpointSpecific: false, exports: [base], imports: [] };
      suppliers.push({ file: f, info, source });
      continue;
    }
    const level = f.dir.slice(0, f.dir.lastIndexOf('/'));
    let base = f.name.slice(0, f.name.lastIndexOf('.'));
    if (base.startsWith('📌')) base = base.slice('📌'.length);
    if (base.startsWith('{}')) base = base.slice(2);
    const scratch = new DiagnosticList();
    let exports: string[] = [];
    let imports: string[] = [];
    if (f.kind === 'html-supplier') {
      exports = [base];
      const view = compileView(f.path, source, { tree, diagnostics: scratch });
      imports = (view?.imports ?? []).filter((i) => i.module === '📤').map((i) => i.name);
    } else {
      const script = compileScript(f.path, source, { kind: f.kind, diagnostics: scratch });
      exports = (script?.exports ?? []).map((e) => e.exported);
      imports = (script?.imports ?? []).filter((i) => i.module === '📤').map((i) => i.name);
    }
    const info: SupplierFile = {
      path: f.path,
      level,
      base,
      kind: f.kind,
      pinned: f.pinned ?? false,
      endpointSpecific: !f.pinned && (routesByDir.get(level)?.has(base) ?? false),
      exports,
      imports,
    };
    suppliers.push({ file: f, info, source });
  }
  const index = new SupplierIndex(
    suppliers.map((s) => s.info),
    ctx.diagnostics,
  );
  modules.suppliers = index;

  // Pass 2: compile for real, each supplier after those it imports from, so that one needing a
  // feature Laneway does not have makes its consumers degrade too (definitions/degrade.ts).
  modules.degraded = new Map();
  for (const { file, info, source } of importOrder(suppliers, index)) {
    // An endpoint-specific supplier of a `{name}.html` page also sees that page's parameter.
    const fileParam = info.endpointSpecific ? paramName(info.base) : undefined;
    const needs = new UnitNeeds();
    const list = ctx.diagnostics;
    const start = list.items.length;
    const check = importChecker(modules, { type: 'supplier', supplier: info }, paramsInScope(info.level, fileParam), needs);
    let code: SupplierCode | undefined;
    if (info.kind === 'form-supplier') {
      const data = modules.data;
      const form = data ? parseFormFile(file.path, source, data.schema, list) : undefined;
      if (!data) list.error('LW_FORM_MODEL', 'a form fills a model: define the model in /📦/ first (for example /📦/🌐Task.yaml)', file.path);
      if (form && data) code = { file: info, form, formType: data.addForm(info.path, form) };
    } else if (info.kind === 'html-supplier') {
      // The page pass runs before code generation: it marks the JSON escaping of data blocks.
      const view = compileView(file.path, source, { tree, diagnostics: list, checkImport: (m, n) => check(m, n), checkMember: withPropertyChecks(modules, viewMemberChecker(modules)), records: viewRecords(modules), prepare: (t) => ctx.csp.prepare(t) });
      if (view) code = { file: info, view };
    } else {
      const script = compileScript(file.path, source, { kind: info.kind, diagnostics: list, checkImport: check, ...scriptModelOptions(modules, 'a supplier', paramModels(modules, info.level, fileParam)) });
      if (script) code = { file: info, script };
    }
    const features = settleUnit(list, start, needs, `${info.path} supplies nothing, and every file that imports from it answers 501 Not Implemented`);
    if (features) modules.degraded.set(info.path, features.join(' and '));
    else if (code) modules.code.set(info.path, code);
  }
  return index;
}

/**
 * The suppliers, each after the suppliers it imports from (in the order found; a cycle, an error
 * of the index, is broken where it is met).
 */
function importOrder<T extends { info: SupplierFile }>(suppliers: T[], index: SupplierIndex): T[] {
  const byPath = new Map(suppliers.map((s) => [s.info.path, s]));
  const done = new Set<string>();
  const order: T[] = [];
  const visit = (s: T): void => {
    if (done.has(s.info.path)) return;
    done.add(s.info.path);
    for (const name of s.info.imports) {
      const from = index.resolve({ type: 'supplier', supplier: s.info }, name)?.supplier.path;
      const dep = from === undefined ? undefined : byPath.get(from);
      if (dep) visit(dep);
    }
    order.push(s);
  };
  for (const s of suppliers) visit(s);
  return order;
}
