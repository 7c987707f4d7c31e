// Child-process server: the bare node:http baseline of script-http.bench.mjs. `GET /api/items`
// computes, per request, what bench/fixtures/script-app/api/🖥items.js computes in Laneway (the
// 📤/Products.js catalogue, filtered by the `tag` and `max` query values), and sends the headers
// Laneway sends for a JSON script answer (same names, values and order; ETag = sha1 of the body;
// Vary only for bodies of 1 KB or more, as Laneway). Node adds Date, Connection and Keep-Alive
// itself, as it does for Laneway. Prints `listening <port>` once ready.
import { createServer } from 'node:http';
import { items } from './catalogue.mjs';
import { jsonHeaders } from './json-headers.mjs';

function itemsOf(query) {
  const params = new URLSearchParams(query);
  return items(params.get('tag'), params.get('max'));
}

// Same timeouts as Laneway's server (src/http/server.ts defaults).
const server = createServer({ headersTimeout: 20_000, requestTimeout: 60_000, keepAliveTimeout: 5_000 }, (req, res) => {
  const q = req.url.indexOf('?');
  if ((q === -1 ? req.url : req.url.slice(0, q)) !== '/api/items') {
    res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': 9 });
    res.end('not found');
    return;
  }
  const body = Buffer.from(JSON.stringify(itemsOf(q === -1 ? '' : req.url.slice(q + 1))));
  res.writeHead(200, jsonHeaders(body));
  res.end(req.method === 'HEAD' ? undefined : body);
});
server.listen(0, '127.0.0.1', () => console.log(`listening ${server.address().port}`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
