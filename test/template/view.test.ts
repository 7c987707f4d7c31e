// Laneway views: one test per pragma and per extension, each pinning the exact output.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { WebSafe } from '../../src/shared/index.js';
import { compileView, isTemplate, walkTemplate } from '../../src/template/index.js';
import { DiagnosticList } from '../../src/diag/index.js';
import { build, MARKER, memoryTree, page, renderSync } from './helpers.js';

const html = (files: Record<string, string>, values: Record<string, unknown> = {}, globals: Record<string, unknown> = {}, thisValue?: unknown): string =>
  renderSync(files, values, { globals }, thisValue).html;

describe('the template marker', () => {
  it('makes a file a view and is not emitted', () => {
    assert.equal(html({ '/page.html': `${MARKER}<p>hi</p>\n` }), '<p>hi</p>\n');
  });
  it('is recognised only on line 1', () => {
    assert.equal(isTemplate(`${MARKER}x`), true);
    assert.equal(isTemplate(`<!doctype html>\n${MARKER}`), false);
    assert.equal(isTemplate('<p>plain</p>'), false);
    assert.equal(isTemplate('<!--TEMPLATE mustache-->\r\n{{x}}'), true);
  });
  it('reports a view without it as LW_VIEW_NO_MARKER', () => {
    const { view, diagnostics } = build({ '/page.html': '<p>{{x}}</p>' });
    assert.equal(view, undefined);
    assert.deepEqual(
      diagnostics.items.map((d) => [d.code, d.file, d.line, d.column]),
      [['LW_VIEW_NO_MARKER', '/page.html', 1, 1]],
    );
  });
});

describe('comments', () => {
  it('may span several lines and wrap markup', () => {
    assert.equal(html(page('<p>a</p>\n{{!\n<p class="old">disabled</p>\n}}\n<p>b</p>\n')), '<p>a</p>\n<p>b</p>\n');
  });
});

describe('escaping', () => {
  it('escapes & < > " \' in {{ }}', () => {
    assert.equal(html(page("{{% import {x} from '📤' }}{{x}}"), { x: `&<>"'` }), '&amp;&lt;&gt;&quot;&#39;');
  });
  it('escapes a stored entity again (&amp; shows as &amp;amp;)', () => {
    assert.equal(html(page("{{% import {x} from '📤' }}{{x}}"), { x: '&amp;' }), '&amp;amp;');
  });
  it('prints numbers and booleans, and nothing for null and undefined', () => {
    assert.equal(html(page("{{% import {n, b, z, u} from '📤' }}{{n}} {{b}} [{{z}}{{u}}]"), { n: 1.5, b: false, z: null }), '1.5 false []');
  });
});

describe('unescaped output', () => {
  const values = { icon: new WebSafe('<svg id="i"/>'), text: '<b>bold</b>' };
  const files = page("{{% import {icon, text} from '📤' }}{{{icon}}}|{{& icon}}|{{% show icon }}|{{icon}}");
  it('{{{ }}}, {{& }} and show emit a web-safe value raw; {{ }} escapes it', () => {
    assert.equal(html(files, values), '<svg id="i"/>|<svg id="i"/>|<svg id="i"/>|&lt;svg id=&quot;i&quot;/&gt;');
  });
  it('escapes any other value, even in triple braces', () => {
    assert.equal(
      html(page("{{% import {text} from '📤' }}{{{text}}}|{{&text}}|{{% show text }}"), values),
      '&lt;b&gt;bold&lt;/b&gt;|&lt;b&gt;bold&lt;/b&gt;|&lt;b&gt;bold&lt;/b&gt;',
    );
  });
  it('warns when triple braces are used on data from a YAML file', () => {
    const { view, messages } = build(page('{{% yaml /_d as d }}{{{d.x}}}', { '/_d.yaml': 'x: <b>' }));
    assert.ok(view);
    assert.deepEqual(messages, ['page.html:2:21: warning: "d.x" is plain data, not web-safe markup; it will be escaped [LW_VIEW_RAW_NOT_WEB_SAFE]']);
  });
});

