/**
 * Properties `/🎨.scss` in a served app (docs/properties.md): views (`{{🎨.x}}`, messages with
 * arguments, boolean sections, imports), scripts (`import * as P from '🎨'`, camelCase names,
 * messages as functions), SCSS (`@import '/🎨'`), build errors at file:line:column, and a reload
 * after the file changes.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadApp } from '../../src/app/index.js';
import { diagnosticsOf, serve, writeApp, type Served } from '../helpers.js';

const M = '<!--TEMPLATE mustache-->\n';

const PROPERTIES = [
  '/**',
  ' * @category messages',
  ' */',
  "$ui-home: 'Home';",
  "$ui-hello: 'Hello, {0}';",
  "$success-add: 'Added ‘{0}’';",
  "$greet: 'Hi {name}, from {place}';",
  "$tasks: '{0, plural, one {# task} other {# tasks}}';",
  "$long: 'one \\",
  "two';",
  '/** @category options */',
  '$my-mode: true;',
  '$legacy: false;',
  '/** @category style */',
  '$ratio: 1.5;',
  '$gap: 4px;',
  '$brand-color: #336699;',
  '$image-background: url(/img/bg.png);',
  '',
].join('\n');


describe('properties in views', () => {
  let s: Served;
  before(async () => {
    s = await serve({
      '/🎨.scss': PROPERTIES,
      '/img/bg.png': 'png',
      '/index.html': `${M}<h1>{{🎨.ui-home}}</h1>\n<p>{{🎨.ui-hello name}}</p>\n<p>{{🎨.tasks 1}}, {{🎨.tasks 3}}</p>\n<p>{{🎨.long}}</p>\n{{#🎨.my-mode}}<p>mode on</p>{{/🎨.my-mode}}{{^🎨.legacy}}<p>no legacy</p>{{/🎨.legacy}}\n<img src="{{🎨.image-background}}" alt="">\n<i>{{🎨.ratio}} {{🎨.gap}} {{🎨.brand-color}}</i>\n`,
      '/imports.html': `${M}{{% import * as P from '🎨' }}{{% import {my-mode, success-add} from '🎨' }}{{P.ui-home}}|{{#my-mode}}mode{{/my-mode}}|{{success-add 'Milk'}}|{{🎨.greet name='Ada' place='Paris'}}`,
      '/escape.html': `${M}{{% import {title} from '📤' }}{{🎨.ui-hello title}}|{{{🎨.ui-hello title}}}`,
      '/📤/Title.js': "const title = '<b>Ada</b> & co'\nconst name = 'Ada'\nexport {title, name}",
      '/supplied.html': `${M}{{% import {Card} from '📤' }}{{{Card}}}`,
      '/📤/Card.html': `${M}<div>{{🎨.success-add 'Tea'}}</div>`,
      '/name.html': `${M}{{% import {name} from '📤' }}{{🎨.ui-hello name}}`,
    });
  });
  after(() => s.close());

  it('renders strings, messages with arguments, plurals, booleans as sections, url() as its path, colors and numbers', async () => {
    const r = await s.get('/');
    assert.equal(r.status, 200);
    assert.equal(
      r.text,
      '<h1>Home</h1>\n<p>Hello, </p>\n<p>1 task, 3 tasks</p>\n<p>one two</p>\n<p>mode on</p><p>no legacy</p>\n<img src="/img/bg.png" alt="">\n<i>1.5 4px #336699</i>\n',
    );
  });

  it('passes view values as arguments', async () => {
    assert.equal((await s.get('/name')).text, 'Hello, Ada');
  });

  it('imports the properties as a namespace or by name, dashes kept; k=v pairs are named arguments', async () => {
    assert.equal((await s.get('/imports')).text, 'Home|mode|Added ‘Milk’|Hi Ada, from Paris');
  });

  it('escapes a formatted message like any value, also in triple braces', async () => {
    const expected = 'Hello, &lt;b&gt;Ada&lt;/b&gt; &amp; co';
    assert.equal((await s.get('/escape')).text, `${expected}|${expected}`);
  });

  it('gives HTML suppliers the 🎨 root too', async () => {
    assert.equal((await s.get('/supplied')).text, '<div>Added ‘Tea’</div>');
  });

  it('never serves the properties file', async () => {
    assert.equal((await s.get('/%F0%9F%8E%A8.scss')).status, 404);
  });
});

