/**
 * `laneway dev`, run as users run it: bin/laneway in a child process, driven over HTTP and over
 * its event stream (/__/dev/events). Edits are made the ways editors make them: in place, by
 * renaming a temporary file over the original, in bursts, in new directories.
 *
 * Nothing here measures time: every wait is for an answer or an event, with a generous limit.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest, type ClientRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { rawRequest } from '../helpers.js';
import { BIN, startLaneway, type RunningLaneway } from '../support/laneway.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/dev-app', import.meta.url));
/** The longest wait for anything (an event, a line of output): generous, for slow machines. */
const PATIENCE_MS = 30_000;

/** A fresh copy of the fixture app, to edit. */
function copyFixture(): string {
  const dir = join(mkdtempSync(join(tmpdir(), 'laneway-dev-')), 'app');
  cpSync(FIXTURE, dir, { recursive: true });
  return dir;
}

type Running = RunningLaneway;

/** Starts `laneway <command> DIR --port 0 …` and waits for its listening line. */
function start(command: string, dir: string, ...args: string[]): Promise<Running> {
  return startLaneway([command, dir, '--port', '0', ...args], {}, PATIENCE_MS);
}

interface DevEvent {
  event: string;
  data: { build?: string; files?: string[]; urls?: string[] };
}

/** An open /__/dev/events stream: every event it received, and a way to wait for the next ones. */
interface EventStream {
  events: DevEvent[];
  /** Resolves with the first event at index ≥ `from` that satisfies `accept`. */
  wait(accept: (e: DevEvent) => boolean, what: string, from?: number): Promise<DevEvent>;
  close(): void;
}

function openEvents(port: number): Promise<EventStream> {
  return new Promise((resolve, reject) => {
    const events: DevEvent[] = [];
    const waiters = new Set<() => void>();
    let buffer = '';
    const req: ClientRequest = httpRequest({ host: '127.0.0.1', port, path: '/__/dev/events', agent: false, headers: { accept: 'text/event-stream' } }, (res) => {
      assert.equal(res.statusCode, 200);
      assert.match(String(res.headers['content-type']), /^text\/event-stream/);
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let end;
        while ((end = buffer.indexOf('\n\n')) !== -1) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          // The request panel's events (one per answer, src/dev/requests.ts) are not rebuilds: left out.
          if (event !== undefined && event !== 'request' && data !== undefined) events.push({ event, data: JSON.parse(data) });
        }
        for (const w of [...waiters]) w();
      });
      const stream: EventStream = {
        events,
        wait(accept, what, from = 0) {
          return new Promise((resolveEvent, rejectEvent) => {
            const check = () => {
              const found = events.slice(from).find(accept);
              if (!found) return;
              waiters.delete(check);
              clearTimeout(timer);
              resolveEvent(found);
            };
            const timer = setTimeout(() => {
              waiters.delete(check);
              rejectEvent(new Error(`no event within ${PATIENCE_MS} ms: ${what}; received: ${JSON.stringify(events)}`));
            }, PATIENCE_MS);
            waiters.add(check);
            check();
          });
        },
        close: () => req.destroy(),
      };
      resolve(stream);
    });
    req.on('error', reject);
    req.end();
  });
}

const get = (port: number, path: string, headers: Record<string, string> = {}) => rawRequest(port, 'GET', path, headers);

/** The text of the live-reload client in a page, and its `data-build`. */
function clientOf(html: string): { build: string; text: string } | undefined {
  const m = /<script data-build="([^"]*)">([\s\S]*?)<\/script>/.exec(html);
  return m ? { build: m[1]!, text: m[2]! } : undefined;
}

const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

/** The sources of one directive of a policy. */
function directive(policy: string, name: string): string[] | undefined {
  const d = policy.split(';').map((s) => s.trim().split(/\s+/)).find(([n]) => n === name);
  return d?.slice(1);
}

