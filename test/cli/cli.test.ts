/** The `laneway` command, run as users run it: bin/laneway in a child process. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { rawRequest, writeApp } from '../helpers.js';

const BIN = fileURLToPath(new URL('../../bin/laneway', import.meta.url));
const run = (...args: string[]) => spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', env: { ...process.env, PORT: '' } });

const conflicts = writeApp({
  '/a/GET.js': '({ ok: true })',
  '/🖥a.js': '({ ok: true })',
  '/d/🖥index.js': '({ ok: true })',
  '/d/index.html': '<p>d</p>',
  '/v/GET.js': '({ ok: true })',
  '/v.html': '<p>v</p>',
  '/p/{one}/🔗.yaml': 'values: [x]',
  '/p/{one}/GET.js': '({ ok: true })',
  '/p/{two}/🔗.yaml': 'values: [y]',
  '/p/{two}/GET.js': '({ ok: true })',
  '/q/{id}/GET.js': '({ ok: true })',
  '/r/{bad}/🔗.yaml': 'colors: [x]',
  '/r/{bad}/GET.js': '({ ok: true })',
  '/t/{x}.html': '<p>x</p>',
  '/📮index.js': '({ ok: true })',
  '/ok.html': '<p>fine</p>',
});

test('check lists every conflict with its file, one per line, then a summary; exit 1', () => {
  const r = run('check', conflicts);
  assert.equal(r.status, 1);
  const lines = r.stdout.trim().split('\n');
  const summary = lines.pop()!;
  assert.match(summary, /^\d+ errors?, \d+ warnings?$/);
  const expect = [
    /^🖥a\.js:1:1: GET \/a is answered by both \/a\/GET\.js and \/🖥a\.js.*\[LW_ROUTE_CONFLICT\]$/,
    /^d\/🖥index\.js:1:1: GET \/d\/ is answered by both \/d\/index\.html and \/d\/🖥index\.js.*\[LW_ROUTE_CONFLICT\]$/,
    /^v\.html:1:1: GET \/v is answered by both \/v\/GET\.js and \/v\.html.*\[LW_ROUTE_CONFLICT\]$/,
    /^p\/\{two\}:1:1: two dynamic directories at one level \(\{one\}, \{two\}\).*\[LW_ROUTE_TWO_PARAMS\]$/,
    /^p\/\{two\}\/GET\.js:1:1: GET \/p\/\{two\} is answered by both \/p\/\{one\}\/GET\.js and \/p\/\{two\}\/GET\.js.*\[LW_ROUTE_CONFLICT\]$/,
    /^q\/\{id\}:1:1: the dynamic directory \{id\} has no 🔗\.yaml.*\[LW_ROUTE_PARAM_NO_DEFINITION\]$/,
    /^r\/\{bad\}\/🔗\.yaml:1:1: unknown key "colors".*\[LW_ROUTE_PARAM_DEFINITION\]$/,
    /^t\/\{x\}\.html:1:1: the dynamic page \{x\}\.html has no definition.*\[LW_ROUTE_PARAM_NO_DEFINITION\]$/,
    /^📮index\.js:1:1: 📮index\.js answers no URL.*\[LW_ROUTE_SCRIPT_INDEX_NAME\]$/,
  ];
  for (const re of expect) assert.ok(lines.some((l) => re.test(l)), `missing ${re} in:\n${r.stdout}`);
  assert.equal(lines.length, expect.length, r.stdout);
  assert.equal(summary, `${expect.length} errors, 0 warnings`);
});

test('check exits 0 on a clean app (the bundled example)', () => {
  const r = run('check', fileURLToPath(new URL('../../examples/site', import.meta.url)));
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /0 errors/);
});

test('check on a missing directory is a usage error (exit 2) with a clear message', () => {
  const r = run('check', '/nonexistent/app/dir');
  assert.equal(r.status, 2);
  assert.match(r.stderr, /does not exist/);
});

test('routes prints method, pattern, file and kind; --json gives the same table', () => {
  const dir = writeApp({ '/index.html': '<p>i</p>', '/api/📮save.js': '({ ok: true })', '/docs/index.html': '<p>d</p>', '/s.css': '' });
  const table = run('routes', dir);
  assert.equal(table.status, 0);
  const lines = table.stdout.trim().split('\n');
  assert.match(lines[0]!, /^METHOD\s+PATTERN\s+FILE\s+KIND$/);
  assert.ok(lines.some((l) => /^POST\s+\/api\/save\s+\/api\/📮save\.js\s+script$/.test(l)));
  assert.ok(lines.some((l) => /^GET\s+\/docs\s+\/docs\/index\.html\s+redirect$/.test(l)));
  const json = JSON.parse(run('routes', dir, '--json').stdout);
  assert.deepEqual(json, [
    { method: 'GET', pattern: '/', file: '/index.html', kind: 'page' },
    { method: 'POST', pattern: '/api/save', file: '/api/📮save.js', kind: 'script' },
    { method: 'GET', pattern: '/docs', file: '/docs/index.html', kind: 'redirect' },
    { method: 'GET', pattern: '/docs/', file: '/docs/index.html', kind: 'page' },
    { method: 'GET', pattern: '/s.css', file: '/s.css', kind: 'static' },
  ]);
});

test('--help works on every command', () => {
  for (const args of [['--help'], ['help'], ['serve', '--help'], ['check', '--help'], ['routes', '--help'], ['-h']]) {
    const r = run(...args);
    assert.equal(r.status, 0, args.join(' '));
    assert.match(r.stdout, /^Usage: laneway/);
  }
  assert.equal(run('bogus').status, 2);
  assert.equal(run('serve').status, 2, 'a missing directory is a usage error');
  assert.equal(run('serve', '.', '--nope').status, 2);
});

test('serve refuses an app that does not compile, listing the errors', () => {
  const r = run('serve', conflicts, '--port', '0');
  assert.equal(r.status, 1);
  assert.match(r.stderr, /LW_ROUTE_CONFLICT/);
  assert.doesNotMatch(r.stdout, /listening/);
});

test('serve prints the listening line, answers, and exits 0 on SIGTERM after finishing', async () => {
  const dir = writeApp({ '/index.html': '<p>served by the CLI</p>' });
  const child = spawn(process.execPath, [BIN, 'serve', dir, '--port', '0', '--log', 'json'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (d) => {
      out += d;
      // With --log json the line is a JSON object holding the same text.
      const m = /listening on (http:\/\/127\.0\.0\.1:(\d+))/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
  });
  const port = Number(new URL(url).port);
  const r = await rawRequest(port, 'GET', '/');
  assert.equal(r.status, 200);
  assert.match(r.text, /served by the CLI/);
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  assert.equal(await exited, 0);
  const access = out.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
  assert.ok(access.some((e) => e.type === 'access' && e.path === '/' && e.status === 200));
});

test('serve (one process) reloads the app on SIGHUP, and keeps the running version when the new one does not compile', async () => {
  const { writeFileSync } = await import('node:fs');
  const { join } = await import('node:path');
  const dir = writeApp({ '/index.html': '<p>first</p>' });
  const child = spawn(process.execPath, [BIN, 'serve', dir, '--port', '0', '--log', 'off'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  const waitFor = (re: RegExp, from: () => string) =>
    new Promise<RegExpExecArray>((resolve, reject) => {
      const check = () => {
        const m = re.exec(from());
        if (m) resolve(m);
      };
      child.stdout.on('data', check);
      child.stderr.on('data', check);
      child.once('exit', (code) => reject(new Error(`exited ${code}: ${out}${err}`)));
      check();
    });
  child.stdout.on('data', (d) => (out += d));
  const port = Number((await waitFor(/listening on http:\/\/127\.0\.0\.1:(\d+)/, () => out))[1]);
  writeFileSync(join(dir, 'index.html'), '<p>second</p>');
  child.kill('SIGHUP');
  await waitFor(/reloaded/, () => out);
  assert.match((await rawRequest(port, 'GET', '/')).text, /second/);
  // A build with errors: the problems are printed and the last good version keeps serving.
  writeFileSync(join(dir, 'index.html'), '<!--TEMPLATE mustache-->\n{{#open}}never closed\n');
  child.kill('SIGHUP');
  await waitFor(/still serving/, () => err);
  assert.match((await rawRequest(port, 'GET', '/')).text, /second/);
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  assert.equal(await exited, 0);
});

test('serve takes the port from PORT when --port is absent', async () => {
  const dir = writeApp({ '/index.html': '<p>p</p>' });
  // Find a free port by binding to 0 first.
  const { createServer } = await import('node:net');
  const probe = createServer();
  const port = await new Promise<number>((r) => probe.listen(0, '127.0.0.1', () => r((probe.address() as { port: number }).port)));
  await new Promise((r) => probe.close(r));
  const child = spawn(process.execPath, [BIN, 'serve', dir, '--log', 'off'], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PORT: String(port) } });
  const line = await new Promise<string>((resolve) => child.stdout.on('data', (d) => resolve(String(d))));
  assert.equal(line.trim(), `listening on http://127.0.0.1:${port}`);
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
  child.kill('SIGINT');
  assert.equal(await exited, 0);
});

test('serve --watch reloads on change and keeps the last good app when a change does not compile', async () => {
  const { writeFileSync } = await import('node:fs');
  const { join } = await import('node:path');
  const dir = writeApp({ '/index.html': '<p>version one</p>' });
  const child = spawn(process.execPath, [BIN, 'serve', dir, '--port', '0', '--log', 'off', '--watch'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  const waitFor = (re: RegExp, stream: () => string) =>
    new Promise<RegExpExecArray>((resolve, reject) => {
      const started = Date.now();
      const tick = () => {
        const m = re.exec(stream());
        if (m) return resolve(m);
        if (Date.now() - started > 5000) return reject(new Error(`timed out waiting for ${re}: ${stream()}`));
        setTimeout(tick, 20);
      };
      tick();
    });
  child.stdout.on('data', (d) => (out += d));
  const port = Number((await waitFor(/listening on http:\/\/127\.0\.0\.1:(\d+)/, () => out))[1]);
  assert.match((await rawRequest(port, 'GET', '/')).text, /version one/);
  writeFileSync(join(dir, 'index.html'), '<p>version two</p>');
  await waitFor(/reloaded/, () => out);
  assert.match((await rawRequest(port, 'GET', '/')).text, /version two/);
  writeFileSync(join(dir, 'GET.js'), '({ ok: true })');
  await waitFor(/LW_ROUTE_CONFLICT[\s\S]*still serving/, () => err);
  assert.match((await rawRequest(port, 'GET', '/')).text, /version two/);
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
  child.kill('SIGTERM');
  assert.equal(await exited, 0);
});

test('serve --watch also reloads on changes in nested sites and local connectors outside the app, and in the sources file', async () => {
  const { mkdirSync, writeFileSync } = await import('node:fs');
  const { join } = await import('node:path');
  const URL = 'https://github.com/example/store.git#!v1';
  const script = (src: string) => `script:\n  src: ${src}\n`;
  // base/app (served), base/shop and base/clicky (outside it), base/laneway.sources.yaml.
  const base = writeApp({
    '/app/index.html': '<!doctype html>\n<html><head><title>t</title></head><body><clicky.com-script/></body></html>\n',
    '/app/🔌.yaml': '- ../clicky\n',
    '/app/🔌shop.yaml': 'source: ../shop\n',
    '/shop/index.html': '<p>shop one</p>',
    '/clicky/🎛.yaml': 'name: clicky.com\ntype: connector\n',
    '/clicky/<>/script.yaml': script('https://one.example/c.js'),
  });
  const child = spawn(process.execPath, [BIN, 'serve', join(base, 'app'), '--port', '0', '--log', 'off', '--watch'], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LANEWAY_SOURCES: '' } });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  const eventually = async (check: () => Promise<boolean> | boolean, what: string) => {
    const started = Date.now();
    while (!(await check())) {
      if (Date.now() - started > 8000) throw new Error(`timed out waiting for ${what}\nstdout: ${out}\nstderr: ${err}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  try {
    await eventually(() => /listening on/.test(out), 'the listening line');
    const port = Number(/listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(out)![1]);
    const get = async (path: string) => (await rawRequest(port, 'GET', path)).text;
    assert.match(await get('/shop/'), /shop one/);
    assert.match(await get('/'), /<script src="https:\/\/one\.example\/c\.js"><\/script>/);

    // A file of the mounted site (outside the app directory).
    writeFileSync(join(base, 'shop/index.html'), '<p>shop two</p>');
    await eventually(async () => /shop two/.test(await get('/shop/')), 'the nested site to reload');
    // A tag definition of the local connector.
    writeFileSync(join(base, 'clicky/<>/script.yaml'), script('https://two.example/c.js'));
    await eventually(async () => /two\.example/.test(await get('/')), 'the connector to reload');

    // A site mounted after start, by git URL: unmapped (an error; the last good app keeps serving),
    // then mapped by the sources file next to the app; then its own files are watched too.
    mkdirSync(join(base, 'store'));
    writeFileSync(join(base, 'store/index.html'), '<p>store one</p>');
    writeFileSync(join(base, 'app/🔌store.yaml'), `source: ${URL}\n`);
    await eventually(() => /not in the local sources map[\s\S]*still serving the last version that compiled/.test(err), 'the unmapped source to be reported');
    assert.match(await get('/shop/'), /shop two/);
    writeFileSync(join(base, 'laneway.sources.yaml'), `sources:\n  "${URL}": store\n`);
    await eventually(async () => /store one/.test(await get('/store/')), 'the sources file to be read again');
    writeFileSync(join(base, 'store/index.html'), '<p>store two</p>');
    await eventually(async () => /store two/.test(await get('/store/')), 'the newly mounted site to be watched');

    // The data directory and other dot-directories are not the app: no reload.
    const reloads = out.split('reloaded').length;
    mkdirSync(join(base, 'app/.laneway'), { recursive: true });
    writeFileSync(join(base, 'app/.laneway/scratch'), 'x');
    await new Promise((r) => setTimeout(r, 400));
    assert.equal(out.split('reloaded').length, reloads, out);
  } finally {
    const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
    child.kill('SIGTERM');
    assert.equal(await exited, 0);
  }
});

test('--sources is listed in the help of serve and check', () => {
  assert.match(run('serve', '--help').stdout, /--sources FILE\s+read the sources map from FILE/);
  assert.match(run('check', '--help').stdout, /--sources FILE/);
});
