/**
 * A web-safe value: markup Laneway itself produced or checked (an inlined SVG file, the output of an
 * HTML supplier, later HTML/SVG model fields). Only such values pass through `{{{ }}}`, `{{& }}`
 * and `{{% show }}` unescaped; any other value is escaped there as everywhere else.
 *
 * Instances are frozen and their prototype is frozen, so scripts can hold them without reaching
 * host functions.
 */
export class WebSafe {
  readonly html: string;
  constructor(html: string) {
    this.html = html;
    Object.freeze(this);
  }
  toString(): string {
    return this.html;
  }
}
Object.freeze(WebSafe.prototype);

export function isWebSafe(value: unknown): value is WebSafe {
  return value instanceof WebSafe;
}

/**
 * Values that print as web-safe markup without being a WebSafe: a rich-text value
 * (src/content/rich-text.ts), whose `html` is a method taking rendering options. Such a value has
 * a method under this symbol giving its default markup; views print it raw in `{{{ }}}` and escape
 * it elsewhere, as a WebSafe.
 */
export const SAFE_HTML = Symbol.for('laneway.safeHtml');

/** The markup of a WebSafe or of a value with a SAFE_HTML method; undefined for anything else. */
export function safeMarkup(value: unknown): string | undefined {
  if (value instanceof WebSafe) return value.html;
  if (value !== null && typeof value === 'object' && typeof (value as { [SAFE_HTML]?: unknown })[SAFE_HTML] === 'function') {
    return String((value as { [SAFE_HTML](): unknown })[SAFE_HTML]());
  }
  return undefined;
}

/**
 * Values that print as text of their own in `{{ }}`, escaped, rather than as their markup escaped:
 * a rich-text value prints its source there (docs/content.md "Members of a rich-text value"),
 * and its HTML only in `{{{ }}}`.
 */
export const PLAIN_TEXT = Symbol.for('laneway.plainText');

/** The text a value with a PLAIN_TEXT method prints in `{{ }}`; undefined for anything else. */
export function plainText(value: unknown): string | undefined {
  if (value !== null && typeof value === 'object' && typeof (value as { [PLAIN_TEXT]?: unknown })[PLAIN_TEXT] === 'function') {
    return String((value as { [PLAIN_TEXT](): unknown })[PLAIN_TEXT]());
  }
  return undefined;
}
