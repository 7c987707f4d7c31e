/**
 * The request budget over HTTP (docs/scripting.md "The request budget and its limits"): one CPU
 * budget and one memory allowance per request, shared by the endpoint, its suppliers,
 * function-supplier calls and views; limits that cannot be swallowed; hostile scripts that never
 * take the server down or leave an unhandled rejection; per-request state that never reaches
 * another request; nothing of the host in what a script sees. test/script/budget.test.ts checks the
 * same at the level of one script.
 *
 * Durations are asserted only as generous upper bounds ("ends long before the work would be
 * done", "does not hang"); every server sets the limits a test is not about out of reach.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { checkApp } from '../../src/app/index.js';
import { formatDiagnostic } from '../../src/diag/index.js';
import { rawRequest, serve, writeApp, type Response, type Served } from '../helpers.js';

const M = '<!--TEMPLATE mustache-->\n';
const FORM = 'application/x-www-form-urlencoded';
const JSON_HEADERS = { accept: 'application/json' };
/** Generous: the limited requests end in well under a second; unlimited, they ran for 3 to 13 s. */
const WELL_UNDER_MS = 5000;

// Every hostile script below must leave no unhandled rejection behind (checked at the end).
const unhandled: unknown[] = [];
process.on('unhandledRejection', (reason) => unhandled.push(reason));

type LogEntry = { message: string } & Record<string, unknown>;

function logInto(entries: LogEntry[]) {
  return { log: (message: string, fields: Record<string, unknown>) => entries.push({ message, ...fields }) };
}

/** The code logged for a script endpoint's 5xx answer. */
function loggedCode(entries: LogEntry[], file: string): unknown {
  return entries.findLast((e) => e.file === file)?.code;
}

async function timed(f: () => Promise<Response>): Promise<Response & { ms: number }> {
  const started = performance.now();
  const r = await f();
  return { ...r, ms: performance.now() - started };
}

const repeatLines = (n: number, line: string): string => Array.from({ length: n }, () => line).join('\n');

/** A function supplier that uses about 40,000 callbacks of CPU per call. */
const BURN = `const burn = (i) => { const a = Array.from({length: 200}, (_, k) => k); return a.map((x) => a.map((y) => x + y + i).length).length }\nexport {burn as Burn}`;
/** A supplier that spins `ms` of the clock at its top level (wall clock: CPU on an idle machine). */
const spinner = (name: string, ms: number): string =>
  `const t0 = Date.now()\nconst ${name} = Array.from({length: 3000}).some(() => Array.from({length: 1000}).some(() => Date.now() - t0 >= ${ms}))\nexport {${name}}`;
/** A supplier whose built-ins make about 20 MiB of strings. */
const hog = (name: string): string => `const ${name} = Array.from({length: 20}, (_, i) => String(i % 10).repeat(500000)).length\nexport {${name}}`;

// ---- One CPU budget per request ----------------------------------------------------------------

