// Child-process server: serves the app directory given as argv[2] through Laneway (built dist/),
// with logging off, in development mode, after opening the app's store (argv[3], a SQLite data
// directory) as `laneway serve --dev` does (src/cli/index.ts: `openAppData`, then, when
// LANEWAY_AUTH_DEV_USERS is set and the app has users, the development sign-in turned on in it).
// The bench starts both of its apps this way (with users and without), so that the two differ by
// the users only. Prints `listening <port>` once ready.
import { closeAppData, loadApp, openAppData } from '../../dist/app/index.js';
import { DEV_USERS_ENV, parseDevUsers } from '../../dist/auth/index.js';
import { createServer } from '../../dist/http/index.js';

const [dir, dataDir] = process.argv.slice(2);
if (!dir || !dataDir) {
  console.error('usage: node bench/servers/laneway-users.mjs APP_DIR DATA_DIR');
  process.exit(2);
}
const app = loadApp(dir, { dev: true });
await openAppData(app, { dataDir });
const text = process.env[DEV_USERS_ENV];
if (text && app.data?.auth) {
  const parsed = parseDevUsers(text);
  if ('error' in parsed) {
    console.error(parsed.error);
    process.exit(2);
  }
  app.data.auth.enableDevSignIn(parsed.users);
}
const server = createServer(app, { log: 'off' });
const { port } = await server.listen(0, '127.0.0.1');
console.log(`listening ${port}`);
process.on('SIGTERM', () => server.close().then(() => closeAppData(app)).then(() => process.exit(0)));
