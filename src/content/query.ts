/**
 * The in-memory backend of the query API for static models: the same query specs the database
 * backend turns into SQL (`QuerySpec` of src/script/records.ts), answered from the documents read at
 * load. One meaning for both: filters are ANDed field comparisons (`eq` with null matches a missing
 * value; ranges never match one), the natural order is the model's `order: true` field, then the
 * document date (`created`), then the id (the path uid); `desc` reverses it; a limit cuts after the
 * order. Answers are rows in the runtime's form (id, created, modified, container, fields…) —
 * shared, never mutated: the runtime copies what it hands to scripts.
 */
import { LanewayError } from '../diag/index.js';
import type { FieldDefinition, ModelDefinition } from '../models/index.js';
import type { StaticContent } from './documents.js';
import { ROW, type FilterOp, type QuerySpec } from '../script/index.js';

/** The query spec of the script runtime (script/records.ts), as the database answers it too. */
export type DocumentQuery = QuerySpec;

interface ModelIndex {
  model: ModelDefinition;
  /** Rows in natural order. */
  rows: unknown[][];
  /** Column of each filterable name (id, created, modified, fields). */
  columns: Map<string, { index: number; field?: FieldDefinition }>;
  byId: Map<string, unknown[]>;
}

function badQuery(message: string): LanewayError {
  return new LanewayError('LW_MODEL_QUERY', message, { status: 500 });
}

/** A comparable form of a stored value or a filter value. */
function comparable(v: unknown, field: FieldDefinition | undefined, name: string): unknown {
  if (v === null || v === undefined) return null;
  if (v instanceof Date) return v.getTime();
  if (!field) return name === 'id' ? String(v) : typeof v === 'number' ? v : Date.parse(String(v));
  switch (field.type) {
    case 'boolean':
      return v === true || v === 'true' || v === 1;
    case 'integer':
    case 'double':
      return Number(v);
    case 'timestamp':
      return typeof v === 'number' ? v : Date.parse(String(v));
    default:
      return typeof v === 'object' ? JSON.stringify(v) : String(v);
  }
}

function compare(a: unknown, b: unknown): number {
  if (a === b) return 0;
  if (a === null) return -1;
  if (b === null) return 1;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'boolean' && typeof b === 'boolean') return a ? 1 : -1;
  const x = String(a);
  const y = String(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

export class DocumentIndex {
  readonly #models = new Map<string, ModelIndex>();

  constructor(content: StaticContent) {
    for (const model of content.schema.models.values()) {
      const fields = model.fields.filter((f) => !f.builtIn);
      const columns = new Map<string, { index: number; field?: FieldDefinition }>([
        ['id', { index: ROW.id }],
        ['created', { index: ROW.created }],
        ['modified', { index: ROW.modified }],
      ]);
      fields.forEach((f, i) => columns.set(f.name, { index: ROW.fields + i, field: f }));
      const orderField = fields.findIndex((f) => f.order);
      const rows = (content.documents.get(model.name) ?? []).map((d) => d.row);
      rows.sort((a, b) => {
        if (orderField !== -1) {
          const c = compare(comparable(a[ROW.fields + orderField], fields[orderField], ''), comparable(b[ROW.fields + orderField], fields[orderField], ''));
          if (c !== 0) return c;
        }
        return compare(a[ROW.created], b[ROW.created]) || compare(a[ROW.id], b[ROW.id]);
      });
      this.#models.set(model.name, { model, rows, columns, byId: new Map(rows.map((r) => [String(r[ROW.id]), r])) });
    }
  }

  #index(m: string): ModelIndex {
    const ix = this.#models.get(m);
    if (!ix) throw badQuery(`there is no static model ${m}`);
    return ix;
  }

  /** The row of a document by id (path uid). */
  row(m: string, id: string): unknown[] | undefined {
    return this.#index(m).byId.get(id);
  }

  /** Rows of a query, in order, limited. */
  select(spec: DocumentQuery): unknown[][] {
    const ix = this.#index(spec.m);
    if (spec.c !== undefined || spec.cs !== undefined) return [];
    let rows = ix.rows;
    // An id lookup reads the map.
    if (spec.w.length === 1 && spec.w[0]![0] === 'id' && spec.w[0]![1] === 'eq') {
      const r = ix.byId.get(String(spec.w[0]![2]));
      return r ? [r] : [];
    }
    if (spec.w.length) {
      const tests = spec.w.map(([name, op, value]) => this.#test(ix, name, op, value));
      rows = rows.filter((r) => tests.every((t) => t(r)));
    }
    if (spec.o === 'desc') rows = rows.slice().reverse();
    if (spec.l !== undefined) rows = rows.slice(0, spec.l);
    return rows;
  }

  /** count, exists, sum(field), avg(field) of a query (after its limit). */
  aggregate(spec: DocumentQuery, kind: 'count' | 'exists' | 'sum' | 'avg', field?: string): number | boolean | null {
    const rows = this.select(spec);
    if (kind === 'count') return rows.length;
    if (kind === 'exists') return rows.length > 0;
    const ix = this.#index(spec.m);
    const col = ix.columns.get(field ?? '');
    if (!col?.field || (col.field.type !== 'integer' && col.field.type !== 'double')) throw badQuery(`${kind}() needs a number field of ${spec.m}`);
    const nums = rows.map((r) => r[col.index]).filter((v): v is number => typeof v === 'number');
    if (kind === 'sum') return nums.reduce((a, b) => a + b, 0);
    return nums.length ? nums.reduce((a, b) => a + b, 0) / nums.length : null;
  }

  #test(ix: ModelIndex, name: string, op: FilterOp, value: unknown): (row: unknown[]) => boolean {
    if (op === 'match') return this.#match(ix, name, value as Array<[string, unknown]>);
    const col = ix.columns.get(name);
    if (!col) throw badQuery(`${ix.model.name} has no field "${name}"`);
    if (col.field && (col.field.list !== undefined || ['map', 'geo', 'embedded', 'html', 'markdown', 'svg-icon'].includes(col.field.type))) {
      throw badQuery(`${ix.model.name}.${name} is a ${col.field.type}${col.field.list !== undefined ? ' list' : ''} field, which cannot be queried`);
    }
    const want = comparable(value, col.field, name);
    const i = col.index;
    if (want === null) {
      if (op !== 'eq') throw badQuery(`${ix.model.name}.${name}_${op}(null) compares with nothing: pass a value`);
      return (r) => r[i] === null || r[i] === undefined;
    }
    const f = col.field;
    return (r) => {
      const have = comparable(r[i], f, name);
      if (have === null) return false;
      const c = compare(have, want);
      return op === 'eq' ? c === 0 : op === 'gt' ? c > 0 : op === 'gte' ? c >= 0 : op === 'lt' ? c < 0 : c <= 0;
    };
  }

  /** Embedded matches: every pair equal in the embedded value (or in one entry of an embedded list). */
  #match(ix: ModelIndex, name: string, pairs: Array<[string, unknown]>): (row: unknown[]) => boolean {
    const col = ix.columns.get(name);
    if (!col?.field || col.field.type !== 'embedded') throw badQuery(`${ix.model.name}.${name} is not an embedded field`);
    const one = (e: unknown) => e !== null && typeof e === 'object' && pairs.every(([k, v]) => ((e as Record<string, unknown>)[k] ?? null) === v);
    return (r) => {
      const v = r[col.index];
      return Array.isArray(v) ? v.some(one) : one(v);
    };
  }
}
