/**
 * The view model of a form instance: one frozen property per field with its control, attribute
 * text for `{{{ input.attributes }}}` that no value can break out of, options and toggles, and
 * messages. Printed through the real view engine too.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseFragment } from 'parse5';
import { defaultForm, formView, type FormFieldView, type FormType, type FormViewValue } from '../../src/forms/index.js';
import { safeMarkup } from '../../src/shared/index.js';
import { page, renderSync } from '../template/helpers.js';
import { parseOk, schema } from './helpers.js';

const task = (): FormType => defaultForm(schema().models.get('Task')!);
const fieldOf = (view: FormViewValue, name: string) => view[name] as FormFieldView;
const attrs = (x: { attributes: unknown } | null) => String(x!.attributes);
const VALUES = {
  title: 'Buy milk',
  done: true,
  count: 3,
  price: 2.5,
  due: '2024-05-06T10:30:00.000Z',
  day: '2024-05-06',
  status: 'in-progress',
  sizes: ['s', 'l'],
  country: 'FRA',
  place: { latitude: 48.85, longitude: 2.35 },
  slug: 'a-b',
  notes: 'Some *notes*',
  body: '<p>x</p>',
};

describe('form view: shape', () => {
  const view = formView(task(), { id: 'frm_1', invalid: false, ready: true, values: VALUES });

  it('id, invalid, ready and one property per field', () => {
    assert.deepEqual(Object.keys(view), ['id', 'invalid', 'ready', 'title', 'done', 'count', 'price', 'due', 'day', 'status', 'sizes', 'country', 'place', 'slug', 'notes', 'body']);
    assert.deepEqual([view.id, view.invalid, view.ready], ['frm_1', false, true]);
  });

  it('each field: value, path, name, required, label, placeholder, about, message, readable, updatable, readOnly', () => {
    const title = fieldOf(view, 'title');
    assert.deepEqual(
      { ...title, input: null },
      {
        value: 'Buy milk',
        path: 'Task_title',
        name: 'title',
        required: true,
        label: 'Title',
        placeholder: 'What to do',
        about: 'A short title',
        invalid: false,
        message: null,
        readable: true,
        updatable: true,
        readOnly: false,
        input: null,
        textarea: null,
        toggle: null,
        selectOne: null,
        selectMany: null,
      },
    );
  });

  it('exactly one control per field', () => {
    const controls = ['input', 'textarea', 'toggle', 'selectOne', 'selectMany'] as const;
    const found = Object.fromEntries(task().fields.map((f) => [f.name, controls.filter((c) => fieldOf(view, f.name)[c] !== null)]));
    assert.deepEqual(found, {
      title: ['input'], done: ['toggle'], count: ['input'], price: ['input'], due: ['input'], day: ['input'], status: ['selectOne'],
      sizes: ['selectMany'], country: ['input'], place: ['input'], slug: ['input'], notes: ['textarea'], body: ['textarea'],
    });
  });

  it('is frozen all the way down', () => {
    const frozen = (v: unknown): boolean => v === null || typeof v !== 'object' || (Object.isFrozen(v) && Object.values(v).every(frozen));
    assert.ok(frozen(view));
  });
});

describe('form view: input attributes per type', () => {
  const view = formView(task(), { id: 'f', invalid: false, ready: false, values: VALUES });
  const input = (name: string) => attrs(fieldOf(view, name).input);

  it('string: maxlength and minlength from the bounds', () => {
    assert.equal(input('title'), 'type="text" value="Buy milk" required placeholder="What to do" maxlength="40" minlength="2"');
  });
  it('integer and double: number with min (0 unless lower) and max; double any step', () => {
    assert.equal(input('count'), 'type="number" value="3" max="50" min="-5"');
    assert.equal(input('price'), 'type="number" value="2.5" max="999.99" min="0" step="any"');
  });
  it('timestamp: datetime-local in UTC; date', () => {
    assert.equal(input('due'), 'type="datetime-local" value="2024-05-06T10:30"');
    assert.equal(input('day'), 'type="date" value="2024-05-06"');
    const dated = formView(task(), { id: 'f', invalid: false, ready: false, values: { due: new Date('2024-05-06T10:30:15.250Z'), day: new Date('2024-05-06T23:00:00Z') } });
    assert.equal(attrs(fieldOf(dated, 'due').input), 'type="datetime-local" value="2024-05-06T10:30:15.250"');
    assert.equal(attrs(fieldOf(dated, 'day').input), 'type="date" value="2024-05-06"');
  });
  it('country, geo and uid: text with a pattern', () => {
    assert.equal(input('country'), 'type="text" value="FRA" maxlength="3" minlength="3" pattern="[A-Za-z]{3}"');
    assert.equal(input('place'), 'type="text" value="48.85,2.35" pattern="\\s*[+\\-]?(?:\\d+(?:\\.\\d*)?|\\.\\d+)\\s*,\\s*[+\\-]?(?:\\d+(?:\\.\\d*)?|\\.\\d+)\\s*"');
    assert.equal(input('slug'), 'type="text" value="a-b" maxlength="100" minlength="2" pattern="[a-z0-9][a-z0-9\\-]*[a-z0-9]"');
  });
  it('patterns compile as browsers compile them (v flag) and match what the field accepts', () => {
    const pattern = (name: string) => new RegExp(`^(?:${/pattern="([^"]*)"/.exec(input(name))![1]})$`, 'v');
    assert.ok(pattern('slug').test('my-post') && !pattern('slug').test('-my') && !pattern('slug').test('My'));
    assert.ok(pattern('country').test('fra') && !pattern('country').test('FR'));
    assert.ok(pattern('place').test('48.85, -2.35') && !pattern('place').test('48.85'));
  });
  it('no value: no value attribute', () => {
    const empty = formView(task(), { id: 'f', invalid: false, ready: false });
    assert.equal(attrs(fieldOf(empty, 'title').input), 'type="text" required placeholder="What to do" maxlength="40" minlength="2"');
    assert.equal(fieldOf(empty, 'title').value, null);
  });
  it('never id, name or class', () => {
    for (const f of task().fields) {
      const v = fieldOf(view, f.name);
      for (const c of [v.input, v.textarea, v.selectOne, v.selectMany]) if (c) assert.doesNotMatch(attrs(c), /(^|\s)(id|name|class)=/);
    }
  });
  it('read-only: readonly, not updatable', () => {
    const form = parseOk('📦.Product:\n  - name: {readOnly: true}\n  - description: {readOnly: true}\n');
    const v = formView(form, { id: 'f', invalid: false, ready: false, values: { name: 'Tea' } });
    assert.equal(attrs(fieldOf(v, 'name').input), 'type="text" value="Tea" required maxlength="100" readonly');
    assert.equal(attrs(fieldOf(v, 'description').textarea), 'maxlength="2000" readonly');
    assert.deepEqual([fieldOf(v, 'name').readOnly, fieldOf(v, 'name').updatable, fieldOf(v, 'name').readable], [true, false, true]);
  });
});

describe('form view: textarea, toggle, selects', () => {
  it('textarea: attributes and the text', () => {
    const v = formView(task(), { id: 'f', invalid: false, ready: false, values: VALUES });
    assert.equal(attrs(fieldOf(v, 'notes').textarea), 'maxlength="500"');
    assert.equal(fieldOf(v, 'notes').textarea!.value, 'Some *notes*');
    assert.equal(attrs(fieldOf(v, 'body').textarea), ''); // html is bounded in bytes once cleaned: no maxlength
    const product = parseOk('📦.Product:\n  - description: {placeholder: Say more}\n');
    const rich = { value: '# Title', html: () => '<h1>Title</h1>' }; // a rich-text value of a record
    const p = formView(product, { id: 'f', invalid: false, ready: false, values: { description: rich } });
    assert.equal(attrs(fieldOf(p, 'description').textarea), 'placeholder="Say more" maxlength="2000"');
    assert.equal(fieldOf(p, 'description').textarea!.value, '# Title');
  });

  it('toggle: on and off, one selected', () => {
    const toggle = (done: unknown) => fieldOf(formView(task(), { id: 'f', invalid: false, ready: false, values: { done } }), 'done');
    assert.deepEqual(toggle(true).toggle, { on: { value: 'true', label: 'Yes', selected: true }, off: { value: 'false', label: 'No', selected: false } });
    for (const on of [true, 'true', 'on', '1']) assert.equal(toggle(on).toggle!.on.selected, true, String(on));
    for (const off of [false, null, undefined, 'false', '']) {
      assert.deepEqual([toggle(off).toggle!.on.selected, toggle(off).toggle!.off.selected, toggle(off).value], [false, true, false], String(off));
    }
    assert.equal(toggle(true).required, false);
  });

  it('selectOne: options with labels, the value selected', () => {
    const v = fieldOf(formView(task(), { id: 'f', invalid: false, ready: false, values: VALUES }), 'status');
    assert.deepEqual(v.selectOne!.options, [
      { value: 'active', label: 'Active', selected: false },
      { value: 'in-progress', label: 'In progress', selected: true },
    ]);
    assert.equal(attrs(v.selectOne), 'required');
    assert.equal(v.value, 'in-progress');
    const none = fieldOf(formView(task(), { id: 'f', invalid: false, ready: false }), 'status');
    assert.ok(none.selectOne!.options.every((o) => !o.selected));
  });

  it('selectMany: every value selected', () => {
    const v = fieldOf(formView(task(), { id: 'f', invalid: false, ready: false, values: VALUES }), 'sizes');
    assert.deepEqual(v.selectMany!.options.map((o) => `${o.value}:${o.label}:${o.selected}`), ['s:S:true', 'm:M:false', 'l:L:true']);
    assert.equal(attrs(v.selectMany), 'multiple');
    assert.deepEqual(v.value, ['s', 'l']);
  });
});

describe('form view: state and messages', () => {
  it('a refused submission: invalid, each message on its field, the text shown again', () => {
    const v = formView(task(), {
      id: 'f2',
      invalid: true,
      ready: false,
      values: { title: 'x', count: 'many' },
      messages: [
        { type: 'error', field: 'Task_count', value: 'Count must be a whole number without a decimal point, such as 42' },
        { type: 'error', field: 'Other_x', value: 'ignored' },
      ],
    });
    assert.equal(v.invalid, true);
    const count = fieldOf(v, 'count');
    assert.deepEqual([count.invalid, count.message], [true, { type: 'error', value: 'Count must be a whole number without a decimal point, such as 42' }]);
    assert.equal(attrs(count.input), 'type="number" value="many" max="50" min="-5"');
    assert.deepEqual([fieldOf(v, 'title').invalid, fieldOf(v, 'title').message], [false, null]);
  });

  it('groups: one view per group, sharing the id', () => {
    const form = parseOk('OneForm: {📦.One: [fieldOne]}\nTwoForm: {📦.Two: [fieldTwo]}\n', 'SetupForm');
    const v = formView(form, {
      id: 'g',
      invalid: true,
      ready: false,
      values: { OneForm: { fieldOne: 'a' } },
      messages: [{ type: 'error', field: 'Two_fieldTwo', value: 'Field Two must be at least 0' }],
    });
    assert.deepEqual(Object.keys(v), ['id', 'invalid', 'ready', 'OneForm', 'TwoForm']);
    const one = v.OneForm as FormViewValue;
    const two = v.TwoForm as FormViewValue;
    assert.deepEqual([one.id, one.invalid, fieldOf(one, 'fieldOne').value], ['g', true, 'a']);
    assert.equal(fieldOf(two, 'fieldTwo').message!.value, 'Field Two must be at least 0');
  });

  it('values are read as own properties only (a field named constructor)', () => {
    const person = defaultForm(schema().models.get('Person')!);
    const v = formView(person, { id: 'f', invalid: false, ready: false, values: {} });
    assert.equal(fieldOf(v, 'constructor').value, null);
    assert.equal(attrs(fieldOf(v, 'constructor').input), 'type="text" maxlength="100"');
  });
});

/** Parses `<input …>` with the attribute text as a browser does; returns its elements' names and attributes. */
function parsed(html: string): Array<{ tag: string; attrs: Record<string, string> }> {
  const out: Array<{ tag: string; attrs: Record<string, string> }> = [];
  const walk = (node: { nodeName: string; attrs?: Array<{ name: string; value: string }>; childNodes?: unknown[] }): void => {
    if (node.attrs) out.push({ tag: node.nodeName, attrs: Object.fromEntries(node.attrs.map((a) => [a.name, a.value])) });
    for (const child of node.childNodes ?? []) walk(child as typeof node);
  };
  walk(parseFragment(html) as unknown as Parameters<typeof walk>[0]);
  return out;
}

