/**
 * One profile per user and container (docs/permissions.md, "One profile per user and container").
 *
 * A profile model's `user` column has a unique index, with the container first for a contained
 * profile (tables.ts): a second profile of the same user in the same container is refused by the
 * database, under concurrency too, and reported as LW_AUTH_PROFILE_EXISTS (409).
 *
 * A database written before that index existed may already hold such duplicates. The index cannot
 * be made there, and refusing to start would take the app down for data the app itself wrote. So
 * at start the profile tables are read first: where users have two profiles in one container, the
 * index is made without `unique` for this start, the layout is marked (`duplicateProfiles`), each
 * new profile of that model is checked by a query in its request instead (which two requests at
 * the same moment can both pass), and the start logs what it found. Once the duplicates are
 * removed, the next start makes the unique index.
 */
import { LanewayError } from '../diag/index.js';
import { q, type TableLayout } from './tables.js';
import type { Engine } from './types.js';

/** The layout of a profile's `user` column, when `t` is a profile model. */
export function profileUser(t: TableLayout): TableLayout['fields'][number] | undefined {
  return t.model.kind === 'profile' ? t.fields.find((f) => f.field.profile === 'user') : undefined;
}

/**
 * Marks the profile tables that hold duplicates (see the file comment) and gives one notice per
 * such model for the start's log. A table or column that does not exist yet holds none.
 */
export async function markDuplicateProfiles(engine: Engine, tables: Map<string, TableLayout>): Promise<string[]> {
  const notices: string[] = [];
  for (const t of tables.values()) {
    const user = profileUser(t);
    if (!user) continue;
    const by = t.contained ? `"container", ${q(user.column)}` : q(user.column);
    let n = 0;
    try {
      const rows = await engine.reader.all(`SELECT count(*) FROM (SELECT 1 AS x FROM ${q(t.table)} GROUP BY ${by} HAVING count(*) > 1) AS d`, []);
      n = Number(rows[0]?.[0] ?? 0);
    } catch {
      continue; // a new model, or a profile model whose table has no user column yet
    }
    if (n === 0) continue;
    t.duplicateProfiles = n;
    for (const i of t.indexes) {
      if (!i.unique || !i.columns.includes(user.column)) continue;
      i.unique = false;
      i.name = i.name.replace(/_u$/, '');
    }
    const where = t.contained ? `in one ${t.model.container}` : 'as top-level profiles';
    notices.push(
      `${t.model.name}: ${n} user${n === 1 ? ' has' : 's have'} more than one profile ${where} (written before Laneway refused a second one); ` +
        `the unique index on ${t.table}.${user.column} is not made, and new profiles are checked one request at a time. ` +
        `Remove the extra profiles (keep one per user${t.contained ? ' and container' : ''}), then start again to make the index (docs/permissions.md).`,
    );
  }
  return notices;
}

/** The error of a second profile of one user in one container. */
export function profileExists(t: TableLayout): LanewayError {
  const c = t.model.container;
  const find = c ? `${t.model.name}.${c[0]!.toLowerCase()}${c.slice(1)}(${c[0]!.toLowerCase()}${c.slice(1)}).user(id)` : `${t.model.name}.user(id)`;
  return new LanewayError(
    'LW_AUTH_PROFILE_EXISTS',
    `this user has a ${t.model.name} profile ${c ? `in this ${c} ` : ''}already (one profile per user${c ? ` and ${c}` : ''}): change that one, found with ${find}, instead of making another`,
    { status: 409 },
  );
}
