/**
 * Compiling one routed file into an Endpoint. This is where the compilers (template, script) are
 * wired to the loader; the HTTP layer only ever sees the resulting endpoints.
 */
import type { PagePolicy, PolicyCompiler } from '../../csp/index.js';
import { codeFrame, LanewayError, type Code, type DiagnosticList } from '../../diag/index.js';
import { formatPattern, paramName, type RouteSpec } from '../../router/index.js';
import { compileScript, outcomeToResponse, ScriptValue, type CompiledScript, type RunOutcome, type ScriptResponse } from '../../script/index.js';
import { then, type SourceTree } from '../../shared/index.js';
import { compileView, isTemplate, type CompiledView, type RenderOutput, type ViewRenderError } from '../../template/index.js';
import type { ClassifiedFile } from '../definitions/classify.js';
import type { Asset, Endpoint, FailureSite, Reply, ReplyHeaders, RequestInfo } from '../endpoint/endpoint.js';
import { effectsProblem, settleVisitor } from './visitors.js';
import { commitWrites } from './commit.js';
import { imageNotUploaded, internalError, notAvailable, overBudget, refused, scriptError, scriptSite, storeUnavailableLogged, withIdInJson } from '../endpoint/answers.js';
import { settleUnit, UnitNeeds } from '../definitions/degrade.js';
import { checkMailMessage, enqueueMail } from '../../mail/index.js';
import { attachImages } from '../../images/index.js';
import type { Flash } from '../../session/index.js';
import type { LimitRule } from '../../limits/index.js';
import type { Writer } from '../../store/index.js';
import { compileEventsEndpoint } from './events.js';
import { checkLimit } from './limits.js';
import type { LoadOptions } from '../definitions/options.js';
import { importChecker, paramModels, paramsInScope, RequestScope, scriptModelOptions, viewMemberChecker, viewRecords, withPropertyChecks, type ModuleSystem } from './scope.js';
import { routeNameOf, type Consumer } from '../definitions/suppliers.js';
import { cachedByPath, isContentPage } from './page-cache.js';
import { absolutePins, pinnedPage, viewUsesPins } from './pins.js';
import { PIN_ORIGIN } from '../../assets/index.js';
import type { CompiledUnit, UnitStore } from '../definitions/units.js';

export interface CompileContext {
  tree: SourceTree;
  diagnostics: DiagnosticList;
  options: LoadOptions;
  modules: ModuleSystem;
  /** The page pass (rewrites, inlining, checks) and the policies. */
  csp: PolicyCompiler;
  /** Runs `GET path` in-process (AJAX rerouting, docs/scripting.md "Completion value → response"). */
  reroute(path: string, req: RequestInfo): Promise<Reply>;
  /**
   * Compiled views and scripts kept from an earlier load (`laneway dev`, build-cache.ts): gives
   * the earlier result when nothing it depends on changed, else runs `compile`. Absent: every
   * file is compiled.
   */
  units?: UnitStore;
  /** The "not available" verdicts of the file being compiled (definitions/degrade.ts). */
  needs?: UnitNeeds;
}

/** `compile()`, or what `ctx.units` kept of it. */
function unitOf<K extends CompiledUnit['kind']>(file: ClassifiedFile, kind: K, ctx: CompileContext, compile: () => Extract<CompiledUnit, { kind: K }> | undefined): Extract<CompiledUnit, { kind: K }> | undefined {
  return ctx.units ? ctx.units.unit(file, kind, compile) : compile();
}

/** A view and the policy its responses carry, compiled (or kept from an earlier load). */
function viewUnitOf(file: ClassifiedFile, ctx: CompileContext): { view: CompiledView; policy: PagePolicy | undefined } | undefined {
  return unitOf(file, 'view', ctx, () => {
    const view = compileViewFor(file, ctx);
    return view && { kind: 'view', view, policy: policyOf(view, ctx) };
  });
}

/** A compiled ⚡NotFound.html: renders the body of a 404 answer. */
export interface ErrorPage {
  file: string;
  render(req: RequestInfo): Reply | Promise<Reply>;
}

const HTML = 'text/html; charset=utf-8';
const JSON_TYPE = 'application/json; charset=utf-8';

/** Makes a file's Asset; `body` replaces the file's bytes (a rewritten page). */
export type MakeAsset = (body?: Buffer) => Asset;