describe('one CPU budget per request (default 100 ms)', () => {
  let s: Served;
  const logged: LogEntry[] = [];
  before(async () => {
    const spinners: Record<string, string> = {};
    for (let i = 1; i <= 8; i++) spinners[`/📤/S${i}.js`] = spinner(`S${i}`, 60);
    s = await serve(
      {
        '/🎛.yaml': 'limits: {memory-mb: 4096, string-length: 50000000, array-length: 5000000}\n',
        '/📤/{}Burn.js': BURN,
        '/📤/Items.js': `const items = Array.from({length: 2000}, (_, i) => i)\nexport {items}`,
        ...spinners,
        '/view.html': `${M}{{% import {Burn, items} from '📤' }}\n<p>{{#items}}{{Burn this}}{{/items}}</p>\n`,
        '/view-once.html': `${M}{{% import {Burn} from '📤' }}\n<p>{{Burn 3}}</p>\n`,
        '/🖥calls.js': `import {Burn} from '📤'\nArray.from({length: 2000}, Burn).length`,
        '/🖥calls-once.js': `import {Burn} from '📤'\nArray.from({length: 2}, Burn)`,
        '/🖥sorted.js': `const big = Array.from({length: 100000}, (_, i) => (i * 7919) % 100003)\n${repeatLines(60, 'big.toSorted()')}\nbig.length`,
        '/🖥replaced.js': `${repeatLines(60, "'ab'.repeat(300000).replaceAll('a', 'bb')")}\n'done'`,
        '/🖥spin-one.js': `import {S1} from '📤'\n({spun: S1})`,
        '/🖥spin-eight.js': `import {S1, S2, S3, S4, S5, S6, S7, S8} from '📤'\n;[S1, S2, S3, S4, S5, S6, S7, S8]`,
      },
      logInto(logged),
    );
  });
  after(() => s.close());

  test('a view calling a function supplier 2000 times ends with an error answer instead of running for seconds', async () => {
    assert.equal((await s.get('/view-once')).text, '<p>200</p>\n', 'one call renders');
    const r = await timed(() => s.get('/view'));
    assert.ok(r.status >= 500, `status ${r.status}: ${r.text.slice(0, 120)}`);
    assert.doesNotMatch(r.text, /200200200/, 'no page cut off where it stopped');
    assert.ok(r.ms < WELL_UNDER_MS, `answered after ${r.ms.toFixed(0)} ms`);
  });

  test('a script calling an imported function supplier 2000 times: 503 LW_SCRIPT_CPU_LIMIT', async () => {
    assert.deepEqual(JSON.parse((await s.get('/calls-once', JSON_HEADERS)).text), [200, 200]);
    const r = await timed(() => s.get('/calls', JSON_HEADERS));
    assert.equal(r.status, 503);
    assert.equal(loggedCode(logged, '/🖥calls.js'), 'LW_SCRIPT_CPU_LIMIT');
    assert.ok(r.ms < WELL_UNDER_MS, `answered after ${r.ms.toFixed(0)} ms`);
  });

  test('straight-line built-in calls at the top level (60 × toSorted of 100,000; 60 × replaceAll) end with 503', async () => {
    for (const [path, file] of [['/sorted', '/🖥sorted.js'], ['/replaced', '/🖥replaced.js']] as const) {
      const r = await timed(() => s.get(path, JSON_HEADERS));
      assert.equal(r.status, 503, path);
      assert.equal(loggedCode(logged, file), 'LW_SCRIPT_CPU_LIMIT', path);
      assert.ok(r.ms < WELL_UNDER_MS, `${path} answered after ${r.ms.toFixed(0)} ms`);
    }
  });

  test('suppliers of one request share its budget: one spins 60 ms and passes, eight together do not', async () => {
    const one = await s.get('/spin-one', JSON_HEADERS);
    assert.equal(one.status, 200, one.text);
    const eight = await s.get('/spin-eight', JSON_HEADERS);
    assert.equal(eight.status, 503, eight.text);
    assert.equal(loggedCode(logged, '/🖥spin-eight.js'), 'LW_SCRIPT_CPU_LIMIT');
  });
});

// ---- Memory allowance, sizes refused before the work ----------------------------------------------

