/**
 * `laneway dev` and a model change that would lose data (docs/data.md "Changing models"): the
 * browser shows the problem (not the old build), the terminal says it once with the command to
 * run for this app, and after `laneway migrate DIR --accept` in another terminal the app serves
 * again without a file being touched.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rawRequest } from '../helpers.js';
import { runLaneway, startLaneway, type RunningLaneway } from '../support/laneway.js';

const PATIENCE_MS = 30_000;

/** Asks `path` until `accept` holds for the answer (each ask waits a little): the last answer. */
async function until(port: number, path: string, accept: (status: number, text: string) => boolean, what: string): Promise<string> {
  const end = Date.now() + PATIENCE_MS;
  let last = '';
  while (Date.now() < end) {
    const r = await rawRequest(port, 'GET', path, { accept: 'text/html' });
    last = `${r.status} ${r.text}`;
    if (accept(r.status, r.text)) return r.text;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${what}: still ${last.slice(0, 3000)}`);
}

describe('laneway dev with a model change that loses data', () => {
  const root = mkdtempSync(join(tmpdir(), 'laneway-dev-migrate-'));
  const dir = join(root, 'app');
  const data = join(root, 'data');
  let running: RunningLaneway;
  before(async () => {
    mkdirSync(join(dir, '📦'), { recursive: true });
    writeFileSync(join(dir, '📦', '🌐Note.yaml'), 'title:\n  type: string\nbody?:\n  type: string\n');
    writeFileSync(join(dir, 'index.html'), '<!--TEMPLATE mustache-->\n{{% import {Note} from \'📦\' }}\n<!doctype html><html><head><title>Notes</title></head><body><p id="count">{{Note.all.count}} notes</p></body></html>\n');
    writeFileSync(join(dir, '📮add.js'), "import {Note} from '📦';\nnew Note().title('One').body('kept');\n({ok: true})\n");
    running = await startLaneway(['dev', dir, '--port', '0', '--data', data], {}, PATIENCE_MS);
    const added = await rawRequest(running.port, 'POST', '/add', { 'sec-fetch-site': 'same-origin', accept: 'application/json' });
    assert.equal(added.status, 200, added.text);
  });
  after(async () => {
    await running?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  test('the browser shows the refusal; after migrate --accept the app serves again', async () => {
    await until(running.port, '/', (s, t) => s === 200 && t.includes('1 notes'), 'the first build');
    // The field `body` goes (the script stops setting it first): its values would be deleted.
    writeFileSync(join(dir, '📮add.js'), "import {Note} from '📦';\nnew Note().title('Two');\n({ok: true})\n");
    await until(running.port, '/', () => /reloaded/.test(running.out()), 'the script edit');
    writeFileSync(join(dir, '📦', '🌐Note.yaml'), 'title:\n  type: string\n');
    const overlay = await until(running.port, '/', (_s, t) => t.includes('change data the database holds'), 'the overlay');
    assert.match(overlay, /field (&#34;|&quot;|")body\1 removed/);
    assert.match(overlay, /LW_STORE_MIGRATION/);
    assert.ok(overlay.includes(`laneway migrate ${dir} --accept`), 'the command names this app');
    assert.ok(!overlay.includes('<app dir>') && !overlay.includes('&lt;app dir&gt;'));
    // The terminal: once, a sentence of its own (no ".;"), with the same command.
    await until(running.port, '/', () => (running.err().match(/could not be opened/g) ?? []).length >= 1, 'the terminal line');
    assert.ok(!running.err().includes('.;'), running.err());
    assert.ok(running.err().includes(`laneway migrate ${dir} --accept`), running.err());

    const migrated = await runLaneway(['migrate', dir, '--accept', '--data', data]);
    assert.equal(migrated.code, 0, migrated.err);
    assert.match(migrated.out, /field "body" removed/);
    // No file changed: dev tries the load again by itself.
    await until(running.port, '/', (s, t) => s === 200 && t.includes('1 notes'), 'the app after migrate');
    assert.equal((running.err().match(/could not be opened/g) ?? []).length, 1, 'said once while it lasted');
  });
});
