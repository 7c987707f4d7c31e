/**
 * The conventions of the `laneway` command (docs/cli.md "Conventions"), run as users run it: bin/laneway in
 * a child process. Versions; usage errors (exit 2, before the app is loaded, in Laneway's words
 * with a hint); colour only on a terminal, never with NO_COLOR; `--log json` lines; a port in use;
 * timestamps in the pretty log.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { relative } from 'node:path';
import { rawRequest, writeApp } from '../helpers.js';

const BIN = fileURLToPath(new URL('../../bin/laneway', import.meta.url));
const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** The environment of a plain pipe: no colour forced or refused, no $PORT. */
function plainEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: '', ...extra };
  for (const name of ['npm_command', 'FORCE_COLOR', 'NO_COLOR', 'LANEWAY_AUTH_DEV_USERS', 'LANEWAY_SOURCES']) if (!(name in extra)) delete env[name];
  return env;
}
/** bin/laneway as the user typed it from this process's directory: relative, or absolute when shorter. */
const typed = relative(process.cwd(), BIN).length <= BIN.length ? relative(process.cwd(), BIN) : BIN;
const run = (args: string[], extra: Record<string, string> = {}) => spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', env: plainEnv(extra), timeout: 60_000 });

const ESCAPE = /\x1b\[/;
const NODE_TEXT = /ERR_PARSE_ARGS|ERR_[A-Z_]+|TypeError|\n\s+at /;

/** An app that does not compile: a usage error must be found before the app is even read. */
const BROKEN = writeApp({ '/a/GET.js': '({ ok: true })', '/🖥a.js': '({ ok: true })' });
const FINE = writeApp({ '/index.html': '<p>fine</p>' });

describe('versions', () => {
  for (const flag of ['--version', '-V', '-v']) {
    test(`${flag} prints the version of package.json and exits 0`, () => {
      const r = run([flag]);
      assert.equal(r.status, 0);
      assert.equal(r.stdout, `${VERSION}\n`);
      assert.equal(r.stderr, '');
    });
  }
});

describe('usage errors: exit 2, before the app is loaded, in Laneway\'s words with a hint', () => {
  const cases: Array<{ args: string[]; message: RegExp; hint: string; env?: Record<string, string> }> = [
    { args: ['bogus'], message: /^laneway: unknown command "bogus"$/m, hint: 'laneway --help' },
    { args: ['serv', BROKEN], message: /^laneway: unknown command "serv" \(did you mean serve\?\)$/m, hint: 'laneway --help' },
    { args: ['serve', BROKEN, '--nope'], message: /^laneway serve: unknown option --nope$/m, hint: 'laneway serve --help' },
    { args: ['serve', BROKEN, '--prot', '3000'], message: /^laneway serve: unknown option --prot \(did you mean --port\?\)$/m, hint: 'laneway serve --help' },
    { args: ['check', BROKEN, '-x'], message: /^laneway check: unknown option -x$/m, hint: 'laneway check --help' },
    { args: ['serve'], message: /^laneway serve: give the directory of the app/m, hint: 'laneway serve --help' },
    { args: ['serve', BROKEN, FINE], message: /^laneway serve: expected one app directory, got 2/m, hint: 'laneway serve --help' },
    { args: ['serve', '/nonexistent/laneway/app'], message: /^laneway serve: the directory \/nonexistent\/laneway\/app does not exist/m, hint: 'laneway serve --help' },
    { args: ['check', '/nonexistent/laneway/app'], message: /^laneway check: the directory \/nonexistent\/laneway\/app does not exist/m, hint: 'laneway check --help' },
    { args: ['serve', BROKEN, '--port', 'abc'], message: /^laneway serve: --port "abc" is not a port: give a whole number from 1 to 65535, or 0 for any free port$/m, hint: 'laneway serve --help' },
    { args: ['serve', BROKEN, '--port', '-1'], message: /^laneway serve: --port "-1" is not a port/m, hint: 'laneway serve --help' },
    { args: ['serve', BROKEN, '--port', '70000'], message: /^laneway serve: --port "70000" is not a port/m, hint: 'laneway serve --help' },
    { args: ['serve', BROKEN, '--port', '3e3'], message: /^laneway serve: --port "3e3" is not a port/m, hint: 'laneway serve --help' },
    { args: ['serve', BROKEN, '--port'], message: /^laneway serve: --port needs a value$/m, hint: 'laneway serve --help' },
    { args: ['serve', BROKEN], env: { PORT: 'http' }, message: /^laneway serve: \$PORT "http" is not a port/m, hint: 'laneway serve --help' },
    { args: ['serve', BROKEN, '--log', 'xml'], message: /^laneway serve: --log "xml" is not a log format: use pretty, json or off$/m, hint: 'laneway serve --help' },
    { args: ['serve', BROKEN, '--dev=yes'], message: /^laneway serve: --dev takes no value/m, hint: 'laneway serve --help' },
    { args: ['serve', BROKEN, '--body-limit', 'lots'], message: /^laneway serve: --body-limit "lots" is not a size/m, hint: 'laneway serve --help' },
  ];
  for (const c of cases) {
    test(`laneway ${c.args.map((a) => (a === BROKEN || a === FINE ? 'APP' : a)).join(' ')}`, () => {
      const r = run(c.args, c.env);
      assert.equal(r.status, 2, r.stderr);
      assert.match(r.stderr, c.message);
      // bin/laneway run by its path: the hint names it as typed from here (src/cli/invoked.ts).
      assert.ok(r.stderr.includes(`Run "${c.hint.replace(/^laneway/, typed)}"`), r.stderr);
      assert.doesNotMatch(r.stderr, NODE_TEXT);
      // Nothing of the app was read: its conflict would have been listed.
      assert.doesNotMatch(r.stderr + r.stdout, /LW_ROUTE_CONFLICT/);
      assert.equal(r.stdout, '');
    });
  }

  test('without a command: the usage on standard error, exit 2', () => {
    const r = run([]);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /^Usage: laneway <command>/);
  });

  test('the help lists every command, -V, and the exit codes', () => {
    const r = run(['--help']);
    assert.equal(r.status, 0);
    for (const word of ['new DIR', 'serve DIR', 'check DIR', '-V, --version', 'usage error']) assert.ok(r.stdout.includes(word), word);
  });
});