describe('partial pragma', () => {
  it('declares every file of a directory', () => {
    const files = page('{{% partial /_p/ }}{{>a}}|{{>b}}', { '/_p/a.html': `${MARKER}A`, '/_p/b.html': `${MARKER}B`, '/_p/notes.txt': 'x' });
    assert.equal(html(files), 'A|B');
  });
  it('declares a directory with a prefix (hyphen implied)', () => {
    assert.equal(html(page('{{% partial /_p/ as card }}{{>card-a}}', { '/_p/a.html': `${MARKER}A` })), 'A');
  });
  it('declares a single file (no .html), dropping a leading underscore', () => {
    assert.equal(html(page('{{% partial /auth/_prefetch }}{{>prefetch}}', { '/auth/_prefetch.html': `${MARKER}P` })), 'P');
  });
  it('declares a single file under an alias', () => {
    assert.equal(html(page('{{% partial /_p/long-name as s }}{{>s}}', { '/_p/long-name.html': `${MARKER}S` })), 'S');
  });
  it('renders a partial in the current context', () => {
    const files = page("{{% partial /_p/ }}{{% import {L} from '📤' }}{{#L}}{{>item}}{{/L}}", { '/_p/item.html': `${MARKER}<i>{{name}}</i>` });
    assert.equal(html(files, { L: [{ name: 'a' }, { name: 'b' }] }), '<i>a</i><i>b</i>');
  });
  it('indents every line of a standalone partial', () => {
    const files = page('<ul>\n  {{% partial /_p/ }}\n  {{>li}}\n</ul>\n', { '/_p/li.html': `${MARKER}<li>1</li>\n<li>2</li>\n` });
    assert.equal(html(files), '<ul>\n  <li>1</li>\n  <li>2</li>\n</ul>\n');
  });
  it('indents the first line of a partial that starts with a declaration or a comment', () => {
    const files = page('<div>\n  {{% partial /_p/ }}\n  {{>a}}\n</div>\n', { '/_p/a.html': `${MARKER}{{% const z = 'Z' }}{{! note }}<a>\n{{z}}\n</a>\n` });
    assert.equal(html(files), '<div>\n  <a>\n  Z\n  </a>\n</div>\n');
  });
  it('lets each partial declare its own imports and partials', () => {
    const files = page("{{% partial /_p/ }}{{>outer}}", {
      '/_p/outer.html': `${MARKER}{{% partial /_q/inner }}{{% import {who} from '📤' }}[{{who}} {{>inner}}]`,
      '/_q/inner.html': `${MARKER}inner`,
    });
    assert.equal(html(files, { who: 'me' }), '[me inner]');
  });
  it('chooses a partial by name at run time with {{>*name}}', () => {
    const files = page("{{% partial /_p/ }}{{% import {which} from '📤' }}{{>*which}}", { '/_p/a.html': `${MARKER}A`, '/_p/b.html': `${MARKER}B` });
    assert.equal(html(files, { which: 'b' }), 'B');
    assert.equal(html(files, { which: 'zzz' }), '');
  });
});

describe('layouts (parents and blocks)', () => {
  const layout = `${MARKER}<title>{{$title}}Default{{/title}}</title>\n<main>\n  {{$content}}\n  nothing\n  {{/content}}\n</main>\n`;
  it('fills the slots of /_layout with {{<layout}}', () => {
    const files = { '/page.html': `${MARKER}{{% partial /_layout }}\n{{<layout}}\n{{$title}}Home{{/title}}\n{{$content}}\n<p>Hi</p>\n{{/content}}\n{{/layout}}\n`, '/_layout.html': layout };
    assert.equal(html(files), '<title>Home</title>\n<main>\n  <p>Hi</p>\n</main>\n');
  });
  it('keeps the default content of blocks that are not overridden', () => {
    const files = { '/page.html': `${MARKER}{{% partial /_layout }}{{<layout}}{{/layout}}`, '/_layout.html': layout };
    assert.equal(html(files), '<title>Default</title>\n<main>\n  nothing\n</main>\n');
  });
  it('nests parents, the outermost override winning', () => {
    const files = {
      '/page.html': `${MARKER}{{% partial /_section }}{{<section}}{{$heading}}Page{{/heading}}{{/section}}`,
      '/_section.html': `${MARKER}{{% partial /_base }}{{<base}}{{$body}}<h2>{{$heading}}Section{{/heading}}</h2>{{/body}}{{/base}}`,
      '/_base.html': `${MARKER}<div>{{$body}}{{/body}}</div>`,
    };
    assert.equal(html(files), '<div><h2>Page</h2></div>');
  });
  it('declares layouts of a directory as prefix-name parents', () => {
    const files = page('{{% partial /_nav/ as nav }}{{<nav-layout}}{{$x}}X{{/x}}{{/nav-layout}}', { '/_nav/layout.html': `${MARKER}<nav>{{$x}}{{/x}}</nav>` });
    assert.equal(html(files), '<nav>X</nav>');
  });
});

