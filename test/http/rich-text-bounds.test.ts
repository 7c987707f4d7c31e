/**
 * Rich text from a visitor never holds the server (docs/security.md "Bounds on what a visitor can
 * send and store"): an `html` value is refused before the sanitiser reads it when it has more
 * than twice its field's `max` in bytes or nests elements more than 64 deep, and
 * `Model.markdown(text)` takes at most 20,000 characters. Each hostile body below (about 1 MB,
 * through a form, through a script's write of a record from a JSON body, through the Markdown
 * renderer) is answered with a 4xx naming the limit, while a second request sent meanwhile to
 * another endpoint is answered promptly. Before these bounds, the sanitiser ran first: 120,000
 * nested `<div>` held every request for seconds, 250,000 `<li>` for tens of seconds.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { rawRequest, writeApp, type Response } from '../helpers.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const HELPERS = new URL('../helpers.ts', import.meta.url).href;

/** Generous: a refused body is answered in milliseconds; the sanitiser held the server for seconds. */
const PROMPT_MS = 1000;

const MANY = Array.from({ length: 20 }, (_, i) => `h${i}`);

const APP = {
  '📦/🌐Post.yaml': 'title:\n  type: string\n  max: 80\nbody?: html\nlong?:\n  type: html\n  max: 20000\nnotes?: markdown\n',
  'index.html':
    "<!--TEMPLATE mustache-->\n{{% import {Post} from '📦' }}\n{{#Post.Form.view as form}}<form action=\"/posts?_form={{form.id}}\" method=\"POST\"></form>{{/Post.Form.view}}\n",
  'posts/POST.js': "import {Post} from '📦';\nconst post = new Post();\nPost.Form.submit(post);\n({id: post.id});\n",
  'api/📮write.js': "import {Post} from '📦';\nimport {title, body} from 'form';\nconst post = new Post();\npost.title = title;\npost.body = body;\n({id: post.id});\n",
  'api/📮render.js':
    "import {Post} from '📦';\nimport {text} from 'form';\nlet out;\ntry {\n  out = {html: String(Post.markdown(text)).length};\n} catch (e) {\n  out = {error: e.message};\n}\nout;\n",
  'api/🖥ping.js': '({pong: true})\n',
  // 20 html fields (the most a model has) of max 20000: each may be sent 40,000 bytes, and cleaning each takes tens of milliseconds.
  '📦/🌐Page.yaml': MANY.map((n) => `${n}?:\n  type: html\n  max: 20000\n`).join(''),
  '📤/⏳Many.yaml': `🎛: {requirePreviousState: false}\n📦.Page: [${MANY.join(', ')}]\n`,
  'api/📮many.js': "import {Page} from '📦';\nimport {Many} from '📤';\nconst page = new Page();\nMany.submit(page);\n({id: page.id});\n",
};

const BOUNDARY = 'laneway-bounds-3c9e';
function multipart(fields: Record<string, string>): Buffer {
  const parts = Object.entries(fields).map(([name, value]) => `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`);
  return Buffer.from(parts.join('') + `--${BOUNDARY}--\r\n`);
}

/**
 * The app served by a process of its own, so that a server held by its work cannot hold the
 * requests this process sends meanwhile (nor their clocks).
 */
function serveApart(dir: string): Promise<{ child: ChildProcess; port: number }> {
  const code = `import { serve } from ${JSON.stringify(HELPERS)};\nconst s = await serve(${JSON.stringify(dir)});\nprocess.stdout.write('port ' + s.port + '\\n');\n`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      const m = /port (\d+)\n/.exec(out);
      if (m) resolve({ child, port: Number(m[1]) });
    });
    child.once('exit', (status) => reject(new Error(`the server exited (${status}): ${out}`)));
  });
}

