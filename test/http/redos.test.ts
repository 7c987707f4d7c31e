/**
 * No regular expression that reads what a visitor sends can hold the server (docs/architecture.md
 * "Regular expressions on what a visitor sends"). Each hostile request below is built to make a
 * backtracking pattern try every way to split a long run. On the patterns these replaced, each
 * held the server for far longer than the bound: the form-control attribute list was exponential
 * (3 s at 25 letters), a geo value cubic (2 s at 2,000 characters), a double quadratic (1 s at
 * 30,000 digits, and a form field may hold 1 MB), the trim of a link address quadratic (1.5 s for
 * each 40,000-byte html value). The long headers are guards: every header pattern is linear. The
 * server runs in a process of its own, one per case; each hostile request, and a request to
 * another endpoint sent every 50 ms meanwhile, must be answered within 5 s.
 */
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { rawRequest, writeApp, type Response } from '../helpers.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const HELPERS = new URL('../helpers.ts', import.meta.url).href;

const BOUND_MS = 5000;

const APP = {
  '📦/🌐Place.yaml': 'title?: string\nprice?: double\nspot?: geo\nattributes?: html\n',
  '📤/⏳PlaceForm.yaml': '🎛: {requirePreviousState: false}\n📦.Place: [title, price, spot]\n',
  'api/📮place.js': "import {Place} from '📦';\nimport {PlaceForm} from '📤';\nconst place = new Place();\nPlaceForm.submit(place);\n({id: place.id});\n",
  // A query filter on a double field, its value from the body.
  'api/📮find.js': "import {Place} from '📦';\nimport {price} from 'form';\n({count: Place.price(price).count()});\n",
  // A record whose html field a view prints as form-control attributes: {{{input.attributes}}}.
  'api/📮note.js': "import {Place} from '📦';\nimport {text, title} from 'form';\nconst place = new Place();\nplace.title = title;\nplace.attributes = text;\n({id: place.id});\n",
  'attrs/index.html': "<!--TEMPLATE mustache-->\n{{% import {input} from '📤' }}\n<p><input {{{input.attributes}}}></p>\n",
  'attrs/📤/index.js': "import {Place} from '📦';\nimport {t} from '&';\nconst input = Place.title(t).get();\nexport {input};\n",
  // Up to 20 embedded values, each with an html field of max 20000: one assignment checks them all.
  '📦/📎Part.yaml': 'body:\n  type: html\n  max: 20000\n',
  '📦/🌐Page.yaml': 'parts[]: Part\n',
  'api/📮parts.js': "import {Page} from '📦';\nimport {bodies} from 'form[]';\nconst page = new Page();\npage.parts = bodies.map((body) => ({body}));\n({id: page.id, parts: page.parts.length});\n",
  'api/🖥ping.js': '({pong: true})\n',
  'index.html': '<!doctype html><html><head><title>Home</title><link rel="stylesheet" href="/style.css"></head><body><p>Home</p></body></html>\n',
  'style.css': 'body { color: black; }\n',
};

const BOUNDARY = 'laneway-redos-51d2';
function multipart(fields: Record<string, string>): Buffer {
  const parts = Object.entries(fields).map(([name, value]) => `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`);
  return Buffer.from(parts.join('') + `--${BOUNDARY}--\r\n`);
}

