/**
 * `laneway add …` (docs/cli.md "`laneway add`"): writes the files of a page, an endpoint, a model,
 * a form or a supplier into an app, with the special names spelled right, prints what it wrote,
 * and never overwrites a file. What it writes passes `laneway check` (test/cli/add.test.ts).
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { checkAppDirectory, parseCommandLine, PLAIN, usageError, USAGE_EXIT, type Palette } from './args.js';
import { invokedCommand } from './invoked.js';

interface Io {
  out(line: string): void;
  err(line: string): void;
}

export const ADD_HELP = `Usage: laneway add <what> … [--app DIR]

Writes new files into the app in DIR (default: the current directory), prints each file
it wrote, and refuses to overwrite one that exists.

  add page NAME                   NAME.html, a view (with the app's /_layout.html when there
                                  is one); NAME may be a path: docs/intro, docs/ (an index)
  add endpoint VERB PATH          the script answering VERB (GET, POST, PUT, DELETE) at PATH:
                                  GET /api/hello writes api/🖥hello.js
  add model NAME [FIELD:TYPE]...  /📦/🌐NAME.yaml, a model (FIELD? for an optional field;
                                  TYPE defaults to string): add model Task title done?:boolean
  add form MODEL [--dir DIR]      /📤/⏳NewMODEL.yaml, the form that creates a MODEL, and
                                  /DIR/index.html (the form and the list) with /DIR/POST.js
                                  (stores a submission); DIR defaults to the model's name in
                                  lower case, plural
  add supplier NAME [--dir DIR]   /DIR/📤/NAME.js, values for the views of DIR and below
                                  (default: the root)

Options:
  --app DIR   the app's directory (default: .)
  -h, --help  show this help

Exit status: 0 when written; 2 for a usage error, or when a file exists already; 1 when a
file cannot be written.`;

/** Field types a model field can be given on the command line (docs/models.md "Field types"). */
const SIMPLE_TYPES = new Set(['string', 'boolean', 'integer', 'double', 'timestamp', 'date', 'country', 'uid', 'html', 'markdown', 'map', 'geo', 'svg-icon', 'image']);

class AddError extends Error {}

/** A file to write: its path from the app's root (`/📦/🌐Task.yaml`) and its text. */
interface NewFile {
  path: string;
  text: string;
}

const pascal = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
const words = (s: string) => s.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase();

/** `docs/Intro Page` → checked path segments of a URL, without empty ones. */
function urlSegments(path: string, what: string): string[] {
  const parts = path.split('/').filter(Boolean);
  for (const p of parts) {
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(p)) throw new AddError(`${what} ${JSON.stringify(path)}: use letters, digits, "-", "_" and "." in each part of the path (${JSON.stringify(p)} is not one)`);
  }
  return parts;
}