describe('svg pragma', () => {
  const icons = { '/_icons/check.svg': '<?xml version="1.0" encoding="UTF-8"?>\n<svg viewBox="0 0 1 1"><path d="M0 0"/></svg>', '/_icons/x.svg': '<svg id="x"/>' };
  it('inlines every SVG of a directory as prefix-name, without the XML declaration', () => {
    assert.equal(html(page('{{% svg /_icons/ as icon }}<b>{{>icon-check}}</b>', icons)), '<b><svg viewBox="0 0 1 1"><path d="M0 0"/></svg></b>');
  });
  it('inlines a single SVG file under an alias', () => {
    assert.equal(html(page('{{% svg /_icons/x as close }}{{>close}}', icons)), '<svg id="x"/>');
  });
  it('lists SVG files among the view files', () => {
    const { view } = build(page('{{% svg /_icons/ as i }}{{>i-x}}', icons));
    assert.deepEqual(view!.files, ['/page.html', '/_icons/x.svg']);
    assert.deepEqual(view!.directories, ['/_icons/']);
  });
});

describe('yaml and json pragmas', () => {
  it('exposes a YAML file (extension omitted) as a variable', () => {
    const files = page('{{% yaml /_data/menu as menu }}{{#menu.items as item}}<a href="{{item.href}}">{{item.label}}</a>{{/menu.items}}', {
      '/_data/menu.yaml': 'items:\n  - {href: /, label: Home}\n  - {href: /about, label: About & us}\n',
    });
    assert.equal(html(files), '<a href="/">Home</a><a href="/about">About &amp; us</a>');
  });
  it('exposes a JSON file (extension omitted) as a variable', () => {
    assert.equal(html(page('{{% json /_data/site as site }}{{site.name}}', { '/_data/site.json': '{"name": "Shop"}' })), 'Shop');
  });
});

describe('import pragma', () => {
  it('makes imported values available, asking for each once per render', () => {
    const asked: string[] = [];
    const { view } = build(page("{{% import {A, B-c} from '📤' }}{{A}}{{A}} {{B-c}}"));
    const out = view!.render({ dev: false, importValue: (m, n) => (asked.push(`${m}:${n}`), n.toLowerCase()) });
    assert.deepEqual(out, { html: 'aa b-c', empty: false });
    assert.deepEqual(asked, ['📤:A', '📤:B-c']);
  });
  it('imports a namespace with * as', () => {
    const { view } = build(page("{{% import * as P from '🎨' }}{{P.color}}"));
    const out = view!.render({ dev: false, importValue: (m, n) => (m === '🎨' && n === '*' ? { color: 'red' } : undefined) });
    assert.equal((out as { html: string }).html, 'red');
  });
  it('lists the imports of the view and of the files it uses', () => {
    const { view } = build(page("{{% partial /_p/ }}{{% import {A} from '📤' }}{{>x}}", { '/_p/x.html': `${MARKER}{{% import {Task} from '📦' }}` }));
    assert.deepEqual(view!.imports, [
      { module: '📤', name: 'A', file: '/page.html' },
      { module: '📦', name: 'Task', file: '/_p/x.html' },
    ]);
  });
  it('passes every import to checkImport at compile time', () => {
    const seen: string[] = [];
    build(page("{{% import {A, B} from '📤' }}"), '/page.html', (m, n, f) => (seen.push(`${m} ${n} ${f}`), true));
    assert.deepEqual(seen, ['📤 A /page.html', '📤 B /page.html']);
  });
});

describe('const and default pragmas', () => {
  it('sets a page variable from a string or a path', () => {
    assert.equal(html(page("{{% import {user} from '📤' }}{{% const greeting = 'Hello' }}{{% const who = user.name }}{{greeting}} {{who}}"), { user: { name: 'Ada' } }), 'Hello Ada');
  });
  it("lets a page's const beat its layout's default", () => {
    const files = {
      '/page.html': `${MARKER}{{% partial /_layout }}\n{{% const title = 'Page title' }}\n{{<layout}}{{/layout}}`,
      '/_layout.html': `${MARKER}{{% default title = 'Site' }}{{% default lang = 'en' }}<html lang="{{lang}}"><title>{{title}}</title></html>`,
    };
    assert.equal(html(files), '<html lang="en"><title>Page title</title></html>');
  });
});

