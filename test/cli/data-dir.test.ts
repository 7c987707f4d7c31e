/**
 * A data directory that cannot be written (docs/data.md): `bin/laneway serve` and `migrate` of an
 * app with models stop with the reason — the directory, the user, what to do — rather than
 * SQLite's "unable to open database file".
 *
 * The directory is made read-only with chmod 0555. Root writes through that, so when the tests run
 * as root the command runs as the user nobody (runuser), for whom the mode holds.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, runLaneway } from '../support/laneway.js';

const PATIENCE_MS = 60_000;
const root = process.getuid?.() === 0;
/** As root, the command runs as nobody; elsewhere as this user, whom chmod binds. */
const asOther = root ? ['runuser', '-u', 'nobody', '--'] : [];
const runuserWorks = !root || spawnSync('runuser', ['-u', 'nobody', '--', process.execPath, BIN, '--version'], { encoding: 'utf8' }).status === 0;
const skip = runuserWorks ? false : 'the tests run as root and "runuser -u nobody" cannot run laneway here: root writes to a chmod 0555 directory, so nothing would be read-only';
const user = root ? 'nobody' : undefined;
/** A read-only file system: a tmpfs mounted read-only in a mount namespace of the child's own (root only). */
function probeUnshare(): boolean {
  if (!root) return false;
  const probe = mkdtempSync(join(tmpdir(), 'laneway-rofs-'));
  try {
    return spawnSync('unshare', ['-m', 'sh', '-c', 'mount -t tmpfs -o ro tmpfs "$1" && ! touch "$1/x" 2>/dev/null', 'sh', probe], { encoding: 'utf8' }).status === 0;
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
}
const unshareWorks = probeUnshare();

const made: string[] = [];
after(() => {
  for (const d of made) {
    spawnSync('chmod', ['-R', 'u+w', d]);
    rmSync(d, { recursive: true, force: true });
  }
});

/** An app with one model, in a directory every user can read. */
function appWithModels(): { base: string; dir: string } {
  const base = mkdtempSync(join(tmpdir(), 'laneway-datadir-'));
  made.push(base);
  chmodSync(base, 0o755);
  const dir = join(base, 'app');
  mkdirSync(join(dir, '📦'), { recursive: true });
  writeFileSync(join(dir, '📦', '🌐Note.yaml'), 'title:\n  type: string\n');
  writeFileSync(join(dir, 'index.html'), '<!doctype html><title>t</title>\n');
  return { base, dir };
}

function run(args: string[], prefix: string[] = asOther) {
  return runLaneway(args, { env: { LANEWAY_CACHE_DIR: '', LANEWAY_DATA: undefined }, prefix, boundMs: PATIENCE_MS });
}

const userPart = (): string => (user ? `the user ${user} \\(uid \\d+\\)` : 'the user \\S+ \\(uid \\d+\\)');
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('a data directory that cannot be written', { skip }, () => {
  test('--data DIR made read-only: serve and migrate name the directory, the user and what to do', async () => {
    const { base, dir } = appWithModels();
    const data = join(base, 'data');
    mkdirSync(data);
    chmodSync(data, 0o555);
    for (const args of [['serve', dir, '--port', '0', '--data', data], ['migrate', dir, '--data', data]]) {
      const r = await run(args);
      assert.equal(r.code, 1, r.out + r.err);
      assert.match(
        r.err,
        new RegExp(`cannot open the database file ${escape(join(data, 'laneway.db'))}: the data directory ${escape(data)} is read-only or not writable by ${userPart()}; it belongs to uid \\d+, mode 0555\\. Give a directory this user can write with --data DIR \\(or \\$LANEWAY_DATA\\), or let this user write there \\(chown, chmod u\\+w\\)\\. \\[LW_STORE_NOT_WRITABLE\\]`),
      );
      assert.doesNotMatch(r.err, /unable to open database file/);
      assert.doesNotMatch(r.out, /listening on/);
    }
  });

  test('no --data, and an app directory where .laneway/ cannot be created', async () => {
    const { dir } = appWithModels();
    chmodSync(dir, 0o555);
    const r = await run(['serve', dir, '--port', '0']);
    assert.equal(r.code, 1, r.out + r.err);
    assert.match(r.err, new RegExp(`cannot create the data directory ${escape(join(dir, '.laneway'))}: ${escape(dir)}, where the data directory ${escape(join(dir, '.laneway'))} would be created, is read-only or not writable by ${userPart()}`));
    assert.match(r.err, /--data DIR .*\[LW_STORE_NOT_WRITABLE\]/);
    assert.doesNotMatch(r.err, /EACCES|\n\s+at /);
  });

  test('a database file made read-only in a writable directory', async () => {
    const { base, dir } = appWithModels();
    const data = join(base, 'data');
    mkdirSync(data);
    chmodSync(data, 0o777);
    // The database file exists (empty: SQLite makes it a database) and it alone is read-only.
    writeFileSync(join(data, 'laneway.db'), '');
    chmodSync(join(data, 'laneway.db'), 0o444);
    const r = await run(['serve', dir, '--port', '0', '--data', data]);
    assert.equal(r.code, 1, r.out + r.err);
    assert.match(r.err, new RegExp(`the database file ${escape(join(data, 'laneway.db'))} is read-only or not writable by ${userPart()}; it belongs to uid \\d+, mode 0444\\..*\\[LW_STORE_NOT_WRITABLE\\]`));
  });

  test('a data directory on a read-only file system', { skip: unshareWorks ? false : 'needs root and "unshare -m" to mount a read-only tmpfs' }, async () => {
    const { base, dir } = appWithModels();
    const data = join(base, 'ro');
    mkdirSync(data);
    const r = await run(['serve', dir, '--port', '0', '--data', data], ['unshare', '-m', 'sh', '-c', `mount -t tmpfs -o ro tmpfs '${data}' && exec "$0" "$@"`]);
    assert.equal(r.code, 1, r.out + r.err);
    assert.match(r.err, new RegExp(`the data directory ${escape(data)} is on a read-only file system\\. Give a directory this user can write with --data DIR \\(or \\$LANEWAY_DATA\\), or mount the file system read-write\\. \\[LW_STORE_NOT_WRITABLE\\]`));
  });
});

describe('a data directory the app would serve', () => {
  test('$LANEWAY_DATA naming a public directory of the app stops the start; empty counts as unset', async () => {
    const { dir } = appWithModels();
    const pub = await runLaneway(['serve', dir, '--port', '0'], { env: { LANEWAY_CACHE_DIR: '', LANEWAY_DATA: 'data' }, boundMs: PATIENCE_MS });
    assert.equal(pub.code, 1, pub.out + pub.err);
    assert.match(pub.err, /The data directory \S+\/app\/data is inside the app directory \S+\/app, where its files would be served\..*\[LW_STORE_DATA_PUBLIC\]/);
    assert.doesNotMatch(pub.out, /listening on/);
    assert.equal(existsSync(join(dir, 'data')), false);
    const self = await runLaneway(['migrate', dir], { env: { LANEWAY_CACHE_DIR: '', LANEWAY_DATA: '.' }, boundMs: PATIENCE_MS });
    assert.equal(self.code, 1, self.out + self.err);
    assert.match(self.err, /\[LW_STORE_DATA_PUBLIC\]/);
    assert.equal(existsSync(join(dir, 'laneway.db')), false);
    // An empty value is unset: the database goes to .laneway/, which is never served.
    const empty = await runLaneway(['migrate', dir], { env: { LANEWAY_CACHE_DIR: '', LANEWAY_DATA: '' }, boundMs: PATIENCE_MS });
    assert.equal(empty.code, 0, empty.out + empty.err);
    assert.equal(existsSync(join(dir, '.laneway', 'laneway.db')), true);
    assert.equal(existsSync(join(dir, 'laneway.db')), false);
    // A private name inside the app is fine.
    const priv = await runLaneway(['migrate', dir, '--data', join(dir, '_data')], { env: { LANEWAY_CACHE_DIR: '' }, boundMs: PATIENCE_MS });
    assert.equal(priv.code, 0, priv.out + priv.err);
    assert.equal(existsSync(join(dir, '_data', 'laneway.db')), true);
  });
});
