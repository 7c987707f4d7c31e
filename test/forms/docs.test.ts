// Checks the examples of docs/forms.md: the model blocks (`yaml file=/📦/…`) read without
// problems; each form file (`yaml file=/📤/⏳Name.yaml`) parses without problems, or with exactly
// the `diagnostics` block that follows it; the view example (`html file=/page.html`), given the
// default form of Post in the state of the `js state` block, renders exactly the `html output`.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { DiagnosticList, formatDiagnostic } from '../../src/diag/index.js';
import { defaultForm, formView, parseFormFile, type FormType, type FormViewInit } from '../../src/forms/index.js';
import { readModels } from '../models/tree.js';
import { renderSync } from '../template/helpers.js';

interface Block {
  info: string[];
  text: string;
}

function blocks(markdown: string): Block[] {
  const out: Block[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i]!.startsWith('```')) continue;
    const info = lines[i]!.slice(3).trim().split(/\s+/);
    const body: string[] = [];
    while (++i < lines.length && !lines[i]!.startsWith('```')) body.push(lines[i]!);
    out.push({ info, text: body.length === 0 ? '' : body.join('\n') + '\n' });
  }
  return out;
}

const doc = blocks(readFileSync(new URL('../../docs/forms.md', import.meta.url), 'utf8'));
const fileOf = (b: Block) => b.info.find((i) => i.startsWith('file='))?.slice(5);
const models = Object.fromEntries(doc.filter((b) => fileOf(b)?.startsWith('/📦/')).map((b) => [fileOf(b)!, b.text]));
const { schema, problems } = readModels(models);
const forms = new Map<string, FormType>();

describe('docs/forms.md', () => {
  it('the models of the examples have no problems', () => {
    assert.deepEqual(problems, []);
    assert.ok(schema.models.has('Post'));
  });

  for (const [index, block] of doc.entries()) {
    const file = fileOf(block);
    if (file === undefined || !file.startsWith('/📤/')) continue;
    const next = doc[index + 1];
    const expected = next?.info[0] === 'diagnostics' ? next.text.trimEnd().split('\n') : [];
    it(`${file} ${expected.length === 0 ? 'parses' : 'reports its mistakes'}`, () => {
      const diagnostics = new DiagnosticList();
      const form = parseFormFile(file, block.text, schema, diagnostics);
      assert.deepEqual(diagnostics.sorted().map(formatDiagnostic), expected);
      if (form) forms.set(form.name, form);
    });
  }

  it('what the text says of the example forms', () => {
    const names = (form: FormType | undefined) => form!.fields.map((f) => f.name).join(' ');
    assert.equal(names(defaultForm(schema.models.get('Post')!)), 'title body published status sizes day price');
    assert.equal(names(forms.get('NewPost')), 'title body');
    const edit = forms.get('EditPost')!;
    assert.deepEqual(edit.fields.map((f) => [f.label, f.placeholder ?? '', f.about ?? '', f.readOnly]), [
      ['Headline', 'What is it about?', '', false],
      ['Status', '', 'Live posts are on the home page', false],
      ['Price', '', '', true],
    ]);
    assert.equal(forms.get('QuickPost')!.requirePreviousState, false);
    assert.deepEqual([...forms.get('PostWithAuthor')!.groups.keys()], ['PostPart', 'AuthorPart']);
    assert.deepEqual(forms.get('PostSteps')!.steps.map((s) => `${s.name}: ${names(s)}`), ['Begin: title', 'Details: title body status', 'Pricing: price']);
  });

  it('the view example renders as shown', () => {
    const source = doc.find((b) => fileOf(b) === '/page.html')!.text;
    const state = new Function(`return (${doc.find((b) => b.info[0] === 'js' && b.info[1] === 'state')!.text})`)() as FormViewInit;
    const output = doc.find((b) => b.info[0] === 'html' && b.info[1] === 'output')!.text;
    const view = formView(defaultForm(schema.models.get('Post')!), state);
    assert.equal(renderSync({ '/page.html': source }, { Post: { Form: { view } } }).html, output);
  });
});
