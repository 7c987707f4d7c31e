/**
 * The app's secret: the key of every HMAC Laneway computes (the `sid` cookie, form-state ids,
 * upload URLs). `LANEWAY_SECRET` when set (at least 32 characters); otherwise generated once and
 * kept in the app's own store (`lw__meta`), so that it survives restarts and every instance of an
 * app that shares a PostgreSQL database shares it too.
 */
import { randomBytes } from 'node:crypto';
import { LanewayError } from '../diag/index.js';
import { ensureTables, type Engine } from '../store/index.js';

const MIN_LENGTH = 32;

export async function loadSecret(engine: Engine, env: NodeJS.ProcessEnv = process.env): Promise<Buffer> {
  const given = env.LANEWAY_SECRET;
  if (given !== undefined && given !== '') {
    if (given.length < MIN_LENGTH) {
      throw new LanewayError('LW_SESSION_SECRET', `LANEWAY_SECRET is ${given.length} characters long; use at least ${MIN_LENGTH} random characters (for example the output of \`openssl rand -hex 32\`)`);
    }
    return Buffer.from(given, 'utf8');
  }
  const p = engine.dialect === 'sqlite' ? ['?', '?'] : ['$1', '$2'];
  await ensureTables(engine, [{ table: 'lw__meta', create: 'CREATE TABLE IF NOT EXISTS "lw__meta" ("key" TEXT PRIMARY KEY, "value" TEXT NOT NULL)', indexes: [] }]);
  const select = `SELECT "value" FROM "lw__meta" WHERE "key" = ${p[0]}`;
  // Kept already (every start but the first): read without any lock.
  const kept = await engine.reader.all(select, ['secret']);
  if (kept[0]) return Buffer.from(String(kept[0][0]), 'utf8');
  const secret = await engine.withSchemaLock(async (w) => {
    const rows = await w.all(select, ['secret']);
    if (rows[0]) return String(rows[0][0]);
    const made = randomBytes(32).toString('hex');
    await w.run(`INSERT INTO "lw__meta" ("key", "value") VALUES (${p[0]}, ${p[1]})`, ['secret', made]);
    return made;
  });
  return Buffer.from(secret, 'utf8');
}
