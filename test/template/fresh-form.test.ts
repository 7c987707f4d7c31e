/**
 * Sections over a fresh form view (docs/architecture.md "Fresh forms in views"): rendered alone
 * once, then written from the kept markup with each render's id. Whatever reaches past the view
 * (an outer name, an import, a global, a page variable, a block, an outer iteration, the year)
 * makes the section render as usual, every time, with the values of that render.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FRESH_FORM } from '../../src/shared/index.js';
import type { CompiledView, RenderInput } from '../../src/template/index.js';
import { build, MARKER } from './helpers.js';

/** A fresh view as src/forms/view.ts makes one: shared field views, a mark, and the render's id. `reads` counts reads of the title's label. */
function freshForm() {
  let reads = 0;
  const title = Object.freeze({
    path: 'Note_title',
    get label() {
      reads++;
      return 'Title';
    },
    message: null,
    options: Object.freeze([Object.freeze({ value: 'a', label: 'A' }), Object.freeze({ value: 'b', label: 'B' })]),
  });
  const fields = Object.freeze({ title });
  return {
    view: (id: string) => Object.freeze({ id, invalid: false, ready: false, ...fields, [FRESH_FORM]: fields }),
    reads: () => reads,
  };
}

function compiled(body: string, extra = ''): CompiledView {
  const { view, messages } = build({ '/page.html': `${MARKER}{{% import {Form, Other, Items} from '📦' }}${extra}${body}` });
  if (!view) throw new Error(messages.join('\n'));
  return view;
}

function render(view: CompiledView, values: Record<string, unknown>, extra: Partial<RenderInput> = {}): string {
  const out = view.render({ importValue: (_m, n) => values[n], dev: false, now: new Date('2031-06-01T00:00:00Z'), ...extra });
  if (out instanceof Promise) throw new Error('render went async');
  return out.html;
}

const ID1 = 'fmk2x9a1b.AAAAAAAAAAAA.' + 'a'.repeat(32);
const ID2 = 'fmk2x9a1c.BBBBBBBBBBBB.' + 'b'.repeat(32);
const FORM =
  '{{#Form as form}}<form action="/n?_form={{form.id}}" data-id="{{form.id}}">' +
  '{{#form.title}}<label>{{label}}</label><input name="{{path}}">{{#message}}{{value}}{{/message}}' +
  '{{#options}}<option{{#$first}} first{{/$first}}>{{label}}</option>{{/options}}{{/form.title}}</form>{{/Form}}';
const expected = (id: string) =>
  `<form action="/n?_form=${id}" data-id="${id}"><label>Title</label><input name="Note_title"><option first>A</option><option>B</option></form>`;