describe('year pragma', () => {
  it('prints the current year in UTC', () => {
    const { view } = build(page('© {{%year}}'));
    const out = view!.render({ dev: false, importValue: () => undefined, now: new Date('2030-12-31T23:30:00-05:00') });
    assert.equal((out as { html: string }).html, '© 2031');
  });
  it('accepts spaces around %', () => {
    assert.equal(html(page('{{ % year }}')), '2031');
  });
});

describe('Render-If pragma', () => {
  const files = page("{{% import {Visible} from '📤' }}\n{{% Render-If Visible }}\n<div>fragment</div>\n");
  it('renders normally when the variable is truthy', () => {
    assert.deepEqual(renderSync(files, { Visible: true }), { html: '<div>fragment</div>\n', empty: false });
  });
  it('answers an empty body when the variable is falsy', () => {
    assert.deepEqual(renderSync(files, { Visible: false }), { html: '', empty: true });
    assert.deepEqual(renderSync(files, { Visible: [] }), { html: '', empty: true });
  });
});

describe('Cache-Control-Seconds pragma', () => {
  it('exposes a literal number', () => {
    const { view } = build(page('{{% Cache-Control-Seconds 300 }}x'));
    assert.deepEqual(view!.cacheSeconds, { literal: 300 });
    assert.deepEqual(renderSync(page('{{% Cache-Control-Seconds 300 }}x')), { html: 'x', empty: false, cacheSeconds: 300 });
  });
  it('resolves a variable at render time', () => {
    const files = page("{{% import {MaxAge} from '📤' }}{{% Cache-Control-Seconds MaxAge }}x");
    assert.deepEqual(build(files).view!.cacheSeconds, { variable: 'MaxAge' });
    assert.deepEqual(renderSync(files, { MaxAge: 60 }), { html: 'x', empty: false, cacheSeconds: 60 });
  });
  it('takes the value from the layout when the page has none', () => {
    const files = { '/page.html': `${MARKER}{{% partial /_layout }}{{<layout}}{{/layout}}`, '/_layout.html': `${MARKER}{{% Cache-Control-Seconds 5 }}L` };
    assert.deepEqual(build(files).view!.cacheSeconds, { literal: 5 });
  });
});

describe('string choice utilities', () => {
  it('choose-string-map maps inputs, * capturing the input', () => {
    const files = page("{{% choose-string-map cls error=is-danger *=is-* }}{{% import {L} from '📤' }}{{#L}}<p class=\"{{% choose-string cls this.type }}\"></p>{{/L}}");
    assert.equal(html(files, { L: [{ type: 'error' }, { type: 'info' }] }), '<p class="is-danger"></p><p class="is-info"></p>');
  });
  it('choose-string-json allows spaces in outputs', () => {
    const files = page('{{% choose-string-json cls {"error": "tag is-danger", "*": "tag is-*"} }}{{% import {t} from \'📤\' }}{{% choose-string cls t }}');
    assert.equal(html(files, { t: 'error' }), 'tag is-danger');
    assert.equal(html(files, { t: 'ok' }), 'tag is-ok');
  });
  it('prints nothing without a match or a * case, and escapes the output', () => {
    const files = page("{{% choose-string-map m a=x }}{{% import {t} from '📤' }}[{{% choose-string m t }}]");
    assert.equal(html(files, { t: 'b' }), '[]');
    const star = page("{{% choose-string-map m *=* }}{{% import {t} from '📤' }}{{% choose-string m t }}");
    assert.equal(html(star, { t: '<x>' }), '&lt;x&gt;');
  });
});

describe('show pragma', () => {
  it('emits a web-safe value such as an identicon unescaped', () => {
    assert.equal(html(page("{{% import {Identicon} from '📤' }}{{% show Identicon }}"), { Identicon: new WebSafe('<svg/>') }), '<svg/>');
  });
});

describe('lorem and PWA pragmas', () => {
  it('prints placeholder text', () => {
    assert.equal(html(page('<h1>{{% lorem-title }}</h1>')), '<h1>Lorem ipsum dolor sit amet</h1>');
  });
  it('exposes Network-First as the strategy', () => {
    assert.equal(build(page('{{% Network-First }}x')).view!.strategy, 'Network-First');
  });
});

