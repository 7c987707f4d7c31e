// Run-time errors: rendering stops where a value fails, prints ⚠️ there, adds the details in an
// HTML comment only in development mode, reports file/line/column to onError, and never throws.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ViewRenderError } from '../../src/template/index.js';
import { build, MARKER, page } from './helpers.js';

interface Reported {
  file: string;
  line: number;
  column: number;
  error: unknown;
}

async function run(files: Record<string, string>, values: Record<string, unknown>, dev: boolean): Promise<{ html: string; failed?: ViewRenderError; reported: Reported[] }> {
  const { view, messages } = build(files);
  assert.ok(view, messages.join('\n'));
  const reported: Reported[] = [];
  const out = await view.render({ importValue: (_m, n) => values[n], dev, onError: (info) => reported.push(info) });
  return { ...out, reported };
}

const boom = (): never => {
  throw new Error('kaboom');
};

describe('run-time errors', () => {
  const files = page("{{% import {a} from '📤' }}<p>before</p>\n<p>{{a.broken}}</p>\n<p>after</p>");

  it('stops at the failing value and prints ⚠️ (production: no details)', async () => {
    const r = await run(files, { a: { broken: boom } }, false);
    assert.equal(r.html, '<p>before</p>\n<p>⚠️');
    assert.ok(r.failed instanceof ViewRenderError);
    assert.deepEqual([r.failed.file, r.failed.line, r.failed.column, (r.failed.cause as Error).message], ['/page.html', 3, 4, 'kaboom']);
    assert.equal(r.failed.message, '/page.html:3:4: Error: kaboom');
  });

  it('adds the details in an HTML comment in development mode', async () => {
    const r = await run(files, { a: { broken: boom } }, true);
    assert.equal(r.html, '<p>before</p>\n<p>⚠️<!-- /page.html:3:4: Error: kaboom -->');
  });

  it('reports the file, line and column to onError', async () => {
    const r = await run(files, { a: { broken: boom } }, false);
    assert.equal(r.reported.length, 1);
    const [e] = r.reported;
    assert.deepEqual([e!.file, e!.line, e!.column], ['/page.html', 3, 4]);
    assert.equal((e!.error as Error).message, 'kaboom');
  });

  it('never shows a stack trace', async () => {
    const r = await run(files, { a: { broken: boom } }, true);
    assert.doesNotMatch(r.html, /\bat .*:\d+:\d+\)/);
  });

  it('escapes -- so the message cannot close the comment', async () => {
    const r = await run(page("{{% import {a} from '📤' }}{{a}}"), { a: () => { throw new Error('x --> <script>alert(1)</script> ---'); } }, true);
    assert.equal(r.html, '⚠️<!-- /page.html:2:27: Error: x - -> <script>alert(1)</script> - - - -->');
    assert.equal(r.html.indexOf('-->'), r.html.length - 3);
  });

  it('reports an error inside a partial at the partial file', async () => {
    const withPartial = page("{{% partial /_p/ }}{{% import {L} from '📤' }}<ul>{{#L}}{{>row}}{{/L}}</ul>", { '/_p/row.html': `${MARKER}<li>{{name}}\n  {{check}}</li>` });
    const r = await run(withPartial, { L: [{ name: 'a', check: () => 'ok' }, { name: 'b', check: boom }] }, true);
    assert.equal(r.html, '<ul><li>a\n  ok</li><li>b\n  ⚠️<!-- /_p/row.html:3:3: Error: kaboom -->');
    assert.deepEqual([r.reported[0]!.file, r.reported[0]!.line, r.reported[0]!.column], ['/_p/row.html', 3, 3]);
  });

  it('handles a rejected Promise the same way', async () => {
    const r = await run(page("{{% import {a} from '📤' }}x{{#a}}y{{/a}}z"), { a: Promise.reject(new TypeError('no db')) }, true);
    assert.equal(r.html, 'x⚠️<!-- /page.html:2:28: TypeError: no db -->');
  });

  it('fails on arguments given to something that is not a function', async () => {
    const r = await run(page("{{% import {a} from '📤' }}{{a 1}}"), { a: 5 }, true);
    assert.equal(r.html, '⚠️<!-- /page.html:2:27: RenderError: "a" is not a function, so it cannot take arguments -->');
  });

  it('stops a partial that includes itself forever', async () => {
    const r = await run(page('{{% partial /_p/ }}{{>loop}}', { '/_p/loop.html': `${MARKER}{{% partial /_p/ }}.{{>loop}}` }), {}, false);
    assert.equal(r.html, '.'.repeat(200) + '⚠️');
    assert.match((r.reported[0]!.error as Error).message, /nest more than 200 deep/);
  });

  it('survives an onError hook that throws, and errors that are not Error objects', async () => {
    const { view } = build(page("{{% import {a} from '📤' }}{{a}}"));
    const out = await view!.render({
      dev: true,
      importValue: () => () => {
        throw 'plain string';
      },
      onError: () => {
        throw new Error('hook failed');
      },
    });
    assert.equal(out.html, '⚠️<!-- /page.html:2:27: plain string -->');
  });

  it('fails in Render-If and const evaluation without throwing', async () => {
    const r1 = await run(page("{{% import {V} from '📤' }}{{% Render-If V }}x"), { V: boom }, false);
    assert.equal(r1.html, '⚠️');
    assert.deepEqual([r1.reported[0]!.line, r1.reported[0]!.column], [2, 41]);
    const r2 = await run(page("{{% import {V} from '📤' }}{{% const x = V }}{{x}}"), { V: boom }, false);
    assert.equal(r2.html, '⚠️');
  });

  it('does not throw when importValue itself throws', async () => {
    const { view } = build(page("{{% import {a} from '📤' }}ok {{a}}"));
    const out = view!.render({
      dev: false,
      importValue: () => {
        throw new Error('no such supplier');
      },
    });
    assert.equal(out instanceof Promise, false);
    const { html, empty, failed } = out as Awaited<typeof out>;
    assert.deepEqual([html, empty, failed?.message], ['ok ⚠️', false, '/page.html:2:30: Error: no such supplier']);
  });
});
