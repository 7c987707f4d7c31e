/**
 * The schema at start: tables and indexes from the model definitions.
 *
 * Additive changes (a new model, a new optional field, a new index, a new required field on an
 * empty table) are applied automatically under the schema lock, when the catalogue shows that
 * something is to be done (`syncSchema`: an unchanged start takes no lock). A change that
 * could lose or narrow data (a removed field, a changed type, an optional field made required, a
 * required field added to a table with records) is refused: `planSchema` names each change and
 * `laneway migrate DIR --accept` applies them. Tables of removed models are left alone (nothing is
 * ever dropped without a definition saying so).
 */
import { buildIndex, dropIndex, indexAsDefined, readCatalog, retrying, type Catalog } from './catalog.js';
import { StoreError, type Dialect, type Engine, type SchemaSession } from './types.js';
import { addColumn, createTable, q, systemTables, type TableLayout } from './tables.js';

interface AppliedColumn {
  name: string;
  /** Field type with list marker (`string[]`); built-ins and extra columns have their own names. */
  kind: string;
  optional: boolean;
}

export interface SchemaChange {
  model: string;
  /** What changes, in words: `field "title" was removed`. */
  description: string;
  narrowing: boolean;
  apply: string[];
}

function appliedColumns(t: TableLayout): AppliedColumn[] {
  const out: AppliedColumn[] = [];
  for (const f of t.fields) {
    const kind = f.field.type + (f.field.list !== undefined ? '[]' : '') + (f.field.type === 'link' ? ':' + f.field.model : '');
    out.push({ name: f.column, kind, optional: f.field.optional });
    if (f.extra) out.push({ name: f.extra, kind: 'extra:' + f.field.type, optional: true });
  }
  return out;
}

type Reads = Pick<SchemaSession, 'all'>;

/** The columns as last applied, per model, as the JSON text `lw__schema` keeps. */
async function readApplied(r: Reads | Engine['reader'], catalog: Catalog): Promise<Map<string, string>> {
  if (!catalog.tables.has('lw__schema')) return new Map();
  const rows = await r.all('SELECT "model", "columns" FROM "lw__schema"', []);
  return new Map(rows.map((row) => [String(row[0]), String(row[1])]));
}

async function isEmpty(r: Reads, t: TableLayout): Promise<boolean> {
  const rows = await r.all(`SELECT 1 FROM ${q(t.table)} LIMIT 1`, []);
  return rows.length === 0;
}

/** The index that `unique: true` added or removed leaves behind (dropped when there). */
function otherKind(t: TableLayout, i: TableLayout['indexes'][number]): string | undefined {
  const other = i.name.endsWith('_u') ? i.name.slice(0, -2) : i.name.endsWith('__natural') ? undefined : i.name + '_u';
  return other !== undefined && !t.indexes.some((x) => x.name === other) ? other : undefined;
}

/** Whether a model's table, columns and indexes are as defined, and `lw__schema` says so too. */
function modelAsDefined(catalog: Catalog, applied: Map<string, string>, t: TableLayout): boolean {
  const columns = catalog.tables.get(t.table);
  return (
    columns !== undefined &&
    applied.get(t.model.name) === JSON.stringify(appliedColumns(t)) &&
    t.columns.every((c) => columns.has(c.name)) &&
    t.indexes.every((i) => indexAsDefined(catalog, t.table, i) && !catalog.indexes.has(otherKind(t, i) ?? ''))
  );
}

/** Whether nothing is to be done: the read-only check of every start. */
function schemaAsDefined(catalog: Catalog, applied: Map<string, string>, tables: Map<string, TableLayout>): boolean {
  return catalog.tables.has('lw__schema') && catalog.tables.has('lw__uid') && [...tables.values()].every((t) => modelAsDefined(catalog, applied, t));
}

