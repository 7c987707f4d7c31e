/**
 * Loading an app again after an edit (`laneway dev`, `serve --watch`): what the last load compiled
 * and still holds is used again, so that one edit recompiles only what it affects, and the app is
 * the one a fresh load of the same files would give.
 *
 * The embedding code keeps one `BuildCache` between loads (`loadApp(dir, { cache })`) and tells it
 * which files the watcher saw change (`changed`). Per app directory it keeps:
 *
 * - **the files' contents**, by path, size and modification time (a file modified less than a
 *   moment before it was read is read again next time, as are the files the watcher names);
 * - **compiled views and scripts** (`CompiledUnit`), each with what its compilation depended on:
 *   1. the *global key* of the load: the app's list of files with their kinds, the options, and the
 *      contents of every file that is not itself compiled per file (settings, parameter and model
 *      definitions, suppliers, users…) or that the load read before compiling endpoints — so a
 *      supplier, model or settings edit, and any added, removed or renamed file, recompiles everything;
 *   2. the contents of the files it is made of or read (the view, its partials and layouts, its YAML
 *      and JSON data, its SVG icons; the script);
 *   3. the answers the asset catalog gave its page pass (fingerprinted URLs, inlined stylesheets and
 *      scripts, connector tags), asked again of this load's catalog: a stylesheet edit recompiles the
 *      views whose pages name it, and asking again also makes this load serve the URLs they name.
 *
 *   A unit is kept only when its compilation reported nothing, and the load no problem about any
 *   file it depends on, so that a load that uses it again reports exactly what a fresh load would.
 * - **assets** of unchanged files, so that their compressed variants are not made again.
 *
 * The `BuildSession` of one load is called at fixed points (load.ts): `note` for every file the
 * load asks for, `text`/`bytes` to read them, `untracked` around whole-app scans whose results
 * enter the key, `seal` once the endpoint compilation starts, `unit` (the `UnitStore` of
 * units.ts, called by request/endpoints.ts) per view and script, `asset` per file served, and `finish` at
 * the end.
 */
import { createHash } from 'node:crypto';
import { readFileSync, realpathSync } from 'node:fs';
import { resolve, sep } from 'node:path';
import type { Diagnostic } from '../../diag/index.js';
import type { PolicyHooks } from '../../csp/index.js';
import type { ClassifiedFile, FileKind } from '../definitions/classify.js';
import type { CompiledUnit, UnitStore } from '../definitions/units.js';
import type { Asset } from '../endpoint/endpoint.js';
import type { WalkedFile } from '../definitions/walk.js';

/** Kinds of files whose contents only the per-file compilation of views and scripts reads. */
const PER_UNIT_KINDS = new Set<FileKind>(['view', 'partial', 'not-found', 'page', 'script', 'data']);
/** Assets: what pages make of them reaches a unit through the catalog's answers (recorded). */
const ASSET_KINDS = new Set<FileKind>(['static', 'svg', 'scss', 'app-icon']);
/** A file read less than this long after it was written may change again unseen by its size and time. */
const RACY_MS = 100;

interface FileEntry {
  abs: string;
  size: number;
  mtimeMs: number;
  bytes: Buffer;
  text?: string;
  hash?: string;
  /** Read too soon after its last write to be trusted on its size and time next time. */
  racy: boolean;
}

type HookName = 'rewrite' | 'inline' | 'element';
interface HookCall {
  hook: HookName;
  args: unknown[];
  /** The question (hook and arguments), as JSON. */
  key: string;
  /** The answer, as JSON. */
  answer: string;
}

interface UnitEntry {
  unit: CompiledUnit;
  globalKey: string;
  /** App path → content hash of every file the unit is made of or read. */
  deps: Map<string, string>;
  /** The catalog's answers to the page pass of the unit's files, in order. */
  hooks: HookCall[];
}

/** What one app directory (or nested site) keeps between loads. */
class RootCache {
  readonly files = new Map<string, FileEntry>();
  readonly units = new Map<string, UnitEntry>();
  /** The views and scripts the last load compiled, and those it used again. */
  last: LoadReport = { compiled: [], kept: [] };
  /** Assets by role and path, with what they were made from. */
  readonly assets = new Map<string, { asset: Asset; abs: string; mtimeMs: number; size: number; type: string }>();
}

