/**
 * Views rendered as bytes (`bytes: true`, how pages answer HTTP requests): the output is written
 * to a Buffer while it grows (src/template/bytes.ts), and must be the UTF-8 of what the same
 * render gives as a string, whatever the size, the characters, the pauses for Promises or a failure.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { build, page, renderAsync, renderSync } from './helpers.js';

const ROWS = Array.from({ length: 3000 }, (_, i) => ({ id: i, name: i % 3 === 0 ? `Gadget "${i}" & co · €` : `Widget ${i} 😀`, tags: i % 4 === 0 ? ['new', 'sale'] : [] }));
const LIST = page("{{% import {rows} from '📤' }}" + '<h1>Prices · €</h1>\n{{#rows}}<tr id="r{{id}}"><td>{{name}}</td><td>{{#tags}}<b>{{.}}</b>{{/tags}}</td></tr>\n{{/rows}}<footer>© 2031</footer>\n');

describe('a view rendered as bytes', () => {
  it('gives the UTF-8 of the string render, for a page of many flushes with non-ASCII text', () => {
    const text = renderSync(LIST, { rows: ROWS });
    const bytes = renderSync(LIST, { rows: ROWS }, { bytes: true });
    assert.equal(bytes.html, '');
    assert.ok(Buffer.isBuffer(bytes.body));
    assert.ok(text.html.length > 100_000);
    assert.equal(bytes.body.toString('utf8'), text.html);
    assert.ok(bytes.body.equals(Buffer.from(text.html)));
  });

  it('gives the same bytes render after render of one view, larger and smaller than the one before', () => {
    const { view } = build(LIST);
    const input = (rows: unknown[]) => ({ importValue: (_m: string, n: string) => (n === 'rows' ? rows : undefined), dev: false, bytes: true });
    for (const n of [3000, 10, 3000, 6000, 0, 1500]) {
      const rows = ROWS.concat(ROWS).slice(0, n);
      const out = view!.render(input(rows));
      assert.ok(!(out instanceof Promise));
      const expected = renderSync(LIST, { rows });
      assert.equal(out.body!.toString('utf8'), expected.html, `${n} rows`);
    }
  });

  it('keeps the order of the output across values that are Promises', async () => {
    const rows = ROWS.map((r, i) => (i % 500 === 0 ? Promise.resolve(r) : r));
    const text = await renderAsync(LIST, { rows: ROWS });
    const bytes = await renderAsync(LIST, { rows }, { bytes: true });
    assert.equal(bytes.body!.toString('utf8'), text.html);
  });

  it('answers a failed render with the output so far as a string, ⚠️ where it stopped', () => {
    const bad = page("{{% import {rows} from '📤' }}" + '{{#rows}}<p>{{name}} {{#fail}}x{{/fail}}</p>\n{{/rows}}');
    const rows = ROWS.map((r, i) => ({ ...r, fail: i === 2500 ? () => { throw new Error('boom'); } : false }));
    // Without the failing value, the same page comes as bytes.
    assert.ok(Buffer.isBuffer(renderSync(bad, { rows: ROWS }, { bytes: true }).body));
    const text = renderSync(bad, { rows });
    const bytes = renderSync(bad, { rows }, { bytes: true });
    assert.ok(bytes.failed);
    assert.equal(bytes.body, undefined);
    assert.equal(bytes.html, text.html);
    assert.ok(bytes.html.endsWith('⚠️'));
    assert.ok(bytes.html.includes('Gadget &quot;2499&quot;'));
  });
});
