// Child-process server: a peer framework (argv[2]: fastify, hono or express) rendering the
// per-request pages of bench/fixtures/view-app (argv[3]) with mustache.js, as an app written for
// that framework would; the peers are installed apart, in bench/peers (npm --prefix bench/peers ci).
// Prints `listening <port>` once ready.
//
// mustache.js has no template inheritance, so the fixture's layout is taken apart once at startup:
// in the layout each block `{{$name}}default{{/name}}` becomes a partial `{{> name}}`, and the
// page's block bodies become those partials. The marker line and the pragma lines are taken out,
// as for bench/servers/bare-hogan.mjs; `site` is parsed once from _data/site.yaml and the rows
// are made per request by the same code as 📤/Items*.js. mustache.js's escaping is set to the
// five characters Laneway and Hogan.js escape (it also escapes / ` = by default), so that the
// bodies are the same text. The headers are the ones Laneway sends for a view (ETag = sha1 of the
// body, computed per response), set by each framework's own API.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';

const [framework, dir, csp] = process.argv.slice(2);
if (!framework || !dir) {
  console.error('usage: node bench/servers/peer-mustache.mjs fastify|hono|express VIEW_APP_DIR [CSP]');
  process.exit(2);
}
const peers = createRequire(fileURLToPath(new URL('../peers/package.json', import.meta.url)));
const Mustache = peers('mustache');

const ESCAPES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
Mustache.escape = (s) => String(s).replace(/[&<>"']/g, (ch) => ESCAPES[ch]);

/** A fixture file without the marker line and the standalone pragma lines. */
function plain(path) {
  const lines = readFileSync(join(dir, path), 'utf8').split('\n');
  if (lines[0] === '<!--TEMPLATE mustache-->') lines.shift();
  return lines.filter((line) => !/^\s*\{\{\s*%[^}]*\}\}\s*$/.test(line)).join('\n');
}
const BLOCK = /\{\{\$(\w+)\}\}([\s\S]*?)\{\{\/\1\}\}/g;
const layout = plain('_layout.html').replace(BLOCK, (_, name) => `{{> ${name}}}`);
const shared = { nav: plain('_partials/nav.html'), item: plain('_partials/item.html'), footer: plain('_partials/footer.html') };
for (const t of [layout, ...Object.values(shared)]) Mustache.parse(t);

/** A page's partials: the shared ones and its own blocks. */
function page(path) {
  const partials = { ...shared };
  for (const [, name, body] of plain(path).matchAll(BLOCK)) {
    partials[name] = body;
    Mustache.parse(body);
  }
  return partials;
}

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
const PAGES = [
  ['/products', 'products.html', 'Items', 200],
  ['/products-20', 'products-20.html', 'Items20', 20],
  ['/products-2000', 'products-2000.html', 'Items2000', 2000],
].map(([path, file, name, n]) => ({ path, partials: page(file), data: () => ({ site, [name]: makeItems(n) }) }));

/** The page's body and headers. */
function render(p) {
  const body = Buffer.from(Mustache.render(layout, p.data(), p.partials));
  return {
    body,
    headers: {
      ...(csp && { 'Content-Security-Policy': csp }),
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'strict-origin-when-cross-origin',
      'Content-Type': 'text/html; charset=utf-8',
      'Cache-Control': 'no-cache',
      ETag: '"' + createHash('sha1').update(body).digest('base64url') + '"',
      Vary: 'Accept-Encoding',
    },
  };
}

const listening = (port) => console.log(`listening ${port}`);

if (framework === 'fastify') {
  const app = peers('fastify')({ logger: false });
  for (const p of PAGES) {
    app.get(p.path, (_req, reply) => {
      const { body, headers } = render(p);
      reply.headers(headers).send(body);
    });
  }
  await app.listen({ port: 0, host: '127.0.0.1' });
  listening(app.server.address().port);
} else if (framework === 'express') {
  const app = peers('express')();
  app.set('etag', false);
  app.set('x-powered-by', false);
  for (const p of PAGES) {
    app.get(p.path, (_req, res) => {
      const { body, headers } = render(p);
      res.set(headers).send(body);
    });
  }
  const server = app.listen(0, '127.0.0.1', () => listening(server.address().port));
} else if (framework === 'hono') {
  const { Hono } = await import(peers.resolve('hono'));
  const { serve } = await import(peers.resolve('@hono/node-server'));
  const app = new Hono();
  for (const p of PAGES) {
    app.get(p.path, (c) => {
      const { body, headers } = render(p);
      return c.body(body, 200, headers);
    });
  }
  serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => listening(info.port));
} else {
  console.error(`unknown framework ${framework}`);
  process.exit(2);
}
process.on('SIGTERM', () => process.exit(0));