export interface LoadReport {
  /** App paths of the views and scripts compiled (sorted). */
  compiled: string[];
  /** App paths of the views and scripts used again from an earlier load (sorted). */
  kept: string[];
}

/** Kept by `laneway dev` between loads: pass it as `loadApp(dir, { cache })`. */
export class BuildCache {
  readonly #roots = new Map<string, RootCache>();

  /** The files the watcher saw change (absolute paths): their contents are read again. */
  changed(paths: readonly string[]): void {
    const all = new Set<string>();
    for (const p of paths) {
      const abs = resolve(p);
      all.add(abs);
      try {
        all.add(realpathSync(abs));
      } catch {
        // gone: the walk no longer finds it
      }
    }
    for (const root of this.#roots.values()) {
      for (const [path, entry] of root.files) {
        for (const p of all) {
          if (entry.abs === p || entry.abs.startsWith(p + sep)) {
            root.files.delete(path);
            break;
          }
        }
      }
    }
  }

  /** Forgets everything: the next load compiles every file. */
  clear(): void {
    this.#roots.clear();
  }

  /** What the last load of the app at `root` (a nested site: mounted at `mount`) compiled and used again. */
  lastLoad(root: string, mount?: string): LoadReport | undefined {
    return this.#roots.get(`${resolve(root)}\u0000${mount ?? ''}`)?.last;
  }

  /** The session of one load of the app at `root` (mounted at `mount`, for a nested site). */
  session(root: string, mount: string | undefined): BuildSession {
    const key = `${resolve(root)}\u0000${mount ?? ''}`;
    let cache = this.#roots.get(key);
    if (cache === undefined) this.#roots.set(key, (cache = new RootCache()));
    return new BuildSession(cache);
  }
}

const sha = (data: string | Buffer): string => createHash('sha1').update(data).digest('base64url');

/** One load's use of the cache. */
export class BuildSession implements UnitStore {
  readonly #cache: RootCache;
  #mode: 'global' | 'untracked' | 'unit' = 'global';
  /** Files read before endpoints are compiled (outside `untracked`): part of the key. */
  readonly #globalReads = new Set<string>();
  #unitReads = new Set<string>();
  #globalKey: string | undefined;
  #hooks: PolicyHooks = {};
  /** The catalog's answers in this load, by the file whose page pass asked. */
  readonly #hookLog = new Map<string, HookCall[]>();
  /** The catalog's answers to the questions kept units asked again in this load, by question. */
  readonly #answers = new Map<string, string>();
  /** Content hashes of files in this load, by app path. */
  readonly #hashes = new Map<string, string>();
  /** Units this load compiled (entry, or undefined when they did not compile cleanly) or used again. */
  readonly #fresh = new Map<string, UnitEntry | undefined>();
  readonly #kept = new Set<string>();
  readonly #assets = new Set<string>();
  #finished = false;
  #walkedFiles: ReadonlyMap<string, WalkedFile> = new Map();
  #problems: () => number = () => 0;

  constructor(cache: RootCache) {
    this.#cache = cache;
  }

  /** The load's walk, and how many problems it has reported so far. */
  begin(walked: ReadonlyMap<string, WalkedFile>, problems: () => number): void {
    this.#walkedFiles = walked;
    this.#problems = problems;
  }

  // ---- reading files -----------------------------------------------------------------------------