/** The layout's first block (`{{$content}}`), when the app has `/_layout.html`. */
function layoutOf(app: string): { block: string; title: boolean } | undefined {
  let text: string;
  try {
    text = readFileSync(join(app, '_layout.html'), 'utf8');
  } catch {
    return undefined;
  }
  const block = /\{\{\$\s*([\w-]+)\s*\}\}/.exec(text)?.[1];
  return block === undefined ? undefined : { block, title: /\{\{%\s*default\s+title\b/.test(text) };
}

function page(app: string, name: string): NewFile[] {
  const index = name.endsWith('/') || name === '';
  const parts = urlSegments(name.replace(/\.html$/, ''), 'the page');
  if (!index && parts.length === 0) throw new AddError('give the name of the page (laneway add page about)');
  const file = '/' + (index ? [...parts, 'index'] : parts).join('/') + '.html';
  const heading = pascal(words((index ? parts.at(-1) : parts.at(-1)) ?? 'Home').replace(/[-_.]/g, ' '));
  const layout = layoutOf(app);
  const text = layout
    ? `<!--TEMPLATE mustache-->\n{{% partial /_layout }}\n${layout.title ? `{{% const title = '${heading}' }}\n` : ''}{{<layout}}\n{{$${layout.block}}}\n<h1>${heading}</h1>\n<p>Write this page in ${file.slice(1)}.</p>\n{{/${layout.block}}}\n{{/layout}}\n`
    : `<!--TEMPLATE mustache-->\n<!doctype html>\n<html lang="en">\n<head>\n  <meta charset="utf-8">\n  <title>${heading}</title>\n</head>\n<body>\n  <h1>${heading}</h1>\n  <p>Write this page in ${file.slice(1)}.</p>\n</body>\n</html>\n`;
  return [{ path: file, text }];
}

const VERBS = ['GET', 'POST', 'PUT', 'DELETE'] as const;
const VERB_EMOJI: Record<string, string> = { GET: '🖥', POST: '📮', DELETE: '❌' };

function endpoint(verbText: string, path: string): NewFile[] {
  const verb = verbText.toUpperCase();
  if (!(VERBS as readonly string[]).includes(verb)) throw new AddError(`${JSON.stringify(verbText)} is not a method Laneway routes: use GET, POST, PUT or DELETE`);
  if (!path.startsWith('/')) throw new AddError(`the path ${JSON.stringify(path)} starts with /: laneway add endpoint ${verb} /api/hello`);
  if (path.includes('{')) throw new AddError(`a path with a {parameter} needs its 🔗.yaml (docs/routing.md "Dynamic segments"): create the directory and its 🔗.yaml first, then the script in it`);
  const parts = urlSegments(path, 'the path');
  const trailing = path.endsWith('/');
  let file: string;
  if (verb === 'GET' && trailing) file = '/' + [...parts, '🖥index.js'].join('/');
  else if (trailing) throw new AddError(`only a GET script answers a URL ending in /: use ${verb} ${path.replace(/\/+$/, '') || '/'} (a ${verb}.js in that directory)`);
  else if (parts.length === 0 || verb === 'PUT') file = '/' + [...parts, `${verb}.js`].join('/');
  else file = '/' + [...parts.slice(0, -1), `${VERB_EMOJI[verb]}${parts.at(-1)}.js`].join('/');
  const answer = verb === 'GET' ? "({message: 'Hello from " + path + "'})" : '({ok: true})';
  const text = `// ${verb} ${path}: the script's last expression is its answer, here as JSON (docs/scripting.md).\n${answer};\n`;
  return [{ path: file, text }];
}

interface FieldSpec {
  name: string;
  optional: boolean;
  type: string;
}

/** The model files of the app: name → path from the root. */
function modelsOf(app: string): Map<string, string> {
  const found = new Map<string, string>();
  const visit = (dir: string, rel: string) => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      if (e.isDirectory()) visit(join(dir, e.name), `${rel}/${e.name}`);
      else {
        const m = /^[🌐📄👤📎]([A-Z][A-Za-z0-9]*)\.yaml$/u.exec(e.name.normalize('NFC').replace(/\uFE0F/g, ''));
        if (m) found.set(m[1]!, `${rel}/${e.name}`);
      }
    }
  };
  visit(join(app, '📦'), '/📦');
  return found;
}

function model(app: string, nameText: string, fieldTexts: string[]): NewFile[] {
  const name = pascal(nameText.replace(/^🌐/u, '').replace(/\.yaml$/, ''));
  if (!/^[A-Z][A-Za-z0-9]{0,19}$/.test(name)) throw new AddError(`${JSON.stringify(nameText)} is not a model name: PascalCase letters and digits, at most 20 (Task, TaskList)`);
  const models = modelsOf(app);
  if (models.has(name)) throw new AddError(`the app has a model ${name} already (${models.get(name)})`);
  const fields: FieldSpec[] = [];
  for (const text of fieldTexts) {
    const m = /^([a-z][A-Za-z0-9]{0,19})(\?)?(?::(.+))?$/.exec(text);
    if (!m) throw new AddError(`${JSON.stringify(text)} is not a field: name:type, camelCase name (dueDate:date, done?:boolean)`);
    const type = m[3] ?? 'string';
    if (!SIMPLE_TYPES.has(type) && !models.has(type) && type !== name) {
      throw new AddError(`${m[1]}: ${JSON.stringify(type)} is not a field type: use ${[...SIMPLE_TYPES].join(', ')}, or the name of a model (an options field needs its values: write it in the file, docs/models.md)`);
    }
    if (['id', 'created', 'modified'].includes(m[1]!)) throw new AddError(`${m[1]} is a built-in field of every model: choose another name`);
    if (fields.some((f) => f.name === m[1])) throw new AddError(`the field ${m[1]} is given twice`);
    fields.push({ name: m[1]!, optional: m[2] === '?', type });
  }
  if (fields.length > 20) throw new AddError('a model has at most 20 fields');
  const body = fields.map((f) => `${f.name}${f.optional ? '?' : ''}: ${f.type}\n`).join('');
  const text = `# ${name}: a model, stored in the app's database (docs/models.md). Every field is required unless\n# its name ends with "?"; id, created and modified are built in.\n${body}`;
  return [{ path: `/📦/🌐${name}.yaml`, text }];
}

