// The plain Mustache API (`laneway/template`): behaviour beyond the official spec suite.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { compile, RenderError, TemplateSyntaxError } from '../../src/template/index.js';

describe('compile (plain Mustache)', () => {
  it('renders without a marker line and prints {{{ }}} strings raw', () => {
    assert.equal(compile('<p>{{a}} {{{a}}} {{&a}}</p>').render({ a: '<b>' }), '<p>&lt;b&gt; <b> <b></p>');
  });

  it('uses compile-time partials, and render-time partials added or replacing them', () => {
    const t = compile('[{{>x}}|{{>y}}]', { partials: { x: 'X{{n}}', y: 'Y' } });
    assert.equal(t.render({ n: 1 }), '[X1|Y]');
    assert.equal(t.render({ n: 1 }, { y: 'Z' }), '[X1|Z]');
    assert.equal(t.render({ n: 1 }), '[X1|Y]');
  });

  it('renders a missing partial as nothing', () => {
    assert.equal(compile('a{{>nope}}b').render({}), 'ab');
  });

  it('supports parents and blocks from partials', () => {
    const t = compile('{{<page}}{{$title}}Hi{{/title}}{{/page}}', { partials: { page: '<h1>{{$title}}?{{/title}}</h1>' } });
    assert.equal(t.render({}), '<h1>Hi</h1>');
  });

  it('a parent called inside an override takes its own arguments (blocks are scoped where they are written)', () => {
    // The marketing site's features page: a section whose items block calls an item parent, both
    // with a block named id. Each item shows its own id, not its section's.
    const partials = {
      section: '<section id="{{$id}}{{/id}}">{{$title}}{{/title}}:{{$items}}{{/items}}</section>',
      item: '<div id="{{$id}}{{/id}}">{{$title}}{{/title}}</div>',
    };
    const t = compile(
      '{{<section}}{{$id}}dev{{/id}}{{$title}}Develop{{/title}}{{$items}}{{<item}}{{$id}}files{{/id}}{{$title}}Files{{/title}}{{/item}}{{<item}}{{$id}}git{{/id}}{{/item}}{{/items}}{{/section}}',
      { partials },
    );
    assert.equal(t.render({}), '<section id="dev">Develop:<div id="files">Files</div><div id="git"></div></section>');
    // Overrides from further out still win over a parent's own (the spec's multi-level rule).
    const chain = compile('{{<page}}{{$a}}child{{/a}}{{/page}}', { partials: { page: '{{<base}}{{$a}}page{{/a}}{{/base}}', base: '[{{$a}}base{{/a}}]' } });
    assert.equal(chain.render({}), '[child]');
    // An override sees the overrides of the template that wrote it, not those given beside it to
    // the parent it fills: x is outer's argument, not inner's.
    const nested = compile('{{<outer}}{{$slot}}{{<inner}}{{/inner}}{{/slot}}{{$x}}X{{/x}}{{/outer}}', {
      partials: { outer: '({{$slot}}{{/slot}}{{$x}}{{/x}})', inner: '<{{$x}}inner default{{/x}}>' },
    });
    assert.equal(nested.render({}), '(<inner default>X)');
  });

  it('has no Laneway pragmas: {{%x}} is an ordinary name', () => {
    assert.equal(compile('{{%year}}').render({ '%year': 'y' }), 'y');
  });

  it('calls lambdas as the spec describes', () => {
    const t = compile('{{#wrap}}{{name}}{{/wrap}} {{upper}}');
    assert.equal(t.render({ name: 'ada', wrap: (text: string) => `<b>${text}</b>`, upper: () => '{{name}}!' }), '<b>ada</b> ada!');
  });

  it('stays synchronous with Promises in the data (treated as objects)', () => {
    const out = compile('{{#p}}x{{/p}}{{^p}}y{{/p}}{{#l}}[{{.}}]{{/l}}').render({ p: Promise.resolve(1), l: [Promise.resolve(2)] });
    assert.equal(out, 'x[[object Promise]]');
  });

  it('throws TemplateSyntaxError with line and column', () => {
    assert.throws(
      () => compile('ok\n  {{#list}}\n'),
      (e: unknown) => e instanceof TemplateSyntaxError && e.line === 2 && e.column === 3 && e.message === 'section "list" is never closed; add {{/list}} (2:3)',
    );
  });

  it('throws a RenderError for a partial that includes itself without end', () => {
    assert.throws(() => compile('{{>me}}', { partials: { me: '.{{>me}}' } }).render({}), RenderError);
  });

  it('never reaches built-ins from a template', () => {
    assert.equal(compile('[{{constructor}}][{{a.constructor.name}}][{{a.toString}}]').render({ a: {} }), '[][][]');
  });
});
