/** The public shapes of the script compiler and runtime (re-exported by index.ts). */
import type { ModelUseRules } from './model-use.js';
import type { Code, DiagnosticList, LanewayError } from '../diag/index.js';
import type { ScriptBudget } from './realm.js';
import type { ScriptLimits } from './limits.js';

export type ScriptKind = 'endpoint' | 'supplier' | 'function-supplier';

export interface ScriptCompileOptions {
  /** Suppliers end with `export {a, b as C}`; function suppliers export arrow functions only. */
  kind: ScriptKind;
  /** Every problem, with file:line:column and a message saying what to write instead. */
  diagnostics: DiagnosticList;
  /** Compile-time check of each imported name ('*' for `import * as X`): true or a message why not. Absent => all accepted. */
  checkImport?(module: string, name: string): true | string;
  /** Default limits of every run of this script (a run may override them again). */
  limits?: Partial<ScriptLimits>;
  /** The app's model field names (fluent setters `m.title('x')`, see generate.ts). */
  fluent?: ReadonlySet<string>;
  /** The app has models: endpoints write pending changes and serialise records at the end. */
  models?: boolean;
  /** Build-time checks of the script's use of the models (model-use.ts). */
  modelUse?: ModelUseRules;
}

export interface CompiledScript {
  file: string;
  kind: ScriptKind;
  /** name '*' for namespace imports. */
  imports: Array<{ module: string; name: string; local: string }>;
  /** Suppliers: the export list. */
  exports: Array<{ local: string; exported: string }>;
  /**
   * Runs once. Endpoint: completion value. Supplier: an object of its exports. Never throws, never
   * rejects. The outcome comes without a Promise when the script did not wait for anything.
   */
  run(ctx: RunContext): RunOutcome | Promise<RunOutcome>;
}

export interface RunContext {
  /** Value for an import. May return a Promise; the compiled code waits implicitly. */
  importValue(module: string, name: string): unknown;
  /**
   * `path` is the request path (`/here/there`); `url` the full request URL (for `Redirect…url`;
   * read only when a script asks, so it may be a getter).
   */
  request: { path: string; url: string };
  /** Per-endpoint override (ignored when a budget is given: the budget's limits apply). */
  limits?: Partial<ScriptLimits>;
  /**
   * The request's budget, shared by every script and view of one request (docs/scripting.md). Without
   * one, the run gets a budget of its own.
   */
  budget?: ScriptBudget;
  /**
   * Keep the value in the script realm instead of copying it out (a 'value' outcome only):
   * - a supplier's value is an object of its exports (null prototype) whose objects and functions
   *   are `ScriptValue`s: another script of the request imports them without a copy, and
   *   `ScriptValue.toHost()` / `openValue()` give a view its host copy;
   * - an endpoint's object or array completion value that is plain data within the limits is a
   *   `ScriptValue` carrying its JSON (`outcomeToResponse` sends it as it is); any other value is
   *   copied out as usual.
   */
  share?: boolean;
}

export type RunOutcome =
  | { kind: 'value'; value: unknown }
  | { kind: 'thrown'; value: unknown }
  | { kind: 'limit'; error: LanewayError }
  | { kind: 'error'; error: LanewayError };

export interface ResponseRequest {
  method: string;
  path: string;
  acceptsJson: boolean;
  ajax: boolean;
}

export type ScriptResponse =
  | { kind: 'json'; status: number; body: string; failed: boolean }
  | { kind: 'redirect'; status: number; location: string; failed: boolean }
  | { kind: 'reroute'; path: string }
  /**
   * `code` names the cause for the log line; `message`, when given, is safe to show. Without one,
   * the words are the server's (app/endpoint/answers.ts `scriptFailure`, which knows the request id): the
   * script ran out of its budget (`limit`), or failed with an error that is not for the client.
   */
  | { kind: 'error'; status: number; message?: string; code: Code; limit?: true };
