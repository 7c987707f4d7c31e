/**
 * One request's access to the data: the queries and writes the script runtime asks for (through
 * the app's model channel), turned into parameterised SQL for the engine's dialect, and rows
 * decoded into the values scripts see.
 *
 * A read session (GET, views, suppliers) uses the engine's reader and refuses writes; a write
 * session (POST, PUT, DELETE) holds a write transaction from before the script runs until it is
 * committed (success) or rolled back (any failure). SQL texts are cached per query shape.
 */
import { LanewayError } from '../diag/index.js';
import { checkBoolean, checkDate, checkInteger, hierarchySortKey, renderMarkdown } from '../models/index.js';
import { then } from '../shared/index.js';
import { isInsert, isUpdate, ROW, WRITE, type FilterOp, type QuerySpec, type WriteOp } from '../script/index.js';
import { StoreError, type Dialect, type Engine, type Row, type SqlValue, type Writer } from './types.js';
import { q, type FieldLayout, type TableLayout } from './tables.js';
import { profileExists, profileUser } from './profiles.js';

/** Most writes (creates, updates, removals) one request may make. */
export const WRITE_LIMIT = 100;
/** Results of an unordered query without `limit(n)`; `limit` may raise it to UNORDERED_MAX. */
export const UNORDERED_CAP = 100;
export const UNORDERED_MAX = 500;
/** Rows of one chunk of a long read (the script runtime reads this many at a time: script/realm/41-models.js `readChunks`). */
export const READ_CHUNK = 1000;

// The query and write shapes of the script runtime (script/records.ts).
export type { FilterOp, QuerySpec, WriteOp } from '../script/index.js';

/** A condition of a chunk of a long read (DataSession #after), with its parameters. */
interface After {
  cond: string;
  params: SqlValue[];
}

/** A uid value that is another record's old one (docs/models.md "Ids"): 409, as a unique conflict. */
function uidReserved(t: TableLayout, f: FieldLayout, value: string): LanewayError {
  return new LanewayError(
    'LW_MODEL_UNIQUE',
    `another ${t.model.name} had this ${f.field.label} ("${value}"): its old ${f.field.name} values stay its own, and its old URLs lead to it ("${f.field.name}" is a uid)`,
    { status: 409 },
  );
}

function badQuery(message: string): LanewayError {
  return new LanewayError('LW_MODEL_QUERY', message, { status: 500 });
}

/** The column a filter on `name` reads, and how to encode its value. */
function filterColumn(t: TableLayout, name: string): { column: string; field?: FieldLayout } {
  if (name === 'id' || name === 'created' || name === 'modified') return { column: name };
  const f = t.byName.get(name);
  if (!f) throw badQuery(`${t.model.name} has no field "${name}"`);
  if (!f.queryable) throw badQuery(`${t.model.name}.${name} is a ${f.field.type}${f.field.list !== undefined ? ' list' : ''} field, which cannot be queried`);
  return { column: f.field.type === 'hierarchy' ? f.extra! : f.column, field: f };
}

function toMs(v: unknown): number {
  if (v instanceof Date) return v.getTime();
  if (typeof v === 'number') return v;
  const t = Date.parse(String(v));
  if (!Number.isFinite(t)) throw badQuery(`"${String(v)}" is not a time`);
  return t;
}