/** The form control of a field type (docs/forms.md "Controls"), or undefined when a generated form leaves it out. */
function controlOf(type: string, list: boolean): 'input' | 'textarea' | 'toggle' | 'selectOne' | 'selectMany' | undefined {
  if (type === 'options') return list ? 'selectMany' : 'selectOne';
  if (list) return undefined;
  if (type === 'boolean') return 'toggle';
  if (type === 'markdown' || type === 'html') return 'textarea';
  if (['string', 'integer', 'double', 'timestamp', 'date', 'country', 'uid', 'geo'].includes(type)) return 'input';
  return undefined;
}

function fieldMarkup(field: string, control: string, id: string): string {
  const label = `<label for="${id}">{{label}}</label>`;
  const message = `  {{#message}}<p class="field-error">{{value}}</p>{{/message}}`;
  let body: string;
  switch (control) {
    case 'textarea':
      body = `  ${label}\n  <textarea id="${id}" name="{{path}}" {{{textarea.attributes}}}>{{textarea.value}}</textarea>`;
      break;
    case 'toggle':
      body = `  <label><input type="checkbox" name="{{path}}" value="{{toggle.on.value}}"{{#toggle.on.selected}} checked{{/toggle.on.selected}}> {{label}}</label>`;
      break;
    case 'selectOne':
    case 'selectMany':
      body = `  ${label}\n  <select id="${id}" name="{{path}}" {{{${control}.attributes}}}>\n    {{#${control}.options}}<option value="{{value}}"{{#selected}} selected{{/selected}}>{{label}}</option>{{/${control}.options}}\n  </select>`;
      break;
    default:
      body = `  ${label}\n  <input id="${id}" name="{{path}}" {{{input.attributes}}}>`;
  }
  return `  {{#form.${field}}}\n${body}\n${message}\n  {{/form.${field}}}\n`;
}

