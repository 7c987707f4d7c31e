import type { RecordLayout } from './records.js';
import type { ANSWER } from './channel.js';

/**
 * The values the host passes to the realm's code when it starts (realm.ts `getRealm`), read by
 * src/script/realm/*.js as `host`.
 */
export interface RealmHost {
  /** A wall clock in milliseconds (performance.now). */
  now(): number;
  /** The process's CPU time in milliseconds. */
  cpu(): number;
  /** The text of a script's arrow function, by the id generated code marks it with. */
  source(id: number): string | undefined;
  /** A stack frame of a script as `file:line:column` of its source, or undefined. */
  frame(file: string, line: number | null, column: number | null): string | undefined;
  maxStringLength: number;
  maxArrayLength: number;
  maxDepth: number;
  /** Member names scripts may not read or write (names.ts). */
  forbidden: string[];
  /** Member names scripts may not define as functions (names.ts). */
  hooks: string[];
  /** The positions of a record's row and of a write (records.ts); the realm keeps a copy. */
  records: RecordLayout;
  /** The positions of the channel's array answers (channel.ts ANSWER). */
  answers: typeof ANSWER;
}
