/**
 * The shapes of the form layer (docs/forms.md): a form type compiled at load from a model
 * (`M.Form`) or a form file (`📤/⏳Name.yaml`), the messages a submission produces, and the view
 * model Mustache views read. Plain data; nothing here knows about requests or storage.
 */
import type { FieldDefinition, SourcePosition } from '../models/index.js';

/** The one control a field is shown with (docs/forms.md "Which fields a form fills"). */
export type FormControl = 'input' | 'textarea' | 'toggle' | 'selectOne' | 'selectMany';

/** The `type` attribute of an `input` control. */
export type InputType = 'text' | 'number' | 'date' | 'datetime-local';

/** One field of a form: a model field a visitor fills, with the form's overrides applied. */
export interface FormField {
  /** The model field's name: `title`. */
  readonly name: string;
  /** `<Model>_<field>` (`Task_title`): the name of the control's input, and of messages (docs/forms.md "Reading a submission"). */
  readonly path: string;
  /** The model's definition of the field (type, bounds, option values, optional), unchanged. */
  readonly definition: FieldDefinition;
  readonly control: FormControl;
  /** The `type` attribute of an `input` control; absent for the other controls. */
  readonly inputType?: InputType;
  /** The form's `label:` when it gives one, else the model field's label. Messages start with it. */
  readonly label: string;
  readonly placeholder?: string;
  readonly about?: string;
  /**
   * The visitor must give a value: a required model field. Never true for a toggle, whose absence
   * is a value (false).
   */
  readonly required: boolean;
  /** `readOnly: true` in a form file: the field is shown with its value, and never read from a submission. */
  readonly readOnly: boolean;
  /** Where a form file names the field; absent in a model's default form. */
  readonly at?: SourcePosition;
}

/**
 * A form type. Three kinds:
 *
 * - `fields`: one model and the fields a visitor fills (`M.Form`; `📦.Product: [name, price]`;
 *   each group and each step).
 * - `groups`: sub-forms by name (`OneForm: {📦.One: [fieldOne]}`), each a `fields` form of its own
 *   model, used as `SetupForm.OneForm`. `model` is null and `fields` empty.
 * - `steps`: sub-forms of one model in order (`Begin: {📦.Product: [name]}`, `+End: [price]`),
 *   each a `fields` form holding every field of its step (a `+` step: those of the step before
 *   too). `fields` holds every field of any step, in the order first named.
 *
 * Built once at load and frozen (the maps are read-only by type).
 */
export interface FormType {
  /** `Task` for the default form `Task.Form`, `NewTask` for `⏳NewTask.yaml`, `OneForm` for a group, `End` for a step. */
  readonly name: string;
  readonly kind: 'fields' | 'groups' | 'steps';
  /** The model the form fills; null for a `groups` form, whose groups each name their own. */
  readonly model: string | null;
  readonly fields: readonly FormField[];
  /** `🎛: {requirePreviousState: false}` lets a submission come without a prior form state. Default true; groups and steps take their file's setting. */
  readonly requirePreviousState: boolean;
  /** The groups of a `groups` form, in the order written; empty otherwise. */
  readonly groups: ReadonlyMap<string, FormType>;
  /** The steps of a `steps` form, in order; empty otherwise. */
  readonly steps: readonly FormType[];
  /** A group's or step's form (`SetupForm` for `SetupForm.OneForm`). */
  readonly parent?: string;
  /** The form file (`/📤/⏳NewTask.yaml`); absent for a model's default form. */
  readonly file?: string;
}

/** A problem with one submitted field. `field` is its path (`Task_title`); `value` is the message, which never repeats what was submitted. */
export interface FormMessage {
  type: 'error';
  field: string;
  value: string;
}

/** The request body as the form layer reads it (URL-encoded or multipart fields). */
export interface FormBody {
  /** The first value of a name, or null when absent. */
  get(name: string): string | null;
  /** Every value of a name, in order (empty when absent). */
  all(name: string): string[];
  /** The name was submitted, even empty. */
  has(name: string): boolean;
}

/** What `readSubmission` found. */
export interface Submission {
  /**
   * By field name: the value to store for each valid field (converted: numbers, booleans, lists,
   * canonical dates), and the text as submitted for each invalid one, so that the form can show
   * it again. A `groups` form gives one such record per group name. Check `messages` first.
   */
  values: Record<string, unknown>;
  messages: FormMessage[];
}

/** Attribute text for `{{{ input.attributes }}}`: web-safe (printed raw by triple mustaches, escaped everywhere else). */
export interface AttributeText {
  toString(): string;
}

export interface InputView {
  /** The `type` attribute, also inside `attributes`. */
  readonly type: InputType;
  /** type, value, required, placeholder, maxlength, minlength, max, min, step, pattern, readonly. */
  readonly attributes: AttributeText;
}

export interface TextareaView {
  /** required, placeholder, maxlength, minlength, readonly. */
  readonly attributes: AttributeText;
  /** The text to put between `<textarea>` and `</textarea>` (print it with `{{ }}`). */
  readonly value: string;
}

export interface ChoiceView {
  readonly value: string;
  readonly label: string;
  readonly selected: boolean;
}

export interface ToggleView {
  /** `value: "true"`, label "Yes", selected when the value is true. */
  readonly on: ChoiceView;
  /** `value: "false"`, label "No", selected when it is not. */
  readonly off: ChoiceView;
}

export interface SelectView {
  /** required (and multiple for selectMany; disabled when read-only). */
  readonly attributes: AttributeText;
  readonly options: readonly ChoiceView[];
}

/** One field as a view reads it: `{{#form.title}}…{{/form.title}}`. Exactly one control is not null. */
export interface FormFieldView {
  /** The text the control shows (null when none); a boolean for a toggle; the selected values for selectMany. */
  readonly value: string | boolean | readonly string[] | null;
  readonly path: string;
  readonly name: string;
  readonly required: boolean;
  readonly label: string;
  readonly placeholder: string | null;
  readonly about: string | null;
  readonly invalid: boolean;
  readonly message: { readonly type: 'error'; readonly value: string } | null;
  readonly readable: boolean;
  readonly updatable: boolean;
  readonly readOnly: boolean;
  readonly input: InputView | null;
  readonly textarea: TextareaView | null;
  readonly toggle: ToggleView | null;
  readonly selectOne: SelectView | null;
  readonly selectMany: SelectView | null;
}

/**
 * A form instance as views read it (frozen): `id` (the form state, for `?_form={{id}}`),
 * `invalid`, `ready`, and one property per field name — or, for a `groups` form, one per group
 * name, each a FormViewValue of its own.
 */
export interface FormViewValue {
  readonly id: string;
  readonly invalid: boolean;
  readonly ready: boolean;
  readonly [name: string]: FormFieldView | FormViewValue | string | boolean;
}

/** What `formView` shows. */
export interface FormViewInit {
  /** The form state's id. */
  id: string;
  /** By field name (a `groups` form: by group name, then field name): a record's values or a previous submission's. */
  values?: Record<string, unknown>;
  messages?: readonly FormMessage[];
  /** The form comes back from a submission that was refused. */
  invalid: boolean;
  /** The form comes from a previous valid state. */
  ready: boolean;
}
