// Checks every example of docs/views.md: each section whose code blocks include an `output` (or
// `diagnostics`) block is compiled and rendered, and must give exactly that output.
//
// Block info strings: `file=/path` (a source file), `imports` / `globals` / `this` (JavaScript
// object literals; `WebSafe` is in scope), `output` (add `dev` for development mode),
// `diagnostics` (formatted compile problems), `template` + `data` (the plain API). `no-eol`: the
// output has no final line break.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { WebSafe } from '../../src/shared/index.js';
import { compile } from '../../src/template/index.js';
import { build } from './helpers.js';

interface Block {
  info: string[];
  text: string;
}

interface Section {
  title: string;
  blocks: Block[];
}

function sections(markdown: string): Section[] {
  const out: Section[] = [];
  let current: Section = { title: '(top)', blocks: [] };
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (/^#{1,6} /.test(line)) {
      out.push(current);
      current = { title: line.replace(/^#+ /, ''), blocks: [] };
    } else if (line.startsWith('```')) {
      const info = line.slice(3).trim().split(/\s+/).slice(1);
      const body: string[] = [];
      while (++i < lines.length && !lines[i]!.startsWith('```')) body.push(lines[i]!);
      current.blocks.push({ info, text: body.length === 0 ? '' : body.join('\n') + '\n' });
    }
  }
  out.push(current);
  return out;
}

function evaluate(code: string): unknown {
  return new Function('WebSafe', `return (${code});`)(WebSafe);
}

const docs = readFileSync(fileURLToPath(new URL('../../docs/views.md', import.meta.url)), 'utf8');
const examples = sections(docs).filter((s) => s.blocks.some((b) => b.info[0] === 'output' || b.info[0] === 'diagnostics'));

describe('docs/views.md examples', () => {
  it('has an example for every pragma and extension', () => {
    const titles = examples.map((s) => s.title).join('\n');
    for (const name of ['partial — a directory', 'svg — a directory', 'yaml', 'json', 'import', 'const and default', 'year', 'Render-If', 'Cache-Control-Seconds', 'choose-string-json', 'show', 'as', 'by', '$first and $last', '$any and $all', 'this', 'Layouts', 'Expressions']) {
      assert.ok(titles.split('\n').some((t) => t.startsWith(name)), `no example for ${name}`);
    }
  });

  for (const section of examples) {
    it(`example "${section.title}" renders as documented`, async () => {
      const find = (tag: string): Block | undefined => section.blocks.find((b) => b.info[0] === tag);
      const output = find('output');
      const template = find('template');
      if (template !== undefined) {
        const data = JSON.parse(find('data')?.text ?? '{}');
        assert.equal(compile(template.text.replace(/\n$/, '')).render(data) + '\n', output!.text);
        return;
      }
      const files: Record<string, string> = {};
      for (const b of section.blocks) {
        const f = b.info.find((i) => i.startsWith('file='));
        if (f !== undefined) files[f.slice(5)] = b.text;
      }
      const built = build(files);
      const diagnostics = find('diagnostics');
      if (diagnostics !== undefined) {
        assert.deepEqual(built.messages, diagnostics.text.trimEnd().split('\n'));
        return;
      }
      assert.ok(built.view, built.messages.join('\n'));
      const values = (find('imports') ? evaluate(find('imports')!.text) : {}) as Record<string, unknown>;
      const globals = (find('globals') ? evaluate(find('globals')!.text) : {}) as Record<string, unknown>;
      const thisValue = find('this') ? evaluate(find('this')!.text) : undefined;
      const out = await built.view.render(
        { importValue: (_m, n) => values[n], globals, dev: output!.info.includes('dev'), now: new Date('2031-06-01T00:00:00Z') },
        thisValue,
      );
      const expected = output!.info.includes('no-eol') ? output!.text.replace(/\n$/, '') : output!.text;
      assert.equal(out.html, expected);
    });
  }
});
