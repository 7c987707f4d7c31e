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