describe('colour', () => {
  test('none on a pipe: usage errors, build problems and the log are plain text', async () => {
    const usage = run(['serve', BROKEN, '--port', 'abc']);
    assert.doesNotMatch(usage.stderr, ESCAPE);
    const broken = run(['serve', BROKEN, '--port', '0']);
    assert.equal(broken.status, 1);
    assert.match(broken.stderr, /LW_ROUTE_CONFLICT/);
    assert.doesNotMatch(broken.stderr, ESCAPE);
    const s = await startServer(['serve', FINE, '--port', '0']);
    await rawRequest(s.port, 'GET', '/');
    await rawRequest(s.port, 'GET', '/missing');
    const { out, err } = await s.stop();
    assert.match(out, /GET \/missing 404/);
    assert.doesNotMatch(out + err, ESCAPE);
  });

  test('FORCE_COLOR=1 colours a pipe; FORCE_COLOR=0 and NO_COLOR do not; JSON lines never are', () => {
    assert.match(run(['serve', BROKEN, '--port', 'abc'], { FORCE_COLOR: '1' }).stderr, ESCAPE);
    assert.doesNotMatch(run(['serve', BROKEN, '--port', 'abc'], { FORCE_COLOR: '0' }).stderr, ESCAPE);
    assert.doesNotMatch(run(['serve', BROKEN, '--port', 'abc'], { NO_COLOR: '1' }).stderr, ESCAPE);
    const json = run(['serve', BROKEN, '--port', '0', '--log', 'json'], { FORCE_COLOR: '1' });
    assert.equal(json.status, 1);
    for (const line of json.stderr.trim().split('\n')) assert.doesNotThrow(() => JSON.parse(line), line);
    assert.doesNotMatch(json.stderr, ESCAPE);
  });

  // A real terminal, through util-linux `script` (a pseudo-terminal for the child).
  const script = existsSync('/usr/bin/script') ? '/usr/bin/script' : undefined;
  test('on a terminal: colour, unless NO_COLOR is set', { skip: script ? false : 'util-linux script(1) is not installed' }, () => {
    const command = `'${process.execPath}' '${BIN}' serve /nonexistent/laneway/app`;
    const onTerminal = (extra: Record<string, string>) => spawnSync(script!, ['-qec', command, '/dev/null'], { encoding: 'utf8', env: plainEnv({ TERM: 'xterm', ...extra }), timeout: 60_000 });
    const coloured = onTerminal({});
    assert.equal(coloured.status, 2);
    assert.match(coloured.stdout, ESCAPE);
    assert.match(coloured.stdout, /does not exist/);
    const plain = onTerminal({ NO_COLOR: '1' });
    assert.equal(plain.status, 2);
    assert.match(plain.stdout, /does not exist/);
    assert.doesNotMatch(plain.stdout, ESCAPE);
  });
});

interface Running {
  child: ChildProcessWithoutNullStreams;
  port: number;
  out(): string;
  err(): string;
  /** SIGTERM, then what it printed and its exit code. */
  stop(): Promise<{ out: string; err: string; code: number | null }>;
}

/** Starts `laneway serve …` and waits for its startup line (pretty or JSON). */
async function startServer(args: string[], extra: Record<string, string> = {}): Promise<Running> {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['pipe', 'pipe', 'pipe'], env: plainEnv(extra) });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const port = await new Promise<number>((resolve, reject) => {
    const look = () => {
      const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    };
    child.stdout.on('data', look);
    void exited.then((code) => reject(new Error(`exited ${code}\nstdout: ${out}\nstderr: ${err}`)));
  });
  return {
    child,
    port,
    out: () => out,
    err: () => err,
    async stop() {
      child.kill('SIGTERM');
      const code = await exited;
      return { out, err, code };
    },
  };
}