function form(app: string, modelName: string, dirOption: string | undefined): { files: NewFile[]; skipped: string[] } {
  const name = pascal(modelName.replace(/^📦\./u, ''));
  const models = modelsOf(app);
  const path = models.get(name);
  if (!path) throw new AddError(`the app has no model ${name}${models.size ? ` (its models: ${[...models.keys()].join(', ')})` : ''}: add it first (laneway add model ${name} title)`);
  if (!/\/🌐|\/📄|\/👤/u.test(path)) throw new AddError(`${name} is an embedded type (${path}): forms fill Universal, Content and Profile models`);
  let definition: unknown;
  try {
    definition = parseYaml(readFileSync(join(app, path), 'utf8')) ?? {};
  } catch (err) {
    throw new AddError(`${path} cannot be read: ${(err as Error).message} (laneway check shows where)`);
  }
  if (typeof definition !== 'object' || definition === null || Array.isArray(definition)) throw new AddError(`${path} is not a map of fields`);
  const fields: Array<{ name: string; control: string }> = [];
  const skipped: string[] = [];
  for (const [key, value] of Object.entries(definition as Record<string, unknown>)) {
    if (key.replace(/\uFE0F/g, '') === '🎛') continue;
    const m = /^([a-z][A-Za-z0-9]*)\??(\[\d*\])?$/.exec(key);
    if (!m) continue;
    const type = typeof value === 'string' ? value : typeof value === 'object' && value !== null && typeof (value as { type?: unknown }).type === 'string' ? (value as { type: string }).type : 'embedded';
    const protectedField = typeof value === 'object' && value !== null && (value as { protected?: unknown }).protected === true;
    const control = protectedField ? undefined : controlOf(type, m[2] !== undefined);
    if (control) fields.push({ name: m[1]!, control });
    else skipped.push(m[1]!);
  }
  if (fields.length === 0) throw new AddError(`${name} has no field a generated form can fill${skipped.length ? ` (${skipped.join(', ')})` : ''}: write the form by hand (docs/forms.md)`);
  const formName = `New${name}`;
  const dirParts = urlSegments(dirOption ?? `${name.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase()}s`, '--dir');
  const dir = '/' + dirParts.join('/');
  const url = dir === '/' ? '/' : dir + '/';
  const redirect = dirParts.length ? `Redirect.dir('${dirParts.join('/')}')` : `Redirect.home()`;
  const list = name.charAt(0).toLowerCase() + name.slice(1);
  const shown = fields[0]!.name;
  const yaml =
    `# The form that creates a ${name} (docs/forms.md): the fields a visitor fills, in order, each\n` +
    `# checked with the rules of ${path}.${skipped.length ? `\n# Not in the form: ${skipped.join(', ')} (add them by hand, docs/forms.md).` : ''}\n` +
    `📦.${name}:\n${fields.map((f) => `  - ${f.name}\n`).join('')}`;
  const layout = layoutOf(app);
  const formMarkup =
    `{{#${formName}.view as form}}\n<form action="${dir === '/' ? '' : dir}?_form={{form.id}}" method="POST">\n` +
    fields.map((f) => fieldMarkup(f.name, f.control, `${list}-${f.name}`)).join('') +
    `  <button>Add</button>\n</form>\n{{/${formName}.view}}\n` +
    `<ul>\n  {{#${name}.all.desc as ${list}}}\n  <li>{{${list}.${shown}}}</li>\n  {{/${name}.all.desc}}\n</ul>\n`;
  const imports = `{{% import {${name}} from '📦' }}\n{{% import {${formName}} from '📤' }}\n`;
  const heading = `${name}s`;
  const view = layout
    ? `<!--TEMPLATE mustache-->\n{{% partial /_layout }}\n${imports}${layout.title ? `{{% const title = '${heading}' }}\n` : ''}{{<layout}}\n{{$${layout.block}}}\n<h1>${heading}</h1>\n${formMarkup}{{/${layout.block}}}\n{{/layout}}\n`
    : `<!--TEMPLATE mustache-->\n${imports}<!doctype html>\n<html lang="en">\n<head>\n  <meta charset="utf-8">\n  <title>${heading}</title>\n</head>\n<body>\n<h1>${heading}</h1>\n${formMarkup}</body>\n</html>\n`;
  const script =
    `// POST ${dir}: the form of ${url} posts here, with its form state in ?_form= (docs/forms.md).\n` +
    `import {${name}} from '📦';\nimport {${formName}} from '📤';\n\n` +
    `const record = new ${name}();\ntry {\n  ${formName}.submit(record);\n  ${redirect}.success('Added.');\n} catch ($ModelInvalid) {\n` +
    `  // Nothing is stored: back to the form, which shows what was typed and why it was refused.\n  ${redirect}.invalid($ModelInvalid);\n}\n`;
  return {
    files: [
      { path: `/📤/⏳${formName}.yaml`, text: yaml },
      { path: `${dir === '/' ? '' : dir}/index.html`, text: view },
      { path: `${dir === '/' ? '' : dir}/POST.js`, text: script },
    ],
    skipped,
  };
}

function supplier(nameText: string, dirOption: string | undefined): NewFile[] {
  const name = nameText.replace(/\.js$/, '');
  if (!/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name)) throw new AddError(`${JSON.stringify(nameText)} is not a supplier name: a JavaScript name (Greeting, Menu)`);
  const dirParts = urlSegments(dirOption ?? '', '--dir');
  const file = '/' + [...dirParts, '📤', `${name}.js`].join('/');
  const text =
    `// ${name}: a value for the views of /${dirParts.map((p) => p + '/').join('')} and below, which print it after\n` +
    `// {{% import {${name}} from '📤' }} (docs/suppliers.md). Evaluated once per request.\n` +
    `const ${name} = {message: 'Hello'};\nexport {${name}};\n`;
  return [{ path: file, text }];
}

