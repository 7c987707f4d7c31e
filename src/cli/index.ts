/**
 * The `laneway` command: serve, check, routes. `bin/laneway` only calls `main`.
 */
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { persistStylesheets } from '../assets/index.js';
import { appHasData, BuildCache, checkApp, closeAppData, enableDevSignIn, importAppImages, loadApp, openAppData, storeChanges, type App } from '../app/index.js';
import { BuildError, CODES, formatDiagnostic, LanewayError, type Code, type Diagnostic } from '../diag/index.js';
import { localSourceDirs, readSourcesFile, SOURCES_FILE, sourcesFromCommandLine } from '../content/index.js';
import { DEV_USERS_ENV, parseDevUsers, type DevUser } from '../auth/index.js';
import { checkAppDirectory, colorEnabled, palette, parseCommandLine, parseLogFormat, parsePort, PLAIN, suggest, usageError, USAGE_EXIT } from './args.js';
import { invokedCommand } from './invoked.js';
import { NEW_HELP, runNew } from './new.js';
import { ADD_HELP, runAdd } from './add.js';
import { jsonIo } from './output.js';
// What only serving needs is imported when a command serves (`check` starts faster without it):
// the HTTP server, `laneway dev`'s development server and file watcher (docs/cli.md), `serve
// --workers N`, health and metrics (docs/deploy.md).
import type { ServeScaling } from '../supervisor/index.js';

