/**
 * Suppliers (`📤`, docs/suppliers.md): which supplier a name imported from '📤'
 * comes from, decided at load for every consumer (endpoint, view, supplier).
 *
 * - A `📤/` directory serves its parent directory and everything below it.
 * - The nearest level wins: a deeper supplier shadows an ancestor's export of the same name.
 * - Two exports of one name at the same level are a build error.
 * - Endpoint-specific: `📤/<route>.js` beside an endpoint whose route name is `<route>`
 *   (`index.html` → `index`, `settings.html` and `🖥settings.js` → `settings`) is visible to that
 *   endpoint only (docs/suppliers.md "Endpoint-specific suppliers").
 * - Pinned: `📤/📌<name>.js` makes the view `<name>.html` beside it see only that file's exports.
 * - A supplier importing a name it exports itself gets the next provider up (it can wrap it).
 * - Import cycles between suppliers are build errors.
 */
import type { DiagnosticList } from '../../diag/index.js';

export interface SupplierFile {
  path: string;
  /** The directory the supplier serves (the parent of its `📤/`), '' for the root. */
  level: string;
  /** File name without extension, `📌` and `{}`. */
  base: string;
  /** `form-supplier`: a form file `📤/⏳Name.yaml`, exporting `Name`. */
  kind: 'supplier' | 'function-supplier' | 'html-supplier' | 'form-supplier';
  pinned: boolean;
  /** Visible only to the endpoint with this route name at `level`. */
  endpointSpecific: boolean;
  exports: string[];
  /** Names this supplier imports from '📤'. */
  imports: string[];
}

/** Who is importing: an endpoint or view at `dir` (route name `route`), or a supplier. */
export type Consumer =
  | { type: 'endpoint'; dir: string; route?: string; view: boolean; file: string }
  | { type: 'supplier'; supplier: SupplierFile };

export interface Provider {
  supplier: SupplierFile;
  name: string;
}

export class SupplierIndex {
  readonly byPath = new Map<string, SupplierFile>();
  /** level → export name → supplier (shared suppliers only). */
  readonly #levels = new Map<string, Map<string, SupplierFile>>();
  /** `level/route` → endpoint-specific suppliers. */
  readonly #specific = new Map<string, SupplierFile[]>();
  /** `level/name` → pinned supplier. */
  readonly #pinned = new Map<string, SupplierFile>();

  /** Whether some supplier of the app, in scope of a consumer or not, exports `name`. */
  exportsAnywhere(name: string): boolean {
    for (const s of this.byPath.values()) if (s.exports.includes(name)) return true;
    return false;
  }

  constructor(suppliers: SupplierFile[], diagnostics: DiagnosticList) {
    for (const s of suppliers) {
      this.byPath.set(s.path, s);
      if (s.pinned) {
        this.#pinned.set(`${s.level}/${s.base}`, s);
      } else if (s.endpointSpecific) {
        const key = `${s.level}/${s.base}`;
        this.#specific.set(key, [...(this.#specific.get(key) ?? []), s]);
      } else {
        let level = this.#levels.get(s.level);
        if (!level) this.#levels.set(s.level, (level = new Map()));
        for (const name of s.exports) {
          const other = level.get(name);
          if (other) {
            diagnostics.error(
              'LW_SUPPLIER_DUPLICATE',
              `"${name}" is exported by both ${other.path} and ${s.path} at the same level: rename one, or move one to a subdirectory to shadow the other`,
              s.path,
            );
          } else {
            level.set(name, s);
          }
        }
      }
    }
    this.#checkCycles(suppliers, diagnostics);
  }

  /** The supplier that provides `name` to `consumer`, or undefined when none does. */
  resolve(consumer: Consumer, name: string): Provider | undefined {
    if (consumer.type === 'endpoint') {
      if (consumer.view && consumer.route !== undefined) {
        const pinned = this.#pinned.get(`${consumer.dir}/${consumer.route}`);
        if (pinned) return pinned.exports.includes(name) ? { supplier: pinned, name } : undefined;
      }
      if (consumer.route !== undefined) {
        for (const s of this.#specific.get(`${consumer.dir}/${consumer.route}`) ?? []) {
          if (s.exports.includes(name)) return { supplier: s, name };
        }
      }
      return this.#upFrom(consumer.dir, name);
    }
    return this.#upFrom(consumer.supplier.level, name, consumer.supplier);
  }

  #upFrom(dir: string, name: string, self?: SupplierFile): Provider | undefined {
    let level: string | undefined = dir;
    while (level !== undefined) {
      const s = this.#levels.get(level)?.get(name);
      if (s && s !== self) return { supplier: s, name };
      level = level === '' ? undefined : level.slice(0, level.lastIndexOf('/'));
    }
    return undefined;
  }

  #checkCycles(suppliers: SupplierFile[], diagnostics: DiagnosticList): void {
    const state = new Map<SupplierFile, 'visiting' | 'done'>();
    const visit = (s: SupplierFile, chain: SupplierFile[]): void => {
      if (state.get(s) === 'done') return;
      if (state.get(s) === 'visiting') {
        const cycle = [...chain.slice(chain.indexOf(s)), s].map((x) => x.path).join(' → ');
        diagnostics.error('LW_SUPPLIER_CYCLE', `suppliers import each other in a cycle: ${cycle}; move the shared value into a third supplier`, s.path);
        return;
      }
      state.set(s, 'visiting');
      for (const name of s.imports) {
        const p = this.resolve({ type: 'supplier', supplier: s }, name);
        if (p) visit(p.supplier, [...chain, s]);
      }
      state.set(s, 'done');
    };
    for (const s of suppliers) visit(s, []);
  }
}

/** Route name of an endpoint file, as endpoint-specific and pinned suppliers use it. */
export function routeNameOf(fileName: string): string | undefined {
  if (fileName.endsWith('.html')) return fileName.slice(0, -'.html'.length);
  const m = /^(?:🖥|📮|❌|🖱|⏱)(.+)\.js$/u.exec(fileName);
  return m?.[1];
}
