// Deep nesting (docs/views.md "At run time"): a template nesting thousands of sections, or partials
// nesting deeply, fails with a located error — a diagnostic, a TemplateSyntaxError or a RenderError
// — never a raw RangeError; 500 levels still render.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { compile, RenderError, TemplateSyntaxError, ViewRenderError } from '../../src/template/index.js';
import { build, MARKER, page } from './helpers.js';

const nested = (n: number, inner = 'x'): string => '{{#a}}'.repeat(n) + inner + '{{/a}}'.repeat(n);

describe('nesting limits', () => {
  it('renders 500 nested sections, in views and in the plain API, also iterating', async () => {
    assert.equal(compile(nested(500)).render({ a: [1] }), 'x');
    assert.equal(compile(nested(250, '{{^b}}'.repeat(250) + 'y' + '{{/b}}'.repeat(250))).render({ a: true, b: false }), 'y');
    const { view, messages } = build(page(`{{% import {a} from '📤' }}${nested(500)}`));
    assert.ok(view, messages.join('\n'));
    const sync = view.render({ importValue: () => [1], dev: false });
    assert.ok(!(sync instanceof Promise));
    assert.equal(sync.html, 'x');
    const later = await view.render({ importValue: () => Promise.resolve([Promise.resolve(1)]), dev: false });
    assert.equal(later.html, 'x');
  });

  it('refuses a 501st level at the tag that goes too deep, for every kind of container', () => {
    for (const [open, close] of [['{{#a}}', '{{/a}}'], ['{{^a}}', '{{/a}}'], ['{{$a}}', '{{/a}}']]) {
      const source = open!.repeat(2000) + 'x' + close!.repeat(2000);
      assert.throws(
        () => compile(source),
        (e: unknown) => e instanceof TemplateSyntaxError && e.line === 1 && e.column === 500 * open!.length + 1 && /may nest at most 500 levels/.test(e.message),
      );
      const { view, messages } = build(page(source));
      assert.equal(view, undefined);
      assert.deepEqual(
        messages.map((m) => m.replace(/: .*\[/, ' [')),
        [`page.html:2:${500 * open!.length + 1} [LW_VIEW_NESTING_DEPTH]`],
      );
    }
  });

  it('stops partials that nest too deeply with a RenderError, not a RangeError', () => {
    const loop = nested(400, '{{>loop}}');
    assert.throws(
      () => compile(loop, { partials: { loop } }).render({ a: [1] }),
      (e: unknown) => e instanceof RenderError && /nest too deeply|nest more than 200 deep/.test(e.message),
    );
  });

  it('reports such a render as a failure at a position in views', async () => {
    const loop = `${MARKER}{{% partial /_p/ }}{{% import {a} from '📤' }}${nested(400, '{{>loop}}')}`;
    const { view, messages } = build(page('{{% partial /_p/ }}{{>loop}}', { '/_p/loop.html': loop }));
    assert.ok(view, messages.join('\n'));
    for (const async of [false, true]) {
      const out = await view.render({ importValue: () => (async ? Promise.resolve([1]) : [1]), dev: false });
      assert.ok(out.failed instanceof ViewRenderError);
      assert.equal(out.failed.file, '/_p/loop.html');
      assert.ok(out.failed.cause instanceof RenderError, String(out.failed.cause));
      assert.doesNotMatch(out.failed.message, /RangeError/);
    }
  });

  it('loads a deeply nested data file without running out of stack', () => {
    const deep = '['.repeat(50_000) + ']'.repeat(50_000);
    const { view, messages } = build(page('{{% json /_j as j }}ok', { '/_j.json': deep }));
    assert.ok(view, messages.join('\n'));
  });
});