const HELP: Record<string, string> = {
  main: `Usage: laneway <command> [options]

Commands:
  new DIR       write a starter app into DIR (laneway new --help lists the templates)
  add WHAT …    write a page, an endpoint, a model, a form or a supplier into an app
  serve DIR     serve the app in DIR over HTTP
  dev DIR       serve the app in DIR for development: rebuild on change, live reload, error overlay
  check DIR     compile the app in DIR and list every problem
  routes DIR    print the route table of the app in DIR
  migrate DIR   bring the database to the model definitions (--accept for changes that lose data)

Options:
  -h, --help         show help (also: laneway <command> --help)
  -V, --version      print the version (also -v)

Exit status: 0 on success, 1 when the app has errors or the server cannot start, 2 for a
usage error (unknown command or option, a missing directory, a bad --port or --log).`,
  serve: `Usage: laneway serve DIR [--port N] [--host H] [--log pretty|json|off] [--dev] [--watch] [--body-limit BYTES]

Serves the app in DIR. Prints "listening on http://HOST:PORT" when ready.

Options:
  --port N           port to listen on (default: $PORT, else 3000; 0 picks a free one)
  --host H           interface to bind (default 127.0.0.1)
  --log FORMAT       pretty (default: timestamped lines, colour on a terminal unless NO_COLOR),
                     json (every line one JSON object: startup, access, warnings, errors),
                     or off (no access lines)
  --dev              development mode: show a failing view's error on its 500 page, and sign
                     in as the test users of $LANEWAY_AUTH_DEV_USERS without a provider
                     ("Ada Lovelace <ada@example.test>, Bob"; docs/users.md); without
                     --dev, serve refuses to start when that variable is set; answers
                     only requests for localhost, a loopback address, --host or an
                     --allowed-host name (any other Host gets 403)
  --allowed-host NAME  with --dev (and dev): also answer requests for NAME (repeatable),
                     such as this machine's name on the network or a tunnel's
  --trust-proxy LIST believe X-Forwarded-For, -Proto, -Host and Forwarded from these peers
                     only: addresses and CIDR ranges, comma-separated, or "loopback"
                     (default: $LANEWAY_TRUST_PROXY, else nobody; docs/deploy.md)
  --watch            reload the app when a file of DIR changes, or of a nested site or
                     local connector it uses, or the sources file (a reload with errors
                     prints them and keeps serving the last good version)
  --body-limit BYTES largest request body accepted (default 1048576); larger ones get 413
  --strict           refuse to start when a file needs a feature Laneway does not have
                     (docs/status.md "What degrades"), instead of answering 501 for it
  --data DIR         data directory of the SQLite database (default: $LANEWAY_DATA, else
                     DIR/.laneway; add .laneway/ to .gitignore)
  --database URL     use PostgreSQL (postgres://…) instead of SQLite (default: $DATABASE_URL)
  --source URL=DIR   use the local directory DIR for the connector or site at the git URL
                     (repeatable; also $LANEWAY_SOURCES); Laneway never fetches code
  --sources FILE     read the sources map from FILE (default: laneway.sources.yaml next
                     to DIR, in its parent directory, when it exists)
  --workers N        worker processes sharing the port, behind a supervisor that replaces
                     a worker that crashes or blocks (default: the number of cores with
                     PostgreSQL, else 1; 1 is one process, no supervisor; docs/deploy.md)
  --watchdog-ms MS   with several workers, a worker whose event loop stays blocked this
                     long is killed and replaced (default 10000)
  --metrics          request metrics (Prometheus text) at /__/metrics on the app's port
  --metrics-port P   the metrics on a port of their own instead, and only there
  --metrics-host H   the interface of --metrics-port (default 127.0.0.1)
  -h, --help         show this help

GET /__/health (liveness) and /__/ready (the app is loaded and its database answers) are
always answered. Exits 2 on a usage error (reported before the app is loaded); 1, listing
the problems, when the app does not compile, or when the port is taken. SIGTERM and SIGINT
stop accepting connections, let requests in flight finish (up to 10 s), then exit 0. SIGHUP
reloads the app without dropping a request (a build with errors keeps the running one).`,
  dev: `Usage: laneway dev DIR [--port N] [--host H] [--log pretty|json|off] [serve's other options]

Serves the app in DIR for development: \`serve --dev --watch\`, and
  - every change rebuilds the app (one rebuild per burst of changes: an editor's save-all,
    a git checkout); files saved by renaming over the original and new directories count;
    the data directory, dot-directories and node_modules/ do not;
  - pages reload by themselves after a rebuild; a stylesheet change swaps the stylesheet
    without reloading (a small script over server-sent events, /__/dev/events, allowed by
    its hash in each page's Content-Security-Policy; never added by serve);
  - while the app does not compile, every page answers its problems (file:line:column,
    message, code frame, a link to the code's documentation), and reloads when they are
    fixed; a script or view that fails shows the same page with its position and the
    request id.
Answers only requests for localhost (and *.localhost), a loopback address (127.0.0.0/8,
[::1]), the --host it binds and each --allowed-host NAME (repeatable): any other Host gets
403, so that a page of another site cannot read it through DNS rebinding.
Starts even when the app does not compile. Prints "listening on http://HOST:PORT" when ready.

Options: those of \`laneway serve\` (--dev and --watch are always on). See docs/cli.md.`,
  check: `Usage: laneway check DIR [--strict] [--source URL=DIR]... [--sources FILE]

Compiles the whole app and prints every problem, one per line, as
  relative/path:line:column: message [CODE]
then a summary. Exits 0 when there are no errors (warnings alone do not fail), 1 otherwise.

Options:
  --strict           what degrades (a file needing a feature Laneway does not have answers
                     501, docs/status.md "What degrades") is an error, not a warning: for CI
  --source URL=DIR   use the local directory DIR for the connector or site at the git URL
                     (repeatable; also $LANEWAY_SOURCES; docs/connectors.md)
  --sources FILE     read the sources map from FILE (default: laneway.sources.yaml next
                     to DIR, in its parent directory, when it exists)`,
  migrate: `Usage: laneway migrate DIR [--accept] [--images] [--data DIR] [--database URL]

Applies the model definitions of DIR to its database. Additive changes (new models, new
optional fields, new indexes) are applied at every start anyway; changes that could lose or
narrow data (a removed field, a changed type, a field made required) are listed, and applied
only with --accept. Back up the data first (docs/data.md).

  --images   on PostgreSQL: also copy the uploaded images of the images directory
             ($LANEWAY_IMAGES_DIR, else the data directory's images/) into the database,
             where they are kept by default (docs/images.md), and those of each nested
             site (DIR/<namespace>) into its schema; safe to run again`,
  new: NEW_HELP,
  add: ADD_HELP,
  routes: `Usage: laneway routes DIR [--json]

Prints the route table: method, URL pattern, source file and kind
(script, view, page, static, redirect).

Options:
  --json      print a JSON array instead of a table
  -h, --help  show this help`,
};

interface Io {
  out(line: string): void;
  err(line: string): void;
}

const stdio: Io = {
  out: (l) => process.stdout.write(l + '\n'),
  err: (l) => process.stderr.write(l + '\n'),
};

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

function summary(diagnostics: Diagnostic[]): string {
  const errors = diagnostics.filter((d) => d.severity === 'error').length;
  const warnings = diagnostics.length - errors;
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  return `${plural(errors, 'error')}, ${plural(warnings, 'warning')}`;
}

