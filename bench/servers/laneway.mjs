// Child-process server: serves the app directory given as argv[2] through Laneway (built dist/),
// with logging off. Prints `listening <port>` once ready.
import { loadApp } from '../../dist/app/index.js';
import { createServer } from '../../dist/http/index.js';

const dir = process.argv[2];
if (!dir) {
  console.error('usage: node bench/servers/laneway.mjs APP_DIR');
  process.exit(2);
}
const server = createServer(loadApp(dir), { log: 'off' });
const { port } = await server.listen(0, '127.0.0.1');
console.log(`listening ${port}`);
process.on('SIGTERM', () => server.close().then(() => process.exit(0)));
