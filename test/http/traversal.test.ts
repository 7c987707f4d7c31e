/**
 * The traversal and privacy corpus (docs/routing.md "Private and non-public files", "Request paths").
 *
 * One app holds public pages beside many private and non-public files, each with a unique
 * `SECRET-<n>` marker; a secret also lies outside the app (reached by a symlink, and by `..`).
 * Every private target is requested through a systematic set of hostile spellings (double
 * encoding, overlong UTF-8, backslashes, mixed-case escapes, encoded slashes, NUL, dot segments,
 * `//`, trailing dots and spaces, VS16 and NFD forms, query strings, absolute-form targets …).
 *
 * For every request:
 * - the status is the one the path rules give (`expectedOf`): 400 when the path is refused
 *   (malformed escape, encoded `/` `\`, NUL, `.`/`..` or empty segment, backslash, not starting
 *   with `/`), else the public answer when the decoded path is a public URL (listed in PUBLIC),
 *   else 404;
 * - no body or header carries a secret marker;
 * - a 404 is byte-identical (body and headers, Date aside) to the 404 of a path that never
 *   existed at the same directory level, so nothing hints that a private file exists.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { loadApp } from '../../src/app/index.js';
import { normalizePath } from '../../src/shared/index.js';
import { rawRequest, serve, writeApp, type AppFiles, type Response, type Served } from '../helpers.js';

// ---------------------------------------------------------------------------------------------
// Fixture

const SECRET = /SECRET-\d+/;
let secretCount = 0;
/** A private file's content: a unique marker the responses must never show. */
const secret = (prefix = ''): string => `${prefix}SECRET-${++secretCount} do not serve\n`;

/** Public URLs of the fixture (decoded key → expected answer). */
const PUBLIC: Record<string, { status: number; marker?: string; location?: string }> = {
  '/': { status: 200, marker: 'PUBLIC-HOME' },
  '/about': { status: 200, marker: 'PUBLIC-ABOUT' },
  '/café': { status: 200, marker: 'PUBLIC-CAFE' },
  '/css/site.css': { status: 200, marker: 'PUBLIC-CSS' },
  '/pub/': { status: 200, marker: 'PUBLIC-PUB' },
  '/pub': { status: 308, location: '/pub/' },
  '/pub/page': { status: 200, marker: 'PUBLIC-PUB-PAGE' },
  '/a/x.css': { status: 200, marker: 'PUBLIC-AX' },
  '/.well-known/security.txt': { status: 200, marker: 'PUBLIC-WELL-KNOWN' },
  '/colors/red/': { status: 200, marker: 'PUBLIC-COLOR' },
  '/colors/blue/': { status: 200, marker: 'PUBLIC-COLOR' },
  '/colors/red': { status: 308, location: '/colors/red/' },
  '/colors/blue': { status: 308, location: '/colors/blue/' },
  '/shapes/circle': { status: 200, marker: 'PUBLIC-SHAPE' },
  '/shapes/square': { status: 200, marker: 'PUBLIC-SHAPE' },
  // Script endpoints run (their sources are comments: no completion value, 204); no variant decodes to these.
  '/api': { status: 204 },
  '/a/save': { status: 405 },
  '/a/show': { status: 204 },
};

const PUBLIC_FILES: AppFiles = {
  '/index.html': '<p>PUBLIC-HOME</p>\n',
  '/about.html': '<p>PUBLIC-ABOUT</p>\n',
  '/café.html': '<p>PUBLIC-CAFE</p>\n',
  '/css/site.css': 'body { color: black } /* PUBLIC-CSS */\n',
  '/pub/index.html': '<p>PUBLIC-PUB</p>\n',
  '/pub/page.html': '<p>PUBLIC-PUB-PAGE</p>\n',
  '/a/x.css': 'a { color: red } /* PUBLIC-AX */\n',
  // The nearest ⚡NotFound.html answers every 404 under /a; elsewhere the built-in page does.
  '/a/⚡NotFound.html': '<p>NOTFOUND-A</p>\n',
  '/.well-known/security.txt': 'Contact: mailto:security@example.test\nPUBLIC-WELL-KNOWN\n',
  '/colors/{c}/index.html': '<p>PUBLIC-COLOR</p>\n',
  '/shapes/{shape}.html': '<p>PUBLIC-SHAPE</p>\n',
  '/shapes/{shape}🔗.yaml': `${secret('# ')}values: [circle, square]\n`,
};

