/**
 * Connector tags (docs/connectors.md) and the local sources map they are found
 * through (src/content/sources.ts). Connectors are written to temporary directories and mapped
 * with `AppOptions.sources` (or `--source` for the CLI); nothing leaves 127.0.0.1.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createServer as createHttpServer, type Server } from 'node:http';
import { rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkApp, loadApp } from '../../src/app/index.js';
import type { Diagnostic } from '../../src/diag/index.js';
import { isSourceUrl, lookupSource, normalizeSourceUrl, parseSourceArgument, parseSourcesFile, parseSourcesVariable, resolveSource, sourceName, sourcesFromCommandLine } from '../../src/content/sources.js';
import { launch, skip, violationRecordingPage, type Browser } from '../browser/chromium.js';
import { rawRequest, serve, writeApp, type AppFiles, type Served } from '../helpers.js';

const URL_V1 = 'https://github.com/stacklane-registry/clicky.com.git#!v1.0.1';
const SCRIPT_SRC = 'https://static.clicky-cdn.test/js/clicky.js';
const INTEGRITY = 'sha384-' + createHash('sha384').update('clicky').digest('base64');

/** A connector repository as the registry has them: manifest and one tag. */
function clickyConnector(tag = `script:\n  src: ${SCRIPT_SRC}\n  integrity: ${INTEGRITY}\n  async: true\ncsp:\n  connect-src: [https://in.clicky-cdn.test]\n  img-src: https://in.clicky-cdn.test\n`, extra: AppFiles = {}): string {
  return writeApp({ '/🎛.yaml': 'name: clicky.com\ntype: connector\n', '/<>/script.yaml': tag, ...extra });
}

const html = (body: string) => `<!doctype html>\n<html><head><title>t</title></head>\n<body>\n${body}\n</body></html>\n`;
const codes = (ds: Diagnostic[]) => ds.map((d) => `${d.severity} ${d.code} ${d.file}:${d.line}:${d.column}`);

describe('the sources map', () => {
  it('normalises URLs: scheme and host lower-cased, trailing / and .git dropped, fragment apart', () => {
    assert.deepEqual(normalizeSourceUrl('HTTPS://GitHub.com/Owner/clicky.com.git/#!v1'), { base: 'https://github.com/Owner/clicky.com', fragment: '!v1' });
    assert.deepEqual(normalizeSourceUrl(' https://github.com/o/r '), { base: 'https://github.com/o/r', fragment: '' });
    assert.equal(sourceName(URL_V1), 'clicky.com');
    assert.equal(sourceName('git@github.com:owner/stripe.com.git#main'), 'stripe.com');
    assert.equal(sourceName('../connectors/clicky.com'), 'clicky.com');
  });

  it('an exact versioned key wins; an unversioned key serves every version; a versioned key serves only its own', () => {
    const map = { 'https://github.com/stacklane-registry/clicky.com': '/any', 'https://github.com/stacklane-registry/clicky.com.git#!v1.0.1': '/v1' };
    assert.equal(lookupSource(URL_V1, map), '/v1');
    assert.equal(lookupSource('https://github.com/stacklane-registry/clicky.com#!v1.0.1', map), '/v1', '.git ignored');
    assert.equal(lookupSource('https://github.com/stacklane-registry/clicky.com.git#!v2.0.0', map), '/any');
    assert.equal(lookupSource('https://github.com/stacklane-registry/clicky.com.git', map), '/any');
    const versioned = { [URL_V1]: '/v1' };
    assert.equal(lookupSource('https://github.com/stacklane-registry/clicky.com.git#!v2.0.0', versioned), undefined);
    assert.equal(lookupSource('https://github.com/stacklane-registry/clicky.com.git', versioned), undefined);
    assert.equal(lookupSource('https://github.com/other/clicky.com.git#!v1.0.1', versioned), undefined);
  });

  it('resolves a mapped URL, a path (relative to the app directory, no map needed), and says why not', () => {
    const conn = clickyConnector();
    const app = writeApp({ '/index.html': '<p>x</p>' });
    try {
      assert.deepEqual(resolveSource(URL_V1, { [URL_V1]: conn }, app), { found: true, dir: conn, via: 'map' });
      const rel = join('..', conn.slice(conn.lastIndexOf('/') + 1));
      assert.deepEqual(resolveSource(rel, {}, app), { found: true, dir: conn, via: 'path' });
      assert.deepEqual(resolveSource(URL_V1, {}, app), { found: false, reason: 'unmapped' });
      assert.deepEqual(resolveSource(URL_V1, { [URL_V1]: '/nonexistent/clicky' }, app), { found: false, reason: 'missing', dir: '/nonexistent/clicky', via: 'map' });
      assert.equal(isSourceUrl('git@github.com:o/r.git'), true);
      assert.equal(isSourceUrl('./vendor/r'), false);
    } finally {
      rmSync(conn, { recursive: true, force: true });
      rmSync(app, { recursive: true, force: true });
    }
  });

  it('reads --source URL=DIR and LANEWAY_SOURCES (JSON or URL=DIR;URL=DIR); flags win; directories from the working directory', () => {
    assert.deepEqual(parseSourceArgument(`${URL_V1}=../c`), [URL_V1, '../c']);
    assert.match(parseSourceArgument('https://x/y.git') as string, /--source takes URL=DIR/);
    assert.match(parseSourceArgument('vendor/x=dir') as string, /is not a URL/);
    assert.deepEqual(parseSourcesVariable(`{"${URL_V1}": "/a"}`), { [URL_V1]: '/a' });
    assert.deepEqual(parseSourcesVariable(`${URL_V1}=/a; https://h/b.git=/b`), { [URL_V1]: '/a', 'https://h/b.git': '/b' });
    assert.match(parseSourcesVariable('{"x": 1}') as string, /^LANEWAY_SOURCES: the directory of x is not a string/);
    assert.match(parseSourcesVariable('{nope') as string, /^LANEWAY_SOURCES is not valid JSON/);
    assert.deepEqual(
      sourcesFromCommandLine(['https://github.com/stacklane-registry/clicky.com#!v1.0.1=flag-dir'], `${URL_V1}=env-dir;https://h/b=/b`, '/work'),
      { 'https://h/b': '/b', 'https://github.com/stacklane-registry/clicky.com#!v1.0.1': '/work/flag-dir' },
    );
  });
});

