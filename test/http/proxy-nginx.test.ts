/**
 * A real reverse proxy in front (docs/deploy.md "Behind a reverse proxy"): Debian's nginx, started
 * here with a configuration of its own in a temporary directory, on 127.0.0.1 and a free port,
 * forwarding to `bin/laneway serve --workers 2 --trust-proxy 127.0.0.1` (needs `npm run build`).
 * The visitor connects from 127.0.0.2 (any 127/8 address is this machine), so that the proxy
 * (127.0.0.1) and the visitor are told apart. Skipped, saying why, when nginx is not installed
 * (`.ci/run` installs the Debian package nginx-light).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeApp } from '../helpers.js';
import { serve, type Served } from '../support/served-process.js';

const NGINX = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((p) => existsSync(p));
const VISITOR = '127.0.0.2';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.on('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const a = probe.address();
      probe.close(() => (typeof a === 'object' && a ? resolve(a.port) : reject(new Error('no port'))));
    });
  });
}

/** A request from the visitor's address. */
function get(port: number, path: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: IncomingHttpHeaders; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, headers, localAddress: VISITOR, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
    });
    req.on('error', reject);
    req.setTimeout(10_000, () => req.destroy(new Error(`no answer: ${path}`)));
    req.end();
  });
}

async function listens(port: number, limitMs = 20_000): Promise<void> {
  const end = Date.now() + limitMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect(port, '127.0.0.1', () => {
        s.destroy();
        resolve(true);
      });
      s.on('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > end) throw new Error(`nginx does not listen on ${port} within ${limitMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('behind nginx', { skip: NGINX ? false : 'nginx is not installed (apt-get install nginx-light; .ci/run installs it)' }, () => {
  let dir: string;
  let app: string;
  let nginx: ChildProcess | undefined;
  let nginxLog = '';
  let laneway: Served;
  let port: number;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'laneway-nginx-'));
    app = writeApp({
      '/📦/🌐Note.yaml': 'title: string\n',
      '/index.html': "<!--TEMPLATE mustache-->\n{{% import {Note} from '📦' }}\n{{#Note.Form.view as form}}<form action=\"/n?_form={{form.id}}\"></form>{{/Note.Form.view}}\n",
      '/where/GET.js': "import {Request} from '🔗'\n({url: Request.url})\n",
    });
    laneway = await serve(app, ['--workers', '2', '--trust-proxy', '127.0.0.1', '--data', join(dir, 'data')]);
    port = await freePort();
    mkdirSync(join(dir, 'logs'));
    writeFileSync(
      join(dir, 'nginx.conf'),
      `daemon off;
master_process off;
pid ${join(dir, 'nginx.pid')};
error_log ${join(dir, 'logs', 'error.log')} warn;
events { worker_connections 64; }
http {
    access_log off;
    client_body_temp_path ${join(dir, 'body')};
    proxy_temp_path ${join(dir, 'proxy')};
    fastcgi_temp_path ${join(dir, 'fastcgi')};
    uwsgi_temp_path ${join(dir, 'uwsgi')};
    scgi_temp_path ${join(dir, 'scgi')};
    server {
        listen 127.0.0.1:${port};
        server_name shop.example.com;
        location / {
            proxy_pass http://127.0.0.1:${laneway.port};
            proxy_http_version 1.1;
            # The inner address as Host, the public name in X-Forwarded-Host.
            proxy_set_header Host 127.0.0.1:${laneway.port};
            proxy_set_header X-Forwarded-Host $host;
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            # As a proxy that ends TLS sets it ($scheme there); replaces what the visitor sent.
            proxy_set_header X-Forwarded-Proto https;
            proxy_buffering off;
        }
    }
}
`,
    );
    nginx = spawn(NGINX!, ['-p', dir, '-c', join(dir, 'nginx.conf'), '-e', join(dir, 'logs', 'error.log')], { stdio: ['ignore', 'pipe', 'pipe'] });
    nginx.stdout!.on('data', (c: Buffer) => (nginxLog += c));
    nginx.stderr!.on('data', (c: Buffer) => (nginxLog += c));
    nginx.once('exit', (code) => (nginxLog += `\n[nginx exited ${code}]`));
    await listens(port).catch((e: Error) => {
      throw new Error(`${e.message}\n${nginxLog}`);
    });
  });

  after(async () => {
    nginx?.kill('SIGTERM');
    await laneway?.stop();
    rmSync(dir, { recursive: true, force: true });
    rmSync(app, { recursive: true, force: true });
  });

  it('the visitor is the address nginx saw, with the scheme and host nginx set; what the visitor sent is not believed', async () => {
    const from = laneway.lines.length;
    const spoof = { Host: 'shop.example.com', 'X-Forwarded-For': '6.6.6.6', 'X-Forwarded-Proto': 'http', 'X-Forwarded-Host': 'evil.example' };
    const where = await get(port, '/where', spoof);
    assert.equal(where.status, 200, where.text);
    assert.deepEqual(JSON.parse(where.text), { url: 'https://shop.example.com/where' });
    const page = await get(port, '/', spoof);
    assert.match([page.headers['set-cookie'] ?? []].flat().find((c) => c.startsWith('sid='))!, /; Secure/);
    const access = await laneway.waitFor((l) => l.type === 'access' && l.path === '/where', 'the access line of /where', from);
    assert.equal(access.client, VISITOR, 'the access log names the visitor, not the proxy nor the spoofed 6.6.6.6');
  });

  it('the same headers sent to Laneway directly, from an address not trusted, change nothing', async () => {
    const from = laneway.lines.length;
    const direct = await get(laneway.port, '/where', { Host: 'shop.example.com', 'X-Forwarded-For': '6.6.6.6', 'X-Forwarded-Proto': 'https', 'X-Forwarded-Host': 'evil.example', Forwarded: 'for=6.6.6.6;proto=https' });
    assert.deepEqual(JSON.parse(direct.text), { url: 'http://shop.example.com/where' });
    const page = await get(laneway.port, '/', { Host: 'shop.example.com', 'X-Forwarded-Proto': 'https' });
    assert.doesNotMatch([page.headers['set-cookie'] ?? []].flat().find((c) => c.startsWith('sid='))!, /; Secure/);
    const access = await laneway.waitFor((l) => l.type === 'access' && l.path === '/where', 'the access line of /where', from);
    assert.equal(access.client, VISITOR);
  });
});
