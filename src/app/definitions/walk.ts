/**
 * One walk of the app directory. Names are normalised (NFC, U+FE0F removed) before anything
 * else looks at them, so `⚡️NotFound.html` and `⚡NotFound.html` are the same special name.
 * Symbolic links are followed only while they stay inside the app directory.
 */
import { lstatSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { join, sep } from 'node:path';
import { normalizeName, normalizePath } from '../../shared/index.js';
import type { DiagnosticList } from '../../diag/index.js';

export interface WalkedFile {
  /** App path: `/dir/name.ext`, normalised. */
  path: string;
  /** Absolute path on disk. */
  abs: string;
  /** App path of the real file, when reached through a symbolic link (privacy is checked on both). */
  target?: string;
  size: number;
  mtimeMs: number;
}

/** Directories never walked: tooling, not app content. */
const SKIPPED_DIRS = new Set(['.git', 'node_modules', '.hg', '.svn']);

export function walkApp(root: string, diagnostics: DiagnosticList): { files: WalkedFile[]; dirs: string[] } {
  const realRoot = realpathSync(root);
  const files: WalkedFile[] = [];
  const dirs: string[] = [''];
  // Real directories on the current descent: a link back to one of them would loop forever.
  const ancestors = new Set<string>();
  const appPathOf = (real: string) => normalizePathOnDisk(real.slice(realRoot.length));

  function visit(absDir: string, appDir: string, realDir: string): void {
    ancestors.add(realDir);
    let entries;
    try {
      entries = readdirSync(absDir, { withFileTypes: true });
    } catch (err) {
      diagnostics.warn('LW_APP_UNREADABLE', `cannot read directory: ${(err as Error).message}`, appDir || '/');
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const name = normalizeName(entry.name);
      const abs = join(absDir, entry.name);
      const path = appDir + '/' + name;
      let isDir = entry.isDirectory();
      let isFile = entry.isFile();
      let real = abs;
      if (entry.isSymbolicLink()) {
        try {
          real = realpathSync(abs);
        } catch {
          diagnostics.warn('LW_APP_SYMLINK_OUTSIDE', 'broken symbolic link; ignored', path);
          continue;
        }
        if (real !== realRoot && !real.startsWith(realRoot + sep)) {
          diagnostics.warn('LW_APP_SYMLINK_OUTSIDE', `symbolic link leads outside the app directory (${real}); ignored`, path);
          continue;
        }
        const st = statSync(real);
        isDir = st.isDirectory();
        isFile = st.isFile();
      }
      if (isDir) {
        // Dot-directories (the data directory .laneway, .git…) are never walked, except /.well-known.
        if (SKIPPED_DIRS.has(name) || (name.startsWith('.') && name !== '.well-known')) continue;
        const childReal = entry.isSymbolicLink() ? real : join(realDir, entry.name);
        if (ancestors.has(childReal)) {
          diagnostics.warn('LW_APP_SYMLINK_OUTSIDE', 'symbolic link leads back to one of its own ancestors; ignored', path);
          continue;
        }
        dirs.push(path);
        visit(abs, path, childReal);
      } else if (isFile) {
        const st = lstatSync(real);
        const realFile = entry.isSymbolicLink() ? real : join(realDir, entry.name);
        const target = appPathOf(realFile);
        files.push({ path, abs: realFile, size: st.size, mtimeMs: st.mtimeMs, ...(target !== path ? { target } : {}) });
      }
    }
    ancestors.delete(realDir);
  }

  visit(realRoot, '', realRoot);
  return { files, dirs };
}

function normalizePathOnDisk(relative: string): string {
  return normalizePath(relative.split(sep).join('/'));
}