describe('connector tags over HTTP', () => {
  let conn: string;
  let s: Served;
  before(async () => {
    conn = clickyConnector();
    s = await serve(
      {
        '/🔌.yaml': `- ${URL_V1}\n`,
        '/index.html': html('<clicky.com-script defer id="clicky" data-site-id="101"/>'),
        '/view.html': '<!--TEMPLATE mustache-->\n' + html('<p>{{%year}}</p>\n<clicky.com-script></clicky.com-script>'),
        '/none.html': html('<p>no connector here</p>'),
      },
      { sources: { [URL_V1]: conn } },
    );
  });
  after(async () => {
    await s.close();
    rmSync(conn, { recursive: true, force: true });
  });

  it('a plain page: the tag becomes the defined script, with the written defer, id and data-* passed through', async () => {
    const r = await s.get('/');
    assert.equal(r.status, 200);
    assert.equal(r.text, html(`<script src="${SCRIPT_SRC}" integrity="${INTEGRITY}" crossorigin="anonymous" async defer id="clicky" data-site-id="101"></script>`));
  });

  it('a view: the same script; an end tag written after it is removed', async () => {
    const r = await s.get('/view');
    assert.equal(r.status, 200);
    assert.equal(r.text, html(`<p>${new Date().getFullYear()}</p>\n<script src="${SCRIPT_SRC}" integrity="${INTEGRITY}" crossorigin="anonymous" async></script>`));
  });

  it("the page's policy allows the script's URL in script-src (as any <script src>) and adds the tag's csp: directives", async () => {
    const expected =
      `default-src 'none'; script-src ${SCRIPT_SRC}; style-src 'none'; img-src 'self' https://in.clicky-cdn.test; font-src 'self'; ` +
      "connect-src 'self' https://in.clicky-cdn.test; form-action 'self'; base-uri 'self'; object-src 'none'; frame-ancestors 'self'";
    assert.equal((await s.get('/')).headers['content-security-policy'], expected);
    assert.equal((await s.get('/view')).headers['content-security-policy'], expected);
    assert.match((await s.get('/none')).headers['content-security-policy'] as string, /script-src 'none'; style-src 'none'; img-src 'self'; font-src 'self'; connect-src 'self';/, 'only pages using the tag');
  });
});

