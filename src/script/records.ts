/**
 * The shapes in which the script realm's model runtime (realm/41-models.js) asks for and keeps
 * records, through the model channel (channel.ts): a query, a record's row, and a write of the
 * runtime's unit of work (docs/data.md). The two backends of queries answer in them: src/store
 * for the database, src/content for static documents.
 *
 * Rows and writes are arrays, not objects: thousands of rows cross the membrane per request and a
 * positional array is the cheapest thing to copy and to keep. Their positions are named here, once;
 * the realm receives the same frozen constants from the host (realm-host.ts `records`).
 */

/** `match`: an embedded field (or list) holding these sub-field values ([name, value] pairs). */
export type FilterOp = 'eq' | 'gt' | 'gte' | 'lt' | 'lte' | 'match';

/** A query as the script runtime describes it (answered by store/session.ts and content/query.ts). */
export interface QuerySpec {
  /** Model name. */
  m: string;
  /** Field filters, ANDed: [field, op, value]. `id`, `created` and `modified` may be filtered too. */
  w: Array<[field: string, op: FilterOp, value: unknown]>;
  /** Container id: the children of one record. Absent: every record (top-level models, anyContainer). */
  c?: string;
  /** Container ids: the children of these records (grouping). */
  cs?: string[];
  /** Explicit order; absent: natural order. */
  o?: 'asc' | 'desc';
  /** Most rows. */
  l?: number;
  /** One record is asked for (get, optional, a load by id): for permissions, `access` rather than `list`. */
  one?: boolean;
  /** The next chunk of a long read: the records after this one (its row as select() gave it) in the query's order. */
  a?: unknown[];
}

/**
 * The positions of a record's row: id, created and modified (milliseconds), the container's id
 * (null for a top-level model), then the values of the model's own fields (those that are not
 * built in) in their order, the first at `ROW.fields`.
 */
export const ROW = Object.freeze({ id: 0, created: 1, modified: 2, container: 3, fields: 4 } as const);

/** A record's row (see ROW): `[id, created, modified, container, ...field values]`. */
export type RecordRow = unknown[];

/**
 * The positions of a write (WriteOp): every kind starts with its kind and the model and id of the
 * record; the rest depends on the kind.
 */
export const WRITE = Object.freeze({
  kind: 0,
  model: 1,
  id: 2,
  insert: Object.freeze({ created: 3, modified: 4, container: 5, values: 6 } as const),
  update: Object.freeze({ modified: 3, values: 4, container: 5 } as const),
  remove: Object.freeze({ container: 3 } as const),
} as const);

/** The kinds of WriteOp, at `WRITE.kind`. */
export const WRITE_KIND = Object.freeze({ insert: 'i', update: 'u', remove: 'd' } as const);

/** A write of the script runtime's unit of work (realm/41-models.js `flush`): insert, update, delete (positions: WRITE). */
export type WriteOp =
  | [kind: 'i', model: string, id: string, created: number, modified: number, container: string | null, values: Record<string, unknown>]
  | [kind: 'u', model: string, id: string, modified: number, values: Record<string, unknown>, container?: string | null]
  | [kind: 'd', model: string, id: string, container?: string | null];

export type InsertOp = Extract<WriteOp, [kind: 'i', ...unknown[]]>;
export type UpdateOp = Extract<WriteOp, [kind: 'u', ...unknown[]]>;
export type RemoveOp = Extract<WriteOp, [kind: 'd', ...unknown[]]>;
/** Which kind of write `op` is (narrows its type, so its positions are typed). */
export const isInsert = (op: WriteOp): op is InsertOp => op[WRITE.kind] === WRITE_KIND.insert;
export const isUpdate = (op: WriteOp): op is UpdateOp => op[WRITE.kind] === WRITE_KIND.update;
export const isRemove = (op: WriteOp): op is RemoveOp => op[WRITE.kind] === WRITE_KIND.remove;

/** The constants the realm receives (RealmHost `records`). */
export const RECORD_LAYOUT = Object.freeze({ row: ROW, write: WRITE, kind: WRITE_KIND } as const);
export type RecordLayout = typeof RECORD_LAYOUT;
