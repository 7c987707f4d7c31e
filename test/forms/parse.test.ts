/**
 * Form types: the default form of a model (`M.Form`) and form files (`📤/⏳Name.yaml`) in every
 * shape — one model, per-field options, settings, groups, steps — and every mistake at its
 * line and column.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { defaultForm, type FormType } from '../../src/forms/index.js';
import { parse, parseOk, schema } from './helpers.js';

const names = (form: FormType): string[] => form.fields.map((f) => f.name);
const summary = (form: FormType) =>
  form.fields.map((f) => [f.path, f.control, f.inputType ?? '-', f.label, f.required, f.readOnly].join(' '));

describe('the default form of a model (M.Form)', () => {
  const task = defaultForm(schema().models.get('Task')!);

  it('holds every field a visitor may fill, in the order of the definition', () => {
    assert.equal(task.name, 'Task');
    assert.equal(task.kind, 'fields');
    assert.equal(task.model, 'Task');
    assert.equal(task.requirePreviousState, true);
    assert.equal(task.file, undefined);
    assert.equal(task.groups.size, 0);
    assert.deepEqual(task.steps, []);
    assert.deepEqual(names(task), ['title', 'done', 'count', 'price', 'due', 'day', 'status', 'sizes', 'country', 'place', 'slug', 'notes', 'body']);
  });

  it('leaves out built-in, protected, link, list, map, embedded, svg-icon and hierarchy fields', () => {
    for (const absent of ['id', 'created', 'modified', 'secret', 'owner', 'tags', 'meta', 'contact', 'icon']) assert.ok(!names(task).includes(absent), absent);
    assert.deepEqual(names(defaultForm(schema().models.get('Person')!)), ['name', 'constructor']);
  });

  it('gives each type its control, and toggles are never required', () => {
    assert.deepEqual(summary(task), [
      'Task_title input text Title true false',
      'Task_done toggle - Done false false',
      'Task_count input number Count false false',
      'Task_price input number Price false false',
      'Task_due input datetime-local Due false false',
      'Task_day input date Day false false',
      'Task_status selectOne - Status true false',
      'Task_sizes selectMany - Sizes false false',
      'Task_country input text Country false false',
      'Task_place input text Place false false',
      'Task_slug input text Slug false false',
      'Task_notes textarea - Notes false false',
      'Task_body textarea - Body false false',
    ]);
    assert.equal(task.fields[0]!.placeholder, 'What to do');
    assert.equal(task.fields[0]!.about, 'A short title');
  });

  it('is frozen', () => {
    assert.ok(Object.isFrozen(task));
    assert.ok(Object.isFrozen(task.fields));
    assert.ok(Object.isFrozen(task.fields[0]));
  });
});

describe('form files: shapes', () => {
  it('one model and some of its fields', () => {
    const form = parseOk('📦.Product: [name, price]\n');
    assert.equal(form.name, 'NewProduct');
    assert.equal(form.kind, 'fields');
    assert.equal(form.model, 'Product');
    assert.equal(form.file, '/📤/⏳NewProduct.yaml');
    assert.equal(form.requirePreviousState, true);
    assert.deepEqual(summary(form), ['Product_name input text Name true false', 'Product_price input number Price true false']);
    assert.deepEqual(form.fields[1]!.at, { file: '/📤/⏳NewProduct.yaml', line: 1, column: 19 });
  });

  it('per-field options: label, placeholder, about, readOnly', () => {
    const form = parseOk(
      '📦.Product:\n  - name: {label: Product Name, placeholder: A short name, about: Shown in lists}\n  - price:\n      readOnly: true\n  - description:\n      label: {en: About it, de: Darüber}\n',
    );
    assert.deepEqual(summary(form), [
      'Product_name input text Product Name true false',
      'Product_price input number Price true true',
      'Product_description textarea - About it false false',
    ]);
    assert.equal(form.fields[0]!.placeholder, 'A short name');
    assert.equal(form.fields[0]!.about, 'Shown in lists');
    assert.equal(form.fields[0]!.definition.label, 'Name'); // the model's definition is left as it is
  });

  it('fields as a map of names to options', () => {
    const form = parseOk('📦.Product:\n  name: {label: Called}\n  price:\n');
    assert.deepEqual(summary(form), ['Product_name input text Called true false', 'Product_price input number Price true false']);
  });

  it('several fields with options in one list entry', () => {
    const form = parseOk('📦.Product:\n  - name: {label: A}\n    price: {label: B}\n  - description\n');
    assert.deepEqual(names(form), ['name', 'price', 'description']);
  });

  it('🎛: requirePreviousState: false (also written with VS16)', () => {
    assert.equal(parseOk('🎛: {requirePreviousState: false}\n📦.Product: [name]\n').requirePreviousState, false);
    assert.equal(parseOk('📦.Product: [name]\n🎛️:\n  requirePreviousState: false\n').requirePreviousState, false);
    assert.equal(parseOk('🎛: {requirePreviousState: true}\n📦.Product: [name]\n').requirePreviousState, true);
  });

  it('groups: one sub-form per name, each of its own model', () => {
    const form = parseOk('🎛: {requirePreviousState: false}\nOneForm: {📦.One: [fieldOne]}\nTwoForm:\n  📦.Two:\n    - fieldTwo: {label: Second}\n', 'SetupForm');
    assert.equal(form.kind, 'groups');
    assert.equal(form.name, 'SetupForm');
    assert.equal(form.model, null);
    assert.deepEqual(form.fields, []);
    assert.deepEqual([...form.groups.keys()], ['OneForm', 'TwoForm']);
    const one = form.groups.get('OneForm')!;
    const two = form.groups.get('TwoForm')!;
    assert.deepEqual([one.name, one.kind, one.model, one.parent, one.file, one.requirePreviousState], ['OneForm', 'fields', 'One', 'SetupForm', '/📤/⏳SetupForm.yaml', false]);
    assert.deepEqual(summary(one), ['One_fieldOne input text Field One true false']);
    assert.deepEqual(summary(two), ['Two_fieldTwo input number Second false false']);
  });

  it('steps: + adds the fields of the step before; a step without + has only its own', () => {
    const form = parseOk('Begin: {📦.Product: [name]}\n+End: [price]\nReview: [description]\n+Final: {📦.Product: [name]}\n', 'ProductSteps');
    assert.equal(form.kind, 'steps');
    assert.equal(form.model, 'Product');
    assert.deepEqual(
      form.steps.map((s) => `${s.name}: ${names(s).join(', ')}`),
      ['Begin: name', 'End: name, price', 'Review: description', 'Final: description, name'],
    );
    for (const step of form.steps) assert.deepEqual([step.kind, step.model, step.parent], ['fields', 'Product', 'ProductSteps']);
    assert.deepEqual(names(form), ['name', 'price', 'description']);
    assert.equal(form.groups.size, 0);
  });

  it('a steps file is recognised by a bare field list even without +', () => {
    const form = parseOk('Begin: {📦.Product: [name]}\nEnd: [price]\n', 'ProductSteps');
    assert.equal(form.kind, 'steps');
    assert.deepEqual(form.steps.map((s) => names(s).join(',')), ['name', 'price']);
  });
});

/** Problems of a form file as `line:column CODE message`. */
const problems = (source: string, name?: string, file?: string) => parse(source, name, file).problems;