/**
 * Private and non-public files, by the URL path a client would try (what a public file of that
 * name would answer). Files written under a different name on disk (VS16, NFD) say so.
 */
interface Target {
  url: string;
  /** Name on disk when it differs from the URL (VS16 / NFD spellings). */
  disk?: string;
  content: string;
}

const TARGETS: Target[] = [
  { url: '/_private.html', content: secret('<p>') },
  { url: '/_dir/page.html', content: secret('<p>') },
  { url: '/_dir/index.html', content: secret('<p>') },
  { url: '/_dir/⚡NotFound.html', content: secret('<p>') },
  { url: '/_dir/sub/deep.html', content: secret('<p>') },
  { url: '/_café.html', disk: '/_cafe\u0301.html', content: secret('<p>') },
  { url: '/a/_x.css', content: secret('/* ') },
  { url: '/.env', content: secret('TOKEN=') },
  { url: '/.git/config', content: secret('[core] ') },
  { url: '/a/.htpasswd', content: secret('admin:') },
  { url: '/.well-known/.hidden', content: secret() },
  { url: '/.well-known/_x.txt', content: secret() },
  { url: '/node_modules/pkg/index.js', content: secret('// ') },
  { url: '/🎛.yaml', content: secret('# ') },
  { url: '/🎨.scss', content: secret('// ') },
  { url: '/👤.yaml', content: secret('# ') },
  { url: '/b/👤.yaml', disk: '/b/👤\uFE0F.yaml', content: secret('# ') },
  { url: '/🔌.yaml', content: secret('# ') },
  { url: '/🔌shop.yaml', content: secret('# ') },
  { url: '/a/📮save.js', content: secret('// ') },
  { url: '/a/📮save.yaml', content: secret('# ') },
  { url: '/a/🖥show.js', disk: '/a/🖥\uFE0Fshow.js', content: secret('// ') },
  { url: '/api/GET.js', content: secret('// ') },
  { url: '/api/GET.yaml', content: secret('# ') },
  { url: '/colors/red/🔗.yaml', disk: '/colors/{c}/🔗.yaml', content: `${secret('# ')}values: [red, blue]\n` },
  { url: '/colors/{c}/🔗.yaml', disk: '/colors/{c}/🔗.yaml', content: '' },
  { url: '/colors/red/_part.html', disk: '/colors/{c}/_part.html', content: secret('<p>') },
  { url: '/shapes/{shape}🔗.yaml', disk: '/shapes/{shape}🔗.yaml', content: '' },
  { url: '/📤/Thing.js', content: `${secret('// ')}const Thing = 1\nexport {Thing}\n` },
  { url: '/📤/Frag.html', content: `<!--TEMPLATE mustache-->\n${secret('<p>')}` },
  { url: '/📤/⚡NotFound.html', content: `<!--TEMPLATE mustache-->\n${secret('<p>')}` },
  { url: '/a/📤/x.js', content: `${secret('// ')}const X = 1\nexport {X}\n` },
  { url: '/b/📤/Vs.js', disk: '/b/📤\uFE0F/Vs.js', content: `${secret('// ')}const Vs = 1\nexport {Vs}\n` },
  { url: '/📦/🌐Task.yaml', content: secret('# ') },
  { url: '/🗄/📄Doc.yaml', content: secret('# ') },
  { url: '/📡/Note.yaml', content: `${secret('# ')}🎛:\n  default: owner@example.test\nbody: string\n` },
  { url: '/📡/Note/email.txt', content: secret('') },
  // Outside the app: a symlink to a file, a symlink to a directory, a symlink to the parent.
  { url: '/outside.txt', content: '' },
  { url: '/outdir/secret.txt', content: '' },
  { url: '/up/outer-secret.txt', content: '' },
];

let outer = '';
let server: Served;

