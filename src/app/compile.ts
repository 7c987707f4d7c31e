/**
 * Compiling one routed file into an Endpoint. This is where the compilers (template, script, csp)
 * are wired to the loader; the HTTP layer only ever sees the resulting endpoints.
 */
import type { DiagnosticList } from '../diag/index.js';
import { formatPattern, type RouteSpec } from '../router/index.js';
import type { SourceTree } from '../shared/index.js';
import type { ClassifiedFile } from './classify.js';
import type { Asset, Endpoint, Reply, RequestInfo } from './endpoint.js';
import type { AppOptions } from './load.js';
import type { WalkedFile } from './walk.js';

export interface CompileContext {
  tree: SourceTree;
  diagnostics: DiagnosticList;
  options: Required<AppOptions>;
}

/** A compiled ⚡NotFound.html: renders the body of a 404 answer. */
export interface ErrorPage {
  file: string;
  render(req: RequestInfo): Reply | Promise<Reply>;
}

export function compileRouteEndpoint(
  file: ClassifiedFile,
  spec: RouteSpec,
  _walked: WalkedFile,
  _ctx: CompileContext,
  makeAsset: () => Asset,
): Endpoint | undefined {
  const base = { method: spec.method, pattern: formatPattern(spec), file: file.path, dir: file.dir };
  switch (spec.kind) {
    case 'static':
    case 'page': {
      const asset = makeAsset();
      const reply: Reply = { type: 'asset', asset };
      return { ...base, kind: spec.kind, handle: () => reply };
    }
    case 'view':
    case 'script': {
      const reply: Reply = {
        type: 'error',
        status: 501,
        code: 'LW_HTTP_INTERNAL',
        message: `${spec.kind === 'view' ? 'Mustache views' : 'script endpoints'} are not available in this build`,
      };
      return { ...base, kind: spec.kind, handle: () => reply };
    }
  }
}

export function compileNotFound(file: ClassifiedFile, _ctx: CompileContext, makeAsset: () => Asset): ErrorPage | undefined {
  const asset = makeAsset();
  const reply: Reply = { type: 'asset', asset, status: 404 };
  return { file: file.path, render: () => reply };
}
