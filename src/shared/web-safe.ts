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
