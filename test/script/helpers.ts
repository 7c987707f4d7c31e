/** Shared helpers of the script tests: compile a snippet, run it, read the outcome. */
import assert from 'node:assert/strict';
import { DiagnosticList, type Diagnostic } from '../../src/diag/index.js';
import {
  compileScript,
  type CompiledScript,
  type RunContext,
  type RunOutcome,
  type ScriptCompileOptions,
  type ScriptLimits,
} from '../../src/script/index.js';

export const FILE = '/app/GET.js';

export function compile(source: string, options: Partial<Omit<ScriptCompileOptions, 'diagnostics'>> = {}): CompiledScript {
  const diagnostics = new DiagnosticList();
  const script = compileScript(FILE, source, { kind: 'endpoint', diagnostics, ...options });
  assert.ok(script, `expected the script to compile, got:\n${diagnostics.items.map((d) => `${d.line}:${d.column} ${d.code} ${d.message}`).join('\n')}`);
  return script;
}

/** The diagnostics of a script that must not compile. */
export function rejects(source: string, options: Partial<Omit<ScriptCompileOptions, 'diagnostics'>> = {}): Diagnostic[] {
  const diagnostics = new DiagnosticList();
  const script = compileScript(FILE, source, { kind: 'endpoint', diagnostics, ...options });
  assert.equal(script, undefined, `expected a build error for:\n${source}`);
  assert.ok(diagnostics.errors.length > 0);
  return diagnostics.errors;
}

export interface RunOptions {
  imports?: Record<string, unknown>;
  importValue?: RunContext['importValue'];
  limits?: Partial<ScriptLimits>;
  path?: string;
  url?: string;
}

export function context(options: RunOptions = {}): RunContext {
  const imports = options.imports ?? {};
  return {
    importValue: options.importValue ?? ((_module, name) => imports[name]),
    request: { path: options.path ?? '/app/here', url: options.url ?? 'https://example.test/app/here?x=1' },
    limits: options.limits,
  };
}

export async function run(source: string, options: RunOptions & { compile?: Partial<Omit<ScriptCompileOptions, 'diagnostics'>> } = {}): Promise<RunOutcome> {
  return compile(source, options.compile).run(context(options));
}

/** Runs a script that must complete with a value, and returns that value. */
export async function value(source: string, options: RunOptions = {}): Promise<unknown> {
  const outcome = await run(source, options);
  assert.equal(outcome.kind, 'value', `expected a value, got ${describe(outcome)}`);
  return (outcome as { value: unknown }).value;
}

export function describe(outcome: RunOutcome): string {
  if (outcome.kind === 'value' || outcome.kind === 'thrown') return `${outcome.kind} ${safeJson(outcome.value)}`;
  return `${outcome.kind} ${outcome.error.code}: ${outcome.error.message}`;
}

function safeJson(v: unknown): string {
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}

export const delay = <T>(v: T, ms = 1): Promise<T> => new Promise((resolve) => setTimeout(() => resolve(v), ms));
