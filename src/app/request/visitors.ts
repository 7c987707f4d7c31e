/**
 * What a script endpoint's answer does for its visitor (docs/messages.md, docs/forms.md): after
 * the run, the effects its scripts recorded (script/realm/42-visitor.js) are checked, then — once the
 * request's transaction is committed — cookies are written, and messages and `Messages.data`
 * values are left for the visitor's next page.
 *
 * - Cookies and e-mail are effects of a successful POST, PUT or DELETE only (docs/messages.md
 *   "Cookies", docs/email.md "Scripts").
 * - Messages go to the next page when the request succeeded, and with any redirect (a failed one
 *   too: `throw Redirect.home().error('…')` tells the visitor why); a failed request that answers
 *   otherwise (400, 422, 500) leaves nothing.
 */
import type { Code } from '../../diag/index.js';
import { ScriptRedirect, ScriptValue, serializeScriptValue, type RequestEffects, type RunOutcome, type ScriptResponse } from '../../script/index.js';
import { cookieNameProblem, type Flash } from '../../session/index.js';
import type { Writer } from '../../store/index.js';
import type { ReplyHeaders } from '../endpoint/endpoint.js';
import type { RequestScope } from './scope.js';

/** A problem that fails the request before its commit (a cookie name, an e-mail in a GET). */
export function effectsProblem(effects: RequestEffects | undefined, method: string, file: string): { code: Code; message: string } | undefined {
  if (!effects) return undefined;
  const writes = method === 'POST' || method === 'PUT' || method === 'DELETE';
  if (effects.cookies.length && !writes) {
    return { code: 'LW_SESSION_EFFECT_IN_GET', message: `${file}: cookies are written by POST, PUT and DELETE scripts only; a ${method} script may read them (import {name} from '🍪')` };
  }
  if ((effects.emails.length || effects.notifications.length) && !writes) {
    return { code: 'LW_SESSION_EFFECT_IN_GET', message: `${file}: e-mail is sent by POST, PUT and DELETE scripts only (it is sent when the request succeeds)` };
  }
  for (const c of effects.cookies) {
    const problem = c.name === null ? 'a Cookie needs a name: Cookie.name(\'theme\')…' : cookieNameProblem(c.name);
    if (problem) return { code: 'LW_COOKIE_NAME', message: `${file}: ${problem}` };
  }
  return undefined;
}

/** The redirect a run answered with (returned or thrown), if any. */
export function redirectOf(outcome: RunOutcome): ScriptRedirect | undefined {
  if (outcome.kind !== 'value' && outcome.kind !== 'thrown') return undefined;
  let v = outcome.value;
  if (v instanceof ScriptValue) {
    if (v.json !== undefined) return undefined;
    try {
      v = v.toHost();
    } catch {
      return undefined;
    }
  }
  return v instanceof ScriptRedirect ? v : undefined;
}

/** What the request leaves for the visitor's next page. */
function flashOf(effects: RequestEffects | undefined, redirect: ScriptRedirect | undefined, answer: ScriptResponse, ok: boolean): Flash | undefined {
  const messages = [...(ok || answer.kind === 'redirect' ? effects?.messages ?? [] : []), ...(redirect?.messages ?? [])];
  const data = ok || answer.kind === 'redirect' ? effects?.data ?? {} : {};
  if (!messages.length && !Object.keys(data).length) return undefined;
  return { messages, data };
}

/**
 * Writes the cookies of a successful request, leaves the flash for the next page, and stores the
 * form state a `Redirect….invalid($ModelInvalid)` carries (its id goes on the redirect as
 * `?_form=`, docs/forms.md "In scripts and views at run time"). Returns the answer (its location
 * changed for a form state) and its `Set-Cookie` headers. A successful request passes its
 * transaction `tx` (before its commit): the flash and the form state are written with its other
 * writes, and the commit decides for all of them. A failed one calls after its rollback, without
 * `tx`: a transaction of their own. A flash that cannot be stored then (the database went away) is
 * logged, not fatal.
 */
export function settleVisitor(
  scope: RequestScope,
  effects: RequestEffects | undefined,
  outcome: RunOutcome,
  answer: ScriptResponse,
  ok: boolean,
  log: (message: string, fields: Record<string, unknown>) => void,
  tx?: Writer,
): Promise<{ answer: ScriptResponse; headers: ReplyHeaders | undefined }> {
  // Shortcut: a request that asked nothing for its visitor makes none (no cookie read, no session).
  if (!effects && !scope.visitorTouched() && leavesNothing(outcome, answer)) return Promise.resolve({ answer, headers: undefined });
  return settleWithVisitor(scope, effects, outcome, answer, ok, log, tx);
}

/**
 * Whether an answer leaves nothing for the visitor by itself: no redirect with messages or a form
 * state, no JSON that may hold such a redirect (plain JSON checked during the run holds none).
 */
function leavesNothing(outcome: RunOutcome, answer: ScriptResponse): boolean {
  switch (answer.kind) {
    case 'error':
      return true;
    case 'json':
      return answer.body === '' || (outcome.kind !== 'value' && outcome.kind !== 'thrown') || (outcome.value instanceof ScriptValue && outcome.value.json !== undefined);
    case 'redirect':
    case 'reroute': {
      const redirect = redirectOf(outcome);
      return !redirect || (redirect.messages.length === 0 && !redirect.formError && !redirect.formState);
    }
  }
}