/** A double written as text. One way to match each text (docs/architecture.md "Regular expressions on what a visitor sends"). */
export const DOUBLE_TEXT = /^\s*[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?\s*$/;

/** Milliseconds a Date can hold (ECMAScript's time range), so that both engines store them exactly. */
const MAX_MS = 8.64e15;

/**
 * A filter's value checked against the field's type before any SQL (docs/queries.md, "Values of
 * the wrong type"). SQLite would compare any value with any column, and PostgreSQL refuses one its
 * column type cannot read (with a message of its own): checked here, both engines answer alike,
 * with an LW_MODEL_QUERY error naming the query. Types stored as text compare as text on both.
 */
function filterValue(t: TableLayout, name: string, op: FilterOp, f: FieldLayout | undefined, v: unknown): unknown {
  if (v === null || v === undefined) return v;
  const type = f ? f.field.type : name === 'id' ? 'id' : 'timestamp';
  const wrong = (what: string): LanewayError => {
    const shown = typeof v === 'string' ? JSON.stringify(v.length > 40 ? v.slice(0, 40) + '…' : v) : typeof v === 'number' || typeof v === 'boolean' ? String(v) : `a${Array.isArray(v) ? 'n array' : 'n object'}`;
    return badQuery(`${t.model.name}.${name}${op === 'eq' ? '' : '_' + op}(${shown}): ${t.model.name}.${name} is ${/^[aeiou]/.test(type) ? 'an' : 'a'} ${type} field; ${what}`);
  };
  switch (type) {
    case 'integer': {
      const r = checkInteger(typeof v === 'string' || typeof v === 'number' || typeof v === 'bigint' ? v : NaN, { min: -(2 ** 63) });
      if (!r.ok) throw wrong(`pass a whole number between -9223372036854775808 and 9223372036854775807 (a number, or its digits as text)`);
      return r.value;
    }
    case 'double': {
      const n = typeof v === 'number' ? v : typeof v === 'string' && DOUBLE_TEXT.test(v) ? Number(v) : NaN;
      if (!Number.isFinite(n)) throw wrong('pass a finite number (a number, or its digits as text)');
      return n;
    }
    case 'boolean': {
      const r = checkBoolean(v);
      if (!r.ok) throw wrong('pass true or false');
      return r.value;
    }
    case 'timestamp': {
      // Dates reach the store as milliseconds (the script runtime's storeForm).
      const ms = typeof v === 'number' ? v : typeof v === 'string' ? Date.parse(v) : v instanceof Date ? v.getTime() : NaN;
      if (!Number.isInteger(ms) || Math.abs(ms) > MAX_MS) throw wrong('pass a Date or an ISO-8601 time, such as 2024-05-06T14:30:00Z');
      return ms;
    }
    case 'date': {
      const r = checkDate(v);
      if (!r.ok) throw wrong(`pass a date as text, such as 2024-05-06 (it ${r.message})`);
      return r.value;
    }
    default:
      return v;
  }
}

/** A value for a column (filters and writes). */
export function encodeValue(f: FieldLayout | undefined, name: string, v: unknown): SqlValue {
  if (v === null || v === undefined) return null;
  if (!f) return name === 'id' ? String(v) : toMs(v);
  if (f.json) return JSON.stringify(v);
  switch (f.field.type) {
    case 'boolean':
      return v === true || v === 1 || v === 'true' || v === '1' ? 1 : 0;
    case 'integer':
      return typeof v === 'bigint' ? v : Number(v);
    case 'double':
      return Number(v);
    case 'timestamp':
      return toMs(v);
    case 'date':
      return v instanceof Date ? v.toISOString().slice(0, 10) : String(v);
    case 'link':
      return typeof v === 'object' && v !== null && 'id' in v ? String((v as { id: unknown }).id) : String(v);
    default:
      return String(v);
  }
}

/**
 * A selected row, decoded in place (id, created, modified, container, then the fields in layout
 * order: the SELECT list gives exactly these columns, tables.ts): each engine answers fresh arrays,
 * so no second array is made per row.
 */
function decodeRow(t: TableLayout, row: Row): unknown[] {
  const out = row as unknown[];
  out[ROW.created] = Number(row[ROW.created]);
  out[ROW.modified] = Number(row[ROW.modified]);
  const fields = t.fields;
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i]!;
    const v = row[f.index];
    if (v === null) out[f.index] = f.field.list !== undefined ? [] : f.field.type === 'map' ? {} : null;
    else if (f.json) out[f.index] = JSON.parse(String(v));
    else if (f.field.type === 'boolean') out[f.index] = v === 1 || v === 1n;
    else if (f.field.type === 'timestamp') out[f.index] = Number(v);
  }
  return out;
}

/** The INSERT texts of each table by the columns they set (DataSession #insertSql); a few per table at most. */
const INSERTS = new WeakMap<TableLayout, Array<{ columns: string[]; sql: string }>>();
const MAX_INSERT_SHAPES = 64;

