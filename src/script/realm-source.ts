/**
 * The source of Laneway's code inside the script realm (a `node:vm` context with string code
 * generation disabled). It is evaluated once per process; it receives a few host values (a clock
 * and the names lists) and returns the kit the host side uses (realm.ts).
 *
 * What it does, in order:
 * 1. captures the realm's intrinsics it needs before anything is patched;
 * 2. defines the run object (budget, depth, limits), the signals (uncatchable limit and
 *    forbidden-access errors) and the helpers generated code calls ($lw_key, $lw_set, …);
 * 3. replaces the array and string methods that call back or can grow without bound with versions
 *    that wait for callbacks returning Promises and check the limits;
 * 4. builds the granted globals (Date is a wrapper with no setters, JSON never calls script
 *    functions, Object/Array/Number/String/Boolean are façades, Redirect is Laneway's builder);
 * 5. freezes every intrinsic reachable from the realm's global object, and the façades.
 *
 * The code is plain JavaScript in the files of ./realm/, one per step (4 has three files: the
 * granted globals, the models, the visitor effects). It must be compiled inside the realm, so it is
 * read as text, in the order of REALM_FILES, and evaluated there as the body of one function: the
 * files share one scope (a name one file declares is seen by the files after it), the first one
 * starts in strict mode, and the last one makes the kit, which the function returns. `npm run build` copies the folder to
 * dist/script/realm/ (scripts/bundle.mjs); dist/bundle/ reads it there too. `npm run typecheck`
 * checks the files with their JSDoc types (src/script/realm/tsconfig.json; globals.d.ts declares
 * `host`, realm-host.ts its type).
 */
import { readFileSync } from 'node:fs';

/** The files of the realm's code, in the order they run. */
export const REALM_FILES = [
  '10-intrinsics.js',
  '20-budgets.js',
  '30-iteration.js',
  '40-globals.js',
  '41-models.js',
  '42-visitor.js',
  '50-freeze.js',
] as const;

// From src/script/ (tsx) and dist/script/ this is ./realm/; from a chunk of dist/bundle/ it is
// dist/script/realm/, which the build writes.
const folder = new URL('../script/realm/', import.meta.url);

/** The source the realm evaluates: a function of the host values, returning the kit. */
export const REALM_SOURCE =
  "(function (host) {\n'use strict';\n" +
  REALM_FILES.map((name) => readFileSync(new URL(name, folder), 'utf8')).join('\n') +
  'return kit;\n})';
