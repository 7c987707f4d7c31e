/**
 * The schema at start: tables and indexes from the model definitions.
 *
 * Additive changes (a new model, a new optional field, a new index, a new required field on an
 * empty table) are applied automatically, in one transaction under the schema lock. A change that
 * could lose or narrow data (a removed field, a changed type, an optional field made required, a
 * required field added to a table with records) is refused: `planSchema` names each change and
 * `laneway migrate DIR --accept` applies them. Tables of removed models are left alone (nothing is
 * ever dropped without a definition saying so).
 */
import { StoreError, type Engine, type Writer } from './types.js';
import { addColumn, createIndex, createTable, q, systemTables, type TableLayout } from './tables.js';

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

async function readApplied(w: Writer): Promise<Map<string, AppliedColumn[]>> {
  const rows = await w.all('SELECT "model", "columns" FROM "lw__schema"', []);
  return new Map(rows.map((r) => [String(r[0]), JSON.parse(String(r[1])) as AppliedColumn[]]));
}

async function isEmpty(w: Writer, t: TableLayout): Promise<boolean> {
  const rows = await w.all(`SELECT 1 FROM ${q(t.table)} LIMIT 1`, []);
  return rows.length === 0;
}

/** The changes from what the database holds to the definitions. */
async function plan(engine: Engine, w: Writer, tables: Map<string, TableLayout>): Promise<SchemaChange[]> {
  for (const s of systemTables(engine.dialect)) await w.run(s, []);
  const applied = await readApplied(w);
  const changes: SchemaChange[] = [];
  for (const t of tables.values()) {
    const before = applied.get(t.model.name);
    if (!before) {
      changes.push({ model: t.model.name, description: 'new model', narrowing: false, apply: createTable(engine.dialect, t) });
      continue;
    }
    const now = appliedColumns(t);
    const empty = await isEmpty(w, t);
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
          apply: [addColumn(engine.dialect, t, col)],
        });
      } else if (old.kind !== c.kind) {
        changes.push({
          model: t.model.name,
          description: `field "${field}" changed type from ${old.kind} to ${c.kind} (its values are cleared)`,
          narrowing: !empty,
          apply: [...dropIndexesOn(t, c.name), `ALTER TABLE ${q(t.table)} DROP COLUMN ${q(c.name)}`, addColumn(engine.dialect, t, col)],
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
 * `accept`. Throws a StoreError('LW_STORE_MIGRATION') naming each refused change.
 */
export async function syncSchema(engine: Engine, tables: Map<string, TableLayout>, options: { accept?: boolean } = {}): Promise<SyncResult> {
  return engine.withSchemaLock(async (w) => {
    const changes = await plan(engine, w, tables);
    const refused = options.accept ? [] : changes.filter((c) => c.narrowing);
    if (refused.length) {
      const list = refused.map((c) => `  - ${c.model}: ${c.description}`).join('\n');
      throw new StoreError(
        'LW_STORE_MIGRATION',
        `the model definitions change data the database holds:\n${list}\nRun \`laneway migrate <app dir> --accept\` to apply these changes (back up the data first).`,
      );
    }
    for (const c of changes) for (const s of c.apply) await w.run(s, []);
    for (const t of tables.values()) {
      for (const i of t.indexes) {
        // `unique: true` added or removed: the index of the other kind goes.
        const other = i.name.endsWith('_u') ? i.name.slice(0, -2) : i.name.endsWith('__natural') ? undefined : i.name + '_u';
        if (other) await w.run(`DROP INDEX IF EXISTS ${q(other)}`, []);
        try {
          await w.run(createIndex(t, i), []);
        } catch (e) {
          if (!i.unique) throw e;
          const field = t.fields.find((f) => i.columns.includes(f.column))?.field.name ?? i.name;
          throw new StoreError(
            'LW_STORE_MIGRATION',
            `${t.model.name}.${field} is now unique, but records already share values of it: make them distinct (or remove "unique: true"), then start again`,
          );
        }
      }
      const cols = JSON.stringify(appliedColumns(t));
      await w.run(`DELETE FROM "lw__schema" WHERE "model" = ${engine.dialect === 'sqlite' ? '?' : '$1'}`, [t.model.name]);
      await w.run(`INSERT INTO "lw__schema" ("model", "columns") VALUES (${engine.dialect === 'sqlite' ? '?, ?' : '$1, $2'})`, [t.model.name, cols]);
    }
    return { applied: changes, refused: [] };
  });
}