describe('iteration extensions', () => {
  it('as renames the element', () => {
    assert.equal(html(page("{{% import {L} from '📤' }}{{#L as item}}{{item.n}};{{/L}}"), { L: [{ n: 1 }, { n: 2 }] }), '1;2;');
  });
  it('as on a non-list value binds it once', () => {
    assert.equal(html(page("{{% import {D} from '📤' }}{{#D as deploy}}{{deploy.region}}{{/D}}"), { D: { region: 'eu' } }), 'eu');
  });
  it('by N as group iterates in groups of N', () => {
    const files = page("{{% import {L} from '📤' }}{{#L by 3 as row}}<tr>{{#row as cell}}<td>{{cell}}</td>{{/row}}</tr>{{/L}}");
    assert.equal(html(files, { L: [1, 2, 3, 4, 5] }), '<tr><td>1</td><td>2</td><td>3</td></tr><tr><td>4</td><td>5</td></tr>');
  });
  it('$first and $last are true for the first and last element', () => {
    const files = page("{{% import {L} from '📤' }}{{#L}}{{#$first}}[{{/$first}}{{.}}{{^$last}}, {{/$last}}{{#$last}}]{{/$last}}{{/L}}");
    assert.equal(html(files, { L: ['a', 'b', 'c'] }), '[a, b, c]');
  });
  it('alias$first and alias$last refer to the aliased iteration', () => {
    const files = page("{{% import {L} from '📤' }}{{#L as row}}{{#row.cells as c}}{{#row$first}}F{{/row$first}}{{#c$last}}L{{/c$last}}{{c}} {{/row.cells}}{{/L}}");
    assert.equal(html(files, { L: [{ cells: [1, 2] }, { cells: [3] }] }), 'F1 FL2 L3 ');
  });
  it('$any and $all test several values', () => {
    const files = page("{{% import {a, b} from '📤' }}{{#$any a b}}any {{/$any}}{{#$all a b}}all {{/$all}}{{^$all a b}}not-all{{/$all}}");
    assert.equal(html(files, { a: 'x', b: '' }), 'any not-all');
    assert.equal(html(files, { a: 1, b: [1] }), 'any all ');
    assert.equal(html(files, { a: 0, b: [] }), 'not-all');
  });
  it('this is the current element, for string lists too', () => {
    assert.equal(html(page("{{% import {L} from '📤' }}{{#L}}<{{this}}>{{/L}}"), { L: ['x', 'y'] }), '<x><y>');
  });
  it('iterates other iterables (Set, generators)', () => {
    function* gen(): Generator<number> {
      yield 1;
      yield 2;
    }
    const files = page("{{% import {S, G} from '📤' }}{{#S}}{{.}}{{/S}}|{{#G}}{{.}}{{/G}}|{{^E}}empty{{/E}}");
    assert.equal(html(files, { S: new Set(['a', 'b']), G: gen(), E: new Set() }), 'ab|12|empty');
  });
});

describe('expressions', () => {
  it('reads segments with hyphens and emoji roots', () => {
    assert.equal(html(page('{{🎨.start-year}} {{og.contact-result.title}}'), {}, { '🎨': { 'start-year': 2020 }, og: { 'contact-result': { title: 'T' } } }), '2020 T');
  });
  it('calls zero-argument methods along a path', () => {
    const article = { get: () => ({ content: { html: () => 'body' } }) };
    assert.equal(html(page("{{% import {article} from '📤' }}{{article.get.content.html}}"), { article }), 'body');
  });
  it('reads a static member of a function rather than calling it (Task.all)', () => {
    class Task {
      static all(): string[] {
        return ['t1', 't2'];
      }
    }
    assert.equal(html(page("{{% import {Task} from '📤' }}{{#Task.all}}{{.}} {{/Task.all}}"), { Task }), 't1 t2 ');
  });
  it('binds methods to the object they are read from', () => {
    const user = { first: 'Ada', full(): string { return `${this.first} L.`; } };
    assert.equal(html(page("{{% import {user} from '📤' }}{{user.full}}"), { user }), 'Ada L.');
  });
  it('calls the last segment with trailing positional arguments', () => {
    const props = { 'login-with': (p: string) => `Log in with ${p}` };
    assert.equal(html(page("{{% import {provider} from '📤' }}{{🎨.login-with provider.name}}"), { provider: { name: 'GitHub' } }, { '🎨': props }), 'Log in with GitHub');
  });
  it('builds one object argument from k=v pairs', () => {
    const article = { html: (o: object) => new WebSafe(JSON.stringify(o)) };
    const files = page("{{% import {article} from '📤' }}{{{ article.html minimumHeaderLevel=2\n  h2='title is-size-4' }}}");
    assert.equal(html(files, { article }), '{"minimumHeaderLevel":2,"h2":"title is-size-4"}');
  });
  it('iterates the result of a call in a section, with as', () => {
    const Note = { list: (l: string) => [`${l}1`, `${l}2`] };
    assert.equal(html(page("{{% import {Note, list} from '📤' }}{{#Note.list list as note}}[{{note}}]{{/Note.list}}"), { Note, list: 'n' }), '[n1][n2]');
  });
  it('shows an inverted section when a call result is empty', () => {
    const Post = { all: (): unknown[] => [] };
    assert.equal(html(page("{{% import {Post} from '📤' }}{{^Post.all}}no posts{{/Post.all}}"), { Post }), 'no posts');
  });
  it('never reaches built-ins such as constructor or Array methods', () => {
    const files = page("{{% import {L} from '📤' }}[{{L.constructor}}][{{L.pop}}][{{L.constructor.constructor}}][{{L.length}}]");
    const L = [1, 2];
    assert.equal(html(files, { L }), '[][][][2]');
    assert.deepEqual(L, [1, 2]);
  });
});

