/**
 * Laneway's slug function: the readable, URL-fragment-safe form of a title, used for heading ids
 * (`## Café au lait` → `id="café-au-lait"`).
 *
 * The title is put in Unicode normal form C (so that `é` typed as one code point or as `e` plus a
 * combining accent gives the same slug) and lower-cased. Letters, combining marks and digits of
 * any script are kept (`\p{L} \p{M} \p{N}`); every run of anything else (spaces, punctuation,
 * symbols, emoji) becomes one `-`, and `-` is trimmed from both ends. A title with no letter or
 * digit gives `''`; callers choose a fallback.
 *
 * Examples: `'Hello, World!'` → `'hello-world'`, `'  Über  uns '` → `'über-uns'`,
 * `'2.1 — Les élèves'` → `'2-1-les-élèves'`, `'日本語の見出し'` → `'日本語の見出し'`, `'C++'` → `'c'`.
 */
export function slugify(title: string): string {
  return title
    .normalize('NFC')
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}]+/gu, '-')
    // Every run is one `-` by now; `-+$` would try each dash of a long run again (docs/architecture.md
    // "Regular expressions on what a visitor sends").
    .replace(/^-|-$/g, '');
}

/**
 * A slug not yet in `taken`, and records it there: `base` itself when free, else `base-2`,
 * `base-3`, … (the first free one).
 */
export function uniqueSlug(base: string, taken: Set<string>): string {
  let slug = base;
  for (let n = 2; taken.has(slug); n++) slug = `${base}-${n}`;
  taken.add(slug);
  return slug;
}
