/**
 * Server-sent events (`⏱name.js`, docs/scripting.md "⏱ Server-sent events") against a real server
 * on 127.0.0.1: the head, events with data, type, id and last, Last-Event-ID, keep-alive comments,
 * idle timeout and maximum duration, the client going away, failures (`exception`), the body's
 * transaction, the per-call budget, several visitors at once, and a server that stops.
 *
 * Every app sets short timings in `events:` of /🎛.yaml. Durations are asserted only as generous
 * upper bounds; where a test must show that something does not happen (no more polls), it waits
 * until the server says the stream is over first, then a number of poll intervals, so a slow
 * machine can only make it pass less convincingly, never fail.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { readFileSync, rmSync } from 'node:fs';
import { checkApp, loadApp, type App } from '../../src/app/index.js';
import { createServer, type LanewayServer, type Logger } from '../../src/http/index.js';
import type { Diagnostic } from '../../src/diag/index.js';
import type { DataOptions } from '../../src/app/services/data.js';
import { rawRequest, serve, writeApp, type AppFiles, type Served } from '../helpers.js';
import { ENGINES } from '../support/engines.js';

// No hostile stream may leave an unhandled rejection behind (checked at the end).
const unhandled: unknown[] = [];
process.on('unhandledRejection', (reason) => unhandled.push(reason));

/** Generous: every stream below ends in well under a second. */
const WELL_UNDER_MS = 10_000;

interface SseEvent {
  type: string;
  data: string;
  id?: string;
}

/**
 * A client of one event stream: node:http, reading the body as it comes and parsing it as the
 * event-stream format says (blocks separated by a blank line; `:` starts a comment).
 */
class Stream {
  status = 0;
  headers: IncomingHttpHeaders = {};
  readonly events: SseEvent[] = [];
  comments = 0;
  raw = '';
  ended = false;
  readonly done: Promise<void>;
  readonly #req;
  #buffer = '';
  #waiters: Array<() => void> = [];

