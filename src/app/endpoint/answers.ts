/**
 * The error answers Laneway makes itself, each by one function with its one message. Endpoints
 * and wrappers (app/) return these replies; the request function (http/) sends them, as an HTML
 * page or as `{ "error": … }` by what the client accepts (http/error-page.ts `writeError`). The
 * statuses are listed in docs/routing.md "Status codes". Messages are fixed texts, never echoes of
 * the request; those of server errors (5xx) name the request id the log line has.
 *
 * Answers written by an app itself (a script's 4xx JSON, a ⚡NotFound.html page) and the answers of
 * the built-in endpoints with messages of their own (`/__/auth/`, `/__/images/`) are not here.
 */
import { LanewayError, type Code } from '../../diag/index.js';
import { StoreError } from '../../store/index.js';
import type { FailureSite, Reply } from './endpoint.js';

/** An error the HTTP layer renders (Reply of type 'error'). */
export type ErrorReply = Extract<Reply, { type: 'error' }>;

function answer(status: number, code: Code, message: string): ErrorReply {
  return { type: 'error', status, code, message };
}

/**
 * The site of an error that names its position first (`/api/GET.js:3:7: TypeError: …`, or
 * `/api/GET.js: …`), or that carries it (a LanewayError's file, line and column).
 */
export function failureSite(error: { message: string; file?: string | undefined; line?: number | undefined; column?: number | undefined }): FailureSite {
  const at = /^(\/[^\n]*?):(\d+):(\d+): ([\s\S]*)$/.exec(error.message);
  if (at) return { message: at[4]!, file: error.file ?? at[1]!, line: error.line ?? Number(at[2]), column: error.column ?? Number(at[3]) };
  const inFile = /^(\/[^\n:]*): ([\s\S]*)$/.exec(error.message);
  const site: FailureSite = { message: inFile ? inFile[2]! : error.message };
  const file = error.file ?? inFile?.[1];
  if (file !== undefined) site.file = file;
  if (error.line !== undefined) site.line = error.line;
  if (error.column !== undefined) site.column = error.column;
  return site;
}

/**
 * The JSON body of every error answer: `{ "error": message, "id": request id }` (docs/errors.md
 * "Error answers"); in development (`dev`) also the code, where it failed and the detail.
 */
export function errorJson(message: string, id?: string, dev?: { code: Code; site?: FailureSite | undefined; detail?: string | undefined }): string {
  const body: Record<string, unknown> = { error: message };
  if (id !== undefined) body.id = id;
  if (dev) {
    body.code = dev.code;
    body.message = dev.site?.message ?? message;
    if (dev.site?.file !== undefined) body.file = dev.site.file;
    if (dev.site?.line !== undefined) body.line = dev.site.line;
    if (dev.site?.column !== undefined) body.column = dev.site.column;
    if (dev.detail !== undefined) body.detail = dev.detail;
  }
  return JSON.stringify(body);
}

/** 400: the request path cannot name a file of the app; `reason` is splitPath's fixed text. */
export function badPath(reason: string): ErrorReply {
  return answer(400, 'LW_HTTP_BAD_PATH', reason);
}

/** 400, thrown while reading a body: the client went away before sending all of it. */
export function bodyCutOff(): LanewayError {
  return new LanewayError('LW_HTTP_BAD_BODY', 'the request body was cut off', { status: 400 });
}

/** 413, thrown before or while reading a body over the app's limit. */
export function bodyTooLarge(limit: number): LanewayError {
  return new LanewayError('LW_HTTP_BODY_TOO_LARGE', `the request body is larger than ${limit} bytes`, { status: 413 });
}

/** 401: an `auth: required` area, asked by a JSON client or with a write, by a visitor not signed in. */
export function signInFirst(): ErrorReply {
  return answer(401, 'LW_AUTH_REQUIRED', 'Sign in first.');
}

/** The fixed text of the cross-site refusal (http/cross-origin.ts decides; it never echoes the request). */
const CROSS_ORIGIN_MESSAGE =
  "This request came from a page of another site: POST, PUT, PATCH and DELETE are accepted only from this site's own pages (and origins listed under trusted-origins: in /🎛.yaml).";

