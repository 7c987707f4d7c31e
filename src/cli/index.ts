/**
 * The `laneway` command: serve, check, routes. `bin/laneway` only calls `main`.
 */
import { parseArgs } from 'node:util';
import { existsSync, readFileSync, realpathSync, watch, type FSWatcher } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { appHasData, checkApp, closeAppData, loadApp, openAppData, type App } from '../app/index.js';
import { BuildError, formatDiagnostic, type Diagnostic } from '../diag/index.js';
import { createServer, type LogFormat } from '../http/index.js';
import { localSourceDirs, readSourcesFile, SOURCES_FILE, sourcesFromCommandLine } from '../content/index.js';
import { DEV_USERS_ENV, parseDevUsers, type DevUser } from '../auth/index.js';

const HELP: Record<string, string> = {
  main: `Usage: laneway <command> [options]

Commands:
  serve DIR     serve the app in DIR over HTTP
  check DIR     compile the app in DIR and list every problem
  routes DIR    print the route table of the app in DIR
  migrate DIR   bring the database to the model definitions (--accept for changes that lose data)

Options:
  -h, --help     show help (also: laneway <command> --help)
  -v, --version  print the version`,
  serve: `Usage: laneway serve DIR [--port N] [--host H] [--log pretty|json|off] [--dev] [--watch] [--body-limit BYTES]

Serves the app in DIR. Prints "listening on http://HOST:PORT" when ready.

Options:
  --port N           port to listen on (default: $PORT, else 3000; 0 picks a free one)
  --host H           interface to bind (default 127.0.0.1)
  --log FORMAT       access log: pretty (default), json, or off
  --dev              development mode: render error details into HTML comments, and sign
                     in as the test users of $LANEWAY_AUTH_DEV_USERS without a provider
                     ("Ada Lovelace <ada@example.test>, Bob"; docs/users.md); without
                     --dev, serve refuses to start when that variable is set
  --watch            reload the app when a file of DIR changes, or of a nested site or
                     local connector it uses, or the sources file (a reload with errors
                     prints them and keeps serving the last good version)
  --body-limit BYTES largest request body accepted (default 1048576); larger ones get 413
  --data DIR         data directory of the SQLite database (default: $LANEWAY_DATA, else
                     DIR/.laneway; add .laneway/ to .gitignore)
  --database URL     use PostgreSQL (postgres://…) instead of SQLite (default: $DATABASE_URL)
  --source URL=DIR   use the local directory DIR for the connector or site at the git URL
                     (repeatable; also $LANEWAY_SOURCES); Laneway never fetches code
  --sources FILE     read the sources map from FILE (default: laneway.sources.yaml next
                     to DIR, in its parent directory, when it exists)
  -h, --help         show this help

Exits 1, listing the problems, when the app does not compile. SIGTERM and SIGINT stop
accepting connections, let requests in flight finish (up to 10 s), then exit 0.`,
  check: `Usage: laneway check DIR [--source URL=DIR]... [--sources FILE]

Compiles the whole app and prints every problem, one per line, as
  relative/path:line:column: message [CODE]
then a summary. Exits 0 when there are no errors (warnings alone do not fail), 1 otherwise.

Options:
  --source URL=DIR   use the local directory DIR for the connector or site at the git URL
                     (repeatable; also $LANEWAY_SOURCES; docs/connectors.md)
  --sources FILE     read the sources map from FILE (default: laneway.sources.yaml next
                     to DIR, in its parent directory, when it exists)`,
  migrate: `Usage: laneway migrate DIR [--accept] [--data DIR] [--database URL]

Applies the model definitions of DIR to its database. Additive changes (new models, new
optional fields, new indexes) are applied at every start anyway; changes that could lose or
narrow data (a removed field, a changed type, a field made required) are listed, and applied
only with --accept. Back up the data first (docs/data.md).`,
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
  const [command, ...rest] = argv;
  if (command === undefined || command === '-h' || command === '--help' || command === 'help') {
    io.out(HELP[rest[0] ?? 'main'] ?? HELP.main!);
    return command === undefined ? 1 : 0;
  }
  if (command === '-v' || command === '--version') {
    io.out(version());
    return 0;
  }
  if (!(command in HELP) || command === 'main') {
    io.err(`laneway: unknown command "${command}"\n\n${HELP.main}`);
    return 2;
  }
  let parsed;
  try {
    parsed = parseArgs({
      args: rest,
      allowPositionals: true,
      options: {
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
      },
      strict: true,
    });
  } catch (err) {
    io.err(`laneway ${command}: ${(err as Error).message}\n\n${HELP[command]}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.out(HELP[command]!);
    return 0;
  }
  if (positionals.length !== 1) {
    io.err(`laneway ${command}: expected one app directory\n\n${HELP[command]}`);
    return 2;
  }
  const dir = resolve(positionals[0]!);
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

  if (command === 'check') {
    // A broken sources file is listed with the app's problems; the app is checked with the entries that are fine.
    const diagnostics = [...read.diagnostics, ...checkApp(dir, { sources })];
    for (const d of diagnostics) io.out(formatDiagnostic(d));
    io.out(summary(diagnostics));
    return diagnostics.some((d) => d.severity === 'error') ? 1 : 0;
  }

  // The development sign-in (docs/users.md): test users anyone may sign in as, so `serve` takes
  // them only with --dev, and refuses to start without it rather than ignore them silently.
  let devUsers: DevUser[] | undefined;
  const devUsersText = process.env[DEV_USERS_ENV];
  if (command === 'serve' && devUsersText !== undefined && devUsersText.trim() !== '') {
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

  const bodyLimit = values['body-limit'] === undefined ? undefined : Number(values['body-limit']);
  if (bodyLimit !== undefined && !(Number.isInteger(bodyLimit) && bodyLimit >= 0)) {
    io.err(`laneway ${command}: --body-limit must be a whole number of bytes`);
    return 2;
  }
  if (read.diagnostics.length > 0) {
    for (const d of read.diagnostics) io.err(formatDiagnostic(d));
    io.err(summary(read.diagnostics));
    return 1;
  }
  let app;
  try {
    app = loadApp(dir, { dev: values.dev ?? false, bodyLimit, sources });
  } catch (err) {
    if (!(err instanceof BuildError)) throw err;
    for (const d of err.diagnostics) io.err(formatDiagnostic(d));
    io.err(summary(err.diagnostics));
    return 1;
  }

  const dataOptions = {
    ...(values.data ? { dataDir: resolve(values.data) } : {}),
    ...(values.database ? { databaseUrl: values.database } : {}),
  };
  if (command === 'migrate') {
    if (!appHasData(app)) {
      io.out('laneway migrate: the app defines no models (/📦/); nothing to do');
      return 0;
    }
    try {
      await openAppData(app, { ...dataOptions, accept: values.accept ?? false });
    } catch (err) {
      io.err(`laneway migrate: ${(err as Error).message}`);
      return 1;
    }
    const applied = app.data?.store?.migration.applied ?? [];
    io.out(applied.length ? applied.map((c) => `${c.model}: ${c.description}`).join('\n') : 'the database matches the definitions');
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
  for (const d of app.diagnostics) io.err(formatDiagnostic(d));
  const port = values.port ?? process.env.PORT ?? '3000';
  const portNumber = Number(port);
  if (!Number.isInteger(portNumber) || portNumber < 0 || portNumber > 65535) {
    io.err(`laneway serve: invalid port "${port}"`);
    return 2;
  }
  const log = (values.log ?? 'pretty') as LogFormat;
  if (!['pretty', 'json', 'off'].includes(log)) {
    io.err(`laneway serve: --log must be pretty, json or off`);
    return 2;
  }
  if (appHasData(app)) {
    try {
      await openAppData(app, dataOptions);
    } catch (err) {
      io.err(`laneway serve: ${(err as Error).message}`);
      return 1;
    }
  }
  if (devUsers) {
    let sites: number;
    try {
      sites = enableDevSignIn(app, devUsers);
    } catch (err) {
      io.err(`laneway serve: ${(err as Error).message} [LW_AUTH_DEV_USERS]`);
      await closeAppData(app);
      return 1;
    }
    // Loud on purpose: a server in this mode lets anyone in as any test user.
    if (sites > 0) io.err(devWarning(devUsers));
    else io.err(`laneway serve: warning: ${DEV_USERS_ENV} is set, but the app has no users (no /👤.yaml): nobody signs in [LW_AUTH_DEV_SIGNIN]`);
  }
  let current = app;
  const server = createServer(app, { log });
  let address;
  try {
    address = await server.listen(portNumber, values.host ?? '127.0.0.1');
  } catch (err) {
    io.err(`laneway serve: cannot listen on ${values.host ?? '127.0.0.1'}:${portNumber}: ${(err as Error).message}`);
    return 1;
  }
  // A reload reads the sources file again; a broken one keeps the last good app serving.
  const reloadApp = (): App => {
    const again = readSources();
    // The flags and the variable parsed at start; the file adds no message of this kind.
    if (typeof again === 'string') throw new Error(again);
    if (again.diagnostics.length > 0) throw new BuildError(again.diagnostics);
    sources = again.sources;
    return loadApp(dir, { dev: values.dev ?? false, bodyLimit, sources });
  };
  const watched = { sourcesFile, localDirs: () => localSourceDirs(dir, sources) };
  const unwatch = values.watch ? watchApp(dir, watched, reloadApp, (next) => {
    // The reloaded app gets its own store connection (the schema may have changed); the old one closes.
    const previous = current;
    // The reloaded app's sign-in gets the test users again (each load makes its own).
    const ready = openAppData(next, dataOptions).then(
      () => {
        if (!devUsers) return;
        try {
          enableDevSignIn(next, devUsers);
        } catch (err) {
          void closeAppData(next);
          throw new Error(`${(err as Error).message} [LW_AUTH_DEV_USERS]`);
        }
      },
      (err: Error) => {
        throw new Error(`the reloaded app's database could not be opened: ${err.message}`);
      },
    );
    ready.then(
      () => {
        current = next;
        server.replace(next);
        void closeAppData(previous);
      },
      (err: Error) => io.err(`laneway serve: ${err.message}; still serving the last good version`),
    );
  }, io) : undefined;
  // Handlers first, then the line that tells a supervisor the server is ready.
  const stopped = new Promise<number>((resolveExit) => {
    let stopping = false;
    const stop = () => {
      if (stopping) return;
      stopping = true;
      unwatch?.();
      server.close().then(() => closeAppData(current)).then(() => resolveExit(0));
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
  });
  // Last resort: a rejection nobody handled is a Laneway defect, never a reason to stop serving
  // everyone else. Logged with what is known of it (a request id when the error carries one).
  process.on('unhandledRejection', (reason) => {
    const r = reason as { message?: unknown; code?: unknown; requestId?: unknown } | null;
    const fields: Record<string, unknown> = { reason: String(r?.message ?? reason) };
    if (typeof r?.code === 'string') fields.code = r.code;
    if (typeof r?.requestId === 'string') fields.id = r.requestId;
    io.err(`laneway serve: unhandled rejection (please report it): ${JSON.stringify(fields)}`);
  });
  io.out(`listening on ${address.url}`);
  return stopped;
}