export function compileRouteEndpoint(file: ClassifiedFile, spec: RouteSpec, ctx: CompileContext, makeAsset: MakeAsset): Endpoint | undefined {
  const base = { method: spec.method, pattern: formatPattern(spec), file: file.path, dir: file.dir };
  switch (spec.kind) {
    case 'static': {
      const reply: Reply = { type: 'asset', asset: makeAsset() };
      return { ...base, kind: 'static', handle: () => reply };
    }
    case 'page':
      return { ...base, kind: 'page', handle: pageHandler(file, ctx, makeAsset, 200) };
    case 'view': {
      let degraded: string[] | undefined;
      const unit = viewUnitOf(file, degradable(ctx, (f) => (degraded = f)).ctx);
      if (degraded) return { ...base, kind: 'view', handle: () => notAvailable(degraded!) };
      if (!unit) return undefined;
      const { view, policy } = unit;
      const consumer = viewConsumer(file);
      const render = (req: RequestInfo): Reply | Promise<Reply> => renderView(view, policy, consumer, ctx, req, 200);
      // A page fixed at load for its path (static documents): rendered once per path (page-cache.ts).
      const handle = isContentPage(view) ? cachedByPath(render, ctx.modules.params) : render;
      // Its pinned URLs get the request's origin (pins.ts), after the cache.
      return { ...base, kind: 'view', handle: viewUsesPins(view, consumer, ctx.modules) ? absolutePins(handle) : handle };
    }
    case 'script': {
      // A script that needs what Laneway does not have ('🔌', a connector's REST API…) answers 501
      // and the rest of the app runs (docs/status.md "What degrades").
      let degraded: string[] | undefined;
      const unit = degradable(ctx, (f) => (degraded = f));
      // ⏱name.js: a server-sent event stream (events.ts).
      const endpoint = spec.flavour === 'events' ? compileEventsEndpoint(file, base, unit.ctx) : compileScriptEndpoint(file, base, unit.ctx);
      unit.settle();
      if (degraded) return { ...base, kind: 'script', handle: () => notAvailable(degraded!) };
      return endpoint;
    }
  }
}

/**
 * A context in which one file compiles on its own (definitions/degrade.ts): what it reports is
 * settled — moved to the load's list, as warnings when the file only needs what Laneway does not
 * have, `degraded` then hearing the features — inside unitOf's compile, so the build cache sees
 * it, or by `settle()` for a file compiled without unitOf.
 */
function degradable(ctx: CompileContext, degraded: (features: string[]) => void): { ctx: CompileContext; settle(): void } {
  const needs = new UnitNeeds();
  let start = ctx.diagnostics.items.length;
  const settle = (): void => {
    const features = settleUnit(ctx.diagnostics, start, needs);
    start = ctx.diagnostics.items.length;
    if (features) degraded(features);
  };
  const units = ctx.units;
  // With a build cache the compile runs inside its `unit` and settles there (a degraded file is never kept).
  const settled: UnitStore = {
    unit(file, kind, compile) {
      const run = () => {
        start = ctx.diagnostics.items.length;
        try {
          return compile();
        } finally {
          settle();
        }
      };
      return units ? units.unit(file, kind, run) : run();
    },
  };
  return { ctx: { ...ctx, needs, units: settled }, settle };
}

function viewConsumer(file: ClassifiedFile): Consumer {
  return { type: 'endpoint', dir: file.dir, route: routeNameOf(file.name), view: true, file: file.path };
}

function fileParamOf(file: ClassifiedFile): string | undefined {
  return paramName(file.name.slice(0, -'.html'.length));
}

function compileViewFor(file: ClassifiedFile, ctx: CompileContext): CompiledView | undefined {
  const source = ctx.tree.read(file.path) ?? '';
  const check = importChecker(ctx.modules, viewConsumer(file), paramsInScope(file.dir, fileParamOf(file)), ctx.needs);
  return compileView(file.path, source, {
    tree: ctx.tree,
    diagnostics: ctx.diagnostics,
    checkImport: (m, n) => check(m, n),
    checkMember: withPropertyChecks(ctx.modules, viewMemberChecker(ctx.modules)),
    records: viewRecords(ctx.modules),
    prepare: (t) => ctx.csp.prepare(t),
  });
}

