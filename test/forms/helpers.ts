/** Shared by the form tests: an app's models, form files parsed against them, a request body. */
import { DiagnosticList } from '../../src/diag/index.js';
import type { ModelSchema } from '../../src/models/index.js';
import { parseFormFile, type FormBody, type FormType } from '../../src/forms/index.js';
import { readModels } from '../models/tree.js';

/** Models with a field of every type (Task), and small ones for groups and steps. */
export const MODELS: Record<string, string> = {
  '/📦/🌐Task.yaml': `title:
  type: string
  min: 2
  max: 40
  placeholder: What to do
  about: A short title
done: boolean
count?:
  type: integer
  min: -5
  max: 50
price?:
  type: double
  max: 999.99
due?: timestamp
day?: date
status:
  type: options
  values: {active: Active, in-progress: In progress}
sizes?[3]:
  type: options
  values: [s, m, l]
country?: country
place?: geo
slug?: uid
notes?:
  type: markdown
  max: 500
body?: html
secret:
  type: string
  protected: true
owner?: Person
tags[]: string
meta?: map
contact?: Contact
icon?: svg-icon
`,
  '/📦/🌐Person.yaml': 'name: string\nhierarchy: hierarchy\nready?: boolean\nconstructor?: string\n',
  '/📦/📎Contact.yaml': 'email: string\n',
  '/📦/🌐Product.yaml': 'name: string\nprice: double\ndescription?: markdown\n',
  '/📦/🌐One.yaml': 'fieldOne: string\ncolors[2]:\n  type: options\n  values: [red, blue]\n',
  '/📦/🌐Two.yaml': 'fieldTwo?: integer\n',
};

let cached: ModelSchema | undefined;

/** The schema of MODELS (checked once: the definitions must have no problems). */
export function schema(): ModelSchema {
  if (cached === undefined) {
    const read = readModels(MODELS);
    if (read.problems.length > 0) throw new Error('test models have problems:\n' + read.problems.join('\n') + '\n' + read.messages.join('\n'));
    cached = read.schema;
  }
  return cached;
}

/** Parses a form file; problems as `line:column CODE message` (the file is /📤/⏳<name>.yaml). */
export function parse(source: string, name = 'NewProduct', file = `/📤/⏳${name}.yaml`): { form: FormType | undefined; problems: string[] } {
  const diagnostics = new DiagnosticList();
  const form = parseFormFile(file, source, schema(), diagnostics);
  for (const d of diagnostics.items) if (d.file !== file || d.severity !== 'error') throw new Error(`unexpected diagnostic ${JSON.stringify(d)}`);
  return { form, problems: diagnostics.sorted().map((d) => `${d.line}:${d.column} ${d.code} ${d.message}`) };
}

/** Parses a form file that must have no problems. */
export function parseOk(source: string, name = 'NewProduct'): FormType {
  const { form, problems } = parse(source, name);
  if (problems.length > 0 || form === undefined) throw new Error('form has problems:\n' + problems.join('\n'));
  return form;
}

/** A request body from pairs (names may repeat), like a URL-encoded form. */
export function body(pairs: Array<[string, string]> | Record<string, string>): FormBody {
  const params = new URLSearchParams(Array.isArray(pairs) ? pairs : Object.entries(pairs));
  return { get: (n) => params.get(n), all: (n) => params.getAll(n), has: (n) => params.has(n) };
}