before(async () => {
  outer = realpathSync(mkdtempSync(join(tmpdir(), 'laneway-traversal-')));
  writeFileSync(join(outer, 'outer-secret.txt'), secret());
  writeFileSync(join(outer, 'outside-secret.txt'), secret());
  mkdirSync(join(outer, 'outside-dir'));
  writeFileSync(join(outer, 'outside-dir', 'secret.txt'), secret());
  writeFileSync(join(outer, '_private.html'), secret());
  const files: AppFiles = { ...PUBLIC_FILES };
  for (const t of TARGETS) if (t.content) files[t.disk ?? t.url] = t.content;
  files['/outside.txt'] = { symlink: join(outer, 'outside-secret.txt') };
  files['/outdir'] = { symlink: join(outer, 'outside-dir') };
  files['/up'] = { symlink: '..' };
  const dir = writeApp(files, join(outer, 'app'));
  server = await serve(dir);
});

after(async () => {
  await server?.close();
  if (outer) rmSync(outer, { recursive: true, force: true });
});

// ---------------------------------------------------------------------------------------------
// The path rules (docs/routing.md "Request paths"): decode each segment exactly once; refuse encoded
// `/` `\`, NUL, `.`/`..` and empty segments, malformed escapes (overlong UTF-8 included).

type Expected = { status: 400 } | { status: number; key: string };

function normalizeName(name: string): string {
  return name.normalize('NFC').replace(/\uFE0F/g, '');
}

/** The decoded key of a request target, or 400. */
function expectedOf(target: string): Expected {
  const q = target.indexOf('?');
  const path = q === -1 ? target : target.slice(0, q);
  // Node's own parser refuses bytes outside printable ASCII in the target (HPE_INVALID_URL).
  if (!path.startsWith('/') || path.includes('\\') || /[^\x21-\x7e]/.test(target)) return { status: 400 };
  const parts = path.slice(1).split('/');
  let slash = false;
  if (parts.length > 1 && parts[parts.length - 1] === '') {
    parts.pop();
    slash = true;
  }
  if (parts.length === 1 && parts[0] === '') parts.pop();
  const segments: string[] = [];
  for (const part of parts) {
    if (part === '') return { status: 400 };
    let decoded: string;
    try {
      decoded = decodeURIComponent(part);
    } catch {
      return { status: 400 };
    }
    if (/[/\\\0]/.test(decoded)) return { status: 400 };
    const name = normalizeName(decoded);
    if (name === '' || name === '.' || name === '..') return { status: 400 };
    segments.push(name);
  }
  const key = '/' + segments.join('/') + (slash && segments.length ? '/' : '');
  return { status: PUBLIC[key]?.status ?? 404, key };
}

// ---------------------------------------------------------------------------------------------
// Hostile spellings. Each takes the URL path of a target (decoded, NFC) and returns raw request
// targets; `{port}` is replaced by the server's port.

const EMOJI = /(🎛|🎨|👤|🔌|📮|🔗|📤|📦|🗄|📡|🌐|📄|🖥|⚡)/gu;
const HAS_EMOJI = /(🎛|🎨|👤|🔌|📮|🔗|📤|📦|🗄|📡|🌐|📄|🖥|⚡)/u;

const pctAll = (s: string, lower = false): string =>
  [...Buffer.from(s, 'utf8')].map((b) => '%' + b.toString(16).padStart(2, '0')[lower ? 'toLowerCase' : 'toUpperCase']()).join('');
/** encodeURIComponent per segment, keeping the `/` separators. */
const enc = (path: string): string => path.split('/').map(encodeURIComponent).join('/');
const segsOf = (path: string): string[] => path.split('/').slice(1);
const join_ = (segs: string[], sep: string): string => '/' + segs.join(sep);
/** Alternates the case of hex digits in escapes: %2e → %2E, %c3 → %C3 … */
const mixCase = (s: string): string => {
  let i = 0;
  return s.replace(/%([0-9a-fA-F]{2})/g, (_m, h: string) => '%' + (i++ % 2 ? h.toLowerCase() : h.toUpperCase()));
};