describe('one memory allowance per request (default 64 MiB), and sizes refused before the work', () => {
  let s: Served;
  const logged: LogEntry[] = [];
  before(async () => {
    s = await serve(
      {
        '/🎛.yaml': 'limits: {cpu-ms: 60000}\n',
        '/📤/M1.js': hog('M1'),
        '/📤/M2.js': hog('M2'),
        '/📤/M3.js': hog('M3'),
        '/📤/M4.js': hog('M4'),
        '/🖥memory-two.js': `import {M1, M2} from '📤'\nM1 + M2`,
        '/🖥memory-four.js': `import {M1, M2, M3, M4} from '📤'\nM1 + M2 + M3 + M4`,
        '/🖥parses.js': `const text = '"' + 'x'.repeat(900000) + '"'\n${repeatLines(30, 'JSON.parse(text)')}\ntext.length`,
        '/🖥nfkd.js': `'\\uFDFA'.repeat(100000).normalize('NFKD').length`,
        '/🖥encode.js': `encodeURIComponent('é'.repeat(400000)).length`,
        '/🖥json-values.js': `JSON.parse('[' + Array.from({length: 100001}, () => '0').join(',') + ']').length`,
        '/🖥json-objects.js': `JSON.parse('[' + Array.from({length: 60000}, () => '{"a":1,"b":2}').join(',') + ']').length`,
        '/🖥ok.js': `({ok: true})`,
      },
      logInto(logged),
    );
  });
  after(() => s.close());

  test('suppliers of one request share the allowance: two of 20 MiB pass, four do not', async () => {
    const two = await s.get('/memory-two', JSON_HEADERS);
    assert.equal(two.status, 200, two.text);
    assert.equal(two.text, '40');
    const four = await s.get('/memory-four', JSON_HEADERS);
    assert.equal(four.status, 503);
    assert.equal(loggedCode(logged, '/🖥memory-four.js'), 'LW_SCRIPT_MEMORY_LIMIT');
  });

  test('JSON.parse of a 900 KB text 30 times: 503 LW_SCRIPT_MEMORY_LIMIT, and the process serves the next request', async () => {
    const r = await s.get('/parses', JSON_HEADERS);
    assert.equal(r.status, 503);
    assert.equal(loggedCode(logged, '/🖥parses.js'), 'LW_SCRIPT_MEMORY_LIMIT');
    const next = await s.get('/ok', JSON_HEADERS);
    assert.equal(next.status, 200);
    assert.deepEqual(JSON.parse(next.text), { ok: true });
  });

  test("normalize('NFKD') expanding past the string limit: 503", async () => {
    assert.equal((await s.get('/nfkd', JSON_HEADERS)).status, 503);
    assert.ok(['LW_SCRIPT_STRING_LIMIT', 'LW_SCRIPT_MEMORY_LIMIT'].includes(String(loggedCode(logged, '/🖥nfkd.js'))));
  });

  test('encodeURIComponent of 400,000 é: 503 LW_SCRIPT_STRING_LIMIT', async () => {
    assert.equal((await s.get('/encode', JSON_HEADERS)).status, 503);
    assert.equal(loggedCode(logged, '/🖥encode.js'), 'LW_SCRIPT_STRING_LIMIT');
  });

  test('JSON.parse of a text with more than 100,000 values: 503 LW_SCRIPT_ARRAY_LIMIT, also with no array that long', async () => {
    for (const [path, file] of [['/json-values', '/🖥json-values.js'], ['/json-objects', '/🖥json-objects.js']] as const) {
      assert.equal((await s.get(path, JSON_HEADERS)).status, 503, path);
      assert.equal(loggedCode(logged, file), 'LW_SCRIPT_ARRAY_LIMIT', path);
    }
  });
});

// ---- Default limits, and /🎛.yaml limits: ------------------------------------------------------------

describe('default limits and /🎛.yaml limits:', () => {
  const MiB = 1024 * 1024;
  const SCRIPTS = {
    '/📮replace.js': `import {t} from 'form'\n(t ?? '').replaceAll('a', 'b').length`,
    '/🖥long.js': `'x'.repeat(2000000).length`,
    '/🖥eleven.js': `Array.from({length: 11}, (_, i) => i).length`,
  };
  let plain: Served;
  let raised: Served;
  const logged: LogEntry[] = [];
  before(async () => {
    plain = await serve(SCRIPTS, logInto(logged));
    raised = await serve({ ...SCRIPTS, '/🎛.yaml': 'limits: {string-length: 3000000, array-length: 10}\n' }, logInto(logged));
  });
  after(async () => {
    await plain.close();
    await raised.close();
  });

  test("(t ?? '').replaceAll('a', 'b') of a posted 1 MiB field answers its length (urlencoded and JSON)", async () => {
    const n = MiB - 2;
    const form = await timed(() => plain.request('POST', '/replace', { 'content-type': FORM, ...JSON_HEADERS }, 't=' + 'a'.repeat(n)));
    assert.equal(form.status, 200, form.text.slice(0, 200));
    assert.equal(form.text, String(n));
    assert.ok(form.ms < WELL_UNDER_MS, `answered after ${form.ms.toFixed(0)} ms`);
    const m = MiB - 8;
    const json = await timed(() => plain.request('POST', '/replace', { 'content-type': 'application/json', ...JSON_HEADERS }, JSON.stringify({ t: 'a'.repeat(m) })));
    assert.equal(json.status, 200, json.text.slice(0, 200));
    assert.equal(json.text, String(m));
    assert.ok(json.ms < WELL_UNDER_MS, `answered after ${json.ms.toFixed(0)} ms`);
  });

  test('a string of 2,000,000 characters fails by default and works with string-length: 3000000', async () => {
    assert.equal((await plain.get('/long', JSON_HEADERS)).status, 503);
    assert.equal(loggedCode(logged, '/🖥long.js'), 'LW_SCRIPT_STRING_LIMIT');
    const r = await raised.get('/long', JSON_HEADERS);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.text, '2000000');
  });

  test('array-length: 10 lowers the array limit', async () => {
    assert.equal((await plain.get('/eleven', JSON_HEADERS)).text, '11');
    assert.equal((await raised.get('/eleven', JSON_HEADERS)).status, 503);
  });

  test('a malformed limits: is a build error LW_APP_SETTINGS at /🎛.yaml', () => {
    const BAD = [
      'limits: {cpu-ms: fast}\n',
      'limits: {cpu-ms: 0}\n',
      'limits: {cpu-ms: 2.5}\n',
      'limits: {memory-mb: 100000}\n',
      'limits: {speed: 3}\n',
      'limits: [100, 200]\n',
      'limits: 100\n',
    ];
    for (const yaml of BAD) {
      const dir = writeApp({ '/🎛.yaml': yaml, '/🖥ok.js': '1' });
      const lines = checkApp(dir).filter((d) => d.severity === 'error').map(formatDiagnostic);
      assert.ok(lines.some((l) => /^\/?🎛\.yaml:\d+:\d+: .*\[LW_APP_SETTINGS\]/u.test(l)), `${JSON.stringify(yaml)} gave:\n${lines.join('\n')}`);
    }
    const good = writeApp({ '/🎛.yaml': 'limits: {cpu-ms: 250, string-length: 5000000, array-length: 200000, depth: 300, memory-mb: 128}\n', '/🖥ok.js': '1' });
    assert.deepEqual(checkApp(good).filter((d) => d.severity === 'error').map(formatDiagnostic), []);
  });
});

