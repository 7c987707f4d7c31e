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
  });
}
