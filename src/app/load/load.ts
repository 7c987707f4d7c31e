/**
 * loadApp: the whole app is read, classified and compiled once; the result is an App whose
 * router maps a request to a precompiled endpoint. Nothing here runs per request.
 *
 * Steps: 1. walk the directory; 2. classify every file; 3. read parameter definitions, the
 * settings, and set up the asset catalog and the page policies; 4. compile endpoints (and the
 * ⚡NotFound.html pages) and collect routes; 5. add the asset URLs pages referred to, report
 * conflicts; 6. build the router and the ⚡NotFound.html lookup.
 */
import { readFileSync, statSync } from 'node:fs';
import path, { basename, resolve as resolvePath } from 'node:path';
import { IMMUTABLE, PINNED } from '../../assets/index.js';
import { PolicyCompiler, type PolicyHooks } from '../../csp/index.js';
import { BuildError, DiagnosticList, strictDiagnostics, type Diagnostic } from '../../diag/index.js';
import {
  createRouter,
  formatPattern,
  parseRouteFile,
  splitPath,
  type Method,
  type ParamValue,
  type RouteKind,
  type RouteSpec,
  type Router,
} from '../../router/index.js';
import { normalizePath, type SourceTree } from '../../shared/index.js';
import { classifyFile, isPrivateDir, isPrivatePath, type ClassifiedFile } from '../definitions/classify.js';
import { Asset, contentTypeOf, type Endpoint, type Reply, type RequestInfo } from '../endpoint/endpoint.js';
import { walkApp, type WalkedFile } from '../definitions/walk.js';
import { notAvailable, notFound } from '../endpoint/answers.js';
import { compileNotFound, compileRouteEndpoint, messagesGlobal, type CompileContext, type ErrorPage } from '../request/endpoints.js';
import { compileSuppliers } from './compile-suppliers.js';
import { DEFAULT_LIMITS, ViewRenderers } from '../../script/index.js';
import { checkMistakes } from '../definitions/mistakes.js';
import { readSettings, type AppSettings } from '../definitions/settings.js';
import { Limiter } from '../../limits/index.js';
import { PROPERTIES_FILE, readConnectors, readProperties, readStaticContent, type AppProperties } from '../../content/index.js';
import { readModelDefinitions, type ModelSchema } from '../../models/index.js';
import { readNotifications } from '../../mail/index.js';
import { readAuthConfig, readEndpointAuth, type EndpointAuth } from '../../auth/index.js';
import { endpointPermissions } from '../request/permissions.js';
import { providerOrigins, signInGate, type InheritedAuth } from '../services/auth.js';
import { routeEndpoint, type Route } from '../request/pipeline.js';
import { builtInRoutes } from '../request/built-in.js';
import { dataBrowserRoutes } from '../request/data-browser.js';
import type { ModuleSystem } from '../request/scope.js';
import { AppData } from '../services/data.js';
import { StaticData } from '../services/static-data.js';
import { isPathUid, StaticParams } from '../request/model-params.js';
import { checkMountRoutes, createCatalog, mountReply, overrideProperties, readMounts, realDir, type MountSpec } from '../request/mounts.js';
import { checkModelParams, STATIC_FIELD, paramDefinitionOf, readParamDefinitions, type ParamDefinition } from '../definitions/params.js';
import type { LoadOptions } from '../definitions/options.js';
import type { AppOptions } from './app-options.js';
import type { BuildSession } from './build-cache.js';

export interface RouteRow {
  method: Method;
  pattern: string;
  file: string;
  kind: Endpoint['kind'];
}

export interface App {
  root: string;
  options: LoadOptions;
  files: ClassifiedFile[];
  router: Router<Endpoint>;
  /** Warnings (errors make loadApp throw, or are returned by checkApp). */
  diagnostics: Diagnostic[];
  /** The error page for a source directory: the nearest ⚡NotFound.html, if any. */
  notFoundPage(dir: string): ErrorPage | undefined;
  routes(): RouteRow[];
  /** What `/🎛.yaml` sets (script limits, trusted origins, policy options). */
  settings: AppSettings;
  /** The properties of /🎨.scss, read at load (empty without the file). */
  properties: AppProperties;
  /** The checked model definitions of /📦/ (docs/models.md); storage and queries are `data`. */
  models: ModelSchema;
  /** The models at run time and their store (absent without models); `data.open()` connects the store. */
  data: AppData | undefined;
  /** Nested sites (`/🔌store.yaml`): requests under `prefix/` go to `app` (mounts.ts); `namespace` keeps a child's data apart. */
  mounts: Array<{ prefix: string; app: App; namespace?: string }>;
}