describe('the log', () => {
  test('pretty: the startup line exactly, then access lines that start with an ISO time (UTC)', async () => {
    const s = await startServer(['serve', FINE, '--port', '0']);
    await rawRequest(s.port, 'GET', '/');
    const { out, code } = await s.stop();
    assert.equal(code, 0);
    const lines = out.trim().split('\n');
    assert.equal(lines[0], `listening on http://127.0.0.1:${s.port}`);
    assert.match(lines[1]!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z GET \/ 200 \d+\.\dms$/);
  });

  test('--log json: every line of both streams is JSON, the startup line included', async () => {
    const app = writeApp({
      '/🎛.yaml': 'locale: en\n', // no name: a warning at start
      '/index.html': '<p>json</p>',
      '/📮boom.js': "JSON.parse('{x');\n",
    });
    const s = await startServer(['serve', app, '--port', '0', '--log', 'json']);
    assert.equal((await rawRequest(s.port, 'GET', '/')).status, 200);
    const boom = await rawRequest(s.port, 'POST', '/boom', { Origin: `http://127.0.0.1:${s.port}`, Host: `127.0.0.1:${s.port}` });
    assert.equal(boom.status, 500);
    const { out, err, code } = await s.stop();
    assert.equal(code, 0);
    const parse = (text: string) => text.trim().split('\n').map((line) => {
      assert.doesNotThrow(() => JSON.parse(line), `not JSON: ${line}`);
      return JSON.parse(line) as Record<string, unknown>;
    });
    const outLines = parse(out);
    const errLines = parse(err);
    for (const l of [...outLines, ...errLines]) assert.match(String(l.time), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const url = `http://127.0.0.1:${s.port}`;
    assert.deepEqual(
      { ...outLines[0], time: undefined },
      { time: undefined, type: 'listening', message: `listening on ${url}`, url, host: '127.0.0.1', port: s.port },
    );
    assert.ok(outLines.some((l) => l.type === 'access' && l.method === 'GET' && l.path === '/' && l.status === 200));
    assert.ok(outLines.some((l) => l.type === 'access' && l.path === '/boom' && l.status === 500));
    assert.ok(errLines.some((l) => l.type === 'warning' && l.code === 'LW_SETTINGS_NAME' && l.file === '🎛.yaml' && l.line === 1));
    assert.ok(errLines.some((l) => l.type === 'error' && l.id === boom.headers['x-request-id']), err);
  });

  test('--log json: a build failure is JSON too, one line per problem and a summary', () => {
    const r = run(['serve', BROKEN, '--port', '0', '--log', 'json']);
    assert.equal(r.status, 1);
    const lines = r.stderr.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.ok(lines.some((l) => l.type === 'error' && l.code === 'LW_ROUTE_CONFLICT' && typeof l.file === 'string' && l.line === 1 && l.column === 1));
    assert.deepEqual(lines.at(-1)?.message, '1 error, 0 warnings');
  });
});

describe('a port in use', () => {
  test('names --port and, on Linux, the process that holds it; exits 1 without a stack', async () => {
    const holder = createServer();
    const port = await new Promise<number>((resolve) => holder.listen(0, '127.0.0.1', () => resolve((holder.address() as AddressInfo).port)));
    try {
      const r = await new Promise<{ status: number | null; stderr: string }>((resolve) => {
        // Asynchronous: this process must keep answering /proc while the child looks at it.
        const child = spawn(process.execPath, [BIN, 'serve', FINE, '--port', String(port)], { env: plainEnv() });
        let stderr = '';
        child.stderr.on('data', (d) => (stderr += d));
        child.once('exit', (status) => resolve({ status, stderr }));
      });
      assert.ok(r.status === 1 || r.status === 2, `exit ${r.status}`);
      assert.match(r.stderr, new RegExp(`^laneway serve: port ${port} on 127\\.0\\.0\\.1 is already in use by .*: stop it, or choose another port with --port`, 'm'));
      assert.doesNotMatch(r.stderr, NODE_TEXT);
      if (process.platform === 'linux') assert.match(r.stderr, new RegExp(`\\(pid ${process.pid}\\)`), 'this test process holds the port');
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
  });

  test('--log json: the same as one JSON error line with the port and the holder', async () => {
    const holder = createServer();
    const port = await new Promise<number>((resolve) => holder.listen(0, '127.0.0.1', () => resolve((holder.address() as AddressInfo).port)));
    try {
      const r = await new Promise<{ status: number | null; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, [BIN, 'serve', FINE, '--port', String(port), '--log', 'json'], { env: plainEnv() });
        let stderr = '';
        child.stderr.on('data', (d) => (stderr += d));
        child.once('exit', (status) => resolve({ status, stderr }));
      });
      assert.equal(r.status, 1);
      const line = JSON.parse(r.stderr.trim()) as Record<string, unknown>;
      assert.equal(line.type, 'error');
      assert.equal(line.code, 'EADDRINUSE');
      assert.equal(line.port, port);
      assert.match(String(line.message), /--port/);
      if (process.platform === 'linux') assert.equal(line.pid, process.pid);
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
  });
});
