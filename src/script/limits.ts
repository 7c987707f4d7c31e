/**
 * The limits of a script run and their defaults (`/🎛.yaml` can change them: docs/scripting.md),
 * apart from types.ts, since the realm reads them and types.ts names the realm's budget.
 */
export interface ScriptLimits {
  /** CPU budget of one run in milliseconds (time spent waiting for host Promises is not counted). */
  cpuMs: number;
  /** Longest string a run may build. */
  maxStringLength: number;
  /** Longest array a run may build; also the largest number of values in an emitted result. */
  maxArrayLength: number;
  /** Deepest nesting of script function calls, and of values crossing out of a script. */
  maxDepth: number;
  /**
   * Memory allowance of one request, in MiB: the strings and arrays the request's scripts build
   * (counted by what built-ins and operators make, see docs/scripting.md) may not add up to more.
   */
  memoryMb: number;
}

export const DEFAULT_LIMITS: Readonly<ScriptLimits> = Object.freeze({
  cpuMs: 100,
  maxStringLength: 1_048_576,
  maxArrayLength: 100_000,
  maxDepth: 200,
  memoryMb: 64,
});
