/**
 * `laneway serve` and the production data browser (docs/data-browser.md "In production"): the
 * secret comes from `LANEWAY_DATA_BROWSER_SECRET` (never an argument); a weak one stops the start
 * with LW_AUTH_DATA_BROWSER; a good one serves `/__/data/` behind the sign-in; `dev` ignores it.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { rawRequest, writeApp } from '../helpers.js';

const BIN = fileURLToPath(new URL('../../bin/laneway', import.meta.url));
const APP = { '👤.yaml': 'providers: [github]\nAdmin: all\n', '📦/🌐Task.yaml': 'title: string\n', 'index.html': '<p>home</p>\n' };
const GOOD = 'x'.repeat(40);

function env(extra: Record<string, string>): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...process.env, PORT: '', ...extra };
  for (const name of ['LANEWAY_AUTH_DEV_USERS', 'LANEWAY_SOURCES', 'LANEWAY_DATA_BROWSER_ROLE']) if (!(name in extra)) delete out[name];
  return out;
}

/** Starts bin/laneway with `args`, answers `probe(port)`, then stops it. */
async function withServer<T>(args: string[], extra: Record<string, string>, probe: (port: number) => Promise<T>): Promise<T> {
  const child = spawn(process.execPath, [BIN, ...args, '--port', '0', '--log', 'off'], { env: env(extra) });
  let out = '';
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  try {
    const port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no listening line\n${out}\n${err}`)), 30_000);
      child.stdout.on('data', (d) => {
        out += d;
        const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
        if (m) {
          clearTimeout(timer);
          resolve(Number(m[1]));
        }
      });
      child.once('exit', (code) => reject(new Error(`exited ${code}\n${out}\n${err}`)));
    });
    return await probe(port);
  } finally {
    child.kill('SIGTERM');
  }
}

describe('laneway serve and LANEWAY_DATA_BROWSER_SECRET', () => {
  test('a secret shorter than 32 characters stops the start with LW_AUTH_DATA_BROWSER', () => {
    const dir = writeApp(APP);
    try {
      const r = spawnSync(process.execPath, [BIN, 'serve', dir, '--port', '0'], { encoding: 'utf8', env: env({ LANEWAY_DATA_BROWSER_SECRET: 'short' }), timeout: 60_000 });
      assert.equal(r.status, 1, r.stderr);
      assert.match(r.stderr, /LANEWAY_DATA_BROWSER_SECRET is shorter than 32 characters/);
      assert.match(r.stderr, /LW_AUTH_DATA_BROWSER/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a good secret serves /__/data/ behind the sign-in; without it, 404; dev ignores it', async () => {
    const dir = writeApp(APP);
    try {
      const on = await withServer(['serve', dir, '--data', `${dir}/.data-on`], { LANEWAY_DATA_BROWSER_SECRET: GOOD }, (port) => rawRequest(port, 'GET', '/__/data/'));
      assert.equal(on.status, 302, on.text);
      assert.match(String(on.headers.location), /^\/auth\/\?next=/);
      const off = await withServer(['serve', dir, '--data', `${dir}/.data-off`], {}, (port) => rawRequest(port, 'GET', '/__/data/'));
      assert.equal(off.status, 404);
      const dev = await withServer(['dev', dir, '--data', `${dir}/.data-dev`], { LANEWAY_DATA_BROWSER_SECRET: 'short' }, async (port) => [await rawRequest(port, 'GET', '/__/data/', { host: 'localhost' }), await rawRequest(port, 'GET', '/__/dev/data/', { host: 'localhost' })]);
      assert.deepEqual(dev.map((r) => r.status), [404, 200]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
