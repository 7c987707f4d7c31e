/**
 * A write of its own, for the stores beside the models (visitors, users): `fn` runs in a new
 * transaction that commits when it resolves and rolls back when it throws.
 */
import type { Engine, Writer } from './types.js';

export async function inTransaction(engine: Engine, fn: (w: Writer) => unknown): Promise<void> {
  const w = await engine.begin();
  try {
    await fn(w);
  } catch (e) {
    await w.rollback();
    throw e;
  }
  await w.commit();
}