/** Ways of climbing from /pub back to the root, with how the server must read them. */
const DOTDOTS = ['..', '%2e%2e', '%2E%2E', '%2E%2e', '.%2e', '%2e.', '%252e%252e', '%c0%ae%c0%ae', '%C0%AE%C0%AE', '%e0%80%ae%e0%80%ae', '%f0%80%80%ae%f0%80%80%ae', '%c0%2e', '..%00', '..%20', '..;', '...', '%u002e%u002e', '%2e%2', '%EF%BC%8E%EF%BC%8E', '.%EF%B8%8F.', '%2e%2e%EF%B8%8F'];
/** Path separators and their disguises. */
const SEPARATORS = ['/', '%2f', '%2F', '\\', '%5c', '%5C', '%252f', '%255c', '%c0%af', '%C0%AF', '%c1%9c', '%e0%80%af', '%EF%BC%8F', '%E2%88%95'];

const ENCODINGS: Record<string, (url: string) => string[]> = {
  plain: (u) => [enc(u)],
  'html-route': (u) => (u.endsWith('.html') ? [enc(u.slice(0, -5)), enc(u.slice(0, -5)) + '/'] : []),
  'dir-index': (u) => (u.endsWith('/index.html') ? [enc(u.slice(0, -10)), enc(u.slice(0, -11))] : []),
  'percent-all-upper': (u) => ['/' + segsOf(u).map((s) => pctAll(s)).join('/')],
  'percent-all-lower': (u) => ['/' + segsOf(u).map((s) => pctAll(s, true)).join('/')],
  'percent-mixed-case': (u) => ['/' + segsOf(u).map((s) => mixCase(pctAll(s, true))).join('/')],
  'underscore-%5F': (u) => (u.includes('_') ? [enc(u).replace(/_/g, '%5F'), enc(u).replace(/_/g, '%5f')] : []),
  'underscore-%255F': (u) => (u.includes('_') ? [enc(u).replace(/_/g, '%255F'), enc(u).replace(/_/g, '%255f')] : []),
  'dot-%2e': (u) => (u.includes('.') ? [enc(u).replace(/\./g, '%2e'), enc(u).replace(/\./g, '%2E')] : []),
  'dot-%252e': (u) => (u.includes('.') ? [enc(u).replace(/\./g, '%252e')] : []),
  'double-encoded-all': (u) => ['/' + segsOf(u).map((s) => pctAll(s).replace(/%/g, '%25')).join('/')],
  'overlong-dot': (u) => (u.includes('.') ? [enc(u).replace(/\./g, '%c0%ae'), enc(u).replace(/\./g, '%e0%80%ae')] : []),
  'overlong-underscore': (u) => (u.includes('_') ? [enc(u).replace(/_/g, '%c1%9f')] : []),
  'climb-from-pub': (u) => DOTDOTS.map((d) => '/pub/' + d + enc(u)),
  'climb-twice': (u) => ['/pub/a/../../' + enc(u).slice(1), '/pub/%2e%2e/%2e%2e/pub' + enc(u), '/pub/..%2f..%2f' + enc(u).slice(1)],
  'dot-segment': (u) => ['/.' + enc(u), '/%2e' + enc(u), '/%2E' + enc(u), enc(u).replace(/\/([^/]*)$/, '/./$1'), '/.%EF%B8%8F' + enc(u)],
  'separator-swap': (u) => {
    const segs = segsOf(u).map(encodeURIComponent);
    return segs.length > 1 ? SEPARATORS.slice(1).map((sep) => join_(segs, sep)) : SEPARATORS.slice(1).map((sep) => '/' + sep + segs[0]);
  },
  'double-slash': (u) => ['/' + enc(u), '//' + enc(u), '///' + enc(u), enc(u).replace(/\/([^/]*)$/, '//$1'), enc(u) + '//'],
  'trailing-junk': (u) => ['.', '/', '%20', '%2e', '%00', '%00.css', '%2500', '%0a', '%0d%0a', ';x=1', '::$DATA', '~', '%09', '%EF%B8%8F', '%', '%zz', '%u0000'].map((t) => enc(u) + t),
  'trailing-dot-route': (u) => (u.endsWith('.html') ? [enc(u.slice(0, -5)) + '.', enc(u.slice(0, -5)) + '%20'] : []),
  'ascii-case': (u) => (u.toUpperCase() !== u ? [enc(u.toUpperCase())] : []),
  'query-and-fragment': (u) => [enc(u) + '?x=../../_private.html', enc(u) + '?..%2f..%2f', enc(u) + '#../..', '/about?' + enc(u), '/about?f=..' + enc(u), '/pub/page?../..' + enc(u)],
  'absolute-form': (u) => ['http://127.0.0.1:{port}' + enc(u), 'http://127.0.0.1:{port}/pub/..' + enc(u), '*', 'pub/..' + enc(u), enc(u).slice(1) || '-'],
  vs16: (u) => (HAS_EMOJI.test(u) ? [enc(u.replace(EMOJI, '$1\uFE0F')), u.replace(EMOJI, '$1%EF%B8%8F').split('/').map((s) => s.replace(/[^\x21-\x7e]/gu, (c) => encodeURIComponent(c))).join('/')] : []),
  'vs16-prefix': (u) => ['/' + segsOf(u).map((s) => '%EF%B8%8F' + encodeURIComponent(s)).join('/')],
  nfd: (u) => {
    const d = u.normalize('NFD');
    const kd = u.normalize('NFKD');
    return [d !== u ? enc(d) : '', kd !== u && kd !== d ? enc(kd) : ''].filter(Boolean);
  },
  /** Raw bytes ≥ 0x80 (the HTTP client sends U+0080–U+00FF as single bytes). */
  'latin1-raw': (u) => (/[\x80-\xff]/.test(u) && !/[^\x00-\xff]/.test(u) ? [u] : []),
};