/**
 * Turns the development sign-in on in the app and in each of its nested sites that has users
 * (their stores are open); answers how many sites that is. Throws when a site cannot have it.
 */
function enableDevSignIn(app: App, users: readonly DevUser[]): number {
  let sites = 0;
  const visit = (a: App): void => {
    const auth = a.data?.auth;
    if (auth) {
      auth.enableDevSignIn(users);
      sites++;
    }
    for (const m of a.mounts) visit(m.app);
  };
  visit(app);
  return sites;
}

/** The line `serve --dev` prints when test users may sign in. */
function devWarning(users: readonly DevUser[]): string {
  const names = users.map((u) => u.name).join(', ');
  return (
    `WARNING: development sign-in is on (--dev, ${DEV_USERS_ENV}): anyone who can reach this server can sign in as ${names}, ` +
    `from the sign-in page or with a POST to /__/auth/dev/<id>. Never serve real users this way. [LW_AUTH_DEV_SIGNIN]`
  );
}

/**
 * Reloads the app when a file changes (debounced): a file under `dir`, under a directory the app
 * names (nested sites, local connectors: `watched.localDirs()`, asked again after every reload
 * attempt, so a new mount is watched from the next change on), or the sources file. Changes to
 * dot-files and under dot-directories (`.laneway/` data, `.git/`) and `node_modules/` are ignored:
 * the loader never reads the directories, and dot-files are private. A reload that fails to
 * compile prints its problems and keeps the last good app serving.
 */