/** The policy a view's responses carry (none with `csp: false`). */
function policyOf(view: CompiledView, ctx: CompileContext): PagePolicy | undefined {
  const policy = ctx.csp.viewPolicy(view.templates);
  return ctx.options.csp ? policy : undefined;
}

/**
 * A plain `.html` page: its text after the page pass (rewrites, inlining) and its policy, made
 * once; with a pinned URL, once per origin (pins.ts).
 */
function pageHandler(file: ClassifiedFile, ctx: CompileContext, makeAsset: MakeAsset, status: number): (req: RequestInfo) => Reply {
  const source = ctx.tree.read(file.path);
  if (source === undefined) {
    const reply: Reply = status === 200 ? { type: 'asset', asset: makeAsset() } : { type: 'asset', asset: makeAsset(), status };
    return () => reply;
  }
  const { html, policy } = ctx.csp.page(file.path, source);
  const headers = ctx.options.csp ? { [policy.name]: policy.value!, ...policy.extra } : undefined;
  const make = (text: string): Reply => {
    const asset = text === source ? makeAsset() : makeAsset(Buffer.from(text));
    return { type: 'asset', asset, ...(headers && { headers }), ...(status !== 200 && { status }) };
  };
  if (html.includes(PIN_ORIGIN)) return pinnedPage(make, html);
  const reply = make(html);
  return () => reply;
}

/**
 * A page made for one visitor (docs/assets.md "Cache-Control"): it renders flash messages,
 * or imports from the users module or the form modules. Those modules add their names here.
 */
const SINGLE_USER_MODULES = new Set(['👤', 'form', 'form[]', 'form{}']);

function isSingleUser(view: CompiledView, ctx: CompileContext, consumer: Consumer): boolean {
  if (view.usesMessages || view.usesFormView || view.imports.some((i) => SINGLE_USER_MODULES.has(i.module))) return true;
  // A form file's form (`{{% import {NewTask} from '📤' }}`).
  return view.imports.some((i) => i.module === '📤' && ctx.modules.suppliers.resolve(consumer, i.name)?.supplier.kind === 'form-supplier');
}

/** Cache-Control of a rendered page (docs/assets.md "Cache-Control"). */
function cacheControlOf(singleUser: boolean, out: RenderOutput): string {
  const seconds = out.cacheSeconds;
  if (singleUser) {
    return seconds !== undefined ? `max-age=${seconds}, private` : 'no-cache, no-store, max-age=0, must-revalidate';
  }
  return seconds !== undefined ? `max-age=${seconds}` : 'no-cache';
}

function renderView(
  view: CompiledView,
  policy: PagePolicy | undefined,
  consumer: Consumer,
  ctx: CompileContext,
  req: RequestInfo,
  status: number,
): Reply | Promise<Reply> {
  const scope = new RequestScope(ctx.modules, req);
  // Under auth: required or optional (the gate read the user: req.user is set), what a page shows
  // may depend on who asks (Me, the roles that allow its models): it is a single-user page.
  const singleUser = req.signedInOnly === true || req.user !== undefined || isSingleUser(view, ctx, consumer);
  const finish = (out: RenderOutput): Reply => {
    scope.writeConsole();
    // A value failed: an error answer, never the page cut off where it stopped.
    if (out.failed !== undefined) return renderFailure(out.failed, ctx, req);
    const headers: Record<string, string> = { 'Cache-Control': cacheControlOf(singleUser, out) };
    if (policy !== undefined) {
      // Made once at load: no response changes a page's policy.
      headers[policy.name] = policy.value;
      for (const k in policy.extra) headers[k] = policy.extra[k]!;
    }
    // Render-If falsy: 200 with an empty body (docs/views.md "Render-If").
    if (out.empty) return { type: 'body', status: 200, contentType: HTML, body: '', headers };
    // A page with a fresh form id differs on every render: an ETag of it could never match, so
    // none is computed (docs/assets.md "Cache-Control").
    return { type: 'body', status, contentType: HTML, body: out.body ?? out.html, headers, etag: status === 200 && !scope.issuedFormToken() };
  };
  // A visitor with a session: the messages its previous request left show on this page, then are gone.
  const visitor = req.method === 'GET' && ctx.modules.data?.visitors && req.headers.cookie?.includes('sid=') ? scope.visitor() : undefined;
  if (!visitor?.known) {
    const out = view.render({ ...scope.renderInput(consumer), bytes: true });
    return out instanceof Promise ? out.then((o) => withVisitorCookies(finish(o), scope)) : withVisitorCookies(finish(out), scope);
  }
  return (async () => {
    let flash;
    try {
      flash = await visitor.flash();
    } catch (e) {
      ctx.modules.log(`the visitor's messages could not be read: ${(e as Error).message}`, { id: req.id, code: 'LW_SESSION_UNAVAILABLE' });
    }
    if (flash) scope.setGlobals({ ...ctx.modules.globals, Messages: messagesGlobal(flash.flash) });
    const reply = finish(await view.render({ ...scope.renderInput(consumer), bytes: true }));
    if (flash && reply.type !== 'error') {
      try {
        await visitor.takeFlash(flash.raw);
      } catch (e) {
        ctx.modules.log(`the visitor's messages could not be cleared: ${(e as Error).message}`, { id: req.id, code: 'LW_SESSION_UNAVAILABLE' });
      }
    }
    return withVisitorCookies(reply, scope);
  })();
}