  #entry(file: WalkedFile): FileEntry {
    const known = this.#cache.files.get(file.path);
    if (known !== undefined && !known.racy && known.abs === file.abs && known.size === file.size && known.mtimeMs === file.mtimeMs) return known;
    const bytes = readFileSync(file.abs);
    const entry: FileEntry = { abs: file.abs, size: file.size, mtimeMs: file.mtimeMs, bytes, racy: Date.now() - file.mtimeMs < RACY_MS };
    this.#cache.files.set(file.path, entry);
    return entry;
  }

  /**
   * The load asks for a file (its text or bytes, from a cache of its own or not): before endpoints
   * compile, it is part of the key; while a view or script compiles, that unit depends on it.
   */
  note(path: string): void {
    if (this.#mode === 'global') this.#globalReads.add(path);
    else if (this.#mode === 'unit') this.#unitReads.add(path);
  }

  /** A file's text (UTF-8), from the last load when it did not change; throws as readFileSync does. */
  text(file: WalkedFile): string {
    const entry = this.#entry(file);
    return (entry.text ??= entry.bytes.toString('utf8'));
  }

  /** A file's bytes, from the last load when it did not change. */
  bytes(file: WalkedFile): Buffer {
    this.note(file.path);
    return this.#entry(file).bytes;
  }

  /** Runs a whole-app scan (classification, mistakes, what the store is needed for): its reads are not dependencies. */
  untracked<T>(scan: () => T): T {
    const mode = this.#mode;
    this.#mode = 'untracked';
    try {
      return scan();
    } finally {
      this.#mode = mode;
    }
  }

  #fingerprint(file: WalkedFile, memoryLimit: number): string {
    if (file.size > memoryLimit) return `${file.size}:${file.mtimeMs}`;
    let entry: FileEntry;
    try {
      entry = this.#entry(file);
    } catch (err) {
      return `unreadable:${(err as Error).message}`;
    }
    return (entry.hash ??= sha(entry.bytes));
  }

  /**
   * The Asset the last load made for `file` in `role` when it serves the same bytes with the same
   * type (so its compressed variants, made in the background, are not made again); else `make()`.
   */
  asset(role: string, file: WalkedFile, body: Buffer | undefined, type: string, make: () => Asset): Asset {
    const key = `${role}\u0000${file.path}`;
    this.#assets.add(key);
    const known = this.#cache.assets.get(key);
    if (
      known !== undefined &&
      known.abs === file.abs &&
      known.mtimeMs === file.mtimeMs &&
      known.size === file.size &&
      known.type === type &&
      (known.asset.body === body || (body !== undefined && known.asset.body !== undefined && body.equals(known.asset.body)))
    ) {
      return known.asset;
    }
    const asset = make();
    this.#cache.assets.set(key, { asset, abs: file.abs, mtimeMs: file.mtimeMs, size: file.size, type });
    return asset;
  }

  // ---- the global key ----------------------------------------------------------------------------

  /**
   * Called once the definitions, settings and suppliers are read, before any endpoint compiles: the
   * key of everything a view or script may depend on besides its own files. `facts` are results of
   * whole-app scans and options that the key must hold.
   */
  seal(files: readonly ClassifiedFile[], walked: ReadonlyMap<string, WalkedFile>, dirs: readonly string[], facts: Record<string, unknown>, memoryLimit: number): void {
    const list: unknown[] = [];
    for (const f of files) {
      const w = walked.get(f.path)!;
      const content = (!PER_UNIT_KINDS.has(f.kind) && !ASSET_KINDS.has(f.kind)) || this.#globalReads.has(f.path) ? this.#fingerprint(w, memoryLimit) : null;
      list.push([f.path, f.kind, f.hidden, f.pinned ?? false, w.target ?? null, content]);
    }
    this.#globalKey = sha(JSON.stringify({ files: list, dirs, facts }));
    this.#mode = 'untracked';
  }

  /** The catalog's hooks for the page pass, answering as `hooks` does and recording each answer. */
  recordHooks(hooks: PolicyHooks): PolicyHooks {
    this.#hooks = hooks;
    const log = (from: string, hook: HookName, args: unknown[], answer: unknown): void => {
      let calls = this.#hookLog.get(from);
      if (calls === undefined) this.#hookLog.set(from, (calls = []));
      calls.push({ hook, args, key: JSON.stringify([hook, args]), answer: JSON.stringify(answer) ?? 'undefined' });
    };
    const recorded: PolicyHooks = { ...hooks };
    if (hooks.rewrite) recorded.rewrite = (url, from, attribute) => {
      const answer = hooks.rewrite!(url, from, attribute);
      log(from, 'rewrite', [url, from, attribute], answer);
      return answer;
    };
    if (hooks.inline) recorded.inline = (url, kind, from) => {
      const answer = hooks.inline!(url, kind, from);
      log(from, 'inline', [url, kind, from], answer);
      return answer;
    };
    if (hooks.element) recorded.element = (use, from) => {
      const answer = hooks.element!(use, from);
      log(from, 'element', [use, from], answer);
      return answer;
    };
    return recorded;
  }

  // ---- units -------------------------------------------------------------------------------------

  unit<K extends CompiledUnit['kind']>(file: ClassifiedFile, kind: K, compile: () => Extract<CompiledUnit, { kind: K }> | undefined): Extract<CompiledUnit, { kind: K }> | undefined {
    if (this.#globalKey === undefined) return compile();
    const known = this.#cache.units.get(file.path);
    if (known !== undefined && known.unit.kind === kind && this.#stillValid(known)) {
      this.#kept.add(file.path);
      return known.unit as Extract<CompiledUnit, { kind: K }>;
    }
    this.#mode = 'unit';
    this.#unitReads = new Set();
    const before = this.#problems();
    let unit: Extract<CompiledUnit, { kind: K }> | undefined;
    try {
      unit = compile();
    } finally {
      this.#mode = 'untracked';
    }
    const compiled: CompiledUnit | undefined = unit;
    // Names it looked for that do not exist are in the key: a new file there compiles everything.
    const deps = new Set([...this.#unitReads].filter((p) => this.#walkedFiles.has(p)));
    deps.add(file.path);
    if (compiled?.kind === 'view') for (const f of compiled.view.files) deps.add(f);
    // Kept only when compiling it reported nothing (its problems are reported by compiling it again).
    const clean = compiled !== undefined && this.#problems() === before;
    this.#fresh.set(file.path, clean ? { unit: compiled, globalKey: this.#globalKey, deps: new Map([...deps].map((p) => [p, ''])), hooks: [] } : undefined);
    return unit;
  }

  /** Whether a kept unit is what compiling it now would give: same key, same files, same catalog answers. */
  #stillValid(entry: UnitEntry): boolean {
    if (entry.globalKey !== this.#globalKey) return false;
    for (const [path, hash] of entry.deps) {
      if (this.#contentHash(path) !== hash) return false;
    }
    // Asked again, in order: the first different answer ends the replay (a fresh page pass would
    // take another way from there), and the unit is compiled again. The catalog answers a question
    // the same way all through one load, so each is asked once per load (most come from a layout).
    for (const call of entry.hooks) {
      let answer = this.#answers.get(call.key);
      if (answer === undefined) {
        answer = JSON.stringify((this.#hooks[call.hook] as (...args: unknown[]) => unknown)(...call.args)) ?? 'undefined';
        this.#answers.set(call.key, answer);
      }
      if (answer !== call.answer) return false;
    }
    return true;
  }

  #walked(path: string): WalkedFile | undefined {
    return this.#walkedFiles.get(path);
  }

  /** The hash of a file's contents in this load (undefined when it does not exist). */
  #contentHash(path: string): string | undefined {
    let hash = this.#hashes.get(path);
    if (hash === undefined) {
      const file = this.#walked(path);
      if (file === undefined) return undefined;
      this.#hashes.set(path, (hash = this.#fingerprint(file, Infinity)));
    }
    return hash;
  }

  /**
   * The end of the load: units compiled cleanly are kept with their dependencies, units that
   * failed are forgotten, and so is every unit a problem of this load names a file of.
   */
  finish(diagnostics: readonly Diagnostic[]): void {
    this.#finished = true;
    this.#cache.last = { compiled: [...this.#fresh.keys()].sort(), kept: [...this.#kept].sort() };
    const named = new Set(diagnostics.map((d) => d.file));
    const units = this.#cache.units;
    for (const path of [...units.keys()]) if (!this.#kept.has(path) && !this.#fresh.has(path)) units.delete(path);
    for (const path of this.#kept) {
      const entry = units.get(path)!;
      if ([...entry.deps.keys()].some((f) => named.has(f))) units.delete(path);
    }
    for (const [path, entry] of this.#fresh) {
      if (entry === undefined || [...entry.deps.keys()].some((f) => named.has(f) || this.#walked(f) === undefined)) {
        units.delete(path);
        continue;
      }
      for (const f of entry.deps.keys()) entry.deps.set(f, this.#contentHash(f)!);
      entry.hooks = [...entry.deps.keys()].flatMap((f) => this.#hookLog.get(f) ?? []);
      units.set(path, entry);
    }
    // Contents of files that are gone, assets this load did not make.
    for (const path of [...this.#cache.files.keys()]) if (!this.#walkedFiles.has(path)) this.#cache.files.delete(path);
    for (const key of [...this.#cache.assets.keys()]) if (!this.#assets.has(key)) this.#cache.assets.delete(key);
  }

  /** A load that ended without `finish` (an unexpected error): nothing it compiled is trusted. */
  abandon(): void {
    if (!this.#finished) this.#cache.units.clear();
  }
}
