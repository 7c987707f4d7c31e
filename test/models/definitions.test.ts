/** Model definitions under /📦/: valid shapes read into the schema; broken ones report code and position. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { labelFromName } from '../../src/models/index.js';
import { readModels } from './tree.js';

const TASK = `🎛:
  prefix: tsk_

title:
  type: string
  optional: true

hierarchy: hierarchy

status:
  type: options
  init: true
  values:
    - active
    - complete
`;

const POST = `🎛:
  prefix: pt_

title: string
`;

const EVERY_TYPE = `name: string
done: boolean
count:
  type: integer
  min: -5
  max: 50
  init: 1
price:
  type: double
  max: 999.99
due: timestamp
day:
  type: date
  init: true
kind:
  type: options
  values: {small: Small one, large: Large one}
country: country
extra: map
place: geo
icon: svg-icon
slug: uid
body:
  type: html
  max: 20000
  render: {autolink: blank, minimumHeaderLevel: 2, p: lead}
notes:
  type: markdown
  min: 10
owner?: Account
contact: Contact
tags[]: string
sizes[3]:
  type: options
  values: [s, m, l]
`;

interface ValidCase {
  name: string;
  files: Record<string, string>;
  check?: (schema: ReturnType<typeof readModels>['schema']) => void;
}

const VALID: ValidCase[] = [
  {
    name: 'a tasks-style model: prefix, optional title, hierarchy, options with init',
    files: { '/📦/🌐Task.yaml': TASK },
    check(schema) {
      const task = schema.models.get('Task')!;
      assert.equal(task.kind, 'universal');
      assert.equal(task.prefix, 'tsk_');
      assert.deepEqual(task.fields.map((f) => `${f.name}:${f.type}${f.optional ? '?' : ''}`), [
        'id:id', 'created:timestamp', 'modified:timestamp', 'title:string?', 'hierarchy:hierarchy', 'status:options',
      ]);
      const status = task.fields.find((f) => f.name === 'status')!;
      assert.equal(status.init, true);
      assert.deepEqual(status.values, [{ value: 'active', label: 'Active' }, { value: 'complete', label: 'Complete' }]);
      assert.equal(task.fields.find((f) => f.name === 'title')!.max, 100);
      assert.deepEqual(task.fields.find((f) => f.name === 'title')!.at, { file: '/📦/🌐Task.yaml', line: 4, column: 1 });
    },
  },
  {
    name: 'an images-style model without its image field: prefix and a short-form string',
    files: { '/📦/🌐Post.yaml': POST },
    check(schema) {
      assert.equal(schema.models.get('Post')!.prefix, 'pt_');
      assert.equal(schema.models.get('Post')!.fields.at(-1)!.name, 'title');
    },
  },
  {
    name: 'an image field (the images blueprint shape): public: kept',
    files: { '/📦/🌐Post.yaml': `${POST}\nimage:\n  type: image\n  public: true\n` },
    check(schema) {
      const image = schema.models.get('Post')!.fields.find((f) => f.name === 'image')!;
      assert.equal(image.type, 'image');
      assert.equal(image.public, true);
    },
  },
  {
    name: 'empty and comment-only files define models with built-ins only',
    files: { '/📦/👤Member.yaml': '', '/📦/📄Page.yaml': '# nothing yet\n' },
    check(schema) {
      assert.equal(schema.models.get('Member')!.kind, 'profile');
      assert.deepEqual(schema.models.get('Page')!.fields.map((f) => f.name), ['id', 'created', 'modified']);
    },
  },
  {
    name: 'every available type, with options, links and a global embedded type',
    files: { '/📦/🌐Item.yaml': EVERY_TYPE, '/📦/🌐Account.yaml': 'title: string\n', '/📦/📎Contact.yaml': 'email: string\nphone?: string\n' },
    check(schema) {
      const item = schema.models.get('Item')!;
      const byName = new Map(item.fields.map((f) => [f.name, f]));
      assert.equal(byName.get('count')!.min, -5);
      assert.equal(byName.get('count')!.init, 1);
      assert.equal(byName.get('price')!.min, 0, 'double min defaults to 0');
      assert.equal(byName.get('body')!.max, 20000);
      assert.deepEqual(byName.get('body')!.render, { autolink: 'blank', minimumHeaderLevel: 2, p: 'lead' });
      assert.equal(byName.get('notes')!.max, 2000);
      assert.deepEqual(byName.get('kind')!.values, [{ value: 'small', label: 'Small one' }, { value: 'large', label: 'Large one' }]);
      assert.equal(byName.get('owner')!.type, 'link');
      assert.equal(byName.get('owner')!.model, 'Account');
      assert.equal(byName.get('owner')!.optional, true);
      assert.equal(byName.get('contact')!.type, 'embedded');
      assert.equal(byName.get('contact')!.embedded, 'Contact');
      assert.equal(byName.get('tags')!.list, 20);
      assert.equal(byName.get('sizes')!.list, 3);
      assert.equal(schema.embedded.get('Contact')!.fields.length, 2, 'embedded types have no built-ins');
    },
  },
  {
    name: 'a container with a contained model ordered by title, and a contained profile',
    files: {
      '/📦/🌐List.yaml': 'title: string\n',
      '/📦/List/🌐Note.yaml': 'title:\n  type: string\n  order: true\n',
      '/📦/List/👤ListUser.yaml': '',
    },
    check(schema) {
      assert.equal(schema.models.get('Note')!.container, 'List');
      assert.equal(schema.models.get('Note')!.fields.at(-1)!.order, true);
      assert.equal(schema.models.get('ListUser')!.container, 'List');
    },
  },
  {
    name: 'inline embedded types, also as lists, nested',
    files: {
      '/📦/🌐Order.yaml': 'contact:\n  type:\n    email: string\n    address:\n      type:\n        city: string\n  optional: true\nlines[5]:\n  type:\n    sku: string\n    qty: integer\n',
    },
    check(schema) {
      const order = schema.models.get('Order')!;
      assert.equal(order.fields.find((f) => f.name === 'contact')!.embedded, 'Order.Contact');
      assert.equal(order.fields.find((f) => f.name === 'contact')!.optional, true);
      assert.equal(order.fields.find((f) => f.name === 'lines')!.list, 5);
      assert.deepEqual([...schema.embedded.keys()].sort(), ['Order.Contact', 'Order.Contact.Address', 'Order.Lines']);
    },
  },
  {
    name: 'labels, placeholders, about, protected, per-locale labels',
    files: {
      '/📦/🌐Person.yaml': 'dueDate:\n  type: date\n  placeholder: 2024-05-01\n  about: When\n  protected: true\nfirstName:\n  type: string\n  label: {en: First name, de: Vorname}\nemail:\n  type: string\n  unique: true\n  label: E-mail\n',
    },
    check(schema) {
      const f = new Map(schema.models.get('Person')!.fields.map((x) => [x.name, x]));
      assert.equal(f.get('dueDate')!.label, 'Due Date');
      assert.equal(f.get('dueDate')!.placeholder, '2024-05-01');
      assert.equal(f.get('dueDate')!.protected, true);
      assert.equal(f.get('firstName')!.label, 'First name');
      assert.deepEqual(f.get('firstName')!.labels, { en: 'First name', de: 'Vorname' });
      assert.equal(f.get('email')!.unique, true);
      assert.equal(f.get('email')!.label, 'E-mail');
    },
  },
  {
    name: 'a hierarchy named order, an integer ordering a root model, a self link',
    files: { '/📦/🌐Step.yaml': 'order: hierarchy\nparent?: Step\n', '/📦/🌐Rank.yaml': 'score:\n  type: integer\n  order: true\n' },
    check(schema) {
      assert.equal(schema.models.get('Step')!.fields.find((f) => f.name === 'parent')!.model, 'Step');
      assert.equal(schema.models.get('Rank')!.fields.at(-1)!.order, true);
    },
  },
  {
    name: 'twenty fields are allowed',
    files: { '/📦/🌐Wide.yaml': Array.from({ length: 20 }, (_, i) => `f${i}: string\n`).join('') },
  },
  { name: 'no /📦/ directory at all', files: { '/index.html': '<p>hi</p>' }, check: (s) => assert.equal(s.models.size, 0) },
];

interface BrokenCase {
  name: string;
  files: Record<string, string>;
  /** `file:line:column CODE`, sorted as DiagnosticList.sorted() sorts them. */
  expect: string[];
  /** Words the first message must contain (it says what to write). */
  says?: string;
}