/** Runs `laneway add`; resolves to the exit code. */
export function runAdd(args: string[], io: Io, paint: { out: Palette; err: Palette } = { out: PLAIN, err: PLAIN }): number {
  const parsed = parseCommandLine('add', args, { help: { type: 'boolean', short: 'h' }, app: { type: 'string' }, dir: { type: 'string' } }, paint.err);
  if ('error' in parsed) {
    io.err(parsed.error);
    return USAGE_EXIT;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.out(ADD_HELP);
    return 0;
  }
  const given = values.app ?? '.';
  const app = resolve(given);
  const notADirectory = checkAppDirectory(given, app);
  if (notADirectory) {
    io.err(usageError('add', notADirectory, paint.err));
    return USAGE_EXIT;
  }
  const [what, ...rest] = positionals;
  let files: NewFile[];
  let skipped: string[] = [];
  try {
    const need = (n: number, usage: string) => {
      if (rest.length < n) throw new AddError(`give ${usage}`);
    };
    switch (what) {
      case 'page':
        need(1, 'the name of the page (laneway add page about)');
        if (rest.length > 1) throw new AddError(`one page at a time, got ${rest.join(' ')}`);
        files = page(app, rest[0]!);
        break;
      case 'endpoint':
        need(2, 'the method and the path (laneway add endpoint GET /api/hello)');
        if (rest.length > 2) throw new AddError(`expected a method and a path, got ${rest.join(' ')}`);
        files = endpoint(rest[0]!, rest[1]!);
        break;
      case 'model':
        need(1, 'the model name and its fields (laneway add model Task title done?:boolean)');
        files = model(app, rest[0]!, rest.slice(1));
        break;
      case 'form': {
        need(1, 'the model the form creates (laneway add form Task)');
        if (rest.length > 1) throw new AddError(`one model at a time, got ${rest.join(' ')}`);
        const made = form(app, rest[0]!, values.dir);
        files = made.files;
        skipped = made.skipped;
        break;
      }
      case 'supplier':
        need(1, 'the name of the supplier (laneway add supplier Greeting)');
        if (rest.length > 1) throw new AddError(`one supplier at a time, got ${rest.join(' ')}`);
        files = supplier(rest[0]!, values.dir);
        break;
      default:
        throw new AddError(what === undefined ? 'say what to add: page, endpoint, model, form or supplier' : `there is no "${what}" to add: page, endpoint, model, form or supplier`);
    }
    if (values.dir !== undefined && what !== 'form' && what !== 'supplier') throw new AddError(`--dir applies to add form and add supplier; give the path itself`);
  } catch (err) {
    if (!(err instanceof AddError)) throw err;
    io.err(usageError('add', err.message, paint.err));
    return USAGE_EXIT;
  }
  const present = files.filter((f) => existsSync(join(app, f.path)));
  if (present.length > 0) {
    io.err(usageError('add', `${present.map((f) => f.path.slice(1)).join(', ')} exists already: nothing was written (rename or remove it first)`, paint.err));
    return USAGE_EXIT;
  }
  const written: string[] = [];
  try {
    for (const f of files) {
      const to = join(app, f.path);
      mkdirSync(dirname(to), { recursive: true });
      writeFileSync(to, f.text, { flag: 'wx' });
      written.push(f.path);
    }
  } catch (err) {
    io.err(paint.err.red(`laneway add: cannot write ${files[written.length]!.path.slice(1)}: ${(err as Error).message}`));
    return 1;
  }
  for (const p of written) io.out(`wrote ${paint.out.bold(p.slice(1))}`);
  if (skipped.length) io.out(`not in the form (add them by hand, docs/forms.md): ${skipped.join(', ')}`);
  const next = what === 'model' ? `${invokedCommand()} add form ${files[0]!.path.slice('/📦/🌐'.length, -'.yaml'.length)}${given === '.' ? '' : ` --app ${given}`}` : `${invokedCommand()} check ${given}`;
  io.out(`Next: ${paint.out.cyan(next)}`);
  return 0;
}
