/**
 * compileScript: parse (acorn) → validate (validate.ts) → generate (generate.ts) → create the
 * function once inside the realm. `run` is then a plain call of that function plus the copies in
 * and out (realm.ts).
 */
import * as acorn from 'acorn';
import vm from 'node:vm';
import { LanewayError } from '../diag/index.js';
import { generateScript } from './generate.js';
import { checkModelUse } from './model-use.js';
import { errorToHost, errorToRealm, getRealm, hostErrorOf, OutputLimitError, plainJson, registerPositions, registerSource, ScriptBudget, SCRIPT_SCHEME, shareValue, toHost, toRealm, type RealmRun } from './realm.js';
import type { CompiledScript, ScriptKind, RunContext, RunOutcome, ScriptCompileOptions } from './types.js';
import { DEFAULT_LIMITS, type ScriptLimits } from './limits.js';
import { validateScript } from './validate.js';


/** The compiled script: its completion (or exports) in an array, or a realm Promise of it once it waited. */
type ScriptFunction = (run: RealmRun) => unknown[] | PromiseLike<unknown[]>;

/**
 * Compiles one script. Returns undefined when it has errors; every error is reported to
 * `options.diagnostics` (never only the first).
 */
export function compileScript(file: string, source: string, options: ScriptCompileOptions): CompiledScript | undefined {
  let program: acorn.Program;
  try {
    program = acorn.parse(source, { ecmaVersion: 'latest', sourceType: 'module', locations: true });
  } catch (e) {
    const err = e as SyntaxError & { pos?: number };
    const message = err.message.replace(/ \(\d+:\d+\)$/, '');
    options.diagnostics.error('LW_SCRIPT_SYNTAX', `${message}: fix the syntax (scripts are JavaScript modules)`, file, source, err.pos ?? 0);
    return undefined;
  }
  const analysis = validateScript(program, {
    file,
    source,
    kind: options.kind,
    diagnostics: options.diagnostics,
    checkImport: options.checkImport,
  });
  if (!analysis) return undefined;
  if (options.modelUse) checkModelUse(program as never, analysis.imports, options.modelUse, file, source, options.diagnostics);
  const { code, sourcePos } = generateScript(program, analysis, options.kind, source, registerSource, {
    ...(options.fluent ? { fluent: options.fluent } : {}),
    ...(options.models ? { models: true } : {}),
  });
  registerPositions(file, sourcePos);
  const { kit, context } = getRealm();
  let fn: ScriptFunction;
  try {
    const factory = vm.runInContext(code, context, { filename: scriptFilename(file) }) as (g: object, k: object) => ScriptFunction;
    fn = factory(kit.G, kit.K);
  } catch (e) {
    options.diagnostics.error('LW_SCRIPT_UNSUPPORTED', `Laneway could not compile this script (${String((e as Error).message)}); please report it`, file);
    return undefined;
  }
  const imports = analysis.imports.map((i) => ({ ...i }));
  const exports = analysis.exports.map((e) => ({ ...e }));
  const baseLimits: ScriptLimits = { ...DEFAULT_LIMITS, ...options.limits };
  return {
    file,
    kind: options.kind,
    imports,
    exports,
    run: (ctx) => runScript(file, options.kind, fn, imports, exports, ctx.budget?.limits ?? (ctx.limits ? { ...baseLimits, ...ctx.limits } : baseLimits), ctx),
  };
}

function scriptFilename(file: string): string {
  return SCRIPT_SCHEME + file;
}

/**
 * One run: synchronous until the script meets a Promise (an import or a host call that waits), so a
 * script that never waits gives its outcome without a Promise.
 */
function runScript(
  file: string,
  kind: ScriptKind,
  fn: ScriptFunction,
  imports: Array<{ module: string; name: string }>,
  exports: Array<{ exported: string }>,
  limits: ScriptLimits,
  ctx: RunContext,
): RunOutcome | Promise<RunOutcome> {
  const { kit } = getRealm();
  const imp = (i: number): unknown => {
    const { module, name } = imports[i]!;
    try {
      return toRealm(ctx.importValue(module, name));
    } catch (e) {
      throw errorToRealm(e instanceof LanewayError ? e : new LanewayError('LW_SCRIPT_IMPORT_FAILED', `${file}: the import of ${name} from '${module}' failed: ${String((e as Error)?.message ?? e)}`, { status: 500, cause: e }));
    }
  };
  // The request's budget, shared with every other script and view of the request.
  const budget = ctx.budget ?? new ScriptBudget(limits, ctx.request);
  const run = kit.newRun(budget.realm, imp);
  const complete = (result: unknown[]): RunOutcome => {
    try {
      run.finish();
      if (ctx.share) {
        const value = result[0];
        if (kind !== 'endpoint') {
          // The realm object of the exports was made by the generated code: data properties only.
          const shared: Record<string, unknown> = Object.create(null);
          for (const e of exports) shared[e.exported] = shareValue((value as Record<string, unknown>)[e.exported], file);
          return { kind: 'value', value: shared };
        }
        const json = plainJson(value, limits);
        if (json !== undefined) return { kind: 'value', value: shareValue(value, file, json) };
      }
      return { kind: 'value', value: toHost(result[0], limits, { count: 0, size: 0, stack: [], budget }) };
    } catch (e) {
      return classify(file, e, limits);
    }
  };
  const failed = (e: unknown): RunOutcome => {
    run.finish();
    return classify(file, e, limits);
  };
  const prev = kit.current();
  const started = kit.enter(budget.realm);
  let out: unknown;
  try {
    out = fn(run);
  } catch (e) {
    return failed(e);
  } finally {
    if (started) kit.leave(budget.realm);
    kit.setCurrent(prev);
  }
  if (kit.isPromise(out)) {
    return new Promise<RunOutcome>((resolve) =>
      kit.subscribe(
        out,
        (v) => {
          kit.leave(budget.realm);
          resolve(complete(v as unknown[]));
        },
        (e) => {
          kit.leave(budget.realm);
          resolve(failed(e));
        },
      ),
    );
  }
  return complete(out as unknown[]);
}