interface Variant {
  category: string;
  method: string;
  target: string;
  headers?: Record<string, string>;
}

/** The ways out of the app directory, by depth × dot-dot spelling × separator. */
function escapeVariants(): Variant[] {
  const out: Variant[] = [];
  for (const depth of [1, 2, 3]) {
    for (const dd of DOTDOTS) {
      for (const sep of SEPARATORS) {
        out.push({ category: 'escape-app-dir', method: 'GET', target: '/' + (dd + sep).repeat(depth) + 'outer-secret.txt' });
      }
    }
  }
  for (const t of ['/../_private.html', '/pub/../../_private.html', '/up/../outer-secret.txt', '/outdir/../outer-secret.txt', '/%2e%2e/outside-dir/secret.txt', '/up/outside-dir/secret.txt', '/outdir/%2e%2e/outer-secret.txt']) {
    out.push({ category: 'escape-app-dir', method: 'GET', target: t });
  }
  return out;
}

function buildVariants(): Variant[] {
  const seen = new Set<string>();
  const out: Variant[] = [];
  const add = (v: Variant): void => {
    const id = `${v.method} ${v.target} ${JSON.stringify(v.headers ?? {})}`;
    if (seen.has(id)) return;
    seen.add(id);
    out.push(v);
  };
  const urls = [...TARGETS.map((t) => t.url), ...Object.keys(PUBLIC).filter((k) => !['/api', '/a/save', '/a/show'].includes(k))];
  for (const url of urls) {
    for (const [category, make] of Object.entries(ENCODINGS)) {
      for (const target of make(url)) add({ category, method: 'GET', target });
    }
  }
  for (const v of escapeVariants()) add(v);
  // `.well-known` edges: only the directory itself, at the root, is public.
  for (const target of ['/.well-known', '/.well-known/', '/.well-known/../.env', '/.well-known/%2e%2e/.env', '/.well-known%2fsecurity.txt', '/.Well-Known/security.txt', '/%2ewell-known/security.txt', '/%2Ewell-known/.hidden', '/.well-known/./security.txt', '/a/.well-known/security.txt', '/.well-known/security.txt/', '/.well-known/security.txt.', '/.well-known/security.txt%00', '/.well-known//security.txt', '/.well-known%EF%B8%8F/security.txt']) {
    add({ category: 'well-known', method: 'GET', target });
  }
  // Other methods and a JSON client on the plain spelling of every target.
  for (const t of TARGETS) {
    for (const method of ['HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS']) add({ category: 'other-method', method, target: enc(t.url) });
    add({ category: 'accept-json', method: 'GET', target: enc(t.url), headers: { accept: 'application/json' } });
    add({ category: 'accept-encoding', method: 'GET', target: enc(t.url), headers: { 'accept-encoding': 'gzip, br' } });
  }
  return out;
}

