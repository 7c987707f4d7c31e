/**
 * The limits per visitor at the request (docs/security.md "Limits per visitor"): one counter hit
 * of the visitor, and the 429 it answers when over. The rules are decided at load, per endpoint
 * (`Limiter.rule`); requests that are not counted (GET of pages and files) never come here.
 *
 * - write scripts count in their transaction, and their e-mail before it is queued
 *   (endpoints.ts `runInTransaction`);
 * - event streams count in the transaction of their body, before it runs (events.ts);
 * - upload addresses (`newPutUrl`) count once the script that made them ran, in its transaction
 *   (endpoints.ts), or in one of their own for a GET script; a `⏱` body's in its transaction, a
 *   polled call's in one of their own (events.ts);
 * - sign-in starts and the bytes of uploads count in their built-in endpoints (built-in.ts), each
 *   in a transaction of its own on SQLite.
 *
 * No step of the pipeline (pipeline.ts) is needed: each kind counts where its request writes
 * anyway, so that on SQLite the count costs no write transaction of its own.
 */
import { visitorKey, type Limiter, type LimitRule, type Refusal } from '../../limits/index.js';
import type { Writer } from '../../store/index.js';
import { tooManyRequests } from '../endpoint/answers.js';
import { clientOf, type Reply, type RequestInfo } from '../endpoint/endpoint.js';

/** The visitor a request counts for: the signed-in user when its gate read one, else its address. */
export function visitorOf(req: RequestInfo): string {
  return visitorKey(req.user, clientOf(req).address || undefined);
}

/**
 * Counts `n` of `rule` for the request's visitor (or for `visitor`: `app` for the app's own
 * counters): undefined within the limit, else the 429. `tx`: the request's transaction.
 */
export function checkLimit(limiter: Limiter, rule: LimitRule, req: RequestInfo, n = 1, tx?: Writer, visitor = visitorOf(req)): Reply | undefined | Promise<Reply | undefined> {
  // The default rates spare a visitor on the machine itself: a local reverse proxy not named with
  // --trust-proxy (all its visitors would be one), a health check, a load test. Rates `limits:`
  // sets count everyone (docs/security.md "Limits per visitor").
  if (rule.byDefault && visitor !== 'app' && req.user == null && isLoopback(clientOf(req).address)) return undefined;
  let refusal: Refusal | undefined | Promise<Refusal | undefined>;
  try {
    refusal = limiter.hit(rule, visitor, n, tx);
  } catch (e) {
    return Promise.reject(e);
  }
  return refusal instanceof Promise ? refusal.then((r) => r && refused(r, req)) : refusal && refused(refusal, req);
}

/** The 429, with a log line for the first refusal of the visitor in the window (in this process). */
function refused(r: Refusal, req: RequestInfo): Reply {
  const reply = tooManyRequests(r.kind, r.retryAfter);
  if (r.first) {
    reply.log = { level: 'info', message: `limit ${r.kind}: ${r.visitor} is over the limit; refused until the window ends in ${r.retryAfter} s`, fields: { id: req.id, code: 'LW_LIMIT_EXCEEDED', kind: r.kind, visitor: r.visitor, path: req.path } };
  }
  return reply;
}

/** Whether an address is of the machine itself (127.0.0.0/8, ::1, or an IPv4 loopback mapped into IPv6). */
function isLoopback(address: string): boolean {
  return address.startsWith('127.') || address === '::1' || address.startsWith('::ffff:127.');
}