describe('form view: attribute text is web-safe', () => {
  const HOSTILE = [
    '"><script>alert(1)</script>',
    "' onmouseover='alert(1)",
    '" onfocus="alert(1)" autofocus="',
    '&quot;><img src=x onerror=alert(1)>',
    '</textarea><script>x</script>',
    '{{{x}}} & < > " \' `',
  ];

  it('values and placeholders never break out of their attribute', () => {
    const form = parseOk(`📦.Product:\n  - name: {placeholder: ${JSON.stringify(HOSTILE.join(' '))}, label: ${JSON.stringify(HOSTILE[0])}}\n  - description: {placeholder: ${JSON.stringify(HOSTILE[1])}}\n`);
    for (const hostile of HOSTILE) {
      const v = formView(form, { id: 'f', invalid: false, ready: false, values: { name: hostile, description: hostile } });
      const name = parsed(`<input name="x" ${attrs(fieldOf(v, 'name').input)}>`);
      assert.deepEqual(name, [{ tag: 'input', attrs: { name: 'x', type: 'text', value: hostile, required: '', placeholder: HOSTILE.join(' '), maxlength: '100' } }], hostile);
      const area = parsed(`<textarea ${attrs(fieldOf(v, 'description').textarea)}></textarea>`);
      assert.deepEqual(area, [{ tag: 'textarea', attrs: { placeholder: HOSTILE[1]!, maxlength: '2000' } }], hostile);
      assert.equal(fieldOf(v, 'name').label, HOSTILE[0]); // a plain text: views escape it with {{label}}
    }
  });

  it('is web-safe markup through SAFE_HTML, not a string', () => {
    const v = formView(task(), { id: 'f', invalid: false, ready: false, values: { title: '"<b>' } });
    const a = fieldOf(v, 'title').input!.attributes;
    assert.equal(typeof a, 'object');
    assert.equal(safeMarkup(a), 'type="text" value="&quot;&lt;b&gt;" required placeholder="What to do" maxlength="40" minlength="2"');
    assert.equal(JSON.stringify({ a }), JSON.stringify({ a: safeMarkup(a) }));
  });

  it('through a Laneway view: {{{ }}} prints the attributes, {{ }} and labels stay escaped', () => {
    const form = parseOk(`📦.Product:\n  - name: {label: ${JSON.stringify(HOSTILE[0])}, placeholder: ${JSON.stringify(HOSTILE[2])}}\n  - price\n`);
    const view = formView(form, {
      id: '"><x',
      invalid: true,
      ready: false,
      values: { name: HOSTILE[0], price: HOSTILE[1] },
      messages: [{ type: 'error', field: 'Product_price', value: 'Price must be a number, such as 9.99' }],
    });
    const source = page(
      "{{% import {form} from '📤' }}" +
        '<form action="/p?_form={{form.id}}" method="POST">' +
        '{{#form.name}}<label>{{label}}</label><input name="{{path}}" {{{input.attributes}}}>{{/form.name}}' +
        '{{#form.price}}<input name="{{path}}" {{{input.attributes}}}><p>{{message.value}}</p><i>{{input.attributes}}</i>{{/form.price}}' +
        '</form>',
    );
    const html = renderSync(source, { form: view }).html;
    const elements = parsed(html);
    assert.deepEqual(elements.map((e) => e.tag), ['form', 'label', 'input', 'input', 'p', 'i']);
    assert.deepEqual(elements[0]!.attrs, { action: '/p?_form="><x', method: 'POST' });
    assert.deepEqual(elements[2]!.attrs, { name: 'Product_name', type: 'text', value: HOSTILE[0]!, required: '', placeholder: HOSTILE[2]!, maxlength: '100' });
    assert.deepEqual(elements[3]!.attrs, { name: 'Product_price', type: 'number', value: HOSTILE[1]!, required: '', min: '0', step: 'any' });
    assert.ok(!html.includes('<script>'));
    assert.match(html, /<label>&quot;&gt;&lt;script&gt;alert\(1\)&lt;\/script&gt;<\/label>/);
    assert.match(html, /<i>type=&quot;number&quot;/); // {{ }} escapes the attribute text
  });
});
