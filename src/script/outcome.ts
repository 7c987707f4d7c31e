/**
 * outcomeToResponse: the pure mapping of a run's outcome to an HTTP answer (docs/scripting.md
 * "Completion value → response"; a failed run is rolled back).
 *
 * | Outcome                                         | Answer                                      |
 * |-------------------------------------------------|---------------------------------------------|
 * | value: Redirect builder                         | 302 to its path (failed if `.invalid(…)`)   |
 * | value: string starting with `/`                 | 302 within the app                          |
 * | value: string starting with `http://`/`https://`| 302 to that URL                             |
 * | value: `/path` or builder, POST/PUT/DELETE+AJAX | reroute: the caller answers GET path        |
 * | value: undefined (no expression emitted)        | 204, empty body                             |
 * | value: a function                               | 500 (LW_SCRIPT_BAD_OUTPUT)                   |
 * | value: anything else (object, array, number…)   | 200 JSON                                    |
 * | thrown: Redirect builder                        | 302, failed                                 |
 * | thrown: string                                  | 400 JSON `{"error": s}`, failed             |
 * | thrown: object / other value                    | 400 JSON as it is, failed                   |
 * | limit                                           | 503                                         |
 * | error                                           | its status (500 unless the host said, e.g. 404) |
 *
 * The answers of a limit, and of an error whose message is not for the client, carry no message:
 * the server gives its own (app/endpoint/answers.ts).
 *
 * A redirect target that is not a same-origin path (`//x`, `/\x`, control characters) or an
 * absolute http(s) URL is refused with 500: CR/LF never reach a header.
 */
import { LanewayError } from '../diag/index.js';
import { WebSafe } from '../shared/index.js';
import { ScriptValue } from './realm.js';
import type { ResponseRequest, RunOutcome, ScriptResponse } from './types.js';
import { ScriptRedirect, checkAppPath, checkExternalUrl } from './redirect.js';

const REROUTE_METHODS = new Set(['POST', 'PUT', 'DELETE']);

export function outcomeToResponse(outcome: RunOutcome, request: ResponseRequest): ScriptResponse {
  switch (outcome.kind) {
    case 'value':
      return valueResponse(outcome.value, request);
    case 'thrown':
      return thrownResponse(outcome.value);
    case 'limit':
      return { kind: 'error', status: 503, code: outcome.error.code, limit: true };
    case 'error': {
      const { error } = outcome;
      // Uncaught $ModelInvalid: 422 with the field messages (docs/queries.md "Errors"); the unique
      // conflict: 409 naming the field.
      if (error.code === 'LW_MODEL_INVALID') {
        const messages = (error as LanewayError & { messages?: unknown }).messages ?? [];
        return { kind: 'json', status: 422, body: JSON.stringify({ messages }), failed: true };
      }
      if (error.code === 'LW_MODEL_UNIQUE' || error.code === 'LW_MODEL_HAS_CHILDREN') {
        return { kind: 'json', status: 409, body: JSON.stringify({ error: error.message }), failed: true };
      }
      const status = error.status >= 400 && error.status <= 599 ? error.status : 500;
      return error.expose ? { kind: 'error', status, message: error.message, code: error.code } : { kind: 'error', status, code: error.code };
    }
  }
}

function valueResponse(value: unknown, request: ResponseRequest): ScriptResponse {
  if (value instanceof ScriptValue) {
    // Plain data checked during the run (RunContext.share): its JSON is ready.
    if (value.json !== undefined) return { kind: 'json', status: 200, body: value.json, failed: false };
    try {
      value = value.toHost();
    } catch (e) {
      const limit = e instanceof LanewayError && e.status === 503;
      return limit
        ? { kind: 'error', status: 503, code: (e as LanewayError).code, limit: true }
        : { kind: 'error', status: 500, message: 'The script emitted a value that cannot be sent as JSON.', code: 'LW_SCRIPT_BAD_OUTPUT' };
    }
  }
  const canReroute = request.ajax && REROUTE_METHODS.has(request.method.toUpperCase());
  if (value instanceof ScriptRedirect) {
    const location = checkAppPath(value.location);
    if (!location) return badRedirect();
    if (canReroute && !value.failed) return { kind: 'reroute', path: withoutHash(location) };
    return { kind: 'redirect', status: 302, location, failed: value.failed };
  }
  if (typeof value === 'string' && (value.startsWith('/') || value.startsWith('http'))) {
    if (value.startsWith('/')) {
      const location = checkAppPath(value);
      if (!location) return badRedirect();
      if (canReroute) return { kind: 'reroute', path: withoutHash(location) };
      return { kind: 'redirect', status: 302, location, failed: false };
    }
    const location = checkExternalUrl(value);
    if (!location) return badRedirect();
    return { kind: 'redirect', status: 302, location, failed: false };
  }
  if (value === undefined) return { kind: 'json', status: 204, body: '', failed: false };
  if (typeof value === 'function') {
    return { kind: 'error', status: 500, message: 'The script emitted a function, which cannot be sent as a response.', code: 'LW_SCRIPT_BAD_OUTPUT' };
  }
  const body = serialize(value);
  if (body === undefined) return { kind: 'error', status: 500, message: 'The script emitted a value that cannot be sent as JSON.', code: 'LW_SCRIPT_BAD_OUTPUT' };
  return { kind: 'json', status: 200, body, failed: false };
}

function thrownResponse(value: unknown): ScriptResponse {
  if (value instanceof ScriptRedirect) {
    const location = checkAppPath(value.location);
    if (!location) return badRedirect();
    return { kind: 'redirect', status: 302, location, failed: true };
  }
  const body = serialize(typeof value === 'string' ? { error: value } : value === undefined ? { error: null } : value);
  if (body === undefined) return { kind: 'error', status: 500, message: 'The script threw a value that cannot be sent as JSON.', code: 'LW_SCRIPT_BAD_OUTPUT' };
  return { kind: 'json', status: 400, body, failed: true };
}

function badRedirect(): ScriptResponse {
  return {
    kind: 'error',
    status: 500,
    message: 'The script emitted a redirect target that is not a path of this app or an http(s) URL.',
    code: 'LW_SCRIPT_BAD_REDIRECT',
  };
}

function withoutHash(location: string): string {
  const i = location.indexOf('#');
  return i === -1 ? location : location.slice(0, i);
}

/**
 * JSON of a value copied out of a script (plain data, Dates, WebSafe, ScriptRedirect). Functions
 * are dropped as JSON.stringify drops them; BigInts and anything JSON refuses give undefined.
 */
export function serialize(value: unknown, locations?: ReadonlyMap<ScriptRedirect, string>): string | undefined {
  try {
    return JSON.stringify(value, function (this: Record<string, unknown>, key, v: unknown) {
      // A redirect whose form state was stored: its JSON path carries `?_form=` (`locations`).
      if (locations !== undefined) {
        const held = this[key];
        const location = held instanceof ScriptRedirect ? locations.get(held) : undefined;
        if (location !== undefined) return { ...(v as object), path: location };
      }
      return v instanceof WebSafe ? v.html : typeof v === 'bigint' ? v.toString() : v;
    });
  } catch {
    return undefined;
  }
}
