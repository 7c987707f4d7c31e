/**
 * Watching an app's files for `laneway dev` and `laneway serve --watch`, through chokidar.
 *
 * Why chokidar rather than Node's `fs.watch(dir, {recursive: true})`: on Linux, Node 20 builds the
 * recursive watch from one inotify watch per file and directory it saw at start, so a file an
 * editor saves by writing a temporary file and renaming it over the original is lost after the
 * first save (its inode changed), and directories created later are not always followed. Chokidar
 * watches each directory, notices renames and new directories, and re-attaches.
 *
 * Changes are collected into bursts: a burst ends when nothing changed for `quietMs` (50 ms), and
 * `onChange` receives every path of the burst at once (an editor's "save all", a `git checkout`:
 * one rebuild, one reload). A burst that ends while the previous `onChange` is still running waits
 * for it, so rebuilds never overlap. The quiet time is part of the wait after every save (a
 * rebuild after one edit takes well under 100 ms, app/load/build-cache.ts); the files of one save
 * arrive within a few milliseconds of each other, and a burst longer than that is only rebuilt
 * twice.
 */
import { readdirSync, realpathSync } from 'node:fs';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import { watch, type FSWatcher } from 'chokidar';

export interface WatchOptions {
  /** The app directory, watched recursively. */
  root: string;
  /** Single files watched too, existing or not (the sources file): their creation counts. */
  files?: readonly string[];
  /**
   * More directories watched recursively (nested sites, local connectors outside the app); asked
   * again after every burst, so a directory the app names from now on is watched from then on.
   */
  dirs?: () => readonly string[];
  /** Directories never watched, wherever they are (the data directory given by --data). */
  ignore?: readonly string[];
  /** Quiet time that ends a burst, in ms (default 50). */
  quietMs?: number;
  /**
   * One call per burst, with the absolute paths that changed (created, written, deleted).
   * `watchDirs` asks `dirs` again and resolves once the directories it names are watched: call it
   * before serving a rebuilt app that names a new one, so that no change to it is missed after.
   */
  onChange(paths: string[], watchDirs: () => Promise<void>): void | Promise<void>;
  /** The watcher itself failed (a limit of the system on watched files, an unreadable directory). */
  onError?(error: Error): void;
}

export interface AppWatcher {
  /** Stops watching; a burst being handled finishes, none starts. */
  close(): Promise<void>;
}

/** Directories of the app that are tooling, not content: the loader never walks them either (app/definitions/walk.ts). */
const TOOLING = new Set(['node_modules']);

/**
 * Whether `name` (one path segment) is never part of the app: dot-files and dot-directories
 * (`.laneway/`, `.git/`, editors' swap files) except `.well-known`, `node_modules`, and the backup
 * and auto-save files of editors (`name~`, `#name#`).
 */
function ignoredName(name: string): boolean {
  if (name.startsWith('.')) return name !== '.well-known';
  return TOOLING.has(name) || name.endsWith('~') || (name.length > 1 && name.startsWith('#') && name.endsWith('#'));
}

function realOrResolved(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

function isInside(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir.endsWith(sep) ? dir : dir + sep);
}

