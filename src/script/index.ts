/**
 * The script subset: compile once at load, run per request (docs/scripting.md).
 */

// Compile and run
export { compileScript } from './compile.js';
export type { ModelShape, ModelUseRules } from './model-use.js';
export { suggest as suggestName } from './model-use.js';
export { DEFAULT_LIMITS, type ScriptLimits } from './limits.js';
export {
  type CompiledScript,
  type ResponseRequest,
  type RunContext,
  type RunOutcome,
  type ScriptCompileOptions,
  type ScriptKind,
  type ScriptResponse,
} from './types.js';

// Outcome → HTTP answer
export { outcomeToResponse, serialize as serializeScriptValue } from './outcome.js';
export { ScriptRedirect, checkAppPath, checkExternalUrl, type FlashMessage, type FlashType } from './redirect.js';

// Modules and values crossing the boundary
export { utilModule } from './util-module.js';
export { platformModuleValues, LOCAL_PLATFORM_EXPORTS } from './platform-module.js';
export { ScriptBudget, ScriptThrownError, ScriptValue, openValue as openScriptValue, withViewMembers, linkViewRecord, installModels, ViewRenderers, currentBudgetToken, budgetToken, takeConsole, takeEffects, visitorModuleValue, formErrorOf, type ConsoleLine, type RequestEffects } from './realm.js';
export { mapChannelErrors, type HostChannel, type Answer, type CheckedValue, type FormReading, type AggregateKind, type ModelsDescriptor, type ModelDescriptor, type FieldDescriptor, type TypeDescriptor } from './channel.js';
export { ROW, WRITE, WRITE_KIND, RECORD_LAYOUT, isInsert, isUpdate, isRemove, type RecordLayout, type RecordRow, type QuerySpec, type FilterOp, type WriteOp, type InsertOp, type UpdateOp, type RemoveOp } from './records.js';

// Names of the subset (for `laneway check` and docs)
export { GRANTED_GLOBALS, FORBIDDEN_MEMBERS, FORBIDDEN_GLOBALS } from './names.js';
