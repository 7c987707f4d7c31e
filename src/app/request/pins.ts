/**
 * Pinned URLs written absolute (docs/assets.md "Pinned files"): the page pass writes a `📌` file's
 * URL after PIN_ORIGIN (assets/catalog.ts); an answer of a page that has one gets the origin of
 * the request there — its scheme and host as Laneway reads them (`Request.base` of '🔗': the
 * connection, or a trusted proxy's headers; a host that is not a host name is left out, for
 * `localhost`). Only pages whose files name a `📌` pass here; an origin's answer of a page that is
 * the same for every request (a plain page, a cached content page) is made once and kept.
 */
import { PIN, PIN_ORIGIN } from '../../assets/index.js';
import { strongEtag, then, WebSafe } from '../../shared/index.js';
import type { CompiledView } from '../../template/index.js';
import type { Consumer, SupplierFile, SupplierIndex } from '../definitions/suppliers.js';
import { clientOf, type Reply, type RequestInfo } from '../endpoint/endpoint.js';

/** What of the app's modules (scope.ts ModuleSystem) finds the HTML suppliers a view calls. */
interface Suppliers {
  suppliers: Pick<SupplierIndex, 'resolve'>;
  code: ReadonlyMap<string, { view?: CompiledView }>;
}

/** Origins whose answers are kept per page (beyond them, each answer is written again). */
const KEPT_ORIGINS = 8;

/** The origin a pinned URL starts with. */
export function originOf(req: RequestInfo): string {
  const client = clientOf(req);
  return `${client.proto}://${client.host || 'localhost'}`;
}

/**
 * Whether a view may write a pinned URL: one of its files (itself, partials, layouts) names a `📌`,
 * or an HTML supplier it imports from does (its output keeps PIN_ORIGIN for the page to fill: a
 * page kept for every request, a content page, never holds one request's origin).
 */
export function viewUsesPins(view: CompiledView, consumer: Consumer, modules: Suppliers, seen = new Set<string>()): boolean {
  if (view.templates.some((t) => t.source.includes(PIN))) return true;
  for (const i of view.imports) {
    if (i.module !== '📤') continue;
    const supplier = modules.suppliers.resolve(consumer, i.name)?.supplier;
    if (supplier?.kind !== 'html-supplier' || seen.has(supplier.path)) continue;
    seen.add(supplier.path);
    const code = modules.code.get(supplier.path);
    if (code?.view && viewUsesPins(code.view, { type: 'supplier', supplier }, modules, seen)) return true;
  }
  return false;
}

const supplierPins = new WeakMap<CompiledView, boolean>();

/**
 * An HTML supplier's function as a script gets it (docs/suppliers.md "HTML suppliers"): when the
 * supplier writes pinned URLs, its HTML has the request's origin in them.
 */
export function forScripts(render: unknown, view: CompiledView, supplier: SupplierFile, modules: Suppliers, req: RequestInfo): unknown {
  let pins = supplierPins.get(view);
  if (pins === undefined) supplierPins.set(view, (pins = viewUsesPins(view, { type: 'supplier', supplier }, modules)));
  if (!pins || typeof render !== 'function') return render;
  const origin = originOf(req);
  return (arg: unknown) => then((render as (a: unknown) => WebSafe | Promise<WebSafe>)(arg), (w) => new WebSafe(withOrigin(w.html, origin)));
}

/** `text` with the origin in every pinned URL. */
export function withOrigin(text: string, origin: string): string {
  return text.replaceAll(PIN_ORIGIN, origin);
}

/** A page's handler whose answers get the request's origin in their pinned URLs. */
export function absolutePins(handle: (req: RequestInfo) => Reply | Promise<Reply>): (req: RequestInfo) => Reply | Promise<Reply> {
  const kept = new WeakMap<Reply, Map<string, Reply>>();
  return (req) =>
    then(handle(req), (reply) => {
      if (reply.type !== 'body') return reply;
      const origin = originOf(req);
      let byOrigin = kept.get(reply);
      const hit = byOrigin?.get(origin);
      if (hit) return hit;
      const body = typeof reply.body === 'string' ? reply.body : reply.body.toString('utf8');
      if (!body.includes(PIN_ORIGIN)) return reply;
      const text = withOrigin(body, origin);
      // An ETag made before (a cached page) is the hash of that body: this one has its own.
      const out: Reply = typeof reply.etag === 'string' ? { ...reply, body: text, etag: strongEtag(text) } : { ...reply, body: text };
      // Kept only for an answer given again (the same object, with its ETag: a cached page).
      if (typeof reply.etag === 'string') {
        if (!byOrigin) kept.set(reply, (byOrigin = new Map()));
        if (byOrigin.size < KEPT_ORIGINS) byOrigin.set(origin, out);
      }
      return out;
    });
}

/** A plain page's answer per origin (`make` builds it from the page's text for one origin). */
export function pinnedPage(make: (html: string) => Reply, html: string): (req: RequestInfo) => Reply {
  const kept = new Map<string, Reply>();
  return (req) => {
    const origin = originOf(req);
    const hit = kept.get(origin);
    if (hit) return hit;
    const reply = make(withOrigin(html, origin));
    if (kept.size < KEPT_ORIGINS) kept.set(origin, reply);
    return reply;
  };
}
