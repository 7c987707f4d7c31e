/**
 * The model channel: everything the realm's model runtime (realm/41-models.js) asks of the host,
 * declared once. Each app installs its models with one `HostChannel` (`installModels`): the
 * database's (app/data.ts) or the static documents' (app/static-data.ts). Its methods become
 * realm functions (bridges, realm.ts): arguments are copied out of the realm and results in, so a
 * method receives and returns plain data only. A method may answer a Promise (PostgreSQL): the
 * runtime waits for it.
 *
 * The realm's code never hands the channel to a script; still, every argument is realm data, so
 * the host methods check what they rely on.
 */
import type { QuerySpec, RecordRow, WriteOp } from './records.js';

/** An answer that may come later (PostgreSQL). */
export type Answer<T> = T | Promise<T>;

/** What the host says of a value for a field: `[1, the value to store]` or `[0, why it is refused]`. */
export type CheckedValue = [ok: 1, value: unknown] | [ok: 0, message: string];

/**
 * The positions of the channel's answers that are arrays (CheckedValue, FormReading) and their
 * statuses; the realm receives a copy (realm-host.ts `answers`).
 */
export const ANSWER = Object.freeze({
  status: 0,
  /** CheckedValue: the value to store, or why it is refused. */
  value: 1,
  message: 1,
  /** FormReading: the values read, or the messages of a refusal. */
  values: 1,
  messages: 1,
  texts: 2,
  /** Statuses: a value accepted; a form read, or refused. */
  ok: 1,
  read: 1,
  refused: 2,
} as const);

/** A message of a refused form submission, as `$ModelInvalid` carries it. */
export interface FormMessage {
  type: string;
  field: string;
  value: string;
}

/**
 * A read form submission: `[1, [[field, value]…], texts]`, or `[2, messages, texts]` when it is
 * refused; `texts` are the submitted texts by field (by group, then field, for a form in groups),
 * for the view to show again.
 */
export type FormReading =
  | [status: 1, values: Array<[field: string, value: unknown]>, texts: Record<string, unknown>]
  | [status: 2, messages: FormMessage[], texts: Record<string, unknown>];

/** An aggregate of a query (`q.count()`, `q.exists()`, `q.sum(field)`, `q.avg(field)`). */
export type AggregateKind = 'count' | 'exists' | 'sum' | 'avg';

/** A section of a Markdown text (`value.sections()`): plain data of content/rich-text.ts. */
export type RichSection = object;

/** The host side of the model channel (see the file comment); static models answer the reads only. */
export interface HostChannel {
  // ---- Records ------------------------------------------------------------------------------
  /** The rows a query selects (checked: `list`, or `access` for one record, with users on). */
  query(spec: QuerySpec): Answer<RecordRow[]>;
  /** Gives the event loop a turn between two chunks of a long read (SQLite: its reads are synchronous). */
  pause(): Answer<void>;
  /** count, exists, sum or avg of a query (`field`: of sum and avg). */
  aggregate(spec: QuerySpec, kind: AggregateKind, field: string | undefined): Answer<number | boolean | null>;
  /** Writes the changes of the request's unit of work, in order, in its transaction. */
  write(ops: WriteOp[]): Answer<void>;
  /** A new record id for `model` (its `prefix:` and random text). */
  newId(model: string): string;
  /** The hierarchy position after the last record of `model` in `container` (a new record's default). */
  positionAtEnd(model: string, container: string | null | undefined): Answer<string>;
  /** Whether `value` may be stored in `model.field` (`model`: a model, embedded type or notification). */
  checkValue(model: string, field: string, value: unknown): CheckedValue;
  /** The same for one entry of the list field `model.field`. */
  checkListItem(model: string, field: string, value: unknown): CheckedValue;
  /** The containers the request's URL selects (model-backed path parameters): model name → id. */
  pathContainers(): Record<string, string>;

  // ---- Users (/👤.yaml) ------------------------------------------------------------------------
  /** Whether the request may read `Model.field` (`key`) of the stored record `row`; throws a 403 when `throwing`. */
  mayRead(key: string, row: RecordRow, throwing: boolean): boolean;
  /** Whether the request may find the record `id` of `model` (access, or read on its id): no error either way. */
  mayFind(model: string, id: string): Answer<boolean>;
  /** The signed-in user's id; null for a visitor. */
  userId(): string | null;