/** `Messages`, a form, `'📧'`: names whose use needs the store (a cheap scan of the sources). */
const VISITOR_STATE = /\bMessages\b|\.Form\b|['"]📧['"]/;

/**
 * Whether an app without models still needs its store: for its visitors' messages and form
 * states (docs/messages.md "The session"), notifications and e-mail queued in a request's transaction.
 */
function usesVisitorState(files: readonly ClassifiedFile[], read: (path: string) => string | undefined): boolean {
  return files.some((f) => {
    if (f.kind === 'form-definition' || f.kind === 'notification') return true;
    if (f.kind !== 'script' && f.kind !== 'view' && f.kind !== 'partial' && f.kind !== 'supplier' && f.kind !== 'function-supplier' && f.kind !== 'html-supplier' && f.kind !== 'not-found') return false;
    return VISITOR_STATE.test(read(f.path) ?? '');
  });
}

/** Whether a script or supplier imports '📧' (the app then sends e-mail). */
function sendsMail(files: readonly ClassifiedFile[], read: (path: string) => string | undefined): boolean {
  return files.some((f) => f.kind === 'notification' || ((f.kind === 'script' || f.kind === 'supplier' || f.kind === 'function-supplier') && /['"]📧['"]/.test(read(f.path) ?? '')));
}

const NEVER_ROUTED_DIRS: Record<string, true> = { '📤': true, '📦': true, '🗄': true, '📡': true };
const TEXT_EXTENSIONS = new Set(['html', 'js', 'yaml', 'yml', 'json', 'svg', 'scss', 'css', 'txt', 'md']);

/** Loads and compiles an app; throws BuildError listing every error when it does not compile. */
export function loadApp(root: string, options: AppOptions = {}): App {
  const built = buildApp(root, options);
  const diagnostics = options.strict ? strictDiagnostics(built.diagnostics) : built.diagnostics;
  if (!built.app || diagnostics.some((d) => d.severity === 'error')) throw new BuildError(diagnostics);
  return built.app;
}

/** Compiles an app and returns every diagnostic, never stopping at the first (`laneway check`). */
export function checkApp(root: string, options: AppOptions = {}): Diagnostic[] {
  // A check reports problems; it does not render the documents' Markdown, which serving does at load.
  const { diagnostics } = buildApp(root, options, false);
  return options.strict ? strictDiagnostics(diagnostics) : diagnostics;
}

/** The parent's `🎨:` values for a nested site, and the file that sets them. */
interface PropertyOverrides {
  values: Readonly<Record<string, string | number | boolean>>;
  /** Names the child's /🎨.scss does not declare (filled while the child loads). */
  unknown: string[];
}

/** Real directories of the apps being built, outermost first (a nested site may not mount itself). */
const building: string[] = [];

/**
 * `prerender`: render static documents' Markdown (not for a check). `mount`: the path a nested
 * site is served at (`/store`), whose answers are written for it (mounts.ts). `inherited`: what a
 * nested site takes of the users of the site it is mounted in (docs/users.md "Nested sites").
 */
function buildApp(rootDir: string, options: AppOptions, prerender = true, mount?: string, overrides?: PropertyOverrides, inherited?: InheritedAuth): { app?: App; diagnostics: Diagnostic[] } {
  const outermost = building.length === 0;
  if (outermost) building.push(realDir(rootDir));
  try {
    return buildOne(rootDir, options, prerender, mount, overrides, inherited);
  } finally {
    if (outermost) building.length = 0;
  }
}

function buildOne(rootDir: string, options: AppOptions, prerender: boolean, mount: string | undefined, overrides?: PropertyOverrides, inherited?: InheritedAuth): { app?: App; diagnostics: Diagnostic[] } {
  // `laneway dev`: what the last load of this directory compiled and still holds (build-cache.ts).
  const session = options.cache?.session(resolvePath(rootDir), mount);
  try {
    return buildWith(session, rootDir, options, prerender, mount, overrides, inherited);
  } finally {
    session?.abandon();
  }
}

function buildWith(session: BuildSession | undefined, rootDir: string, options: AppOptions, prerender: boolean, mount: string | undefined, overrides?: PropertyOverrides, inherited?: InheritedAuth): { app?: App; diagnostics: Diagnostic[] } {
  const diagnostics = new DiagnosticList();
  const opts: LoadOptions = {
    dev: options.dev ?? false,
    bodyLimit: options.bodyLimit ?? 1024 * 1024,
    memoryLimit: options.memoryLimit ?? 4 * 1024 * 1024,
    log: options.log ?? ((message, fields) => process.stderr.write(`error: ${message} ${JSON.stringify(fields)}\n`)),
    csp: options.csp ?? true,
    sources: options.sources ?? {},
  };
  try {
    if (!statSync(rootDir).isDirectory()) throw new Error('not a directory');
  } catch {
    diagnostics.error('LW_APP_NOT_A_DIRECTORY', `the app directory ${rootDir} does not exist or is not a directory`, '/');
    return { diagnostics: diagnostics.sorted() };
  }

  // 1. Walk. (The steps are numbered and named as in docs/architecture.md "Loading an app".)
  const walked = walkApp(rootDir, diagnostics);
  const byPath = new Map<string, WalkedFile>(walked.files.map((f) => [f.path, f]));
  const texts = new Map<string, string | undefined>();
  const readText = (path: string): string | undefined => {
    session?.note(path);
    if (texts.has(path)) return texts.get(path);
    const file = byPath.get(path);
    let text: string | undefined;
    if (file) {
      try {
        text = session ? session.text(file) : readFileSync(file.abs, 'utf8');
      } catch (err) {
        diagnostics.error('LW_APP_UNREADABLE', `cannot read file: ${(err as Error).message}`, path);
      }
    }
    texts.set(path, text);
    return text;
  };
  const dirFiles = new Map<string, string[]>();
  for (const dir of walked.dirs) dirFiles.set(dir + '/', []);
  for (const f of walked.files) dirFiles.get(f.path.slice(0, f.path.lastIndexOf('/') + 1))?.push(f.path.slice(f.path.lastIndexOf('/') + 1));
  // Whole-app scans (classification, mistakes, what needs the store): with a build cache, what
  // they find enters its key, not the files they read (build-cache.ts).
  const scanText = (path: string): string | undefined => (session ? session.untracked(() => readText(path)) : readText(path));
  const readBytes = (file: WalkedFile): Buffer => (session ? session.bytes(file) : readFileSync(file.abs));
  session?.begin(byPath, () => diagnostics.items.length);
  /**
   * A file's Asset; `body` replaces the file's bytes (compiled CSS, a rewritten page). With a build
   * cache, the last load's Asset of the same bytes in the same `role` (its compressed variants kept).
   */
  const assetOf = (role: 'route' | 'private' | 'not-found' | 'fingerprinted' | 'private-fingerprinted', file: WalkedFile, body?: Buffer, type = contentTypeOf(file.path)): Asset => {
    const bytes = body ?? (file.size <= opts.memoryLimit ? readBytes(file) : undefined);
    return session ? session.asset(role, file, bytes, type, () => makeAsset(file, bytes, type)) : makeAsset(file, bytes, type);
  };
  const tree: SourceTree = {
    read(path) {
      const p = normalizePath(path);
      const ext = p.slice(p.lastIndexOf('.') + 1).toLowerCase();
      return TEXT_EXTENSIONS.has(ext) ? readText(p) : undefined;
    },
    list(dir) {
      const d = normalizePath(dir.endsWith('/') ? dir : dir + '/');
      return dirFiles.get(d)?.slice();
    },
  };

  // 2. Classify.
  const firstLine = (path: string) => () => {
    const text = scanText(path) ?? '';
    const nl = text.indexOf('\n');
    return nl === -1 ? text : text.slice(0, nl);
  };
  const files = walked.files.map((f) => {
    const file = classifyFile(f.path, firstLine(f.path));
    // A link is public only if the file it points at is public too: `/pub/x.html -> ../_x.html`
    // or `/Alias -> _partials` must not publish private sources.
    if (f.target && !file.hidden && classifyFile(f.target, firstLine(f.path)).hidden) {
      diagnostics.warn('LW_APP_SYMLINK_OUTSIDE', `symbolic link to the private or configuration file ${f.target}; not served`, f.path);
      return { ...file, hidden: true };
    }
    return file;
  });
  warnPrivateAncestors(walked.dirs, diagnostics);
  checkMistakes(files, scanText, diagnostics);

  // 3. Definitions. First the parameters: every {param} directory needs a 🔗.yaml; every {param}.html
  // a {param}🔗.yaml.
  const params = readParamDefinitions(walked.dirs, files, tree, diagnostics);

  // 3 (continued). Settings (/🎛.yaml), properties, nested sites' files, models and notifications,
  // static models, users, connectors; then the asset catalog and the page pass (policies, rewrites).
  const settings = readSettings(tree, diagnostics, { name: basename(resolvePath(rootDir)) });
  const classified = new Map(files.map((f) => [f.path, f]));
  // A nested site's properties with the parent's `🎨:` values in place (mounts.ts).
  const propertyTree: SourceTree = overrides === undefined ? tree : {
    read: (p) => {
      const text = tree.read(p);
      return normalizePath(p) === PROPERTIES_FILE && text !== undefined ? overrideProperties(text, overrides.values, (name) => overrides.unknown.push(name)) : text;
    },
    list: (d) => tree.list(d),
  };
  const properties = readProperties(propertyTree, { locale: settings.locale, diagnostics, fileStatus: (p) => fileStatusOf(classified, p) });
  const mountSpecs = readMounts(files, tree, rootDir, opts.sources, diagnostics);
  const models = readModelDefinitions(tree, diagnostics, { dirs: walked.dirs });
  const notifications = readNotifications(tree, diagnostics, new Map([...models.models.values()].map((m) => [m.name, m.kind])), walked.dirs);
  const staticContent = readStaticContent(tree, walked.files.map((f) => f.path), diagnostics);
  for (const name of staticContent.schema.models.keys()) {
    if (models.models.has(name)) diagnostics.error('LW_MODEL_DUPLICATE', `${name} is both a model (/📦/) and a static model (/🗄/): model names are unique across the app; rename one of them`, models.models.get(name)!.file);
  }
  checkModelParams(params, models, diagnostics, staticContent.schema);
  // Users (/👤.yaml): auth modes per directory, providers, roles checked against the models.
  // A nested site takes the mode of the site it is mounted in, and may only make it stricter.
  const auth = readAuthConfig(files.filter((f) => f.kind === 'users').map((f) => ({ path: f.path, text: tree.read(f.path) ?? '' })), models, diagnostics, inherited && { parentMode: inherited.mode });
  // Connectors of /🔌.yaml, through the local sources map: their tags expand in the page pass.
  const connectors = readConnectors(tree, { root: resolvePath(rootDir), sources: opts.sources, diagnostics });
  // A nested site's stylesheets are written for its mount (mounts.ts createCatalog).
  const catalog = createCatalog({
    files: files.map((f) => ({
      path: f.path,
      public: !f.hidden,
      asset: ASSET_KINDS.has(f.kind),
      inlinable: (f.kind === 'static' || f.kind === 'scss') && isPrivatePath(f.path) && !f.path.split('/').some((p) => p in NEVER_ROUTED_DIRS),
      size: byPath.get(f.path)!.size,
    })),
    // Sass reads the properties as the parser saw them (src/content/properties.ts).
    readText: (p) => (p === PROPERTIES_FILE && properties.scss !== undefined ? properties.scss : readText(p)),
    readBytes: (p) => readBytes(byPath.get(p)!),
    diagnostics,
    memoryLimit: opts.memoryLimit,
  }, mount);
  try {
    const csp = new PolicyCompiler({
      settings: auth.enabled ? { ...settings.csp, formActionAuth: providerOrigins(auth, process.env) } : settings.csp,
      diagnostics,
      hooks: recordedBy(session, {
        rewrite: (url, from, attribute) => catalog.rewrite(url, from, attribute),
        inline: (url, kind, from) => catalog.inline(url, kind, from),
        read: (p) => tree.read(p),
        element: (use) => connectors.expand(use),
      }),
    });

    // 4. Data, then the nested sites (a child may be gated by this app's sign-in).
    // Models: the realm's '📦' namespace now; the store is connected at start (App.data.open).
    // Visitor features (messages, forms, notifications, e-mail) keep their state in the store too.
    const visitorState = usesVisitorState(files, scanText);
    // How this load's views render rich text and images: this app's own, carried by its requests.
    const renderers = new ViewRenderers();
    const data = models.models.size || models.embedded.size || auth.enabled || visitorState ? new AppData(models, notifications, auth.enabled, renderers) : undefined;
    if (data && auth.enabled) data.authConfig = auth;
    if (data) data.sendsMail = sendsMail(files, scanText);
    if (data) data.limiter = new Limiter(settings.visitorLimits);
    if (data && mount !== undefined) data.mount = mount;
    // Nested sites, each told the mode at its mount point and whose sign-in gates it if it has no users of its own.
    const mounts = loadMounts(mountSpecs, rootDir, options, prerender, mount, diagnostics, (prefix) =>
      auth.enabled ? { mode: auth.modeFor(prefix), ...(data && { signIn: { data, page: `${mount ?? ''}/auth/` } }) } : inherited,
    );
    // A nested site without users in an `auth: required` area of its parent: the parent's sign-in gates all of it.
    const signIn = !auth.enabled && inherited?.mode === 'required' ? inherited.signIn : undefined;
    /** Whether a file answers in an `auth: required` area: only signed-in visitors get it, and no shared cache keeps it. */
    const isProtected = (path: string): boolean => signIn !== undefined || (auth.enabled && auth.modeFor(path) === 'required');
    /**
     * The steps before an endpoint (pipeline.ts), decided here once per file (docs/security.md
     * "What a protected area gates"): an endpoint without steps is the router's value itself and
     * costs nothing per request. `ready`: a file served as it is (static files, fingerprinted
     * assets), which users do not change outside `auth: required`; `mounted`: whether the answer
     * is written for the mount anyway. `more`: the steps of path parameters and permissions.
     */
    const routed = (endpoint: Endpoint, path: string, ready: boolean, mounted: boolean, more?: Omit<Route, 'endpoint'>): Endpoint => {
      const route: Route = { endpoint, ...more };
      const mode = auth.enabled ? auth.modeFor(path) : 'none';
      const own = data !== undefined && auth.enabled && (!ready || mode === 'required');
      const gate = own ? signInGate(mode, data) : undefined;
      if (gate && !route.signIn) route.signIn = gate;
      if (mount !== undefined && (mounted || own)) route.mount = { prefix: mount, pages: new WeakMap() };
      if (signIn !== undefined) route.parentSignIn = signInGate('required', signIn.data, { page: signIn.page, prefix: mount ?? '' });
      return routeEndpoint(route);
    };
    // Static models with a page per document: a root {name}.html whose 🔗.yaml names one of their fields.
    const pages = new Map<string, string>();
    for (const [key, def] of params) {
      const m = def.form === 'field' && /^\/[^/{}]+$/.test(key) ? STATIC_FIELD.exec(def.field) : null;
      if (m) pages.set(m[1]!, m[2]!);
    }
    const content = staticContent.schema.models.size ? new StaticData(staticContent, pages, { prerender, renderers }) : undefined;
    const paramDef = (p: ParamValue): ParamDefinition | undefined => paramDefinitionOf(params, p);
    let staticParams: StaticParams | undefined;
    const paramModel = (p: ParamValue): string | undefined => {
      const def = paramDef(p);
      return def?.form === 'field' ? /^📦\.(\w+)\./.exec(def.field)?.[1] : undefined;
    };
    // Endpoint configurations (`📮close.yaml` beside `📮close.js`): their `👤:` key, read once.
    const endpointAuth = (script: string): EndpointAuth | undefined => {
      if (!/\.js$/.test(script)) return undefined;
      const yaml = script.replace(/\.js$/, '.yaml');
      const cfg = files.find((f) => f.path === yaml && f.kind === 'endpoint-config');
      return cfg ? readEndpointAuth(tree.read(yaml) ?? '', yaml, auth.roles, diagnostics) : undefined;
    };
    const modules: ModuleSystem = { suppliers: undefined!, code: new Map(), params, dev: opts.dev, limits: { ...DEFAULT_LIMITS, ...settings.limits }, log: opts.log, data, content, renderers };
    modules.properties = properties;
    modules.unavailable = models.unavailable;
    modules.globals = Object.freeze({ '🎨': properties.namespace, Messages: messagesGlobal(undefined) });
    const icon = classified.get('/🎛.svg');
    if (auth.enabled) modules.roles = Object.freeze(Object.fromEntries([...auth.roles.keys()].filter((r) => r !== 'default').map((r) => [r, r])));
    modules.manage = Object.freeze({ name: settings.name, icon: icon?.kind === 'app-icon' && !icon.hidden ? icon.path : null });
    let router: Router<Endpoint> | undefined;
    const ctx: CompileContext = {
      tree,
      diagnostics,
      options: opts,
      modules,
      csp,
      reroute: (path, req) => rerouteGet(router!, path, req),
      ...(session && { units: session }),
    };
    // 5. Suppliers.
    modules.suppliers = compileSuppliers(files, ctx);
    // Every view and script compiled from here depends on what was read so far, and on its own files.
    session?.seal(files, byPath, walked.dirs, { options: { dev: opts.dev, csp: opts.csp, memoryLimit: opts.memoryLimit, sources: opts.sources }, prerender, mount, overrides: overrides?.values, visitorState, mail: data?.sendsMail, parentMode: inherited?.mode }, opts.memoryLimit);
    // 6. Endpoints (then the ⚡NotFound.html pages); collect routes.
    const entries: Array<{ spec: RouteSpec; value: Endpoint }> = [];
    for (const file of files) {
      if (file.hidden) continue;
      const kind = routeKindOf(file);
      if (!kind) continue;
      if (settings.type === 'resource' && kind !== 'static') {
        warnResourcePage(file, diagnostics);
        continue;
      }
      const pinned = catalog.pinnedUrl(file.path);
      const parsed = parseRouteFile(pinned ?? file.path, kind);
      const spec = parsed && pinned !== undefined ? { ...parsed, file: file.path } : parsed;
      if (!spec) {
        diagnostics.error('LW_ROUTE_SCRIPT_INDEX_NAME', `${file.name} answers no URL: only GET has a directory index; name it 🖥index.js, or give it another name`, file.path);
        continue;
      }
      const last = spec.segments[spec.segments.length - 1];
      if (kind !== 'static' && last?.type === 'literal' && !/^[A-Za-z0-9._~-]+$/.test(last.value)) {
        diagnostics.warn('LW_APP_ODD_NAME', `the URL segment "${last.value}" needs percent-encoding in links; prefer a-z, 0-9 and -`, file.path);
      }
      const walkedFile = byPath.get(file.path)!;
      // A protected area's files are Assets of their own (a build cache keeps them apart from public ones).
      const guarded = isProtected(file.path);
      const role = guarded ? 'private' : 'route';
      let make = (body?: Buffer): Asset => assetOf(role, walkedFile, body);
      if (file.kind === 'scss') {
        const css = catalog.body(file.path);
        if (css === undefined) continue;
        make = () => assetOf(role, walkedFile, css, 'text/css; charset=utf-8');
      } else if (mount !== undefined && file.kind === 'static' && /\.css$/i.test(file.path) && walkedFile.size <= opts.memoryLimit) {
        // A nested site's .css, its url(/…) written for the mount, once (mounts.ts mountCss).
        const css = catalog.body(file.path);
        make = (body) => assetOf(role, walkedFile, body ?? css);
      }
      if (pinned !== undefined || guarded) {
        const inner = make;
        const cacheControl = pinned !== undefined ? PINNED : 'no-cache';
        make = (body) => withCacheControl(inner(body), guarded ? privately(cacheControl) : cacheControl);
      }
      // Under a parameter whose model Laneway cannot define: 501 (docs/status.md "What degrades").
      const lacking = kind === 'static' ? undefined : unavailableParam(params, file);
      const endpoint = lacking !== undefined ? notAvailableEndpoint(file, spec, lacking) : compileRouteEndpoint(file, spec, ctx, make);
      if (endpoint) {
        const dynamic = spec.segments.some((x) => x.type !== 'literal');
        const steps: Omit<Route, 'endpoint'> = {};
        if (content && dynamic) steps.staticParams = staticParams ??= new StaticParams(content, paramDef);
        if (data && dynamic) steps.modelParams = { data, paramDef };
        // Users: each model operation is checked against the file's scope and its `👤:` configuration.
        if (data && auth.enabled && kind !== 'static') {
          const config = endpointAuth(file.path);
          steps.permissions = endpointPermissions({ file: file.path, as: config?.as ?? [] }, config?.only ?? [], data, auth, paramModel);
        }
        // Users: the auth mode of the file's directory decides before anything else runs.
        entries.push({ spec, value: routed(endpoint, file.path, kind === 'static', true, steps) });
      }
    }
    warnConfigsWithoutScript(files, diagnostics);
    const notFoundPages = new Map<string, ErrorPage>();
    for (const file of files) {
      if (file.kind !== 'not-found' || isPrivatePath(file.path)) continue;
      if (settings.type === 'resource') {
        warnResourcePage(file, diagnostics);
        continue;
      }
      const page = compileNotFound(file, ctx, (body) => assetOf('not-found', byPath.get(file.path)!, body));
      if (page) notFoundPages.set(file.dir, mount === undefined ? page : mountErrorPage(page, mount));
    }
    // HTML suppliers follow the page rules too (their output is never hashed).
    for (const code of modules.code.values()) if (code.view) csp.checkSupplier(code.view.templates);

    // 7. Assemble: the fingerprinted URLs pages refer to, conflicts, then the implicit GET /d → /d/
    // redirects of index.html.
    const taken = new Set(entries.map((e) => routeKey(e.spec)));
    for (const served of catalog.served()) {
      const spec = parseRouteFile(served.url, 'static');
      const body = catalog.body(served.file);
      if (!spec || body === undefined || taken.has(routeKey(spec))) continue;
      const guarded = isProtected(served.file);
      const asset = withCacheControl(assetOf(guarded ? 'private-fingerprinted' : 'fingerprinted', byPath.get(served.file)!, body, contentTypeOf(served.file.endsWith('.scss') ? 'x.css' : served.file)), guarded ? privately(IMMUTABLE) : IMMUTABLE);
      const reply: Reply = { type: 'asset', asset };
      const value: Endpoint = { kind: 'static', method: 'GET', pattern: formatPattern(spec), file: served.file, dir: served.file.slice(0, served.file.lastIndexOf('/')), handle: () => reply };
      entries.push({ spec: { ...spec, file: served.file }, value: routed(value, served.file, true, false) });
    }
    // The built-in endpoints of an app with a store (built-in.ts): under `/__/`, which no file can answer.
    if (data) entries.push(...builtInRoutes(data));
    // Development only: the data browser (request/data-browser.ts), as a file of the root area.
    if (data && opts.dev) entries.push(...dataBrowserRoutes(data, ctx, (e) => routed(e, e.file, false, true, auth.enabled ? { permissions: endpointPermissions({ file: e.file, as: [] }, [], data, auth, paramModel) } : {})));
    // Production, when the operator switched it on: behind the sign-in, a role and a secret (request/data-browser.ts).
    const access = options.dataBrowser;
    if (access && !opts.dev && mount === undefined) {
      const problem =
        access.secret.length < 32
          ? 'LANEWAY_DATA_BROWSER_SECRET is shorter than 32 characters: make it long and random (openssl rand -base64 32)'
          : !auth.enabled || !data
            ? 'the app has no users (/👤.yaml): the production data browser is for a signed-in user who holds its role'
            : !auth.roles.has(access.role)
              ? `its role ${access.role} (LANEWAY_DATA_BROWSER_ROLE) is not declared in /👤.yaml (the roles are ${[...auth.roles.keys()].join(', ')})`
              : undefined;
      if (problem !== undefined) diagnostics.error('LW_AUTH_DATA_BROWSER', `the production data browser cannot be enabled: ${problem}; or unset LANEWAY_DATA_BROWSER_SECRET`, '/👤.yaml');
      else if (data) entries.push(...dataBrowserRoutes(data, ctx, (e) => routed(e, e.file, false, true, { signIn: signInGate('required', data), permissions: endpointPermissions({ file: e.file, as: [] }, [], data, auth, paramModel) }), access));
    }
    reportConflicts(entries, diagnostics);
    checkMountRoutes(mountSpecs, entries, diagnostics);
    // The redirect of a nested site's index goes to its own /d/ (written for the mount like its other redirects).
    addIndexRedirects(entries, (value) => routed(value, value.file, false, true));

    // 7 (continued). The router and the ⚡NotFound.html lookup.
    const takesPaths = new WeakMap<ParamDefinition, boolean>();
    router = createRouter(entries, (dir, _name, value, fileParam) => {
      const def = params.get(fileParam ? dir + '/' + _name : dir);
      if (!def) return false;
      // A value with slashes: only a single-file parameter backed by a document's path uid takes one.
      if (value.includes('/')) {
        let paths = takesPaths.get(def);
        if (paths === undefined) {
          const m = def.form === 'field' ? STATIC_FIELD.exec(def.field) : null;
          takesPaths.set(def, (paths = m !== null && content !== undefined && isPathUid(content, m[1]!, m[2]!)));
        }
        return fileParam && paths;
      }
      return def.form === 'values' ? def.values.has(value) : true;
    }, walked.dirs.filter((d) => d && !isPrivateDir(d) && !d.split('/').some((p) => p in NEVER_ROUTED_DIRS)));
    const nearest = new Map<string, ErrorPage | undefined>();
    const notFoundPage = (dir: string): ErrorPage | undefined => {
      if (nearest.has(dir)) return nearest.get(dir);
      const page = notFoundPages.get(dir) ?? (dir === '' ? undefined : notFoundPage(dir.slice(0, dir.lastIndexOf('/'))));
      nearest.set(dir, page);
      return page;
    };

    const app: App = {
      root: rootDir,
      options: opts,
      files,
      router,
      diagnostics: diagnostics.sorted(),
      notFoundPage,
      settings,
      properties,
      models,
      data,
      mounts,
      routes() {
        return entries
          .filter(({ value }) => value.kind !== 'service')
          .map(({ spec, value }) => ({ method: spec.method, pattern: formatPattern(spec), file: value.file, kind: value.kind }))
          .sort((a, b) => (a.pattern < b.pattern ? -1 : a.pattern > b.pattern ? 1 : a.method < b.method ? -1 : 1));
      },
    };
    const sorted = diagnostics.sorted();
    session?.finish(sorted);
    return { app, diagnostics: sorted };
  } finally {
    catalog.dispose();
  }
}

/** The feature Laneway lacks that a parameter above `file` (or of its `{name}.html`) needs. */
function unavailableParam(params: Map<string, ParamDefinition>, file: ClassifiedFile): string | undefined {
  const own = /^\{([^{}]+)\}\.html$/.exec(file.name);
  if (own) {
    const def = params.get(`${file.dir}/${own[1]}`);
    if (def?.unavailable !== undefined) return def.unavailable;
  }
  for (let dir = file.dir; dir !== ''; dir = dir.slice(0, dir.lastIndexOf('/'))) {
    const def = params.get(dir);
    if (def?.unavailable !== undefined) return def.unavailable;
  }
  return undefined;
}

/** An endpoint that answers 501: what it needs, Laneway does not have. */
function notAvailableEndpoint(file: ClassifiedFile, spec: RouteSpec, feature: string): Endpoint {
  const kind = spec.kind === 'script' ? 'script' : spec.kind === 'page' ? 'page' : 'view';
  return { kind, method: spec.method, pattern: formatPattern(spec), file: file.path, dir: file.dir, handle: () => notAvailable([feature]) };
}

/** The page pass's hooks, their answers recorded for the build cache when there is one. */
function recordedBy(session: BuildSession | undefined, hooks: PolicyHooks): PolicyHooks {
  return session ? session.recordHooks(hooks) : hooks;
}

/** Files pages may refer to as assets (fingerprinted when public). */
const ASSET_KINDS = new Set<ClassifiedFile['kind']>(['static', 'svg', 'scss', 'app-icon']);

function withCacheControl(asset: Asset, cacheControl: string): Asset {
  asset.cacheControl = cacheControl;
  return asset;
}

/** The Cache-Control of a file in an `auth: required` area: the browser's cache only, never a shared one. */
function privately(cacheControl: string): string {
  return cacheControl.startsWith('public') ? 'private' + cacheControl.slice('public'.length) : `private, ${cacheControl}`;
}

function routeKindOf(file: ClassifiedFile): RouteKind | undefined {
  switch (file.kind) {
    case 'script':
      return 'script';
    case 'view':
      return 'view';
    case 'page':
      return 'page';
    case 'static':
    case 'svg':
    case 'data':
    case 'app-icon':
    case 'scss':
      // `.scss` is served compiled (the loader passes the CSS).
      return 'static';
    default:
      return undefined;
  }
}

/** A file's Asset: `body` is what it serves (undefined: the file is streamed). */
function makeAsset(file: WalkedFile, body: Buffer | undefined, type: string): Asset {
  return new Asset(body, file.abs, { size: body?.length ?? file.size, mtimeMs: file.mtimeMs, type });
}

/** `type: resource` (docs/manifest.md): the site's views, pages and scripts answer no URL. */
function warnResourcePage(file: ClassifiedFile, diagnostics: DiagnosticList): void {
  diagnostics.warn(
    'LW_SETTINGS_RESOURCE_PAGE',
    `${file.name} is not served: /🎛.yaml says type: resource, and a resource site serves its files, not pages or scripts of its own; remove type: resource to serve it`,
    file.path,
  );
}

/** Whether a url() of /🎨.scss names a public file, a private one, or nothing. */
function fileStatusOf(files: Map<string, ClassifiedFile>, path: string): 'public' | 'private' | undefined {
  let decoded = path;
  try {
    decoded = decodeURI(path);
  } catch {
    // kept as written
  }
  const file = files.get(normalizePath(decoded));
  return file === undefined ? undefined : file.hidden ? 'private' : 'public';
}

function warnPrivateAncestors(dirs: string[], diagnostics: DiagnosticList): void {
  for (const dir of dirs) {
    const parts = dir.split('/').slice(1);
    const name = parts[parts.length - 1] ?? '';
    const parent = parts[parts.length - 2] ?? '';
    // A directory that is private only because of a grandparent or higher: say so once.
    if (!name.startsWith('_') && !parent.startsWith('_') && parts.slice(0, -2).some((p) => p.startsWith('_'))) {
      diagnostics.warn(
        'LW_APP_PRIVATE_ANCESTOR',
        'files here are private because an ancestor directory starts with "_" (Laneway treats any "_" ancestor as private, not only the direct parent)',
        dir,
      );
    }
  }
}

function warnConfigsWithoutScript(files: ClassifiedFile[], diagnostics: DiagnosticList): void {
  const scripts = new Set(files.filter((f) => f.kind === 'script').map((f) => f.path));
  for (const f of files) {
    if (f.kind === 'endpoint-config' && !scripts.has(f.path.slice(0, -'.yaml'.length) + '.js')) {
      diagnostics.warn('LW_APP_CONFIG_WITHOUT_SCRIPT', `${f.name} configures ${f.name.slice(0, -5)}.js, which does not exist; the file is ignored`, f.path);
    }
  }
}

/** The identity of a route for conflict checks: params compare equal whatever their names. */
function routeKey(spec: RouteSpec): string {
  const segs = spec.segments.map((s) => (s.type === 'literal' ? 'L' + s.value : s.type === 'param' ? 'P' : s.type === 'rest' ? 'R' : 'F'));
  return `${spec.method} ${segs.join('\u0000')}${spec.trailingSlash ? '/' : ''}`;
}

function reportConflicts(entries: Array<{ spec: RouteSpec; value: Endpoint }>, diagnostics: DiagnosticList): void {
  const seen = new Map<string, RouteSpec>();
  for (let i = 0; i < entries.length; i++) {
    const { spec } = entries[i]!;
    const key = routeKey(spec);
    const first = seen.get(key);
    if (!first) {
      seen.set(key, spec);
      continue;
    }
    diagnostics.error(
      'LW_ROUTE_CONFLICT',
      `${spec.method} ${formatPattern(spec)} is answered by both ${first.file} and ${spec.file}: remove or rename one of them`,
      spec.file,
    );
    entries.splice(i--, 1);
  }
}

/**
 * `index.html` answers `/d/`; `GET /d` redirects there (308, query kept) unless something else
 * answers `/d`. `gate`: the redirect's auth gate, that of the page it leads to.
 */
function addIndexRedirects(entries: Array<{ spec: RouteSpec; value: Endpoint }>, gate: (redirect: Endpoint) => Endpoint): void {
  const taken = new Set(entries.map((e) => routeKey(e.spec)));
  for (const { spec, value } of [...entries]) {
    if ((spec.kind !== 'view' && spec.kind !== 'page') || !spec.trailingSlash || spec.segments.length === 0) continue;
    const bare: RouteSpec = { ...spec, trailingSlash: false };
    if (taken.has(routeKey(bare))) continue;
    taken.add(routeKey(bare));
    entries.push({ spec: bare, value: gate(redirectToSlash(formatPattern(bare), value)) });
  }
}

/** AJAX rerouting: the response of `GET path` computed in-process for a POST/PUT/DELETE. */
async function rerouteGet(router: Router<Endpoint>, target: string, req: RequestInfo): Promise<Reply> {
  const q = target.indexOf('?');
  const path = splitPath(q === -1 ? target : target.slice(0, q));
  if (!path.ok) return notFound();
  const match = router.match('GET', path);
  if (match.kind !== 'found') return notFound();
  const { 'content-type': _t, 'content-length': _l, 'transfer-encoding': _e, ...headers } = req.headers;
  return match.value.handle({
    ...req,
    method: 'GET',
    path: path.key,
    query: q === -1 ? '' : target.slice(q + 1),
    headers,
    params: match.params,
    readBody: async () => Buffer.alloc(0),
  });
}

function redirectToSlash(pattern: string, target: Endpoint): Endpoint {
  return {
    kind: 'redirect',
    method: 'GET',
    pattern,
    file: target.file,
    dir: target.dir,
    handle(req): Reply {
      // The request path is already decoded; re-encode each segment for the Location header.
      const location = req.path.split('/').map(encodeURIComponent).join('/') + '/' + (req.query ? '?' + req.query : '');
      return { type: 'redirect', status: 308, location };
    },
  };
}

/**
 * Loads the nested sites of an app: each child as an app of its own, whose problems are reported
 * at its files (relative to this app's directory), mounted at `mount` + its prefix.
 */
function loadMounts(specs: MountSpec[], rootDir: string, options: AppOptions, prerender: boolean, mount: string | undefined, diagnostics: DiagnosticList, inheritedAt: (prefix: string) => InheritedAuth | undefined): App['mounts'] {
  const mounts: App['mounts'] = [];
  for (const m of specs) {
    const real = realDir(m.dir);
    if (building.includes(real)) {
      diagnostics.error('LW_APP_NESTED_SITE', `the source of this nested site is ${m.dir}, a site that is already being mounted (a site cannot contain itself)`, m.file);
      continue;
    }
    building.push(real);
    let child: { app?: App; diagnostics: Diagnostic[] };
    try {
      const overrides = m.properties === undefined ? undefined : { values: m.properties, unknown: [] as string[] };
      child = buildApp(m.dir, options, prerender, (mount ?? '') + m.prefix, overrides, inheritedAt(m.prefix));
      const unknown = overrides === undefined ? [] : overrides.unknown.length || child.app?.properties.exists ? overrides.unknown : Object.keys(overrides.values);
      for (const name of unknown) diagnostics.warn('LW_APP_NESTED_SITE', `🎨: sets "${name}", which the nested site's ${PROPERTIES_FILE} does not declare; it is ignored`, m.file);
    } finally {
      building.pop();
    }
    const rel = path.relative(rootDir, m.dir);
    // A child outside this site's directory is reported at its files' paths on disk (printed with their leading /).
    const outside = rel.startsWith('..') || path.isAbsolute(rel);
    const where = (file: string) => (outside ? path.join(path.resolve(m.dir), file) : '/' + path.posix.join(rel.split(path.sep).join('/'), file.replace(/^\//, '')));
    for (const d of child.diagnostics) diagnostics.at(d.severity, d.code, `(nested site ${m.prefix}/) ${d.message}`, d.external ? d.file : where(d.file), { line: d.line, column: d.column }, outside || d.external === true);
    if (!child.app || child.diagnostics.some((d) => d.severity === 'error')) continue;
    if ((child.app.data || child.app.mounts.some((x) => x.namespace !== undefined)) && m.namespace === undefined) {
      diagnostics.error('LW_APP_NESTED_SITE', `the nested site ${m.prefix}/ stores data (/📦/): give it \`namespace:\` (4–25 of a-z, 0-9 and -), which keeps its data apart and must never change`, m.file);
      continue;
    }
    mounts.push({ prefix: m.prefix, app: child.app, ...(m.namespace === undefined ? {} : { namespace: m.namespace }) });
  }
  return mounts;
}

/** A ⚡NotFound.html of a nested site, its answer written for the mount. */
function mountErrorPage(page: ErrorPage, mount: string): ErrorPage {
  const pages = new WeakMap<object, Reply>();
  return {
    ...page,
    render(req) {
      const r = page.render(req);
      return r instanceof Promise ? r.then((x) => mountReply(x, mount, pages)) : mountReply(r, mount, pages);
    },
  };
}
