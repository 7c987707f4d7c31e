/**
 * Model-backed path parameters (docs/routing.md "Dynamic segments", docs/request.md
 * "`field:`: a record"): a `{param}` whose 🔗.yaml says
 * `field: 📦.Task.id` (or a `uid` field) names a record. Before the endpoint runs:
 *
 * - a value that names no record answers 404, through the nearest ⚡NotFound.html;
 * - a contained record must belong to the container named earlier on the path
 *   (`/lists/{list}/notes/{note}`): another list's note is not found either;
 * - an old value of a `uid` field answers 301 (308 for a write) to the same URL with the current value;
 * - otherwise the endpoint runs, knowing each parameter's record id (a uid parameter is a link
 *   to the record, like an id parameter).
 */
import type { ParamValue } from '../../router/index.js';
import { ROW } from '../../script/index.js';
import { then } from '../../shared/index.js';
import type { DataSession } from '../../store/index.js';
import { notFound, storeFailed, storeUnavailable } from '../endpoint/answers.js';
import type { AppData } from '../services/data.js';
import type { Endpoint, Reply, RequestInfo } from '../endpoint/endpoint.js';
import { MODEL_FIELD, STATIC_FIELD, type ParamDefinition } from '../definitions/params.js';
import type { StaticData } from '../services/static-data.js';

interface Backed {
  param: ParamValue;
  model: string;
  field: string;
}

/** The id and the row (as the store reads it: id, created, modified, container, fields…) of each parameter. */
interface Resolved {
  ids: Map<ParamValue, string>;
  rows: Map<ParamValue, unknown[]>;
}

type Resolution = Reply | Resolved;

/** The model-backed parameters of an app's endpoints (a step of the pipeline, pipeline.ts). */
export interface ModelParams {
  data: AppData;
  paramDef(p: ParamValue): ParamDefinition | undefined;
}

/**
 * Step 4 of the pipeline: resolves the request's model-backed parameters (one indexed lookup
 * each) into `req.paramIds` and `req.paramRows`, or answers (404, a redirect from an old uid, 503).
 */
export function passModelParams(step: ModelParams, req: RequestInfo): Reply | undefined | Promise<Reply | undefined> {
  let backed: Backed[] | undefined;
  for (const p of req.params) {
    const def = step.paramDef(p);
    const m = def?.form === 'field' ? MODEL_FIELD.exec(def.field) : null;
    if (m) (backed ??= []).push({ param: p, model: m[1]!, field: m[2]! });
  }
  if (!backed) return undefined;
  const done = (r: Resolution): Reply | undefined => {
    if (!('ids' in r)) return r;
    if (req.paramIds) for (const [p, id] of req.paramIds) if (!r.ids.has(p)) r.ids.set(p, id);
    req.paramIds = r.ids;
    req.paramRows = r.rows;
    return undefined;
  };
  try {
    const r = resolve(step.data, req, backed);
    return r instanceof Promise ? r.then(done, storeFailed) : done(r);
  } catch (e) {
    return storeFailed(e);
  }
}

const NOT_FOUND: Reply = notFound();

function resolve(data: AppData, req: RequestInfo, backed: Backed[]): Resolution | Promise<Resolution> {
  const store = data.store;
  if (!store) return storeUnavailable();
  const session = store.read('a path parameter');
  const ids = new Map<ParamValue, string>();
  const rows = new Map<ParamValue, unknown[]>();
  const byModel = new Map<string, string>();
  const step = (i: number): Resolution | Promise<Resolution> => {
    for (; i < backed.length; i++) {
      const { param, model, field } = backed[i]!;
      const found = session.findRecord(model, field, param.value);
      const use = (row: unknown[] | undefined): Resolution | Promise<Resolution> | undefined => {
        if (!row) return field === 'id' ? NOT_FOUND : oldUid(session, req, param, model, field);
        const id = String(row[ROW.id]);
        const container = data.schema.models.get(model)?.container;
        const expected = container === undefined ? undefined : byModel.get(container);
        if (expected !== undefined && row[ROW.container] !== expected) return NOT_FOUND;
        ids.set(param, id);
        rows.set(param, row);
        byModel.set(model, id);
        return undefined;
      };
      if (found instanceof Promise) {
        const next = i + 1;
        return found.then((row) => use(row) ?? step(next));
      }
      const r = use(found);
      if (r !== undefined) return r;
    }
    return { ids, rows };
  };
  return step(0);
}

