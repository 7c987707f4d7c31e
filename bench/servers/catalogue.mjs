// What bench/fixtures/script-app computes for `GET /api/items`, in plain JavaScript, for the
// baselines of script-http.bench.mjs (servers/bare-json.mjs, servers/peer-json.mjs): the
// 📤/Products.js catalogue, made per call, and 🖥items.js's filter, sum and map of it.

const KINDS = ['Widget', 'Gadget', 'Sprocket', 'Gizmo'];

/** 📤/Products.js: 50 products. */
const makeProducts = () =>
  Array.from({ length: 50 }, (_, i) => ({
    id: i + 1,
    name: `${KINDS[i % 4]} ${i}`,
    price: Math.round(i * 3.7 * 100) / 100,
    inStock: i % 3 !== 0,
    tags: i % 4 === 0 ? ['new', 'sale'] : i % 5 === 0 ? ['sale'] : [],
  }));

/** 🖥items.js: the products in stock with `tag` (null: any) up to the price `max` (null: any). */
export function items(tag, max) {
  const limit = max === null ? Infinity : Number(max);
  const matches = makeProducts().filter((p) => p.inStock && p.price <= limit && (tag === null || p.tags.includes(tag)));
  return {
    tag,
    count: matches.length,
    total: Math.round(matches.reduce((sum, p) => sum + p.price, 0) * 100) / 100,
    items: matches.map((p) => ({ id: p.id, name: p.name, price: p.price, url: `/products/${p.id}` })),
  };
}
