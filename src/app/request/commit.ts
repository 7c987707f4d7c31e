/**
 * The end of a request's write transaction, one function for scripts (endpoints.ts) and event
 * streams (events.ts): the commit, and what answers when it fails (docs/models.md "Unique fields",
 * docs/errors.md LW_STORE_UNAVAILABLE).
 */
import { LanewayError } from '../../diag/index.js';
import type { DataSession, Writer } from '../../store/index.js';
import { conflictJson, storeUnavailableLogged } from '../endpoint/answers.js';
import type { Reply } from '../endpoint/endpoint.js';

/**
 * Commits `tx`; undefined once committed. A write held back until the commit (PostgreSQL) may meet
 * a unique value: `409` with the message of that conflict, as a script's own write gets. Any other
 * failure: `503` (logged for `file` with the request `id`), nothing was changed.
 */
export async function commitWrites(tx: { session: DataSession; writer: Writer }, log: (message: string, fields: Record<string, unknown>) => void, id: string, file: string): Promise<Reply | undefined> {
  try {
    await tx.writer.commit();
    return undefined;
  } catch (e) {
    const mapped = tx.session.commitError(e);
    if (mapped instanceof LanewayError && mapped.status === 409) {
      return { type: 'body', status: 409, contentType: 'application/json; charset=utf-8', body: conflictJson(mapped.message, id), headers: { 'Cache-Control': 'no-store' } };
    }
    return storeUnavailableLogged(log, id, file, (e as Error).message, true);
  }
}