describe('properties in scripts', () => {
  let s: Served;
  const logged: Array<[string, Record<string, unknown>]> = [];
  before(async () => {
    s = await serve({
      '/🎛.yaml': 'name: Shop\nlocale: de-DE\n',
      '/🎨.scss': PROPERTIES,
      '/img/bg.png': 'png',
      '/all/GET.js': [
        "import * as P from '🎨';",
        '({',
        "  home: P.uiHome(), dashed: P['ui-home'](), add: P.successAdd('Milch'),",
        "  tasks: P.tasks(1234), greet: P.greet({name: 'Ada', place: 'Rom'}),",
        "  mode: P.myMode, legacy: P.legacy, ratio: P.ratio, gap: P.gap, color: P.brandColor, image: P.imageBackground,",
        "  kind: typeof P.uiHome",
        '})',
      ].join('\n'),
      '/named/GET.js': "import {successAdd, myMode, 'ui-home' as home} from '🎨';\n({text: successAdd('Tee'), mode: myMode, home: home()})",
      '/msg/GET.js': "import {Msg} from '🎨';\n({text: Msg.uiHome()})",
      '/missing/GET.js': "import * as P from '🎨';\n({text: P.uiHello()})",
      '/📤/Labels.js': "import {successAdd} from '🎨';\nconst label = successAdd('Brot');\nexport {label}",
      '/supplier/GET.js': "import {label} from '📤';\n({label})",
      '/📤/{}Format.js': "import {successAdd} from '🎨';\nconst added = (what) => successAdd(what);\nexport {added}",
      '/function/GET.js': "import {added} from '📤';\n({text: added('Jam')})",
    }, { log: (message, fields) => logged.push([message, fields]) });
  });
  after(() => s.close());

  it('reads properties in camelCase or by their dashed name; strings are functions, other values plain', async () => {
    const r = await s.get('/all');
    assert.equal(r.status, 200);
    assert.deepEqual(JSON.parse(r.text), {
      home: 'Home',
      dashed: 'Home',
      add: 'Added ‘Milch’',
      tasks: '1.234 tasks',
      greet: 'Hi Ada, from Rom',
      mode: true,
      legacy: false,
      ratio: 1.5,
      gap: '4px',
      color: '#336699',
      image: '/img/bg.png',
      kind: 'function',
    });
  });

  it('imports single properties by camelCase name or by the dashed name as a string', async () => {
    assert.deepEqual(JSON.parse((await s.get('/named')).text), { text: 'Added ‘Tee’', mode: true, home: 'Home' });
  });

  it('takes Msg as the namespace when no property has that name', async () => {
    assert.deepEqual(JSON.parse((await s.get('/msg')).text), { text: 'Home' });
  });

  it('lets suppliers and function suppliers format messages', async () => {
    assert.deepEqual(JSON.parse((await s.get('/supplier')).text), { label: 'Added ‘Brot’' });
    assert.deepEqual(JSON.parse((await s.get('/function')).text), { text: 'Added ‘Jam’' });
  });

  it('fails the request (500) when a message is called with too few arguments', async () => {
    const r = await s.get('/missing', { accept: 'application/json' });
    assert.equal(r.status, 500);
    assert.doesNotMatch(r.text, /🎨|argument/);
    const entry = logged.find(([, f]) => f.code === 'LW_SETTINGS_MESSAGE_ARGUMENTS');
    assert.equal(entry?.[0], '/missing/GET.js: the message $ui-hello of /🎨.scss takes 1 argument; 0 given');
  });
});

describe('properties in SCSS', () => {
  it('become Sass variables, messages and booleans included', async () => {
    const s = await serve({
      '/🎨.scss': PROPERTIES + "$quote: \"It''s #'{'x'}'\";\n",
      '/img/bg.png': 'png',
      '/site.scss': "@import '/🎨';\nh1 { color: $brand-color; margin: $gap * 2; background: $image-background; }\nh1::after { content: $ui-hello; }\nh2::after { content: $quote; }\n@if $my-mode { .mode { width: $ratio * 10px; } }\n@if $legacy { .legacy { x: y; } }\n",
    });
    try {
      const r = await s.get('/site.scss');
      assert.equal(r.status, 200);
      assert.equal(r.text, 'h1{color:#369;margin:8px;background:url("/img/bg.png")}h1::after{content:"Hello, {0}"}h2::after{content:"It\'s #{x}"}.mode{width:15px}');
    } finally {
      await s.close();
    }
  });

  it('keeps Sass errors in other files at their own line, and one in a value at its line in /🎨.scss', () => {
    const lines = diagnosticsOf({ '/🎨.scss': '$a: 1;\n\n$b: $nowhere;\n', '/x.scss': "@import '/🎨';\np { width: $b; }\n" }, 'LW_ASSET');
    assert.deepEqual(lines, ['🎨.scss:3:5: Sass: Undefined variable. (imported by /x.scss) [LW_ASSET_SCSS]']);
  });
});