// ---- Hostile scripts: limits not swallowed, the server stays up --------------------------------------

/** A request (POST by default) whose body arrives `delayMs` after the headers. */
function lateBodyRequest(port: number, path: string, body: string, delayMs: number, method = 'POST'): Promise<Response> {
  const headers = { 'content-type': FORM, 'content-length': String(Buffer.byteLength(body)), ...JSON_HEADERS };
  return rawRequest(port, method, path, headers, body, delayMs);
}

describe('hostile scripts: limits are not swallowed, and the server stays up', () => {
  let s: Served;
  const logged: LogEntry[] = [];
  const HOOK = "const k = 'th' + 'en'\nconst fn = () => 1\n";
  const BURN_ALL = 'const big = Array.from({length: 1000}, (_, i) => i)\nconst burn = () => big.map((x) => big.map((y) => big.map((z) => x + y + z))).length\n';
  /** [path, file, source, status, logged code]. */
  const HOSTILE: Array<[string, string, string, number, string]> = [
    ['/h/then', '/h/🖥then.js', `${HOOK}const o = {}\no[k] = fn\no`, 500, 'LW_SCRIPT_FORBIDDEN_ACCESS'],
    ['/h/then-finally', '/h/🖥then-finally.js', `${HOOK}const f = () => { try { const o = {}; o[k] = fn; return o } finally { return 'swallowed' } }\nf()`, 500, 'LW_SCRIPT_FORBIDDEN_ACCESS'],
    ['/h/then-entries', '/h/🖥then-entries.js', `${HOOK}Object.fromEntries([[k, fn]])`, 500, 'LW_SCRIPT_FORBIDDEN_ACCESS'],
    ['/h/then-assign', '/h/🖥then-assign.js', `${HOOK}Object.assign({}, {[k]: fn})`, 500, 'LW_SCRIPT_FORBIDDEN_ACCESS'],
    ['/h/string', '/h/🖥string.js', "const f = () => { try { return 'x'.repeat(1e9) } finally { return 'swallowed' } }\nf()", 503, 'LW_SCRIPT_STRING_LIMIT'],
    ['/h/array', '/h/🖥array.js', "const f = () => { try { return Array.from({length: 1e9}) } finally { return 'swallowed' } }\nf()", 503, 'LW_SCRIPT_ARRAY_LIMIT'],
    ['/h/depth', '/h/🖥depth.js', "const deep = (n) => deep(n + 1)\nconst f = () => { try { return deep(0) } catch (e) { return 'caught' } finally { return 'swallowed' } }\nf()", 503, 'LW_SCRIPT_DEPTH_LIMIT'],
    ['/h/cpu', '/h/🖥cpu.js', `${BURN_ALL}const f = () => { try { return burn() } finally { return 'swallowed' } }\nf()`, 503, 'LW_SCRIPT_CPU_LIMIT'],
    ['/h/map', '/h/🖥map.js', `;[1, 2].map(() => { try { return 'x'.repeat(1e9) } catch (e) { return 'caught' } finally { return 'swallowed' } })`, 503, 'LW_SCRIPT_STRING_LIMIT'],
    ['/h/again', '/h/🖥again.js', "let r = 'none'\ntry { 'x'.repeat(1e9) } catch (e) { r = 'caught' }\ntry { r = 'second' } finally { r = 'finally' }\nr", 503, 'LW_SCRIPT_STRING_LIMIT'],
    ['/h/supplier-then', '/h/🖥supplier-then.js', "import {MakeThen} from '📤'\nMakeThen(1)", 500, 'LW_SCRIPT_FORBIDDEN_ACCESS'],
    ['/h/supplier-swallow', '/h/🖥supplier-swallow.js', "import {Swallow} from '📤'\nconst r = {v: Swallow(1)}\nr", 503, 'LW_SCRIPT_STRING_LIMIT'],
  ];
  /** POSTs whose script waits for the body, then misbehaves. */
  const LATE: Array<[string, string, string, number, string]> = [
    ['/h/late-cpu', '/h/📮late-cpu.js', `import {t} from 'form'\n${BURN_ALL};[t].map(() => { try { return burn() } finally { return 'swallowed' } })`, 503, 'LW_SCRIPT_CPU_LIMIT'],
    ['/h/late-then', '/h/📮late-then.js', `import {t} from 'form'\n${HOOK}const f = () => { try { const o = {t}; o[k] = fn; return o } finally { return 'swallowed' } }\nf()`, 500, 'LW_SCRIPT_FORBIDDEN_ACCESS'],
    ['/h/late-string', '/h/📮late-string.js', `import {t} from 'form'\n;[t].map((x) => { try { return x.repeat(1e9) } finally { return 'swallowed' } })`, 503, 'LW_SCRIPT_STRING_LIMIT'],
  ];
  before(async () => {
    const files: Record<string, string> = {
      '/🎛.yaml': 'limits: {memory-mb: 4096}\n',
      '/📤/{}MakeThen.js': "const k = 'th' + 'en'\nconst make = (x) => { const o = {x}; o[k] = () => x; return o }\nexport {make as MakeThen}",
      '/📤/{}Swallow.js': "const swallow = (x) => { try { return 'x'.repeat(1e9) } finally { return 'swallowed' } }\nexport {swallow as Swallow}",
      '/h/view-then.html': `${M}{{% import {MakeThen} from '📤' }}\n<p>{{MakeThen 1}}</p>\n`,
      '/h/view-swallow.html': `${M}{{% import {Swallow} from '📤' }}\n<p>{{Swallow 1}}</p>\n`,
      '/🖥ok.js': `({ok: true})`,
    };
    for (const [, file, source] of [...HOSTILE, ...LATE]) files[file] = source;
    s = await serve(files, logInto(logged));
  });
  after(() => s.close());

  for (const [path, file, , status, code] of HOSTILE) {
    test(`${path} answers ${status} ${code}, then the server answers the next request`, async () => {
      const r = await s.get(path, JSON_HEADERS);
      assert.equal(r.status, status, r.text.slice(0, 200));
      assert.doesNotMatch(r.text, /swallowed|caught/);
      assert.equal(loggedCode(logged, file), code);
      assert.equal((await s.get('/ok', JSON_HEADERS)).status, 200);
    });
  }

  for (const [path, file, , status, code] of LATE) {
    test(`${path}, after waiting for a late body, answers ${status} ${code}`, async () => {
      const r = await lateBodyRequest(s.port, path, 't=late', 100);
      assert.equal(r.status, status, r.text.slice(0, 200));
      assert.doesNotMatch(r.text, /swallowed|caught/);
      assert.equal(loggedCode(logged, file), code);
      assert.equal((await s.get('/ok', JSON_HEADERS)).status, 200);
    });
  }

  test('views calling a hostile function supplier answer with an error, never the swallowed value', async () => {
    for (const path of ['/h/view-then', '/h/view-swallow']) {
      const r = await s.get(path);
      assert.ok(r.status >= 500, `${path}: ${r.status} ${r.text.slice(0, 120)}`);
      assert.doesNotMatch(r.text, /swallowed/);
    }
  });

  test('all of them at once, between healthy requests: every healthy request is answered', async () => {
    const requests: Array<Promise<Response>> = [];
    for (const [path] of HOSTILE) requests.push(s.get(path, JSON_HEADERS), s.get('/ok', JSON_HEADERS));
    for (const [path] of LATE) requests.push(lateBodyRequest(s.port, path, 't=late', 50), s.get('/ok', JSON_HEADERS));
    const answers = await Promise.all(requests);
    answers.forEach((r, i) => {
      if (i % 2 === 1) assert.equal(r.status, 200, `healthy request ${i}`);
      else assert.ok(r.status >= 500, `hostile request ${i}: ${r.status}`);
    });
  });

  test('no unhandled rejection', async () => {
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.deepEqual(unhandled, []);
  });
});

