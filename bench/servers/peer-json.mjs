// Child-process server: fastify (installed apart, in bench/peers: npm --prefix bench/peers ci)
// answering script-http.bench.mjs's `GET /api/items` as an app written for fastify would: the
// catalogue made per request (servers/catalogue.mjs), filtered by the `tag` and `max` query values fastify parsed, mapped
// to the same JSON as bench/fixtures/script-app/api/🖥items.js, and sent with the headers Laneway
// sends for a JSON answer (ETag = sha1 of the body), set through fastify's reply API. Prints
// `listening <port>` once ready.
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { items } from './catalogue.mjs';
import { jsonHeaders } from './json-headers.mjs';

const peers = createRequire(fileURLToPath(new URL('../peers/package.json', import.meta.url)));
const Fastify = peers('fastify');

const app = Fastify({ logger: false });
app.get('/api/items', (request, reply) => {
  const { tag, max } = request.query;
  const body = Buffer.from(JSON.stringify(items(tag ?? null, max ?? null)));
  reply.headers(jsonHeaders(body)).send(body);
});
const address = await app.listen({ port: 0, host: '127.0.0.1' });
console.log(`listening ${new URL(address).port}`);
process.on('SIGTERM', () => app.close().then(() => process.exit(0)));