/** The changes from what the database holds to the definitions. */
async function plan(dialect: Dialect, r: Reads, catalog: Catalog, appliedText: Map<string, string>, tables: Map<string, TableLayout>): Promise<SchemaChange[]> {
  const applied = new Map([...appliedText].map(([model, text]) => [model, JSON.parse(text) as AppliedColumn[]]));
  const changes: SchemaChange[] = [];
  for (const t of tables.values()) {
    const before = applied.get(t.model.name);
    const columns = catalog.tables.get(t.table);
    if (!before || !columns) {
      // A table that is there without its `lw__schema` row gets the columns it lacks; its indexes follow.
      const apply = columns ? t.columns.filter((c) => !columns.has(c.name)).map((c) => addColumn(dialect, t, c)) : createTable(dialect, t);
      changes.push({ model: t.model.name, description: 'new model', narrowing: false, apply });
      continue;
    }
    const now = appliedColumns(t);
    const empty = await isEmpty(r, t);
    for (const c of now) {
      const old = before.find((b) => b.name === c.name);
      const col = t.columns.find((x) => x.name === c.name)!;
      const field = c.name.replace(/^[fkh]_/, '');
      if (!old) {
        const narrowing = !c.optional && !empty && !c.kind.startsWith('extra:');
        changes.push({
          model: t.model.name,
          description: narrowing ? `required field "${field}" added while ${t.model.name} has records (they have no value for it)` : `new field "${field}"`,
          narrowing,
          apply: [addColumn(dialect, t, col)],
        });
      } else if (old.kind !== c.kind) {
        changes.push({
          model: t.model.name,
          description: `field "${field}" changed type from ${old.kind} to ${c.kind} (its values are cleared)`,
          narrowing: !empty,
          apply: [...dropIndexesOn(t, c.name), `ALTER TABLE ${q(t.table)} DROP COLUMN ${q(c.name)}`, addColumn(dialect, t, col)],
        });
      } else if (old.optional && !c.optional) {
        changes.push({ model: t.model.name, description: `field "${field}" changed from optional to required`, narrowing: !empty, apply: [] });
      }
    }
    for (const old of before) {
      if (now.some((c) => c.name === old.name)) continue;
      changes.push({
        model: t.model.name,
        description: old.kind.startsWith('extra:') ? `helper column ${old.name} removed` : `field "${old.name.replace(/^f_/, '')}" removed (its values are deleted)`,
        narrowing: !empty && !old.kind.startsWith('extra:'),
        apply: [...dropIndexesOn(t, old.name, true), `ALTER TABLE ${q(t.table)} DROP COLUMN ${q(old.name)}`],
      });
    }
  }
  return changes;
}

/** Indexes named after a column's field (the index names of tables.ts), dropped before the column. */
function dropIndexesOn(t: TableLayout, column: string, gone = false): string[] {
  const field = column.replace(/^[fkh]_/, '');
  const names = gone ? [`${t.table}_${field}`, `${t.table}_${field}_u`] : t.indexes.filter((i) => i.columns.includes(column)).map((i) => i.name);
  if (!gone && t.indexes.some((i) => i.name === `${t.table}__natural` && i.columns.includes(column))) names.push(`${t.table}__natural`);
  return names.map((n) => `DROP INDEX IF EXISTS ${q(n)}`);
}

export interface SyncResult {
  applied: SchemaChange[];
  /** Narrowing changes not applied (start-up refuses when there are any, unless accepted). */
  refused: SchemaChange[];
}

/**
 * Brings the database to the definitions: additive changes always, narrowing ones only with
 * `accept`. Throws a StoreError('LW_STORE_MIGRATION') naming each refused change, or a duplicate
 * value that keeps a field from becoming unique.
 *
 * The catalogue is read first, with no lock: when it agrees with the definitions, nothing else
 * happens. Otherwise, under the schema lock (docs/data.md, "What a start does to the schema"):
 * each model's columns change in a transaction of its own, which waits a short time for its
 * table's lock; indexes on existing tables are built without blocking writes (CREATE INDEX
 * CONCURRENTLY on PostgreSQL). A deadlock, a lock wait given up or a lost connection is tried
 * again, from the check.
 */
