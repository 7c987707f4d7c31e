/**
 * Permissions of an endpoint (docs/permissions.md, "Endpoint configuration"), for apps with users:
 *
 * - every endpoint's requests carry its `permit`: the file (whose directory's 👤.yaml scope
 *   applies) and the roles an endpoint configuration (`📮close.yaml`, `👤: {as: Role}`) runs it
 *   as. The data layer (data.ts) checks each model operation of the request against them;
 * - `👤: {only: Role}` refuses, with 403, a visitor who holds none of the roles on a profile:
 *   top-level, or in a container the request's path names (`/projects/{project}/…`).
 *
 * The roles of the visitor are read only when something needs them, except for `only` (checked
 * before the script runs) and, on PostgreSQL, a signed-in user's top-level roles and the roles in
 * the containers of path parameters (so that checks made where nothing can wait find them).
 */
import { permissionScope, RequestPermissions, type AuthConfig, type PermissionScope } from '../../auth/index.js';
import type { ParamValue } from '../../router/index.js';
import type { DataSession } from '../../store/index.js';
import { onlyRoles, storeFailed, storeUnavailable } from '../endpoint/answers.js';
import type { AppData } from '../services/data.js';
import type { EndpointPermit, Reply, RequestInfo } from '../endpoint/endpoint.js';

/** What the permissions step of an endpoint knows at load (a step of the pipeline, pipeline.ts). */
export interface EndpointPermissions {
  permit: EndpointPermit;
  scope: PermissionScope;
  only: readonly string[];
  data: AppData;
  paramModel(p: ParamValue): string | undefined;
}

export function endpointPermissions(permit: EndpointPermit, only: readonly string[], data: AppData, config: AuthConfig, paramModel: (p: ParamValue) => string | undefined): EndpointPermissions {
  return { permit, scope: permissionScope(config, permit.file), only, data, paramModel };
}

/**
 * Step 5 of the pipeline: gives the request its `permit`, and, when something needs them before
 * the endpoint runs, its `permissions`; answers 403 to a visitor without an `only` role, 503 when
 * the store fails.
 */
export function passPermissions(step: EndpointPermissions, req: RequestInfo): Reply | undefined | Promise<Reply | undefined> {
  const { permit, only, data } = step;
  req.permit = permit;
  const rows = req.paramRows;
  const store = data.store;
  // PostgreSQL answers with Promises: a signed-in user's roles are read before the endpoint
  // runs, so that checks made where nothing can wait (a field read, Me.avatar()) find them.
  const early = only.length > 0 || (store?.engine.dialect === 'postgres' && (Boolean(req.user) || (rows !== undefined && rows.size > 0)));
  if (!early) return undefined;
  if (!store) return storeUnavailable();
  let session: DataSession | undefined;
  const permissions = new RequestPermissions(step.scope, req.user?.id ?? null, permit.as, data.profileRoles(() => (session ??= store.read('a permission check'))));
  const containers: string[] = [];
  for (const [p, row] of rows ?? []) {
    const model = step.paramModel(p);
    if (model !== undefined) containers.push(...data.containersOf(model, row));
  }
  const decide = (): Reply | undefined => {
    if (only.length && !permissions.holds(only, containers)) return onlyRoles(only);
    req.permissions = permissions;
    return undefined;
  };
  try {
    const ready = permissions.prepare(containers);
    return ready instanceof Promise ? ready.then(decide, storeFailed) : decide();
  } catch (e) {
    return storeFailed(e);
  }
}