describe('an unavailable connector', () => {
  it('not in the sources map: the tag is removed with a warning naming the connector and the --source flag to add', async () => {
    const files: AppFiles = { '/🔌.yaml': `- ${URL_V1}\n`, '/index.html': html('<clicky.com-script async/>') };
    const dir = writeApp(files);
    const ds = checkApp(dir);
    assert.deepEqual(codes(ds), ['warning LW_CONTENT_CONNECTOR_UNAVAILABLE /index.html:4:1']);
    assert.ok(ds[0]!.message.includes(`the connector clicky.com is not available`), ds[0]!.message);
    assert.ok(ds[0]!.message.includes(`--source ${URL_V1}=DIR`), ds[0]!.message);
    const s = await serve(dir);
    try {
      const r = await s.get('/');
      assert.equal(r.text, html(''));
      assert.match(r.headers['content-security-policy'] as string, /script-src 'none';/);
    } finally {
      await s.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a mapped directory that does not exist: the warning names the directory', () => {
    const dir = writeApp({ '/🔌.yaml': `- ${URL_V1}\n`, '/index.html': html('<clicky.com-script/>') });
    const ds = checkApp(dir, { sources: { [URL_V1]: '/nonexistent/clicky.com' } });
    assert.deepEqual(codes(ds), ['warning LW_CONTENT_CONNECTOR_UNAVAILABLE /index.html:4:1']);
    assert.match(ds[0]!.message, /the directory \/nonexistent\/clicky\.com, given for https:\/\/github\.com\/stacklane-registry\/clicky\.com\.git#!v1\.0\.1, does not exist/);
  });

  it('a tag the connector does not define, and a connector /🔌.yaml does not import: removed with warnings', async () => {
    const conn = clickyConnector();
    const s = await serve({ '/🔌.yaml': `- ${URL_V1}\n`, '/index.html': html('<clicky.com-pixel/><stripe.com-v3 defer/><my.element>kept</my.element>') }, { sources: { [URL_V1]: conn } });
    try {
      assert.equal((await s.get('/')).text, html('<my.element>kept</my.element>'), 'an element with a dot but no connector shape stays');
      const ds = checkApp(s.dir, { sources: { [URL_V1]: conn } });
      assert.deepEqual(codes(ds), ['warning LW_CONTENT_CONNECTOR_UNKNOWN_TAG /index.html:4:1', 'warning LW_CONTENT_CONNECTOR_UNKNOWN_TAG /index.html:4:20']);
      assert.match(ds[0]!.message, /the connector clicky\.com defines no tag "pixel" \(its tags: <clicky\.com-script\/>\)/);
      assert.match(ds[1]!.message, /<stripe\.com-v3\/> is a tag of the connector stripe\.com, which \/🔌\.yaml does not import \(it imports clicky\.com\)/);
    } finally {
      await s.close();
      rmSync(conn, { recursive: true, force: true });
    }
  });
});

describe('connector sources and definitions', () => {
  it('a path in /🔌.yaml is used as is, relative to the app directory, without a sources map', async () => {
    const conn = clickyConnector();
    const s = await serve({ '/🔌.yaml': `- ../${conn.slice(conn.lastIndexOf('/') + 1)}\n`, '/index.html': html('<clicky.com-script/>') });
    try {
      assert.match((await s.get('/')).text, new RegExp(`<script src="${SCRIPT_SRC}" integrity="[^"]+" crossorigin="anonymous" async></script>`));
    } finally {
      await s.close();
      rmSync(conn, { recursive: true, force: true });
    }
  });

  it('a definition without integrity writes no integrity or crossorigin; a definition with defer writes it', async () => {
    const conn = clickyConnector(`script: {src: '${SCRIPT_SRC}?site=1&v=2', defer: true}\n`);
    const s = await serve({ '/🔌.yaml': `- ${URL_V1}\n`, '/index.html': html('<clicky.com-script/>') }, { sources: { [URL_V1]: conn } });
    try {
      const r = await s.get('/');
      assert.equal(r.text, html(`<script src="${SCRIPT_SRC}?site=1&amp;v=2" defer></script>`));
      assert.match(r.headers['content-security-policy'] as string, new RegExp(`script-src ${SCRIPT_SRC.replace(/[.]/g, '\\.')}; style-src`), 'URL without its query, as for any <script src>');
    } finally {
      await s.close();
      rmSync(conn, { recursive: true, force: true });
    }
  });

  it('attributes other than async, defer, id and data-* are errors at the attribute; event handlers and style are refused as everywhere', () => {
    const conn = clickyConnector();
    const dir = writeApp({ '/🔌.yaml': `- ${URL_V1}\n`, '/index.html': html('<clicky.com-script class="x" src="/evil.js" onload="go()" style="color:red"/>') });
    const ds = checkApp(dir, { sources: { [URL_V1]: conn } });
    assert.deepEqual(codes(ds), [
      'error LW_CONTENT_CONNECTOR_ATTRIBUTE /index.html:4:20',
      'error LW_CONTENT_CONNECTOR_ATTRIBUTE /index.html:4:30',
      'error LW_CSP_EVENT_HANDLER /index.html:4:45',
      'error LW_CSP_STYLE_ATTRIBUTE /index.html:4:59',
    ]);
    assert.match(ds[0]!.message, /^class is not passed to the script of <clicky\.com-script\/>: a connector tag takes async, defer, id and data-\* attributes/);
  });

  it('async: optional is accepted (the tag decides); {attr} placeholders in src are filled from the tag, encoded', async () => {
    const conn = clickyConnector(`script:\n  src: '${SCRIPT_SRC}?site={site}&lang={data-lang}'\n  async: optional\n  defer: optional\n`);
    const files = { '/🔌.yaml': `- ${URL_V1}\n`, '/index.html': html('<clicky.com-script async site="10 1&amp;2" data-lang="en"/>'), '/plain.html': html('<clicky.com-script site="7" data-lang="de"/>') };
    assert.deepEqual(codes(checkApp(writeApp(files), { sources: { [URL_V1]: conn } })), []);
    const s = await serve(files, { sources: { [URL_V1]: conn } });
    try {
      const r = await s.get('/');
      assert.equal(r.text, html(`<script src="${SCRIPT_SRC}?site=10%201%262&amp;lang=en" async data-lang="en"></script>`));
      assert.match(r.headers['content-security-policy'] as string, new RegExp(`script-src ${SCRIPT_SRC.replace(/[.]/g, '\\.')}; style-src`));
      assert.equal((await s.get('/plain')).text, html(`<script src="${SCRIPT_SRC}?site=7&amp;lang=de" data-lang="de"></script>`), 'no async unless written');
    } finally {
      await s.close();
      rmSync(conn, { recursive: true, force: true });
    }
  });

  it('a placeholder whose attribute is missing is an error at the tag; a placeholder in the host is refused in the definition', () => {
    const conn = clickyConnector(`script:\n  src: '${SCRIPT_SRC}?site={site}'\n`);
    const ds = checkApp(writeApp({ '/🔌.yaml': `- ${URL_V1}\n`, '/index.html': html('<clicky.com-script/>') }), { sources: { [URL_V1]: conn } });
    assert.deepEqual(codes(ds), ['error LW_CONTENT_CONNECTOR_ATTRIBUTE /index.html:4:1']);
    assert.match(ds[0]!.message, /<clicky\.com-script\/> needs site="…"/);
    const bad = clickyConnector("script:\n  src: 'https://{host}.clicky-cdn.test/a.js'\n  async: sometimes\n");
    const dsBad = checkApp(writeApp({ '/🔌.yaml': `- ${URL_V1}\n`, '/index.html': html('<clicky.com-script host="x"/>') }), { sources: { [URL_V1]: bad } });
    assert.deepEqual(dsBad.map((d) => d.message.replace(/; found .*/, '')), ['script.src has a {placeholder} before its path; the host must be written out: "https://{host}.clicky-cdn.test/a.js"', 'script.async is true, false or optional, not "sometimes"']);
    for (const dir of [conn, bad]) rmSync(dir, { recursive: true, force: true });
  });

  it('a connector tag with a template tag inside is an error (it is replaced at load, so it is written literally)', () => {
    const conn = clickyConnector();
    const dir = writeApp({ '/🔌.yaml': `- ${URL_V1}\n`, '/v.html': '<!--TEMPLATE mustache-->\n<clicky.com-script id="{{%year}}"/>\n' });
    const ds = checkApp(dir, { sources: { [URL_V1]: conn } });
    assert.deepEqual(codes(ds), ['error LW_CONTENT_CONNECTOR_TAG /v.html:2:1']);
  });

  it('a malformed tag definition is an error at its file, line and column; the tag is then removed silently', () => {
    const conn = clickyConnector(`script:\n  src: /relative.js\n  integrity: md5-abc\n  asnyc: true\ncsp:\n  default-src: '*'\n  connect-src: ["'unsafe-inline'", https://ok.test]\n  script-src: "'none'"\nlink: {href: x}\n`);
    const dir = writeApp({ '/🔌.yaml': `- ${URL_V1}\n`, '/index.html': html('<clicky.com-script/>') });
    const ds = checkApp(dir, { sources: { [URL_V1]: conn } });
    const file = '../' + conn.slice(conn.lastIndexOf('/') + 1) + '/<>/script.yaml';
    assert.deepEqual(codes(ds), [
      `error LW_CONTENT_CONNECTOR_DEFINITION ${file}:2:8`,
      `error LW_CONTENT_CONNECTOR_DEFINITION ${file}:3:14`,
      `error LW_CONTENT_CONNECTOR_DEFINITION ${file}:4:3`,
      `error LW_CONTENT_CONNECTOR_DEFINITION ${file}:6:3`,
      `error LW_CONTENT_CONNECTOR_DEFINITION ${file}:7:16`,
      `error LW_CONTENT_CONNECTOR_DEFINITION ${file}:8:15`,
      `warning LW_CONTENT_CONNECTOR_DEFINITION ${file}:9:1`,
    ]);
    assert.match(ds[0]!.message, /script\.src is the absolute https:\/\/ URL of the script; found "\/relative\.js"/);
    assert.match(ds[2]!.message, /script\.asnyc is not a script key/);
    assert.match(ds[3]!.message, /csp\.default-src: a connector may add sources to script-src, style-src/);
    assert.match(ds[4]!.message, /a connector cannot allow 'unsafe-inline'/);
    assert.match(ds[6]!.message, /link: tags \(stylesheets\) are not supported yet/);
  });

  it('a connector manifest that is not a connector, has no domain name, or is not YAML: an error at its line', () => {
    const cases: Array<[string, string]> = [
      ['name: clicky.com\ntype: resource\n', ':2:7'],
      ['type: connector\nname: Clicky\n', ':2:7'],
      ['name: [clicky.com\n', ':2:1'],
    ];
    for (const [manifest, at] of cases) {
      const conn = writeApp({ '/🎛.yaml': manifest });
      const dir = writeApp({ '/🔌.yaml': `- ${URL_V1}\n`, '/index.html': html('<clicky.com-script/>') });
      const ds = checkApp(dir, { sources: { [URL_V1]: conn } });
      const file = '../' + conn.slice(conn.lastIndexOf('/') + 1) + '/🎛.yaml';
      assert.equal(ds.filter((d) => d.severity === 'error').length, 1, JSON.stringify(ds));
      assert.equal(codes(ds)[0], `error LW_CONTENT_CONNECTOR_DEFINITION ${file}${at}`, manifest);
    }
    const empty = writeApp({ '/README.md': 'no manifest' });
    const ds = checkApp(writeApp({ '/🔌.yaml': `- ${URL_V1}\n` }), { sources: { [URL_V1]: empty } });
    assert.match(ds[0]!.message, /has no \/🎛\.yaml in .*: a connector repository names itself there \(name: clicky\.com, type: connector\)/);
  });

  it('/🔌.yaml must be a list of URLs or paths, each connector once', () => {
    const conn = clickyConnector();
    const notList = checkApp(writeApp({ '/🔌.yaml': 'clicky: https://x/clicky.com.git\n' }));
    assert.deepEqual(codes(notList), ['error LW_CONTENT_CONNECTOR_LIST /🔌.yaml:1:1']);
    const twice = checkApp(writeApp({ '/🔌.yaml': `- ${URL_V1}\n- {url: x}\n- https://github.com/someone/clicky.com.git\n` }), { sources: { [URL_V1]: conn } });
    assert.deepEqual(codes(twice), ['error LW_CONTENT_CONNECTOR_LIST /🔌.yaml:2:3', 'error LW_CONTENT_CONNECTOR_LIST /🔌.yaml:3:3']);
    assert.match(twice[1]!.message, /the connector clicky\.com is imported twice/);
    rmSync(conn, { recursive: true, force: true });
  });

  it('loadApp takes the map from AppOptions.sources; the app keeps it in app.options', () => {
    const conn = clickyConnector();
    const dir = writeApp({ '/🔌.yaml': `- ${URL_V1}\n`, '/index.html': html('<clicky.com-script/>') });
    const app = loadApp(dir, { sources: { [URL_V1]: conn } });
    assert.deepEqual(app.options.sources, { [URL_V1]: conn });
    assert.deepEqual(app.diagnostics, []);
  });
});

describe('laneway check and serve --source (needs npm run build)', () => {
  const BIN = fileURLToPath(new URL('../../bin/laneway', import.meta.url));
  const run = (args: string[], env: Record<string, string> = {}) => spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', env: { ...process.env, PORT: '', LANEWAY_SOURCES: '', ...env } });
  let conn: string;
  let dir: string;
  before(() => {
    conn = clickyConnector();
    dir = writeApp({ '/🔌.yaml': `- ${URL_V1}\n`, '/index.html': html('<clicky.com-script async/>') });
  });
  after(() => {
    rmSync(conn, { recursive: true, force: true });
    rmSync(dir, { recursive: true, force: true });
  });

  it('check without a source prints the warning with the flag to add, and exits 0', () => {
    const r = run(['check', dir]);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout.split('\n')[0], `index.html:4:1: warning: <clicky.com-script/>: the connector clicky.com is not available: no local copy of ${URL_V1} is configured (Laneway never fetches code while it runs): start Laneway with --source ${URL_V1}=DIR, DIR being a copy of the connector's repository (or set LANEWAY_SOURCES); the tag is removed [LW_CONTENT_CONNECTOR_UNAVAILABLE]`);
    assert.match(r.stdout, /^0 errors, 1 warning$/m);
  });

  it('check --source URL=DIR (a relative DIR, from the working directory) finds the connector: no problems', () => {
    const r = spawnSync(process.execPath, [BIN, 'check', dir, '--source', `${URL_V1}=${conn.slice(conn.lastIndexOf('/') + 1)}`], { encoding: 'utf8', cwd: resolve(conn, '..'), env: { ...process.env, LANEWAY_SOURCES: '' } });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, '0 errors, 0 warnings\n');
  });

  it('LANEWAY_SOURCES works the same; a malformed --source exits 2 with the expected form', () => {
    assert.equal(run(['check', dir], { LANEWAY_SOURCES: JSON.stringify({ [URL_V1]: conn }) }).stdout, '0 errors, 0 warnings\n');
    const bad = run(['check', dir, '--source', conn]);
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /^laneway check: --source takes URL=DIR/);
  });

  it('serve --source serves the expanded tag with its policy', async () => {
    const child = spawn(process.execPath, [BIN, 'serve', dir, '--port', '0', '--log', 'off', '--source', `${URL_V1}=${conn}`], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LANEWAY_SOURCES: '' } });
    let out = '';
    const port = await new Promise<number>((resolvePort, reject) => {
      child.stdout.on('data', (d) => {
        out += d;
        const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
        if (m) resolvePort(Number(m[1]));
      });
      child.once('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
    });
    try {
      const r = await rawRequest(port, 'GET', '/');
      assert.match(r.text, new RegExp(`<script src="${SCRIPT_SRC}" integrity="${INTEGRITY.replace(/[+/]/g, '\\$&')}" crossorigin="anonymous" async></script>`));
      assert.match(r.headers['content-security-policy'] as string, /connect-src 'self' https:\/\/in\.clicky-cdn\.test;/);
    } finally {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
  });
});