const T = '/📦/🌐Task.yaml';

const BROKEN: BrokenCase[] = [
  { name: 'YAML that does not parse', files: { [T]: 'title: string\ntitle: string\n' }, expect: [`${T}:2:1 LW_APP_YAML`] },
  { name: 'a file without a prefix', files: { '/📦/Task.yaml': '' }, expect: ['/📦/Task.yaml:1:1 LW_MODEL_FILE_NAME'], says: '🌐Task.yaml' },
  { name: 'a .yml file', files: { '/📦/🌐Task.yml': '' }, expect: ['/📦/🌐Task.yml:1:1 LW_MODEL_FILE_NAME'], says: '🌐Task.yaml' },
  { name: 'a lowercase model name', files: { '/📦/🌐task_list.yaml': '' }, expect: ['/📦/🌐task_list.yaml:1:1 LW_MODEL_NAME'], says: '🌐TaskList.yaml' },
  { name: 'a model name over 20 characters', files: { '/📦/🌐AVeryLongModelNameIndeed.yaml': '' }, expect: ['/📦/🌐AVeryLongModelNameIndeed.yaml:1:1 LW_MODEL_NAME'] },
  {
    name: 'two models of one name',
    files: { '/📦/🌐List.yaml': '', '/📦/📄Note.yaml': '', '/📦/List/🌐Note.yaml': '' },
    expect: ['/📦/List/🌐Note.yaml:1:1 LW_MODEL_DUPLICATE'],
  },
  { name: 'a container directory without its model', files: { '/📦/List/🌐Note.yaml': '' }, expect: ['/📦/List:1:1 LW_MODEL_CONTAINER'], says: '/📦/🌐List.yaml' },
  { name: 'a Content container', files: { '/📦/📄List.yaml': '', '/📦/List/🌐Note.yaml': '' }, expect: ['/📦/List:1:1 LW_MODEL_CONTAINER'] },
  {
    name: 'a container two levels deep (left out, a warning: docs/status.md "What degrades")',
    files: { '/📦/🌐List.yaml': '', '/📦/🌐Note.yaml': '', '/📦/List/Note/🌐Line.yaml': '' },
    expect: ['/📦/List/Note:1:1 LW_MODEL_NOT_AVAILABLE'],
  },
  { name: 'an embedded type inside a container', files: { '/📦/🌐List.yaml': '', '/📦/List/📎Tag.yaml': '' }, expect: ['/📦/List/📎Tag.yaml:1:1 LW_MODEL_CONTAINER'] },
  { name: 'a list at the top of a file', files: { [T]: '- title\n- status\n' }, expect: [`${T}:1:1 LW_MODEL_DEFINITION`] },
  { name: 'a field with no type', files: { [T]: 'title: string\nstatus:\n' }, expect: [`${T}:2:1 LW_MODEL_DEFINITION`] },
  { name: 'a long form without type:', files: { [T]: 'title:\n  optional: true\n' }, expect: [`${T}:1:1 LW_MODEL_DEFINITION`], says: 'type: string' },
  { name: 'a PascalCase field name', files: { [T]: 'title: string\nDueDate: date\n' }, expect: [`${T}:2:1 LW_MODEL_FIELD_NAME`], says: '"dueDate"' },
  { name: 'a snake_case field name', files: { [T]: 'due_date: date\n' }, expect: [`${T}:1:1 LW_MODEL_FIELD_NAME`], says: '"dueDate"' },
  { name: 'a field name over 20 characters', files: { [T]: 'aVeryLongFieldNameIndeed: string\n' }, expect: [`${T}:1:1 LW_MODEL_FIELD_NAME`] },
  { name: 'built-in names', files: { [T]: 'id: string\ncreated: date\nmodified?: timestamp\n' }, expect: [`${T}:1:1 LW_MODEL_FIELD_RESERVED`, `${T}:2:1 LW_MODEL_FIELD_RESERVED`, `${T}:3:1 LW_MODEL_FIELD_RESERVED`] },
  { name: 'user and role on a profile', files: { '/📦/👤Member.yaml': 'nick: string\nuser: string\nrole: string\n' }, expect: ['/📦/👤Member.yaml:2:1 LW_MODEL_FIELD_RESERVED', '/📦/👤Member.yaml:3:1 LW_MODEL_FIELD_RESERVED'] },
  { name: 'a field named after the container', files: { '/📦/🌐List.yaml': '', '/📦/List/🌐Note.yaml': 'list: string\n' }, expect: ['/📦/List/🌐Note.yaml:1:1 LW_MODEL_FIELD_RESERVED'] },
  {
    name: 'twenty-one fields',
    files: { [T]: Array.from({ length: 21 }, (_, i) => `f${i}: string\n`).join('') },
    expect: [`${T}:21:1 LW_MODEL_TOO_MANY_FIELDS`],
  },
  { name: 'an unknown lowercase type, with a hint', files: { [T]: 'title: text\n' }, expect: [`${T}:1:8 LW_MODEL_FIELD_TYPE`], says: 'write string' },
  { name: 'an unknown model type', files: { [T]: 'owner: Account\n' }, expect: [`${T}:1:8 LW_MODEL_FIELD_TYPE`], says: '/📦/🌐Account.yaml' },
  { name: 'an unknown long-form type', files: { [T]: 'count:\n  type: int\n' }, expect: [`${T}:2:9 LW_MODEL_FIELD_TYPE`], says: 'write integer' },
  { name: 'public: on an image field takes a boolean', files: { [T]: 'image:\n  type: image\n  public: yes\n' }, expect: [`${T}:3:11 LW_MODEL_OPTION`], says: 'public: takes true' },
  { name: 'a static-document type', files: { [T]: 'body: document-markdown\n' }, expect: [`${T}:1:7 LW_MODEL_TYPE_NOT_ALLOWED`] },
  { name: 'hierarchy in a Content model', files: { '/📦/📄Page.yaml': 'hierarchy: hierarchy\n' }, expect: ['/📦/📄Page.yaml:1:12 LW_MODEL_TYPE_NOT_ALLOWED'] },
  { name: 'hierarchy in an embedded type', files: { '/📦/📎Part.yaml': 'order: hierarchy\n' }, expect: ['/📦/📎Part.yaml:1:8 LW_MODEL_TYPE_NOT_ALLOWED'] },
  { name: 'uid in an embedded type', files: { '/📦/📎Part.yaml': 'slug: uid\n' }, expect: ['/📦/📎Part.yaml:1:7 LW_MODEL_TYPE_NOT_ALLOWED'] },
  { name: 'a hierarchy field with another name', files: { [T]: 'position: hierarchy\n' }, expect: [`${T}:1:1 LW_MODEL_HIERARCHY`], says: 'hierarchy: hierarchy' },
  { name: 'two hierarchy fields', files: { [T]: 'hierarchy: hierarchy\norder: hierarchy\n' }, expect: [`${T}:2:1 LW_MODEL_HIERARCHY`] },
  { name: 'unique on an integer', files: { [T]: 'count:\n  type: integer\n  unique: true\n' }, expect: [`${T}:3:3 LW_MODEL_OPTION`] },
  { name: 'unique on a Content model', files: { '/📦/📄Page.yaml': 'title:\n  type: string\n  unique: true\n' }, expect: ['/📦/📄Page.yaml:3:3 LW_MODEL_OPTION'], says: 'Universal' },
  { name: 'public on a string', files: { [T]: 'title:\n  type: string\n  public: true\n' }, expect: [`${T}:3:3 LW_MODEL_OPTION`], says: 'public: does not apply to string fields' },
  { name: 'an unknown option', files: { [T]: 'title:\n  type: string\n  required: true\n' }, expect: [`${T}:3:3 LW_MODEL_OPTION`], says: 'optional, label' },
  { name: 'optional: yes (a string, not a boolean)', files: { [T]: 'title:\n  type: string\n  optional: yes\n' }, expect: [`${T}:3:13 LW_MODEL_OPTION`] },
  { name: 'max: many', files: { [T]: 'title:\n  type: string\n  max: many\n' }, expect: [`${T}:3:8 LW_MODEL_OPTION`] },
  { name: 'min above max', files: { [T]: 'count:\n  type: integer\n  min: 10\n  max: 5\n' }, expect: [`${T}:4:8 LW_MODEL_OPTION`] },
  { name: 'html max above 20000', files: { [T]: 'body:\n  type: html\n  max: 50000\n' }, expect: [`${T}:3:8 LW_MODEL_OPTION`] },
  { name: 'a fractional integer min', files: { [T]: 'count:\n  type: integer\n  min: 0.5\n' }, expect: [`${T}:3:8 LW_MODEL_OPTION`] },
  { name: 'init: now on a timestamp', files: { [T]: 'at:\n  type: timestamp\n  init: now\n' }, expect: [`${T}:3:9 LW_MODEL_OPTION`], says: 'true' },
  { name: 'an unknown render option', files: { [T]: 'body:\n  type: markdown\n  render: {colour: red}\n' }, expect: [`${T}:3:12 LW_MODEL_OPTION`] },
  { name: 'a list of integers', files: { [T]: 'counts[]: integer\n' }, expect: [`${T}:1:1 LW_MODEL_LIST`], says: 'string, options and embedded' },
  { name: 'a list of 20 declared with [20]', files: { [T]: 'tags[20]: string\n' }, expect: [`${T}:1:1 LW_MODEL_LIST`], says: 'tags[]' },
  { name: 'a list of 0', files: { [T]: 'tags[0]: string\n' }, expect: [`${T}:1:1 LW_MODEL_LIST`] },
  { name: 'order on a boolean', files: { [T]: 'done:\n  type: boolean\n  order: true\n' }, expect: [`${T}:3:3 LW_MODEL_ORDER`] },
  { name: 'two ordering fields', files: { [T]: 'title:\n  type: string\n  order: true\nrank:\n  type: integer\n  order: true\n' }, expect: [`${T}:6:3 LW_MODEL_ORDER`] },
  { name: 'order beside a hierarchy', files: { [T]: 'hierarchy: hierarchy\ntitle:\n  type: string\n  order: true\n' }, expect: [`${T}:4:3 LW_MODEL_ORDER`] },
  { name: 'order on a Content model', files: { '/📦/📄Page.yaml': 'title:\n  type: string\n  order: true\n' }, expect: ['/📦/📄Page.yaml:3:3 LW_MODEL_ORDER'] },
  {
    name: 'order on a contained model field not named title, name, order or hierarchy',
    files: { '/📦/🌐List.yaml': '', '/📦/List/🌐Note.yaml': 'rank:\n  type: integer\n  order: true\n' },
    expect: ['/📦/List/🌐Note.yaml:3:3 LW_MODEL_ORDER'],
  },
  { name: 'options without values', files: { [T]: 'status: options\n' }, expect: [`${T}:1:1 LW_MODEL_OPTIONS_VALUES`] },
  {
    name: 'options values in capitals, with spaces, twice',
    files: { [T]: 'status:\n  type: options\n  values:\n    - Active\n    - in progress\n    - done\n    - done\n' },
    expect: [`${T}:4:7 LW_MODEL_OPTIONS_VALUES`, `${T}:5:7 LW_MODEL_OPTIONS_VALUES`, `${T}:7:7 LW_MODEL_OPTIONS_VALUES`],
    says: '"active"',
  },
  { name: 'a prefix of four letters', files: { [T]: '🎛:\n  prefix: task_\n' }, expect: [`${T}:2:11 LW_MODEL_SETTINGS`], says: 'tsk_' },
  { name: 'an unknown setting', files: { [T]: '🎛:\n  prefx: tsk_\n' }, expect: [`${T}:2:3 LW_MODEL_SETTINGS`] },
  { name: 'a 🎛 block on an embedded type', files: { '/📦/📎Part.yaml': '🎛:\n  prefix: p\n' }, expect: ['/📦/📎Part.yaml:1:1 LW_MODEL_SETTINGS'] },
  {
    name: 'embedded types containing each other',
    files: { '/📦/📎Contact.yaml': 'address: Address\n', '/📦/📎Address.yaml': 'city: string\nresident: Contact\n' },
    expect: ['/📦/📎Contact.yaml:1:1 LW_MODEL_EMBEDDED_CYCLE'],
    says: 'Address → Contact → Address',
  },
  {
    name: 'columns count code points after an emoji key',
    files: { [T]: '🎛: {prefix: TSK}\n' },
    expect: [`${T}:1:13 LW_MODEL_SETTINGS`],
  },
  {
    name: 'every problem of a file, not only the first',
    files: { [T]: 'Title: string\ncount: int\ntags[]: integer\nstatus: options\n' },
    expect: [`${T}:1:1 LW_MODEL_FIELD_NAME`, `${T}:2:8 LW_MODEL_FIELD_TYPE`, `${T}:3:1 LW_MODEL_LIST`, `${T}:4:1 LW_MODEL_OPTIONS_VALUES`],
  },
];

describe('model definitions: valid', () => {
  for (const c of VALID) {
    it(`reads ${c.name}`, () => {
      const { schema, problems } = readModels(c.files);
      assert.deepEqual(problems, []);
      c.check?.(schema);
    });
  }
});

describe('model definitions: broken', () => {
  for (const c of BROKEN) {
    it(`reports ${c.name}`, () => {
      const { problems, messages } = readModels(c.files);
      assert.deepEqual(problems, c.expect);
      if (c.says) assert.ok(messages[0]!.includes(c.says), messages[0]);
    });
  }
});

describe('labels from names', () => {
  for (const [name, label] of [['myField', 'My Field'], ['title', 'Title'], ['dueDate2', 'Due Date2'], ['htmlURL', 'Html URL'], ['a', 'A']] as const) {
    it(`labels ${name} as "${label}"`, () => assert.equal(labelFromName(name), label));
  }
});
