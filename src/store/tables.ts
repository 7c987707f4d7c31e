/**
 * How models are laid out in tables, and the DDL of each dialect.
 *
 * One table per model, `lw_<Model>`: `id` (primary key), `created` and `modified` (milliseconds
 * since 1970), `container` (the id of the containing record, contained models only), then one
 * column per field, `f_<name>`. A hierarchy field adds `k_<name>`, its sort key; a markdown field
 * adds `h_<name>`, its rendered HTML. Booleans are integers 0/1; timestamps integers (ms); maps,
 * geo values, lists and embedded values JSON text; everything else text. Text compares bytewise
 * in both dialects (SQLite BINARY, PostgreSQL COLLATE "C").
 *
 * Every field that can be queried has an index (with the container first for contained models);
 * `unique` strings, `uid` fields and a profile's `user` have unique indexes. `lw__schema` remembers, per model, the
 * columns as last applied, so that start-up can tell additive changes from narrowing ones.
 */
import type { FieldDefinition, ModelDefinition, ModelSchema } from '../models/index.js';
import type { Dialect } from './types.js';
import { ROW } from '../script/index.js';

export type ColumnType = 'text' | 'integer' | 'real' | 'json';

export interface Column {
  name: string;
  type: ColumnType;
  notNull: boolean;
}

export interface FieldLayout {
  field: FieldDefinition;
  /** Column of the value. */
  column: string;
  /** Position of the value in a selected row (after id, created, modified, container). */
  index: number;
  /** Stored as JSON text (maps, geo, lists, embedded values). */
  json: boolean;
  /** Can be used in a filter (and has an index). */
  queryable: boolean;
  /** Extra column: the sort key of a hierarchy, the HTML of markdown. */
  extra?: string;
}

export interface TableLayout {
  model: ModelDefinition;
  table: string;
  contained: boolean;
  fields: FieldLayout[];
  byName: Map<string, FieldLayout>;
  /** The uid fields (their old values are kept in lw__uid). */
  uids: FieldLayout[];
  /** The SELECT list giving a row in layout order. */
  select: string;
  columns: Column[];
  indexes: Array<{ name: string; columns: string[]; unique: boolean }>;
  /** Column of the natural order (before created, id): a hierarchy sort key or an `order: true` field. */
  orderColumn?: string;
  /**
   * A profile model whose table held users with two profiles in one container at start: its
   * `user` index is not unique, and a new profile is checked by a query instead (not under
   * concurrency) until the duplicates are removed and the app started again.
   */
  duplicateProfiles?: number;
}

export const q = (name: string): string => `"${name}"`;

function columnType(f: FieldDefinition): ColumnType {
  if (f.list !== undefined) return 'json';
  switch (f.type) {
    case 'boolean':
    case 'integer':
    case 'timestamp':
      return 'integer';
    case 'double':
      return 'real';
    case 'map':
    case 'geo':
    case 'embedded':
      return 'json';
    default:
      return 'text';
  }
}

/** The layout of every Universal, Content and Profile model. */
export function layoutSchema(schema: ModelSchema): Map<string, TableLayout> {
  const out = new Map<string, TableLayout>();
  for (const model of schema.models.values()) out.set(model.name, layoutModel(model));
  return out;
}

