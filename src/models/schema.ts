/**
 * The checked schema that model definitions (`/📦/*.yaml`) compile to. Plain data: the store,
 * the script compiler and the form layer read it; nothing here touches a database.
 */

/** 🌐 Universal, 📄 Content, 👤 User Profile (a Universal model with `user` and `role` reserved), 📎 Embedded. */
export type ModelKind = 'universal' | 'content' | 'profile' | 'embedded';

/** The field types this version stores (docs/models.md "Field types"). */
export type ValueType =
  | 'string'
  | 'boolean'
  | 'integer'
  | 'double'
  | 'timestamp'
  | 'date'
  | 'options'
  | 'country'
  | 'map'
  | 'geo'
  | 'hierarchy'
  | 'svg-icon'
  | 'uid'
  | 'html'
  | 'markdown'
  | 'image';

/** `id` is the built-in identifier; `link` points at another model; `embedded` holds a sub-document. */
export type FieldType = ValueType | 'id' | 'link' | 'embedded';

/** Where a definition or field was written (file app-relative, line and column 1-based). */
export interface SourcePosition {
  file: string;
  line: number;
  column: number;
}

/** One value of an `options` field, with its label (the value itself unless a `{value: Label}` map gave one). */
export interface OptionValue {
  value: string;
  label: string;
}

export interface FieldDefinition {
  name: string;
  type: FieldType;
  /** The label: `label:` when given (the first entry of a per-locale map), else from the name (`dueDate` → "Due Date"). */
  label: string;
  /** A per-locale label map (`label: {en: Due, de: Fällig}`), when one was given. */
  labels?: Record<string, string>;
  placeholder?: string;
  about?: string;
  /** `name?:` or `optional: true`. Fields are required by default. */
  optional: boolean;
  /** Most entries of a list field (`name[]` → 20, `name[N]` → N); absent for single values. */
  list?: number;
  /** `protected: true`: readable by scripts, never by views or forms. */
  protected: boolean;
  /** `order: true`: this field orders the model's records. */
  order: boolean;
  /** `unique: true` (string fields of Universal models; `uid` fields are always unique). */
  unique: boolean;
  /** `id`, `created` and `modified`, which Laneway manages. */
  builtIn: boolean;
  /** A user profile's own fields (👤 models): `user` (the user's id) and `role` (a role name); set by scripts, never by forms. */
  profile?: 'user' | 'role';
  /**
   * Bounds: string length (max default 100), integer and double value (min default 0), html bytes
   * and markdown characters (max default 2000, at most 20000).
   */
  min?: number;
  max?: number;
  /** `init:` — true for "now", "today", the first option, the next hierarchy value; a number for integers. */
  init?: boolean | number;
  /** The values of an `options` field, in order. */
  values?: OptionValue[];
  /** `render:` options of html and markdown fields (autolink, minimumHeaderLevel, …). */
  render?: Record<string, string | number | boolean>;
  /** The linked model of a `link` field. */
  model?: string;
  /** The embedded type of an `embedded` field: a global name (`Contact`) or an inline one (`Order.Contact`). */
  embedded?: string;
  /**
   * Static models (`/🗄/`) only: what the document provides. `markdown` (`document-markdown`,
   * alias `document-text`): the Markdown body, a markdown field; `uid` (`document-uid`): the
   * document's path, a uid field; `date` (`document-date`): the date in the document's path, a date field.
   */
  document?: 'markdown' | 'uid' | 'date';
  /** `public: true` on an image field: its images get non-expiring, publicly cacheable URLs (docs/images.md "Serving"). */
  public?: boolean;
  /** `document-uid` with `path: true`: the uid is the path under /🗄/<Model>/ without extension. */
  path?: boolean;
  at: SourcePosition;
}

export interface ModelDefinition {
  /** `Task`; an inline embedded type is named after its owner and field: `Order.Contact`. */
  name: string;
  kind: ModelKind;
  /** The definition file (`/📦/List/🌐Task.yaml`); for inline types, the owner's file. */
  file: string;
  /** The containing model (`List` for `/📦/List/🌐Task.yaml`). */
  container?: string;
  /** `🎛: prefix:` prepended to generated ids (`tsk_`). */
  prefix?: string;
  /** Built-ins first (non-embedded models), then the fields in the order written. */
  fields: FieldDefinition[];
  at: SourcePosition;
}

/** Every model of an app. Names are global: a contained model's name is unique across the app. */
export interface ModelSchema {
  /** Universal, Content and Profile models by name. */
  models: Map<string, ModelDefinition>;
  /** Embedded types by name: global (`Contact`) and inline (`Order.Contact`). */
  embedded: Map<string, ModelDefinition>;
  /**
   * Models the app defines that Laneway cannot (key-vault models, models nested too deep), by
   * name: the feature they need, as docs/status.md names it. They are left out of `models`, and
   * what uses them degrades (docs/status.md "What degrades").
   */
  unavailable?: Map<string, string>;
}

/** Field types whose values may be lists (`name[]`, `name[N]`). */
export const LIST_TYPES: ReadonlySet<FieldType> = new Set<FieldType>(['string', 'options', 'embedded']);

/** Most entries of a `name[]` list; `name[N]` takes N below it. */
export const LIST_MAX = 20;

/** Most fields one model or embedded type defines (built-ins not counted). */
export const FIELDS_MAX = 20;

/** Longest model and field names. */
export const NAME_MAX = 20;

/** The default label of a field: `dueDate` → "Due Date", `url` → "Url". */
export function labelFromName(name: string): string {
  const words = name.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/([A-Z])([A-Z][a-z])/g, '$1 $2');
  return words.charAt(0).toUpperCase() + words.slice(1);
}