const VARIANTS = buildVariants();
const DISTINCT_TARGETS = new Set(VARIANTS.map((v) => v.target)).size;

// ---------------------------------------------------------------------------------------------
// Checking

function decodedSegments(target: string): { segments: string[]; slash: boolean } {
  const e = expectedOf(target);
  if (!('key' in e)) throw new Error('no key for ' + target);
  const slash = e.key.length > 1 && e.key.endsWith('/');
  return { segments: e.key.split('/').slice(1, slash ? -1 : undefined).filter((s) => s !== ''), slash };
}

/** The request of a never-existing file at the same directory level as `target`. */
function controlOf(target: string): string {
  const { segments, slash } = decodedSegments(target);
  segments[segments.length - 1] = 'never-existed-zz';
  return '/' + segments.map(encodeURIComponent).join('/') + (slash ? '/' : '');
}

const IGNORED_HEADERS = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding', 'x-request-id']);
function comparableHeaders(res: Response): Record<string, unknown> {
  const headers = Object.fromEntries(Object.entries(res.headers).filter(([k]) => !IGNORED_HEADERS.has(k)).sort(([a], [b]) => (a < b ? -1 : 1)));
  // A JSON error names its request id in the body (docs/errors.md "Error answers"): its length aside.
  const id = String(res.headers['x-request-id'] ?? '');
  if (headers['content-length'] !== undefined && id && res.text.includes(id)) headers['content-length'] = `${Number(headers['content-length']) - id.length}+id`;
  return headers;
}

/** The body with its request id (JSON error answers name it) replaced by a placeholder. */
function comparableBody(res: Response): string {
  const id = String(res.headers['x-request-id'] ?? '');
  return id ? res.body.toString('latin1').replaceAll(id, '<id>') : res.body.toString('latin1');
}

const controls = new Map<string, Response>();
async function control(method: string, path: string, headers: Record<string, string> | undefined): Promise<Response> {
  const id = `${method} ${path} ${JSON.stringify(headers ?? {})}`;
  let res = controls.get(id);
  if (!res) {
    res = await rawRequest(server.port, method, path, headers);
    assert.equal(res.status, 404, `control ${id} must be a 404`);
    controls.set(id, res);
  }
  return res;
}

/** Sends one variant and returns what is wrong with the answer ('' when nothing). */
async function check(v: Variant): Promise<string> {
  const target = v.target.replace('{port}', String(server.port));
  let res: Response;
  try {
    res = await rawRequest(server.port, v.method, target, v.headers);
  } catch (err) {
    return `request failed: ${(err as Error).message}`;
  }
  const where = `${v.method} ${target}${v.headers ? ' ' + JSON.stringify(v.headers) : ''} [${v.category}] → ${res.status}`;
  const encoding = res.headers['content-encoding'];
  const text = encoding === 'gzip' ? gunzipSync(res.body).toString() : encoding === 'br' ? brotliDecompressSync(res.body).toString() : res.text;
  if (SECRET.test(text) || SECRET.test(JSON.stringify(res.headers))) return `${where}: SECRET LEAKED: ${text.slice(0, 200)}`;
  const expected = expectedOf(target);
  if (!('key' in expected)) {
    if (res.status !== 400) return `${where}: expected 400`;
    return '';
  }
  const pub = PUBLIC[expected.key];
  if (pub && (v.method === 'GET' || v.method === 'HEAD')) {
    if (res.status !== pub.status) return `${where}: expected ${pub.status} (public ${expected.key})`;
    if (pub.marker && v.method === 'GET' && !res.text.includes(pub.marker)) return `${where}: body lacks ${pub.marker}`;
    if (pub.location && !String(res.headers.location).startsWith(pub.location)) return `${where}: Location ${String(res.headers.location)}, expected ${pub.location}`;
    return '';
  }
  if (pub) return res.status === 404 ? `${where}: a public URL answered 404 to ${v.method}` : '';
  if (res.status !== 404) return `${where}: expected 404 (${expected.key} is not public)`;
  const ctl = await control(v.method, controlOf(target), v.headers);
  if (comparableBody(res) !== comparableBody(ctl)) return `${where}: 404 body differs from the never-existed control ${controlOf(target)}`;
  assert.deepEqual(comparableHeaders(res), comparableHeaders(ctl), `${where}: 404 headers differ from the control`);
  return '';
}

