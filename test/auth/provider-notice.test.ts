/**
 * A sign-in provider without its settings (docs/users.md "Providers"): the site runs without it,
 * and the server says so once, as a notice, not as an error at every load of the app.
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { closeAppData, loadApp, openAppData } from '../../src/app/index.js';
import { writeApp } from '../helpers.js';

it('an unconfigured provider is one notice for the process, never an error', async () => {
  const dir = writeApp({ '/👤.yaml': 'providers: [github]\nauth: optional\n', '/index.html': '<p>x</p>\n' });
  const data = mkdtempSync(join(tmpdir(), 'laneway-notice-'));
  const saved = { id: process.env.LANEWAY_AUTH_GITHUB_CLIENT_ID, secret: process.env.LANEWAY_AUTH_GITHUB_SECRET };
  delete process.env.LANEWAY_AUTH_GITHUB_CLIENT_ID;
  delete process.env.LANEWAY_AUTH_GITHUB_SECRET;
  const info: string[] = [];
  const errors: string[] = [];
  const log = { info: (m: string) => info.push(m), error: (m: string) => errors.push(m) };
  try {
    // Three loads of the same app, as `laneway dev` reloads it.
    for (let i = 0; i < 3; i++) {
      const app = loadApp(dir);
      await openAppData(app, { dataDir: data, log });
      await closeAppData(app);
    }
    assert.deepEqual(errors, []);
    const notices = info.filter((m) => m.includes('github') && m.includes('not configured'));
    assert.equal(notices.length, 1, info.join('\n'));
    assert.match(notices[0]!, /^notice: the sign-in provider github is not configured \(LANEWAY_AUTH_GITHUB_CLIENT_ID, LANEWAY_AUTH_GITHUB_SECRET missing\)/);
  } finally {
    if (saved.id !== undefined) process.env.LANEWAY_AUTH_GITHUB_CLIENT_ID = saved.id;
    if (saved.secret !== undefined) process.env.LANEWAY_AUTH_GITHUB_SECRET = saved.secret;
    rmSync(dir, { recursive: true, force: true });
    rmSync(data, { recursive: true, force: true });
  }
});