function sameColumns(columns: readonly string[], cols: ReadonlyArray<[string, SqlValue]>): boolean {
  if (columns.length !== cols.length) return false;
  for (let i = 0; i < columns.length; i++) if (columns[i] !== cols[i]![0]) return false;
  return true;
}

export class DataSession {
  readonly #engine: Engine;
  readonly #tables: Map<string, TableLayout>;
  readonly #sql: Map<string, string>;
  readonly #writer: Writer | undefined;
  /** Why writes are refused in a read session (for the error message). */
  readonly #readOnly: string;
  writes = 0;

  constructor(engine: Engine, tables: Map<string, TableLayout>, sqlCache: Map<string, string>, writer: Writer | undefined, readOnly = '') {
    this.#engine = engine;
    this.#tables = tables;
    this.#sql = sqlCache;
    this.#writer = writer;
    this.#readOnly = readOnly;
  }

  get dialect(): Dialect {
    return this.#engine.dialect;
  }

  #table(m: string): TableLayout {
    const t = this.#tables.get(m);
    if (!t) throw badQuery(`there is no model ${m}`);
    return t;
  }

  /** The SQL for the engine: PostgreSQL numbers its placeholders ($1, $2…); cached per text. */
  #text(sql: string): string {
    if (this.#engine.dialect !== 'postgres') return sql;
    let out = this.#sql.get('pg|' + sql);
    if (out === undefined) {
      let n = 0;
      out = sql.replace(/\?/g, () => `$${++n}`);
      this.#sql.set('pg|' + sql, out);
    }
    return out;
  }

  #all(sql: string, params: SqlValue[]): Row[] | Promise<Row[]> {
    if (!this.#writer) return this.#engine.reader.all(this.#text(sql), params);
    // A read sends the writes held back before it (PostgreSQL): their conflicts surface here.
    const r = this.#writer.all(this.#text(sql), params);
    return r instanceof Promise ? r.catch((e: unknown) => Promise.reject(this.commitError(e))) : r;
  }

  #where(t: TableLayout, spec: QuerySpec, params: SqlValue[], after?: After): string {
    const conds: string[] = [];
    if (spec.c !== undefined) {
      conds.push('"container" = ?');
      params.push(spec.c);
    }
    if (spec.cs !== undefined) {
      // One parameter whatever the number of ids: one SQL text (and prepared statement) per shape.
      conds.push(this.#engine.dialect === 'postgres' ? '"container" IN (SELECT jsonb_array_elements_text(?::jsonb))' : '"container" IN (SELECT value FROM json_each(?))');
      params.push(JSON.stringify(spec.cs));
    }
    for (const [name, op, value] of spec.w) {
      if (op === 'match') {
        conds.push(this.#match(t, name, value as Array<[string, unknown]>, params));
        continue;
      }
      const { column, field } = filterColumn(t, name);
      let v = encodeValue(field, name, filterValue(t, name, op, field, value));
      if (field?.field.type === 'hierarchy' && typeof v === 'string') v = hierarchySortKey(v);
      if (v === null) {
        if (op !== 'eq') throw badQuery(`${t.model.name}.${name}_${op}(null) compares with nothing: pass a value`);
        conds.push(`${q(column)} IS NULL`);
        continue;
      }
      conds.push(`${q(column)} ${op === 'eq' ? '=' : op === 'gt' ? '>' : op === 'gte' ? '>=' : op === 'lt' ? '<' : '<='} ?`);
      params.push(v);
    }
    if (after !== undefined) {
      conds.push(after.cond);
      params.push(...after.params);
    }
    return conds.length ? ' WHERE ' + conds.join(' AND ') : '';
  }

  /**
   * The records after `row` in the order #order writes, as conditions read one after the other
   * (the next only when the one before found too few): each is a range of the natural index, so
   * that a chunk of a long read costs what its rows cost, not what the chunks before it did.
   * Records without a value in the ordering field come first in ascending order, last in
   * descending order.
   */
  #after(t: TableLayout, spec: QuerySpec, row: readonly unknown[]): After[] {
    const desc = spec.o === 'desc';
    const key: SqlValue[] = [Number(row[ROW.created]), String(row[ROW.id])];
    const range = (columns: string, values: SqlValue[]): After => ({ cond: `(${columns}) ${desc ? '<' : '>'} (${values.map(() => '?').join(', ')})`, params: values });
    if (t.orderColumn === undefined) return [range('"created", "id"', key)];
    const f = t.fields.find((x) => x.column === t.orderColumn || x.extra === t.orderColumn)!;
    const o = q(t.orderColumn);
    let v = encodeValue(f, f.field.name, row[f.index]);
    if (v === null) {
      const nulls = range('"created", "id"', key);
      nulls.cond = `${o} IS NULL AND ${nulls.cond}`;
      return desc ? [nulls] : [nulls, { cond: `${o} IS NOT NULL`, params: [] }];
    }
    if (f.field.type === 'hierarchy' && typeof v === 'string') v = hierarchySortKey(v);
    const values = range(`${o}, "created", "id"`, [v, ...key]);
    return desc ? [values, { cond: `${o} IS NULL`, params: [] }] : [values];
  }

  /**
   * An embedded field matching sub-field values. The JSON column is read with each dialect's JSON
   * functions; the keys are field names of the definition (checked by the runtime and here), values
   * are parameters. In an embedded list, one entry must match every value.
   */
  #match(t: TableLayout, name: string, pairs: Array<[string, unknown]>, params: SqlValue[]): string {
    const f = t.byName.get(name);
    if (!f || f.field.type !== 'embedded') throw badQuery(`${t.model.name}.${name} is not an embedded field`);
    const pg = this.#engine.dialect === 'postgres';
    const list = f.field.list !== undefined;
    const item = list ? (pg ? 'e.value' : 'e.value') : pg ? `${q(f.column)}::jsonb` : q(f.column);
    const conds = pairs.map(([key, v]) => {
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) throw badQuery(`"${key}" is not a field name`);
      if (v === null) return pg ? `(${item} ->> '${key}') IS NULL` : `json_extract(${item}, '$.${key}') IS NULL`;
      if (pg) {
        params.push(typeof v === 'boolean' ? String(v) : typeof v === 'number' ? JSON.stringify(v) : (v as SqlValue));
        return `${item} ->> '${key}' = ?`;
      }
      params.push(typeof v === 'boolean' ? (v ? 1 : 0) : (v as SqlValue));
      return `json_extract(${item}, '$.${key}') = ?`;
    });
    if (!list) return conds.join(' AND ');
    const each = pg ? `jsonb_array_elements(CASE WHEN ${q(f.column)} IS NULL THEN '[]'::jsonb ELSE ${q(f.column)}::jsonb END) AS e(value)` : `json_each(${q(f.column)}) AS e`;
    return `EXISTS (SELECT 1 FROM ${each} WHERE ${conds.join(' AND ')})`;
  }

  #order(t: TableLayout, spec: QuerySpec): string {
    const desc = spec.o === 'desc';
    const dir = desc ? ' DESC' : '';
    const first = t.orderColumn ? `${q(t.orderColumn)}${desc ? ' DESC NULLS LAST' : ' NULLS FIRST'}, ` : '';
    return ` ORDER BY ${first}"created"${dir}, "id"${dir}`;
  }

  /**
   * Between two chunks of a long read: SQLite answers synchronously, so the read waits for the next
   * turn of the event loop and the requests waiting meanwhile are served first (docs/queries.md);
   * PostgreSQL waits for every read already.
   */
  pause(): void | Promise<void> {
    return this.#engine.dialect === 'sqlite' ? new Promise<void>((r) => setImmediate(r)) : undefined;
  }

  /** Rows of a query, decoded (id, created, modified, container, then the fields in order). */
  select(spec: QuerySpec): unknown[][] | Promise<unknown[][]> {
    if (spec.a === undefined || spec.l === undefined) return this.#select(spec);
    const parts = this.#after(this.#table(spec.m), spec, spec.a);
    const limit = spec.l;
    const from = (i: number, got: unknown[][]): unknown[][] | Promise<unknown[][]> =>
      then(this.#select(i === 0 ? spec : { ...spec, l: limit - got.length }, parts[i]), (rows) => {
        const all = got.length ? got.concat(rows) : rows;
        return i + 1 < parts.length && all.length < limit ? from(i + 1, all) : all;
      });
    return from(0, []);
  }

  #select(spec: QuerySpec, after?: After): unknown[][] | Promise<unknown[][]> {
    const t = this.#table(spec.m);
    const params: SqlValue[] = [];
    const where = this.#where(t, spec, params, after);
    // One row at most (an id lookup): no order, no limit. A limit of 1 (get, optional) and a
    // chunk's are written into the SQL (a bound LIMIT costs SQLite a plan per call); other limits
    // are parameters.
    const byId = spec.l !== 0 && spec.w.length === 1 && spec.w[0]![0] === 'id' && spec.w[0]![1] === 'eq';
    const limit = byId || spec.l === undefined ? '' : spec.l === 1 || spec.l === READ_CHUNK ? ` LIMIT ${spec.l}` : ' LIMIT ?';
    const key = `s|${this.#writer ? 'w' : 'r'}|${spec.m}|${where}|${spec.o ?? ''}|${limit}`;
    let sql = this.#sql.get(key);
    if (sql === undefined) {
      sql = `SELECT ${t.select} FROM ${q(t.table)}${where}${byId ? '' : this.#order(t, spec)}${limit}`;
      // PostgreSQL: a write transaction locks the rows it reads, so read-modify-write (c.count += 1)
      // of concurrent requests never loses an update (SQLite has one writer at a time already).
      if (this.#writer && this.#engine.dialect === 'postgres') sql += ' FOR UPDATE';
      this.#sql.set(key, sql);
    }
    if (limit === ' LIMIT ?') params.push(spec.l!);
    return then(this.#all(sql, params), (rows) => {
      for (let i = 0; i < rows.length; i++) decodeRow(t, rows[i]!);
      return rows as unknown[][];
    });
  }

  /** count, exists, sum(field), avg(field) of a query (after its limit). */
  aggregate(spec: QuerySpec, kind: 'count' | 'exists' | 'sum' | 'avg', field?: string): number | boolean | null | Promise<number | boolean | null> {
    const t = this.#table(spec.m);
    const params: SqlValue[] = [];
    const where = this.#where(t, spec, params);
    let column = '';
    if (kind === 'sum' || kind === 'avg') {
      const f = t.byName.get(field ?? '');
      if (!f || (f.field.type !== 'integer' && f.field.type !== 'double') || f.field.list !== undefined) {
        throw badQuery(`${kind}() needs a number field of ${t.model.name}, such as ${t.model.name}.${t.fields.find((x) => x.field.type === 'integer' || x.field.type === 'double')?.field.name ?? 'amount'}`);
      }
      column = f.column;
    }
    let sql: string;
    if (kind === 'exists') {
      sql = `SELECT 1 FROM ${q(t.table)}${where} LIMIT 1`;
    } else {
      // With a limit, the aggregate reads the limited rows (in query order) through a subquery.
      const limited = spec.l !== undefined;
      const from = limited ? `(SELECT ${column ? q(column) : '1'} AS x FROM ${q(t.table)}${where}${this.#order(t, spec)} LIMIT ?) AS sub` : `${q(t.table)}${where}`;
      const col = limited ? 'x' : q(column);
      sql = `SELECT ${kind === 'count' ? 'COUNT(*)' : kind === 'sum' ? `COALESCE(SUM(${col}), 0)` : `AVG(${col})`} FROM ${from}`;
      if (limited) params.push(spec.l!);
    }
    return then(this.#all(sql, params), (rows) => {
      if (kind === 'exists') return rows.length > 0;
      const v = rows[0]?.[0] ?? null;
      if (v === null) return kind === 'sum' ? 0 : null;
      return Number(v);
    });
  }

  /** Creates, updates and removals, in order, inside the request's transaction. */
  write(ops: WriteOp[]): void | Promise<void> {
    const w = this.#writer;
    if (!w) {
      throw new LanewayError('LW_MODEL_READ_ONLY', `${this.#readOnly || 'this request'} cannot change data: only POST, PUT and DELETE scripts, and the body of a ⏱ stream, write (docs/data.md "How requests use the database")`, { status: 500 });
    }
    this.writes += ops.length;
    if (this.writes > WRITE_LIMIT) {
      throw new LanewayError('LW_MODEL_WRITE_LIMIT', `a request may make at most ${WRITE_LIMIT} writes (creates, updates and removals); this one made ${this.writes} (LW_MODEL_WRITE_LIMIT): split the work over several requests`, { status: 500, expose: true });
    }
    let chain: void | Promise<void> = undefined;
    for (const op of ops) chain = then(chain, () => this.#op(w, op));
    return chain;
  }

  /** A unique conflict of a write held back until the commit (PostgreSQL), as the 409 a script gets. */
  commitError(e: unknown): unknown {
    return e instanceof StoreError && e.sql !== undefined ? this.#conflict(e, e.sql) : e;
  }

  #run(w: Writer, sql: string, params: SqlValue[]): void | Promise<void> {
    try {
      const r = w.run(this.#text(sql), params);
      return r instanceof Promise ? r.catch((e) => { throw this.#conflict(e, sql); }) : r;
    } catch (e) {
      throw this.#conflict(e, sql);
    }
  }

  /** A profile table without its unique index (profiles.ts): a second profile is refused by a query. */
  #profileTaken(t: TableLayout, container: string | null, values: Record<string, unknown>): void | Promise<void> {
    const user = profileUser(t)!;
    const id = values[user.field.name];
    if (typeof id !== 'string') return;
    const sql = `SELECT 1 FROM ${q(t.table)} WHERE ${container === null ? '"container" IS NULL' : '"container" = ?'} AND ${q(user.column)} = ? LIMIT 1`;
    return then(this.#all(sql, container === null ? [id] : [container, id]), (rows) => {
      if (rows.length) throw profileExists(t);
    });
  }

  /** A unique-index conflict becomes a 409 naming the field. */
  #conflict(e: unknown, sql: string): unknown {
    if (!(e instanceof StoreError) || e.code !== 'LW_STORE_UNIQUE') return e;
    const table = /"lw_(\w+)"/.exec(sql)?.[1] ?? '';
    const t = this.#tables.get(table);
    const c = e.constraint ?? '';
    const name = /f_(\w+)/.exec(c)?.[1] ?? (t ? new RegExp(`^lw_${table}_(\\w+)_u$`).exec(c)?.[1] : undefined);
    const field = name && t?.byName.get(name)?.field;
    if (t && field && field.profile === 'user') return profileExists(t);
    return new LanewayError(
      'LW_MODEL_UNIQUE',
      field ? `another ${table} has this ${field.label} already ("${field.name}" is unique)` : `another ${table} has the same unique value`,
      { status: 409 },
    );
  }

  #columns(t: TableLayout, values: Record<string, unknown>): Array<[string, SqlValue]> {
    const out: Array<[string, SqlValue]> = [];
    for (const name of Object.keys(values)) {
      const f = t.byName.get(name);
      if (!f) throw badQuery(`${t.model.name} has no field "${name}"`);
      const v = encodeValue(f, name, values[name]);
      out.push([f.column, v]);
      if (f.field.type === 'hierarchy') out.push([f.extra!, typeof v === 'string' ? hierarchySortKey(v) : null]);
      else if (f.field.type === 'markdown') out.push([f.extra!, typeof v === 'string' ? renderMarkdown(v) : null]);
    }
    return out;
  }

  /**
   * PostgreSQL: the transaction's locks on uid values (released at its end), so that a record
   * taking a value and another giving it up (its old value, kept in lw__uid) never pass each
   * other: the second one's next statement sees the first one's commit. SQLite has one writer.
   * With `id` (an update), the record's current values are locked too.
   */
  #lockUids(t: TableLayout, uids: Array<[FieldLayout, string]>, id?: string): void | Promise<void> {
    if (this.#engine.dialect !== 'postgres') return;
    const params: SqlValue[] = [];
    const calls = uids.map(([f, v]) => {
      params.push(`${t.model.name}.${f.field.name}`, v);
      return 'pg_advisory_xact_lock(hashtext(?), hashtext(?))';
    });
    if (id !== undefined) {
      for (const [f] of uids) {
        params.push(`${t.model.name}.${f.field.name}`, id);
        calls.push(`pg_advisory_xact_lock(hashtext(?), hashtext((SELECT ${q(f.column)} FROM ${q(t.table)} WHERE "id" = ?)))`);
      }
    }
    return then(this.#all(`SELECT ${calls.join(', ')}`, params), () => undefined);
  }

  /** The uid fields a write sets, with their new values. */
  #uidsSet(t: TableLayout, cols: Array<[string, SqlValue]>): Array<[FieldLayout, string]> {
    const out: Array<[FieldLayout, string]> = [];
    for (const f of t.uids) {
      const v = cols.find((c) => c[0] === f.column)?.[1];
      if (typeof v === 'string') out.push([f, v]);
    }
    return out;
  }

  /**
   * The INSERT of a record of `t` setting `cols` (after id, created, modified, container): made once
   * per table and columns, found again by comparing the column names (no key text per write).
   */
  #insertSql(t: TableLayout, cols: Array<[string, SqlValue]>): string {
    let shapes = INSERTS.get(t);
    if (shapes === undefined) INSERTS.set(t, (shapes = []));
    for (const shape of shapes) if (sameColumns(shape.columns, cols)) return shape.sql;
    const columns = cols.map((c) => c[0]);
    const names = ['id', 'created', 'modified', 'container', ...columns];
    const sql = `INSERT INTO ${q(t.table)} (${names.map(q).join(', ')}) VALUES (${names.map(() => '?').join(', ')})`;
    if (shapes.length < MAX_INSERT_SHAPES) shapes.push({ columns, sql });
    return sql;
  }

  #op(w: Writer, op: WriteOp): void | Promise<void> {
    const t = this.#table(op[WRITE.model]);
    const id = op[WRITE.id];
    const values = isInsert(op) ? op[WRITE.insert.values] : isUpdate(op) ? op[WRITE.update.values] : undefined;
    if (isInsert(op)) {
      const { created, modified, container } = WRITE.insert;
      const cols = this.#columns(t, values!);
      const sql = this.#insertSql(t, cols);
      const insert = () => then(this.#run(w, sql, [id, op[created], op[modified], op[container], ...cols.map((c) => c[1])]), () => undefined);
      const uids = this.#uidsSet(t, cols);
      const checked = (): void | Promise<void> => {
        if (!uids.length) return;
        // A value another record had is still its (docs/models.md "Ids"): 409.
        return then(this.#lockUids(t, uids), () =>
          then(this.#all(`SELECT ${uids.map(() => '(SELECT "id" FROM "lw__uid" WHERE "model" = ? AND "field" = ? AND "value" = ?)').join(', ')}`, uids.flatMap(([f, v]) => [t.model.name, f.field.name, v])), (r) => {
            uids.forEach(([f, v], i) => {
              if (r[0]?.[i] != null) throw uidReserved(t, f, v);
            });
          }),
        );
      };
      return then(checked(), () => (t.duplicateProfiles ? then(this.#profileTaken(t, op[container], values!), insert) : insert()));
    }
    if (isUpdate(op)) {
      const cols = this.#columns(t, values!);
      const uids = this.#uidsSet(t, cols);
      const record = (): void | Promise<void> => {
        if (!uids.length) return;
        // Old uid values answer 301 to the current one (docs/routing.md "Dynamic segments") and
        // stay the record's: another record cannot take one (409); the record itself can (its
        // entry goes). One statement reads the current values and who holds the new ones.
        const locked = this.#lockUids(t, uids, id);
        const params: SqlValue[] = [];
        const held = uids.map(([f, v]) => {
          params.push(t.model.name, f.field.name, v);
          return '(SELECT "id" FROM "lw__uid" WHERE "model" = ? AND "field" = ? AND "value" = ?)';
        });
        const read = () => this.#all(`SELECT ${uids.map(([f]) => q(f.column)).join(', ')}, ${held.join(', ')} FROM ${q(t.table)} WHERE "id" = ?`, [...params, id]);
        return then(then(locked, read), (r) => {
          let chain: void | Promise<void> = undefined;
          uids.forEach(([f, v], i) => {
            const old = r[0]?.[i];
            if (old === v) return;
            const holder = r[0]?.[uids.length + i];
            if (holder != null && String(holder) !== id) throw uidReserved(t, f, v);
            const name = f.field.name;
            if (holder != null) chain = then(chain, () => this.#run(w, 'DELETE FROM "lw__uid" WHERE "model" = ? AND "field" = ? AND "value" = ?', [t.model.name, name, v]));
            if (typeof old !== 'string') return;
            chain = then(chain, () => then(this.#run(w, 'DELETE FROM "lw__uid" WHERE "model" = ? AND "field" = ? AND "value" = ?', [t.model.name, name, old]), () =>
              then(this.#run(w, 'INSERT INTO "lw__uid" ("model", "field", "value", "id") VALUES (?, ?, ?, ?)', [t.model.name, name, old, id]), () => undefined)));
          });
          return chain;
        });
      };
      return then(record(), () => {
        const set = [...cols.map((c) => `${q(c[0])} = ?`), '"modified" = ?'].join(', ');
        return then(this.#run(w, `UPDATE ${q(t.table)} SET ${set} WHERE "id" = ?`, [...cols.map((c) => c[1]), op[WRITE.update.modified], id]), () => undefined);
      });
    }
    // Removal: refused while the record contains children (no cascades, ever).
    const children = [...this.#tables.values()].filter((c) => c.model.container === t.model.name);
    let chain: void | Promise<void> = undefined;
    for (const c of children) {
      chain = then(chain, () =>
        then(this.#all(`SELECT 1 FROM ${q(c.table)} WHERE "container" = ? LIMIT 1`, [id]), (rows) => {
          if (rows.length) {
            throw new LanewayError('LW_MODEL_HAS_CHILDREN', `this ${t.model.name} still contains ${c.model.name} records: remove them first`, { status: 409 });
          }
        }),
      );
    }
    return then(chain, () =>
      then(this.#run(w, `DELETE FROM ${q(t.table)} WHERE "id" = ?`, [id]), () =>
        then(this.#run(w, 'DELETE FROM "lw__uid" WHERE "model" = ? AND "id" = ?', [t.model.name, id]), () => undefined),
      ),
    );
  }

  /**
   * The record a path parameter names (docs/request.md "`field:`: a record"), by `id` or a `uid`
   * field: its row as select() gives it (id, created, modified, container, fields…), or undefined.
   */
  findRecord(model: string, field: string, value: string): unknown[] | undefined | Promise<unknown[] | undefined> {
    const t = this.#table(model);
    const column = field === 'id' ? 'id' : t.byName.get(field)?.column;
    if (!column) throw badQuery(`${model} has no field "${field}"`);
    return then(this.#all(`SELECT ${t.select} FROM ${q(t.table)} WHERE ${q(column)} = ?`, [value]), (r) => (r.length ? decodeRow(t, r[0]!) : undefined));
  }

  /** The current value of a record's field (the uid an old one redirects to). */
  fieldOf(model: string, id: string, field: string): unknown | Promise<unknown> {
    const t = this.#table(model);
    const column = t.byName.get(field)?.column;
    if (!column) throw badQuery(`${model} has no field "${field}"`);
    return then(this.#all(`SELECT ${q(column)} FROM ${q(t.table)} WHERE "id" = ?`, [id]), (r) => (r.length ? r[0]![0] : undefined));
  }

  /** The current record of an old uid value (for 301 answers), or undefined. */
  oldUid(model: string, field: string, value: string): string | undefined | Promise<string | undefined> {
    return then(this.#all('SELECT "id" FROM "lw__uid" WHERE "model" = ? AND "field" = ? AND "value" = ?', [model, field, value]), (r) =>
      r.length ? String(r[0]![0]) : undefined,
    );
  }
}
