/**
 * The data model's value types in scripts, on both engines (docs/models.md, docs/queries.md):
 * fluent setters of embedded values, map fields written key by key, lists as streams, flatMap
 * over list fields.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { serve, type Served } from '../helpers.js';
import { ENGINES } from '../support/engines.js';

const FORM = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
const J = { accept: 'application/json' };
const json = (r: { body: Buffer }) => JSON.parse(r.body.toString());

const APP: Record<string, string> = {
  '📦/📎Address.yaml': 'street: string\ncity: string\n',
  '📦/📎Line.yaml': 'sku: string\nqty: integer\n',
  '📦/🌐Order.yaml': 'title: string\nship?: Address\ncontact?:\n  type:\n    first: string\n    last?: string\nlines?[10]: Line\n',
  'fluent/POST.js':
    "import {Order, Address, Line} from '📦';\n" +
    "const o = new Order().title('A').ship(new Address().street('Main 1').city('Oslo')).contact(new Order.Contact().first('Ada'));\n" +
    "o.lines.add(new Line().sku('A').qty(2));\no.lines.add(new Line().sku('B').qty(3));\n({id: o.id});\n",
  '📦/🌐Customer.yaml': 'name: string\nprefs: map\n',
  'customers/POST.js': "import {Customer} from '📦';\nconst c = new Customer().name('C');\nc.prefs['theme'] = 'dark';\nc.prefs['gone'] = 1;\nc.prefs.size = 3;\n({id: c.id, same: c.prefs === c.prefs, theme: c.prefs.theme});\n",
  'customers/{c}/🔗.yaml': 'field: 📦.Customer.id\n',
  'customers/{c}/GET.js': "import {c} from '🔗';\nconst r = c.get();\n({prefs: r.prefs, keys: Object.keys(r.prefs), has: 'theme' in r.prefs});\n",
  'customers/{c}/📮edit.js': "import {c} from '🔗';\nconst r = c.get();\ndelete r.prefs['gone'];\nr.prefs['dark'] = true;\nr.prefs.size += 1;\n({prefs: r.prefs});\n",
  'customers/{c}/📮bad.js': "import {c} from '🔗';\nc.get().prefs['x'] = {deep: 1};\n({});\n",
  '📦/🌐Product.yaml': 'name: string\ntags?[]: string\nsizes?[]:\n  type: options\n  values: [s, m, l]\n',
  'products/POST.js':
    "import {Product} from '📦';\nnew Product().name('A').tags(['red', 'big']).sizes(['s', 'm']);\nnew Product().name('B').tags(['red', 'small']).sizes(['l']);\n({});\n",
  'products/streams/GET.js':
    "import {Product, Order} from '📦';\nconst p = Product.name('A').get();\nconst o = Order.all().get();\n" +
    "({tags: Product.all().flatMap((x) => x.tags).distinct(), n: Product.all().flatMap((x) => x.tags).count(),\n" +
    "  big: p.tags.filter((t) => t.length > 2).exists(), first: p.tags.map((t) => t.toUpperCase()).filter((t) => t != 'RED').get(),\n" +
    "  none: p.tags.filter((t) => t == 'x').optional(), count: p.tags.filter((t) => t != 'x').limit(1).count(), arr: p.tags.map((t) => t).join('+'),\n" +
    "  sizes: p.sizes.filter((z) => z != 's').map((z) => z + '!'), qty: o.lines.filter((l) => l.qty > 2).map((l) => l.sku).get(),\n" +
    "  skus: Order.all().flatMap((x) => x.lines).map((l) => l.sku)});\n",
  'products/misuse/GET.js': "import {Product} from '📦';\nlet m = '';\ntry { Product.name('A').get().tags.filter((t) => t).sum(); } catch (e) { m = e.message; }\nm;\n",
  '📦/🌐Step.yaml': 'title: string\nhierarchy:\n  type: hierarchy\n  init: true\n',
  'steps/POST.js': "import {Step} from '📦';\nconst s = new Step().title('S').hierarchy('/3.1/');\nconst t = new Step().title('T').hierarchy('/0.1/');\n({next: s.hierarchy.next().value, prev: t.hierarchy.previous().value, up: t.hierarchy.next().value, down: s.hierarchy.previous().value});\n",
  'many/POST.js': "import {Product} from '📦';\nArray.from({length: 101}, (_, i) => new Product().name('p' + i));\n({});\n",
  'orders/{order}/🔗.yaml': 'field: 📦.Order.id\n',
  'orders/{order}/GET.js': "import {order} from '🔗';\nconst o = order.get();\n({ship: o.ship, contact: o.contact, lines: o.lines});\n",
};

for (const engine of ENGINES) {
  describe(`value types in scripts on ${engine.name}`, () => {
    let s: Served;
    before(async () => {
      s = await serve(APP, { data: await engine.data() });
    });
    after(() => s.close());

    it('embedded values have fluent setters, global and inline, in lists too', async () => {
      const r = await s.request('POST', '/fluent', FORM, '');
      assert.equal(r.status, 200, r.body.toString());
      const got = json(await s.request('GET', `/orders/${json(r).id}`, J));
      assert.deepEqual(got, {
        ship: { street: 'Main 1', city: 'Oslo' },
        contact: { first: 'Ada', last: null },
        lines: [{ sku: 'A', qty: 2 }, { sku: 'B', qty: 3 }],
      });
    });

    it('map fields are written key by key and stored with the record', async () => {
      const made = await s.request('POST', '/customers', FORM, '');
      assert.equal(made.status, 200, made.body.toString());
      const { id, same, theme } = json(made);
      assert.deepEqual({ same, theme }, { same: true, theme: 'dark' });
      assert.deepEqual(json(await s.request('GET', `/customers/${id}`, J)), { prefs: { theme: 'dark', gone: 1, size: 3 }, keys: ['theme', 'gone', 'size'], has: true });
      const edited = await s.request('POST', `/customers/${id}/edit`, J);
      assert.equal(edited.status, 200, edited.body.toString());
      assert.deepEqual(json(await s.request('GET', `/customers/${id}`, J)).prefs, { theme: 'dark', size: 4, dark: true });
      const bad = await s.request('POST', `/customers/${id}/bad`, J);
      assert.equal(bad.status, 422, bad.body.toString());
      assert.match(bad.body.toString(), /texts, numbers and true\/false/);
      assert.deepEqual(json(await s.request('GET', `/customers/${id}`, J)).prefs, { theme: 'dark', size: 4, dark: true });
    });

    it('string, options and embedded lists are streams; flatMap flattens list fields', async () => {
      assert.equal((await s.request('POST', '/fluent', FORM, '')).status, 200);
      assert.equal((await s.request('POST', '/products', FORM, '')).status, 200);
      const r = await s.request('GET', '/products/streams', J);
      assert.equal(r.status, 200, r.body.toString());
      assert.deepEqual(json(r), {
        tags: ['red', 'big', 'small'], n: 4, big: true, first: 'BIG', none: null, count: 1, arr: 'red+big',
        sizes: ['m!'], qty: 'B', skus: ['A', 'B', 'A', 'B'],
      });
      const bad = await s.request('GET', '/products/misuse', J);
      assert.match(json(bad), /^sum is not a method of a stream of Product\.tags: a stream has map, filter/);
    });

    it('hierarchy values keep integer steps', async () => {
      const r = await s.request('POST', '/steps', FORM, '');
      assert.equal(r.status, 200, r.body.toString());
      assert.deepEqual(json(r), { next: '/4/', prev: '/0/', up: '/1/', down: '/3/' });
    });

    it('the 101st write answers with a body naming the limit', async () => {
      const r = await s.request('POST', '/many', FORM, '');
      assert.ok(r.status >= 400, String(r.status));
      assert.match(r.body.toString(), /at most 100 writes/);
      assert.match(r.body.toString(), /LW_MODEL_WRITE_LIMIT/);
    });
  });
}