// ---- Nothing of one request reaches another --------------------------------------------------------

describe('per-request state', () => {
  let s: Served;
  before(async () => {
    const endpoint = `import {ix} from '📤'\nimport {t} from 'form'\nconst r = {t, exported: ix().url.pathname, direct: Redirect.index().url.pathname}\nr`;
    s = await serve({
      '/📤/Ix.js': 'const ix = Redirect.index\nexport {ix}',
      '/one/📮x.js': endpoint,
      '/two/📮y.js': endpoint,
      '/two/deeper/📮z.js': endpoint,
      '/📤/Waits.js': "import {t} from 'form'\nconst Waits = 'got ' + t\nexport {Waits}",
      '/one/page.html': `${M}{{% import {ix, Waits} from '📤' }}\n<p>{{Waits}} {{ix.path}}</p>\n`,
      '/two/deeper/page.html': `${M}{{% import {ix} from '📤' }}\n<p>{{ix.path}}</p>\n`,
    });
  });
  after(() => s.close());

  test('a supplier exporting Redirect.index: each of two concurrent requests sees its own path', async () => {
    const late = lateBodyRequest(s.port, '/one/x', 't=late', 200);
    await new Promise((resolve) => setTimeout(resolve, 50)); // the first request is waiting for its body
    const early = await s.request('POST', '/two/y', { 'content-type': FORM, ...JSON_HEADERS }, 't=early');
    const deeper = await s.request('POST', '/two/deeper/z', { 'content-type': FORM, ...JSON_HEADERS }, 't=deeper');
    assert.deepEqual(JSON.parse(early.text), { t: 'early', exported: '/two/', direct: '/two/' });
    assert.deepEqual(JSON.parse(deeper.text), { t: 'deeper', exported: '/two/deeper/', direct: '/two/deeper/' });
    const first = await late;
    assert.equal(first.status, 200, first.text);
    assert.deepEqual(JSON.parse(first.text), { t: 'late', exported: '/one/', direct: '/one/' });
  });

  test('a view calling the exported Redirect.index after a wait sees its own path', async () => {
    // A GET whose body arrives late: the view's supplier Waits imports from 'form'.
    const late = lateBodyRequest(s.port, '/one/page', 't=late', 200, 'GET');
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal((await s.get('/two/deeper/page')).text, '<p>/two/deeper/</p>\n');
    assert.equal((await s.request('POST', '/two/y', { 'content-type': FORM, ...JSON_HEADERS }, 't=early')).status, 200);
    const first = await late;
    assert.equal(first.text, '<p>got late /one/</p>\n');
  });
});