  constructor(port: number, path: string, headers: Record<string, string> = {}, method = 'GET') {
    let finish!: () => void;
    this.done = new Promise((r) => (finish = r));
    const end = () => {
      this.ended = true;
      finish();
      this.#wake();
    };
    this.#req = httpRequest({ host: '127.0.0.1', port, method, path, headers: { accept: 'text/event-stream', ...headers }, agent: false }, (res) => {
      this.status = res.statusCode ?? 0;
      this.headers = res.headers;
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        this.raw += chunk;
        this.#parse(chunk);
        this.#wake();
      });
      res.on('end', end);
      res.on('error', end);
      res.on('close', end);
      this.#wake();
    });
    this.#req.on('error', end);
    this.#req.end();
  }

  #parse(chunk: string): void {
    this.#buffer += chunk;
    let i: number;
    while ((i = this.#buffer.indexOf('\n\n')) !== -1) {
      const block = this.#buffer.slice(0, i);
      this.#buffer = this.#buffer.slice(i + 2);
      const event: SseEvent = { type: 'message', data: '' };
      let fields = 0;
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) {
          this.comments++;
          continue;
        }
        const colon = line.indexOf(':');
        const name = colon === -1 ? line : line.slice(0, colon);
        const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
        fields++;
        if (name === 'event') event.type = value;
        else if (name === 'data') event.data = value;
        else if (name === 'id') event.id = value;
      }
      if (fields > 0) this.events.push(event);
    }
  }

  #wake(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const w of waiters) w();
  }

  /** Resolves once `check()` holds (checked after every chunk); fails after WELL_UNDER_MS. */
  until(check: () => boolean, what: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${what}: not within ${WELL_UNDER_MS} ms; received ${JSON.stringify(this.raw)}`)), WELL_UNDER_MS);
      const test = () => {
        if (check()) {
          clearTimeout(timer);
          resolve();
        } else if (this.ended) {
          clearTimeout(timer);
          reject(new Error(`${what}: the stream ended first; received ${JSON.stringify(this.raw)}`));
        } else this.#waiters.push(test);
      };
      test();
    });
  }

  /** Waits for the server to end the stream. */
  async end(): Promise<this> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.done,
      new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`the stream did not end within ${WELL_UNDER_MS} ms; received ${JSON.stringify(this.raw)}`)), WELL_UNDER_MS))),
    ]);
    clearTimeout(timer);
    return this;
  }

  /** The client goes away. */
  close(): void {
    this.#req.destroy();
  }
}

/** Opens a stream and waits for its head. */
async function open(port: number, path: string, headers?: Record<string, string>): Promise<Stream> {
  const s = new Stream(port, path, headers);
  await s.until(() => s.status !== 0, `the head of ${path}`);
  return s;
}

const json = (e: SseEvent | undefined): unknown => JSON.parse(e?.data ?? 'undefined');
const manifest = (events: string, extra = ''): string => `name: events test\nevents: {${events}}\n${extra}`;

type LogEntry = { message: string } & Record<string, unknown>;

/**
 * Like `serve()` of test/helpers.ts, but keeping the App (to watch its store), the access log,
 * and the server's own options (a long shutdown timeout).
 */
interface ServedApp {
  app: App;
  server: LanewayServer;
  port: number;
  /** The access log: one line per request, written when its answer is over (a stream: when it closed). */
  access: Array<{ path: string; status: number }>;
  close(): Promise<void>;
}

async function serveApp(files: AppFiles, logged: LogEntry[] = [], data?: DataOptions): Promise<ServedApp> {
  const dir = writeApp(files);
  const app = loadApp(dir, { log: (message, fields) => logged.push({ message, ...fields }) });
  await app.data?.open(dir, data);
  const access: Array<{ path: string; status: number }> = [];
  const logger: Logger = { format: 'json', access: (e) => access.push({ path: e.path, status: e.status }), error: () => {}, info: () => {} };
  const server = createServer(app, { log: logger, shutdownTimeoutMs: 120_000 });
  const { port } = await server.listen(0, '127.0.0.1');
  return {
    app,
    server,
    access,
    port,
    async close() {
      await server.close();
      await app.data?.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const BIG = 'const big = Array.from({length: 100000}, (_, i) => i);\n';

const FEEDS: AppFiles = {
  '/🎛.yaml': manifest('poll-ms: 20, keep-alive-ms: 600000, idle-timeout-ms: 600000, max-duration-ms: 600000'),
  '/feed/⏱progress.js': [
    'let step = 0;',
    '(lastEventId) => {',
    '  step += 1;',
    "  if (step < 4) return [{step, lastEventId, $event: {type: 'progress'}}];",
    "  return [{step, lastEventId, $event: {type: 'done', last: true}}, {step: 'never sent'}];",
    '}',
  ].join('\n'),
  '/feed/⏱plain.js': "(lastEventId) => ['a', 1, null, true, {x: [1, 2], html: '<b>'}, {$event: {last: true}}]\n",
  '/feed/⏱echo.js': '(lastEventId) => [{lastEventId, $event: {last: true}}]\n',
  '/feed/⏱ids.js': [
    'let calls = [];',
    '(lastEventId) => {',
    '  calls.push(lastEventId);',
    "  if (calls.length === 1) return [{calls}, {calls, $event: {id: 'build-7'}}];",
    '  return [{calls, $event: {id: 42}}, {calls, $event: {last: true}}];',
    '}',
  ].join('\n'),
  '/feed/⏱counter.js': 'let n = 0;\n(lastEventId) => { n += 1; return n < 4 ? [{n}] : [{n, $event: {last: true}}]; }\n',
  '/feed/⏱throws.js': "let n = 0;\n(lastEventId) => { n += 1; if (n === 2) throw 'build failed'; return [{n}]; }\n",
  '/feed/⏱throws-object.js': "(lastEventId) => { throw ({code: 'E_BUILD', step: 3}); }\n",
  '/feed/⏱crash.js': '(lastEventId) => [lastEventId.length]\n',
  '/feed/⏱not-array.js': '(lastEventId) => ({items: []})\n',
  '/feed/⏱bad-type.js': "(lastEventId) => [{$event: {type: 'a\\nb'}}]\n",
  '/feed/⏱bad-key.js': "(lastEventId) => [{ok: 1}, {$event: {kind: 'x'}}]\n",
  '/feed/⏱loop.js': `${BIG}(lastEventId) => [big.some(() => big.some(() => false))]\n`,
  '/feed/⏱number.js': 'const f = 1;\nf\n',
  '/feed/⏱refuses.js': "import {token} from '&'\nif (!token) throw 'a token is needed';\n(lastEventId) => [{ok: true, $event: {last: true}}]\n",
  '/🖥ping.js': '({pong: true})\n',
};

describe('⏱ event streams', () => {
  let s: Served;
  const logged: LogEntry[] = [];
  before(async () => {
    s = await serve(FEEDS, { log: (message, fields) => logged.push({ message, ...fields }) });
  });
  after(() => s.close());

  it('answers 200 text/event-stream, no-store, with the common security headers and never compressed', async () => {
    const st = await (await open(s.port, '/feed/progress', { 'accept-encoding': 'gzip, br' })).end();
    assert.equal(st.status, 200);
    assert.equal(st.headers['content-type'], 'text/event-stream');
    assert.equal(st.headers['cache-control'], 'no-store');
    assert.equal(st.headers['x-content-type-options'], 'nosniff');
    assert.equal(st.headers['referrer-policy'], 'strict-origin-when-cross-origin');
    assert.equal(st.headers['content-encoding'], undefined);
    assert.equal(st.headers['content-length'], undefined);
    // A stream is no page: no policy of its own (like a JSON answer).
    assert.equal(st.headers['content-security-policy'], undefined);
  });

  it('sends each element as one event: data is its JSON, $event gives the type, ids count from 1, and last ends the stream', async () => {
    const st = await (await open(s.port, '/feed/progress')).end();
    assert.equal(
      st.raw,
      'id: 1\nevent: progress\ndata: {"step":1,"lastEventId":null}\n\n' +
        'id: 2\nevent: progress\ndata: {"step":2,"lastEventId":"1"}\n\n' +
        'id: 3\nevent: progress\ndata: {"step":3,"lastEventId":"2"}\n\n' +
        'id: 4\nevent: done\ndata: {"step":4,"lastEventId":"3"}\n\n',
    );
  });

  it('sends any JSON value as data; an event without a type is a message', async () => {
    const st = await (await open(s.port, '/feed/plain')).end();
    assert.deepEqual(st.events, [
      { type: 'message', id: '1', data: '"a"' },
      { type: 'message', id: '2', data: '1' },
      { type: 'message', id: '3', data: 'null' },
      { type: 'message', id: '4', data: 'true' },
      { type: 'message', id: '5', data: '{"x":[1,2],"html":"<b>"}' },
      { type: 'message', id: '6', data: '{}' },
    ]);
  });

  it('passes Last-Event-ID to the function on reconnection, and numbers on from it', async () => {
    const fresh = await (await open(s.port, '/feed/echo')).end();
    assert.deepEqual(fresh.events, [{ type: 'message', id: '1', data: '{"lastEventId":null}' }]);
    const again = await (await open(s.port, '/feed/echo', { 'last-event-id': '41' })).end();
    assert.deepEqual(again.events, [{ type: 'message', id: '42', data: '{"lastEventId":"41"}' }]);
    // An id that is not a number of Laneway's is passed as it is; the numbering starts again.
    const other = await (await open(s.port, '/feed/echo', { 'last-event-id': 'build-7' })).end();
    assert.deepEqual(other.events, [{ type: 'message', id: '1', data: '{"lastEventId":"build-7"}' }]);
    // The continued progress stream sees the header first, then its own ids.
    const progress = await (await open(s.port, '/feed/progress', { 'last-event-id': '7' })).end();
    assert.deepEqual(progress.events.map((e) => [e.id, json(e)]), [
      ['8', { step: 1, lastEventId: '7' }],
      ['9', { step: 2, lastEventId: '8' }],
      ['10', { step: 3, lastEventId: '9' }],
      ['11', { step: 4, lastEventId: '10' }],
    ]);
  });

  it('uses $event.id when given (a text or a number) and passes it to the next call', async () => {
    const st = await (await open(s.port, '/feed/ids')).end();
    assert.deepEqual(st.events.map((e) => [e.id, json(e)]), [
      ['1', { calls: [null] }],
      ['build-7', { calls: [null] }],
      ['42', { calls: [null, 'build-7'] }],
      ['4', { calls: [null, 'build-7'] }],
    ]);
  });

  it('runs the body once per connection: two visitors at once each get a stream of their own', async () => {
    const [a, b] = await Promise.all([open(s.port, '/feed/counter'), open(s.port, '/feed/counter')]);
    await Promise.all([a.end(), b.end()]);
    for (const st of [a, b]) assert.deepEqual(st.events.map((e) => json(e)), [{ n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }]);
  });

  it('ends with an exception event when the function throws: a thrown text or object is the data', async () => {
    const st = await (await open(s.port, '/feed/throws')).end();
    assert.deepEqual(st.events, [
      { type: 'message', id: '1', data: '{"n":1}' },
      { type: 'exception', data: '{"error":"build failed"}' },
    ]);
    const obj = await (await open(s.port, '/feed/throws-object')).end();
    assert.deepEqual(obj.events, [{ type: 'exception', data: '{"code":"E_BUILD","step":3}' }]);
  });

  it('ends with an exception event naming only the request id when the function fails: no message, stack or file', async () => {
    const before = logged.length;
    const st = await (await open(s.port, '/feed/crash')).end();
    assert.equal(st.events.length, 1);
    assert.equal(st.events[0]!.type, 'exception');
    assert.equal(st.events[0]!.id, undefined);
    const data = json(st.events[0]) as { error: string };
    assert.deepEqual(Object.keys(data), ['error']);
    assert.match(data.error, /^The event stream failed\. The error was logged with id [0-9a-f]+-[0-9a-z]+\.$/);
    assert.doesNotMatch(st.raw, /TypeError|length|⏱|\.js|at /);
    const entry = logged.slice(before).find((e) => e.file === '/feed/⏱crash.js');
    assert.equal(entry?.code, 'LW_SCRIPT_RUNTIME');
    assert.match(entry!.message, /^\/feed\/⏱crash\.js: TypeError: .*null/);
    assert.ok(data.error.includes(String(entry!.id)));
  });

  it('ends with an exception event when the function returns no array or a malformed $event; nothing of that call is sent', async () => {
    for (const [path, detail] of [
      ['/feed/not-array', /returned an object, not an array of events/],
      ['/feed/bad-type', /element 0 .*\$event\.type must be a name/],
      ['/feed/bad-key', /element 1 .*\$event has no "kind": it takes type, id and last/],
    ] as const) {
      const before = logged.length;
      const st = await (await open(s.port, path)).end();
      assert.deepEqual(st.events.map((e) => e.type), ['exception'], path);
      assert.match((json(st.events[0]) as { error: string }).error, /^The event stream sent something that is not a list of events\. The error was logged with id /);
      const entry = logged.slice(before).find((e) => e.code === 'LW_EVENTS_BAD_RESULT');
      assert.match(entry?.message ?? '', detail, path);
    }
  });

  it('stops a function that never returns by its CPU budget, while other requests are answered', async () => {
    const started = performance.now();
    const st = new Stream(s.port, '/feed/loop');
    const [pong] = await Promise.all([s.get('/ping'), st.end()]);
    assert.equal(pong.status, 200);
    assert.ok(performance.now() - started < WELL_UNDER_MS);
    assert.equal(st.status, 200);
    assert.deepEqual(st.events.map((e) => e.type), ['exception']);
    assert.match((json(st.events[0]) as { error: string }).error, /needed more of the server than one call may use, and was stopped/);
    assert.equal(logged.findLast((e) => e.file === '/feed/⏱loop.js')?.code, 'LW_SCRIPT_CPU_LIMIT');
    // The server goes on serving, and another stream of the same file starts afresh.
    assert.equal((await s.get('/ping')).status, 200);
    const again = await new Stream(s.port, '/feed/loop').end();
    assert.deepEqual(again.events.map((e) => e.type), ['exception']);
  });

  it('answers 500 naming the file when the script does not end with a function', async () => {
    const r = await s.get('/feed/number', { accept: 'application/json' });
    assert.equal(r.status, 500);
    assert.match(r.headers['content-type'] ?? '', /^application\/json/);
    const body = JSON.parse(r.text) as { error: string };
    assert.match(body.error, /^The event stream \/feed\/⏱number\.js is broken: its script must end with a function \(lastEventId\) => \[events\], and it ended with a number\. The error was logged with id /);
    assert.equal(logged.findLast((e) => e.file === '/feed/⏱number.js')?.code, 'LW_EVENTS_NOT_A_FUNCTION');
    const page = await s.get('/feed/number');
    assert.equal(page.status, 500);
    assert.match(page.text, /⏱number\.js is broken/);
  });

  it('answers a script that throws before the stream as any script: 400 with the thrown value', async () => {
    const r = await s.get('/feed/refuses', { accept: 'application/json' });
    assert.equal(r.status, 400);
    assert.deepEqual(JSON.parse(r.text), { error: 'a token is needed' });
    const ok = await (await open(s.port, '/feed/refuses?token=t')).end();
    assert.deepEqual(ok.events, [{ type: 'message', id: '1', data: '{"ok":true}' }]);
  });

  it('answers HEAD with the head of a stream and an empty body; other methods get 405', async () => {
    const head = await s.request('HEAD', '/feed/progress');
    assert.equal(head.status, 200);
    assert.equal(head.headers['content-type'], 'text/event-stream');
    assert.equal(head.text, '');
    const post = await s.request('POST', '/feed/progress', { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin' }, '');
    assert.equal(post.status, 405);
    assert.match(String(post.headers.allow), /GET/);
  });
});

describe('⏱ stream timings', () => {
  it('refuses one stream more than max-streams with 503, before its script runs; a closed stream frees its place', async () => {
    const logged: LogEntry[] = [];
    const s = await serveApp({ '/🎛.yaml': manifest('poll-ms: 20, max-streams: 2'), '/⏱feed.js': '(lastEventId) => []\n' }, logged);
    try {
      const a = await open(s.port, '/feed');
      const b = await open(s.port, '/feed');
      assert.equal(a.status, 200);
      assert.equal(b.status, 200);
      const refused = await rawRequest(s.port, 'GET', '/feed', { accept: 'application/json' });
      assert.equal(refused.status, 503);
      assert.match(refused.body.toString(), /Too many event streams are open/);
      a.close();
      await a.done;
      let again: Stream | undefined;
      const deadline = Date.now() + WELL_UNDER_MS;
      // The server counts the close when it sees it: ask until the place is free.
      while (Date.now() < deadline) {
        const st = await open(s.port, '/feed');
        if (st.status === 200) {
          again = st;
          break;
        }
        await new Promise((r) => setTimeout(r, 20));
      }
      assert.equal(again?.status, 200);
      again?.close();
      b.close();
    } finally {
      await s.close();
    }
  });

  it('sends : comment lines while there is nothing to send', async () => {
    const s = await serve({ '/🎛.yaml': manifest('poll-ms: 20, keep-alive-ms: 30'), '/⏱quiet.js': '(lastEventId) => []\n' });
    try {
      const st = await open(s.port, '/quiet');
      await st.until(() => st.comments >= 3, 'three keep-alive comments');
      assert.equal(st.events.length, 0);
      assert.match(st.raw, /^(: keep-alive\n\n)+$/);
      st.close();
    } finally {
      await s.close();
    }
  });

  it('ends a stream without events after idle-timeout-ms with a timeout event; events keep it open', async () => {
    const s = await serve({
      '/🎛.yaml': manifest('poll-ms: 25, idle-timeout-ms: 800, keep-alive-ms: 600000'),
      '/⏱quiet.js': '(lastEventId) => []\n',
      // Events for a second or more (longer than the idle timeout), then nothing.
      '/⏱burst.js': 'let n = 0;\n(lastEventId) => { n += 1; return n <= 40 ? [{n}] : []; }\n',
    });
    try {
      const quiet = await (await open(s.port, '/quiet')).end();
      assert.deepEqual(quiet.events, [{ type: 'timeout', data: '{"reason":"idle"}' }]);
      const burst = await (await open(s.port, '/burst')).end();
      assert.equal(burst.events.length, 41);
      assert.deepEqual(burst.events.slice(0, 40).map((e) => json(e)), Array.from({ length: 40 }, (_, i) => ({ n: i + 1 })));
      assert.deepEqual(burst.events[40], { type: 'timeout', data: '{"reason":"idle"}' });
    } finally {
      await s.close();
    }
  });

  it('ends every stream after max-duration-ms, however busy, with a timeout event', async () => {
    const s = await serve({
      '/🎛.yaml': manifest('poll-ms: 20, max-duration-ms: 400'),
      '/⏱busy.js': 'let n = 0;\n(lastEventId) => { n += 1; return [{n}]; }\n',
    });
    try {
      const started = performance.now();
      const st = await (await open(s.port, '/busy')).end();
      assert.ok(performance.now() - started < WELL_UNDER_MS);
      assert.ok(st.events.length >= 2, st.raw);
      assert.deepEqual(st.events.at(-1), { type: 'timeout', data: '{"reason":"duration"}' });
      assert.ok(st.events.slice(0, -1).every((e, i) => e.type === 'message' && e.id === String(i + 1)));
    } finally {
      await s.close();
    }
  });

  it('gives every call a fresh budget: calls that each use most of the memory allowance go on', async () => {
    const logged: LogEntry[] = [];
    const s = await serve({
      '/🎛.yaml': manifest('poll-ms: 10', 'limits: {memory-mb: 1}\n'),
      // Each call makes a string of 600 KB (two bytes a character) in a 1 MiB allowance.
      '/⏱big.js': "let n = 0;\n(lastEventId) => { n += 1; const s = 'x'.repeat(300000); return n < 6 ? [{n, size: s.length}] : [{n, size: s.length, $event: {last: true}}]; }\n",
      '/⏱too-big.js': "(lastEventId) => ['x'.repeat(600000).length]\n",
    }, { log: (message, fields) => logged.push({ message, ...fields }) });
    try {
      const st = await (await open(s.port, '/big')).end();
      assert.deepEqual(st.events.map((e) => json(e)), Array.from({ length: 6 }, (_, i) => ({ n: i + 1, size: 300000 })));
      // One call over the allowance still ends the stream.
      const over = await (await open(s.port, '/too-big')).end();
      assert.deepEqual(over.events.map((e) => e.type), ['exception']);
      assert.deepEqual(logged.map((e) => [e.code, e.message]), [['LW_SCRIPT_MEMORY_LIMIT', '/⏱too-big.js: built more than 1 MiB of strings and arrays']]);
    } finally {
      await s.close();
    }
  });
});

for (const engine of ENGINES) describe(`⏱ streams and models on ${engine.name}`, () => {
  const APP: AppFiles = {
    '/🎛.yaml': manifest('poll-ms: 20'),
    '/📦/🌐Visit.yaml': 'name: string\n',
    '/visits/🖥index.js': "import {Visit} from '📦';\nVisit.all().map((v) => v.name);\n",
    '/visits/⏱watch.js': "import {Visit} from '📦';\nimport {who} from '&';\nnew Visit().name(who ?? 'someone');\n(lastEventId) => [{visits: Visit.all().count()}]\n",
    '/visits/⏱refuse.js': "import {Visit} from '📦';\nnew Visit().name('refused');\nthrow 'not now';\n",
    '/visits/⏱writes.js': "import {Visit} from '📦';\n(lastEventId) => { new Visit().name('from a call'); return [{visits: Visit.all().count()}]; }\n",
    '/visits/⏱late.js': "import {Visit} from '📦';\nnew Visit().name('late');\n(lastEventId) => [{visits: Visit.all().count()}]\n",
  };
  let s: ServedApp;
  const logged: LogEntry[] = [];
  /** Read sessions opened for the polled function of each file: one per call. */
  const calls = new Map<string, number>();
  const callsOf = (file: string): number => calls.get(`the polled function of ${file}`) ?? 0;
  /** Write transactions begun (one per stream of a ⏱ file, for its body). */
  let begins = 0;
  before(async () => {
    s = await serveApp(APP, logged, await engine.data());
    const store = s.app.data!.store!;
    const read = store.read.bind(store);
    store.read = (what) => {
      calls.set(what, (calls.get(what) ?? 0) + 1);
      return read(what);
    };
    const begin = store.begin.bind(store);
    store.begin = () => {
      begins++;
      return begin();
    };
  });

  /** Waits until `check()` holds, polling every 10 ms. */
  const until = async (check: () => boolean, what: string): Promise<void> => {
    const deadline = performance.now() + WELL_UNDER_MS;
    while (!check()) {
      assert.ok(performance.now() < deadline, what);
      await new Promise((r) => setTimeout(r, 10));
    }
  };
  after(() => s.close());

  const names = async (): Promise<unknown> => {
    const st = new Stream(s.port, '/visits/');
    await st.end();
    return JSON.parse(st.raw);
  };

  it('commits the body\'s transaction before the stream starts: the first call and other requests see its record', async () => {
    const st = await open(s.port, '/visits/watch?who=alice');
    await st.until(() => st.events.length >= 1, 'a first event');
    assert.deepEqual(json(st.events[0]), { visits: 1 });
    // While the stream is open, the record is in the database for everyone.
    assert.deepEqual(await names(), ['alice']);
    const other = await open(s.port, '/visits/watch?who=bob');
    await other.until(() => other.events.length >= 1, 'a first event');
    assert.deepEqual(json(other.events[0]), { visits: 2 });
    // Each call reads afresh: the first stream sees bob's visit too.
    await st.until(() => st.events.some((e) => (json(e) as { visits: number }).visits === 2), 'the second visit');
    st.close();
    other.close();
  });

  it('rolls the body back when it throws: 400, nothing written, no stream', async () => {
    const before = await names();
    const r = new Stream(s.port, '/visits/refuse');
    await r.end();
    assert.equal(r.status, 400);
    assert.deepEqual(JSON.parse(r.raw), { error: 'not now' });
    assert.deepEqual(await names(), before);
  });

  it('refuses writes in the polled function: exception event, nothing written', async () => {
    const before = await names();
    const st = await (await open(s.port, '/visits/writes')).end();
    assert.deepEqual(st.events.map((e) => e.type), ['exception']);
    const entry = logged.findLast((e) => e.file === '/visits/⏱writes.js');
    assert.equal(entry?.code, 'LW_MODEL_READ_ONLY');
    assert.match(entry!.message, /the polled function of \/visits\/⏱writes\.js cannot change data/);
    assert.deepEqual(await names(), before);
  });

  it('does not run the body for HEAD', async () => {
    const before = await names();
    const head = new Stream(s.port, '/visits/watch?who=head', {}, 'HEAD');
    await head.end();
    assert.equal(head.status, 200);
    assert.equal(head.headers['content-type'], 'text/event-stream');
    assert.deepEqual(await names(), before);
  });

  it('stops calling the function as soon as the client goes away', async () => {
    const st = await open(s.port, '/visits/watch?who=carol');
    await st.until(() => st.events.length >= 3, 'three events');
    assert.ok(callsOf('/visits/⏱watch.js') >= 3);
    const streamsBefore = s.access.filter((e) => e.path === '/visits/watch').length;
    st.close();
    // The access line of a stream is written when its connection has closed.
    await until(() => s.access.filter((e) => e.path === '/visits/watch').length > streamsBefore, 'the server noticed the client left');
    const seen = callsOf('/visits/⏱watch.js');
    // Fifteen poll intervals later, still no further call.
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(callsOf('/visits/⏱watch.js'), seen);
  });

  const noTurn = engine.name === 'sqlite' ? false : 'PostgreSQL has no write turn the test could hold: the body would not wait';
  it('opens no stream, and calls nothing, when the client left while the body waited', { skip: noTurn }, async () => {
    // The test holds SQLite's write turn, so the body of /visits/⏱late.js waits for its transaction.
    const tx = await s.app.data!.store!.begin();
    const began = begins;
    const socketClosed = new Promise((resolve) => s.server.server.once('connection', (socket) => socket.once('close', resolve)));
    const st = new Stream(s.port, '/visits/late');
    await until(() => begins > began, 'the body waits for its transaction');
    st.close();
    await socketClosed;
    await tx.writer.rollback();
    await until(() => s.access.some((e) => e.path === '/visits/late'), 'the request is over');
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(callsOf('/visits/⏱late.js'), 0);
  });
});

describe('the example of docs/scripting.md', () => {
  it('streams a build\'s progress and ends on completed', async () => {
    const doc = readFileSync(new URL('../../docs/scripting.md', import.meta.url), 'utf8');
    const section = doc.slice(doc.indexOf('## ⏱ Server-sent events'));
    const script = /```js file=\/builds\/⏱progress\.js\n([\s\S]*?)```/.exec(section)![1]!;
    const s = await serveApp({
      '/🎛.yaml': manifest('poll-ms: 20'),
      '/📦/🌐Build.yaml': 'percent:\n  type: integer\n  init: 0\ndone:\n  type: boolean\n  init: false\nwatchers:\n  type: integer\n  init: 0\n',
      '/builds/⏱progress.js': script,
      '/builds/POST.js': "import {Build} from '📦';\nnew Build().id;\n",
      '/builds/📮set.js': "import {Build} from '📦';\nimport {id, percent, done} from 'form';\nconst b = Build.get(id);\nb.percent = Number(percent);\nb.done = done === 'yes';\n({watchers: b.watchers});\n",
    });
    try {
      const post = (path: string, body: string) => rawRequest(s.port, 'POST', path, { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin', accept: 'application/json' }, body);
      const id = JSON.parse((await post('/builds', '')).text) as string;
      const st = await open(s.port, `/builds/progress?id=${id}`);
      await post('/builds/set', `id=${id}&percent=40&done=no`);
      await st.until(() => st.events.length >= 1, 'a progress event');
      const set = JSON.parse((await post('/builds/set', `id=${id}&percent=70&done=no`)).text) as { watchers: number };
      assert.equal(set.watchers, 1, 'the body\'s write was committed');
      await st.until(() => st.events.length >= 2, 'a second progress event');
      await post('/builds/set', `id=${id}&percent=70&done=yes`);
      await st.end();
      assert.deepEqual(st.events.map((e) => [e.type, e.id, json(e)]), [
        ['progress', '1', { percent: 40 }],
        ['progress', '2', { percent: 70 }],
        ['completed', '3', { percent: 100 }],
      ]);
    } finally {
      await s.close();
    }
  });
});

describe('⏱ streams when the server stops', () => {
  it('ends open streams at once with a close event instead of waiting for the shutdown timeout', async () => {
    const s = await serveApp({ '/🎛.yaml': manifest('poll-ms: 20'), '/⏱quiet.js': '(lastEventId) => []\n', '/⏱busy.js': '(lastEventId) => [{at: 1}]\n' });
    const quiet = await open(s.port, '/quiet');
    const busy = await open(s.port, '/busy');
    await busy.until(() => busy.events.length >= 2, 'two events');
    const started = performance.now();
    await s.close(); // the server's shutdown timeout is 120 s
    assert.ok(performance.now() - started < WELL_UNDER_MS);
    await Promise.all([quiet.end(), busy.end()]);
    assert.deepEqual(quiet.events, [{ type: 'close', data: '{"reason":"shutdown"}' }]);
    assert.deepEqual(busy.events.at(-1), { type: 'close', data: '{"reason":"shutdown"}' });
  });
});

describe('⏱ scripts at build time', () => {
  const dirs: string[] = [];
  after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
  const check = (files: AppFiles): Diagnostic[] => {
    const dir = writeApp(files);
    dirs.push(dir);
    return checkApp(dir).filter((d) => d.severity === 'error');
  };

  it('refuses a script whose last expression plainly is not a function, at its line and column', () => {
    const cases: Array<[string, [number, number], string]> = [
      ['const n = 1;\n  ({n})\n', [2, 4], 'an object'],
      ['[1, 2]\n', [1, 1], 'an array'],
      ["// done\n'text'\n", [2, 1], 'a string'],
      ['`a${1}`\n', [1, 1], 'a string'],
      ['const a = 1\n', [1, 1], 'no value'],
      ["import {x} from '&'\nx ? 1 : 'no'\n", [2, 1], 'a value that is not a function'],
      ['(l) => []\n;null\n', [2, 2], 'null'],
    ];
    for (const [source, [line, column], what] of cases) {
      const errors = check({ '/jobs/⏱build.js': source });
      assert.equal(errors.length, 1, source);
      const e = errors[0]!;
      assert.deepEqual([e.code, e.file, e.line, e.column], ['LW_EVENTS_NOT_A_FUNCTION', '/jobs/⏱build.js', line, column], source);
      assert.match(e.message, new RegExp(`^⏱build\\.js must end with a function \\(lastEventId\\) => \\[events\\], which Laneway calls to poll the stream, but it ends with ${what}`), source);
    }
  });

  it('accepts a function, and leaves what it cannot tell to run time', () => {
    for (const source of [
      '(lastEventId) => []\n',
      'const f = (l) => [];\nf\n',
      "import {x} from '&'\nx ? () => [] : () => [1]\n",
      "import {x} from '&'\nif (x) { 1 } else { 2 }\n",
    ]) {
      assert.deepEqual(check({ '/⏱feed.js': source }), [], source);
    }
  });

  it('is no longer refused as unavailable, and routes GET /dir/name', () => {
    const dir = writeApp({ '/jobs/⏱build.js': '(lastEventId) => []\n' });
    dirs.push(dir);
    const app = loadApp(dir);
    assert.deepEqual(app.routes(), [{ method: 'GET', pattern: '/jobs/build', file: '/jobs/⏱build.js', kind: 'events' }]);
  });

  it('checks events: of /🎛.yaml', () => {
    const errors = check({ '/🎛.yaml': 'name: x\nevents: {poll-ms: 5, speed: 2, idle-timeout-ms: 1.5}\n', '/⏱a.js': '(l) => []\n' });
    assert.deepEqual(errors.map((e) => [e.code, e.line]), [['LW_APP_SETTINGS', 2], ['LW_APP_SETTINGS', 2], ['LW_APP_SETTINGS', 2]]);
    assert.match(errors[0]!.message, /`events: poll-ms` takes a whole number of milliseconds from 10 to 600000/);
    assert.match(errors[1]!.message, /`events: speed` is not an event-stream setting: use poll-ms, keep-alive-ms, idle-timeout-ms, max-duration-ms, cpu-ms/);
    assert.match(check({ '/🎛.yaml': 'name: x\nevents: 3\n' })[0]?.message ?? '', /`events:` takes keys and numbers/);
    assert.deepEqual(check({ '/🎛.yaml': 'name: x\nevents: {poll-ms: 250, cpu-ms: 20}\n' }), []);
  });
});

describe('no unhandled rejection', () => {
  it('left by any stream above', () => {
    assert.deepEqual(unhandled, []);
  });
});