test('dev --help describes the command; the main help lists it', () => {
  const help = spawnSync(process.execPath, [BIN, 'dev', '--help'], { encoding: 'utf8' });
  assert.equal(help.status, 0, help.stderr);
  assert.match(help.stdout, /^Usage: laneway dev DIR/);
  assert.match(help.stdout, /live reload|reload by themselves/);
  assert.match(help.stdout, /while the app does not compile/);
  const main = spawnSync(process.execPath, [BIN, '--help'], { encoding: 'utf8' });
  assert.match(main.stdout, /^ {2}dev DIR {7}serve the app in DIR for development/m, main.stderr);
});

describe('laneway dev', () => {
  let dir: string;
  let dev: Running;
  let stream: EventStream;
  /** Writes an app file (path relative to the app). */
  const write = (path: string, text: string) => {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
  };
  /** Waits for the next rebuild event (reload or css) whose files include `file`. */
  const rebuildOf = (file: string, from = stream.events.length) =>
    stream.wait((e) => (e.event === 'reload' || e.event === 'css') && (e.data.files ?? []).includes(file), `a rebuild naming ${file}`, from);

  before(async () => {
    dir = copyFixture();
    // A data directory inside the app under a private name (a served name is refused: docs/data.md),
    // not a dot-directory: the watcher ignores it because --data names it.
    dev = await start('dev', dir, '--log', 'off', '--data', join(dir, '_var'));
    stream = await openEvents(dev.port);
    await stream.wait((e) => e.event === 'hello', 'hello');
  });
  after(async () => {
    stream?.close();
    assert.equal(await dev?.stop(), 0);
  });

  test('pages carry the live-reload client, allowed by its own hash, with connect-src self', async () => {
    const hello = stream.events.find((e) => e.event === 'hello')!;
    // A view: the layout's own inline script keeps its hash, the client adds its own.
    const view = await get(dev.port, '/');
    assert.equal(view.status, 200);
    const client = clientOf(view.text);
    assert.ok(client, view.text);
    assert.equal(client.build, hello.data.build);
    assert.match(view.text, /<script data-build="[^"]*">[\s\S]*<\/script><\/body>/, 'the client goes just before </body>');
    const policy = String(view.headers['content-security-policy']);
    const scripts = directive(policy, 'script-src')!;
    assert.ok(scripts.includes(sha256(client.text)), policy);
    assert.ok(scripts.includes(sha256("document.documentElement.setAttribute('data-layout-script', 'ran');")), policy);
    assert.equal(scripts.length, 2, policy);
    assert.deepEqual(directive(policy, 'connect-src'), ["'self'"]);
    assert.doesNotMatch(policy, /unsafe-inline|unsafe-eval/);
    // A plain page (no script of its own: script-src was 'none').
    const page = await get(dev.port, '/about');
    const pagePolicy = String(page.headers['content-security-policy']);
    assert.deepEqual(directive(pagePolicy, 'script-src'), [sha256(clientOf(page.text)!.text)]);
    assert.deepEqual(directive(pagePolicy, 'connect-src'), ["'self'"]);
    // Not on what is not a page: JSON, stylesheets, a page fetched by a script.
    const json = await get(dev.port, '/api');
    assert.deepEqual(JSON.parse(json.text), { ok: true });
    assert.doesNotMatch((await get(dev.port, '/css/site.css')).text, /data-build/);
    const fetched = await get(dev.port, '/about', { 'sec-fetch-dest': 'empty' });
    assert.equal(clientOf(fetched.text), undefined);
    assert.deepEqual(directive(String(fetched.headers['content-security-policy']), 'script-src'), ["'none'"]);
  });

  test('an in-place write rebuilds once: one reload event naming the file, then the new page', async () => {
    const from = stream.events.length;
    write('index.html', (await import('node:fs')).readFileSync(join(FIXTURE, 'index.html'), 'utf8').replace('Version one', 'Version two'));
    const event = await rebuildOf('/index.html', from);
    assert.equal(event.event, 'reload');
    assert.deepEqual(event.data.files, ['/index.html']);
    assert.notEqual(event.data.build, stream.events[from - 1]?.data.build);
    const page = await get(dev.port, '/');
    assert.match(page.text, /Version two/);
    assert.equal(clientOf(page.text)?.build, event.data.build, 'pages name the build that serves them');
    assert.match(dev.out(), /reloaded/);
  });

  test('a burst of 10 quick writes is one rebuild and one event, naming all of them', async () => {
    const files = Array.from({ length: 10 }, (_, i) => `/notes/n${i}.txt`);
    // The files first (however many rebuilds that takes), so the burst below is writes alone.
    const created = stream.events.length;
    for (const [i, f] of files.entries()) write(f, `note ${i}\n`);
    await Promise.all(files.map((f) => rebuildOf(f, created)));
    const from = stream.events.length;
    for (const [i, f] of files.entries()) write(f, `note ${i}, edited\n`);
    const burst = await rebuildOf('/notes/n0.txt', from);
    assert.equal(burst.event, 'reload');
    assert.deepEqual([...(burst.data.files ?? [])].sort(), files, JSON.stringify(burst));
    // One more write: its event is the very next one, so the burst made no other event.
    write('/notes/sentinel.txt', 'after the burst\n');
    const next = await rebuildOf('/notes/sentinel.txt', from);
    assert.deepEqual(next.data.files, ['/notes/sentinel.txt']);
    assert.deepEqual(stream.events.slice(from).map((e) => e.event), ['reload', 'reload']);
    assert.equal((await get(dev.port, '/notes/n9.txt')).text, 'note 9, edited\n');
  });

  test("a page's ETag names the build serving it: after a rebuild a cached copy gets the new page, not 304", async () => {
    const first = await get(dev.port, '/cached');
    assert.equal(first.status, 200);
    const etag = String(first.headers.etag);
    assert.equal((await get(dev.port, '/cached', { 'if-none-match': etag })).status, 304);
    const from = stream.events.length;
    write('notes/etag.txt', 'a rebuild\n');
    const rebuilt = await rebuildOf('/notes/etag.txt', from);
    const again = await get(dev.port, '/cached', { 'if-none-match': etag });
    assert.equal(again.status, 200, 'a 304 would keep the old build in the page, which would reload forever');
    assert.equal(clientOf(again.text)?.build, rebuilt.data.build);
    assert.equal((await get(dev.port, '/cached', { 'if-none-match': String(again.headers.etag) })).status, 304);
  });

  test('saves that rename a temporary file over the original are seen every time, and so are later in-place writes', async () => {
    for (const n of [2, 3, 4, 5]) {
      const from = stream.events.length;
      // As editors and `sed -i` save: write a new file beside the original, rename it over.
      writeFileSync(join(dir, 'about.html.tmp'), `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>About</title></head><body><h1>About, version ${n}</h1></body></html>\n`);
      renameSync(join(dir, 'about.html.tmp'), join(dir, 'about.html'));
      await rebuildOf('/about.html', from);
      assert.match((await get(dev.port, '/about')).text, new RegExp(`About, version ${n}<`));
    }
    const from = stream.events.length;
    write('about.html', '<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>About</title></head><body><h1>About, written in place</h1></body></html>\n');
    await rebuildOf('/about.html', from);
    assert.match((await get(dev.port, '/about')).text, /About, written in place/);
    assert.equal((await get(dev.port, '/about.html.tmp')).status, 404, 'the temporary file is gone from the app');
  });

  test('a new {param} directory with its 🔗.yaml and a page is served after the rebuild; deleting it removes it', async () => {
    const from = stream.events.length;
    mkdirSync(join(dir, 'items', '{item}'), { recursive: true });
    write('items/{item}/🔗.yaml', 'values: [alpha, beta]\n');
    write('items/{item}/index.html', "<!--TEMPLATE mustache-->\n{{% import {item} from '🔗' }}\n<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Item</title></head><body><h1>Item {{item.$value}}</h1></body></html>\n");
    await rebuildOf('/items/{item}/index.html', from);
    // The page may come after the 🔗.yaml in a second burst on a slow machine: wait for the route.
    const deadline = Date.now() + PATIENCE_MS;
    let page = await get(dev.port, '/items/alpha/');
    while (page.status !== 200 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      page = await get(dev.port, '/items/alpha/');
    }
    assert.equal(page.status, 200, page.text);
    assert.match(page.text, /Item alpha/);
    assert.ok(clientOf(page.text));
    assert.equal((await get(dev.port, '/items/gamma/')).status, 404);
    // A file written later in the new directory is seen too (it is watched).
    const later = stream.events.length;
    write('items/{item}/index.html', "<!--TEMPLATE mustache-->\n{{% import {item} from '🔗' }}\n<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Item</title></head><body><h1>Item {{item.$value}}, again</h1></body></html>\n");
    await rebuildOf('/items/{item}/index.html', later);
    assert.match((await get(dev.port, '/items/beta/')).text, /Item beta, again/);
    const removed = stream.events.length;
    rmSync(join(dir, 'items'), { recursive: true });
    await rebuildOf('/items/{item}/index.html', removed);
    assert.equal((await get(dev.port, '/items/alpha/')).status, 404);
  });

  test('the data directory, dot-directories, node_modules and editors\' backup files do not rebuild', async () => {
    const from = stream.events.length;
    write('_var/laneway.db', 'data');
    write('.laneway/laneway.db-wal', 'data');
    write('.git/HEAD', 'ref: refs/heads/main\n');
    write('node_modules/left-pad/index.js', 'module.exports = 1;\n');
    write('.index.html.swp', 'swap');
    write('index.html~', 'backup');
    // One write that counts: the next event names it alone.
    write('notes/counted.txt', 'counted\n');
    const event = await rebuildOf('/notes/counted.txt', from);
    assert.deepEqual(event.data.files, ['/notes/counted.txt']);
    assert.equal(stream.events.length - from, 1, JSON.stringify(stream.events.slice(from)));
  });

  test('a stylesheet change swaps stylesheets: a css event with its URL, no reload', async () => {
    const from = stream.events.length;
    write('css/site.css', 'body { color: rgb(1, 2, 3); }\n');
    const event = await rebuildOf('/css/site.css', from);
    assert.equal(event.event, 'css');
    assert.deepEqual(event.data.urls, ['/css/site.css']);
    assert.match((await get(dev.port, '/css/site.css')).text, /rgb\(1, 2, 3\)/);
    // A private stylesheet may be inlined or imported anywhere: pages reload.
    const partial = stream.events.length;
    write('css/_theme.scss', '$ink: red;\n');
    assert.equal((await rebuildOf('/css/_theme.scss', partial)).event, 'reload');
  });

  test('a broken edit: every page answers the problems (file:line:column, frame, docs link) with the client; the fix brings the app back', async () => {
    const from = stream.events.length;
    // Line 6 closes "content" while "open" (line 5) is still open.
    write('index.html', "<!--TEMPLATE mustache-->\n{{% partial /_layout }}\n{{<layout}}\n{{$content}}\n    <h1>{{#open}}Broken</h1>\n{{/content}}\n{{/layout}}\n");
    const broken = await rebuildOf('/index.html', from);
    assert.equal(broken.event, 'reload', 'open pages reload to show the problems');
    await waitUntil(() => /every page shows the problems/.test(dev.err()), 'the problems on standard error');
    assert.match(dev.err(), /^index\.html:6:1: .*\[LW_VIEW_MISMATCHED_SECTION\]$/m);
    for (const path of ['/', '/about', '/no/such/page']) {
      const res = await get(dev.port, path);
      assert.equal(res.status, 500, path);
      assert.match(String(res.headers['content-type']), /^text\/html/);
      assert.ok(res.headers['x-request-id']);
      assert.match(res.text, /The app does not compile/);
      assert.match(res.text, /index\.html:6:1/);
      assert.match(res.text, /<a class="code" href="\/__\/dev\/docs\/errors\.md#lw_view_mismatched_section">LW_VIEW_MISMATCHED_SECTION<\/a>/);
      assert.match(res.text, /closing tag/);
      // The code frame: the lines around, the line itself marked, a caret under the column.
      assert.match(res.text, /<pre>[\s\S]*&#62; 6 \| \{\{\/content\}\}\n {4}\| \^[\s\S]*<\/pre>/);
      // Its own strict policy: its style and the client by hash, the event stream.
      const policy = String(res.headers['content-security-policy']);
      const client = clientOf(res.text)!;
      assert.equal(client.build, broken.data.build);
      assert.deepEqual(directive(policy, 'script-src'), [sha256(client.text)]);
      assert.equal(directive(policy, 'style-src')?.length, 1);
      assert.match(directive(policy, 'style-src')![0]!, /^'sha256-/);
      assert.deepEqual(directive(policy, 'default-src'), ["'none'"]);
      assert.deepEqual(directive(policy, 'connect-src'), ["'self'"]);
    }
    const json = await get(dev.port, '/api', { accept: 'application/json' });
    assert.equal(json.status, 500);
    const problems = JSON.parse(json.text).problems;
    assert.deepEqual(problems.map((p: { code: string; file: string; line: number; column: number }) => [p.code, p.file, p.line, p.column]), [['LW_VIEW_MISMATCHED_SECTION', '/index.html', 6, 1]]);
    // The docs link answers, with the anchor.
    const docs = await get(dev.port, '/__/dev/docs/errors.md');
    assert.equal(docs.status, 200);
    assert.match(docs.text, /<h3 id="lw_view_mismatched_section">LW_VIEW_MISMATCHED_SECTION<\/h3>/);
    assert.match(String(docs.headers['content-security-policy']), /^default-src 'none'; style-src 'sha256-/);
    assert.equal((await get(dev.port, '/__/dev/docs/..%2Fpackage.json')).status, 404);

    const fixedFrom = stream.events.length;
    cpSync(join(FIXTURE, 'index.html'), join(dir, 'index.html'));
    const fixed = await rebuildOf('/index.html', fixedFrom);
    assert.equal(fixed.event, 'reload');
    const page = await get(dev.port, '/');
    assert.equal(page.status, 200);
    assert.match(page.text, /Version one/);
  });

  test('a script that fails at run time: the same page with the script position and the request id, which the log has too', async () => {
    const res = await get(dev.port, '/fails');
    assert.equal(res.status, 500);
    const id = String(res.headers['x-request-id']);
    assert.match(res.text, /A script failed/);
    assert.match(res.text, /fails\/GET\.js:4:\d+/);
    assert.match(res.text, /TypeError: Cannot read properties of undefined/);
    assert.match(res.text, /&#62; 4 \| const size = settings\.limits\.size;/);
    assert.match(res.text, /href="\/__\/dev\/docs\/errors\.md#lw_script_runtime"/);
    assert.ok(res.text.includes(`<span class="id">${id}</span>`), res.text);
    assert.ok(clientOf(res.text), 'the page reloads itself once fixed');
    await waitUntil(() => dev.err().includes(id), 'the log line with the request id');
    assert.match(dev.err(), new RegExp(`/fails/GET\\.js:4:\\d+: TypeError.*${id}`));
    // A JSON client gets the JSON error with the request id, and in dev where the script failed.
    const json = await get(dev.port, '/fails', { accept: 'application/json' });
    assert.equal(json.status, 500);
    const body = JSON.parse(json.text) as Record<string, unknown>;
    assert.equal(body.id, json.headers['x-request-id']);
    assert.deepEqual([body.code, body.file, body.line], ['LW_SCRIPT_RUNTIME', '/fails/GET.js', 4]);
    assert.match(String(body.message), /^TypeError: Cannot read properties of undefined/);
  });

  test('a view that fails while rendering: the same page at the tag that failed', async () => {
    const res = await get(dev.port, '/shout');
    assert.equal(res.status, 500);
    const id = String(res.headers['x-request-id']);
    assert.match(res.text, /A view failed/);
    assert.match(res.text, /shout\.html:7:4/);
    assert.match(res.text, /TypeError: Cannot read properties of null \(reading &#39;toUpperCase&#39;\)/);
    assert.match(res.text, /&#62; 7 \| &#60;p&#62;\{\{shout null\}\}&#60;\/p&#62;\n {4}\| {4}\^/);
    assert.ok(res.text.includes(`<span class="id">${id}</span>`));
    await waitUntil(() => dev.err().includes(id), 'the log line with the request id');
  });
});

test('dev starts when the app does not compile, shows the problems, and serves the app once fixed', async () => {
  const dir = copyFixture();
  writeFileSync(join(dir, 'api/GET.js'), 'var x = 1;\n({ x })\n');
  const dev = await start('dev', dir, '--log', 'off');
  try {
    assert.match(dev.err(), /api\/GET\.js:1:1: .*\[LW_SCRIPT_VAR\]/);
    const res = await get(dev.port, '/');
    assert.equal(res.status, 500);
    assert.match(res.text, /api\/GET\.js:1:1/);
    assert.match(res.text, /LW_SCRIPT_VAR/);
    const stream = await openEvents(dev.port);
    await stream.wait((e) => e.event === 'hello', 'hello');
    writeFileSync(join(dir, 'api/GET.js'), 'const x = 1;\n({ x })\n');
    await stream.wait((e) => e.event === 'reload', 'the reload after the fix');
    stream.close();
    assert.match((await get(dev.port, '/')).text, /Version one/);
    assert.deepEqual(JSON.parse((await get(dev.port, '/api')).text), { x: 1 });
  } finally {
    assert.equal(await dev.stop(), 0);
  }
});

for (const args of [[], ['--dev', '--watch']]) {
  test(`serve ${args.join(' ')} never adds the client or the overlay: no /__/dev/, and a failing script is a generic page with the request id while the log has the detail`.replace('  ', ' '), async () => {
    const dir = copyFixture();
    const served = await start('serve', dir, ...args);
    try {
      const page = await get(served.port, '/');
      assert.equal(page.status, 200);
      assert.doesNotMatch(page.text, /data-build|EventSource/);
      assert.equal(directive(String(page.headers['content-security-policy']), 'script-src')?.length, 1);
      assert.deepEqual(directive(String((await get(served.port, '/about')).headers['content-security-policy']), 'script-src'), ["'none'"]);
      assert.equal((await get(served.port, '/__/dev/events')).status, 404);
      const failed = await get(served.port, '/fails');
      assert.equal(failed.status, 500);
      const id = String(failed.headers['x-request-id']);
      assert.match(failed.text, new RegExp(`The error was logged with id ${id}\\.`));
      assert.doesNotMatch(failed.text, /TypeError|GET\.js|settings\.limits|data-build/);
      assert.match(String(failed.headers['content-security-policy']), /^default-src 'none'/);
      await waitUntil(() => served.err().includes(id), 'the log line with the request id');
      assert.match(served.err(), new RegExp(`/fails/GET\\.js:4:\\d+: TypeError: Cannot read properties of undefined.*${id}`));
      // A view that fails: the same generic page (serve --dev adds the details, in a <pre>).
      const view = await get(served.port, '/shout');
      assert.equal(view.status, 500);
      const viewId = String(view.headers['x-request-id']);
      assert.match(view.text, new RegExp(`The error was logged with id ${viewId}\\.`));
      assert.doesNotMatch(view.text, /data-build|laneway-overlay/);
      if (args.length === 0) assert.doesNotMatch(view.text, /TypeError|shout\.html|<pre>/);
      else assert.match(view.text, /<pre>\/shout\.html:7:4: [\s\S]*TypeError/);
      await waitUntil(() => served.err().includes(viewId), 'the log line of the view');
      assert.match(served.err(), new RegExp(`render error.*${viewId}.*/shout\\.html.*TypeError`));
    } finally {
      assert.equal(await served.stop(), 0);
    }
  });
}

async function waitUntil(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + PATIENCE_MS;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
