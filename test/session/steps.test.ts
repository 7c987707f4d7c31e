/**
 * Step-by-step forms (docs/forms.md "Steps", "Steps, one page each"), black-box on both
 * engines: a form file with `Begin` and `+End` steps; the first step's POST validates its fields
 * and carries them on with `Redirect….form(f)` (a form state, `?_form=`); the second step's page
 * shows them, and its POST stores a record from both steps' values (the earlier ones taken from
 * the state when the page does not send them again) — once: the state is single-use.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { serve, type Served } from '../helpers.js';
import { ENGINES } from '../support/engines.js';
import { TestVisitor } from '../support/visitor.js';

const VIEW = (step: string, body: string) =>
  `<!--TEMPLATE mustache-->\n{{% import {NewProduct} from '📤' }}\n<!doctype html><html><head><title>${step}</title></head><body>\n` +
  `{{#NewProduct.${step}.view as f}}${body}{{/NewProduct.${step}.view}}\n</body></html>\n`;

const APP = {
  '📦/🌐Product.yaml': 'name: string\nprice: integer\n',
  '📤/⏳NewProduct.yaml': 'Begin:\n  📦.Product: [name]\n+End: [price]\n',
  'begin.html': VIEW('Begin', '<form action="/begin?_form={{f.id}}" method="POST">{{#f.name}}<input name="{{path}}" value="{{value}}">{{#invalid}}<p class="err">{{message.value}}</p>{{/invalid}}{{/f.name}}</form>'),
  'end.html': VIEW('End', '<p class="name">{{f.name.value}}</p><form action="/end?_form={{f.id}}" method="POST">{{#f.price}}<input name="{{path}}" value="{{value}}">{{#invalid}}<p class="err">{{message.value}}</p>{{/invalid}}{{/f.price}}</form>'),
  '📮begin.js': "import {NewProduct} from '📤';\ntry {\n  const f = NewProduct.Begin.validate();\n  Redirect.home().name('end').form(f);\n} catch ($ModelInvalid) {\n  Redirect.home().name('begin').invalid($ModelInvalid);\n}\n",
  '📮end.js':
    "import {NewProduct} from '📤';\nimport {Product} from '📦';\ntry {\n  const p = new Product();\n  NewProduct.End.submit(p);\n  Redirect.home().name('done').success('Made ' + p.name + ' at ' + p.price);\n" +
    "} catch ($ModelInvalid) {\n  Redirect.home().name('end').invalid($ModelInvalid);\n}\n",
  'done.html': '<!--TEMPLATE mustache-->\n<!doctype html><html><head><title>done</title></head><body>{{#Messages.all}}<p class="msg">{{this.value}}</p>{{/Messages.all}}</body></html>\n',
  'count/GET.js': "import {Product} from '📦';\n({count: Product.all().count()});\n",
};

const action = (html: string) => /action="([^"]+)"/.exec(html)?.[1];

for (const engine of ENGINES) {
  describe(`step-by-step forms (${engine.name})`, () => {
    let s: Served;
    before(async () => {
      s = await serve(APP, { data: await engine.data() });
    });
    after(() => s?.close());

    it('Begin → .form(f) → End stores one record from both steps', async () => {
      const v = new TestVisitor(s.port);
      const begin = action((await v.get('/begin')).text)!;
      const empty = await v.post(begin, { Product_name: '' });
      assert.equal(empty.status, 302);
      const again = await v.get(empty.headers.location!);
      assert.match(again.text, /<p class="err">Name is required<\/p>/);
      const next = await v.post(action(again.text)!, { Product_name: 'Lamp' });
      assert.equal(next.status, 302);
      assert.match(next.headers.location ?? '', /^\/end\?_form=/);
      const end = await v.get(next.headers.location!);
      assert.match(end.text, /<p class="name">Lamp<\/p>/, 'the second step shows the first step\'s value');
      const endAction = action(end.text)!;
      // Another visitor cannot continue this visitor's form.
      const other = new TestVisitor(s.port);
      assert.equal((await other.post(endAction, { Product_price: '1' })).status, 400);
      const bad = await v.post(endAction, { Product_price: 'lots' });
      assert.equal(bad.status, 302);
      const fix = await v.get(bad.headers.location!);
      assert.match(fix.text, /class="err"/);
      const done = await v.post(action(fix.text)!, { Product_price: '12' });
      assert.equal(done.status, 302, done.text);
      assert.equal(done.headers.location, '/done');
      assert.match((await v.get('/done')).text, /<p class="msg">Made Lamp at 12<\/p>/);
      assert.equal((await v.post(action(fix.text)!, { Product_price: '13' })).status, 400, 'single-use');
      assert.equal(JSON.parse((await s.get('/count')).text).count, 1);
    });
  });
}