async function settleWithVisitor(
  scope: RequestScope,
  effects: RequestEffects | undefined,
  outcome: RunOutcome,
  answer: ScriptResponse,
  ok: boolean,
  log: (message: string, fields: Record<string, unknown>) => void,
  tx?: Writer,
): Promise<{ answer: ScriptResponse; headers: ReplyHeaders | undefined }> {
  const visitor = scope.visitor();
  if (!visitor) return { answer, headers: undefined };
  if (ok && effects) {
    for (const c of effects.cookies) visitor.setCookie({ name: c.name!, value: c.value, ...(c.days !== null && { days: c.days }), invalidate: c.invalidate });
  }
  // The redirect (copied out of the realm once): its messages, and the form state `.invalid(…)` carries.
  const redirect = answer.kind === 'redirect' || answer.kind === 'reroute' ? redirectOf(outcome) : undefined;
  const flash = flashOf(effects, redirect, answer, ok);
  try {
    if (flash) await visitor.leave(flash, tx);
    // The form state `.invalid($ModelInvalid)` carries back, or the one `.form(f)` carries on to the next step.
    const carried = answer.kind === 'redirect' ? (redirect?.formError ?? (ok ? redirect?.formState : undefined)) : undefined;
    if (carried && answer.kind === 'redirect') {
      const stateKey = carried.key.includes('#') ? carried.key.slice(0, carried.key.indexOf('#')) : carried.key;
      const ready = carried === redirect?.formState;
      const id = await visitor.saveFormState(stateKey, carried.values, carried.messages.map((m) => ({ type: m.type as 'error', field: m.field, value: m.value })), ready, tx);
      answer = { ...answer, location: withFormId(answer.location, id) };
    }
    // Redirects inside a JSON result (`({redirect: Redirect….form(f)})`, an AJAX form flow):
    // their form states are stored too, and their JSON paths carry `?_form=` (docs/forms.md).
    if (answer.kind === 'json' && answer.body !== '') {
      const inner = jsonRedirects(outcome);
      if (inner) {
        const locations = new Map<ScriptRedirect, string>();
        for (const r of inner.redirects) {
          const state = r.formError ?? (ok ? r.formState : undefined);
          if (!state) continue;
          const stateKey = state.key.includes('#') ? state.key.slice(0, state.key.indexOf('#')) : state.key;
          const id = await visitor.saveFormState(stateKey, state.values, state.messages.map((m) => ({ type: m.type as 'error', field: m.field, value: m.value })), state === r.formState, tx);
          locations.set(r, withFormId(r.location, id));
        }
        const body = locations.size ? serializeScriptValue(inner.value, locations) : undefined;
        if (body !== undefined) answer = { ...answer, body };
      }
    }
  } catch (e) {
    // In the request's transaction, the request fails with it (its caller rolls back).
    if (tx) throw e;
    log(`the visitor's messages or form state could not be stored: ${(e as Error).message}`, { id: scope.req.id, code: 'LW_SESSION_UNAVAILABLE' });
  }
  const cookies = visitor.setCookieHeaders();
  return { answer, headers: cookies ? { 'Set-Cookie': cookies } : undefined };
}

/** The host copy of a JSON result and the redirects with a form state inside it, if it has any. */
function jsonRedirects(outcome: RunOutcome): { value: unknown; redirects: ScriptRedirect[] } | undefined {
  if (outcome.kind !== 'value' && outcome.kind !== 'thrown') return undefined;
  let value = outcome.value;
  if (value instanceof ScriptValue) {
    // Plain data checked during the run holds no redirect.
    if (value.json !== undefined) return undefined;
    try {
      value = value.toHost();
    } catch {
      return undefined;
    }
  }
  const redirects: ScriptRedirect[] = [];
  const seen = new Set<unknown>();
  const walk = (v: unknown): void => {
    if (v === null || typeof v !== 'object' || seen.has(v)) return;
    seen.add(v);
    if (v instanceof ScriptRedirect) {
      if (v.formError || v.formState) redirects.push(v);
      return;
    }
    for (const x of Array.isArray(v) ? v : Object.values(v)) walk(x);
  };
  walk(value);
  return redirects.length ? { value, redirects } : undefined;
}

/** `/a?x=1#h` → `/a?x=1&_form=id#h` (a `_form` already there is replaced). */
function withFormId(location: string, id: string): string {
  const hash = location.indexOf('#');
  const head = hash === -1 ? location : location.slice(0, hash);
  const tail = hash === -1 ? '' : location.slice(hash);
  const q = head.indexOf('?');
  const path = q === -1 ? head : head.slice(0, q);
  const params = (q === -1 ? '' : head.slice(q + 1)).split('&').filter((p) => p !== '' && !p.startsWith('_form='));
  params.push(`_form=${encodeURIComponent(id)}`);
  return `${path}?${params.join('&')}${tail}`;
}