async function runAll(variants: Variant[]): Promise<string[]> {
  const problems: string[] = [];
  const queue = [...variants];
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let v = queue.shift(); v; v = queue.shift()) {
        const problem = await check(v);
        if (problem) problems.push(problem);
      }
    }),
  );
  return problems;
}

// ---------------------------------------------------------------------------------------------
// Tests

test(`the corpus holds at least 100 distinct hostile request targets (${DISTINCT_TARGETS}), covering every category`, () => {
  assert.ok(DISTINCT_TARGETS >= 100, `only ${DISTINCT_TARGETS} distinct request targets`);
  const categories = new Set(VARIANTS.map((v) => v.category));
  for (const c of [...Object.keys(ENCODINGS), 'escape-app-dir', 'well-known', 'other-method', 'accept-json']) assert.ok(categories.has(c), `no variant for ${c}`);
  const all = VARIANTS.map((v) => v.target).join('\n');
  for (const needle of ['%252e%252e', '%255F', '%c0%ae', '%e0%80%ae', '%c0%af', '\\', '%5c', '%5C', '%2E%2e', '%5F', '%2f', '%2F', '%00', '/../', '/./', '//', '///', '.html.', '/about.', '%20', '%EF%B8%8F', 'cafe%CC%81', '?x=..', '#..', 'http://']) {
    assert.ok(all.includes(needle), `no variant contains ${JSON.stringify(needle)}`);
  }
});

test('the fixture is not vacuous: every private file is loaded and hidden, the skipped ones are absent', () => {
  const files = new Map(loadApp(server.dir).files.map((f) => [f.path, f]));
  const absent = ['/.git/config', '/node_modules/pkg/index.js', '/outside.txt', '/outdir/secret.txt', '/up/outer-secret.txt'];
  for (const t of TARGETS) {
    const path = normalizePath(t.disk ?? t.url);
    if (absent.includes(t.url)) assert.equal(files.get(path), undefined, `${path} must not be loaded`);
    // Script endpoints are routed, but as scripts: their source is never a static file.
    else if (/(GET|📮|🖥)\w*\.js$/u.test(path) && !path.includes('📤')) assert.equal(files.get(path)?.kind, 'script', path);
    else assert.equal(files.get(path)?.hidden, true, `${path} must be loaded and hidden`);
  }
});

test('the fixture serves its public files, and the rules agree with it', async () => {
  for (const [key, want] of Object.entries(PUBLIC)) {
    if (want.status >= 405) continue;
    const res = await server.get(enc(key));
    assert.equal(res.status, want.status, key);
    if (want.marker) assert.ok(res.text.includes(want.marker), key);
  }
  const notFound = await server.get('/a/never-existed-zz');
  assert.ok(notFound.text.includes('NOTFOUND-A'), 'the 404 under /a is /a/⚡NotFound.html');
  const rootNotFound = await server.get('/never-existed-zz');
  assert.ok(!rootNotFound.text.includes('NOTFOUND-A'));
});

test(`every hostile request answers 400 or 404 (or its public file), never a secret, 404s identical to a missing file (${VARIANTS.length} requests)`, async () => {
  const problems = await runAll(VARIANTS);
  assert.deepEqual(problems, [], `${problems.length} of ${VARIANTS.length} requests went wrong:\n${problems.join('\n')}`);
});