  // ---- Values ---------------------------------------------------------------------------------
  /** `hierarchy.next()`: the next position at the same level. */
  hierarchyNext(value: string): string;
  /** `hierarchy.previous()`. */
  hierarchyPrevious(value: string): string;
  /** `hierarchy.parent()`: null at the top level. */
  hierarchyParent(value: string): string | null;
  /** `hierarchy.hasParent`. */
  hierarchyHasParent(value: string): boolean;
  /** `hierarchy.before(other)`: a position between the two. */
  hierarchyBefore(value: string, other: string): string;
  /** The position after `value` (a new record after the last one this request made). */
  hierarchyAfterLast(value: string): string;
  /** HTML of a Markdown text with the options of the field whose rich-text key is `key` (none: `Model.markdown(text)`). */
  markdown(text: string, key?: string | null): string;
  /** `value.html(options)` of a rich-text value: `key` is its field's rich-text key. */
  richHtml(text: string, key: string | null, options?: unknown): string;
  /** `value.sections()`. */
  richSections(text: string, key: string | null): RichSection[];
  /** `value.text()`: the text without markup. */
  richText(text: string, key: string | null): string;
  /** The Markdown of a rich-text value: its source for a markdown field, made from the HTML of an html field. */
  richMarkdown(text: string, key: string | null): string | null;
  /** Whether a rich-text value's source meets its field's definition as it is now. */
  richValid(text: string, key: string | null): boolean;
  /** A signed upload URL for the image field `model.field` (`Model.field.uploadUrl()`). */
  imageUploadUrl(model: string, field: string): string;

  // ---- Forms (docs/forms.md) -------------------------------------------------------------------
  /** `Form.submit(record)`: the form state is claimed, then the submission read for a `model`. */
  submitForm(formKey: string, model: string): Promise<FormReading>;
  /** `Form.validate()` (`validate`) and `Form.get()`. */
  readForm(formKey: string, validate: boolean): Promise<FormReading>;
}

// ---- The models, as the realm's runtime is built from them (app/data.ts `describe`) -----------

/** A field of a model, embedded type or notification. */
export interface FieldDescriptor {
  name: string;
  type: string;
  /** Most entries of a list field, else null. */
  list: number | null;
  optional: boolean;
  label: string;
  placeholder: string | undefined;
  about: string | undefined;
  /** `protected: true`: readable by scripts, left out of a record's JSON (views, forms). */
  isProtected: boolean;
  /** The options of an options field: [value, label]. */
  values: Array<[value: unknown, label: string]>;
  /** The model a link field links to, else null. */
  model: string | null;
  /** The embedded type of an embedded field (`Type` or `Model.Type`), else null. */
  embedded: string | null;
  /** The field's `init:` (true: now, today, the first option, the next position; a number), else null. */
  init: boolean | number | null;
  unique: boolean;
  order: boolean;
  /** Queries may filter on the field (and order by it). */
  queryable: boolean;
  /** A profile's `role` or `user` field (docs/users.md), else null. */
  profile: 'user' | 'role' | null;
  /** The rich-text key of a markdown or html field (its renderer's, HostChannel.richHtml), else null. */
  richKey: string | null;
  /** An html field with `render:` options: its HTML comes from the host (richHtml), not as stored. */
  hostRendered: boolean;
}

/** A model (`/📦/Task.yaml`, a static `/🗄/` model). */
export interface ModelDescriptor {
  name: string;
  kind: string;
  /** The container model, else null. */
  container: string | null;
  /** The member naming the container (`list` for a List): `Task.list(l)`, `task.list`, a group's key. */
  containerMember: string | null;
  /** The member naming the model's records in a group of `Parent.grouping(…)` (`task` for a Task). */
  memberName: string;
  /** What the model's ids start with. */
  prefix: string;
  /** The fields that are not built in, in their order (a row's values, records.ts ROW). */
  fields: FieldDescriptor[];
}

/** An embedded type or a notification: named fields. */
export interface TypeDescriptor {
  name: string;
  fields: FieldDescriptor[];
}

/** An app's models, as `installModels` gives them to the realm. */
export interface ModelsDescriptor {
  /** Static models (`/🗄/`): read-only, answered from memory. */
  static: boolean;
  /** Users are on (/👤.yaml): the host checks reads, queries and writes (mayRead, query, write). */
  checksPermissions: boolean;
  /** The key views render the app's images with, else null. */
  imageKey: string | null;
  models: ModelDescriptor[];
  embedded: TypeDescriptor[];
  notifications: TypeDescriptor[];
}

/** The names of the channel's operations. */
export type ChannelOperation = keyof HostChannel;

/**
 * The channel with each method's failures mapped by `mapError` (synchronous throws and rejected
 * Promises alike). Made once per app: a call goes through one more function, allocating nothing.
 */
export function mapChannelErrors(channel: HostChannel, mapError: (e: unknown) => unknown): HostChannel {
  const out: Record<string, (a: unknown, b: unknown, c: unknown) => unknown> = {};
  const reject = (e: unknown) => Promise.reject(mapError(e));
  for (const name of Object.keys(channel) as ChannelOperation[]) {
    const method = channel[name] as (a: unknown, b: unknown, c: unknown) => unknown;
    out[name] = (a, b, c) => {
      try {
        const r = method(a, b, c);
        return r instanceof Promise ? r.catch(reject) : r;
      } catch (e) {
        throw mapError(e);
      }
    };
  }
  return out as unknown as HostChannel;
}
