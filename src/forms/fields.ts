/**
 * Which model fields a visitor may fill, with which control, and the default form of a model
 * (`M.Form`, docs/forms.md "Which fields a form fills").
 *
 * Fillable: a field that is not built in (`id`, `created`, `modified`), not `protected: true`, and
 * of a type a visitor can type or choose:
 *
 * | Type | Control |
 * |---|---|
 * | `string`, `uid`, `country`, `geo` | `input` type text (uid, country and geo with a `pattern`) |
 * | `integer`, `double` | `input` type number |
 * | `date` | `input` type date |
 * | `timestamp` | `input` type datetime-local (the time is UTC) |
 * | `markdown`, `html` | `textarea` (html is cleaned to the allow-list when read) |
 * | `boolean` | `toggle` |
 * | `options` | `selectOne`; a list of options (`sizes[]: options`) `selectMany` |
 *
 * Not fillable, set by scripts: links (which records a visitor may point at is the app's
 * decision), embedded values, lists of strings or embedded values, `map`, `hierarchy` (positions
 * are managed), `svg-icon` (markup), and the built-in `id`.
 *
 * An `image` field is filled with the address its upload went to (docs/images.md): a hidden input
 * that the page's upload script sets; the value is checked against its signature when the script
 * stores it.
 */
import type { FieldDefinition, FieldType, ModelDefinition } from '../models/index.js';
import type { FormControl, FormField, FormType, InputType } from './types.js';

/** Field names a form view uses for itself: a field of that name cannot be in a form. */
export const VIEW_RESERVED_NAMES: ReadonlySet<string> = new Set(['id', 'invalid', 'ready']);

const INPUT_TYPES: Partial<Record<FieldType, InputType>> = {
  string: 'text',
  uid: 'text',
  image: 'text',
  country: 'text',
  geo: 'text',
  integer: 'number',
  double: 'number',
  date: 'date',
  timestamp: 'datetime-local',
};

/** Why a field cannot be in a form, as the end of a sentence ("… cannot be in a form: <reason>"); undefined when it can. */
export function notFillableReason(field: FieldDefinition): string | undefined {
  if (field.builtIn) return 'Laneway sets it';
  if (field.profile) return `it is the profile's ${field.profile}, which scripts set (.${field.profile}(…)), never visitors`;
  if (field.protected) return 'it is protected (protected fields are never shown to visitors)';
  if (VIEW_RESERVED_NAMES.has(field.name)) return `the form's view has a property "${field.name}" of its own; rename the field`;
  if (controlOf(field) !== undefined) return undefined;
  if (field.list !== undefined) return `it is a list of ${field.type === 'embedded' ? 'embedded values' : `${field.type} values`}, which forms do not fill; set it from a script`;
  switch (field.type) {
    case 'link':
      return `it links to a ${field.model ?? 'record'}, which forms do not choose; set it from a script`;
    case 'embedded':
      return 'it holds an embedded value, which forms do not fill; set it from a script';
    default:
      return `it is a ${field.type} field, which forms do not fill; set it from a script`;
  }
}

/** The control of a fillable field; undefined for a field forms do not fill. */
export function controlOf(field: FieldDefinition): FormControl | undefined {
  if (field.list !== undefined) return field.type === 'options' ? 'selectMany' : undefined;
  if (INPUT_TYPES[field.type] !== undefined) return 'input';
  switch (field.type) {
    case 'markdown':
    case 'html':
      return 'textarea';
    case 'boolean':
      return 'toggle';
    case 'options':
      return 'selectOne';
    default:
      return undefined;
  }
}

/** True when a visitor may fill the field in a form. */
export function isFormFillable(field: FieldDefinition): boolean {
  return notFillableReason(field) === undefined;
}

/** The form's overrides of one field. */
export interface FieldOverrides {
  label?: string;
  placeholder?: string;
  about?: string;
  readOnly?: boolean;
}

/** A fillable field of `model` as a form field (the caller has checked `isFormFillable`). */
export function makeFormField(model: string, field: FieldDefinition, overrides: FieldOverrides = {}, at?: FormField['at']): FormField {
  const control = controlOf(field)!;
  const inputType = control === 'input' ? INPUT_TYPES[field.type] : undefined;
  const placeholder = overrides.placeholder ?? field.placeholder;
  const about = overrides.about ?? field.about;
  return Object.freeze({
    name: field.name,
    path: `${model}_${field.name}`,
    definition: field,
    control,
    ...(inputType === undefined ? {} : { inputType }),
    label: overrides.label ?? field.label,
    ...(placeholder === undefined ? {} : { placeholder }),
    ...(about === undefined ? {} : { about }),
    required: !field.optional && field.init === undefined && control !== 'toggle',
    readOnly: overrides.readOnly ?? false,
    ...(at === undefined ? {} : { at: Object.freeze({ ...at }) }),
  });
}

/** A `fields` form, frozen. */
export function fieldsForm(name: string, model: string, fields: FormField[], requirePreviousState: boolean, extra: { parent?: string; file?: string } = {}): FormType {
  return Object.freeze({
    name,
    kind: 'fields' as const,
    model,
    fields: Object.freeze(fields),
    requirePreviousState,
    groups: new Map<string, FormType>(),
    steps: Object.freeze([]) as readonly FormType[],
    ...extra,
  });
}

/**
 * The default form of a model, `M.Form`: every field a visitor may fill, in the order of the
 * definition, with the model's labels, placeholders and about texts. A submission needs a prior
 * form state (`requirePreviousState: true`).
 */
export function defaultForm(model: ModelDefinition): FormType {
  const fields = model.fields.filter(isFormFillable).map((f) => makeFormField(model.name, f));
  return fieldsForm(model.name, model.name, fields, true);
}