/** `Messages` of views: the flash left for this page (docs/messages.md "Messages"). */
export function messagesGlobal(flash: Flash | undefined): Readonly<{ all: readonly unknown[]; data: Readonly<Record<string, string>> }> {
  const all = (flash?.messages ?? []).map((m) => Object.freeze(m.field === undefined ? { type: m.type, value: m.value } : { type: m.type, field: m.field, value: m.value }));
  return Object.freeze({ all: Object.freeze(all), data: Object.freeze({ ...(flash?.data ?? {}) }) });
}

/** The session cookie a render started (a form view), on the page's answer. */
function withVisitorCookies(reply: Reply, scope: RequestScope): Reply {
  const cookies = scope.visitorTouched() ? scope.visitor()!.setCookieHeaders() : undefined;
  return cookies && reply.type !== 'error' ? ({ ...reply, headers: { ...reply.headers, 'Set-Cookie': cookies } } as Reply) : reply;
}

/**
 * The answer to a render that failed (the error was logged with the request id by the render's
 * onError): 503 when a script ran out of its budget, else 500. In development mode the error page
 * shows the file, line and column of the failing tag, the message and a code frame.
 */
function renderFailure(failure: ViewRenderError, ctx: CompileContext, req: RequestInfo): Reply {
  const cause = failure.cause;
  // A refusal the page ran into (403 of a permission, 404 of a record…): that answer, as a script gets it.
  if (cause instanceof LanewayError && cause.status >= 400 && cause.status < 500) {
    const answer = refused(cause);
    if (ctx.options.dev) {
      answer.detail = failure.message + (failure.source === undefined ? '' : '\n\n' + codeFrame(failure.source, failure.line, failure.column));
      answer.site = viewSite(failure);
    }
    return answer;
  }
  const code = cause instanceof LanewayError ? cause.code : 'LW_VIEW_RENDER';
  const reply = cause instanceof LanewayError && cause.status === 503 ? overBudget(req.id, code) : internalError(req.id, code);
  if (ctx.options.dev) {
    const frame = failure.source === undefined ? '' : '\n\n' + codeFrame(failure.source, failure.line, failure.column);
    reply.detail = failure.message + frame;
    reply.site = viewSite(failure);
  }
  return reply;
}

/** Where a view failed: its tag's position and what the tag ran into. */
function viewSite(failure: ViewRenderError): FailureSite {
  const cause = failure.cause;
  return { message: cause instanceof Error ? cause.message : String(cause), file: failure.file, line: failure.line, column: failure.column };
}

