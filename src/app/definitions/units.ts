/**
 * Compiled views and scripts as the build cache keeps them between loads (build-cache.ts), apart
 * from request/endpoints.ts, which makes them, so that the cache and the load options need not import it.
 */
import type { PagePolicy } from '../../csp/index.js';
import type { CompiledScript } from '../../script/index.js';
import type { CompiledView } from '../../template/index.js';
import type { ClassifiedFile } from './classify.js';

/** What a view or a script endpoint compiles to, before it is wrapped into an Endpoint with this load's context. */
export type CompiledUnit =
  | { kind: 'view'; view: CompiledView; policy: PagePolicy | undefined }
  | { kind: 'script'; script: CompiledScript };

export interface UnitStore {
  unit<K extends CompiledUnit['kind']>(file: ClassifiedFile, kind: K, compile: () => Extract<CompiledUnit, { kind: K }> | undefined): Extract<CompiledUnit, { kind: K }> | undefined;
}
