/**
 * A real PostgreSQL server for the tests: initdb into a fresh temporary directory, listening on
 * 127.0.0.1 on a free port, trust authentication for the user `app`. One server per test process
 * (each test file runs in its own process), started on first use and removed when the process
 * exits; `createDatabase()` gives every test its own database.
 *
 * PostgreSQL refuses to run as root: as root, the directory belongs to `postgres` and initdb and
 * pg_ctl run through `runuser -u postgres --`.
 *
 * Missing binaries fail the test (CI must run these tests: `.ci/run` installs Debian's
 * `postgresql`), they never skip it.
 */
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import { chown, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

export interface PgServer {
  /** postgres://app@127.0.0.1:<port>/<db> (default database: postgres). */
  url(db?: string): string;
  /** Creates an empty database of its own and returns its URL. */
  createDatabase(): Promise<string>;
  /** Stops the server (fast shutdown: clients are disconnected); `start()` brings it back on the same port. */
  stop(): Promise<void>;
  start(): Promise<void>;
  restart(): Promise<void>;
  /** Stops the server at once and removes its directory (also done when the process exits). */
  destroy(): Promise<void>;
}

const run = promisify(execFile);
const IS_ROOT = process.getuid?.() === 0;
const PREFERRED_BINDIR = '/usr/lib/postgresql/15/bin';
const PORT_ATTEMPTS = 5;

/** The directory of initdb and pg_ctl: PostgreSQL 15's, else pg_config's, else the newest installed. */
function findBindir(): string {
  const candidates = [PREFERRED_BINDIR];
  try {
    candidates.push(execFileSync('pg_config', ['--bindir'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
  } catch {
    // no pg_config: only the fixed locations
  }
  try {
    const versions = readdirSync('/usr/lib/postgresql').sort((a, b) => Number(b) - Number(a));
    candidates.push(...versions.map((v) => `/usr/lib/postgresql/${v}/bin`));
  } catch {
    // no /usr/lib/postgresql
  }
  const found = candidates.find((dir) => existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl')));
  if (!found) {
    throw new Error(
      `PostgreSQL server binaries (initdb, pg_ctl) not found in ${PREFERRED_BINDIR}, pg_config --bindir or /usr/lib/postgresql/*/bin. ` +
        '.ci/run installs the Debian package postgresql; locally: apt-get install -y postgresql.',
    );
  }
  return found;
}

/** A port nobody listens on right now (another process may take it before the server does: see the retry in `startServer`). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.unref();
    probe.on('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port assigned'))));
    });
  });
}

/** The command line that runs `bin` as the user PostgreSQL accepts (postgres when we are root). */
function asServerUser(bin: string, args: string[]): [string, string[]] {
  return IS_ROOT ? ['runuser', ['-u', 'postgres', '--', bin, ...args]] : [bin, args];
}

let started: Promise<PgServer> | undefined;

/** The process's PostgreSQL server, started on the first call. */
export function startPostgres(): Promise<PgServer> {
  started ??= launch().catch((err: unknown) => {
    started = undefined;
    throw err;
  });
  return started;
}

async function launch(): Promise<PgServer> {
  const bindir = findBindir();
  const pgCtl = join(bindir, 'pg_ctl');
  const dir = await mkdtemp(join(tmpdir(), 'laneway-pg-'));
  const data = join(dir, 'data');
  const sock = join(dir, 'sock');
  const log = join(dir, 'log');
  // The server user needs to reach the directory; it runs with it as its working directory.
  const exec = (bin: string, args: string[]) => {
    const [file, argv] = asServerUser(bin, args);
    return run(file, argv, { cwd: dir, maxBuffer: 4 << 20 });
  };

  let port = 0;
  let running = false;

  /** Stops the server at once and removes the directory; synchronous, for the 'exit' event. */
  const destroySync = () => {
    if (running) {
      const [file, argv] = asServerUser(pgCtl, ['-D', data, '-m', 'immediate', '-w', 'stop']);
      spawnSync(file, argv, { cwd: dir, stdio: 'ignore' });
      running = false;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const onSignal = (signal: NodeJS.Signals) => {
    destroySync();
    process.kill(process.pid, signal);
  };
  const unregister = () => {
    process.off('exit', destroySync);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  };
  process.on('exit', destroySync);
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  const startServer = async (): Promise<void> => {
    const options = `-h 127.0.0.1 -p ${port} -k '${sock}' -c fsync=off -c synchronous_commit=off -c full_page_writes=off`;
    const logStart = existsSync(log) ? statSync(log).size : 0;
    try {
      await exec(pgCtl, ['-D', data, '-l', log, '-w', '-t', '60', '-o', options, 'start']);
      running = true;
    } catch (err) {
      const tail = existsSync(log) ? (await readFile(log, 'utf8')).slice(logStart) : '';
      const detail = err instanceof Error ? err.message : String(err);
      throw Object.assign(new Error(`pg_ctl start failed on port ${port}: ${detail}\n${tail}`), { portInUse: /could not bind|Address already in use/.test(tail) });
    }
  };

  try {
    await mkdir(sock);
    if (IS_ROOT) {
      const { uid, gid } = serverUserIds();
      for (const path of [dir, sock]) await chown(path, uid, gid);
    }
    await exec(join(bindir, 'initdb'), ['-D', data, '-U', 'app', '--auth=trust', '-E', 'UTF8', '--locale=C.UTF-8', '--no-sync']);
    for (let attempt = 1; ; attempt++) {
      port = await freePort();
      try {
        await startServer();
        break;
      } catch (err) {
        if (attempt < PORT_ATTEMPTS && (err as { portInUse?: boolean }).portInUse) continue;
        throw err;
      }
    }
  } catch (err) {
    destroySync();
    unregister();
    throw err;
  }

  const url = (db = 'postgres') => `postgres://app@127.0.0.1:${port}/${db}`;
  const stop = async () => {
    if (!running) return;
    await exec(pgCtl, ['-D', data, '-m', 'fast', '-w', 'stop']);
    running = false;
  };
  const start = async () => {
    if (!running) await startServer();
  };
  return {
    url,
    async createDatabase() {
      const name = `lw_${randomBytes(6).toString('hex')}`;
      const client = new pg.Client({ connectionString: url(), connectionTimeoutMillis: 10_000 });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE ${name}`);
      } finally {
        await client.end();
      }
      return url(name);
    },
    stop,
    start,
    async restart() {
      await stop();
      await start();
    },
    async destroy() {
      unregister();
      if (running) {
        await exec(pgCtl, ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => {});
        running = false;
      }
      await rm(dir, { recursive: true, force: true });
      started = undefined;
    },
  };
}

/** uid and gid of the `postgres` user (Debian's package creates it). */
function serverUserIds(): { uid: number; gid: number } {
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  try {
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    throw new Error('Running as root, but there is no user postgres to run PostgreSQL as (the Debian package postgresql creates it).');
  }
}
