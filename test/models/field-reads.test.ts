/**
 * Field reads on records are checked at build time (docs/queries.md "Field reads are checked at build time",
 * docs/views.md "Models in views"): a member a record of a known model does not have is an error
 * (LW_MODEL_MEMBER) at its file:line:column naming the field and the model, in scripts and in
 * views; what is valid stays accepted, and a value of unknown type is never reported. `{{{ }}}` on
 * a plain text field is a warning (LW_VIEW_RAW_NOT_WEB_SAFE), and the page still escapes it.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { checkApp } from '../../src/app/index.js';
import { serve, writeApp, type Served } from '../helpers.js';

const M = '<!--TEMPLATE mustache-->\n';
const MODELS = {
  '📦/🌐Project.yaml': 'name: string\nlead?:\n  type: Member\n',
  '📦/🌐Member.yaml': 'nick: string\n',
  '📦/🌐Item.yaml':
    'title: string\nweight?: integer\nproject?:\n  type: Project\nbody?: markdown\nnote?: html\nicon?: svg-icon\ntags[]: string\n' +
    'status:\n  type: options\n  values: [open, done]\nplace?:\n  type:\n    city: string\nslug: uid\nhierarchy: hierarchy\n',
  '📦/🌐Board.yaml': 'name: string\n',
  '📦/Board/🌐Card.yaml': 'label: string\n',
  '📦/Board/👤Seat.yaml': 'desk: string\n',
  'items/{item}/🔗.yaml': 'field: 📦.Item.id\n',
};
const FIELDS = 'its fields are title, weight, project, body, note, icon, tags, status, place, slug, hierarchy';

const diagnostics = (files: Record<string, string>, severity: 'error' | 'warning' = 'error') =>
  checkApp(writeApp({ ...MODELS, ...files }))
    .filter((d) => d.severity === severity)
    .map((d) => `${d.file}:${d.line}:${d.column} ${d.code} ${d.message}`);

describe('field reads in scripts', () => {
  it('a record from get, optional or a query\'s get: the field and the model, with a suggestion or the fields', () => {
    const script = "import {Item} from '📦';\nconst a = Item.get('x');\nconst b = Item.optional('y');\nconst c = Item.all().desc().get();\n({a: a.titel, b: b.nope, c: c.weigth});\n";
    assert.deepEqual(diagnostics({ 'x/GET.js': script }), [
      '/x/GET.js:5:8 LW_MODEL_MEMBER Item has no field "titel"; did you mean "title"?',
      `/x/GET.js:5:20 LW_MODEL_MEMBER Item has no field "nope"; did you mean "note"?`,
      '/x/GET.js:5:31 LW_MODEL_MEMBER Item has no field "weigth"; did you mean "weight"?',
    ]);
  });

  it('query callbacks: map, filter, flatMap, forEach and modify receive records', () => {
    const script =
      "import {Item} from '📦';\nItem.all().map((t) => t.weigth);\nItem.all().filter((t) => t.nope).limit(3).forEach((t) => t.zz);\n" +
      "Item.title('a').flatMap((t) => [t.qq]);\nItem.all().modify((t) => { t.colour = 'x' });\n({});\n";
    assert.deepEqual(diagnostics({ 'x/POST.js': script }), [
      '/x/POST.js:2:25 LW_MODEL_MEMBER Item has no field "weigth"; did you mean "weight"?',
      `/x/POST.js:3:28 LW_MODEL_MEMBER Item has no field "nope"; did you mean "note"?`,
      `/x/POST.js:3:60 LW_MODEL_MEMBER Item has no field "zz"; ${FIELDS}`,
      `/x/POST.js:4:35 LW_MODEL_MEMBER Item has no field "qq"; ${FIELDS}`,
      `/x/POST.js:5:30 LW_MODEL_MEMBER Item has no field "colour"; ${FIELDS}`,
    ]);
  });

  it('a new record, a copy, a link field, a link\'s get and a path parameter\'s record', () => {
    const post = "import {Item} from '📦';\nconst x = new Item().title('a');\nx.nope;\nconst y = x.copy();\ny.titl;\nx.project.nam;\nx.project.get().lead.get().nik;\n({});\n";
    assert.deepEqual(diagnostics({ 'x/POST.js': post }), [
      `/x/POST.js:3:3 LW_MODEL_MEMBER Item has no field "nope"; did you mean "note"?`,
      '/x/POST.js:5:3 LW_MODEL_MEMBER Item has no field "titl"; did you mean "title"?',
      '/x/POST.js:6:11 LW_MODEL_MEMBER Project (the model this link names) has no field "nam"; did you mean "name"?',
      '/x/POST.js:7:28 LW_MODEL_MEMBER Member has no field "nik"; did you mean "nick"?',
    ]);
    const param = "import {item} from '🔗';\n({a: item.title, b: item.titel, c: item.get().nope});\n";
    assert.deepEqual(diagnostics({ 'items/{item}/GET.js': param }), [
      '/items/{item}/GET.js:2:26 LW_MODEL_MEMBER Item (the model this link names) has no field "titel"; did you mean "title"?',
      `/items/{item}/GET.js:2:47 LW_MODEL_MEMBER Item has no field "nope"; did you mean "note"?`,
    ]);
  });

  it('accepts every member a record, a link and a field value have', () => {
    const get = [
      "import {Item, Board, Card, Seat, Member} from '📦';",
      "const t = Item.get('x');",
      'const a = [t.id, t.created, t.modified, t.title, t.weight, t.slug, t.tags.length, t.tags.includes(\'a\'), t.status, t.place.city, t.copyable, t.toJSON(), t.toString()];',
      'const b = [t.body.value, t.body.empty, t.body.length, t.body.valid, t.body.invalid, t.body.markdown(), t.body.text(), t.body.html(), t.body.sections(), t.note.html(), t.icon];',
      'const c = [t.hierarchy.parent(), t.hierarchy.hasParent, t.hierarchy.next().value, t.project.id, t.project.linked(), t.project.exists(), t.project.name, t.project.get().name, t.project.optional()];',
      'const d = Card.anyBoard().map((c) => [c.label, c.board().get().name, c.board().id]);',
      "const e = Seat.me().get(); const f = [e.user, e.role, e.desk, e.hasRole('x'), e.board().id];",
      'const g = Item.asc().map((i) => i.title).map((s) => s.nope);',
      'const h = Board.all().map((b) => Card.board(b).map((c) => c.label));',
      'const k = Item.all().count() + Item.all().distinct().limit(2).map((i) => i.weight).count();',
      '({a, b, c, d, f, g, h, k});',
      '',
    ].join('\n');
    assert.deepEqual(diagnostics({ 'x/GET.js': get }), []);
    assert.deepEqual(diagnostics({ 'x/GET.js': "import {Seat} from '📦';\nSeat.me().get().desk + Seat.me().get().user + Seat.me().get().role;\nSeat.me().get().dsk;\n" }), ['/x/GET.js:3:17 LW_MODEL_MEMBER Seat has no field "dsk"; did you mean "desk"?']);
    const post = "import {Item} from '📦';\nconst t = new Item().title('a').weight(2);\nt.title = 'b';\nt.tags.add('x');\nconst c = t.copy();\nc.remove();\nItem.all().modify((i) => i.weight(3));\n({t: t.title, id: c.id});\n";
    assert.deepEqual(diagnostics({ 'x/POST.js': post }), []);
  });

  it('says nothing when the type is not certain', () => {
    const script = [
      "import {Item} from '📦';",
      "import {thing} from 'form';",
      'const f = (t) => t.whatever;',
      "let y = Item.get('a');",
      'y = {zzz: 1};',
      'const z = [y.zzz, thing.nope, f(1)];',
      "const Item2 = {get: () => ({q: 1})};",
      "const w = Item2.get('x').q;",
      "const v = [{nope: 1}].map((t) => t.nope);",
      "const u = Item.all().map((t) => ({n: t.title})).map((t) => t.n);",
      "const s = Item.all().map((t) => { const t2 = t; return t2.title; });",
      '({z, w, v, u, s});',
      '',
    ].join('\n');
    assert.deepEqual(diagnostics({ 'x/GET.js': script }), []);
    // A name bound again inside a callback is that value, not the record.
    assert.deepEqual(diagnostics({ 'x/GET.js': "import {Item} from '📦';\nItem.all().map((t) => [{a: 1}].map((t) => t.a));\n" }), []);
  });
});

describe('field reads in views', () => {
  it('as names of Model.all (and its asc, desc, limit, get), a record from get, link fields and a link\'s get', () => {
    const view =
      M +
      "{{% import {Item, Project} from '📦' }}\n" +
      '{{#Item.all as t}}{{t.titel}} {{t.project.nam}} {{t.project.get.lead.get.nik}}{{/Item.all}}\n' +
      "{{#Item.all.desc.limit 3 as u}}{{#u.project as p}}{{p.zz}}{{/u.project}}{{/Item.all.desc.limit}}{{#Item.get 'x' as g}}{{g.nope}}{{/Item.get}}\n";
    assert.deepEqual(diagnostics({ 'v/index.html': view }), [
      '/v/index.html:3:21 LW_MODEL_MEMBER Item has no field "titel"; did you mean "title"?',
      '/v/index.html:3:33 LW_MODEL_MEMBER Project (the model this link names) has no field "nam"; did you mean "name"?',
      '/v/index.html:3:51 LW_MODEL_MEMBER Member has no field "nik"; did you mean "nick"?',
      '/v/index.html:4:53 LW_MODEL_MEMBER Project (the model this link names) has no field "zz"; its fields are name, lead',
      `/v/index.html:4:121 LW_MODEL_MEMBER Item has no field "nope"; did you mean "note"?`,
    ]);
  });

  it('a namespace import, a container selection and a path parameter', () => {
    const ns = M + "{{% import * as D from '📦' }}{{#D.Board.all as b}}{{#D.Card.board b as c}}{{c.lable}}{{/D.Card.board}}{{/D.Board.all}}\n";
    assert.deepEqual(diagnostics({ 'v/index.html': ns }), ['/v/index.html:2:77 LW_MODEL_MEMBER Card has no field "lable"; did you mean "label"?']);
    const param = M + "{{% import {item} from '🔗' }}<h1>{{item.title}} {{item.titel}}</h1>\n";
    assert.deepEqual(diagnostics({ 'items/{item}/index.html': param }), [
      '/items/{item}/index.html:2:51 LW_MODEL_MEMBER Item (the model this link names) has no field "titel"; did you mean "title"?',
    ]);
  });

  it('accepts every valid member, and names of unknown type', () => {
    const view =
      M +
      "{{% import {Item, Card} from '📦' }}{{% import {item} from '🔗' }}\n" +
      '{{#Item.all as t}}{{t.id}} {{t.created}} {{t.modified}} {{t.title}} {{t.slug}} {{t.status}} {{t.place.city}} {{t.tags.length}} {{t.hierarchy.hasParent}}' +
      '{{t.body}} {{{t.body}}} {{t.body.value}} {{t.body.empty}} {{t.body.length}} {{t.body.valid}} {{t.body.invalid}} {{t.body.markdown}} {{t.body.text}} {{{t.body.html}}} {{{t.note}}} {{{t.icon}}}' +
      '{{#t.body.sections as s}}{{s.id}}{{s.title}}{{/t.body.sections}}{{t.project}} {{t.project.id}} {{t.project.linked}} {{t.project.name}} {{t.project.get.name}} {{#t.project.optional}}{{name}}{{/t.project.optional}}' +
      '{{#t.tags as g}}{{g.whatever}}{{/t.tags}}{{#t.place as pl}}{{pl.city}}{{/t.place}}{{#t$first}}first{{/t$first}}{{/Item.all}}\n' +
      '{{#Item.all by 2 as row}}{{row.length}}{{/Item.all}}{{#Card.anyBoard as c}}{{c.label}} {{c.board.name}}{{/Card.anyBoard}}{{#Item.all as t}}{{#t.tags as t}}{{t.any}}{{/t.tags}}{{/Item.all}}\n' +
      '{{item}} {{item.title}} {{item.get.title}} {{#item}}{{nope}}{{/item}}{{Item.all.count}}{{#Item.all}}{{nope}}{{/Item.all}}\n';
    assert.deepEqual(diagnostics({ 'items/{item}/index.html': view }), []);
  });

  it('{{{ }}} on a plain text field is a warning at its tag, and the page escapes the value', async () => {
    const view = M + "{{% import {Project} from '📦' }}\n{{#Project.all as p}}<b>{{{p.name}}}</b><i>{{& p.name}}</i>{{/Project.all}}\n";
    const files = { ...MODELS, 'index.html': view, 'add/POST.js': "import {Project} from '📦';\nnew Project().name('<b>x</b>');\n({});\n" };
    assert.deepEqual(
      checkApp(writeApp(files)).filter((d) => d.severity === 'warning').map((d) => `${d.file}:${d.line}:${d.column} ${d.code} ${d.message}`),
      [
        '/index.html:3:25 LW_VIEW_RAW_NOT_WEB_SAFE "p.name" is Project.name, a string field, plain text that {{{ }}} escapes anyway: write {{p.name}} (only html, markdown and svg-icon fields print as markup)',
        '/index.html:3:44 LW_VIEW_RAW_NOT_WEB_SAFE "p.name" is Project.name, a string field, plain text that {{& }} escapes anyway: write {{p.name}} (only html, markdown and svg-icon fields print as markup)',
      ],
    );
    let s: Served | undefined;
    try {
      s = await serve(files);
      assert.equal((await s.request('POST', '/add', { accept: 'application/json' }, '')).status, 200);
      const html = (await s.request('GET', '/')).body.toString();
      assert.match(html, /<b>&lt;b&gt;x&lt;\/b&gt;<\/b><i>&lt;b&gt;x&lt;\/b&gt;<\/i>/);
    } finally {
      await s?.close();
    }
  });
});

describe('a served app with a misspelt field read', () => {
  let s: Served | undefined;
  before(async () => {
    s = await serve({ ...MODELS, 'x/GET.js': "import {Item} from '📦';\nItem.all().map((t) => t.titel);\n" }).catch(() => undefined);
  });
  after(() => s?.close());
  it('does not load: the error is reported at build time', () => {
    assert.equal(s, undefined);
  });
});
