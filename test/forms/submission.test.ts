/**
 * Reading a submission: each field of the form from its `<Model>_<field>` input, converted and
 * checked with the models' value checks; only the form's own fields; messages that start with
 * the field's label and never repeat what was submitted.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { defaultForm, readSubmission, type FormMessage } from '../../src/forms/index.js';
import { body, parseOk, schema } from './helpers.js';

const task = () => defaultForm(schema().models.get('Task')!);
/** Reads one field of Task.Form: its value, or its message. */
function one(field: string, pairs: Array<[string, string]>): unknown {
  const { values, messages } = readSubmission(task(), body(pairs));
  const message = messages.find((m) => m.field === `Task_${field}`);
  return message === undefined ? values[field] : { message: message.value };
}
const text = (field: string, value: string) => one(field, [[`Task_${field}`, value]]);

describe('submission: values converted per type', () => {
  it('string: text within its bounds', () => {
    assert.equal(text('title', 'Buy milk'), 'Buy milk');
    assert.deepEqual(text('title', 'x'.repeat(41)), { message: 'Title must be at most 40 characters long (it has 41)' });
    assert.deepEqual(text('title', 'x'), { message: 'Title must be at least 2 characters long (it has 1)' });
    assert.deepEqual(text('title', ''), { message: 'Title is required' });
    assert.deepEqual(one('title', []), { message: 'Title is required' });
  });

  it('integer: whole numbers within min and max', () => {
    assert.equal(text('count', '42'), 42);
    assert.equal(text('count', ' -3 '), -3);
    assert.deepEqual(text('count', '4.2'), { message: 'Count must be a whole number without a decimal point, such as 42' });
    assert.deepEqual(text('count', '-6'), { message: 'Count must be at least -5' });
    assert.deepEqual(text('count', '51'), { message: 'Count must be at most 50' });
    assert.equal(text('count', ''), null); // optional
  });

  it('double: rounded to 2 places, half to even, within bounds', () => {
    assert.equal(text('price', '2.675'), 2.68);
    assert.equal(text('price', '9.99'), 9.99);
    assert.deepEqual(text('price', '1e3'), { message: 'Price must be at most 999.99' });
    assert.deepEqual(text('price', '-1'), { message: 'Price must be at least 0' });
    assert.deepEqual(text('price', 'cheap'), { message: 'Price must be a number, such as 9.99' });
  });

  it('date and timestamp (a time without a zone is UTC)', () => {
    assert.equal(text('day', '2024-05-06'), '2024-05-06');
    assert.equal(text('day', '2024-05'), '2024-05-01');
    assert.deepEqual(text('day', '2024-02-30'), { message: 'Day must be a real date, such as 2024-05-06' });
    assert.equal(text('due', '2024-05-06T10:30'), '2024-05-06T10:30:00.000Z');
    assert.deepEqual(text('due', 'tomorrow'), { message: 'Due must be an ISO-8601 time, such as 2024-05-06T14:30:00Z (or a part of one, such as 2024-05-06)' });
  });

  it('options: one of the values; a list of options: each of the values, at most its size', () => {
    assert.equal(text('status', 'in-progress'), 'in-progress');
    assert.deepEqual(text('status', 'bogus'), { message: 'Status must be one of active, in-progress' });
    assert.deepEqual(text('status', ''), { message: 'Status is required' });
    assert.deepEqual(one('sizes', [['Task_sizes', 's'], ['Task_sizes', ''], ['Task_sizes', 'l'], ['Task_sizes', 's']]), ['s', 'l']);
    assert.deepEqual(one('sizes', []), []);
    assert.deepEqual(one('sizes', [['Task_sizes', 'x']]), { message: 'Sizes must be one of s, m, l' });
    assert.deepEqual(one('sizes', [['Task_sizes', 's'], ['Task_sizes', 'm'], ['Task_sizes', 'l'], ['Task_sizes', 'x']]), { message: 'Sizes holds at most 3 entries (it has 4)' });
  });

  it('a required list of options needs one entry', () => {
    const form = parseOk('📦.One: [colors]\n', 'Colors');
    assert.deepEqual(readSubmission(form, body([])).messages, [{ type: 'error', field: 'One_colors', value: 'Colors needs at least one entry' }]);
    assert.deepEqual(readSubmission(form, body([['One_colors', '']])).messages, [{ type: 'error', field: 'One_colors', value: 'Colors needs at least one entry' }]);
    assert.deepEqual(readSubmission(form, body([['One_colors', 'blue']])), { values: { colors: ['blue'] }, messages: [] });
  });

  it('country, geo, uid', () => {
    assert.equal(text('country', 'fra'), 'FRA');
    assert.deepEqual(text('country', 'France'), { message: 'Country must be a three-letter ISO 3166-1 country code, such as FRA or USA' });
    assert.deepEqual(text('place', '48.85, 2.35'), { latitude: 48.85, longitude: 2.35 });
    assert.deepEqual(text('place', '91,0'), { message: 'Place must have a latitude from -90 to 90' });
    assert.equal(text('slug', 'my-post'), 'my-post');
    assert.deepEqual(text('slug', 'My Post'), {
      message: 'Slug must be 2 to 100 lowercase letters, digits and hyphens, not starting or ending with a hyphen, such as "my-first-post"',
    });
  });

  it('markdown keeps the text with line breaks as LF; html is cleaned to the allow-list', () => {
    assert.equal(text('notes', 'a\r\nb\rc'), 'a\nb\nc');
    assert.deepEqual(text('notes', 'x'.repeat(501)), { message: 'Notes must be at most 500 characters of Markdown (it has 501)' });
    assert.equal(text('body', '<p onclick="x()">hi</p><script>bad()</script>'), '<p>hi</p>');
  });
});