/** Starts watching; resolves once the initial scan is done (changes from then on are seen). */
export async function watchAppFiles(options: WatchOptions): Promise<AppWatcher> {
  const quietMs = options.quietMs ?? 50;
  const root = resolve(options.root);
  const realRoot = realOrResolved(root);
  const ignoredDirs = (options.ignore ?? []).map((d) => [resolve(d), realOrResolved(d)]).flat();
  /** The watchers of the directories `options.dirs` names, by directory. */
  const extra = new Map<string, FSWatcher>();
  /** Watched directories (as given and real), for `ignored`: a path is judged relative to the one that holds it. */
  let bases = [root, realRoot];

  const ignored = (path: string): boolean => {
    const abs = resolve(path);
    if (ignoredDirs.some((d) => isInside(abs, d))) return true;
    const base = bases.find((b) => isInside(abs, b));
    if (base === undefined) return false;
    const rel = relative(base, abs);
    return rel !== '' && rel.split(sep).some(ignoredName);
  };

  let pending = new Set<string>();
  /**
   * Directories created since the last burst. Chokidar reads a new directory, then starts watching
   * it: a file created in between is not reported (until something else changes there). The burst
   * lists what such a directory holds itself.
   */
  let newDirs = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let closed = false;

  const changed = (path: string): void => {
    if (closed) return;
    pending.add(resolve(path));
    if (timer) clearTimeout(timer);
    timer = setTimeout(flush, quietMs);
  };

  /** A recursive watcher of `paths`, reporting to `changed`; resolves when its initial scan is done. */
  const open = (paths: string[], more: Parameters<typeof watch>[1] = {}): { watcher: FSWatcher; ready: Promise<void> } => {
    const watcher = watch(paths, {
      ignoreInitial: true,
      ignored,
      // Bursts are collected here; chokidar's own unlink-then-add merging (100 ms later) would
      // only split a rename-over save into two bursts.
      atomic: false,
      ...more,
    });
    watcher.on('all', (event, path) => {
      if (event === 'addDir') newDirs.add(resolve(path));
      changed(path);
    });
    watcher.on('error', (err) => options.onError?.(err as Error));
    return { watcher, ready: new Promise<void>((ready) => watcher.once('ready', () => ready())) };
  };

  /**
   * Watches the directories `options.dirs` names now (outside the app directory), and stops
   * watching those it no longer names; resolves when the new ones are watched.
   */
  const syncDirs = async (): Promise<void> => {
    if (closed || !options.dirs) return;
    let wanted: string[];
    try {
      wanted = [...new Set(options.dirs().map((d) => resolve(d)))].filter((d) => !isInside(d, root) && !isInside(realOrResolved(d), realRoot));
    } catch {
      return; // asked again after the next burst
    }
    for (const [d, w] of extra) {
      if (wanted.includes(d)) continue;
      extra.delete(d);
      void w.close();
    }
    const added = wanted.filter((d) => !extra.has(d));
    bases = [root, realRoot, ...wanted.flatMap((d) => [d, realOrResolved(d)])];
    await Promise.all(
      added.map((d) => {
        const { watcher, ready } = open([d]);
        extra.set(d, watcher);
        return ready;
      }),
    );
  };

  const flush = (): void => {
    timer = undefined;
    if (closed || pending.size === 0) return;
    // One burst at a time: the next starts when this one's onChange has settled.
    if (running) return;
    for (const dir of newDirs) for (const path of entriesUnder(dir, ignored)) pending.add(path);
    newDirs = new Set();
    const paths = [...pending];
    pending = new Set();
    running = (async () => {
      try {
        await options.onChange(paths, syncDirs);
        // Also after a failed build: a directory named from now on is watched from now on.
        await syncDirs();
      } catch (err) {
        options.onError?.(err as Error);
      } finally {
        running = undefined;
        if (!closed && pending.size > 0 && timer === undefined) timer = setTimeout(flush, quietMs);
      }
    })();
  };

  const main = open([root]);
  // Single files, through their directories (depth 0, nothing else there): a file that does not
  // exist yet is seen when it is created. (Given to chokidar directly, a missing file makes it
  // report 'ready' before the initial scan is over, and early changes are lost.)
  const files = new Set((options.files ?? []).map((f) => resolve(f)));
  const parents = new Set([...files].map((f) => dirname(f)));
  const singles = files.size === 0 ? undefined : open([...parents], { depth: 0, ignored: (p: string) => !parents.has(resolve(p)) && !files.has(resolve(p)) });
  await Promise.all([main.ready, singles?.ready, syncDirs()]);

  return {
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      await Promise.all([main.watcher.close(), singles?.watcher.close(), ...[...extra.values()].map((w) => w.close())]);
    },
  };
}

/** Every file and directory under `dir` that is not ignored (ignored directories are not entered; at most 10,000). */
function entriesUnder(dir: string, ignored: (path: string) => boolean): string[] {
  const found: string[] = [];
  const todo = [dir];
  while (todo.length > 0 && found.length < 10_000) {
    const at = todo.pop()!;
    let entries;
    try {
      entries = readdirSync(at, { withFileTypes: true });
    } catch {
      continue; // gone again, or unreadable: the burst has what chokidar said
    }
    for (const entry of entries) {
      const path = resolve(at, entry.name);
      if (ignored(path)) continue;
      found.push(path);
      if (entry.isDirectory()) todo.push(path);
    }
  }
  return found;
}

/** A path as the reload messages show it: relative to the app directory, with `/` separators. */
export function appRelative(root: string, path: string): string {
  const rel = relative(resolve(root), path).split(sep).join('/');
  return isAbsolute(rel) ? rel : rel.startsWith('..') ? rel : '/' + rel;
}