describe('form files: mistakes, at their line and column', () => {
  it('a file name that is not ⏳<PascalCase>.yaml', () => {
    const ok = '📦.Product: [name]\n';
    assert.deepEqual(problems(ok, '', '/📤/⏳newProduct.yaml'), ['1:1 LW_FORM_FILE_NAME ⏳newProduct.yaml is not a form definition: name it ⏳<Name>.yaml with a PascalCase name, such as ⏳NewProduct.yaml']);
    assert.deepEqual(problems(ok, '', '/📤/⏳new product.yaml'), ['1:1 LW_FORM_FILE_NAME ⏳new product.yaml is not a form definition: name it ⏳<Name>.yaml with a PascalCase name, such as ⏳NewProduct.yaml']);
    assert.equal(parse(ok, '', '/📤/NewProduct.yaml').form, undefined);
    assert.equal(parseOk(ok).name, 'NewProduct');
    assert.equal(parse(ok, '', '/a/📤/⏳NewProduct\uFE0F.yaml').form?.name, 'NewProduct');
  });

  it('YAML that does not parse', () => {
    assert.deepEqual(problems('📦.Product: [name, price\n'), [
      '2:1 LW_APP_YAML invalid YAML: Flow sequence in block collection must be sufficiently indented and end with a ] at line 2, column 1:',
    ]);
    assert.deepEqual(problems('📦.Product: [name]\n📦.Product: [price]\n'), ['2:1 LW_APP_YAML invalid YAML: Map keys must be unique at line 2, column 1:']);
    assert.equal(parse('📦.Product: [name, price\n').form, undefined);
  });

  it('a file that names no model', () => {
    const expected = '1:1 LW_FORM_DEFINITION a form names a model and the fields a visitor fills: `📦.Product: [name, price]`, groups such as `OneForm: {📦.One: [fieldOne]}`, or steps such as `Begin: {📦.Product: [name]}` then `+End: [price]`';
    assert.deepEqual(problems(''), [expected]);
    assert.deepEqual(problems('# nothing\n'), [expected]);
    assert.deepEqual(problems('- name\n'), [expected]);
    assert.equal(parse('').form, undefined);
  });

  it('an unknown model, with a suggestion or the list of models', () => {
    assert.deepEqual(problems('📦.Prodcut: [name]\n'), ['1:1 LW_FORM_MODEL there is no model Prodcut; did you mean 📦.Product?']);
    assert.deepEqual(problems('# orders\n📦.Order: [name]\n'), ['2:1 LW_FORM_MODEL there is no model Order; the models are One, Person, Product, Task, Two']);
    assert.deepEqual(problems('📦.Contact: [email]\n'), ['1:1 LW_FORM_MODEL Contact is an embedded type, which has no form of its own; forms fill the models of /📦/ (🌐, 📄, 👤)']);
  });

  it('an unknown field, with a suggestion or the fields a form can fill', () => {
    assert.deepEqual(problems('📦.Task: [titel, dne, xyzzy]\n', 'NewTask'), [
      '1:10 LW_FORM_FIELD Task has no field "titel"; did you mean "title"?',
      '1:17 LW_FORM_FIELD Task has no field "dne"; did you mean "done"?',
      '1:22 LW_FORM_FIELD Task has no field "xyzzy"; its fields are title, done, count, price, due, day, status, sizes, country, place, slug, notes, body',
    ]);
    assert.deepEqual(problems('📦.Product:\n  - name\n  - desc\n'), ['3:5 LW_FORM_FIELD Product has no field "desc"; did you mean "description"?']);
  });

  it('fields a visitor may not fill: protected, built-in, and types forms do not fill', () => {
    assert.deepEqual(problems('📦.Task: [secret, created, owner, tags, meta, contact, icon]\n', 'NewTask'), [
      '1:10 LW_FORM_FIELD_NOT_ALLOWED Task.secret cannot be in a form: it is protected (protected fields are never shown to visitors)',
      '1:18 LW_FORM_FIELD_NOT_ALLOWED Task.created cannot be in a form: Laneway sets it',
      '1:27 LW_FORM_FIELD_NOT_ALLOWED Task.owner cannot be in a form: it links to a Person, which forms do not choose; set it from a script',
      '1:34 LW_FORM_FIELD_NOT_ALLOWED Task.tags cannot be in a form: it is a list of string values, which forms do not fill; set it from a script',
      '1:40 LW_FORM_FIELD_NOT_ALLOWED Task.meta cannot be in a form: it is a map field, which forms do not fill; set it from a script',
      '1:46 LW_FORM_FIELD_NOT_ALLOWED Task.contact cannot be in a form: it holds an embedded value, which forms do not fill; set it from a script',
      '1:55 LW_FORM_FIELD_NOT_ALLOWED Task.icon cannot be in a form: it is a svg-icon field, which forms do not fill; set it from a script',
    ]);
    assert.deepEqual(problems('📦.Person: [hierarchy, ready, id]\n', 'NewPerson'), [
      '1:12 LW_FORM_FIELD_NOT_ALLOWED Person.hierarchy cannot be in a form: it is a hierarchy field, which forms do not fill; set it from a script',
      '1:23 LW_FORM_FIELD_NOT_ALLOWED Person.ready cannot be in a form: the form\'s view has a property "ready" of its own; rename the field',
      '1:30 LW_FORM_FIELD_NOT_ALLOWED Person.id cannot be in a form: Laneway sets it',
    ]);
  });

  it('a field named twice, in one list or in a + step and the step before', () => {
    assert.deepEqual(problems('📦.Product:\n  - name\n  - price\n  - name: {label: Again}\n'), ['4:5 LW_FORM_DUPLICATE name is already in this form: name each field once']);
    assert.deepEqual(problems('Begin: {📦.Product: [name]}\n+End: [name, price]\n', 'Steps'), [
      '2:8 LW_FORM_DUPLICATE name is already in the step before, which this + step adds to: remove it here',
    ]);
  });

  it('per-field options that are unknown or of the wrong kind', () => {
    assert.deepEqual(problems('📦.Product:\n  - name: {lable: X}\n  - price: {label: [a], placeholder: {a: 1}, readOnly: yes}\n  - description: plain\n'), [
      '2:12 LW_FORM_OPTION "lable" is not a form field option (did you mean label?); the options are label, placeholder, about, readOnly',
      '3:20 LW_FORM_OPTION label: takes a text, or a map of languages to texts such as `{en: Due, de: Fällig}`',
      '3:38 LW_FORM_OPTION placeholder: takes a text',
      '3:56 LW_FORM_OPTION readOnly: takes true or false',
      '4:18 LW_FORM_OPTION the options of description are a map, such as `- description: {label: Description}`',
    ]);
  });

  it('settings that are unknown or of the wrong kind', () => {
    assert.deepEqual(problems('🎛: {requirePreviousState: no, requirePrevious: false, x: 1}\n📦.Product: [name]\n'), [
      '1:27 LW_FORM_SETTINGS requirePreviousState: takes true or false',
      '1:31 LW_FORM_SETTINGS "requirePrevious" is not a form setting (did you mean requirePreviousState?); the 🎛: block of a form takes `requirePreviousState: false`',
      '1:55 LW_FORM_SETTINGS "x" is not a form setting; the 🎛: block of a form takes `requirePreviousState: false`',
    ]);
    assert.deepEqual(problems('🎛: false\n📦.Product: [name]\n'), ['1:4 LW_FORM_SETTINGS the 🎛: block of a form is a map, such as `🎛: {requirePreviousState: false}`']);
  });

  it('no field list, or entries that are not field names', () => {
    assert.deepEqual(problems('📦.Product: []\n'), ['1:12 LW_FORM_DEFINITION list the fields a visitor fills, such as `[name]`']);
    assert.deepEqual(problems('📦.Product:\n'), ['1:1 LW_FORM_DEFINITION list the fields a visitor fills, such as `[name]`']);
    assert.deepEqual(problems('📦.Product: name\n'), ['1:12 LW_FORM_DEFINITION list the fields a visitor fills, such as `[name]`']);
    assert.deepEqual(problems('📦.Product: [[name], 3]\n'), [
      '1:13 LW_FORM_DEFINITION a field entry is a field name, or a name with options such as `- title: {label: Title}`',
      '1:21 LW_FORM_DEFINITION a field entry is a field name, or a name with options such as `- title: {label: Title}`',
    ]);
  });

  it('two models, or a model beside groups', () => {
    assert.deepEqual(problems('📦.Product: [name]\n📦.One: [fieldOne]\n'), [
      '2:1 LW_FORM_DEFINITION a form fills one model; to fill several, make each a group, such as `OneForm: {📦.One: [fieldOne]}`',
    ]);
    assert.deepEqual(problems('📦.Product: [name]\nOneForm: {📦.One: [fieldOne]}\n'), [
      '2:1 LW_FORM_DEFINITION a form either fills one model (📦.Model: [fields]) or is made of groups or steps (Name: {📦.Model: [fields]}), not both: move 📦.Product into a group or step, or remove "OneForm"',
    ]);
  });

  it('a model written without 📦.', () => {
    assert.deepEqual(problems('Product: [name]\n'), [
      '1:10 LW_FORM_DEFINITION to fill the model Product, write 📦.Product: […]; a group names its model and fields, such as `Product: {📦.Product: [name]}`',
    ]);
  });

  it('groups: names, and a group that is not one model with its fields', () => {
    assert.deepEqual(problems('oneForm: {📦.One: [fieldOne]}\nTwo_Form: {📦.Two: [fieldTwo]}\n', 'SetupForm'), [
      '1:1 LW_FORM_NAME "oneForm" is not a group or step name: use PascalCase letters and digits, such as OneForm',
      '2:1 LW_FORM_NAME "Two_Form" is not a group or step name: use PascalCase letters and digits, such as OneForm',
    ]);
    assert.deepEqual(problems('OneForm: {fieldOne: x}\nTwoForm: {📦.Two: [fieldTwo], 📦.One: [fieldOne]}\nThree:\n', 'SetupForm'), [
      '1:11 LW_FORM_DEFINITION a group holds one model and its fields, such as `OneForm: {📦.Product: [name]}`; "fieldOne" is not one',
      '2:30 LW_FORM_DEFINITION a group fills one model; make another group for 📦.One',
      '3:1 LW_FORM_DEFINITION a group names its model and fields, such as `Three: {📦.Product: [name]}`',
    ]);
  });

  it('steps: the first step, another model, a name twice', () => {
    assert.deepEqual(problems('+Begin: {📦.Product: [name]}\n+End: [price]\n', 'Steps'), [
      '1:1 LW_FORM_STEP the first step has no step before it to add to: write Begin: {📦.Model: [fields]} without +',
    ]);
    assert.deepEqual(problems('Begin: [name]\n+End: [price]\n', 'Steps'), ['1:8 LW_FORM_STEP the first step names the model the steps fill, such as `Begin: {📦.Product: [name]}`']);
    assert.equal(parse('Begin: [name]\n+End: [price]\n', 'Steps').form, undefined);
    assert.deepEqual(problems('Begin: {📦.Product: [name]}\n+End: {📦.One: [fieldOne]}\nEnd: [price]\n', 'Steps'), [
      '2:8 LW_FORM_STEP the steps of a form fill one model, Product; to fill One too, make separate forms or groups',
      '3:1 LW_FORM_DUPLICATE End is already a step of this form: give each a name of its own',
    ]);
  });

  it('reports every problem of a file and keeps what is valid', () => {
    const { form, problems: found } = parse('📦.Task:\n  - titel\n  - done\n  - secret\n  - status: {lable: S}\n', 'NewTask');
    assert.deepEqual(found.map((p) => p.split(' ').slice(0, 2).join(' ')), ['2:5 LW_FORM_FIELD', '4:5 LW_FORM_FIELD_NOT_ALLOWED', '5:14 LW_FORM_OPTION']);
    assert.deepEqual(form && names(form), ['done', 'status']);
  });
});