describe('build errors', () => {
  it('reports an unknown property in a view at its tag, also through an alias and without a /🎨.scss', () => {
    assert.deepEqual(diagnosticsOf({ '/🎨.scss': "$ui-home: 'Home';\n$flag: true;\n", '/a.html': `${M}<p>\n  {{🎨.ui-hom}}</p>{{% import * as P from '🎨' }}{{#P.flg}}x{{/P.flg}}{{🎨.flag.x}}` }, 'LW_SETTINGS'), [
      'a.html:3:5: /🎨.scss defines no property "ui-hom"; it defines ui-home, flag [LW_SETTINGS_UNKNOWN_PROPERTY]',
      'a.html:3:51: /🎨.scss defines no property "flg"; it defines ui-home, flag [LW_SETTINGS_UNKNOWN_PROPERTY]',
      'a.html:3:71: 🎨.flag is a boolean property; it has no member "x" [LW_SETTINGS_UNKNOWN_PROPERTY]',
    ]);
    assert.deepEqual(diagnosticsOf({ '/a.html': `${M}{{🎨.title}}` }, 'LW_SETTINGS'), [
      'a.html:2:3: there is no property "title": the app has no /🎨.scss; define it there as $title: …; [LW_SETTINGS_UNKNOWN_PROPERTY]',
    ]);
  });

  it('reports a message called with the wrong arguments in a view', () => {
    assert.deepEqual(diagnosticsOf({ '/🎨.scss': "$hello: 'Hello, {0}';\n$home: 'Home';\n$hi: 'Hi {name}';\n", '/a.html': `${M}{{🎨.hello}}\n{{🎨.home 'x'}}\n{{🎨.hi}}\n{{% import {hello} from '🎨' }}{{hello}}` }, 'LW_SETTINGS'), [
      'a.html:2:3: the message 🎨.hello takes 1 argument ({0}); 0 given [LW_SETTINGS_MESSAGE_ARGUMENTS]',
      "a.html:3:3: the message 🎨.home takes no arguments; 1 given [LW_SETTINGS_MESSAGE_ARGUMENTS]",
      'a.html:4:3: the message 🎨.hi needs name=… [LW_SETTINGS_MESSAGE_ARGUMENTS]',
      'a.html:5:33: the message 🎨.hello takes 1 argument ({0}); 0 given [LW_SETTINGS_MESSAGE_ARGUMENTS]',
    ]);
  });

  it('reports an unknown imported name in a view and in a script, at the name', () => {
    const lines = diagnosticsOf({
      '/🎨.scss': "$success-add: 'Added {0}';\n",
      '/a.html': `${M}{{% import {success-ad} from '🎨' }}`,
      '/b/GET.js': "// names\nimport {successAdd, sucessAdd} from '🎨';\n1",
    });
    assert.deepEqual(lines, [
      'a.html:2:13: cannot import "success-ad" from \'🎨\': /🎨.scss defines no property "success-ad"; it defines success-add [LW_VIEW_IMPORT]',
      'b/GET.js:2:21: /🎨.scss defines no property "sucessAdd"; it defines success-add [LW_SCRIPT_IMPORT]',
    ]);
  });

  it('reports a malformed message at its line and column in /🎨.scss and does not load', () => {
    const dir = writeApp({ '/🎨.scss': "$ok: 'fine';\n\n$added: 'Added {0';\n", '/a.html': `${M}{{🎨.ok}}` });
    try {
      assert.throws(() => loadApp(dir), (e: Error) => {
        assert.match(e.message, /🎨\.scss:3:16: \$added is not a well-formed ICU message: an argument is not closed: add \} .*\[LW_SETTINGS_MESSAGE\]/);
        return true;
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reports a url() to a file the app does not serve', () => {
    assert.deepEqual(diagnosticsOf({ '/🎨.scss': '$a: url(/img/none.png);\n$b: url(/_img/p.png);\n', '/_img/p.png': 'x' }, 'LW_SETTINGS'), [
      '🎨.scss:1:5: url(/img/none.png) of $a does not exist: name a public file of the app [LW_SETTINGS_PROPERTY_URL]',
      '🎨.scss:2:5: url(/_img/p.png) of $b is private (a name starting with _ or .) and never served: name a public file of the app [LW_SETTINGS_PROPERTY_URL]',
    ]);
  });
});

describe('reload', () => {
  it('a changed /🎨.scss is read again by the next load: views, scripts and SCSS', async () => {
    const dir = writeApp({
      '/🎨.scss': "$title: 'First';\n$color: red;\n",
      '/index.html': `${M}{{🎨.title}}`,
      '/api/GET.js': "import {title} from '🎨';\n({title: title()})",
      '/s.scss': "@import '/🎨';\np { color: $color; }\n",
    });
    try {
      let s = await serve(dir);
      assert.equal((await s.get('/')).text, 'First');
      assert.equal((await s.get('/s.scss')).text, 'p{color:red}');
      await s.close();
      writeFileSync(join(dir, '🎨.scss'), "$title: 'Second';\n$color: blue;\n");
      s = await serve(dir);
      assert.equal((await s.get('/')).text, 'Second');
      assert.deepEqual(JSON.parse((await s.get('/api')).text), { title: 'Second' });
      assert.equal((await s.get('/s.scss')).text, 'p{color:blue}');
      await s.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