describe('rich text bounds', () => {
  let dir: string;
  let child: ChildProcess | undefined;
  let port = 0;
  const s = {
    get: (path: string, headers: Record<string, string> = {}) => rawRequest(port, 'GET', path, headers),
    request: (method: string, path: string, headers: Record<string, string>, body?: string | Buffer) => rawRequest(port, method, path, headers, body),
  };
  let cookie = '';
  let formId = '';
  before(async () => {
    dir = writeApp(APP);
    ({ child, port } = await serveApart(dir));
  });
  after(() => {
    child?.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A fresh form id of the test's visitor (a submission claims nothing when refused). */
  async function freshForm(): Promise<void> {
    const page = await s.get('/', cookie ? { cookie } : {});
    const sid = [page.headers['set-cookie'] ?? []].flat().find((c) => c.startsWith('sid='));
    if (sid) cookie = sid.split(';')[0]!;
    formId = /_form=([^"]+)"/.exec(page.text)![1]!;
  }

  /**
   * Sends `hostile` and, every 50 ms while it is not answered, a GET to another endpoint: each
   * GET must be answered within `boundMs`, and so must the hostile request.
   */
  async function whileServing(hostile: () => Promise<Response>, boundMs = PROMPT_MS): Promise<Response> {
    const t0 = performance.now();
    const waits: Array<Promise<number>> = [];
    const ping = (): void => {
      const sent = performance.now();
      waits.push(s.get('/api/ping', { accept: 'application/json' }).then((r) => (assert.equal(r.status, 200), performance.now() - sent)));
    };
    const timer = setInterval(ping, 50);
    let answer: Response;
    try {
      answer = await hostile();
    } finally {
      clearInterval(timer);
    }
    const elapsed = performance.now() - t0;
    ping();
    for (const ms of await Promise.all(waits)) assert.ok(ms < boundMs, `another request waited ${Math.round(ms)} ms`);
    assert.ok(elapsed < boundMs, `the hostile request took ${Math.round(elapsed)} ms`);
    return answer;
  }

  const postForm = (fields: Record<string, string>) => () =>
    s.request('POST', `/posts?_form=${formId}`, { cookie, accept: 'application/json', 'content-type': `multipart/form-data; boundary=${BOUNDARY}` }, multipart(fields));
  const postJson = (path: string, value: unknown) => () => s.request('POST', path, { accept: 'application/json', 'content-type': 'application/json' }, JSON.stringify(value));

  const messages = (r: Response) => (JSON.parse(r.text) as { messages: Array<{ field?: string; value: string }> }).messages;

  it('120,000 nested <div> in a form: 422 naming the byte limit, others served meanwhile', async () => {
    await freshForm();
    const r = await whileServing(postForm({ Post_title: 'x', Post_body: '<div>'.repeat(120_000) }));
    assert.equal(r.status, 422, r.text.slice(0, 300));
    assert.deepEqual(messages(r), [{ type: 'error', field: 'Post_body', value: 'Body must be at most 4000 bytes of HTML before it is cleaned (it has 600000)' }]);
  });

  it('900 KB of ordinary markup in a form, and 1 MB in a field of max 20000', async () => {
    await freshForm();
    const r = await whileServing(postForm({ Post_title: 'x', Post_body: '<p>x'.repeat(225_000) }));
    assert.equal(r.status, 422);
    assert.match(messages(r)[0]!.value, /^Body must be at most 4000 bytes of HTML before it is cleaned \(it has 900000\)$/);
    const big = await whileServing(postForm({ Post_title: 'x', Post_long: '<b>'.repeat(333_333) }));
    assert.equal(big.status, 422);
    assert.match(messages(big)[0]!.value, /^Long must be at most 40000 bytes of HTML before it is cleaned \(it has 999999\)$/);
  });

  it('nesting past 64 is refused before cleaning, within the byte limit', async () => {
    await freshForm();
    const r = await whileServing(postForm({ Post_title: 'x', Post_long: '<div>'.repeat(8000) }));
    assert.equal(r.status, 422);
    assert.deepEqual(messages(r), [{ type: 'error', field: 'Post_long', value: 'Long must not nest elements more than 64 deep' }]);
    // 64 levels are fine, and cleaned as before.
    await freshForm();
    const ok = await postForm({ Post_title: 'x', Post_long: `${'<div>'.repeat(64)}deep` })();
    assert.equal(ok.status, 200, ok.text);
  });

  it("a script's write of a record from a JSON body: 1 MB of <li> is refused, others served meanwhile", async () => {
    const r = await whileServing(postJson('/api/write', { title: 'x', body: '<li>'.repeat(250_000) }));
    assert.equal(r.status, 422, r.text.slice(0, 300));
    assert.match(r.text, /Body must be at most 4000 bytes of HTML before it is cleaned \(it has 1000000\)/);
    const fine = await postJson('/api/write', { title: 'x', body: '<p onclick="x">hi</p>' })();
    assert.equal(fine.status, 200, fine.text);
  });

  it('Model.markdown(text) refuses more than 20,000 characters before rendering, others served meanwhile', async () => {
    const r = await whileServing(postJson('/api/render', { text: '*a'.repeat(500_000) }));
    assert.equal(r.status, 200, r.text.slice(0, 300));
    assert.deepEqual(JSON.parse(r.text), { error: 'Post.markdown(text) renders at most 20000 characters; this text has more' });
    const fine = await postJson('/api/render', { text: '*a*'.repeat(6_000) })();
    assert.ok((JSON.parse(fine.text) as { html: number }).html > 0);
  });

  it('a form of many html fields within their limits is charged to the request budget: 503, others served meanwhile', async () => {
    // Each value is as costly as 40,000 bytes 63 elements deep can be.
    const value = '<b>'.repeat(63) + '<'.repeat(40_000 - 189);
    const r = await whileServing(() =>
      s.request('POST', '/api/many', { accept: 'application/json', 'content-type': `multipart/form-data; boundary=${BOUNDARY}` }, multipart(Object.fromEntries(MANY.map((n) => [`Page_${n}`, value])))),
      // The budget (100 ms of CPU) and loading the sanitiser: about 0.4 s on a quiet machine, 2.6 s before.
      2000,
    );
    assert.equal(r.status, 503, r.text.slice(0, 300)); // the CPU limit (LW_SCRIPT_CPU_LIMIT, in the log)
    const fine = await s.request('POST', '/api/many', { accept: 'application/json', 'content-type': `multipart/form-data; boundary=${BOUNDARY}` }, multipart({ Page_h0: '<p>one</p>', Page_h1: '<p>two</p>' }));
    assert.equal(fine.status, 200, fine.text);
  });

  it('a Markdown field checks its length first (1 MB: 422 at once)', async () => {
    await freshForm();
    const r = await whileServing(postForm({ Post_title: 'x', Post_notes: '*a'.repeat(500_000) }));
    assert.equal(r.status, 422);
    assert.deepEqual(messages(r), [{ type: 'error', field: 'Post_notes', value: 'Notes must be at most 2000 characters of Markdown (it has 1000000)' }]);
  });
});
