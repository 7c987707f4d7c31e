/**
 * The services of a loaded app and of its nested sites as the command line and the server use
 * them (through app/index.ts, never `app.data`): stores opened at start and closed at stop, what
 * the start changed in the database, the development sign-in, the readiness check. Apart from
 * services/data.ts, which each app's AppData comes from, since they walk the App that load.ts makes.
 */
import type { DevUser } from '../../auth/index.js';
import { resolveDataDir, type AppData, type DataOptions } from '../services/data.js';
import type { App } from './load.js';

/**
 * Opens the stores of an app and of its nested sites: each child with models keeps its data in
 * the parent's data directory or database, apart, under its `namespace:` (a nested child's
 * namespace is prefixed with its parent's). Stores opened before a failure are closed again.
 */
export async function openAppData(app: App, options: DataOptions = {}): Promise<void> {
  const dataDir = resolveDataDir(app.root, options.dataDir);
  const opened: AppData[] = [];
  const open = async (a: App, namespace: string | undefined): Promise<void> => {
    if (a.data) {
      await a.data.open(a.root, { ...options, dataDir, ...(namespace === undefined ? {} : { namespace }) });
      opened.push(a.data);
    }
    for (const m of a.mounts) if (m.namespace !== undefined || m.app.mounts.length) await open(m.app, m.namespace === undefined ? namespace : namespace === undefined ? m.namespace : `${namespace}-${m.namespace}`);
  };
  try {
    await open(app, options.namespace);
  } catch (e) {
    await Promise.all(opened.map((d) => d.close()));
    throw e;
  }
}

/** Closes the stores openAppData opened. */
export async function closeAppData(app: App): Promise<void> {
  await Promise.all([app.data?.close(), ...app.mounts.map((m) => closeAppData(m.app))]);
}

/** Whether an app or one of its nested sites defines models. */
export function appHasData(app: App): boolean {
  return app.data !== undefined || app.mounts.some((m) => appHasData(m.app));
}

/** What opening an app's store changed in its database (additive changes) and what it noticed; nested sites not included. */
export function storeChanges(app: App): { applied: Array<{ model: string; description: string }>; notices: string[] } {
  const store = app.data?.store;
  return { applied: store?.migration.applied ?? [], notices: store?.notices ?? [] };
}

/**
 * Turns the development sign-in on in the app and in each of its nested sites that has users
 * (their stores are open); answers how many sites that is. Throws when a site cannot have it.
 */
export function enableDevSignIn(app: App, users: readonly DevUser[]): number {
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

/** One `SELECT 1` per store of the app and of its nested sites (`/__/ready`); a store not open rejects. */
export function pingStores(app: App): Array<Promise<unknown>> {
  const checks: Array<Promise<unknown>> = [];
  const visit = (a: App): void => {
    if (a.data) {
      const store = a.data.store;
      checks.push(store ? Promise.resolve().then(() => store.engine.reader.all('SELECT 1', [])) : Promise.reject(new Error('the database is not open')));
    }
    for (const m of a.mounts) visit(m.app);
  };
  visit(app);
  return checks;
}

/** What `laneway migrate --images` did for one site: the app (`/`) or a nested site (its mount path). */
export interface SiteImagesImport {
  /** `/` for the app, the mount path of a nested site (`/store`, `/store/blog`). */
  site: string;
  namespace?: string;
  result: NonNullable<Awaited<ReturnType<AppData['importImages']>>>;
}

/**
 * `laneway migrate --images`: copies the image files of the app and of each of its nested sites
 * with image fields into its PostgreSQL database (docs/images.md "Where the images are"), site by
 * site: a nested site's from its own directory (`images/<namespace>`) into its own schema. Empty
 * when no site has image fields; 'not-postgres' when the stores are SQLite.
 */
export async function importAppImages(app: App): Promise<SiteImagesImport[] | 'not-postgres'> {
  const sites: Array<{ site: string; namespace?: string; data: AppData }> = [];
  const visit = (a: App, site: string, namespace: string | undefined): void => {
    if (a.data?.store) sites.push({ site: site || '/', ...(namespace !== undefined && { namespace }), data: a.data });
    for (const m of a.mounts) visit(m.app, site + m.prefix, m.namespace === undefined ? namespace : namespace === undefined ? m.namespace : `${namespace}-${m.namespace}`);
  };
  visit(app, '', undefined);
  if (sites.some((s) => s.data.store!.engine.dialect !== 'postgres')) return 'not-postgres';
  const done: SiteImagesImport[] = [];
  for (const s of sites) {
    const result = await s.data.importImages();
    if (result) done.push({ site: s.site, ...(s.namespace !== undefined && { namespace: s.namespace }), result });
  }
  return done;
}