export function layoutModel(model: ModelDefinition): TableLayout {
  const table = `lw_${model.name}`;
  const contained = model.container !== undefined;
  const columns: Column[] = [
    { name: 'id', type: 'text', notNull: true },
    { name: 'created', type: 'integer', notNull: true },
    { name: 'modified', type: 'integer', notNull: true },
    { name: 'container', type: 'text', notNull: false },
  ];
  const fields: FieldLayout[] = [];
  const indexes: TableLayout['indexes'] = [];
  const scope = contained ? ['container'] : [];
  let orderColumn: string | undefined;
  for (const field of model.fields) {
    if (field.builtIn) continue;
    const type = columnType(field);
    const column = `f_${field.name}`;
    const layout: FieldLayout = { field, column, index: ROW.fields + fields.length, json: type === 'json', queryable: type !== 'json' && field.type !== 'svg-icon' && field.type !== 'html' && field.type !== 'markdown' && field.type !== 'image' };
    columns.push({ name: column, type, notNull: false });
    if (field.type === 'hierarchy') {
      layout.extra = `k_${field.name}`;
      columns.push({ name: layout.extra, type: 'text', notNull: false });
      orderColumn = layout.extra;
    } else if (field.type === 'markdown') {
      layout.extra = `h_${field.name}`;
      columns.push({ name: layout.extra, type: 'text', notNull: false });
    }
    if (field.order && orderColumn === undefined) orderColumn = column;
    if (layout.queryable) {
      // A profile's user: one profile per user and container (per user for a top-level profile;
      // docs/permissions.md). Not made on a database already holding two (index.ts AppStore.open).
      const unique = field.unique || field.type === 'uid' || field.profile === 'user';
      const on = field.type === 'uid' ? [column] : [...scope, field.type === 'hierarchy' ? layout.extra! : column];
      indexes.push({ name: `${table}_${field.name}${unique ? '_u' : ''}`, columns: on, unique });
    }
    fields.push(layout);
  }
  indexes.push({ name: `${table}__natural`, columns: [...scope, ...(orderColumn ? [orderColumn] : []), 'created', 'id'], unique: false });
  // A markdown field reads its source (the runtime renders it, cached per text); `h_` keeps the HTML
  // for the rich-text properties of static content (docs/content.md).
  const select = ['id', 'created', 'modified', 'container', ...fields.map((f) => f.column)].map(q).join(', ');
  return { model, table, contained, fields, byName: new Map(fields.map((f) => [f.field.name, f])), uids: fields.filter((f) => f.field.type === 'uid'), select, columns, indexes, ...(orderColumn ? { orderColumn } : {}) };
}

/** The SQL type of a column in a dialect. */
export function sqlType(dialect: Dialect, c: Column): string {
  if (dialect === 'sqlite') return c.type === 'integer' ? 'INTEGER' : c.type === 'real' ? 'REAL' : 'TEXT';
  return c.type === 'integer' ? 'BIGINT' : c.type === 'real' ? 'DOUBLE PRECISION' : 'TEXT COLLATE "C"';
}

export function createTable(dialect: Dialect, t: TableLayout): string[] {
  const cols = t.columns.map((c) => `${q(c.name)} ${sqlType(dialect, c)}${c.name === 'id' ? ' PRIMARY KEY' : c.notNull ? ' NOT NULL' : ''}`);
  return [`CREATE TABLE ${q(t.table)} (${cols.join(', ')})`, ...t.indexes.map((i) => createIndex(t, i))];
}

export function createIndex(t: TableLayout, i: TableLayout['indexes'][number]): string {
  return `CREATE ${i.unique ? 'UNIQUE ' : ''}INDEX ${q(i.name)} ON ${q(t.table)} (${i.columns.map(q).join(', ')})`;
}

export function addColumn(dialect: Dialect, t: TableLayout, c: Column): string {
  return `ALTER TABLE ${q(t.table)} ADD COLUMN ${q(c.name)} ${sqlType(dialect, c)}`;
}

/** Laneway's own tables: the applied schema, and old uid values (answered with 301). */
export function systemTables(dialect: Dialect): string[] {
  const text = dialect === 'sqlite' ? 'TEXT' : 'TEXT COLLATE "C"';
  return [
    `CREATE TABLE IF NOT EXISTS "lw__schema" ("model" ${text} PRIMARY KEY, "columns" ${text} NOT NULL)`,
    `CREATE TABLE IF NOT EXISTS "lw__uid" ("model" ${text} NOT NULL, "field" ${text} NOT NULL, "value" ${text} NOT NULL, "id" ${text} NOT NULL, PRIMARY KEY ("model", "field", "value"))`,
  ];
}