describe('submission: toggles (checkbox semantics)', () => {
  it('absent is false', () => assert.equal(one('done', []), false));
  it('a ticked checkbox without a value ("on") is true', () => assert.equal(text('done', 'on'), true));
  it('"true" and "1" are true; "false", "0" and "" are false', () => {
    for (const t of ['true', '1', 'TRUE']) assert.equal(text('done', t), true, t);
    for (const f of ['false', '0', '']) assert.equal(text('done', f), false, f);
  });
  it('a hidden "false" before the checkbox: the ticked value wins', () => {
    assert.equal(one('done', [['Task_done', 'false'], ['Task_done', 'true']]), true);
    assert.equal(one('done', [['Task_done', 'false']]), false);
  });
  it('anything else is refused', () => assert.deepEqual(text('done', 'maybe'), { message: 'Done must be true or false' }));
});

describe('submission: what is read', () => {
  it('only the form fields: other names in the body are ignored', () => {
    const { values, messages } = readSubmission(
      task(),
      body({
        Task_title: 'Hello',
        Task_status: 'active',
        Task_id: 'tsk_evil',
        Task_created: '2000-01-01',
        Task_secret: 'set by visitor',
        Task_owner: 'prs_x',
        Task_tags: 'a',
        Task_meta: 'x',
        Task_icon: '<svg/>',
        title: 'bare',
        Other_title: 'x',
        _form: 'abc',
        __proto__: 'x',
        constructor: 'x',
      }),
    );
    assert.deepEqual(messages, []);
    assert.deepEqual(Object.keys(values), ['title', 'done', 'count', 'price', 'due', 'day', 'status', 'sizes', 'country', 'place', 'slug', 'notes', 'body']);
    assert.equal(values.title, 'Hello');
    assert.equal(Object.getPrototypeOf(values), Object.prototype);
  });

  it('a partial form reads its own fields only, and never a read-only one', () => {
    const form = parseOk('📦.Product:\n  - name: {label: Product Name}\n  - price: {readOnly: true}\n');
    const r = readSubmission(form, body({ Product_name: 'Tea', Product_price: '0.5', Product_description: 'x' }));
    assert.deepEqual(r, { values: { name: 'Tea' }, messages: [] });
  });

  it('messages start with the form label and carry the path', () => {
    const form = parseOk('📦.Product:\n  - name: {label: Product Name}\n  - price\n');
    assert.deepEqual(readSubmission(form, body({ Product_price: '1.5' })), {
      values: { name: '', price: 1.5 },
      messages: [{ type: 'error', field: 'Product_name', value: 'Product Name is required' }],
    });
  });

  it('an invalid field keeps the text as submitted in values, to show it again', () => {
    const r = readSubmission(task(), body({ Task_title: 'Hi', Task_status: 'active', Task_count: 'many' }));
    assert.equal(r.values.count, 'many');
    assert.deepEqual(r.messages.map((m) => m.field), ['Task_count']);
  });

  it('groups: one record of values per group; messages of every group', () => {
    const form = parseOk('OneForm: {📦.One: [fieldOne]}\nTwoForm: {📦.Two: [fieldTwo]}\n', 'SetupForm');
    assert.deepEqual(readSubmission(form, body({ One_fieldOne: 'x', Two_fieldTwo: 'y' })), {
      values: { OneForm: { fieldOne: 'x' }, TwoForm: { fieldTwo: 'y' } },
      messages: [{ type: 'error', field: 'Two_fieldTwo', value: 'Field Two must be a whole number without a decimal point, such as 42' }],
    });
    assert.deepEqual(readSubmission(form.groups.get('TwoForm')!, body({ One_fieldOne: 'x', Two_fieldTwo: '7' })), { values: { fieldTwo: 7 }, messages: [] });
  });

  it('steps: a step reads its own fields (those of the steps it adds to included)', () => {
    const form = parseOk('Begin: {📦.Product: [name]}\n+End: [price]\nReview: [description]\n', 'ProductSteps');
    const [begin, end, review] = form.steps;
    assert.deepEqual(readSubmission(begin!, body({ Product_name: 'Tea' })), { values: { name: 'Tea' }, messages: [] });
    assert.deepEqual(readSubmission(end!, body({ Product_name: 'Tea', Product_price: '2' })), { values: { name: 'Tea', price: 2 }, messages: [] });
    assert.deepEqual(readSubmission(review!, body({ Product_name: 'Tea' })), { values: { description: null }, messages: [] });
  });
});

describe('submission: messages never echo the submitted value', () => {
  const hostile = ['"><script>alert(1)</script>', "'><img src=x onerror=alert(1)>", '{{7*7}}', '\u202Eevil', 'x'.repeat(600) + '<b>'];
  for (const value of hostile) {
    it(`for ${JSON.stringify(value.slice(0, 30))} in every field`, () => {
      const form = task();
      const pairs = form.fields.map((f) => [f.path, value] as [string, string]);
      const { messages } = readSubmission(form, body(pairs));
      assert.ok(messages.length >= 8, `expected refusals, got ${messages.length}`);
      for (const m of messages as FormMessage[]) {
        assert.ok(!m.value.includes(value), `${m.field}: ${m.value}`);
        assert.ok(!/[<>]/.test(m.value), `${m.field}: ${m.value}`);
        assert.ok(!m.value.includes('{{') && !m.value.includes('\u202E'), `${m.field}: ${m.value}`);
      }
    });
  }
});
