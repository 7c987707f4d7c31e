/**
 * A Redirect with `.form(f)` or `.invalid(…)` inside a JSON result (docs/forms.md "Steps, one
 * page each"): its form state is stored as for a redirect answer, and the JSON `redirect` path
 * carries `?_form=`, so an AJAX form flow keeps its values. Black-box on both engines.
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
  'end.html': VIEW('End', '<p class="name">{{f.name.value}}</p>'),
  // The AJAX flow: the page's script reads `redirect.path` of the JSON and goes there.
  '📮begin.js':
    "import {NewProduct} from '📤';\ntry {\n  const f = NewProduct.Begin.validate();\n  ({ok: true, redirect: Redirect.home().name('end').form(f)});\n} catch ($ModelInvalid) {\n  ({ok: false, redirect: Redirect.home().name('begin').invalid($ModelInvalid)});\n}\n",
};

const action = (html: string) => /action="([^"]+)"/.exec(html)?.[1];

for (const engine of ENGINES) {
  describe(`a Redirect with a form state inside a JSON result (${engine.name})`, () => {
    let s: Served;
    before(async () => {
      s = await serve(APP, { data: await engine.data() });
    });
    after(() => s?.close());

    it('.invalid(…) and .form(f) put ?_form= in the JSON redirect, and the pages show the values', async () => {
      const v = new TestVisitor(s.port);
      const begin = action((await v.get('/begin')).text)!;
      const json = { Accept: 'application/json', 'X-Requested-With': 'XMLHttpRequest' };
      const empty = await v.post(begin, { Product_name: '' }, json);
      assert.equal(empty.status, 200, empty.text);
      const bad = JSON.parse(empty.text) as { ok: boolean; redirect: { path: string } };
      assert.equal(bad.ok, false);
      assert.match(bad.redirect.path, /^\/begin\?_form=[^&]+$/);
      const again = await v.get(bad.redirect.path);
      assert.match(again.text, /<p class="err">Name is required<\/p>/);
      const next = await v.post(action(again.text)!, { Product_name: 'Lamp' }, json);
      assert.equal(next.status, 200, next.text);
      const good = JSON.parse(next.text) as { ok: boolean; redirect: { path: string } };
      assert.match(good.redirect.path, /^\/end\?_form=[^&]+$/);
      assert.match((await v.get(good.redirect.path)).text, /<p class="name">Lamp<\/p>/, 'the next step shows the value');
    });
  });
}