describe('a section over a fresh form view', () => {
  it('is rendered once, then written from its markup with each render’s own id', () => {
    const form = freshForm();
    const view = compiled(FORM);
    assert.equal(render(view, { Form: form.view(ID1) }), expected(ID1));
    assert.equal(form.reads(), 1);
    assert.equal(render(view, { Form: form.view(ID2) }), expected(ID2));
    assert.equal(render(view, { Form: form.view(ID1) }), expected(ID1));
    assert.equal(form.reads(), 1, 'the later renders read nothing of the view but its id');
  });

  it('keeps markup per form: another form’s fields render their own', () => {
    const view = compiled(FORM);
    const a = freshForm();
    const b = freshForm();
    render(view, { Form: a.view(ID1) });
    assert.equal(render(view, { Form: b.view(ID2) }), expected(ID2));
    assert.equal(b.reads(), 1);
  });

  it('works without an alias, and prints the id as JSON too', () => {
    const form = freshForm();
    const view = compiled('{{#Form}}<a href="?f={{id}}">{{#title}}{{label}}{{/title}}</a>{{/Form}}');
    assert.equal(render(view, { Form: form.view(ID1) }), `<a href="?f=${ID1}">Title</a>`);
    assert.equal(render(view, { Form: form.view(ID2) }), `<a href="?f=${ID2}">Title</a>`);
    assert.equal(form.reads(), 1);
  });

  const reachingOut: Array<[string, string, string, Record<string, unknown>, Partial<RenderInput>, (n: number) => Record<string, unknown>]> = [
    ['an import', '{{#Form as form}}{{form.id}} {{Other}}{{/Form}}', '', {}, {}, (n) => ({ Other: `o${n}` })],
    ['a global', '{{#Form as form}}{{form.id}} {{Site}}{{/Form}}', '', {}, {}, () => ({})],
    ['a page variable', '{{#Form as form}}{{form.id}} {{v}}{{/Form}}', "{{% const v = Other }}", {}, {}, (n) => ({ Other: `o${n}` })],
    ['the year', '{{#Form as form}}{{form.id}} {{% year }}{{/Form}}', '', {}, {}, () => ({})],
  ];
  for (const [what, body, extra] of reachingOut) {
    it(`renders as usual, every time, when it reads ${what}`, () => {
      const form = freshForm();
      const view = compiled(body.replace('{{form.id}}', '{{form.id}}{{#form.title}}{{label}}{{/form.title}}'), extra);
      const outs: string[] = [];
      for (let n = 1; n <= 3; n++) {
        const values = { Form: form.view(n === 2 ? ID2 : ID1), Other: `o${n}` };
        const globals = { Site: `s${n}` };
        outs.push(render(view, values, { globals, now: new Date(`203${n}-06-01T00:00:00Z`) }));
      }
      assert.equal(form.reads(), 4, 'tried alone once, then rendered in full each time');
      assert.ok(outs[1]!.includes(ID2) && outs[2]!.includes(ID1));
      if (what === 'the year') assert.deepEqual(outs.map((o) => o.slice(-4)), ['2031', '2032', '2033']);
      else assert.deepEqual(outs.map((o) => o.slice(-2)), what === 'a global' ? ['s1', 's2', 's3'] : ['o1', 'o2', 'o3']);
    });
  }

  it('renders as usual when it reads a name of the context around it', () => {
    const form = freshForm();
    const view = compiled('{{#Items}}{{#Form as form}}{{form.id}}:{{name}}{{#form.title}}{{label}}{{/form.title}};{{/Form}}{{/Items}}');
    const Items = [{ name: 'x' }, { name: 'y' }];
    assert.equal(render(view, { Form: form.view(ID1), Items }), `${ID1}:xTitle;${ID1}:yTitle;`);
    assert.equal(render(view, { Form: form.view(ID2), Items }), `${ID2}:xTitle;${ID2}:yTitle;`);
    assert.equal(form.reads(), 5, 'tried alone once, then four sections in full');
  });

  it('renders as usual when it asks for the iteration around it ($first)', () => {
    const form = freshForm();
    const view = compiled('{{#Items}}{{#Form as form}}{{#$first}}1st {{/$first}}{{form.id}}{{#form.title}}{{label}}{{/form.title}};{{/Form}}{{/Items}}');
    assert.equal(render(view, { Form: form.view(ID1), Items: [1, 2] }), `1st ${ID1}Title;${ID1}Title;`);
    assert.equal(form.reads(), 3, 'tried alone once, then two sections in full');
  });

  it('renders as usual when the id is read but not printed as it is', () => {
    const form = freshForm();
    const view = compiled('{{#Form as form}}{{#form.id}}has an id{{/form.id}}{{#form.title}}{{label}}{{/form.title}}{{/Form}}');
    assert.equal(render(view, { Form: form.view(ID1) }), 'has an idTitle');
    assert.equal(render(view, { Form: form.view('') }), 'Title');
    assert.equal(form.reads(), 3, 'tried alone once, then two sections in full');
  });

  it('renders as usual for an id that would print escaped', () => {
    const form = freshForm();
    const view = compiled(FORM);
    render(view, { Form: form.view(ID1) });
    const odd = 'f1.<b>&"x';
    const out = render(view, { Form: form.view(odd) });
    assert.ok(out.includes('_form=f1.&lt;b&gt;&amp;&quot;x"'), out);
    assert.equal(form.reads(), 2);
  });
});
