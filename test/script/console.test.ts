/**
 * console.log/info/warn/error in scripts (docs/scripting.md "Logging"): each line reaches the
 * app's log with the request id and the script's file:line:column, bounded per request.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { serve, type Served } from '../helpers.js';

describe('console in scripts', () => {
  const logged: Array<{ message: string; fields: Record<string, unknown> }> = [];
  let s: Served;
  before(async () => {
    s = await serve(
      {
        'api/🖥three.js': "const n = 2\nconsole.log('one', n, {a: [1]})\nconsole.warn('two')\nconsole.error('three');\n({ok: true})\n",
        'api/🖥loop.js': "Array.from({length: 500}, (_, i) => console.info('line ' + i + ' ' + 'x'.repeat(5000)));\n({ok: true})\n",
        'api/🖥fails.js': "console.log('before')\nconst o = null\no.x\n",
      },
      { log: (message, fields) => logged.push({ message, fields }) },
    );
  });
  after(() => s.close());
  const of = (id: unknown) => logged.filter((l) => l.fields.id === id);

  it('three lines: each with the request id, its level and the file:line:column that logged it', async () => {
    const r = await s.get('/api/three');
    assert.equal(r.status, 200, r.text);
    // A 200 has no X-Request-Id: the lines name the id of their request, the same for the three.
    const id = logged.at(-1)!.fields.id;
    assert.match(String(id), /^[0-9a-f]{6}-[0-9a-z]+$/);
    const lines = of(id);
    assert.deepEqual(
      lines.map((l) => [l.message, l.fields.console, l.fields.file, l.fields.line]),
      [
        ['/api/🖥three.js:2:9: console.log: one 2 {"a":[1]}', 'log', '/api/🖥three.js', 2],
        ['/api/🖥three.js:3:9: console.warn: two', 'warn', '/api/🖥three.js', 3],
        ['/api/🖥three.js:4:9: console.error: three', 'error', '/api/🖥three.js', 4],
      ],
    );
  });

  it('a loop: at most 50 lines of at most 2000 characters, then one line saying how many were left out', async () => {
    const r = await s.get('/api/loop');
    assert.equal(r.status, 200, r.text);
    const lines = of(logged.at(-1)!.fields.id);
    assert.equal(lines.length, 51);
    assert.ok(lines.slice(0, 50).every((l) => l.fields.console === 'info' && String(l.message).length < 2100), 'each line cut');
    assert.match(lines[0]!.message, /console\.info: line 0 x+…$/);
    assert.equal(lines[50]!.message, 'console: 450 more lines of this request left out (at most 50 per request)');
  });

  it('a script that fails: its lines before the failure are logged too, with the same id', async () => {
    const r = await s.get('/api/fails');
    assert.equal(r.status, 500);
    const lines = of(r.headers['x-request-id']);
    assert.equal(lines[0]!.message, '/api/🖥fails.js:1:9: console.log: before');
    assert.match(lines[1]!.message, /TypeError/);
  });
});