// ---- Nothing of the host leaks; errors name their position ----------------------------------------

describe('what a script sees of the host, and error positions', () => {
  let s: Served;
  const logged: LogEntry[] = [];
  before(async () => {
    s = await serve(
      {
        '/🖥stack.js': `let r = []\ntry { null.x } catch (e) { r = [e.name, e.stack] }\ntry { decodeURIComponent('%') } catch (e) { r.push(e.name, e.stack) }\nr`,
        '/🖥text.js': `const f = (a, b = 2) => a + b\nconst r = [String(f), \`\${f}\`, f.toString(), '' + f, String(JSON.parse)]\nr`,
        '/🖥crash.js': `const o = null\n\n  o.x`,
        '/🖥empty-dir.js': `const ok = 1\nRedirect.dir('')`,
        '/🖥empty-name.js': `const ok = 1\nRedirect.dir('a').name('')`,
      },
      logInto(logged),
    );
  });
  after(() => s.close());

  test('a caught error has a stack of /file.js:line:column frames only', async () => {
    const [name, stack, name2, stack2] = JSON.parse((await s.get('/stack', JSON_HEADERS)).text) as string[];
    assert.equal(name, 'TypeError');
    assert.equal(name2, 'URIError');
    for (const st of [stack!, stack2!]) {
      const frames = st.split('\n').slice(1);
      assert.ok(frames.length >= 1, st);
      for (const f of frames) assert.match(f, /^ {4}at \/🖥stack\.js:\d+:\d+$/u, st);
      assert.doesNotMatch(st, /file:|node:|dist\/|laneway:realm|laneway-script|<anonymous>/);
    }
  });

  test('the text of a script arrow is its own text; of a built-in, native code', async () => {
    const text = '(a, b = 2) => a + b';
    assert.deepEqual(JSON.parse((await s.get('/text', JSON_HEADERS)).text), [text, text, text, text, 'function parse() { [native code] }']);
  });

  test('an uncaught run-time error is logged with file:line:column', async () => {
    assert.equal((await s.get('/crash', JSON_HEADERS)).status, 500);
    const entry = logged.findLast((e) => e.file === '/🖥crash.js');
    assert.equal(entry?.code, 'LW_SCRIPT_RUNTIME');
    assert.match(entry!.message, /\/🖥crash\.js:3:\d+: TypeError/u);
  });

  test("Redirect.dir('') and name('') answer 500 LW_SCRIPT_RUNTIME naming the line, not a redirect to //", async () => {
    for (const [path, file] of [['/empty-dir', '/🖥empty-dir.js'], ['/empty-name', '/🖥empty-name.js']] as const) {
      const r = await s.get(path, JSON_HEADERS);
      assert.equal(r.status, 500, `${path}: ${r.status} ${r.headers.location ?? ''}`);
      assert.equal(r.headers.location, undefined);
      const entry = logged.findLast((e) => e.file === file);
      assert.equal(entry?.code, 'LW_SCRIPT_RUNTIME');
      assert.match(entry!.message, new RegExp(`${file.replace(/[.]/g, '\\.')}:2:\\d+: `, 'u'));
    }
  });
});