function watchApp(dir: string, watched: { sourcesFile: string; localDirs: () => string[] }, load: () => App, swap: (app: App) => void, io: Io): () => void {
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  /** Recursive watchers of the directories outside `dir` the app names, by real path. */
  const watchers = new Map<string, FSWatcher>();
  const schedule = () => {
    if (closed) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(reload, 100);
  };
  const ignored = (name: string | Buffer | null): boolean => {
    if (name === null) return false;
    // Dot-directories are never walked; dot-files are private (editors' swap files among them).
    return String(name)
      .split(/[\\/]/)
      .some((d) => (d.startsWith('.') && d !== '.well-known') || d === 'node_modules');
  };
  const open = (path: string, recursive: boolean, onChange: (name: string | Buffer | null) => void, onGone?: (w: FSWatcher) => void): FSWatcher | undefined => {
    try {
      const w = watch(path, { recursive }, (_event, name) => onChange(name));
      // A directory that goes away (a checkout removed) ends its watcher, never the server.
      w.on('error', () => {
        w.close();
        onGone?.(w);
      });
      return w;
    } catch {
      return undefined; // missing: the next reload says why
    }
  };
  const real = (d: string): string => {
    try {
      return realpathSync(d);
    } catch {
      return resolve(d);
    }
  };
  const inside = (d: string, parent: string) => d === parent || d.startsWith(parent.endsWith(sep) ? parent : parent + sep);
  const root = real(dir);
  const mine = open(dir, true, (name) => {
    if (!ignored(name)) schedule();
  });
  // The sources file: its directory, for editors that replace the file rather than write it.
  const file = basename(watched.sourcesFile);
  const sourcesWatcher = open(dirname(watched.sourcesFile), false, (name) => {
    if (name === null || String(name) === file) schedule();
  });
  /** Watches the directories the app names now, and only those (outside the app's own). */
  const sync = () => {
    let dirs: string[];
    try {
      dirs = watched.localDirs().map(real);
    } catch {
      return;
    }
    const unique = [...new Set(dirs)];
    const wanted = unique.filter((d) => !inside(d, root) && !unique.some((o) => o !== d && inside(d, o)));
    for (const [d, w] of watchers) {
      if (wanted.includes(d)) continue;
      w.close();
      watchers.delete(d);
    }
    for (const d of wanted) {
      if (watchers.has(d)) continue;
      const w = open(
        d,
        true,
        (name) => {
          if (!ignored(name)) schedule();
        },
        // Opened again by the next sync if the directory comes back.
        (gone) => {
          if (watchers.get(d) === gone) watchers.delete(d);
        },
      );
      if (w) watchers.set(d, w);
    }
  };
  const reload = () => {
    timer = undefined;
    try {
      swap(load());
      io.out('reloaded');
    } catch (err) {
      if (!(err instanceof BuildError)) throw err;
      for (const d of err.diagnostics) io.err(formatDiagnostic(d));
      io.err(`${summary(err.diagnostics)}; still serving the last version that compiled`);
    } finally {
      if (!closed) sync();
    }
  };
  sync();
  return () => {
    closed = true;
    if (timer) clearTimeout(timer);
    mine?.close();
    sourcesWatcher?.close();
    for (const w of watchers.values()) w.close();
    watchers.clear();
  };
}
