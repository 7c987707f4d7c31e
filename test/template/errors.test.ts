// Compile-time errors of views: every problem is reported (all in one run) with its code, the
// file it is in, and its line and column.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { compile, TemplateSyntaxError } from '../../src/template/index.js';
import { build, MARKER, page } from './helpers.js';

type Row = [code: string, file: string, line: number, column: number];

/** The diagnostics of compiling /page.html, as [code, file, line, column] rows. */
function problems(files: Record<string, string>, checkImport?: (m: string, n: string, f: string) => true | string): { ok: boolean; rows: Row[]; messages: string[] } {
  const { view, diagnostics, messages } = build(files, '/page.html', checkImport);
  return { ok: view !== undefined, rows: diagnostics.sorted().map((d) => [d.code, d.file, d.line, d.column]), messages };
}

describe('compile-time errors', () => {
  it('reports an unknown partial name', () => {
    const r = problems(page('<p>\n  {{> nope}}\n</p>'));
    assert.equal(r.ok, false);
    assert.deepEqual(r.rows, [['LW_VIEW_UNKNOWN_PARTIAL', '/page.html', 3, 3]]);
  });

  it('reports an unknown SVG name', () => {
    const r = problems(page('{{% svg /_icons/ as icon }}\n<b>{{>icon-missing}}</b>', { '/_icons/check.svg': '<svg/>' }));
    assert.deepEqual(r.rows, [['LW_VIEW_UNKNOWN_PARTIAL', '/page.html', 3, 4]]);
    assert.match(r.messages[0]!, /declared: icon-check/);
  });

  it('reports missing partial, layout, SVG, YAML and JSON files', () => {
    const r = problems(
      page('{{% partial /_p/none }}\n{{% partial /_nodir/ }}\n{{% svg /_i/gone as g }}\n{{% yaml /_d/none as a }}\n{{% json /_d/none as b }}\n'),
    );
    assert.equal(r.ok, false);
    assert.deepEqual(r.rows, [
      ['LW_VIEW_MISSING_FILE', '/page.html', 2, 13],
      ['LW_VIEW_MISSING_FILE', '/page.html', 3, 13],
      ['LW_VIEW_MISSING_FILE', '/page.html', 4, 9],
      ['LW_VIEW_MISSING_FILE', '/page.html', 5, 10],
      ['LW_VIEW_MISSING_FILE', '/page.html', 6, 10],
    ]);
  });

  it('only warns about a missing SVG directory', () => {
    const r = problems(page('{{% svg /icons/ as i }}ok'));
    assert.equal(r.ok, true);
    assert.deepEqual(r.rows, [['LW_VIEW_SVG_DIR_MISSING', '/page.html', 2, 9]]);
  });

  it('reports data files that do not parse, in the data file and at the pragma', () => {
    const r = problems(page('{{% yaml /_d/x as x }}\n{{% json /_d/y as y }}', { '/_d/x.yaml': 'a: [1\nb: 2\n', '/_d/y.json': '{"a": }' }));
    assert.deepEqual(r.rows, [
      ['LW_VIEW_DATA_PARSE', '/_d/x.yaml', 2, 1],
      ['LW_VIEW_DATA_PARSE', '/_d/y.json', 1, 1],
      ['LW_VIEW_DATA_PARSE', '/page.html', 2, 10],
      ['LW_VIEW_DATA_PARSE', '/page.html', 3, 10],
    ]);
  });

  it('reports malformed and unknown pragmas', () => {
    const r = problems(page("{{% partial }}\n{{% import A from '📤' }}\n{{% yaml /_d }}\n  {{% frobnicate x }}\n{{% by-the-way }}"));
    assert.deepEqual(r.rows, [
      ['LW_VIEW_PRAGMA_SYNTAX', '/page.html', 2, 12],
      ['LW_VIEW_PRAGMA_SYNTAX', '/page.html', 3, 12],
      ['LW_VIEW_PRAGMA_SYNTAX', '/page.html', 4, 10],
      ['LW_VIEW_UNKNOWN_PRAGMA', '/page.html', 5, 7],
      ['LW_VIEW_UNKNOWN_PRAGMA', '/page.html', 6, 5],
    ]);
  });

  it('reports by outside 1..10', () => {
    const r = problems(page("{{% import {L} from '📤' }}\n{{#L by 11 as g}}{{/L}}\n{{#L by 0 as g}}{{/L}}\n{{#L by 10 as g}}{{/L}}"));
    assert.deepEqual(r.rows, [
      ['LW_VIEW_BY_RANGE', '/page.html', 3, 9],
      ['LW_VIEW_BY_RANGE', '/page.html', 4, 9],
    ]);
  });

  it('reports unclosed sections', () => {
    const r = problems(page('<ul>\n{{#items}}\n  <li>{{^empty}}x</li>\n'));
    assert.deepEqual(r.rows, [
      ['LW_VIEW_UNCLOSED_SECTION', '/page.html', 3, 1],
      ['LW_VIEW_UNCLOSED_SECTION', '/page.html', 4, 7],
    ]);
  });

  it('reports mismatched and stray closing tags', () => {
    const r = problems(page('{{#a}}{{#b}}\n{{/a}}{{/b}}\n{{/c}}'));
    assert.deepEqual(r.rows, [
      ['LW_VIEW_MISMATCHED_SECTION', '/page.html', 3, 1],
      ['LW_VIEW_UNEXPECTED_CLOSE', '/page.html', 4, 1],
    ]);
    assert.match(r.messages[0]!, /does not match the open section "b" \(opened at 2:7\)/);
  });

  it('reports a block override the parent does not define', () => {
    const files = {
      '/page.html': `${MARKER}{{% partial /_layout }}\n{{<layout}}\n  {{$title}}T{{/title}}\n  {{$sidebar}}S{{/sidebar}}\n{{/layout}}\n`,
      '/_layout.html': `${MARKER}<title>{{$title}}{{/title}}</title>{{$content}}{{/content}}`,
    };
    const r = problems(files);
    assert.deepEqual(r.rows, [['LW_VIEW_UNKNOWN_BLOCK', '/page.html', 5, 6]]);
    assert.match(r.messages[0]!, /it defines: title, content/);
  });

  it('accepts overrides of blocks defined further up a chain of parents', () => {
    const files = {
      '/page.html': `${MARKER}{{% partial /_a }}{{<a}}{{$deep}}D{{/deep}}{{/a}}`,
      '/_a.html': `${MARKER}{{% partial /_b }}{{<b}}{{/b}}`,
      '/_b.html': `${MARKER}[{{$deep}}{{/deep}}]`,
    };
    assert.deepEqual(problems(files).rows, []);
  });

  it('reports a partial without the marker at the place it is used', () => {
    const r = problems(page('{{% partial /_p/ }}\n\n{{>plain}}', { '/_p/plain.html': '<p>not a template</p>' }));
    assert.deepEqual(r.rows, [['LW_VIEW_PARTIAL_NO_MARKER', '/page.html', 4, 1]]);
  });

  it('reports an import that no module in scope provides', () => {
    const r = problems(page("{{% import {Known, Unknown} from '📤' }}"), (_m, n) => (n === 'Unknown' ? 'no supplier in scope exports it' : true));
    assert.deepEqual(r.rows, [['LW_VIEW_IMPORT', '/page.html', 2, 20]]);
    assert.match(r.messages[0]!, /cannot import "Unknown" from '📤': no supplier in scope exports it/);
  });

  it('reports problems inside a partial in the partial file', () => {
    const r = problems(page('{{% partial /_p/ }}{{>row}}', { '/_p/row.html': `${MARKER}<tr>\n  {{#cells}}<td>` }));
    assert.deepEqual(r.rows, [['LW_VIEW_UNCLOSED_SECTION', '/_p/row.html', 3, 3]]);
  });

  it('reports every problem of a load in one run', () => {
    const r = problems(
      page("{{% partial /_p/ }}\n{{>nope}}\n{{#L by 99 as g}}{{/L}}\n{{% import {X} from '📤' }}\n{{/stray}}\n{{{a b=}}}", { '/_p/x.html': `${MARKER}{{#open}}` }),
      () => 'unknown',
    );
    assert.deepEqual(r.rows, [
      ['LW_VIEW_UNKNOWN_PARTIAL', '/page.html', 3, 1],
      ['LW_VIEW_BY_RANGE', '/page.html', 4, 9],
      ['LW_VIEW_IMPORT', '/page.html', 5, 13],
      ['LW_VIEW_UNEXPECTED_CLOSE', '/page.html', 6, 1],
      ['LW_VIEW_EXPRESSION', '/page.html', 7, 8],
    ]);
  });

  it('reports malformed tags and expressions', () => {
    const r = problems(page('{{a..b}} {{x y=}}\n{{=<% %>=}}<%={{ }}=%>{{= x =}}\nabc {{ oops'));
    assert.deepEqual(r.rows, [
      ['LW_VIEW_EXPRESSION', '/page.html', 2, 3],
      ['LW_VIEW_EXPRESSION', '/page.html', 2, 16],
      ['LW_VIEW_TAG_SYNTAX', '/page.html', 3, 23],
      ['LW_VIEW_TAG_SYNTAX', '/page.html', 4, 5],
    ]);
  });

  it('reports choose-string with an undeclared map', () => {
    assert.deepEqual(problems(page('{{% choose-string cls x }}')).rows, [['LW_VIEW_UNKNOWN_CHOICE', '/page.html', 2, 1]]);
  });

  it('reports Render-If on an undeclared variable, and Render-If in a partial', () => {
    assert.deepEqual(problems(page('{{% Render-If Visible }}')).rows, [['LW_VIEW_RENDER_IF_UNDEFINED', '/page.html', 2, 15]]);
    const r = problems(page('{{% partial /_p/ }}{{>a}}', { '/_p/a.html': `${MARKER}{{% import {V} from '📤' }}{{% Render-If V }}` }));
    assert.deepEqual(r.rows, [['LW_VIEW_PRAGMA_PLACEMENT', '/_p/a.html', 2, 41]]);
  });

  it('reports names declared twice', () => {
    const r = problems(page("{{% partial /_a/x }}\n{{% partial /_b/x }}\n{{% import {v} from '📤' }}{{% yaml /_d as v }}", { '/_a/x.html': MARKER, '/_b/x.html': MARKER, '/_d.yaml': 'a: 1' }));
    assert.deepEqual(r.rows, [
      ['LW_VIEW_DUPLICATE_NAME', '/page.html', 3, 13],
      ['LW_VIEW_DUPLICATE_NAME', '/page.html', 4, 36],
    ]);
  });

  it('warns about tags ignored inside a parent', () => {
    const r = problems({ '/page.html': `${MARKER}{{% partial /_l }}{{<l}}\n{{x}}\n{{/l}}`, '/_l.html': MARKER });
    assert.equal(r.ok, true);
    assert.deepEqual(r.rows, [['LW_VIEW_IGNORED_IN_PARENT', '/page.html', 3, 1]]);
  });
});

describe('TemplateSyntaxError (plain API)', () => {
  const cases: Array<[string, RegExp, number, number]> = [
    ['{{#a}}x', /section "a" is never closed/, 1, 1],
    ['a\n {{#a}}{{/b}}', /closing tag "\{\{\/b\}\}" has no open section "b"/, 2, 8],
    ['x\n{{/a}}', /has no open section/, 2, 1],
    ['{{#a}}{{#b}}{{/a}}', /does not match the open section "b"/, 1, 13],
    ['abc {{oops', /unclosed tag/, 1, 5],
    ['{{=<% =}}', /malformed delimiter change/, 1, 1],
    ['x {{}}', /empty tag/, 1, 3],
  ];
  for (const [source, message, line, column] of cases) {
    it(`throws for ${JSON.stringify(source)} at ${line}:${column}`, () => {
      assert.throws(
        () => compile(source),
        (e: unknown) => e instanceof TemplateSyntaxError && message.test(e.message) && e.line === line && e.column === column && e.message.endsWith(`(${line}:${column})`),
      );
    });
  }
});