/** An old uid: 301 to the same URL with the current value in that segment; else 404. */
function oldUid(session: DataSession, req: RequestInfo, param: ParamValue, model: string, field: string): Reply | Promise<Reply> {
  return then(session.oldUid(model, field, param.value), (id) => {
    if (id === undefined) return NOT_FOUND;
    return then(session.fieldOf(model, id, field), (current) => {
      if (typeof current !== 'string' || current === param.value) return NOT_FOUND;
      const segments = req.path.split('/');
      // The parameter's segment: a {param} directory is the last part of its source directory;
      // a {param}.html file is the segment after its directory.
      const dirParts = param.dir.split('/').filter(Boolean);
      const index = 1 + (dirParts[dirParts.length - 1] === `{${param.name}}` ? dirParts.length - 1 : dirParts.length);
      if (segments[index] !== param.value) return NOT_FOUND;
      segments[index] = current;
      const location = segments.map(encodeURIComponent).join('/') + (req.query ? '?' + req.query : '');
      // 301 (docs/routing.md "Dynamic segments") for reads; 308 keeps the method and body of a write.
      return { type: 'redirect', status: req.method === 'GET' || req.method === 'HEAD' ? 301 : 308, location };
    });
  });
}

/**
 * Static-backed path parameters (`field: 🗄.Article.uid`, docs/content.md "Pages per document"): the
 * same contract, answered from the documents read at load — no store, no wait. An unknown value
 * answers 404; a legacy uid (a document's front-matter `uid:` that differs from its path) answers
 * 301 (308 for a write) to the document's current URL.
 */
export class StaticParams {
  /** What each parameter definition names, worked out once. */
  readonly #named = new WeakMap<ParamDefinition, { model: string; field: string; byId: boolean } | null>();

  constructor(
    readonly content: StaticData,
    readonly paramDef: (p: ParamValue) => ParamDefinition | undefined,
  ) {}

  backing(def: ParamDefinition | undefined): { model: string; field: string; byId: boolean } | null {
    if (def === undefined) return null;
    let b = this.#named.get(def);
    if (b === undefined) {
      const m = def.form === 'field' ? STATIC_FIELD.exec(def.field) : null;
      b = m ? { model: m[1]!, field: m[2]!, byId: m[2] === 'id' || isPathUid(this.content, m[1]!, m[2]!) } : null;
      this.#named.set(def, b);
    }
    return b;
  }
}

/** Step 3 of the pipeline: the static-backed parameters' document ids into `req.paramIds`, or an answer (404, 301/308). */
export function passStaticParams(step: StaticParams, req: RequestInfo): Reply | undefined {
  const content = step.content;
  for (const p of req.params) {
    const b = step.backing(step.paramDef(p));
    if (b === null) continue;
    const { model, field } = b;
    const row = b.byId ? content.index.row(model, p.value) : content.index.select({ m: model, w: [[field, 'eq', p.value]], l: 1 })[0];
    if (!row) {
      const current = content.aliases.get(model)?.get(p.value);
      return current === undefined ? NOT_FOUND : redirectTo(req, p, current);
    }
    // The id is the value itself for an id or path-uid parameter (the usual case): nothing to pass.
    if (row[ROW.id] !== p.value) (req.paramIds ??= new Map()).set(p, String(row[ROW.id]));
  }
  return undefined;
}

/** Whether `field` of a static model is its path uid (the document id). */
export function isPathUid(content: StaticData, model: string, field: string): boolean {
  const f = content.schema.models.get(model)?.fields.find((x) => x.name === field);
  return f?.document === 'uid' && f.path === true;
}

/** The same URL with the parameter's segment(s) replaced by `current` (a path uid may span segments). */
function redirectTo(req: RequestInfo, param: ParamValue, current: string): Reply {
  // req.path is decoded; the value sits at its end (a single-file parameter is the last part).
  const at = req.path.lastIndexOf('/' + param.value);
  if (at === -1) return NOT_FOUND;
  const path = req.path.slice(0, at + 1) + current + req.path.slice(at + 1 + param.value.length);
  const location = path.split('/').map(encodeURIComponent).join('/') + (req.query ? '?' + req.query : '');
  return { type: 'redirect', status: req.method === 'GET' || req.method === 'HEAD' ? 301 : 308, location };
}
