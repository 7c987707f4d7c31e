/**
 * A view that fails while rendering answers an error (docs/views.md "At run time"): 500, or 503
 * when a script ran out of its budget; never a 200 page cut off where it stopped. Development mode
 * shows where (file, line, column, code frame). Every error answer carries X-Request-Id.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { serve, type Served } from '../helpers.js';

const M = '<!--TEMPLATE mustache-->\n';

const FILES = {
  '/📤/Fail.js': "const Thrower = () => { throw 'database offline' }\nconst Big = () => 'x'.repeat(2000000)\nconst Fine = 'fine'\nexport {Thrower, Big, Fine}",
  '/📤/Broken.js': "const Broken = 1\nthrow 'cannot start'\nexport {Broken}",
  '/📤/Huge.js': "const Huge = 'y'.repeat(3000000)\nexport {Huge}",
  '/📤/Card.html': `${M}{{% import {Thrower} from '📤' }}<div class="card">\n  {{Thrower}}\n</div>`,
  '/throws.html': `${M}{{% import {Thrower, Fine} from '📤' }}<h1>{{Fine}}</h1>\n<p>{{Thrower}}</p>\n<p>never shown</p>\n`,
  '/big.html': `${M}{{% import {Big, Fine} from '📤' }}<h1>{{Fine}}</h1>\n<p>{{Big}}</p>\n`,
  '/broken.html': `${M}{{% import {Broken} from '📤' }}<h1>title</h1>{{Broken}}\n`,
  '/huge.html': `${M}{{% import {Huge} from '📤' }}<h1>title</h1>{{Huge}}\n`,
  '/card.html': `${M}{{% import {Card} from '📤' }}<h1>title</h1>\n{{{Card}}}\n`,
  '/deep.html': `${M}{{% partial /_p/ }}{{% import {Fine} from '📤' }}{{> loop}}\n`,
  '/_p/loop.html': `${M}{{% partial /_p/ }}{{% import {Fine} from '📤' }}${'{{#Fine}}'.repeat(300)}{{> loop}}${'{{/Fine}}'.repeat(300)}`,
  '/ok.html': `${M}<p>ok</p>\n`,
  '/sub/⚡NotFound.html': `${M}{{% import {Thrower} from '📤' }}<h1>Lost</h1>{{Thrower}}\n`,
  '/⚡NotFound.html': `${M}<h1>Not here</h1>\n`,
  '/🖥script.js': "throw 'bad input'",
};

describe('render failures over HTTP', () => {
  let prod: Served;
  let dev: Served;
  const logged: Array<Record<string, unknown>> = [];
  before(async () => {
    prod = await serve(FILES, { log: (_message, fields) => logged.push(fields) });
    dev = await serve(FILES, { dev: true, log: () => {} });
  });
  after(async () => {
    await prod.close();
    await dev.close();
  });

  const CASES: Array<[string, number, string]> = [
    ['/throws', 500, 'throws.html:3:4'],
    ['/broken', 500, 'broken.html:2:'],
    ['/card', 500, '📤/Card.html:3:3'],
    ['/deep', 500, '_p/loop.html'],
    ['/big', 503, 'big.html:3:4'],
    ['/huge', 503, 'huge.html:2:'],
  ];

  it('answers 500, or 503 for a script limit, never the page cut off', async () => {
    for (const [path, status] of CASES) {
      const r = await prod.get(path);
      assert.equal(r.status, status, path);
      assert.doesNotMatch(r.text, /⚠️|<h1>(fine|title)<\/h1>/, path);
      assert.match(r.text, new RegExp(`logged with id ${r.headers['x-request-id']}`), path);
      assert.match(String(r.headers['content-type']), /^text\/html/);
      // No file names, positions or messages in production: they are in the log, with the id.
      assert.doesNotMatch(r.text, /\.html|threw|<pre>/, path);
      const entry = logged.find((l) => l.id === r.headers['x-request-id']);
      assert.ok(entry && typeof entry.line === 'number' && typeof entry.column === 'number', path);
    }
  });

  it('shows the file, line, column, message and a code frame in development mode', async () => {
    for (const [path, status, where] of CASES) {
      const r = await dev.get(path);
      assert.equal(r.status, status, path);
      assert.ok(r.text.includes(where), `${path}: ${r.text}`);
    }
    const r = await dev.get('/throws');
    const pre = /<pre>([\s\S]*)<\/pre>/.exec(r.text)![1]!;
    assert.equal(
      pre,
      [
        '/throws.html:3:4: LanewayError: a script function threw a value',
        '',
        '  1 | &#60;!--TEMPLATE mustache--&#62;',
        '  2 | {{% import {Thrower, Fine} from &#39;📤&#39; }}&#60;h1&#62;{{Fine}}&#60;/h1&#62;',
        '&#62; 3 | &#60;p&#62;{{Thrower}}&#60;/p&#62;',
        '    |    ^',
        '  4 | &#60;p&#62;never shown&#60;/p&#62;',
        '  5 | ',
      ].join('\n'),
    );
  });

  it('answers JSON with the same status when the client asks for JSON', async () => {
    const r = await prod.get('/big', { accept: 'application/json' });
    assert.equal(r.status, 503);
    assert.deepEqual(Object.keys(JSON.parse(r.text)), ['error', 'id']);
    const d = await dev.get('/throws', { accept: 'application/json' });
    assert.equal(d.status, 500);
    assert.match(JSON.parse(d.text).detail, /^\/throws\.html:3:4: LanewayError: a script function threw a value\n\n[^]*\n> 3 \| <p>\{\{Thrower\}\}<\/p>\n/);
  });

  it('fails a not-found page that fails, with 500', async () => {
    const r = await prod.get('/sub/missing');
    assert.equal(r.status, 500);
    assert.doesNotMatch(r.text, /Lost/);
  });

  it('keeps serving', async () => {
    for (let i = 0; i < 3; i++) await prod.get('/throws');
    assert.equal((await prod.get('/ok')).status, 200);
  });

  it('puts X-Request-Id on every error answer', async () => {
    const answers = [
      await prod.get('/throws'),
      await prod.get('/big'),
      await prod.get('/big', { accept: 'application/json' }),
      await prod.get('/missing'),
      await prod.get('/missing', { accept: 'application/json' }),
      await prod.request('DELETE', '/ok'),
      await prod.get('/a/%2e%2e/b'),
      await prod.get('/%00'),
      await prod.get('/script'),
      await prod.get('/sub/missing'),
    ];
    for (const r of answers) {
      assert.ok(r.status >= 400, String(r.status));
      assert.match(String(r.headers['x-request-id']), /^[0-9a-f]{6}-[0-9a-z]+$/, `${r.status} ${r.text.slice(0, 80)}`);
    }
    const ids = new Set(answers.map((r) => r.headers['x-request-id']));
    assert.equal(ids.size, answers.length);
  });
});
