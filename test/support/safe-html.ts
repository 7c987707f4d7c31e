/**
 * What the rich-text tests (test/models/rich.test.ts, test/content/markdown-xss.test.ts) hold
 * printed HTML to: the elements of the allow-list, and the link rule as a browser follows a link.
 */

/** Elements rich text may hold (src/models/rich.ts). */
export const ALLOWED_ELEMENTS = new Set(['h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'div', 'p', 'pre', 'blockquote', 'ul', 'ol', 'li', 'a', 'br', 'code', 'em', 's', 'strong', 'sub', 'sup', 'del', 'ins']);

/** The page links are resolved against. */
export const BASE = 'https://laneway.test/app/page';

/**
 * The URL rule, checked the way a browser follows the link: resolved against a page of the app, it
 * must be http(s) or mailto, and reach another host only when it names its scheme itself.
 */
export function hrefIsSafe(href: string): boolean {
  let url: URL;
  try {
    url = new URL(href, BASE);
  } catch {
    return true; // a link that does not parse goes nowhere
  }
  if (!['http:', 'https:', 'mailto:'].includes(url.protocol)) return false;
  const reduced = href.replace(/^[\u0000-\u0020]+/, '').replace(/[\t\n\r]/g, '');
  return url.protocol === 'mailto:' || url.host === 'laneway.test' || /^https?:/i.test(reduced);
}
