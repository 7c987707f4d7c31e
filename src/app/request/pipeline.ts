/**
 * The endpoint pipeline (docs/architecture.md "A request, step by step"). Every routed answer of an
 * app is a `Route`: its endpoint and the steps it needs before it, decided once at load
 * (load.ts `routed`). A step an endpoint does not need is absent and costs one `undefined`
 * check; a static file outside `auth: required` has no step at all.
 *
 * The steps, in the order `runRoute` takes them:
 *
 *   1. the parent's sign-in: a nested site in an `auth: required` area of the site it is mounted
 *      in, and without users of its own, is gated by that site's sign-in (auth.ts);
 *   2. the sign-in gate of the file's own area (`auth: required` or `optional`): `req.user`;
 *   3. static-backed path parameters (`field: 🗄.Article.uid`): `req.paramIds` (model-params.ts);
 *   4. model-backed path parameters (`field: 📦.Task.id`): `req.paramIds`, `req.paramRows`;
 *   5. permissions (apps with users): `req.permit`, and `req.permissions` when needed first;
 *   6. the endpoint itself (a static file, a view, a page, a script, an event stream, a redirect);
 *   7. on the way out, a nested site's answer written for its mount (mounts.ts `mountReply`):
 *      of steps 2 to 6, since step 1 writes its answer for the mount itself.
 *
 * A step either lets the request go on (it returns undefined, having set its fields of the
 * request) or answers. The request is one object for the whole pipeline: steps set its fields,
 * they never copy it.
 */
import { passSignIn, type SignInGate } from '../services/auth.js';
import type { Endpoint, Reply, RequestInfo } from '../endpoint/endpoint.js';
import { passModelParams, passStaticParams, type ModelParams, type StaticParams } from './model-params.js';
import { mountReply } from './mounts.js';
import { passPermissions, type EndpointPermissions } from './permissions.js';

/** An endpoint and the steps before it (see above); what the router maps a request to. */
export interface Route {
  endpoint: Endpoint;
  /** 1. */
  parentSignIn?: SignInGate;
  /** 2. */
  signIn?: SignInGate;
  /** 3. */
  staticParams?: StaticParams;
  /** 4. */
  modelParams?: ModelParams;
  /** 5. */
  permissions?: EndpointPermissions;
  /** 7. The mount's prefix (`/app`) and the rewrites made so far of answers kept in memory. */
  mount?: { prefix: string; pages: WeakMap<object, Reply> };
}

/** What a step returns: undefined to go on, or the answer. */
type Verdict = Reply | undefined | Promise<Reply | undefined>;

const enum Step {
  SignIn = 2,
  StaticParams = 3,
  ModelParams = 4,
  Permissions = 5,
  Endpoint = 6,
}

/** Runs a request through its route: steps 1 to 7. `req` is the request's own object, which the steps complete. */
export function runRoute(route: Route, req: RequestInfo): Reply | Promise<Reply> {
  // 1. The parent's sign-in.
  if (route.parentSignIn !== undefined) {
    const verdict = passSignIn(route.parentSignIn, req);
    if (verdict instanceof Promise) return verdict.then((r) => r ?? mounted(route, req));
    if (verdict !== undefined) return verdict;
  }
  return mounted(route, req);
}

/** Steps 2 to 6, and 7 on their answer. */
function mounted(route: Route, req: RequestInfo): Reply | Promise<Reply> {
  const reply = steps(route, req, Step.SignIn);
  const mount = route.mount;
  if (mount === undefined) return reply;
  return reply instanceof Promise ? reply.then((r) => mountReply(r, mount.prefix, mount.pages)) : mountReply(reply, mount.prefix, mount.pages);
}

/** Steps `from` to 6: each one present runs, in order, until one answers; then the endpoint. */
function steps(route: Route, req: RequestInfo, from: Step): Reply | Promise<Reply> {
  let verdict: Verdict;
  // 2. The sign-in gate of the file's area.
  if (from <= Step.SignIn && route.signIn !== undefined && (verdict = passSignIn(route.signIn, req)) !== undefined) return after(verdict, route, req, Step.StaticParams);
  // 3. Static-backed path parameters (answered from memory: never a Promise).
  if (from <= Step.StaticParams && route.staticParams !== undefined && (verdict = passStaticParams(route.staticParams, req)) !== undefined) return verdict;
  // 4. Model-backed path parameters.
  if (from <= Step.ModelParams && route.modelParams !== undefined && (verdict = passModelParams(route.modelParams, req)) !== undefined) return after(verdict, route, req, Step.Permissions);
  // 5. Permissions.
  if (from <= Step.Permissions && route.permissions !== undefined && (verdict = passPermissions(route.permissions, req)) !== undefined) return after(verdict, route, req, Step.Endpoint);
  // 6. The endpoint.
  return route.endpoint.handle(req);
}

/** A step's answer, or, once its wait settles without one, the steps from `next`. */
function after(verdict: Reply | Promise<Reply | undefined>, route: Route, req: RequestInfo, next: Step): Reply | Promise<Reply> {
  return verdict instanceof Promise ? verdict.then((r) => r ?? steps(route, req, next)) : verdict;
}

/**
 * The router's value for a route: the endpoint itself when it needs no step (a public static file
 * answers its ready reply synchronously, with nothing in between); else the endpoint with its
 * steps in front, one object made here at load.
 */
export function routeEndpoint(route: Route): Endpoint {
  const { endpoint, parentSignIn, signIn, staticParams, modelParams, permissions, mount } = route;
  if (!parentSignIn && !signIn && !staticParams && !modelParams && !permissions && !mount) return endpoint;
  return { ...endpoint, handle: (req) => runRoute(route, req) };
}