export async function syncSchema(engine: Engine, tables: Map<string, TableLayout>, options: { accept?: boolean } = {}): Promise<SyncResult> {
  const { dialect } = engine;
  return retrying('bringing the database schema to the model definitions', async () => {
    const seen = await readCatalog(engine.reader, dialect);
    if (schemaAsDefined(seen, await readApplied(engine.reader, seen), tables)) return { applied: [], refused: [] };
    return engine.withSchemaSession(async (s) => {
      // Again under the lock: another instance may have done it meanwhile.
      let catalog = await readCatalog(s, dialect);
      if (!catalog.tables.has('lw__schema') || !catalog.tables.has('lw__uid')) {
        await s.transaction(async (w) => {
          for (const st of systemTables(dialect)) await w.run(st, []);
        });
      }
      const applied = await readApplied(s, catalog);
      const changes = await plan(dialect, s, catalog, applied, tables);
      const refused = options.accept ? [] : changes.filter((c) => c.narrowing);
      if (refused.length) {
        const list = refused.map((c) => `  - ${c.model}: ${c.description}`).join('\n');
        throw new StoreError(
          'LW_STORE_MIGRATION',
          `the model definitions change data the database holds:\n${list}\nRun \`laneway migrate <app dir> --accept\` to apply these changes (back up the data first).`,
        );
      }
      const p = dialect === 'sqlite' ? ['?', '?'] : ['$1', '$2'];
      for (const t of tables.values()) {
        const mine = changes.filter((c) => c.model === t.model.name);
        const cols = JSON.stringify(appliedColumns(t));
        if (mine.length === 0 && applied.get(t.model.name) === cols) continue;
        // One model at a time: the transaction locks one table that requests write (and lw__schema).
        await s.transaction(async (w) => {
          for (const c of mine) for (const st of c.apply) await w.run(st, []);
          await w.run(`DELETE FROM "lw__schema" WHERE "model" = ${p[0]}`, [t.model.name]);
          await w.run(`INSERT INTO "lw__schema" ("model", "columns") VALUES (${p[0]}, ${p[1]})`, [t.model.name, cols]);
        });
      }
      catalog = await readCatalog(s, dialect);
      for (const t of tables.values()) {
        for (const i of t.indexes) {
          const other = otherKind(t, i);
          if (other !== undefined && catalog.indexes.has(other)) await dropIndex(s, dialect, other);
          if (indexAsDefined(catalog, t.table, i)) continue;
          try {
            await buildIndex(s, dialect, catalog, t.table, i);
          } catch (e) {
            if (!i.unique || !(e instanceof StoreError) || e.code !== 'LW_STORE_UNIQUE') throw e;
            throw await duplicateError(s, t, i);
          }
        }
      }
      return { applied: changes, refused: [] };
    });
  });
}

/**
 * Why a unique index could not be built: two records that share a value (LW_STORE_MIGRATION), or,
 * when no two do any more (a record changed meanwhile), a conflict that is tried again.
 */
async function duplicateError(r: Reads, t: TableLayout, i: TableLayout['indexes'][number]): Promise<StoreError> {
  const cols = i.columns.map(q).join(', ');
  const rows = await r.all(
    `SELECT ${cols}, min("id"), max("id") FROM ${q(t.table)} WHERE ${i.columns.map((c) => `${q(c)} IS NOT NULL`).join(' AND ')} GROUP BY ${cols} HAVING count(*) > 1 LIMIT 1`,
    [],
  );
  const row = rows[0];
  if (!row) return new StoreError('LW_STORE_CONFLICT', `the unique index ${i.name} met a duplicate value that is gone now`);
  const f = t.fields.find((x) => i.columns.includes(x.column) || (x.extra !== undefined && i.columns.includes(x.extra)));
  const at = Math.max(0, i.columns.findIndex((c) => c !== 'container'));
  const where = i.columns.includes('container') ? ' (in one container)' : '';
  return new StoreError(
    'LW_STORE_MIGRATION',
    `${t.model.name}.${f?.field.name ?? i.name} is now unique, but records already share values of it: ${JSON.stringify(row[at])} in records ${String(row[i.columns.length])} and ${String(row[i.columns.length + 1])}${where}. Make them distinct (or remove "unique: true"), then start again`,
  );
}