/** The app served by a process of its own (trusting loopback proxies), so that a held server cannot hold this process's clocks. */
function serveApart(dir: string): Promise<{ child: ChildProcess; port: number }> {
  const code = `import { serve } from ${JSON.stringify(HELPERS)};\nconst s = await serve(${JSON.stringify(dir)}, { trustProxy: 'loopback' });\nprocess.stdout.write('port ' + s.port + '\\n');\n`;
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

describe('regular expressions on what a visitor sends', () => {
  let dir: string;
  let child: ChildProcess | undefined;
  let port = 0;
  const host = () => `127.0.0.1:${port}`;
  const get = (path: string, headers: Record<string, string> = {}) => rawRequest(port, 'GET', path, { host: host(), ...headers });
  const post = (path: string, type: string, body: string | Buffer, headers: Record<string, string> = {}) =>
    rawRequest(port, 'POST', path, { host: host(), origin: `http://${host()}`, accept: 'application/json', 'content-type': type, ...headers }, body);
  const postJson = (path: string, value: unknown) => post(path, 'application/json', JSON.stringify(value));
  const postForm = (path: string, fields: Record<string, string>) => post(path, `multipart/form-data; boundary=${BOUNDARY}`, multipart(fields));

  before(() => {
    dir = writeApp(APP);
  });
  after(() => {
    rmSync(dir, { recursive: true, force: true });
  });
  // A server of its own for each case: one held by a case cannot fail the next.
  beforeEach(async () => {
    ({ child, port } = await serveApart(dir));
  });
  afterEach(() => {
    child?.kill('SIGKILL');
    child = undefined;
  });

  /**
   * Sends `hostile` and, every 50 ms until it is answered, a GET to another endpoint. A request
   * not answered within BOUND_MS fails the test then (not when the server gets to it).
   */
  async function whileServing(hostile: () => Promise<Response>): Promise<Response> {
    const within = <T>(p: Promise<T>, what: string): Promise<T> =>
      new Promise<T>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${what} was not answered within ${BOUND_MS} ms`)), BOUND_MS);
        p.then(
          (v) => (clearTimeout(timer), resolve(v)),
          (e: unknown) => (clearTimeout(timer), reject(e)),
        );
      });
    const pings: Array<Promise<unknown>> = [];
    const ping = (): void => {
      pings.push(within(get('/api/ping', { accept: 'application/json' }), 'a request to another endpoint').then((r) => assert.equal(r.status, 200)));
    };
    const timer = setInterval(ping, 50);
    try {
      return await within(hostile(), 'the hostile request');
    } finally {
      clearInterval(timer);
      ping();
      await Promise.all(pings);
    }
  }

  it('answers 400 to a long path ending in a bad escape', async () => {
    const r = await whileServing(() => get('/' + 'a'.repeat(40) + '%'));
    assert.equal(r.status, 400);
    const long = await whileServing(() => get('/' + 'a'.repeat(8000) + '%'));
    assert.equal(long.status, 400);
  });

  it('refuses a double of 500,000 digits and a letter, and a geo value of 200,000 digits (422)', async () => {
    const price = await whileServing(() => postForm('/api/place', { Place_price: '1'.repeat(500_000) + 'x' }));
    assert.equal(price.status, 422, price.text.slice(0, 300));
    assert.match(price.text, /Price must be a number, such as 9\.99/);
    const spot = await whileServing(() => postForm('/api/place', { Place_spot: '1'.repeat(100_000) + ',' + '1'.repeat(100_000) + '.0,0' }));
    assert.equal(spot.status, 422, spot.text.slice(0, 300));
    assert.match(spot.text, /Spot must be \\"latitude,longitude\\"/);
    // Values as a visitor types them still pass.
    const fine = await postForm('/api/place', { Place_title: 'Quay', Place_price: ' 9.99 ', Place_spot: ' 48.8566 , 2.3522 ' });
    assert.equal(fine.status, 200, fine.text);
  });

  it('refuses a query filter of 500,000 digits and an exponent letter on a double field', async () => {
    // A wrong filter value is the script's mistake (LW_MODEL_QUERY, logged): 500.
    const r = await whileServing(() => postJson('/api/find', { price: '1'.repeat(500_000) + 'E' }));
    assert.equal(r.status, 500, r.text.slice(0, 300));
    const fine = await postJson('/api/find', { price: '9.99' });
    assert.equal(fine.status, 200, fine.text);
  });

  it('prints nothing for an html value of 40 letters and a "!" as form-control attributes', async () => {
    const written = await postJson('/api/note', { title: 'hostile', text: 'a'.repeat(40) + '!' });
    assert.equal(written.status, 200, written.text);
    const r = await whileServing(() => get('/attrs/?t=hostile'));
    assert.equal(r.status, 200);
    assert.match(r.text, /<p><input ><\/p>/);
    // A value that is a list of attributes still prints.
    await postJson('/api/note', { title: 'fine', text: 'hidden data-x' });
    assert.match((await get('/attrs/?t=fine')).text, /<p><input hidden data-x><\/p>/);
  });

  it('cleans 20 html values, each a link to javascript: and 40,000 spaces', async () => {
    // The link is removed, so each value is valid once cleaned and the next one is read.
    const value = `<a href="javascript:${' '.repeat(39_950)}x">a</a>`;
    const r = await whileServing(() => postJson('/api/parts', { bodies: Array(20).fill(value) }));
    assert.equal(r.status, 200, r.text.slice(0, 300));
    assert.equal((JSON.parse(r.text) as { parts: number }).parts, 20);
  });

  it('answers requests with long headers of each kind a visitor sends', async () => {
    const long = 7000;
    const cases: Array<[string, Record<string, string>]> = [
      ['Accept-Encoding', { 'accept-encoding': ' '.repeat(long) + 'x' }],
      ['Accept-Encoding list', { 'accept-encoding': 'gzip;q=0.5, '.repeat(long / 12) + ';' }],
      ['If-None-Match', { 'if-none-match': '"' + '-'.repeat(long) + 'br"x' }],
      ['If-None-Match weak', { 'if-none-match': 'W/'.repeat(long / 2) + '"' }],
      ['If-Modified-Since', { 'if-modified-since': '1'.repeat(long) + 'x' }],
      ['Range', { range: 'bytes=' + '0'.repeat(long) + '-' + '1'.repeat(100) + 'x' }],
      ['Range list', { range: 'bytes=' + '0-1,'.repeat(long / 4) }],
      ['Forwarded', { forwarded: 'for="' + '\\a'.repeat(long / 2) }],
      ['Forwarded list', { forwarded: 'for=1.1.1.1;proto=http;'.repeat(long / 24) + '=' }],
      ['X-Forwarded-For', { 'x-forwarded-for': '1.1.1.1, '.repeat(long / 9) + '::ffff:' }],
      ['X-Forwarded-Host', { 'x-forwarded-host': 'a.'.repeat(long / 2) + ':' }],
      ['X-Forwarded-Proto', { 'x-forwarded-proto': 'https,'.repeat(long / 6) + ' ' }],
      ['Host', { host: 'a.'.repeat(long / 2) + ':' + '1'.repeat(100) + 'x' }],
      ['Host IPv6', { host: '[' + ':'.repeat(long) }],
      ['Cookie', { cookie: 'a=' + '"'.repeat(long) }],
      ['Cookie list', { cookie: 'x=1; '.repeat(long / 5) + 'sid=' + 'A'.repeat(100) }],
      ['Accept', { accept: 'text/html;q=0.9, '.repeat(long / 17) + '*' }],
    ];
    for (const [name, headers] of cases) {
      for (const path of ['/style.css', '/']) {
        const r = await whileServing(() => get(path, headers));
        assert.ok(r.status >= 200 && r.status < 500, `${name} on ${path}: ${r.status}`);
      }
    }
    const origin = await whileServing(() => post('/api/place', 'application/json', '{}', { origin: 'http://' + 'a'.repeat(long) + '\\' }));
    assert.equal(origin.status, 403);
  });
});
