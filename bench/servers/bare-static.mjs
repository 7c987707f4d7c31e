// Child-process server: the bare node:http baseline. It answers from a table of canned responses
// (argv[2], a JSON file: { "routes": { "/path": R }, "fallback": R } with R = { status, headers,
// body: base64 }), captured from Laneway by the bench, so both servers send the same status,
// headers and bytes. Node adds Date, Connection and Keep-Alive itself, as it does for Laneway.
// Prints `listening <port>` once ready.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const file = process.argv[2];
if (!file) {
  console.error('usage: node bench/servers/bare-static.mjs RESPONSES.json');
  process.exit(2);
}
const table = JSON.parse(readFileSync(file, 'utf8'));
const canned = (r) => ({ status: r.status, headers: r.headers, body: Buffer.from(r.body, 'base64') });
const routes = new Map(Object.entries(table.routes).map(([path, r]) => [path, canned(r)]));
const fallback = canned(table.fallback);

// Same timeouts as Laneway's server (src/http/server.ts defaults).
const server = createServer({ headersTimeout: 20_000, requestTimeout: 60_000, keepAliveTimeout: 5_000 }, (req, res) => {
  const q = req.url.indexOf('?');
  const r = routes.get(q === -1 ? req.url : req.url.slice(0, q)) ?? fallback;
  res.writeHead(r.status, r.headers);
  res.end(req.method === 'HEAD' ? undefined : r.body);
});
server.listen(0, '127.0.0.1', () => console.log(`listening ${server.address().port}`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
