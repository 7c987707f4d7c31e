/**
 * The database engines every model test runs against (the whole model test suite runs twice,
 * once per engine): SQLite in the app's data directory, and a real PostgreSQL server started by
 * test/support/postgres.ts, with a fresh database per app.
 */
import { startPostgres } from './postgres.js';
import type { DataOptions } from '../../src/app/services/data.js';

export interface EngineCase {
  name: 'sqlite' | 'postgres';
  /** Data options for one new app (a fresh database each call). */
  data(): Promise<DataOptions>;
}

export const ENGINES: EngineCase[] = [
  { name: 'sqlite', data: async () => ({}) },
  {
    name: 'postgres',
    data: async () => {
      const server = await startPostgres();
      return { databaseUrl: await server.createDatabase() };
    },
  },
];