/** Maps whatever ended a run abnormally to its outcome. */
function classify(file: string, e: unknown, limits: ScriptLimits): RunOutcome {
  const { kit } = getRealm();
  if (e instanceof OutputLimitError) {
    e.message = `${file}: ${e.message}`;
    return { kind: 'limit', error: named(e, file) };
  }
  if (e instanceof LanewayError) return { kind: 'error', error: named(e, file) };
  const sig = kit.signalInfo(e);
  if (sig) {
    const error = new LanewayError(sig.code, `${file}: ${sig.message}`, { status: sig.code === 'LW_SCRIPT_FORBIDDEN_ACCESS' ? 500 : 503 });
    error.file = file;
    return sig.code === 'LW_SCRIPT_FORBIDDEN_ACCESS' ? { kind: 'error', error } : { kind: 'limit', error };
  }
  const original = hostErrorOf(e);
  if (original !== undefined) {
    if (original instanceof LanewayError) return { kind: 'error', error: original };
    return { kind: 'error', error: named(new LanewayError('LW_SCRIPT_RUNTIME', `${file}: ${String((original as Error)?.message ?? original)}`, { status: 500, cause: original }), file) };
  }
  const model = kit.modelErrorInfo(e);
  if (model) {
    // Uncaught $ModelNotFound → 404 (the nearest ⚡NotFound.html); $ModelInvalid → 422 with the field messages.
    const error = model.kind === 'notFound'
      ? new LanewayError('LW_MODEL_NOT_FOUND', `${file}: ${model.message}`, { status: 404 })
      : new LanewayError('LW_MODEL_INVALID', `${file}: ${model.message}`, { status: 422 });
    if (model.kind === 'invalid') (error as LanewayError & { messages?: unknown }).messages = toHost(model.messages, limits);
    error.file = file;
    return { kind: 'error', error };
  }
  const info = kit.errorInfo(e);
  if (info) {
    if (info.stackOverflow) {
      return { kind: 'limit', error: named(new LanewayError('LW_SCRIPT_DEPTH_LIMIT', `${file}: nested calls too deep (the call stack ran out)`, { status: 503 }), file) };
    }
    const at = positionOf(info.stack, file);
    const error = new LanewayError('LW_SCRIPT_RUNTIME', `${file}${at ? `:${at.line}:${at.column}` : ''}: ${info.name}: ${info.message}`, { status: 500 });
    error.file = file;
    if (at) {
      error.line = at.line;
      error.column = at.column;
    }
    return { kind: 'error', error };
  }
  if (e instanceof Error) {
    return { kind: 'error', error: named(new LanewayError('LW_SCRIPT_RUNTIME', `${file}: ${e.message}`, { status: 500, cause: e }), file) };
  }
  // The script threw a value of its own (string, object, Redirect, …).
  try {
    return { kind: 'thrown', value: toHost(e, limits) };
  } catch (inner) {
    const err = errorToHost(inner, file);
    if (err instanceof OutputLimitError) return { kind: 'limit', error: named(err, file) };
    return { kind: 'error', error: err instanceof LanewayError ? named(err, file) : new LanewayError('LW_SCRIPT_RUNTIME', `${file}: the thrown value cannot be copied`, { status: 500 }) };
  }
}

function named(error: LanewayError, file: string): LanewayError {
  if (!error.file) error.file = file;
  return error;
}

/** The script position of the first frame of `file` in a stack as scripts see it (`    at /f.js:3:7`). */
function positionOf(stack: string, file: string): { line: number; column: number } | undefined {
  const marker = `\n    at ${file}:`;
  const i = stack.indexOf(marker);
  if (i === -1) return undefined;
  const m = /^(\d+):(\d+)/.exec(stack.slice(i + marker.length));
  return m ? { line: Number(m[1]), column: Number(m[2]) } : undefined;
}
