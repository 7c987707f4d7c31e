// Child-process server: the bare node:http baseline of view-http.bench.mjs. It renders the pages
// of bench/fixtures/view-app (argv[2]) with Hogan.js templates compiled once at startup, and
// sends the headers Laneway sends for a rendered view (same names, values and order; ETag = sha1
// of the body, as Laneway computes it). Node adds Date, Connection and Keep-Alive itself, as it
// does for Laneway. Prints `listening <port>` once ready.
//
// The Hogan templates are the fixture's own files with Laneway's lines taken out (the marker on
// line 1 and the declaration pragmas `{{% … }}`, which Hogan does not know); what those pragmas
// declare is passed as data instead:
//   GET /products, /products-20, /products-2000 → 200, 20 or 2000 items computed per request by
//     makeItems() (as 📤/Items.js, Items20.js and Items2000.js do in Laneway)
//   GET /catalog  → items parsed once from _data/items.yaml (as Laneway's yaml pragma does)
// and `site` parsed once from _data/site.yaml for both.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import Hogan from 'hogan.js';
import YAML from 'yaml';

const dir = process.argv[2];
if (!dir) {
  console.error('usage: node bench/servers/bare-hogan.mjs VIEW_APP_DIR');
  process.exit(2);
}

/** A fixture file as plain Mustache: without the marker line and the standalone pragma lines. */
function hoganTemplate(path) {
  const lines = readFileSync(join(dir, path), 'utf8').split('\n');
  if (lines[0] === '<!--TEMPLATE mustache-->') lines.shift();
  return Hogan.compile(lines.filter((line) => !/^\s*\{\{\s*%[^}]*\}\}\s*$/.test(line)).join('\n'));
}

// The same rows as bench/fixtures/view-app/📤/Items.js (Items20.js, Items2000.js), in plain JavaScript.
const KINDS = ['Widget', 'Gadget', 'Sprocket', 'Gizmo'];
const makeItems = (n) =>
  Array.from({ length: n }, (_, i) => ({
    id: i + 1,
    name: i % 7 === 0 ? `${KINDS[i % 4]} "${i}" & co` : `${KINDS[i % 4]} ${i}`,
    price: (i * 3.7).toFixed(2),
    inStock: i % 3 !== 0,
    tags: i % 4 === 0 ? ['new', 'sale'] : [],
    description: i % 5 === 0 ? 'Handmade <b>oak</b>, 2 years warranty' : 'A plain and simple widget',
  }));

const site = YAML.parse(readFileSync(join(dir, '_data', 'site.yaml'), 'utf8'));
const catalogItems = YAML.parse(readFileSync(join(dir, '_data', 'items.yaml'), 'utf8'));
const partials = {
  layout: hoganTemplate('_layout.html'),
  nav: hoganTemplate('_partials/nav.html'),
  item: hoganTemplate('_partials/item.html'),
  footer: hoganTemplate('_partials/footer.html'),
};
const csp = process.argv[3];
const pages = new Map([
  ['/products', { template: hoganTemplate('products.html'), data: () => ({ site, Items: makeItems(200) }) }],
  ['/products-20', { template: hoganTemplate('products-20.html'), data: () => ({ site, Items20: makeItems(20) }) }],
  ['/products-2000', { template: hoganTemplate('products-2000.html'), data: () => ({ site, Items2000: makeItems(2000) }) }],
  ['/catalog', { template: hoganTemplate('catalog.html'), data: () => ({ site, items: catalogItems }) }],
]);

// Same timeouts as Laneway's server (src/http/server.ts defaults).
const server = createServer({ headersTimeout: 20_000, requestTimeout: 60_000, keepAliveTimeout: 5_000 }, (req, res) => {
  const q = req.url.indexOf('?');
  const page = pages.get(q === -1 ? req.url : req.url.slice(0, q));
  if (!page) {
    res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': 9 });
    res.end('not found');
    return;
  }
  const body = Buffer.from(page.template.render(page.data(), partials));
  res.writeHead(200, {
    // The page's Content-Security-Policy, captured from Laneway by the bench (argv[3]): a
    // hand-written server would send a fixed policy string too.
    ...(csp && { 'Content-Security-Policy': csp }),
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'strict-origin-when-cross-origin',
    'Content-Type': 'text/html; charset=utf-8',
    'Cache-Control': 'no-cache',
    ETag: '"' + createHash('sha1').update(body).digest('base64url') + '"',
    Vary: 'Accept-Encoding',
    'Content-Length': body.length,
  });
  res.end(req.method === 'HEAD' ? undefined : body);
});
server.listen(0, '127.0.0.1', () => console.log(`listening ${server.address().port}`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
