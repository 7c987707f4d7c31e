/**
 * Reading a submitted form: each field of the form from its input (`Task_title`), converted and
 * checked with the models' value checks. Only the form's fields are read, and never a read-only
 * one: whatever else the body holds (`Task_id`, a field the form leaves out) is ignored, so a
 * visitor cannot set a field the form does not offer.
 */
import { checkFieldValue } from '../models/index.js';
import type { FormBody, FormField, FormMessage, FormType, Submission } from './types.js';

const TRUE_TEXTS = new Set(['true', '1', 'on']);
const FALSE_TEXTS = new Set(['false', '0', '']);

/**
 * Reads the form's fields from `body`. `values` holds, by field name, each valid value converted
 * for storing and the submitted text of each invalid one (to show it again); `messages` one error
 * per invalid field, whose text starts with the field's label and never repeats the input.
 * A `groups` form reads every group: `values` holds one record per group name. A `steps` form
 * reads the fields of all its steps; to read the step submitted, pass it (`form.steps[i]`).
 */
export function readSubmission(form: FormType, body: FormBody): Submission {
  const messages: FormMessage[] = [];
  if (form.kind === 'groups') {
    const values: Record<string, unknown> = {};
    for (const [name, group] of form.groups) values[name] = readFields(group.fields, body, messages);
    return { values, messages };
  }
  return { values: readFields(form.fields, body, messages), messages };
}

function readFields(fields: readonly FormField[], body: FormBody, messages: FormMessage[]): Record<string, unknown> {
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