function compileScriptEndpoint(
  file: ClassifiedFile,
  base: Pick<Endpoint, 'method' | 'pattern' | 'file' | 'dir'>,
  ctx: CompileContext,
): Endpoint | undefined {
  const consumer: Consumer = { type: 'endpoint', dir: file.dir, route: routeNameOf(file.name), view: false, file: file.path };
  const script = unitOf(file, 'script', ctx, () => {
    const compiled = compileScript(file.path, ctx.tree.read(file.path) ?? '', {
      kind: 'endpoint',
      diagnostics: ctx.diagnostics,
      checkImport: importChecker(ctx.modules, consumer, paramsInScope(file.dir), ctx.needs),
      ...scriptModelOptions(ctx.modules, WRITE_METHODS.has(base.method) ? undefined : `a ${base.method} script`, paramModels(ctx.modules, file.dir)),
    });
    return compiled && { kind: 'script', script: compiled };
  })?.script;
  if (!script) return undefined;
  const data = ctx.modules.data;
  // POST, PUT and DELETE scripts of an app with models run in one write transaction (docs/data.md
  // "How requests use the database").
  const writes = data !== undefined && WRITE_METHODS.has(base.method);
  // The limits per visitor it counts against (docs/security.md "Limits per visitor"), decided here once.
  const limiter = data?.limiter;
  const writeRule = writes ? limiter?.rule('writes', base.pattern) : undefined;
  const mailRule = writes ? limiter?.rule('emails', base.pattern) : undefined;
  const appMailRule = writes ? limiter?.rule('app-emails') : undefined;
  // Upload addresses (`newPutUrl`) count against `uploads` when a script makes them; asked only of a
  // request of an app with image fields that made one (the PUT then counts only its bytes: built-in.ts).
  const uploadRule = data?.imageFields.size ? limiter?.rule('uploads') : undefined;
  return {
    ...base,
    kind: 'script',
    handle(req) {
      const scope = new RequestScope(ctx.modules, req);
      if (writes) return runInTransaction(req, scope);
      const run = start(scope);
      // A run that waited for nothing gives its outcome, and this its Reply, without a Promise.
      return run instanceof Promise ? run.then((outcome) => finish(req, scope, outcome)) : finish(req, scope, run);
    },
  };

  /** The answer of a run without a transaction, with what it does for the visitor. */
  function finish(req: RequestInfo, scope: RequestScope, outcome: RunOutcome): Reply | Promise<Reply> {
    const urls = uploadRule ? scope.uploadUrls() : 0;
    if (urls) return countUploadUrls(req, scope, outcome, urls);
    return settle(req, scope, outcome);
  }

  /** A run without a transaction that made upload addresses: counted (in a transaction of its own on SQLite), and refused over the limit. */
  async function countUploadUrls(req: RequestInfo, scope: RequestScope, outcome: RunOutcome, urls: number): Promise<Reply> {
    if (isSuccess(answerOf(req, outcome))) {
      let over: Reply | undefined;
      try {
        over = await checkLimit(limiter!, uploadRule!, req, urls);
      } catch (e) {
        scope.takeEffects();
        return storeUnavailableLogged(ctx.modules.log, req.id, file.path, (e as Error).message);
      }
      if (over) {
        scope.takeEffects();
        return over;
      }
    }
    return settle(req, scope, outcome);
  }

  function settle(req: RequestInfo, scope: RequestScope, outcome: RunOutcome): Reply | Promise<Reply> {
    const effects = scope.takeEffects();
    const answer = answerOf(req, outcome);
    if (!effects && !scope.visitorTouched()) return reply(req, answer, outcome);
    const problem = effectsProblem(effects, req.method, file.path);
    if (problem) return failEffects(req, problem);
    const ok = isSuccess(answer);
    return settleVisitor(scope, effects, outcome, answer, ok, ctx.modules.log).then((s) => withHeaders(reply(req, s.answer, outcome), s.headers));
  }

  function failEffects(req: RequestInfo, problem: { code: Code; message: string }): Reply {
    ctx.modules.log(problem.message, { id: req.id, code: problem.code, file: file.path });
    return internalError(req.id, problem.code);
  }

  function start(scope: RequestScope): RunOutcome | Promise<RunOutcome> {
    const run = script!.run({
      importValue: (m, n) => scope.value(consumer, m, n),
      request: scope.scriptRequest(),
      share: true, // plain JSON answers are serialised without a copy (RunContext.share)
      budget: scope.budget(),
    });
    // What the script (and its suppliers) logged with console.…, written once it ran.
    return then(run, (outcome) => {
      scope.writeConsole();
      return outcome;
    });
  }

  /**
   * Begins the write transaction, runs the script, then commits when it succeeded (before the
   * answer is sent) and rolls back on any failure: a throw, an error, a limit, an `.invalid(…)`
   * redirect, a thrown Redirect or Messages.
   */
  async function runInTransaction(req: RequestInfo, scope: RequestScope): Promise<Reply> {
    const store = data!.store;
    if (!store) return storeUnavailableLogged(ctx.modules.log, req.id, file.path, 'the database is not open');
    // The body first: a slow or vanished client never holds the write transaction (and on SQLite
    // the write lock) open. A body over the limit or cut off fails here (413, 400).
    scope.bodyRead(await req.readBody());
    // The visitor's limit of writes, before the transaction begins: a lease of units reserved ahead
    // (limits/lease.ts), so most writes make no statement for it; over it, nothing runs.
    if (writeRule) {
      let over: Reply | undefined;
      try {
        // Synchronous when the units are held here (no microtask for it).
        const checked = checkLimit(limiter!, writeRule, req);
        over = checked instanceof Promise ? await checked : checked;
      } catch (e) {
        return storeUnavailableLogged(ctx.modules.log, req.id, file.path, (e as Error).message);
      }
      if (over) return over;
    }
    let tx;
    try {
      tx = await store.begin();
    } catch (e) {
      return storeUnavailableLogged(ctx.modules.log, req.id, file.path, (e as Error).message);
    }
    scope.dataRequest().session = tx.session;
    scope.dataRequest().writer = tx.writer;
    let outcome: RunOutcome;
    try {
      outcome = copiedOut(await start(scope));
    } catch (e) {
      await tx.writer.rollback();
      throw e;
    }
    const answer = answerOf(req, outcome);
    const effects = scope.takeEffects();
    const ok = isSuccess(answer);
    if (!ok) {
      await tx.writer.rollback();
      const settled = await settleVisitor(scope, effects, outcome, answer, ok, ctx.modules.log);
      return withHeaders(reply(req, settled.answer, outcome), settled.headers);
    }
    const problem = effectsProblem(effects, req.method, file.path);
    if (problem) {
      await tx.writer.rollback();
      return failEffects(req, problem);
    }
    // The upload addresses it made, against `uploads`: over the limit, nothing is written.
    const urls = uploadRule ? scope.uploadUrls() : 0;
    if (urls) {
      const over = await limited(req, uploadRule!, urls, tx.writer);
      if (over) return over;
    }
    // E-mail joins the outbox in the request's transaction: sent only if the request commits.
    const mails = (effects?.emails.length ?? 0) + (effects?.notifications.length ?? 0);
    if (mails) {
      // The limits of e-mail, the visitor's and the app's: over either, nothing is written or sent.
      const over = (mailRule && (await limited(req, mailRule, mails, tx.writer))) || (appMailRule && (await limited(req, appMailRule, mails, tx.writer, 'app')));
      if (over) return over;
      try {
        for (const m of effects!.emails) await enqueueMail(tx.writer, checkMailMessage({ to: m.to, subject: m.subject, text: m.text, ...(m.replyTo !== null && { replyTo: m.replyTo }) }), store.engine);
        for (const n of effects!.notifications) await enqueueMail(tx.writer, data!.notificationMessage(n.name, n.values), store.engine);
      } catch (e) {
        await tx.writer.rollback();
        return failEffects(req, { code: e instanceof LanewayError ? e.code : 'LW_MAIL_INVALID', message: `${file.path}: ${(e as Error).message}` });
      }
    }
    // Images stored in fields are attached in the same transaction (docs/images.md).
    const images = scope.dataRequest().images;
    if (images?.size) {
      const missing = await attachImages(tx.writer, store.engine.dialect, images);
      if (missing.length) {
        await tx.writer.rollback();
        return imageNotUploaded();
      }
    }
    // The flash and a carried form state are written with the request's other writes.
    let settled;
    try {
      settled = await settleVisitor(scope, effects, outcome, answer, ok, ctx.modules.log, tx.writer);
    } catch (e) {
      await tx.writer.rollback();
      return storeUnavailableLogged(ctx.modules.log, req.id, file.path, (e as Error).message);
    }
    const failed = await commitWrites(tx, ctx.modules.log, req.id, file.path);
    if (failed) return failed;
    if (mails) void data!.mail?.kick();
    if (images?.size) void data!.images?.worker.kick();
    return withHeaders(reply(req, settled.answer, outcome), settled.headers);
  }


  /** A limit's 429 once the transaction is rolled back, or undefined within it; a store failure is a 503. */
  async function limited(req: RequestInfo, rule: LimitRule, n: number, writer: Writer, visitor?: string): Promise<Reply | undefined> {
    let over: Reply | undefined;
    try {
      over = await checkLimit(limiter!, rule, req, n, writer, visitor);
    } catch (e) {
      await writer.rollback();
      return storeUnavailableLogged(ctx.modules.log, req.id, file.path, (e as Error).message);
    }
    if (over) await writer.rollback();
    return over;
  }

  function answerOf(req: RequestInfo, outcome: RunOutcome): ScriptResponse {
    return outcomeToResponse(outcome, {
      method: req.method,
      path: req.path,
      acceptsJson: req.acceptsJson,
      ajax: req.headers['x-requested-with'] === 'XMLHttpRequest',
    });
  }

  function reply(req: RequestInfo, answer: ScriptResponse, outcome: RunOutcome): Reply | Promise<Reply> {
    switch (answer.kind) {
      case 'json':
        // In an `auth: required` area (the gate let a signed-in visitor through), never for a shared cache.
        // Laneway's own answer to a model error (422, 409) names the request id, as every error answer does.
        return { type: 'body', status: answer.status, contentType: JSON_TYPE, body: outcome.kind === 'error' ? withIdInJson(answer.body, req.id) : answer.body, headers: { 'Cache-Control': req.signedInOnly === true ? 'private, no-cache' : 'no-cache' }, etag: answer.status === 200 && req.method === 'GET' };
      case 'redirect':
        return { type: 'redirect', status: answer.status, location: answer.location };
      case 'reroute':
        return ctx.reroute(answer.path, req);
      case 'error': {
        if (answer.status >= 500) {
          const error = outcome.kind === 'error' || outcome.kind === 'limit' ? outcome.error : undefined;
          const message = error?.message ?? answer.message ?? 'the output went over a limit of the script';
          // Runtime messages name their script already (it may be a supplier rather than this file).
          ctx.modules.log(message.startsWith('/') ? message : `${file.path}: ${message}`, { id: req.id, code: answer.code, file: file.path });
        }
        const failed = scriptError(answer, req.id);
        // Development: JSON clients get where the script failed (docs/errors.md "Error answers").
        if (ctx.options.dev) failed.site = scriptSite(outcome, answer, file.path);
        return failed;
      }
    }
  }
}

