/**
 * Mistakes that used to fail silently (docs/routing.md "File → URL") are reported at build time,
 * with the file, line and column and what to do. Each case loads a real app directory with
 * checkApp.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { checkApp, loadApp } from '../../src/app/index.js';
import { BuildError, type Diagnostic } from '../../src/diag/index.js';
import { serverImports } from '../../src/app/definitions/mistakes.js';
import { writeApp, type AppFiles } from '../helpers.js';

const dirs: string[] = [];
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function check(files: AppFiles): Diagnostic[] {
  const dir = writeApp(files);
  dirs.push(dir);
  return checkApp(dir);
}

function only(diagnostics: Diagnostic[], code: string): Diagnostic[] {
  return diagnostics.filter((d) => d.code === code);
}

const SERVER = 'LW_ROUTE_SERVER_CODE_AS_ASSET';
const VERB = 'LW_ROUTE_VERB_NAME_CASE';
const MARKER = 'LW_APP_MUSTACHE_WITHOUT_MARKER';
const UNAVAILABLE = 'LW_ROUTE_NOT_AVAILABLE';

describe('a public .js that is server code by its content but not by its name', () => {
  const cases: Array<{ path: string; source: string; at: [number, number]; module: string; names: RegExp }> = [
    { path: '/tasks/get.js', source: "import {Task} from '📦'\nTask.all()", at: [1, 20], module: '📦', names: /GET\.js \(GET \/tasks\) or 🖥get\.js \(GET \/tasks\/get\)/ },
    { path: '/tasks/post.js', source: "import {title} from 'form'\n'/tasks'", at: [1, 21], module: 'form', names: /POST\.js \(POST \/tasks\) or 📮post\.js \(POST \/tasks\/post\)/ },
    { path: '/tasks/Delete.js', source: "import {id} from '&'\n'/'", at: [1, 18], module: '&', names: /DELETE\.js \(DELETE \/tasks\) or ❌delete\.js/ },
    { path: '/tasks/put.js', source: "import {items} from 'form[]'\n'/'", at: [1, 21], module: 'form[]', names: /PUT\.js \(PUT \/tasks\)/ },
    { path: '/tasks/patch.js', source: "import {data} from 'form{}'\n'/'", at: [1, 20], module: 'form{}', names: /PUT\.js \(PUT \/tasks\) or POST\.js/ },
    { path: '/tasks/index.js', source: "// list\nimport {Notes} from '📤'\nNotes", at: [2, 21], module: '📤', names: /🖥index\.js \(GET \/tasks\/\)/ },
    { path: '/tasks/save.js', source: "import {title} from 'form'\nimport {ID} from 'util'\n'/'", at: [1, 21], module: 'form', names: /📮save\.js \(POST \/tasks\/save\) or 🖥save\.js \(GET \/tasks\/save\)/ },
    { path: '/list.js', source: 'import {ID} from "util"\n({id: ID.generate()})', at: [1, 18], module: 'util', names: /🖥list\.js \(GET \/list\) or 📮list\.js/ },
    { path: '/me.js', source: "import {Me} from '👤'\nMe", at: [1, 18], module: '👤', names: /🖥me\.js/ },
    { path: '/a/{id}/show.js', source: "import {id} from '🔗'\n({id})", at: [1, 18], module: '🔗', names: /🖥show\.js \(GET \/a\/\{id\}\/show\)/ },
    { path: '/c.js', source: "import {sid} from '🍪'\nsid", at: [1, 19], module: '🍪', names: /🖥c\.js/ },
    { path: '/shop.js', source: "import {Plan} from 'stripe.com'\nimport {Order} from '🛒'\n1", at: [2, 21], module: '🛒', names: /🖥shop\.js/ },
    { path: '/📤save.js', source: "import {x} from 'form'\n'/'", at: [1, 17], module: 'form', names: /📮save\.js/ },
    { path: '/x.mjs', source: "export {Notes} from '📤'", at: [1, 21], module: '📤', names: /🖥x\.js/ },
  ];
  for (const c of cases) {
    it(`is a build error: ${c.path}`, () => {
      const files: AppFiles = { [c.path]: c.source };
      if (c.path.includes('{id}')) files['/a/{id}/🔗.yaml'] = 'values: [a]\n';
      const errors = only(check(files), SERVER);
      assert.equal(errors.length, 1, JSON.stringify(errors));
      const [d] = errors;
      assert.equal(d!.severity, 'error');
      assert.equal(d!.file, c.path);
      assert.deepEqual([d!.line, d!.column], c.at, d!.message);
      assert.ok(d!.message.includes(`imports from '${c.module}'`), d!.message);
      assert.match(d!.message, /source would be public/);
      assert.match(d!.message, c.names);
    });
  }

  it('makes loadApp refuse the app, so the source is never served', () => {
    const dir = writeApp({ '/get.js': "import {Task} from '📦'\nTask.all()" });
    dirs.push(dir);
    assert.throws(() => loadApp(dir), (e) => e instanceof BuildError && /get\.js:1:20: .*LW_ROUTE_SERVER_CODE_AS_ASSET/.test(e.message));
  });

  it('falls back to a line-anchored pattern when the file does not parse', () => {
    const errors = only(check({ '/broken.js': "import {a} from 'form'\nconst x = (\n" }), SERVER);
    assert.deepEqual(errors.map((d) => [d.line, d.column]), [[1, 17]]);
    const jsx = only(check({ '/ui.js': "import {Me} from '👤'\nconst el = <div>{Me.name}</div>\n" }), SERVER);
    assert.deepEqual(jsx.map((d) => [d.line, d.column]), [[1, 18]]);
  });

  it('does not flag client modules', () => {
    const files: AppFiles = {
      '/js/app.js': "import {a} from './lib.js'\nimport {b} from '../x/ü.js'\nimport {c} from '/js/ñ.js'\nimport {d} from 'https://cdn.example/é.js'\nimport 'lit'\nexport {e} from './lib.js'\nconsole.log(a, b, c, d)\n",
      '/js/strings.js': "// an import of '📤' in a comment: import {x} from '📤'\nconst s = \"import {Task} from '📦'\"\nconst t = `from 'form'`\nexport {s, t}\n",
      '/js/classic.js': "with (Math) { var x = 'from \"📤\"' }\n",
      '/js/dynamic.js': "const m = import('./m.js')\n",
      '/js/lib.js': 'export const a = 1\n',
      '/js/ui/get.js': "import {a} from '../lib.js'\nexport {a}\n",
    };
    const diagnostics = check(files);
    assert.deepEqual(only(diagnostics, SERVER), []);
    // get.js without server imports is still suspicious: a warning, not an error.
    assert.deepEqual(only(diagnostics, VERB).map((d) => [d.file, d.severity]), [['/js/ui/get.js', 'warning']]);
  });

  it('does not flag private files, suppliers or real scripts', () => {
    const diagnostics = check({
      '/_lib/get.js': "import {Task} from '📦'\n1",
      '/GET.js': "import {Task} from '📦'\nTask",
      '/📮save.js': "import {title} from 'form'\n'/'",
      '/📤/Notes.js': "import {ID} from 'util'\nconst Notes = [ID.generate()]\nexport {Notes}",
      '/📤/deeper/helper.js': "import {ID} from 'util'\n1",
    });
    assert.deepEqual(only(diagnostics, SERVER), []);
    assert.deepEqual(only(diagnostics, VERB), []);
  });

  it('finds imports the way acorn sees them (unit)', () => {
    assert.deepEqual(serverImports("import {a} from 'form'\nimport * as M from \"📦\"\nimport {b} from './b.js'"), [
      { module: 'form', offset: 16 },
      { module: '📦', offset: 42 },
    ]);
    assert.deepEqual(serverImports("import {a}\n  from\n  '🍪'\n1").map((i) => i.module), ['🍪']);
    assert.deepEqual(serverImports("const s = 'from \"form\"'"), []);
  });
});

describe('odd content never breaks the checks', () => {
  it('loads apps with truncated, binary or unclosed content', () => {
    const diagnostics = check({
      '/a.js': Buffer.from([0x69, 0x6d, 0x70, 0x6f, 0x72, 0x74, 0x20, 0x27, 0xf0, 0x9f, 0x27, 0x00, 0xff, 0xfe]),
      '/b.js': "import {x} from 'form",
      '/c.js': 'export {' + ' '.repeat(5000) + "from '📤'",
      '/d.html': '<!-- never closed {{x}}\n<script>{{y}}',
      '/e.html': '{{#' + 'a'.repeat(3000) + ' '.repeat(3000) + '\n{{',
      '/f.html': Buffer.from([0x7b, 0x7b, 0xff, 0x7d, 0x7d]),
    });
    assert.deepEqual(only(diagnostics, SERVER).map((d) => d.file), ['/a.js', '/c.js']);
    assert.deepEqual(only(diagnostics, MARKER), []);
  });
});

describe('client .js files named like a verb in another case', () => {
  for (const name of ['get.js', 'post.js', 'put.js', 'delete.js', 'patch.js', 'Get.js', 'PATCH.js']) {
    it(`warns on ${name}`, () => {
      const diagnostics = check({ [`/api/${name}`]: 'document.title = "x"\n' });
      const warnings = only(diagnostics, VERB);
      assert.equal(warnings.length, 1);
      assert.equal(warnings[0]!.severity, 'warning');
      assert.equal(warnings[0]!.file, `/api/${name}`);
      const expected = name.toUpperCase() === 'PATCH.JS' ? /not PATCH.*PUT\.js \(PUT \/api\)/ : new RegExp(`upper case.*${name.slice(0, -3).toUpperCase()}\\.js \\(${name.slice(0, -3).toUpperCase()} /api\\)`);
      assert.match(warnings[0]!.message, expected);
      assert.deepEqual(diagnostics.filter((d) => d.severity === 'error'), []);
    });
  }

  it('does not warn on other client files or on real verb scripts', () => {
    const diagnostics = check({ '/js/getter.js': '1', '/js/app.js': '1', '/GET.js': '1', '/a/POST.js': '"/"' });
    assert.deepEqual(only(diagnostics, VERB), []);
  });
});

describe('🖱 scripts are not available yet', () => {
  it('refuses 🖱 (click actions) with what to write instead, but no longer ⏱ (server-sent events)', () => {
    const diagnostics = check({
      '/jobs/⏱build.js': '() => []\n',
      '/🖱verify.js': "'/'\n",
      '/_drafts/🖱later.js': '1\n',
    });
    const errors = only(diagnostics, UNAVAILABLE);
    assert.deepEqual(errors.map((d) => [d.file, d.severity]), [['/🖱verify.js', 'error']]);
    assert.match(errors[0]!.message, /click actions \(🖱\) are not available in this version of Laneway: .*GET \/verify.*📮verify\.js/);
    assert.deepEqual(diagnostics.filter((d) => d.file === '/jobs/⏱build.js'), []);
  });
});

describe('a plain .html page holding Mustache tags', () => {
  const cases: Array<[string, string, [number, number], RegExp]> = [
    ['a variable', '<!doctype html>\n<h1>{{title}}</h1>\n', [2, 5], /tag \{\{title\}\}/],
    ['a spaced variable', '<p>\n  Hello {{ user.name }}</p>', [2, 9], /\{\{ user\.name \}\}/],
    ['a section', '<ul>{{#items}}<li>x</li>{{/items}}</ul>', [1, 5], /\{\{#items\}\}/],
    ['an inverted section', '<p>{{^items}}none{{/items}}</p>', [1, 4], /\{\{\^items\}\}/],
    ['a partial', '<body>\n{{> _nav}}\n</body>', [2, 1], /\{\{> _nav\}\}/],
    ['a raw value', '<div>{{{ body }}}</div>', [1, 6], /\{\{\{ body \}\}\}/],
    ['only a pragma', "<!doctype html>\n{{% import {Notes} from '📤' }}\n<p>static</p>", [2, 1], /\{\{%/],
    ['an emoji name', '<p>{{🎨.brand}}</p>', [1, 4], /🎨\.brand/],
    ['a tag after a client script with braces', '<script>const t = "{{x}}"</script>\n<p>{{y}}</p>', [2, 4], /\{\{y\}\}/],
  ];
  for (const [name, source, at, tag] of cases) {
    it(`warns at the first tag: ${name}`, () => {
      const warnings = only(check({ '/page.html': source }), MARKER);
      assert.equal(warnings.length, 1);
      assert.equal(warnings[0]!.severity, 'warning');
      assert.deepEqual([warnings[0]!.line, warnings[0]!.column], at);
      assert.match(warnings[0]!.message, tag);
      assert.match(warnings[0]!.message, /add <!--TEMPLATE mustache--> as line 1/);
    });
  }

  it('warns on a misplaced or misspelled marker, at the marker', () => {
    for (const [source, at] of [
      ['<!doctype html>\n<!--TEMPLATE mustache-->\n<p>{{x}}</p>', [2, 1]],
      ['<!-- TEMPLATE mustache -->\n<p>hi</p>', [1, 1]],
      ['\n<!--template Mustache-->\n', [2, 1]],
    ] as Array<[string, [number, number]]>) {
      const warnings = only(check({ '/p.html': source }), MARKER);
      assert.equal(warnings.length, 1, source);
      assert.deepEqual([warnings[0]!.line, warnings[0]!.column], at);
      assert.match(warnings[0]!.message, /must be exactly <!--TEMPLATE mustache-->, alone on line 1/);
    }
  });

  it('warns for a plain ⚡NotFound.html too, but not for private pages', () => {
    const diagnostics = check({ '/⚡NotFound.html': '<p>{{path}}</p>', '/_part.html': '<p>{{x}}</p>' });
    assert.deepEqual(only(diagnostics, MARKER).map((d) => d.file), ['/⚡NotFound.html']);
  });

  it('does not warn on braces that are not Mustache tags, or on views', () => {
    const diagnostics = check({
      '/a.html': '<p>{ not a tag }</p><p>{{ a + b }}</p><p>{{}}</p><p>{{ f(x) }}</p><p>{x}</p>',
      '/b.html': '<!-- {{old}} -->\n<script type="text/x-tmpl">{{#list}}{{name}}{{/list}}</script>\n<style>a{{}}</style>\n<pre>{{name}}</pre><code>{{#s}}</code>\n<textarea>{{v}}</textarea>',
      '/c.html': '<!--TEMPLATE mustache-->\n<p>{{x}}</p>',
    });
    assert.deepEqual(only(diagnostics, MARKER), []);
  });
});
