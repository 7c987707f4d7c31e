/**
 * The development server's host rule (docs/security.md, "The development server's host rule"):
 * `bin/laneway dev` and `serve --dev` as child processes, asked with the Host headers a browser
 * sends — this machine's names, a name given with --allowed-host, and a rebinding site's name.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rawRequest } from '../helpers.js';
import { BIN, startLaneway, type RunningLaneway } from '../support/laneway.js';

const PATIENCE_MS = 30_000;
const SECRET = 'source-only-the-developer-sees';

const made: string[] = [];
after(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

/** An app whose page does not compile: the overlay shows its source (with SECRET). */
function brokenApp(): string {
  const root = mkdtempSync(join(tmpdir(), 'laneway-host-'));
  made.push(root);
  const dir = join(root, 'app');
  mkdirSync(dir);
  writeFileSync(join(dir, 'index.html'), `<!--TEMPLATE mustache-->\n<!doctype html><title>t</title><p>${SECRET}</p>\n{{#open}}\n`);
  return dir;
}

/** A plain app that compiles. */
function plainApp(): string {
  const root = mkdtempSync(join(tmpdir(), 'laneway-host-'));
  made.push(root);
  const dir = join(root, 'app');
  mkdirSync(dir);
  writeFileSync(join(dir, 'index.html'), `<!doctype html><title>t</title><p>${SECRET}</p>\n`);
  return dir;
}

/** Starts `laneway <args> --port 0` and waits for its listening line. */
function start(args: string[]): Promise<RunningLaneway> {
  return startLaneway([...args, '--port', '0'], { LANEWAY_CACHE_DIR: '' }, PATIENCE_MS);
}

function assertRefused(res: { status: number; text: string }, host: string): void {
  assert.equal(res.status, 403, res.text);
  assert.match(res.text, /\[LW_DEV_HOST\]/);
  assert.ok(res.text.includes(`--allowed-host ${host}`), res.text);
  assert.ok(!res.text.includes(SECRET), 'the refusal shows nothing of the app');
}

describe('laneway dev: the host rule', () => {
  test('a rebinding name gets 403 on every answer; this machine\'s names get the overlay', async () => {
    const dev = await start(['dev', brokenApp()]);
    try {
      const evil = 'rebind.evil.example';
      for (const path of ['/', '/missing', '/__/dev/events', '/__/dev/docs/errors.md', '/__/dev/nothing', '/__/health']) {
        assertRefused(await rawRequest(dev.port, 'GET', path, { Host: `${evil}:${dev.port}` }), evil);
      }
      assertRefused(await rawRequest(dev.port, 'GET', '/', { Host: evil, Accept: 'application/json' }), evil);
      assertRefused(await rawRequest(dev.port, 'POST', '/', { Host: evil, 'Content-Type': 'text/plain' }, 'x'), evil);
      // A name that only ends like localhost is not under it.
      assertRefused(await rawRequest(dev.port, 'GET', '/', { Host: 'evil-localhost' }), 'evil-localhost');
      assertRefused(await rawRequest(dev.port, 'GET', '/', { Host: 'localhost.evil.example' }), 'localhost.evil.example');
      // This machine: the overlay with the app's source.
      for (const host of [`localhost:${dev.port}`, 'LOCALHOST', `shop.localhost:${dev.port}`, `127.0.0.1:${dev.port}`, '127.8.9.10', `[::1]:${dev.port}`]) {
        const res = await rawRequest(dev.port, 'GET', '/', { Host: host });
        assert.equal(res.status, 500, `${host}: ${res.text}`);
        assert.ok(res.text.includes(SECRET), host);
      }
    } finally {
      await dev.stop();
    }
  });

  test('--allowed-host adds names (repeatable); --host adds its own', async () => {
    const dev = await start(['dev', brokenApp(), '--allowed-host', 'laptop.lan', '--allowed-host', '192.168.1.20', '--host', '127.0.0.1']);
    try {
      for (const host of ['laptop.lan', 'Laptop.LAN:8080', '192.168.1.20:3000', `127.0.0.1:${dev.port}`]) {
        const res = await rawRequest(dev.port, 'GET', '/', { Host: host });
        assert.equal(res.status, 500, `${host}: ${res.text}`);
        assert.ok(res.text.includes(SECRET), host);
      }
      assertRefused(await rawRequest(dev.port, 'GET', '/', { Host: 'other.lan' }), 'other.lan');
      assertRefused(await rawRequest(dev.port, 'GET', '/', { Host: 'sub.laptop.lan' }), 'sub.laptop.lan');
    } finally {
      await dev.stop();
    }
  });

  test('serve --dev follows the rule; serve without --dev answers every Host', async () => {
    const dir = plainApp();
    const dev = await start(['serve', dir, '--dev']);
    try {
      assertRefused(await rawRequest(dev.port, 'GET', '/', { Host: 'rebind.evil.example' }), 'rebind.evil.example');
      assert.equal((await rawRequest(dev.port, 'GET', '/', { Host: 'localhost' })).status, 200);
    } finally {
      await dev.stop();
    }
    const prod = await start(['serve', dir]);
    try {
      const res = await rawRequest(prod.port, 'GET', '/', { Host: 'www.example.com' });
      assert.equal(res.status, 200);
      assert.ok(res.text.includes(SECRET));
    } finally {
      await prod.stop();
    }
  });

  test('usage errors: --allowed-host without --dev, or with a value that is not a host', () => {
    const dir = plainApp();
    const run = (...args: string[]) => spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', timeout: PATIENCE_MS, env: { ...process.env, PORT: '', LANEWAY_CACHE_DIR: '' } });
    const plain = run('serve', dir, '--port', '0', '--allowed-host', 'laptop.lan');
    assert.equal(plain.status, 2, plain.stderr);
    assert.match(plain.stderr, /--allowed-host applies to the development server only/);
    for (const bad of ['http://laptop.lan', 'laptop.lan:3000', 'a/b', '']) {
      const r = run('dev', dir, '--port', '0', `--allowed-host=${bad}`);
      assert.equal(r.status, 2, `${bad}: ${r.stderr}`);
      assert.match(r.stderr, /is not a host name/);
    }
  });
});
