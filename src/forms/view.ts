/**
 * The view model of a form instance (docs/forms.md "Forms in views"): a frozen, plain object Mustache views
 * read — `{{#form.title}}<input name="{{path}}" {{{input.attributes}}}>{{/form.title}}`.
 *
 * `attributes` is the one piece of markup: attribute text that views print raw with triple
 * mustaches. Every value in it is escaped for a double-quoted attribute here, and it is marked
 * web-safe through the SAFE_HTML protocol (src/shared/web-safe.ts): printed with `{{{ }}}` it stays
 * as built; printed with `{{ }}`, or any other value printed with `{{{ }}}`, is escaped as usual.
 * It never holds `id`, `name` or `class`: those are the view's.
 */
import { checkBoolean, checkTimestamp } from '../models/index.js';
import { FRESH_FORM, SAFE_HTML } from '../shared/index.js';
import type {
  AttributeText,
  ChoiceView,
  FormField,
  FormFieldView,
  FormMessage,
  FormType,
  FormViewInit,
  FormViewValue,
  SelectView,
} from './types.js';

const ATTRIBUTE_ESCAPES: Record<string, string> = { '&': '&amp;', '"': '&quot;', "'": '&#39;', '<': '&lt;', '>': '&gt;' };

/** Escapes text for a double-quoted attribute value (and, to be safe anywhere, `'`, `<` and `>`). */
export function escapeAttribute(value: string): string {
  return value.replace(/[&"'<>]/g, (c) => ATTRIBUTE_ESCAPES[c]!);
}

/** Attribute text for `{{{ }}}`: a value that prints raw only where a view asks for raw output. */
class HtmlAttributes implements AttributeText {
  readonly #text: string;
  constructor(text: string) {
    this.#text = text;
    Object.freeze(this);
  }
  [SAFE_HTML](): string {
    return this.#text;
  }
  toString(): string {
    return this.#text;
  }
  /** JSON gets the text (a view value sent as JSON, or logged). */
  toJSON(): string {
    return this.#text;
  }
}
Object.freeze(HtmlAttributes.prototype);

/** `name="value"` pairs (values escaped) and bare boolean attributes, in the order given. */
function attributes(list: Array<[string, string | number | boolean | undefined]>): HtmlAttributes {
  const parts: string[] = [];
  for (const [name, value] of list) {
    if (value === undefined || value === false) continue;
    parts.push(value === true ? name : `${name}="${escapeAttribute(String(value))}"`);
  }
  return new HtmlAttributes(parts.join(' '));
}

/** uid: lowercase letters, digits and inner hyphens (docs/models.md "Field types"). Written for the `v` flag browsers compile `pattern` with. */
const UID_PATTERN = '[a-z0-9][a-z0-9\\-]*[a-z0-9]';
const COUNTRY_PATTERN = '[A-Za-z]{3}';
// One way to match each text, like the server's check of geo values: the browser runs it as the visitor types.
const NUMBER = '[+\\-]?(?:\\d+(?:\\.\\d*)?|\\.\\d+)';
const GEO_PATTERN = `\\s*${NUMBER}\\s*,\\s*${NUMBER}\\s*`;

/**
 * The view of a form instance. `values` are by field name (a record's, or a refused submission's
 * texts); `messages` by path. For a `groups` form, each group is a property holding its own view
 * (`values` by group name, then field name); a `steps` form shows the fields of all its steps
 * (show one step with `formView(form.steps[i], …)`).
 */
export function formView(form: FormType, init: FormViewInit): FormViewValue {
  const out: Record<string, unknown> = { id: init.id, invalid: init.invalid, ready: init.ready };
  if (form.kind === 'groups') {
    for (const [name, group] of form.groups) {
      const values = own(init.values, name);
      out[name] = formView(group, {
        id: init.id,
        invalid: init.invalid,
        ready: init.ready,
        ...(values !== null && typeof values === 'object' ? { values: values as Record<string, unknown> } : {}),
        ...(init.messages === undefined ? {} : { messages: init.messages }),
      });
    }
    return Object.freeze(out) as FormViewValue;
  }
  for (const field of form.fields) {
    const message = init.messages?.find((m) => m.field === field.path);
    out[field.name] = fieldView(field, own(init.values, field.name), message);
  }
  return Object.freeze(out) as FormViewValue;
}

/**
 * Fresh views (the definition's start values, no messages) of one form differ only by their id,
 * and every part of a field view is frozen: the field views are built once per form and shared.
 * A page showing a form renders one on every request.
 */
const freshFields = new WeakMap<FormType, Record<string, unknown>>();

/** The view of a new instance of `form` with id `id`; `values` (the definition's start values) is asked for on the first call only. */
export function freshFormView(form: FormType, id: string, values: () => Record<string, unknown> | undefined): FormViewValue {
  if (form.kind === 'groups') return formView(form, { id, values: values(), invalid: false, ready: false });
  let fields = freshFields.get(form);
  if (fields === undefined) {
    const start = values();
    fields = {};
    for (const field of form.fields) fields[field.name] = fieldView(field, own(start, field.name), undefined);
    freshFields.set(form, fields);
  }
  // Marked: a view section over it is rendered once per form, with each request's id put in.
  return Object.freeze({ id, invalid: false, ready: false, ...fields, [FRESH_FORM]: fields }) as FormViewValue;
}

/** An own property only: a field named `constructor` must not read Object.prototype's. */
function own(record: Record<string, unknown> | undefined, key: string): unknown {
  return record !== undefined && record !== null && Object.hasOwn(record, key) ? record[key] : undefined;
}

function fieldView(field: FormField, value: unknown, message: FormMessage | undefined): FormFieldView {
  const d = field.definition;
  const placeholder = field.placeholder ?? null;
  const base = {
    value: null as FormFieldView['value'],
    path: field.path,
    name: field.name,
    required: field.required,
    label: field.label,
    placeholder,
    about: field.about ?? null,
    invalid: message !== undefined,
    message: message === undefined ? null : Object.freeze({ type: message.type, value: message.value }),
    readable: true,
    updatable: !field.readOnly,
    readOnly: field.readOnly,
    input: null,
    textarea: null,
    toggle: null,
    selectOne: null,
    selectMany: null,
  };
  switch (field.control) {
    case 'input': {
      const text = textOf(field, value);
      const type = field.inputType ?? 'text';
      const bounds = boundsOf(field);
      const input = Object.freeze({
        type,
        attributes: attributes([
          ['type', type],
          ['value', text === '' ? undefined : text],
          ['required', field.required],
          ['placeholder', placeholder ?? undefined],
          ['maxlength', bounds.maxlength],
          ['minlength', bounds.minlength],
          ['max', bounds.max],
          ['min', bounds.min],
          ['step', d.type === 'double' ? 'any' : undefined],
          ['pattern', d.type === 'uid' ? UID_PATTERN : d.type === 'country' ? COUNTRY_PATTERN : d.type === 'geo' ? GEO_PATTERN : undefined],
          ['readonly', field.readOnly],
        ]),
      });
      return Object.freeze({ ...base, value: value === undefined || value === null ? null : text, input });
    }
    case 'textarea': {
      const text = textOf(field, value);
      // html bounds count bytes of the cleaned HTML, which a browser cannot measure: no maxlength.
      const counted = d.type === 'markdown';
      const textarea = Object.freeze({
        attributes: attributes([
          ['required', field.required],
          ['placeholder', placeholder ?? undefined],
          ['maxlength', counted ? d.max : undefined],
          ['minlength', counted && d.min !== undefined && d.min > 0 ? d.min : undefined],
          ['readonly', field.readOnly],
        ]),
        value: text,
      });
      return Object.freeze({ ...base, value: value === undefined || value === null ? null : text, textarea });
    }
    case 'toggle': {
      const on = isTrue(value);
      const toggle = Object.freeze({
        on: Object.freeze({ value: 'true', label: 'Yes', selected: on }),
        off: Object.freeze({ value: 'false', label: 'No', selected: !on }),
      });
      return Object.freeze({ ...base, value: on, toggle });
    }
    case 'selectOne': {
      const selected = value === undefined || value === null ? null : textOf(field, value);
      const select = selectView(field, (v) => v === selected, false);
      return Object.freeze({ ...base, value: selected, selectOne: select });
    }
    case 'selectMany': {
      const list = Object.freeze((Array.isArray(value) ? value : value === undefined || value === null || value === '' ? [] : [value]).map((v) => textOf(field, v)));
      const select = selectView(field, (v) => list.includes(v), true);
      return Object.freeze({ ...base, value: list, selectMany: select });
    }
  }
}

function selectView(field: FormField, isSelected: (value: string) => boolean, multiple: boolean): SelectView {
  const options: ChoiceView[] = (field.definition.values ?? []).map((o) => Object.freeze({ value: o.value, label: o.label, selected: isSelected(o.value) }));
  return Object.freeze({
    attributes: attributes([
      ['required', field.required],
      ['multiple', multiple],
      ['disabled', field.readOnly],
    ]),
    options: Object.freeze(options),
  });
}

/** maxlength/minlength (text) or max/min (numbers) of an input, from the field's bounds. */
function boundsOf(field: FormField): { maxlength?: number; minlength?: number; max?: number; min?: number } {
  const d = field.definition;
  switch (d.type) {
    case 'string':
      return { maxlength: d.max ?? 100, ...(d.min !== undefined && d.min > 0 ? { minlength: d.min } : {}) };
    case 'uid':
      return { maxlength: 100, minlength: 2 };
    case 'country':
      return { maxlength: 3, minlength: 3 };
    case 'integer':
    case 'double':
      return { ...(d.max === undefined ? {} : { max: d.max }), min: d.min ?? 0 };
    default:
      return {};
  }
}

function isTrue(value: unknown): boolean {
  if (value === undefined || value === null) return false;
  const r = checkBoolean(typeof value === 'string' ? value.trim().toLowerCase() : value);
  return r.ok ? r.value : value === 'on';
}

/**
 * The text a control shows for a value: a record's value (numbers, booleans, dates, rich text,
 * geo points) or a refused submission's text, as it was. '' for no value.
 */
function textOf(field: FormField, value: unknown): string {
  if (value === undefined || value === null) return '';
  const type = field.definition.type;
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) return '';
    return type === 'date' ? value.toISOString().slice(0, 10) : localTime(value.toISOString());
  }
  switch (typeof value) {
    case 'string':
      if (type === 'timestamp') {
        const r = checkTimestamp(value);
        return r.ok ? localTime(r.value) : value;
      }
      return value;
    case 'number':
    case 'bigint':
    case 'boolean':
      return String(value);
    case 'object': {
      const v = value as { latitude?: unknown; longitude?: unknown; value?: unknown };
      if (typeof v.latitude === 'number' && typeof v.longitude === 'number') return `${v.latitude},${v.longitude}`;
      if (typeof v.value === 'string') return v.value; // rich text, hierarchy
      return '';
    }
    default:
      return '';
  }
}

/** `2024-05-06T10:30:00.000Z` → `2024-05-06T10:30` (seconds and milliseconds only when not zero), as datetime-local takes it. */
function localTime(iso: string): string {
  if (iso.endsWith(':00.000Z')) return iso.slice(0, 16);
  if (iso.endsWith('.000Z')) return iso.slice(0, 19);
  return iso.slice(0, 23);
}