// ---- Views draw from the same budget -----------------------------------------------------------

describe('a view that renders for too long or too much ends with 503', () => {
  let s: Served;
  let big: Served;
  before(async () => {
    const items = `${Array.from({ length: 1000 }, (_, i) => `- ${i}`).join('\n')}\n`;
    s = await serve({
      '/_items.yaml': items,
      // 10^9 items: the CPU budget ends it, long before it would be done.
      '/loops.html': `${M}{{% yaml /_items.yaml as Items }}\n<p>{{#Items}}{{#Items}}{{#Items}}x{{/Items}}{{/Items}}{{/Items}}</p>\n`,
      '/ok.html': `${M}<p>{{#Items}}{{.}}{{/Items}}</p>\n{{% yaml /_items.yaml as Items }}\n`,
    }, { log: () => {} });
    big = await serve({
      '/🎛.yaml': 'limits:\n  cpu-ms: 60000\n  memory-mb: 1\n',
      '/_items.yaml': items,
      // 10^6 items of 10 characters: 20 MB of page, past a 1 MiB allowance.
      '/big.html': `${M}{{% yaml /_items.yaml as Items }}\n{{#Items}}{{#Items}}0123456789{{/Items}}{{/Items}}\n`,
    }, { log: () => {} });
  });
  after(async () => {
    await s.close();
    await big.close();
  });

  test('nested sections past the CPU budget: 503, quickly, and the server goes on', async () => {
    const r = await timed(() => s.get('/loops'));
    assert.equal(r.status, 503);
    assert.ok(r.ms < WELL_UNDER_MS, `answered after ${r.ms.toFixed(0)} ms`);
    assert.ok(r.headers['x-request-id']);
    const ok = await s.get('/ok');
    assert.equal(ok.status, 200);
    assert.match(ok.text, /<p>0123/);
  });

  test('a page larger than the memory allowance: 503', async () => {
    const r = await big.get('/big');
    assert.equal(r.status, 503);
  });
});