const WRITE_METHODS = new Set(['POST', 'PUT', 'DELETE']);

/**
 * A run's outcome with its completion value copied out of the realm once, for the answer and the
 * visitor's effects (a redirect's messages and form state) alike; plain JSON, ready already, and a
 * value that cannot be copied (its answer says why) stay as they are.
 */
function copiedOut(outcome: RunOutcome): RunOutcome {
  if (outcome.kind !== 'value' || !(outcome.value instanceof ScriptValue) || outcome.value.json !== undefined) return outcome;
  try {
    return { kind: 'value', value: outcome.value.toHost() };
  } catch {
    return outcome;
  }
}

/** A successful answer: its writes are committed and its effects applied. */
function isSuccess(answer: ScriptResponse): boolean {
  return answer.kind === 'json' || answer.kind === 'redirect' ? !answer.failed && answer.status < 400 : answer.kind === 'reroute';
}

/** A Reply with more headers (`Set-Cookie`); error replies are rendered by the HTTP layer without them. */
function withHeaders(r: Reply | Promise<Reply>, headers: ReplyHeaders | undefined): Reply | Promise<Reply> {
  if (!headers) return r;
  const add = (x: Reply): Reply => (x.type === 'error' ? x : { ...x, headers: { ...x.headers, ...headers } } as Reply);
  return r instanceof Promise ? r.then(add) : add(r);
}

export function compileNotFound(file: ClassifiedFile, ctx: CompileContext, makeAsset: MakeAsset): ErrorPage | undefined {
  const source = ctx.tree.read(file.path) ?? '';
  if (isTemplate(source)) {
    const unit = viewUnitOf(file, ctx);
    if (!unit) return undefined;
    const { view, policy } = unit;
    const consumer = viewConsumer(file);
    const render = (req: RequestInfo) => renderView(view, policy, consumer, ctx, req, 404);
    return { file: file.path, render: viewUsesPins(view, consumer, ctx.modules) ? absolutePins(render) : render };
  }
  return { file: file.path, render: pageHandler(file, ctx, makeAsset, 404) };
}
