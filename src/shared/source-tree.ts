/**
 * Read access to an app's source files, as the compilers see them.
 *
 * Paths are app-relative, start with `/`, use `/` separators, and are normalised with
 * `normalizePath` (NFC, U+FE0F removed) — the same form the loader uses for every special name.
 */
export interface SourceTree {
  /** Text of a regular file (`/_layout.html`), or undefined when there is none. */
  read(path: string): string | undefined;
  /** Names of the files directly inside a directory (`/_partials/`), or undefined when it does not exist. */
  list(dir: string): string[] | undefined;
}

const VS16 = /\uFE0F/g;

/** Normalises one file name: NFC, and the emoji variation selector U+FE0F removed. */
export function normalizeName(name: string): string {
  return name.normalize('NFC').replace(VS16, '');
}

/** Normalises a `/`-separated path segment by segment. */
export function normalizePath(path: string): string {
  return path.split('/').map(normalizeName).join('/');
}
