/**
 * Rendered content pages, kept per path, so that a document page costs about what a static file
 * costs (docs/content.md "Content pages are rendered once per path").
 *
 * A view is a **content page** when what it renders is fixed at load: it imports only static
 * models (`'🗄'`), properties (`'🎨'`), the manifest (`'🎛'`), `'util'` and path parameters by
 * name (`'🔗'`, not `Request`), in itself and in every partial and layout, and it shows no flash
 * messages. Its output then depends on the path alone — provided the path's parameters are not
 * backed by database models (`📦`), which is checked per request. Such a page is rendered the first
 * time a path is asked for and answered from memory afterwards, until the app is reloaded (a
 * reload compiles new endpoints, with empty caches). Errors and failed renders are never kept.
 *
 * The cache is bounded (entries and bytes); past the bound the oldest entries go.
 */
import { ownBytes, strongEtag } from '../../shared/index.js';
import type { CompiledView } from '../../template/index.js';
import type { Reply, RequestInfo } from '../endpoint/endpoint.js';
import { MODEL_FIELD, paramDefinitionOf, type ParamDefinition } from '../definitions/params.js';

const PURE_MODULES = new Set(['🗄', '🎨', '🎛', 'util']);
const MAX_ENTRIES = 5000;
const MAX_BYTES = 64 * 1024 * 1024;

/** Whether a view's output is fixed at load for a given path (see the top of this file). */
export function isContentPage(view: CompiledView): boolean {
  if (view.usesMessages || view.usesFormView) return false;
  return view.imports.every((i) => PURE_MODULES.has(i.module) || (i.module === '🔗' && i.name !== 'Request' && i.name !== '*'));
}

/** `render`, answered from memory for paths already rendered (see the top of this file). */
export function cachedByPath(
  render: (req: RequestInfo) => Reply | Promise<Reply>,
  params: ReadonlyMap<string, ParamDefinition>,
): (req: RequestInfo) => Reply | Promise<Reply> {
  const cache = new Map<string, Reply>();
  let bytes = 0;
  const keep = (path: string, rendered: Reply): Reply => {
    if (rendered.type !== 'body' || rendered.status !== 200) return rendered;
    // Kept as bytes with their ETag: answering from the cache encodes and hashes nothing.
    const body = typeof rendered.body === 'string' ? Buffer.from(rendered.body) : ownBytes(rendered.body);
    const etag = rendered.etag ? strongEtag(body) : undefined;
    const reply: Reply = { ...rendered, body, ...(etag === undefined ? {} : { etag }) };
    const size = body.length;
    while (cache.size > 0 && (cache.size >= MAX_ENTRIES || bytes + size > MAX_BYTES)) {
      const [oldest, old] = cache.entries().next().value!;
      cache.delete(oldest);
      bytes -= old.type === 'body' ? old.body.length : 0;
    }
    cache.set(path, reply);
    bytes += size;
    return reply;
  };
  return (req) => {
    for (const p of req.params) {
      const def = paramDefinitionOf(params as Map<string, ParamDefinition>, p);
      if (def?.form === 'field' && MODEL_FIELD.test(def.field)) return render(req);
    }
    const hit = cache.get(req.path);
    if (hit !== undefined) return hit;
    const r = render(req);
    return r instanceof Promise ? r.then((x) => keep(req.path, x)) : keep(req.path, r);
  };
}
