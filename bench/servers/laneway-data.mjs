// Child-process server: serves the app directory given as argv[2] through Laneway (built dist/),
// with logging off, after opening the app's store as `laneway serve` does (src/cli/index.ts:
// `app.data.open(dir, …)` before listening). argv[3] is the store: a `postgres://…` URL selects
// PostgreSQL, anything else is the SQLite data directory (laneway.db inside). Prints
// `listening <port>` once ready.
import { loadApp } from '../../dist/app/index.js';
import { createServer } from '../../dist/http/index.js';

const [dir, where] = process.argv.slice(2);
if (!dir || !where) {
  console.error('usage: node bench/servers/laneway-data.mjs APP_DIR (DATA_DIR | postgres://…)');
  process.exit(2);
}
const app = loadApp(dir);
if (!app.data) {
  console.error(`${dir} defines no models`);
  process.exit(2);
}
await app.data.open(dir, /^postgres(ql)?:\/\//.test(where) ? { databaseUrl: where } : { dataDir: where });
const server = createServer(app, { log: 'off' });
const { port } = await server.listen(0, '127.0.0.1');
console.log(`listening ${port}`);
process.on('SIGTERM', () => server.close().then(() => app.data.close()).then(() => process.exit(0)));
