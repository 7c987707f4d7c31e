/**
 * Scripts are checked against the model definitions at build time (docs/queries.md "Errors"):
 * unknown members, setters of fields a model does not have, queries on fields that cannot be
 * queried, and writes in scripts that cannot write — each at its file:line:column. What the
 * compiler cannot see is left to the runtime (tested in store.test.ts and queries-doc.test.ts).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { checkApp } from '../../src/app/index.js';
import { writeApp } from '../helpers.js';

const MODELS = {
  '📦/🌐Task.yaml': 'title: string\nstatus:\n  type: options\n  values: [active, done]\nmeta?: map\ntags[]: string\ncontact?:\n  type:\n    email: string\n',
  '📦/🌐List.yaml': 'title: string\n',
  '📦/List/🌐Note.yaml': 'title: string\n',
};
const problems = (files: Record<string, string>) =>
  checkApp(writeApp({ ...MODELS, ...files }))
    .filter((d) => d.severity === 'error')
    .map((d) => `${d.file}:${d.line}:${d.column} ${d.code} ${d.message}`);

describe('scripts checked against the model definitions', () => {
  it('accepts every member the runtime gives a model', () => {
    const ok = [
      "import {Task, List, Note} from '📦';",
      "const a = Task.all().count() + Task.title('x').count() + Task.title_gt('a').count() + Task.created_lt(new Date()).count();",
      'const b = Task.asc().map((t) => t.title);',
      "const c = Task.status.active + Task.status.optionLabel('done') + Task.title.label;",
      'const d = Note.anyList().count() + List.grouping(Note.anyList()).count();',
      "const e = Task.contact({email: 'a@b.c'}).count();",
      "const f = List.all().map((l) => Note.list(l).count());",
      "const g = Task.optional('x') == null && Task.exists('x');",
      '({a, b, c, d, e, f, g});',
    ].join('\n');
    assert.deepEqual(problems({ 'x/GET.js': ok }), []);
    const post = "import {Task, List, Note} from '📦';\nconst t = new Task().title('x').status('done').meta({a: 1});\nconst c = new Task.Contact({email: 'a@b.c'});\nt.contact = c;\nnew Note(new List().title('l')).title('n');\nTask.all().modify((x) => { x.title = 'y' });\nt.copy().remove();\n({});\n";
    assert.deepEqual(problems({ 'x/POST.js': post }), []);
  });

  it('an unknown member of a model, with a suggestion', () => {
    assert.deepEqual(problems({ 'x/GET.js': "import {Task} from '📦';\nTask.titel('x').count();\n" }), [
      '/x/GET.js:2:6 LW_MODEL_MEMBER Task has no field or query "titel"; did you mean "title"?',
    ]);
    assert.deepEqual(problems({ 'x/GET.js': "import * as D from '📦';\nD.Task.bogus();\n" }), ['/x/GET.js:2:8 LW_MODEL_MEMBER Task has no field or query "bogus"']);
    assert.deepEqual(problems({ 'x/GET.js': "import {Task as T} from '📦';\nT.tags_gt('a');\n" }), ['/x/GET.js:2:3 LW_MODEL_MEMBER Task has no field or query "tags_gt"']);
  });

  it('a setter of a field the model does not have, on a new record', () => {
    assert.deepEqual(problems({ 'x/POST.js': "import {Task} from '📦';\nnew Task().title('x').titel('y');\n({});\n" }), [
      '/x/POST.js:2:23 LW_MODEL_MEMBER Task has no field "titel" to set; did you mean "title"?',
    ]);
  });

  it('a query on a field that cannot be queried', () => {
    assert.deepEqual(problems({ 'x/GET.js': "import {Task} from '📦';\nTask.meta({a: 1}).count();\n" }), [
      '/x/GET.js:2:6 LW_MODEL_QUERY Task.meta is a map field, which cannot be queried: filter with .filter((r) => …) instead',
    ]);
    assert.deepEqual(problems({ 'x/GET.js': "import {Task} from '📦';\nTask.tags('a');\n" }), [
      '/x/GET.js:2:6 LW_MODEL_QUERY Task.tags is a string list field, which cannot be queried: filter with .filter((r) => …) instead',
    ]);
  });

  it('writes in a GET script or a supplier', () => {
    assert.deepEqual(problems({ 'x/GET.js': "import {Task} from '📦';\nnew Task().title('x');\n({});\n" }), [
      '/x/GET.js:2:1 LW_MODEL_READ_ONLY a GET script cannot create records (new Task): write from a POST, PUT or DELETE script',
    ]);
    assert.deepEqual(problems({ 'x/GET.js': "import {Task} from '📦';\nTask.all().filter((t) => t.title).modify((t) => { t.title = 'x' });\n" }), [
      '/x/GET.js:2:35 LW_MODEL_READ_ONLY a GET script cannot change records (modify): write from a POST, PUT or DELETE script',
    ]);
    assert.deepEqual(problems({ '📤/make.js': "import {Task} from '📦';\nconst t = new Task();\nexport {t};\n" }), [
      '/📤/make.js:2:11 LW_MODEL_READ_ONLY a supplier cannot create records (new Task): write from a POST, PUT or DELETE script',
    ]);
    assert.deepEqual(problems({ 'x/PUT.js': "import {Task} from '📦';\nnew Task().title('x');\n({});\n" }), []);
  });

  it('a name declared again is not taken for the model', () => {
    assert.deepEqual(problems({ 'x/GET.js': "import {Task} from '📦';\n[{bogus: 1}].map((Task) => Task.bogus);\n" }), []);
  });

  it('views: paths into a model are checked too', () => {
    const M = '<!--TEMPLATE mustache-->\n';
    const ok = `${M}{{% import {Task, Note, List} from '📦' }}{{#Task.all.desc as t}}{{t.title}}{{/Task.all.desc}}{{Task.all.count}}{{Task.status.optionLabel 'done'}}{{Task.status.active}}{{Task.title.label}}{{#List.all as l}}{{#Note.list l as n}}{{n.title}}{{/Note.list}}{{/List.all}}{{^Task.all}}none{{/Task.all}}`;
    assert.deepEqual(problems({ 'ok.html': ok }), []);
    assert.deepEqual(problems({ 'a.html': `${M}{{% import {Task} from '📦' }}\n{{#Task.alll}}x{{/Task.alll}}` }), [
      '/a.html:3:4 LW_MODEL_MEMBER Task has no field or query "alll"',
    ]);
    assert.deepEqual(problems({ 'b.html': `${M}{{% import {Task} from '📦' }}{{#Task.all.filter}}x{{/Task.all.filter}}` }), [
      '/b.html:2:33 LW_MODEL_MEMBER a view can read asc, desc, count, exists, get, optional, limit, distinct of Task.all; make other queries in a supplier',
    ]);
    assert.deepEqual(problems({ 'c.html': `${M}{{% import * as D from '📦' }}{{D.Task.status.finished}}` }), [
      '/c.html:2:32 LW_MODEL_MEMBER Task.status has no value "finished"; its values are active, done',
    ]);
  });
});
