/**
 * Reading a submitted form: each field of the form from its input (`Task_title`), converted and
 * checked with the models' value checks. Only the form's fields are read, and never a read-only
 * one: whatever else the body holds (`Task_id`, a field the form leaves out) is ignored, so a
 * visitor cannot set a field the form does not offer.
 */
import { checkFieldValue, htmlInputLimit } from '../models/index.js';
import type { FormBody, FormField, FormMessage, FormType, Submission } from './types.js';

const TRUE_TEXTS = new Set(['true', '1', 'on']);
const FALSE_TEXTS = new Set(['false', '0', '']);

/**
 * Reads the form's fields from `body`. `values` holds, by field name, each valid value converted
 * for storing and the submitted text of each invalid one (to show it again); `messages` one error
 * per invalid field, whose text starts with the field's label and never repeats the input.
 * A `groups` form reads every group: `values` holds one record per group name. A `steps` form
 * reads the fields of all its steps; to read the step submitted, pass it (`form.steps[i]`).
 * `meter` is called first and after each field: a request charges the time of reading them
 * (cleaning html is the costly part) to its budget, which ends the request once it is spent.
 */
export function readSubmission(form: FormType, body: FormBody, meter: () => void = () => {}): Submission {
  const messages: FormMessage[] = [];
  meter();
  if (form.kind === 'groups') {
    const values: Record<string, unknown> = {};
    for (const [name, group] of form.groups) values[name] = readFields(group.fields, body, messages, meter);
    return { values, messages };
  }
  return { values: readFields(form.fields, body, messages, meter), messages };
}

function readFields(fields: readonly FormField[], body: FormBody, messages: FormMessage[], meter: () => void): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const field of fields) {
    if (field.readOnly) continue;
    // A field with an `init:` value that was not sent at all keeps its value (the model's initial one).
    if (field.definition.init !== undefined && field.control !== 'toggle' && !body.has(field.path)) continue;
    const { value, message, entered } = readField(field, body);
    if (message === undefined) {
      values[field.name] = value;
    } else {
      values[field.name] = entered;
      messages.push({ type: 'error', field: field.path, value: message });
    }
    meter();
  }
  return values;
}

/** One field: its value, or a message and what was entered. */
function readField(field: FormField, body: FormBody): { value?: unknown; message?: string; entered?: unknown } {
  const definition = field.label === field.definition.label ? field.definition : { ...field.definition, label: field.label };
  switch (field.control) {
    case 'toggle': {
      // A checkbox sends its value only when ticked ("on" without a value attribute), so absence
      // is false. A hidden "false" before the checkbox sends both: any true text wins.
      const texts = body.all(field.path);
      if (texts.some((t) => TRUE_TEXTS.has(t.trim().toLowerCase()))) return { value: true };
      if (texts.every((t) => FALSE_TEXTS.has(t.trim().toLowerCase()))) return { value: false };
      return { message: `${field.label} must be true or false`, entered: false };
    }
    case 'selectMany': {
      // An empty value (a hidden input, so that choosing nothing still submits the name) is no choice.
      const texts = body.all(field.path).filter((t) => t !== '');
      const r = checkFieldValue(definition, texts);
      return r.ok ? { value: r.value } : { message: r.message, entered: texts };
    }
    default: {
      let input = body.get(field.path) ?? '';
      // Browsers send a textarea's line breaks as CRLF, but count them as one character against maxlength.
      if (field.control === 'textarea') input = input.replace(/\r\n?/g, '\n');
      const r = checkFieldValue(definition, input);
      return r.ok ? { value: r.value } : { message: r.message, entered: input };
    }
  }
}

/** The longest text a number, date, country, geo point or uid is written with, and more. */
const SHORT_TEXT_MAX = 100;
/** An image field holds its upload's address (models/values.ts). */
const IMAGE_TEXT_MAX = 2000;

/** The first `n` code points of `s`. */
function firstCodePoints(s: string, n: number): string {
  if (s.length <= n) return s;
  let i = 0;
  for (let count = 0; count < n && i < s.length; count++) i += s.codePointAt(i)! > 0xffff ? 2 : 1;
  return s.slice(0, i);
}

/** The longest prefix of `s` of at most `n` bytes of UTF-8, cut between code points. */
function firstBytes(s: string, n: number): string {
  if (s.length * 3 <= n || Buffer.byteLength(s, 'utf8') <= n) return s;
  const cut = Buffer.from(s, 'utf8').subarray(0, n).toString('utf8');
  // A code point cut in two decodes as U+FFFD at the end: drop it.
  return cut.endsWith('\uFFFD') && !s.startsWith(cut) ? cut.slice(0, -1) : cut;
}

/** At most the field's own maximum of one text: what the field would accept (docs/forms.md). */
function cutText(field: FormField, text: string): string {
  const d = field.definition;
  switch (d.type) {
    case 'string':
      return firstCodePoints(text, d.max ?? 100);
    case 'markdown':
      return firstCodePoints(text, d.max ?? 2000);
    case 'html':
      return firstBytes(text, htmlInputLimit(d.max ?? 2000));
    case 'image':
      return firstCodePoints(text, IMAGE_TEXT_MAX);
    case 'options':
      return firstCodePoints(text, Math.max(0, ...(d.values ?? []).map((v) => v.value.length)));
    default:
      return firstCodePoints(text, SHORT_TEXT_MAX);
  }
}

/**
 * What a form state keeps of the texts sent for one field, to show them again: the texts the
 * field reads (the first, for a field of one value; every choice of a `selectMany`, at most one
 * per option; for a toggle, the true text that wins), each cut to the field's own maximum — a
 * string's or Markdown field's `max` characters, an html field's input limit in bytes, an
 * option's longest value, 100 characters for numbers, dates and the other short values.
 * Undefined when nothing was sent. A browser, bound by the control's `maxlength`, sends no more
 * than that; only other clients lose the rest.
 */
export function enteredTexts(field: FormField, texts: readonly string[]): string | string[] | undefined {
  if (texts.length === 0) return undefined;
  if (field.control === 'selectMany') {
    return texts.slice(0, Math.max(1, field.definition.values?.length ?? 1)).map((t) => cutText(field, t));
  }
  const text = field.control === 'toggle' ? (texts.find((t) => TRUE_TEXTS.has(t.trim().toLowerCase())) ?? texts[0]!) : texts[0]!;
  return cutText(field, field.control === 'textarea' ? text.replace(/\r\n?/g, '\n') : text);
}