/** 403: a write sent by a page of another site (docs/security.md "Cross-site requests"). */
export function crossOriginRefused(): ErrorReply {
  return answer(403, 'LW_HTTP_CROSS_ORIGIN', CROSS_ORIGIN_MESSAGE);
}

/** 403: `👤: {only: …}` and the visitor holds none of `roles` (app/request/permissions.ts). */
export function onlyRoles(roles: readonly string[]): ErrorReply {
  return answer(403, 'LW_AUTH_FORBIDDEN', `Only ${roles.join(' or ')} may do this.`);
}

/** The 4xx a page ran into while rendering (a permission, a record): its own message when that is for the client. */
export function refused(cause: LanewayError): ErrorReply {
  return answer(cause.status, cause.code, cause.expose ? cause.message : `The request was refused (${cause.status}).`);
}

/** 404: nothing answers the URL, or a model-backed parameter names no record. */
export function notFound(): ErrorReply {
  return answer(404, 'LW_HTTP_NOT_FOUND', 'There is nothing at this address.');
}

/** 405: the URL exists, not for this method (the HTTP layer adds `Allow`). */
export function methodNotAllowed(): ErrorReply {
  return answer(405, 'LW_HTTP_METHOD_NOT_ALLOWED', 'This address does not answer this method; see the Allow header.');
}

/** The JSON body of a 409: a unique value met at the commit (PostgreSQL), `message` naming the field. */
export function conflictJson(message: string, id: string): string {
  return errorJson(message, id);
}

/**
 * A JSON error body Laneway made from a script's failure (`$ModelInvalid`'s 422, a 409) with the
 * request id added; a body that is not a JSON object, or has an `id`, stays as it is.
 */
export function withIdInJson(body: string, id: string): string {
  try {
    const value: unknown = JSON.parse(body);
    if (value === null || typeof value !== 'object' || Array.isArray(value) || 'id' in value) return body;
    return JSON.stringify({ ...value, id });
  } catch {
    return body;
  }
}

/** 422: a field names an image upload that is not there (never uploaded, or expired). */
export function imageNotUploaded(): ErrorReply {
  return answer(422, 'LW_IMAGE_NOT_UPLOADED', 'An image was not uploaded (or its upload expired): upload it again.');
}

/** 500: anything unexpected; `id` is the request id of the log line. */
export function internalError(id: string, code: Code = 'LW_HTTP_INTERNAL'): ErrorReply {
  return answer(500, code, `Something went wrong on our side. The error was logged with id ${id}.`);
}

/** 500: a `⏱` script that did not end with its polled function (app/request/events.ts); `what` describes what it ended with. */
export function eventsNotAFunction(file: string, what: string, id: string): ErrorReply {
  return answer(500, 'LW_EVENTS_NOT_A_FUNCTION', `The event stream ${file} is broken: its script must end with a function (lastEventId) => [events], and it ended with ${what}. The error was logged with id ${id}.`);
}

/** docs/status.md's name of the hosting platform's own services (`'🔌'`). */
export const PLATFORM_FEATURE = "'🔌', the platform's own services";

/**
 * 501: the file needs what this server does not provide (docs/status.md "What degrades");
 * `features` as docs/status.md names them ('🔌' alone keeps its own code).
 */
export function notAvailable(features: readonly string[]): ErrorReply {
  if (features.length === 1 && features[0] === PLATFORM_FEATURE) {
    return answer(501, 'LW_SCRIPT_PLATFORM_MODULE', "This part of the site uses the hosting platform's own services, which this server does not provide.");
  }
  return answer(501, 'LW_APP_NOT_AVAILABLE', `This part of the site needs ${features.join(' and ')}, which this server does not provide.`);
}

/** 503: a script or a page's scripts ran out of the request's budget (CPU time, memory, output). */
export function overBudget(id: string, code: Code): ErrorReply {
  return answer(503, code, `This request needed more time or memory than a request may use, and was stopped; try again later. The error was logged with id ${id}.`);
}

/** 503: a script failed with an error that is not for the client and says the server cannot answer now. */
export function unavailableNow(id: string, code: Code): ErrorReply {
  return answer(503, code, `The service is unavailable for this request now; try again in a moment. The error was logged with id ${id}.`);
}

/**
 * The error answer of a script (script/outcome.ts): its own message when it has one for the
 * client; else the server's words for a limit, a 503 or any other failure (logged with `id`).
 */
