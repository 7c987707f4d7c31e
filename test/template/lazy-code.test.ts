// A view's render code is generated on its first render, not when it compiles (view.ts
// compileView): the page pass still runs at compile time, and a file whose code was generated
// before the pass rewrote it is generated again.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DiagnosticList } from '../../src/diag/index.js';
import { compileView, type CompiledView, type RenderOutput, type TemplateFile } from '../../src/template/index.js';
import { MARKER, memoryTree } from './helpers.js';

const input = { importValue: () => undefined, dev: false, now: new Date('2031-06-01T00:00:00Z') };
const htmlOf = (view: CompiledView | undefined): string => {
  assert.ok(view, 'the view compiles');
  const out = view.render(input) as RenderOutput;
  assert.equal(out instanceof Promise, false);
  return out.html;
};

/** A page pass that upper-cases every text node of the files it is given, and counts them. */
function upperCasePass(): { prepare(t: TemplateFile): void; files: string[] } {
  const files: string[] = [];
  return {
    files,
    prepare(t) {
      files.push(t.file);
      const visit = (nodes: TemplateFile['nodes']): void => {
        for (const n of nodes) {
          if (n.type === 'text') n.text = n.text.toUpperCase();
          if ('body' in n && Array.isArray(n.body)) visit(n.body as TemplateFile['nodes']);
        }
      };
      visit(t.nodes);
    },
  };
}

describe('render code generated on first use', () => {
  it('runs the page pass at compile time over the view and every file it uses, once each', () => {
    const files = {
      '/a.html': `${MARKER}{{% partial /_p }}a {{> p}}`,
      '/b.html': `${MARKER}{{% partial /_p }}b {{> p}}`,
      '/_p.html': `${MARKER}shared`,
    };
    const tree = memoryTree(files);
    const diagnostics = new DiagnosticList();
    const pass = upperCasePass();
    const a = compileView('/a.html', files['/a.html'], { tree, diagnostics, prepare: pass.prepare });
    const b = compileView('/b.html', files['/b.html'], { tree, diagnostics, prepare: pass.prepare });
    assert.deepEqual(pass.files.sort(), ['/_p.html', '/a.html', '/b.html']);
    assert.equal(htmlOf(b), 'B SHARED');
    assert.equal(htmlOf(a), 'A SHARED');
    assert.equal(htmlOf(a), 'A SHARED', 'a second render uses the same code');
  });

  it('generates a file again when the page pass reaches it after it was rendered', () => {
    // An HTML supplier's partial compiles (and may render) before any page has run the pass.
    const files = {
      '/page.html': `${MARKER}{{% partial /_card }}page: {{> card}}`,
      '/_card.html': `${MARKER}card`,
    };
    const tree = memoryTree(files);
    const diagnostics = new DiagnosticList();
    const supplier = compileView('/_card.html', files['/_card.html'], { tree, diagnostics });
    assert.equal(htmlOf(supplier), 'card', 'rendered before the pass');
    const pass = upperCasePass();
    const page = compileView('/page.html', files['/page.html'], { tree, diagnostics, prepare: pass.prepare });
    assert.deepEqual(pass.files.sort(), ['/_card.html', '/page.html']);
    assert.equal(htmlOf(page), 'PAGE: CARD', 'the page includes the partial as the pass left it');
    assert.equal(htmlOf(supplier), 'CARD', 'the supplier renders the passed partial too');
    assert.equal(diagnostics.items.length, 0);
  });

});
