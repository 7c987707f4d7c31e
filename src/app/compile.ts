/**
 * Compiling one routed file into an Endpoint. This is where the compilers (template, script) are
 * wired to the loader; the HTTP layer only ever sees the resulting endpoints.
 */
import type { DiagnosticList } from '../diag/index.js';
import { formatPattern, type RouteSpec } from '../router/index.js';
import { compileScript, outcomeToResponse } from '../script/index.js';
import type { SourceTree } from '../shared/index.js';
import { compileView, type CompiledView, type RenderOutput } from '../template/index.js';
import { hasTemplateMarker, type ClassifiedFile } from './classify.js';
import type { Asset, Endpoint, Reply, RequestInfo } from './endpoint.js';
import type { AppOptions } from './load.js';
import { importChecker, paramsInScope, RequestScope, type ModuleSystem } from './modules.js';
import { routeNameOf, type Consumer } from './suppliers.js';

export interface CompileContext {
  tree: SourceTree;
  diagnostics: DiagnosticList;
  options: Required<AppOptions>;
  modules: ModuleSystem;
  /** Runs `GET path` in-process (AJAX rerouting, SPEC "Script output"). */
  reroute(path: string, req: RequestInfo): Promise<Reply>;
}

/** A compiled ⚡NotFound.html: renders the body of a 404 answer. */
export interface ErrorPage {
  file: string;
  render(req: RequestInfo): Reply | Promise<Reply>;
}

const HTML = 'text/html; charset=utf-8';
const JSON_TYPE = 'application/json; charset=utf-8';

export function compileRouteEndpoint(file: ClassifiedFile, spec: RouteSpec, ctx: CompileContext, makeAsset: () => Asset): Endpoint | undefined {
  const base = { method: spec.method, pattern: formatPattern(spec), file: file.path, dir: file.dir };
  switch (spec.kind) {
    case 'static':
    case 'page': {
      const reply: Reply = { type: 'asset', asset: makeAsset() };
      return { ...base, kind: spec.kind, handle: () => reply };
    }
    case 'view': {
      const view = compileViewFor(file, ctx);
      if (!view) return undefined;
      const consumer = viewConsumer(file);
      return {
        ...base,
        kind: 'view',
        handle: (req) => renderView(view, consumer, ctx, req, 200),
      };
    }
    case 'script':
      return compileScriptEndpoint(file, base, ctx);
  }
}

function viewConsumer(file: ClassifiedFile): Consumer {
  return { type: 'endpoint', dir: file.dir, route: routeNameOf(file.name), view: true, file: file.path };
}

function fileParamOf(file: ClassifiedFile): string | undefined {
  return /^\{([^{}]+)\}\.html$/.exec(file.name)?.[1];
}

function compileViewFor(file: ClassifiedFile, ctx: CompileContext): CompiledView | undefined {
  const source = ctx.tree.read(file.path) ?? '';
  const check = importChecker(ctx.modules, viewConsumer(file), paramsInScope(file.dir, fileParamOf(file)));
  return compileView(file.path, source, { tree: ctx.tree, diagnostics: ctx.diagnostics, checkImport: (m, n) => check(m, n) });
}

/** Cache-Control of a rendered page (SPEC "Cache control", REFERENCE OQ-7). */
function cacheControlOf(view: CompiledView, out: RenderOutput): string {
  const seconds = out.cacheSeconds;
  if (view.usesMessages) {
    return seconds !== undefined ? `max-age=${seconds}, private` : 'no-cache, no-store, max-age=0, must-revalidate';
  }
  return seconds !== undefined ? `max-age=${seconds}` : 'no-cache';
}

function renderView(view: CompiledView, consumer: Consumer, ctx: CompileContext, req: RequestInfo, status: number): Reply | Promise<Reply> {
  const scope = new RequestScope(ctx.modules, req);
  const finish = (out: RenderOutput): Reply => {
    const headers = { 'Cache-Control': cacheControlOf(view, out) };
    // Render-If falsy: 200 with an empty body (SPEC "Conditional render").
    if (out.empty) return { type: 'body', status: 200, contentType: HTML, body: '', headers };
    return { type: 'body', status, contentType: HTML, body: out.html, headers, etag: status === 200 };
  };
  const out = view.render(scope.renderInput(consumer));
  return out instanceof Promise ? out.then(finish) : finish(out);
}

function compileScriptEndpoint(
  file: ClassifiedFile,
  base: Pick<Endpoint, 'method' | 'pattern' | 'file' | 'dir'>,
  ctx: CompileContext,
): Endpoint | undefined {
  const source = ctx.tree.read(file.path) ?? '';
  const consumer: Consumer = { type: 'endpoint', dir: file.dir, route: routeNameOf(file.name), view: false, file: file.path };
  const script = compileScript(file.path, source, {
    kind: 'endpoint',
    diagnostics: ctx.diagnostics,
    checkImport: importChecker(ctx.modules, consumer, paramsInScope(file.dir)),
  });
  if (!script) return undefined;
  return {
    ...base,
    kind: 'script',
    async handle(req) {
      const scope = new RequestScope(ctx.modules, req);
      const outcome = await script.run({
        importValue: (m, n) => scope.value(consumer, m, n),
        request: { path: req.path, url: scope.request().url },
      });
      const answer = outcomeToResponse(outcome, {
        method: req.method,
        path: req.path,
        acceptsJson: req.acceptsJson,
        ajax: req.headers['x-requested-with'] === 'XMLHttpRequest',
      });
      switch (answer.kind) {
        case 'json':
          return { type: 'body', status: answer.status, contentType: JSON_TYPE, body: answer.body, headers: { 'Cache-Control': 'no-cache' }, etag: answer.status === 200 && req.method === 'GET' };
        case 'redirect':
          return { type: 'redirect', status: answer.status, location: answer.location };
        case 'reroute':
          return ctx.reroute(answer.path, req);
        case 'error': {
          if (answer.status >= 500) {
            const error = outcome.kind === 'error' || outcome.kind === 'limit' ? outcome.error : undefined;
            ctx.modules.log(`${file.path}: ${error?.message ?? answer.message}`, { id: req.id, code: answer.code, file: file.path });
          }
          return { type: 'error', status: answer.status, code: answer.code, message: answer.message };
        }
      }
    },
  };
}

export function compileNotFound(file: ClassifiedFile, ctx: CompileContext, makeAsset: () => Asset): ErrorPage | undefined {
  const source = ctx.tree.read(file.path) ?? '';
  if (hasTemplateMarker(source)) {
    const view = compileViewFor(file, ctx);
    if (!view) return undefined;
    const consumer = viewConsumer(file);
    return { file: file.path, render: (req) => renderView(view, consumer, ctx, req, 404) };
  }
  const reply: Reply = { type: 'asset', asset: makeAsset(), status: 404 };
  return { file: file.path, render: () => reply };
}