describe('HTML supplier calls', () => {
  const ItemDIV = (arg: unknown): WebSafe => new WebSafe(`<div>${JSON.stringify(arg)}</div>`);
  it('passes a positional argument', () => {
    assert.equal(html(page("{{% import {ItemDIV, item} from '📤' }}{{{ ItemDIV item }}}"), { ItemDIV, item: { id: 1 } }), '<div>{"id":1}</div>');
  });
  it('passes name=value pairs as one object', () => {
    assert.equal(html(page("{{% import {ItemDIV} from '📤' }}{{{ ItemDIV item=1 content='Example' }}}"), { ItemDIV }), '<div>{"item":1,"content":"Example"}</div>');
  });
  it('renders a supplier view with its argument as this', () => {
    const files = page('<div>{{#this as pv}}{{pv.content}}{{/this}} {{content}}</div>');
    assert.equal(html(files, {}, {}, { content: 'Example' }), '<div>Example Example</div>');
  });
});

describe('values available without import', () => {
  it('reads 🎨 properties and Messages from globals, and flags Messages pages', () => {
    const files = page('{{🎨.color}}{{#Messages.all}} {{.}}{{/Messages.all}}');
    assert.equal(html(files, {}, { '🎨': { color: 'red' }, Messages: { all: ['saved'] } }), 'red saved');
    assert.equal(build(files).view!.usesMessages, true);
    assert.equal(build(page('{{x}}')).view!.usesMessages, false);
  });
});

describe('the compiled view', () => {
  it('keeps the parse tree of every file, for later passes', () => {
    const { view } = build(page('{{% partial /_p/ }}<script>var x = "{{x}}";</script>{{>a}}', { '/_p/a.html': `${MARKER}<style>p{}</style>` }));
    assert.deepEqual(
      view!.templates.map((t) => t.file),
      ['/page.html', '/_p/a.html'],
    );
    const kinds: string[] = [];
    walkTemplate(view!.templates[0]!.nodes, (n) => kinds.push(n.type));
    assert.deepEqual(kinds, ['text', 'var', 'text', 'partial']);
  });
  it('compiles a partial shared by two views once, reporting its problems once', () => {
    const files = {
      '/a.html': `${MARKER}{{% partial /_p/ }}{{>bad}}`,
      '/b.html': `${MARKER}{{% partial /_p/ }}{{>bad}}`,
      '/_p/bad.html': `${MARKER}{{#x}}`,
    };
    const diagnostics = new DiagnosticList();
    const tree = memoryTree(files);
    assert.equal(compileView('/a.html', files['/a.html']!, { tree, diagnostics }), undefined);
    assert.equal(compileView('/b.html', files['/b.html']!, { tree, diagnostics }), undefined);
    assert.deepEqual(
      diagnostics.items.map((d) => `${d.file}:${d.line}:${d.column} ${d.code}`),
      ['/_p/bad.html:2:1 LW_VIEW_UNCLOSED_SECTION'],
    );
  });
});