describe('the sources file: laneway.sources.yaml next to the app', () => {
  const yaml = (entries: string) => `sources:\n${entries}`;
  let base: string;
  before(() => {
    base = writeApp({ '/vendor/clicky.com/🎛.yaml': 'name: clicky.com\ntype: connector\n', '/not-a-dir': 'x' });
  });
  after(() => rmSync(base, { recursive: true, force: true }));

  it('maps git URLs to directories relative to the file; a quoted key, ssh and scp-like URLs too', () => {
    const text = yaml(`  ${URL_V1}: vendor/clicky.com\n  'https://github.com/o/two.git': ./vendor/clicky.com/\n  git@github.com:o/three.git: ${base}/vendor\n`);
    const r = parseSourcesFile(text, base, '../laneway.sources.yaml');
    assert.deepEqual(r.diagnostics, []);
    assert.deepEqual(r.sources, {
      [URL_V1]: join(base, 'vendor/clicky.com'),
      'https://github.com/o/two.git': join(base, 'vendor/clicky.com'),
      'git@github.com:o/three.git': join(base, 'vendor'),
    });
    assert.deepEqual(parseSourcesFile('', base, 'f').sources, {}, 'an empty file maps nothing');
    assert.deepEqual(parseSourcesFile('sources:\n', base, 'f'), { sources: {}, diagnostics: [] });
  });

  it('a malformed file is an error at its line and column, naming the file (LW_CONTENT_SOURCES_FILE); the good entries are kept', () => {
    const at = (text: string) => parseSourcesFile(text, base, '../laneway.sources.yaml').diagnostics.map((d) => `${d.severity} ${d.code} ${d.file}:${d.line}:${d.column} ${d.message}`);
    assert.match(at('sources:\n  a: [b\n')[0]!, /^error LW_CONTENT_SOURCES_FILE \.\.\/laneway\.sources\.yaml:\d+:\d+ invalid YAML: /);
    assert.match(at(`- ${URL_V1}\n`)[0]!, /^error LW_CONTENT_SOURCES_FILE \.\.\/laneway\.sources\.yaml:1:1 a sources file holds one key, `sources:`/);
    assert.match(at(`source:\n  ${URL_V1}: vendor\n`)[0]!, /:1:1 unknown key "source": a sources file holds one key/);
    assert.match(at(`sources: [${URL_V1}]\n`)[0]!, /:1:10 `sources:` is a map of git URLs to local directories/);
    assert.match(at('sources:\n  vendor/clicky.com: vendor/clicky.com\n')[0]!, /:2:3 "vendor\/clicky\.com" is not a git URL/);
    assert.match(at(`sources:\n  ${URL_V1}:\n`)[0]!, /:2:3 the directory of https:\/\/github\.com\/stacklane-registry\/clicky\.com\.git#!v1\.0\.1 is missing/);
    assert.match(at(`sources:\n  ${URL_V1}: vendor/clicky.com\n  https://github.com/stacklane-registry/clicky.com#!v1.0.1: vendor\n`)[0]!, /:3:3 https:\/\/github\.com\/stacklane-registry\/clicky\.com#!v1\.0\.1 is the same source as/);
    const missing = parseSourcesFile(yaml(`  https://h/ok.git: vendor\n  ${URL_V1}: vendor/nope\n  https://h/file.git: not-a-dir\n`), base, '../laneway.sources.yaml');
    assert.deepEqual(missing.diagnostics.map((d) => `${d.file}:${d.line}:${d.column}`), [`../laneway.sources.yaml:3:${3 + URL_V1.length + 2}`, '../laneway.sources.yaml:4:23']);
    assert.equal(missing.diagnostics[0]!.message, `the directory vendor/nope of ${URL_V1} (${join(base, 'vendor/nope')}) does not exist: give a local copy of that repository, relative to the file's directory`);
    assert.match(missing.diagnostics[1]!.message, /not-a-dir .* is not a directory/);
    assert.deepEqual(missing.sources, { 'https://h/ok.git': join(base, 'vendor') });
  });

  it('precedence: --source flags, then LANEWAY_SOURCES, then the file (for the same repository and version)', () => {
    const file = { [URL_V1]: '/file/v1', 'https://h/only-file.git': '/file/only' };
    assert.deepEqual(sourcesFromCommandLine([], undefined, '/cwd', file), file);
    assert.deepEqual(sourcesFromCommandLine([], `${URL_V1}=/env/v1`, '/cwd', file), { 'https://h/only-file.git': '/file/only', [URL_V1]: '/env/v1' });
    assert.deepEqual(sourcesFromCommandLine([`https://github.com/stacklane-registry/clicky.com#!v1.0.1=flag`], `${URL_V1}=/env/v1`, '/cwd', file), {
      'https://h/only-file.git': '/file/only',
      'https://github.com/stacklane-registry/clicky.com#!v1.0.1': '/cwd/flag',
    });
  });
});

describe('laneway serve and check with a sources file (needs npm run build)', () => {
  const BIN = fileURLToPath(new URL('../../bin/laneway', import.meta.url));
  const STORE_URL = 'https://github.com/example/store.git#!v2.0.0';
  const OTHER_SRC = 'https://static.other-cdn.test/clicky.js';
  const run = (args: string[], env: Record<string, string> = {}) => spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', env: { ...process.env, PORT: '', LANEWAY_SOURCES: '', ...env } });
  let base: string;
  let app: string;
  before(() => {
    // base/laneway.sources.yaml, base/app (the site), base/vendor/… (the local copies).
    base = writeApp({
      '/laneway.sources.yaml': `# next to the app, not in it\nsources:\n  ${URL_V1}: vendor/clicky.com\n  "${STORE_URL}": vendor/store\n`,
      '/other.sources.yaml': `sources:\n  ${URL_V1}: vendor/clicky-other\n  "${STORE_URL}": vendor/store\n`,
      '/app/🔌.yaml': `- ${URL_V1}\n`,
      '/app/🔌store.yaml': `source: ${STORE_URL}\n`,
      '/app/index.html': html('<clicky.com-script async/>'),
      '/vendor/store/index.html': '<p>the store, from the sources file</p>\n',
    });
    app = join(base, 'app');
    writeApp({ '/🎛.yaml': 'name: clicky.com\ntype: connector\n', '/<>/script.yaml': `script:\n  src: ${SCRIPT_SRC}\n` }, join(base, 'vendor/clicky.com'));
    writeApp({ '/🎛.yaml': 'name: clicky.com\ntype: connector\n', '/<>/script.yaml': `script:\n  src: ${OTHER_SRC}\n` }, join(base, 'vendor/clicky-other'));
  });
  after(() => rmSync(base, { recursive: true, force: true }));

  async function served(args: string[], env: Record<string, string>, use: (port: number) => Promise<void>): Promise<void> {
    const child = spawn(process.execPath, [BIN, 'serve', app, '--port', '0', '--log', 'off', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LANEWAY_SOURCES: '', ...env } });
    let out = '';
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    const port = await new Promise<number>((resolvePort, reject) => {
      child.stdout.on('data', (d) => {
        out += d;
        const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
        if (m) resolvePort(Number(m[1]));
      });
      child.once('exit', (code) => reject(new Error(`exited ${code}: ${out}${err}`)));
    });
    try {
      await use(port);
    } finally {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
  }

  it('serve reads ../laneway.sources.yaml: the connector tag expands and the nested site named by git URL is served', async () => {
    await served([], {}, async (port) => {
      assert.match((await rawRequest(port, 'GET', '/')).text, new RegExp(`<script src="${SCRIPT_SRC}" async></script>`));
      assert.match((await rawRequest(port, 'GET', '/store/')).text, /the store, from the sources file/);
    });
  });

  it('LANEWAY_SOURCES beats the file, and a --source flag beats both', async () => {
    const other = join(base, 'vendor/clicky-other');
    await served([], { LANEWAY_SOURCES: `${URL_V1}=${other}` }, async (port) => {
      assert.match((await rawRequest(port, 'GET', '/')).text, new RegExp(`<script src="${OTHER_SRC}" async></script>`));
      assert.equal((await rawRequest(port, 'GET', '/store/')).status, 200, 'the file still maps what the variable does not');
    });
    await served(['--source', `${URL_V1}=${join(base, 'vendor/clicky.com')}`], { LANEWAY_SOURCES: `${URL_V1}=${other}` }, async (port) => {
      assert.match((await rawRequest(port, 'GET', '/')).text, new RegExp(`<script src="${SCRIPT_SRC}" async></script>`));
    });
  });

  it('--sources FILE reads another file instead (relative to the working directory); a missing one is a usage error', async () => {
    await served(['--sources', join(base, 'other.sources.yaml')], {}, async (port) => {
      assert.match((await rawRequest(port, 'GET', '/')).text, new RegExp(`<script src="${OTHER_SRC}" async></script>`));
    });
    const r = spawnSync(process.execPath, [BIN, 'check', app, '--sources', 'other.sources.yaml'], { encoding: 'utf8', cwd: base, env: { ...process.env, LANEWAY_SOURCES: '' } });
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.equal(r.stdout, '0 errors, 0 warnings\n');
    const missing = run(['check', app, '--sources', join(base, 'nope.yaml')]);
    assert.equal(missing.status, 2);
    assert.equal(missing.stderr, `laneway check: --sources ${join(base, 'nope.yaml')}: no such file\n`);
  });

  it('a malformed file: check lists it with the app (file:line:column, LW_CONTENT_SOURCES_FILE), exit 1; serve refuses to start', () => {
    const dir = writeApp({
      '/laneway.sources.yaml': `sources:\n  ${URL_V1}: vendor/missing\n`,
      '/app/🔌.yaml': `- ${URL_V1}\n`,
      '/app/index.html': html('<clicky.com-script async/>'),
    });
    try {
      const r = run(['check', join(dir, 'app')]);
      assert.equal(r.status, 1);
      const lines = r.stdout.trim().split('\n');
      assert.equal(lines[0], `../laneway.sources.yaml:2:${3 + URL_V1.length + 2}: the directory vendor/missing of ${URL_V1} (${join(dir, 'vendor/missing')}) does not exist: give a local copy of that repository, relative to the file's directory [LW_CONTENT_SOURCES_FILE]`);
      assert.match(lines[1]!, /^index\.html:4:1: warning: <clicky\.com-script\/>: the connector clicky\.com is not available/);
      assert.equal(lines[2], '1 error, 1 warning');
      const s = run(['serve', join(dir, 'app'), '--port', '0']);
      assert.equal(s.status, 1);
      assert.match(s.stderr, /^\.\.\/laneway\.sources\.yaml:2:\d+: the directory vendor\/missing .*\[LW_CONTENT_SOURCES_FILE\]\n1 error, 0 warnings\n$/);
      assert.doesNotMatch(s.stdout, /listening/);
      writeFileSync(join(dir, 'laneway.sources.yaml'), 'sources:\n  - oops\n  bad: [\n');
      assert.match(run(['routes', join(dir, 'app')]).stderr, /^\.\.\/laneway\.sources\.yaml:\d+:\d+: invalid YAML: .*\[LW_CONTENT_SOURCES_FILE\]/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('in headless Chromium', { skip }, () => {
  // The connector's script is served by a second local server (another origin): it runs only if
  // its URL is in script-src and its integrity matches, and its request only if connect-src allows it.
  const SCRIPT = "document.documentElement.dataset.site = document.currentScript.dataset.siteId;\nfetch(document.currentScript.src.replace('clicky.js', 'ping')).then((r) => r.text()).then((t) => { document.documentElement.dataset.ping = t; });\n";
  let cdn: Server;
  let conn: string;
  let s: Served;
  let browser: Browser;
  before(async () => {
    cdn = createHttpServer((req, res) => {
      res.setHeader('Access-Control-Allow-Origin', '*');
      if (req.url === '/clicky.js') res.setHeader('Content-Type', 'text/javascript').end(SCRIPT);
      else res.setHeader('Content-Type', 'text/plain').end('pong');
    });
    await new Promise<void>((r) => cdn.listen(0, '127.0.0.1', r));
    const origin = `http://127.0.0.1:${(cdn.address() as { port: number }).port}`;
    const integrity = 'sha384-' + createHash('sha384').update(SCRIPT).digest('base64');
    conn = clickyConnector(`script:\n  src: ${origin}/clicky.js\n  integrity: ${integrity}\n  async: true\ncsp:\n  connect-src: ${origin}\n`);
    s = await serve({ '/🔌.yaml': `- ${URL_V1}\n`, '/index.html': html('<clicky.com-script data-site-id="101"/>') }, { sources: { [URL_V1]: conn } });
    browser = await launch();
  });
  after(async () => {
    await browser?.close();
    await s?.close();
    await new Promise((r) => cdn.close(r));
    rmSync(conn, { recursive: true, force: true });
  });

  it('the expanded script loads, runs and reaches its origin, with zero policy violations', async () => {
    const page = await violationRecordingPage(browser);
    await page.goto(s.url + '/');
    await page.waitForFunction(() => (globalThis as unknown as { document: { documentElement: { dataset: Record<string, string> } } }).document.documentElement.dataset.ping === 'pong', undefined, { timeout: 5000 });
    const state = await page.evaluate(() => {
      const w = globalThis as unknown as { __violations: string[]; document: { documentElement: { dataset: Record<string, string> } } };
      return { site: w.document.documentElement.dataset.site, violations: w.__violations };
    });
    assert.deepEqual(state, { site: '101', violations: [] });
  });
});
