/**
 * A request's visitor (docs/messages.md "The session"): the session it belongs to, made lazily — only
 * when a feature needs one (a form view, a message for the next page, a stored form state) — and
 * the cookies its answer sets.
 *
 * The session is an opaque random id in the `sid` cookie (`HttpOnly; SameSite=Lax; Path=/`, and
 * `Secure` on HTTPS and on localhost), with an HMAC of the app's secret: a forged, altered or
 * unknown `sid` is simply a fresh visitor, never an error. Nothing about the visitor is kept in
 * this process: the state lives in the store (VisitorStore).
 */
import type { ClientInfo } from '../shared/index.js';
import { FORM_TTL_MS, type Flash, type FlashMessage, type FormState, type VisitorStore } from './store.js';
import { randomId, type Signer } from './tokens.js';
import type { Writer } from '../store/index.js';
export { cookieNameProblem } from '../shared/index.js';

/** What an app provides for its visitors (made when its store opens). */
export interface VisitorContext {
  signer: Signer;
  store: VisitorStore;
}

/** A cookie a script writes (`Cookie.name(…).value(…).days(n).submit()`, docs/messages.md "Cookies"). */
export interface ScriptCookie {
  name: string;
  value: string;
  /** Persistent for this many days; absent: a browser-session cookie. */
  days?: number;
  /** Deletes the cookie (empty value, expiry in the past). */
  invalidate?: boolean;
}

/**
 * Whether cookies of this request may be `Secure`: HTTPS (the connection's, or a trusted proxy's
 * word: src/http/proxy.ts), or localhost (browsers accept them there).
 */
export function secureContext(client: Pick<ClientInfo, 'proto' | 'host'>): boolean {
  if (client.proto === 'https') return true;
  const host = client.host.toLowerCase().replace(/:\d+$/, '');
  return host === 'localhost' || host.endsWith('.localhost') || host === '127.0.0.1' || host === '[::1]';
}

export class Visitor {
  readonly #ctx: VisitorContext;
  readonly #secure: boolean;
  /** The session the request came with (a valid `sid`), else undefined. */
  readonly known: string | undefined;
  #made: string | undefined;
  readonly #cookies: string[] = [];

  constructor(ctx: VisitorContext, sidCookie: string | undefined, secure: boolean) {
    this.#ctx = ctx;
    this.#secure = secure;
    this.known = ctx.signer.readSid(sidCookie);
  }

  /** The session id, starting a session (its cookie goes out with the answer) when there is none. */
  id(): string {
    if (this.known) return this.known;
    if (!this.#made) {
      const s = this.#ctx.signer.newSid();
      this.#made = s.id;
      this.#cookies.push(`sid=${s.cookie}; Path=/; HttpOnly; SameSite=Lax${this.#secure ? '; Secure' : ''}`);
    }
    return this.#made;
  }

  /** The session id that replaces this one, once `replaceSession` was called. */
  replacedBy: string | undefined;

  /**
   * A new session in place of this one (at sign-in and sign-out: a session id someone else may
   * have planted is never signed in): its `Set-Cookie` value, persistent for `days` when given.
   */
  replaceSession(days?: number): string {
    const s = this.#ctx.signer.newSid();
    this.replacedBy = s.id;
    return `sid=${s.cookie}; Path=/; HttpOnly; SameSite=Lax${this.#secure ? '; Secure' : ''}${days ? `; Max-Age=${days * 86400}` : ''}`;
  }

  /** A cookie written by a script (its name was checked by the caller). */
  setCookie(c: ScriptCookie): void {
    const value = c.invalidate ? '' : encodeURIComponent(c.value);
    let header = `${c.name}=${value}; Path=/; HttpOnly; SameSite=Lax${this.#secure ? '; Secure' : ''}`;
    if (c.invalidate) header += '; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT';
    else if (c.days !== undefined && c.days > 0) header += `; Max-Age=${Math.round(Math.min(c.days, 400) * 86400)}`;
    this.#cookies.push(header);
  }

  /** `Set-Cookie` values of the answer (undefined when none). */
  setCookieHeaders(): string[] | undefined {
    return this.#cookies.length ? this.#cookies : undefined;
  }

  /** The flash this visitor's previous requests left (for a page), with its stored text. */
  flash(): { flash: Flash; raw: string } | undefined | Promise<{ flash: Flash; raw: string } | undefined> {
    return this.known ? this.#ctx.store.flash(this.known) : undefined;
  }

  /** Removes a flash once a page has shown it. */
  takeFlash(raw: string): Promise<void> {
    return this.known ? this.#ctx.store.takeFlash(this.known, raw) : Promise.resolve();
  }

  /** Leaves messages and data for this visitor's next page. */
  leave(flash: Flash, tx?: Writer): Promise<void> {
    if (!flash.messages.length && !Object.keys(flash.data).length) return Promise.resolve();
    return this.#ctx.store.addFlash(this.id(), flash, Date.now(), tx);
  }

  /** Whether this request made a fresh form-state id: a page showing one differs on every render. */
  issuedFormToken = false;

  /** A fresh form-state id for `form` (no database write). */
  formToken(form: string): string {
    this.issuedFormToken = true;
    return this.#ctx.signer.formToken(this.id(), form);
  }

  /** Stores a form state (`.invalid(…)`, `.form(…)`) and returns its id. */
  async saveFormState(form: string, values: Record<string, unknown>, messages: FlashMessage[], ready: boolean, tx?: Writer): Promise<string> {
    const id = 's' + randomId();
    const state: FormState = { sid: this.id(), form, values, messages, ready };
    await this.#ctx.store.saveFormState(id, state, Date.now(), tx);
    return id;
  }

  /** The stored state `id` of this visitor and form (undefined for another visitor's, an expired or a fresh one). */
  formState(id: string, form: string): FormState | undefined | Promise<FormState | undefined> {
    if (!this.known || !id.startsWith('s') || id.length !== 25) return undefined;
    const sid = this.known;
    const check = (s: FormState | undefined) => (s && s.sid === sid && s.form === form ? s : undefined);
    const s = this.#ctx.store.formState(id);
    return s instanceof Promise ? s.then(check) : check(s);
  }

  /**
   * Whether `id` is a form state this visitor may submit for `form`: a fresh id made for it, or a
   * stored state of it; and not submitted successfully before. Marks it used in the request's
   * transaction `w`, so that a replay of the same POST is refused.
   */
  async claimFormState(w: Writer, id: string, form: string): Promise<boolean> {
    if (!this.known) return false;
    let ok: boolean;
    if (id.startsWith('f')) ok = this.#ctx.signer.checkFormToken(id, this.known, form, FORM_TTL_MS);
    else ok = (await this.formState(id, form)) !== undefined;
    return ok && (await this.#ctx.store.claimForm(w, id));
  }
}
