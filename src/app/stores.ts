/**
 * The stores of a loaded app and of its nested sites, opened at start and closed at stop: apart
 * from data.ts, which each app's AppData comes from, since they walk the App that load.ts makes.
 */
import { resolveDataDir, type AppData, type DataOptions } from './data.js';
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