/** Runs the command line; resolves to the exit code (serve resolves when the server stops). */
export async function main(argv: string[], io: Io = stdio): Promise<number> {
  // Colour only on the process's own streams, where a person reads them (args.ts: TTY, NO_COLOR).
  const paint = io === stdio ? { out: palette(colorEnabled(process.stdout)), err: palette(colorEnabled(process.stderr)) } : { out: PLAIN, err: PLAIN };
  const [command, ...rest] = argv;
  if (command === undefined) {
    io.err(HELP.main!);
    return USAGE_EXIT;
  }
  if (command === '-h' || command === '--help' || command === 'help') {
    io.out(HELP[rest[0] ?? 'main'] ?? HELP.main!);
    return 0;
  }
  if (command === '-V' || command === '-v' || command === '--version') {
    io.out(version());
    return 0;
  }
  if (!Object.hasOwn(HELP, command) || command === 'main') {
    const commands = Object.keys(HELP).filter((c) => c !== 'main');
    const near = suggest(command, command.startsWith('-') ? ['--help', '--version'] : commands);
    const what = command.startsWith('-') ? `unknown option ${command}` : `unknown command "${command}"`;
    io.err(usageError(undefined, `${what}${near ? ` (did you mean ${near}?)` : ''}`, paint.err));
    return USAGE_EXIT;
  }
  if (command === 'new') return runNew(rest, io, paint);
  if (command === 'add') return runAdd(rest, io, paint);
  // Usage errors in Laneway's words (args.ts), never Node's ERR_PARSE_ARGS_… text.
  const parsed = parseCommandLine(
    command,
    rest,
    {
      help: { type: 'boolean', short: 'h' },
      port: { type: 'string' },
      host: { type: 'string' },
      log: { type: 'string' },
      dev: { type: 'boolean' },
      watch: { type: 'boolean' },
      'body-limit': { type: 'string' },
      json: { type: 'boolean' },
      data: { type: 'string' },
      database: { type: 'string' },
      accept: { type: 'boolean' },
      source: { type: 'string', multiple: true },
      sources: { type: 'string' },
      workers: { type: 'string' },
      'watchdog-ms': { type: 'string' },
      metrics: { type: 'boolean' },
      'metrics-host': { type: 'string' },
      'metrics-port': { type: 'string' },
      'allowed-host': { type: 'string', multiple: true },
      strict: { type: 'boolean' },
      'trust-proxy': { type: 'string' },
      images: { type: 'boolean' },
    },
    paint.err,
  );
  if ('error' in parsed) {
    io.err(parsed.error);
    return USAGE_EXIT;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.out(HELP[command]!);
    return 0;
  }
  if (positionals.length !== 1) {
    const problem = positionals.length === 0 ? `give the directory of the app (${invokedCommand()} ${command} path/to/app)` : `expected one app directory, got ${positionals.length}: ${positionals.join(' ')}`;
    io.err(usageError(command, problem, paint.err));
    return USAGE_EXIT;
  }
  if (values.images && command !== 'migrate') {
    io.err(usageError(command, '--images belongs to laneway migrate (it copies the image files into the database)', paint.err));
    return USAGE_EXIT;
  }
  const dir = resolve(positionals[0]!);
  const notADirectory = checkAppDirectory(positionals[0]!, dir);
  if (notADirectory) {
    io.err(usageError(command, notADirectory, paint.err));
    return USAGE_EXIT;
  }
  // laneway dev: serve --dev --watch with the development server (src/dev/), made before the first load.
  const devTools = command === 'dev' ? (await import('../dev/index.js')).createDevTools({ root: dir }) : undefined;
  if (devTools) {
    values.dev = true;
    values.watch = true;
  }
  // The serving options, checked before anything is loaded. An empty $PORT counts as unset.
  const serving = !['check', 'routes', 'migrate'].includes(command);
  const portText = values.port ?? (process.env.PORT || '3000');
  const portNumber = serving || values.port !== undefined ? parsePort(portText, values.port !== undefined ? '--port' : '$PORT') : 0;
  if (typeof portNumber === 'string') {
    io.err(usageError(command, portNumber, paint.err));
    return USAGE_EXIT;
  }
  const log = parseLogFormat(values.log ?? 'pretty');
  if (log !== 'pretty' && log !== 'json' && log !== 'off') {
    io.err(usageError(command, log, paint.err));
    return USAGE_EXIT;
  }
  const bodyLimit = values['body-limit'] === undefined ? undefined : Number(values['body-limit']);
  if (bodyLimit !== undefined && !(/^\d+$/.test(values['body-limit']!) && Number.isSafeInteger(bodyLimit))) {
    io.err(usageError(command, `--body-limit ${JSON.stringify(values['body-limit'])} is not a size: give a whole number of bytes`, paint.err));
    return USAGE_EXIT;
  }
  // Workers, watchdog, metrics (src/supervisor/): the default number of workers follows the database.
  // Commands that do not serve only check the options given.
  const scalingGiven = ['workers', 'watchdog-ms', 'metrics', 'metrics-host', 'metrics-port'].some((k) => values[k as keyof typeof values] !== undefined);
  const scaling: ServeScaling | { error: string } = serving || scalingGiven
    ? (await import('../supervisor/index.js')).readServeScaling(values, values.database ?? process.env.DATABASE_URL, values.watch === true)
    : { workers: 1, watchdogMs: 0, metrics: { enabled: false } };
  if ('error' in scaling) {
    io.err(usageError(command, scaling.error, paint.err));
    return USAGE_EXIT;
  }
  // The sources map: --source flags > LANEWAY_SOURCES > the sources file (docs/connectors.md).
  const sourcesFile = values.sources !== undefined ? resolve(values.sources) : join(dirname(dir), SOURCES_FILE);
  if (values.sources !== undefined && !existsSync(sourcesFile)) {
    io.err(`laneway ${command}: --sources ${values.sources}: no such file`);
    return 2;
  }
  const readSources = (): { sources: Record<string, string>; diagnostics: Diagnostic[] } | string => {
    // Reported relative to the app directory, as every other file (../laneway.sources.yaml).
    const file = existsSync(sourcesFile) ? readSourcesFile(sourcesFile, relative(dir, sourcesFile).split(sep).join('/')) : { sources: {}, diagnostics: [] };
    const merged = sourcesFromCommandLine(values.source ?? [], process.env.LANEWAY_SOURCES, process.cwd(), file.sources);
    return typeof merged === 'string' ? merged : { sources: merged, diagnostics: file.diagnostics };
  };
  const read = readSources();
  if (typeof read === 'string') {
    io.err(`laneway ${command}: ${read}`);
    return 2;
  }
  let sources = read.sources;
  // Compiled stylesheets are kept between runs (src/assets/scss.ts): a check does not load Sass
  // again for a stylesheet it compiled before.
  persistStylesheets(stylesheetCacheDir());

  if (command === 'check') {
    // A broken sources file is listed with the app's problems; the app is checked with the entries that are fine.
    const diagnostics = [...read.diagnostics, ...checkApp(dir, { sources, strict: values.strict ?? false })];
    for (const d of diagnostics) io.out(formatDiagnostic(d));
    io.out(summary(diagnostics));
    return diagnostics.some((d) => d.severity === 'error') ? 1 : 0;
  }

  const { createLogger, createServer, HttpMetrics, normalizeAllowedHost, serveMetrics, TrustedProxies } = await import('../http/index.js');
  // The development server's host rule (docs/security.md): this machine's names, --host and every --allowed-host.
  const allowedHosts: string[] = [];
  for (const name of values['allowed-host'] ?? []) {
    const host = normalizeAllowedHost(name);
    if (host === undefined) {
      io.err(usageError(command, `--allowed-host ${JSON.stringify(name)} is not a host name: give a name or an address without a scheme, port or path (--allowed-host dev.example.test)`, paint.err));
      return USAGE_EXIT;
    }
    allowedHosts.push(host);
  }
  if (allowedHosts.length > 0 && !values.dev) {
    io.err(usageError(command, '--allowed-host applies to the development server only (laneway dev, serve --dev): serve without --dev answers every Host', paint.err));
    return USAGE_EXIT;
  }
  // Trusted proxies (docs/deploy.md "Behind a reverse proxy"): --trust-proxy, else $LANEWAY_TRUST_PROXY, else nobody.
  const trustText = values['trust-proxy'] ?? process.env.LANEWAY_TRUST_PROXY ?? '';
  const trustProxy = TrustedProxies.parse(trustText);
  if ('error' in trustProxy) {
    const from = values['trust-proxy'] !== undefined ? '--trust-proxy' : '$LANEWAY_TRUST_PROXY';
    io.err(usageError(command, `${from}: ${trustProxy.error}; give addresses or CIDR ranges separated by commas (--trust-proxy 10.0.0.0/8,loopback)`, paint.err));
    return USAGE_EXIT;
  }
  const boundHost = values.host === undefined ? undefined : normalizeAllowedHost(values.host);
  if (boundHost !== undefined) allowedHosts.push(boundHost);
  const hostRule = values.dev ? { allowed: allowedHosts, command: `laneway ${command}` } : undefined;
  const logger = createLogger(log, io.out, io.err, { timestamps: true, color: { out: io === stdio && colorEnabled(process.stdout), err: io === stdio && colorEnabled(process.stderr) } });
  // The usage errors are behind: from here on, with --log json, every line the command prints is
  // a JSON object (output.ts).
  if (log === 'json' && serving) io = jsonIo(logger);

  // The development sign-in (docs/users.md): test users anyone may sign in as, so `serve` takes
  // them only with --dev, and refuses to start without it rather than ignore them silently.
  let devUsers: DevUser[] | undefined;
  const devUsersText = process.env[DEV_USERS_ENV];
  if ((command === 'serve' || command === 'dev') && devUsersText !== undefined && devUsersText.trim() !== '') {
    if (!values.dev) {
      io.err(
        `laneway serve: ${DEV_USERS_ENV} is set, which lets anyone sign in as a test user without a provider: that is for development only. ` +
          `Add --dev to serve with the development sign-in, or unset ${DEV_USERS_ENV} to serve for real. [LW_AUTH_DEV_USERS]`,
      );
      return 1;
    }
    const parsedUsers = parseDevUsers(devUsersText);
    if ('error' in parsedUsers) {
      io.err(`laneway serve: ${parsedUsers.error} [LW_AUTH_DEV_USERS]`);
      return 1;
    }
    devUsers = parsedUsers.users;
  }

  if (read.diagnostics.length > 0) {
    for (const d of read.diagnostics) logger.diagnostic(d);
    io.err(summary(read.diagnostics));
    return 1;
  }
  // Run-time errors of scripts and views; dev also keeps them for the overlay of their request.
  // A script's console.log/info are information, console.warn a warning (docs/scripting.md "Logging").
  const appLog = (message: string, fields: Record<string, unknown>) => (fields.console === 'log' || fields.console === 'info' || fields.level === 'info' ? logger.info(message, fields) : fields.console === 'warn' ? logger.warn(message, fields) : logger.error(message, fields));
  // The production data browser (docs/data-browser.md "In production"): from the environment only,
  // never an argument, which every user of the machine could read in the process list.
  const dataBrowserSecret = process.env.LANEWAY_DATA_BROWSER_SECRET;
  const dataBrowser = !values.dev && dataBrowserSecret ? { secret: dataBrowserSecret, role: process.env.LANEWAY_DATA_BROWSER_ROLE || 'Admin' } : undefined;
  const runtimeLog = devTools ? devTools.captureLog(appLog) : appLog;
  // --watch (and dev): each rebuild compiles only what the changed files affect (app/load/build-cache.ts).
  const cache = values.watch ? new BuildCache() : undefined;
  let app;
  try {
    app = loadApp(dir, { dev: values.dev ?? false, bodyLimit, sources, log: runtimeLog, strict: values.strict ?? false, ...(cache && { cache }), ...(dataBrowser && { dataBrowser }) });
  } catch (err) {
    if (!(err instanceof BuildError)) throw err;
    for (const d of err.diagnostics) logger.diagnostic(d);
    io.err(summary(err.diagnostics));
    if (!devTools) return 1;
    // dev starts anyway: every page answers the problems until a change fixes them.
    devTools.failed(err.diagnostics);
    app = devTools.placeholderApp();
  }

  const dataOptions = {
    ...(values.data ? { dataDir: resolve(values.data) } : {}),
    ...(values.database ? { databaseUrl: values.database } : {}),
    // The database's notices (schema changes applied at start, the mail worker) on standard error,
    // as before, so that standard output starts with the listening line; JSON lines with --log json.
    log: { info: (message: string) => (log === 'json' ? logger.info(message) : io.err(message)), error: (message: string, fields?: Record<string, unknown>) => logger.error(message, fields) },
  };
  if (command === 'migrate') {
    if (!appHasData(app)) {
      io.out('laneway migrate: the app defines no models (/📦/); nothing to do');
      return 0;
    }
    try {
      await openAppData(app, { ...dataOptions, accept: values.accept ?? false });
    } catch (err) {
      io.err(`laneway migrate: ${storeMessage(err, dir)}`);
      return 1;
    }
    const { applied, notices } = storeChanges(app);
    io.out(applied.length ? applied.map((c) => `${c.model}: ${c.description}`).join('\n') : 'the database matches the definitions');
    for (const n of notices) io.err(`laneway migrate: ${n}`);
    if (values.images) {
      // The image files of before, copied into the database (docs/images.md "Where the images are").
      let exit = 0;
      const done = await importAppImages(app);
      if (done === 'not-postgres') {
        io.err('laneway migrate: --images copies images into a PostgreSQL database (--database postgres://…); on SQLite they stay in the images directory');
        exit = 1;
      } else {
        if (!done.length) io.out('images: the app has no image fields; nothing to copy');
        // One line per site with image fields: the app's, then each nested site's (by its mount path).
        for (const { site, namespace, result } of done) {
          const what = site === '/' ? 'images' : `images of ${site} (namespace ${namespace})`;
          io.out(`${what}: ${result.copied} copied from ${result.from} into the database, ${result.present} there already`);
          if (result.missing.length) io.err(`laneway migrate: ${what}: ${result.missing.length} named by the image table are in neither place: ${result.missing.slice(0, 10).join(', ')}${result.missing.length > 10 ? ', …' : ''}`);
        }
      }
      await closeAppData(app);
      return exit;
    }
    await closeAppData(app);
    return 0;
  }

  if (command === 'routes') {
    const routes = app.routes();
    if (values.json) {
      io.out(JSON.stringify(routes, null, 2));
    } else {
      const width = (key: 'method' | 'pattern' | 'file') => Math.max(key.length, ...routes.map((r) => [...r[key]].length));
      const pad = (s: string, n: number) => s + ' '.repeat(Math.max(0, n - [...s].length));
      const [wm, wp, wf] = [width('method'), width('pattern'), width('file')];
      io.out(`${pad('METHOD', wm)}  ${pad('PATTERN', wp)}  ${pad('FILE', wf)}  KIND`);
      for (const r of routes) io.out(`${pad(r.method, wm)}  ${pad(r.pattern, wp)}  ${pad(r.file, wf)}  ${r.kind}`);
    }
    return 0;
  }

  // serve
  const { isWorkerProcess, serveSupervised } = await import('../supervisor/index.js');
  // A worker of `serve --workers N` (src/supervisor/): the primary printed the warnings already.
  const worker = isWorkerProcess();
  if (!worker) for (const d of app.diagnostics) logger.diagnostic(d);
  if (appHasData(app)) {
    try {
      await openAppData(app, dataOptions);
    } catch (err) {
      io.err(`laneway serve: ${storeMessage(err, dir)}`);
      return 1;
    }
    logMigrations(app, dataOptions.log);
  }
  if (devUsers && !devTools?.broken) {
    let sites: number;
    try {
      sites = enableDevSignIn(app, devUsers);
    } catch (err) {
      io.err(`laneway serve: ${(err as Error).message} [LW_AUTH_DEV_USERS]`);
      await closeAppData(app);
      return 1;
    }
    // Loud on purpose: a server in this mode lets anyone in as any test user.
    if (worker) {
      // said once, by the primary
    } else if (sites > 0) io.err(devWarning(devUsers));
    else io.err(`laneway serve: warning: ${DEV_USERS_ENV} is set, but the app has no users (no /👤.yaml): nobody signs in [LW_AUTH_DEV_SIGNIN]`);
  }
  // A reload reads the sources file again; a broken one keeps the last good app serving.
  const reloadApp = (): App => {
    const again = readSources();
    // The flags and the variable parsed at start; the file adds no message of this kind.
    if (typeof again === 'string') throw new Error(again);
    if (again.diagnostics.length > 0) throw new BuildError(again.diagnostics);
    sources = again.sources;
    return loadApp(dir, { dev: values.dev ?? false, bodyLimit, sources, log: runtimeLog, strict: values.strict ?? false, ...(cache && { cache }), ...(dataBrowser && { dataBrowser }) });
  };
  // Several workers (src/supervisor/): this process has checked the app and its data; it supervises
  // the workers, or, started by the supervisor, it is one of them.
  if (scaling.workers > 1 || worker) {
    return serveSupervised({
      app,
      closeApp: closeAppData,
      workers: scaling.workers,
      host: values.host ?? '127.0.0.1',
      port: portNumber,
      args: argv,
      logger,
      announce: (url) => logger.listening(url, { workers: scaling.workers }),
      listenFailed: async (err) => {
        const { message, fields } = (await import('./listen-error.js')).describeListenError(err, values.host ?? '127.0.0.1', portNumber);
        if (log === 'json') logger.error(message, fields);
        else io.err(paint.err.red(`laneway ${command}: ${message}`));
      },
      watchdogMs: scaling.watchdogMs,
      metrics: scaling.metrics,
      ...(hostRule && { hostRule }),
      ...(!trustProxy.empty && { trustProxy }),
      // SIGHUP: the app from its files again, and its data brought to the definitions, before new workers start.
      checkReload: async () => {
        let next: App;
        try {
          next = reloadApp();
        } catch (err) {
          if (!(err instanceof BuildError)) {
            io.err(`laneway serve: ${(err as Error).message}`);
            return false;
          }
          for (const d of err.diagnostics) logger.diagnostic(d);
          io.err(summary(err.diagnostics));
          return false;
        }
        for (const d of next.diagnostics) logger.diagnostic(d);
        if (!appHasData(next)) return true;
        try {
          await openAppData(next, dataOptions);
        } catch (err) {
          io.err(`laneway serve: ${storeMessage(err, dir)}`);
          return false;
        }
        logMigrations(next, dataOptions.log);
        await closeAppData(next);
        return true;
      },
    });
  }
  let current = app;
  // Metrics (--metrics, --metrics-port): counted by an observer of the request function.
  const metrics = scaling.metrics.enabled ? new HttpMetrics() : undefined;
  const server = createServer(app, {
    log: logger,
    ...(hostRule && { hostRule }),
    ...(!trustProxy.empty && { trustProxy }),
    ...(devTools && { devHooks: devTools.hooks, closeIdleOnStop: true }),
    ...(metrics && { observe: metrics.observe, platform: scaling.metrics.port === undefined ? { metrics: () => metrics.render() } : {} }),
  });
  let address;
  try {
    address = await server.listen(portNumber, values.host ?? '127.0.0.1');
  } catch (err) {
    // What to change (--port, --host) and, for a port in use, who holds it (listen-error.ts).
    const { message, fields } = (await import('./listen-error.js')).describeListenError(err, values.host ?? '127.0.0.1', portNumber);
    if (log === 'json') logger.error(message, fields);
    else io.err(paint.err.red(`laneway ${command}: ${message}`));
    await closeAppData(current);
    return 1;
  }
  // --metrics-port: the metrics on a bind of their own, and only there.
  let metricsServer: Awaited<ReturnType<typeof serveMetrics>> | undefined;
  if (metrics && scaling.metrics.port !== undefined) {
    const where = `${scaling.metrics.host}:${scaling.metrics.port}`;
    try {
      metricsServer = await serveMetrics(scaling.metrics.host ?? '127.0.0.1', scaling.metrics.port, () => metrics.render());
    } catch (err) {
      logger.error(`cannot serve the metrics on ${where}: ${(err as Error).message}`);
      await server.close();
      await closeAppData(current);
      return 1;
    }
    logger.info(`metrics on ${metricsServer.url}`);
  }
  /**
   * One burst of changes (--watch, dev): load the app again, open its store, serve it. A reload
   * that fails keeps the last good app serving (dev: every page shows the problems instead).
   */
  /** The last store problem said (not said again while it lasts), and the development retry of the load. */
  let storeProblem: string | undefined;
  let storeRetry: NodeJS.Timeout | undefined;
  // One load at a time: the watcher's bursts and the development retry take turns.
  let loads: Promise<void> = Promise.resolve();
  const rebuildQueue = (load: () => Promise<void>): Promise<void> => (loads = loads.then(load, load));
  const rebuild = async (changed: string[], watchDirs: () => Promise<void>): Promise<void> => {
    // The watcher names what changed; SIGHUP reads everything again.
    if (changed.includes('SIGHUP')) cache?.clear();
    else cache?.changed(changed);
    let next: App;
    try {
      next = reloadApp();
    } catch (err) {
      if (!(err instanceof BuildError)) {
        io.err(`laneway ${command}: ${sentence((err as Error).message)} Still serving the last good version.`);
        return;
      }
      for (const d of err.diagnostics) logger.diagnostic(d);
      io.err(`${summary(err.diagnostics)}; ${devTools ? 'every page shows the problems until they are fixed' : 'still serving the last version that compiled'}`);
      devTools?.failed(err.diagnostics, changed);
      return;
    }
    // A nested site or connector named from now on is watched before the app that uses it serves.
    await watchDirs();
    // The reloaded app gets its own store connection (the schema may have changed); the old one closes.
    const previous = current;
    try {
      await openAppData(next, dataOptions);
    } catch (err) {
      const message = storeMessage(err, dir);
      // Said once while the same problem lasts (the development retries below would repeat it).
      if (message !== storeProblem) io.err(`laneway ${command}: the reloaded app's database could not be opened: ${sentence(message)} ${devTools ? 'Every page shows the problem until it is solved.' : 'Still serving the last good version.'}`);
      storeProblem = message;
      if (devTools) {
        // Development: the browser shows it (a model change that loses data, a database that is
        // down), and the load is tried again until the database opens, for instance after
        // `laneway migrate --accept` in another terminal, with no file changed.
        const named = (err as { code?: unknown }).code;
        const code = err instanceof LanewayError ? err.code : typeof named === 'string' && Object.hasOwn(CODES, named) ? (named as Code) : 'LW_STORE_UNAVAILABLE';
        devTools.failed([{ code, severity: 'error', message, file: '/📦/', line: 1, column: 1 }], changed);
        clearTimeout(storeRetry);
        storeRetry = setTimeout(() => void rebuildQueue(() => rebuild([], watchDirs)), STORE_RETRY_MS);
        storeRetry.unref();
      }
      return;
    }
    clearTimeout(storeRetry);
    storeProblem = undefined;
    // The reloaded app's sign-in gets the test users again (each load makes its own).
    if (devUsers) {
      try {
        enableDevSignIn(next, devUsers);
      } catch (err) {
        void closeAppData(next);
        io.err(`laneway ${command}: ${(err as Error).message} [LW_AUTH_DEV_USERS]; still serving the last good version`);
        return;
      }
    }
    current = next;
    // The old app's data closes once the requests that started on it have finished.
    void server.replace(next).then(() => closeAppData(previous));
    io.out('reloaded');
    devTools?.built(changed);
  };
  // The app's files, those of the nested sites and local connectors it names (outside it too),
  // and the sources file; not the data directory (src/dev/watcher.ts).
  const watcher = values.watch
    ? await (await import('../dev/index.js')).watchAppFiles({
        root: dir,
        files: [sourcesFile],
        dirs: () => localSourceDirs(dir, sources),
        ignore: [values.data, process.env.LANEWAY_DATA].filter((d): d is string => !!d).map((d) => resolve(d)),
        onChange: (changed, watchDirs) => rebuildQueue(() => rebuild(changed, watchDirs)),
        onError: (err) => io.err(`laneway ${command}: warning: the file watcher failed: ${err.message}; changes may be missed [LW_DEV_WATCH]`),
      })
    : undefined;
  // Handlers first, then the line that tells a supervisor the server is ready.
  const stopped = new Promise<number>((resolveExit) => {
    let stopping = false;
    const stop = () => {
      if (stopping) return;
      stopping = true;
      clearTimeout(storeRetry);
      void watcher?.close();
      devTools?.close();
      void metricsServer?.close();
      server.close().then(() => closeAppData(current)).then(() => resolveExit(0));
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
  });
  // SIGHUP (systemctl reload): the app read from its files again and swapped in, as --watch does
  // after an edit; a build with errors keeps the running version. No request is dropped.
  process.on('SIGHUP', () => void rebuildQueue(() => rebuild(['SIGHUP'], async () => {})));
  // Last resort: a rejection nobody handled is a Laneway defect, never a reason to stop serving
  // everyone else. Logged with what is known of it (a request id when the error carries one).
  process.on('unhandledRejection', (reason) => {
    const r = reason as { message?: unknown; code?: unknown; requestId?: unknown } | null;
    const fields: Record<string, unknown> = { reason: String(r?.message ?? reason) };
    if (typeof r?.code === 'string') fields.code = r.code;
    if (typeof r?.requestId === 'string') fields.id = r.requestId;
    io.err(`laneway serve: unhandled rejection (please report it): ${JSON.stringify(fields)}`);
  });
  logger.listening(address.url, { host: address.host, port: address.port });
  return stopped;
}

/** Logs the schema changes the start applied (additive ones), app and nested sites: none when the database was up to date. */
function logMigrations(app: App, logger: { info(message: string): void }): void {
  const { applied, notices } = storeChanges(app);
  for (const c of applied) logger.info(`database: ${c.model}: ${c.description} (applied at start)`);
  for (const n of notices) logger.info(`database: ${n}`);
  for (const m of app.mounts) logMigrations(m.app, logger);
}

/**
 * Where compiled stylesheets are kept: $LANEWAY_CACHE_DIR (empty: nowhere), else the user's cache
 * directory ($XDG_CACHE_HOME or ~/.cache) under laneway/.
 */
function stylesheetCacheDir(): string | undefined {
  const given = process.env.LANEWAY_CACHE_DIR;
  if (given !== undefined) return given === '' ? undefined : join(resolve(given), 'scss');
  try {
    const base = process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
    return join(base, 'laneway', 'scss');
  } catch {
    return undefined;
  }
}

/** The line `serve --dev` prints when test users may sign in. */
function devWarning(users: readonly DevUser[]): string {
  const names = users.map((u) => u.name).join(', ');
  return (
    `WARNING: development sign-in is on (--dev, ${DEV_USERS_ENV}): anyone who can reach this server can sign in as ${names}, ` +
    `from the sign-in page or with a POST to /__/auth/dev/<id>. Never serve real users this way. [LW_AUTH_DEV_SIGNIN]`
  );
}

/** How often `laneway dev` tries again to open a reloaded app's database that would not open. */
const STORE_RETRY_MS = 1000;

/** A store's refusal as the command line says it: the app's own directory in its `laneway migrate` hint. */
function storeMessage(err: unknown, dir: string): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.replace('<app dir>', /^[\w./-]+$/.test(dir) ? dir : JSON.stringify(dir));
}

/** A message as a sentence of its own, ending with one full stop. */
function sentence(message: string): string {
  const text = message.trimEnd();
  return /[.!?]$/.test(text) ? text : `${text}.`;
}