/** Sends bytes the HTTP client would refuse to send (raw UTF-8, spaces, tabs, bare names). */
function socketRequest(port: number, requestLine: Buffer): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('connect', () => socket.end(Buffer.concat([requestLine, Buffer.from('\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n')])));
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      resolve({ status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1] ?? 0), text });
    });
  });
}

test('raw bytes on the request line never reach a secret', async () => {
  const lines: Array<[string | Buffer, number[]]> = [
    [Buffer.concat([Buffer.from('GET /'), Buffer.from('🎛.yaml'), Buffer.from(' HTTP/1.1')]), [400]],
    [Buffer.concat([Buffer.from('GET /'), Buffer.from('📤/Thing.js'), Buffer.from(' HTTP/1.1')]), [400]],
    [Buffer.concat([Buffer.from('GET /_caf'), Buffer.from('é', 'utf8'), Buffer.from('.html HTTP/1.1')]), [400]],
    ['GET /_private.html HTTP/1.0', [404]],
    ['GET /_private .html HTTP/1.1', [400]],
    ['GET /_private.html\t HTTP/1.1', [400, 404]],
    ['GET _private.html HTTP/1.1', [400]],
    ['GET ../_private.html HTTP/1.1', [400]],
    ['GET /pub/../_private.html HTTP/1.1', [400]],
    ['GET /_private.html\0 HTTP/1.1', [400]],
    ['GET http://127.0.0.1/_private.html HTTP/1.1', [400]],
    ['GET //127.0.0.1/_private.html HTTP/1.1', [400]],
    ['GET /%2e%2e/outer-secret.txt HTTP/1.1', [400]],
    ['GET /..\\outer-secret.txt HTTP/1.1', [400]],
  ];
  const problems: string[] = [];
  for (const [line, allowed] of lines) {
    const buf = typeof line === 'string' ? Buffer.from(line, 'latin1') : line;
    const res = await socketRequest(server.port, buf);
    const shown = JSON.stringify(buf.toString('latin1'));
    if (SECRET.test(res.text)) problems.push(`${shown} → ${res.status}: SECRET LEAKED`);
    else if (!allowed.includes(res.status)) problems.push(`${shown} → ${res.status}, expected ${allowed.join(' or ')}`);
  }
  assert.deepEqual(problems, []);
});

test('the server still answers normally after the corpus', async () => {
  const res = await server.get('/about');
  assert.equal(res.status, 200);
  assert.ok(res.text.includes('PUBLIC-ABOUT'));
  const css = await server.get('/css/site.css');
  assert.equal(css.status, 200);
  assert.equal(css.headers['content-type'], 'text/css; charset=utf-8');
});

test('a symlink inside the app does not publish a private file or directory, nor hide it', async () => {
  // docs/routing.md "Private and non-public files": a "_" file is never publicly reachable. Links
  // that stay inside the app are followed, so the link must not become a public alias of the
  // private target, and the private directory must stay loaded (partials and layouts are read from
  // it).
  const linked = await serve({
    '/index.html': '<p>PUBLIC-HOME</p>\n',
    '/_partials/nav.html': '<p>SECRET-LINKED-1</p>\n',
    '/_private.html': '<p>SECRET-LINKED-2</p>\n',
    // "Alias" sorts before "_partials" (0x41 < 0x5F), "zz" after it: both orders are covered.
    '/Alias': { symlink: '_partials' },
    '/zz': { symlink: '_partials' },
    '/pub/alias.html': { symlink: '../_private.html' },
  });
  try {
    const problems: string[] = [];
    for (const path of ['/Alias/nav', '/zz/nav', '/pub/alias', '/Alias/nav.html', '/pub/alias.html']) {
      const res = await linked.get(path);
      if (res.status !== 404 || SECRET.test(res.text)) problems.push(`GET ${path} → ${res.status} ${JSON.stringify(res.text.slice(0, 60))}`);
    }
    const files = loadApp(linked.dir).files;
    if (!files.some((f) => f.path === '/_partials/nav.html' && f.hidden)) {
      problems.push(`/_partials/nav.html is not loaded; loaded: ${files.map((f) => f.path).join(', ')}`);
    }
    assert.deepEqual(problems, []);
  } finally {
    await linked.close();
  }
});
