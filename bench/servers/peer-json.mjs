// Child-process server: fastify (installed apart, in bench/peers: npm --prefix bench/peers ci)
// answering script-http.bench.mjs's `GET /api/items` as an app written for fastify would: the
// catalogue made per request, filtered by the `tag` and `max` query values fastify parsed, mapped
// to the same JSON as bench/fixtures/script-app/api/🖥items.js, and sent with the headers Laneway
// sends for a JSON answer (ETag = sha1 of the body), set through fastify's reply API. Prints
// `listening <port>` once ready.
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { jsonHeaders } from './json-headers.mjs';

const peers = createRequire(fileURLToPath(new URL('../peers/package.json', import.meta.url)));
const Fastify = peers('fastify');

// 📤/Products.js, in plain JavaScript (as servers/bare-json.mjs).
const KINDS = ['Widget', 'Gadget', 'Sprocket', 'Gizmo'];
const makeProducts = () =>
  Array.from({ length: 50 }, (_, i) => ({
    id: i + 1,
    name: `${KINDS[i % 4]} ${i}`,
    price: Math.round(i * 3.7 * 100) / 100,
    inStock: i % 3 !== 0,
    tags: i % 4 === 0 ? ['new', 'sale'] : i % 5 === 0 ? ['sale'] : [],
  }));

function items(tag, max) {
  const limit = max === null ? Infinity : Number(max);
  const matches = makeProducts().filter((p) => p.inStock && p.price <= limit && (tag === null || p.tags.includes(tag)));
  return {
    tag,
    count: matches.length,
    total: Math.round(matches.reduce((sum, p) => sum + p.price, 0) * 100) / 100,
    items: matches.map((p) => ({ id: p.id, name: p.name, price: p.price, url: `/products/${p.id}` })),
  };
}

const app = Fastify({ logger: false });
app.get('/api/items', (request, reply) => {
  const { tag, max } = request.query;
  const body = Buffer.from(JSON.stringify(items(tag ?? null, max ?? null)));
  reply.headers(jsonHeaders(body)).send(body);
});
const address = await app.listen({ port: 0, host: '127.0.0.1' });
console.log(`listening ${new URL(address).port}`);
process.on('SIGTERM', () => app.close().then(() => process.exit(0)));
