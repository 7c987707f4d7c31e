/**
 * The host side of a `Redirect` builder (docs/scripting.md "Redirect builder"), and the checks
 * every redirect target passes before it reaches a `Location` header.
 */

export type FlashType = 'success' | 'info' | 'warning' | 'error';

export interface RedirectFormError {
  key: string;
  values: Record<string, unknown>;
  messages: Array<{ type: string; field: string; value: string }>;
}

export interface FlashMessage {
  type: FlashType;
  value: string;
}

/**
 * A Redirect builder as it leaves a script: a same-origin path with its query and fragment, plus
 * the flash messages to record for the next GET. `failed` is set by `.invalid(…)`; `invalid` and
 * `form` carry what the script passed to `.invalid(…)` / `.form(…)` (for the form layer).
 */
export class ScriptRedirect {
  readonly path: string;
  readonly query: ReadonlyArray<readonly [string, string]>;
  readonly hash: string;
  readonly messages: readonly FlashMessage[];
  readonly failed: boolean;
  readonly invalid: unknown;
  readonly form: unknown;
  /** The form state `.invalid($ModelInvalid)` carries when the error came from a form: the form's key, the submitted texts, the messages. */
  readonly formError: RedirectFormError | undefined;
  /** The validated form `.form(f)` carries to the next step (a form state with no messages). */
  readonly formState: RedirectFormError | undefined;

  constructor(init: {
    path: string;
    query?: ReadonlyArray<readonly [string, string]>;
    hash?: string;
    messages?: readonly FlashMessage[];
    failed?: boolean;
    invalid?: unknown;
    form?: unknown;
    formError?: RedirectFormError | undefined;
    formState?: RedirectFormError | undefined;
  }) {
    this.path = init.path;
    this.query = Object.freeze((init.query ?? []).map(([k, v]) => Object.freeze([k, v] as const)));
    this.hash = init.hash ?? '';
    this.messages = Object.freeze((init.messages ?? []).map((m) => Object.freeze({ type: m.type, value: m.value })));
    this.failed = init.failed ?? false;
    this.invalid = init.invalid;
    this.form = init.form;
    this.formError = init.formError;
    this.formState = init.formState;
    Object.freeze(this);
  }

  /** Path, query and fragment, percent-encoded: the `Location` of the redirect. */
  get location(): string {
    const q = this.query.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
    return this.path + (q ? `?${q}` : '') + (this.hash ? `#${encodeURIComponent(this.hash)}` : '');
  }

  /** The JSON form (docs/scripting.md "Redirect builder"): `{"path": "/a/", "messages": [{"type": "success", "value": "…"}]}`. */
  toJSON(): { path: string; messages: FlashMessage[] } {
    return { path: this.location, messages: this.messages.map((m) => ({ type: m.type, value: m.value })) };
  }
}
Object.freeze(ScriptRedirect.prototype);

/** Characters that never reach a header: controls (CR, LF, NUL, …), DEL, and the backslash. */
const UNSAFE = /[\u0000-\u001f\u007f\\]/;

/**
 * A same-origin path: one leading `/`, not `//` or `/\` (which browsers read as another host),
 * and no control characters. Returns the path, percent-encoding spaces and non-ASCII characters.
 */
export function checkAppPath(target: string): string | undefined {
  if (!target.startsWith('/') || target.startsWith('//') || UNSAFE.test(target)) return undefined;
  try {
    return encodeLoosely(target);
  } catch {
    return undefined; // a lone surrogate cannot be encoded
  }
}

/** An absolute http(s) URL without credentials or control characters, normalised by `URL`. */
export function checkExternalUrl(target: string): string | undefined {
  if (UNSAFE.test(target) || !/^https?:\/\//i.test(target)) return undefined;
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return undefined;
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password || !url.hostname) return undefined;
  return url.href;
}

/** Percent-encodes what a header may not carry raw, leaving existing escapes and reserved characters. */
function encodeLoosely(path: string): string {
  // Shortcut: a path with nothing to encode (the usual one) is not rewritten.
  if (!LOOSE_ENCODED.test(path)) return path;
  return path.replace(/[^\x21-\x7e]|%(?![0-9a-fA-F]{2})/gu, (c) => encodeURIComponent(c));
}

const LOOSE_ENCODED = /[^\x21-\x7e]|%(?![0-9a-fA-F]{2})/u;