export function scriptError(failure: { status: number; code: Code; message?: string; limit?: true }, id: string): ErrorReply {
  if (failure.message !== undefined) return answer(failure.status, failure.code, failure.message);
  if (failure.limit) return overBudget(id, failure.code);
  if (failure.code === 'LW_STORE_UNAVAILABLE') return storeUnavailable();
  if (failure.status === 503) return unavailableNow(id, failure.code);
  const words = CLIENT_ERROR_WORDS[failure.status];
  if (words !== undefined) return answer(failure.status, failure.code, words);
  return { ...internalError(id, failure.code), status: failure.status };
}

/** Where a script failed (development answers): its error's position, else the script file. */
export function scriptSite(outcome: { kind: string; error?: LanewayError }, answer: { message?: string }, file: string): FailureSite {
  const error = outcome.kind === 'error' || outcome.kind === 'limit' ? outcome.error : undefined;
  if (error) return failureSite(error);
  return { message: answer.message ?? 'the output went over a limit of the script', file };
}

/** What a script's 4xx says when its error carries no message for the client. */
const CLIENT_ERROR_WORDS: Readonly<Record<number, string>> = {
  400: 'Bad request.',
  403: 'Forbidden.',
  404: 'Not found.',
  422: 'The submitted values are not valid.',
};

/** What each kind of limit per visitor counts, in the words of its refusal. */
const LIMITED: Readonly<Record<string, string>> = {
  writes: 'Too many changes were sent from here',
  emails: 'Too many messages were sent from here',
  'app-emails': 'This site has sent as many messages as it may for now',
  'sign-ins': 'Too many sign-ins were started from here',
  uploads: 'Too many image uploads were started from here',
  'upload-mb': 'Too many bytes of images were uploaded from here',
  streams: 'Too many live connections were opened from here',
};

/**
 * 429: a visitor over one of the app's limits per visitor (docs/security.md "Limits per visitor");
 * nothing was written or sent. `Retry-After` says when the window ends; `limit` names the kind for
 * the metrics (http/metrics.ts).
 */
export function tooManyRequests(kind: string, retryAfter: number): ErrorReply {
  return {
    type: 'error',
    status: 429,
    code: 'LW_LIMIT_EXCEEDED',
    message: `${LIMITED[kind] ?? 'Too many requests were sent from here'}; try again in ${retryAfter} ${retryAfter === 1 ? 'second' : 'seconds'}.`,
    headers: { 'Retry-After': String(retryAfter), 'Cache-Control': 'no-store' },
    limit: kind,
  };
}

/** 503: the app has `events: max-streams` event streams open already. */
export function tooManyStreams(): ErrorReply {
  return answer(503, 'LW_EVENTS_TOO_MANY', 'Too many event streams are open; try again in a moment.');
}

/** 503: the database is not open or did not answer; nothing was changed. */
export function storeUnavailable(): ErrorReply {
  return answer(503, 'LW_STORE_UNAVAILABLE', 'The database is unavailable; nothing was changed. Try again in a moment.');
}

/** 503 at the commit: the outcome is unknown (the connection may drop after the server committed). */
export function storeUnavailableAtCommit(): ErrorReply {
  return answer(503, 'LW_STORE_UNAVAILABLE', 'The database became unavailable while saving: the change may or may not have been saved. Check before trying again.');
}

/** The 503 of a store that failed (a StoreError) before the endpoint ran; anything else is thrown again. */
export function storeFailed(e: unknown): ErrorReply {
  if (e instanceof StoreError) return storeUnavailable();
  throw e;
}

/**
 * The 503 of a store that failed in an endpoint's transaction, logged for `file` with `detail`
 * (what the store said); `atCommit`: the commit itself failed.
 */
export function storeUnavailableLogged(log: (message: string, fields: Record<string, unknown>) => void, id: string, file: string, detail: string, atCommit = false): ErrorReply {
  log(`${file}: the database is unavailable: ${detail}`, { id, code: 'LW_STORE_UNAVAILABLE', file });
  return atCommit ? storeUnavailableAtCommit() : storeUnavailable();
}

/** Thrown by a model operation when the app's store is not open (the request answers 503). */
export function storeNotOpen(): LanewayError {
  return new LanewayError('LW_STORE_UNAVAILABLE', 'the database is not open', { status: 503 });
}
