/**
 * Random requests against a real server: whatever the method, path, headers or body, the server
 * answers with a sensible status, never a 500 caused by input, and keeps answering.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { serve } from '../helpers.js';

const M = '<!--TEMPLATE mustache-->\n';

test('random methods, paths, headers and bodies never crash the server or yield a 500', async () => {
  const s = await serve({
    '/index.html': `${M}{{% import {Name} from '📤' }}<p>{{Name}}</p>`,
    '/📤/Name.js': `import {name} from '&'\nconst Name = name || 'anon'\nexport {Name}`,
    '/api/📮echo.js': `import {title} from 'form'\nimport {tags} from 'form[]'\nimport {Form} from 'form{}';\n({ title, tags, keys: Form.keys() })`,
    '/api/🖥get.js': `import {q} from '&';\n({ q })`,
    '/items/{id}/🔗.yaml': 'values: [a, b]\n',
    '/items/{id}/GET.js': `import {id} from '🔗';\n({ id: id.$value })`,
    '/static.css': 'body{}',
  });
  const segment = fc.oneof(
    fc.constantFrom('', '.', '..', '%2e', '%2F', '%00', '_x', '%F0%9F%93%A4', 'api', 'echo', 'get', 'items', 'a', 'b', 'index', 'static.css', '%E2%9A%A1', '%C0%AE', '%ZZ', '%', '~'),
    fc.string({ maxLength: 6 }).map((x) => encodeURIComponent(x)),
  );
  const path = fc.array(segment, { maxLength: 4 }).map((segs) => '/' + segs.join('/'));
  const query = fc.option(fc.string({ maxLength: 12 }).map((x) => '?' + encodeURIComponent(x).replace(/%3D/g, '=').replace(/%26/g, '&')), { nil: '' });
  const method = fc.constantFrom('GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH');
  const contentType = fc.constantFrom(
    undefined,
    'application/x-www-form-urlencoded',
    'application/json',
    'multipart/form-data; boundary=b',
    'multipart/form-data',
    'text/plain',
    'application/json; charset=utf-8',
  );
  const body = fc.oneof(
    fc.constant(''),
    fc.string({ maxLength: 40 }),
    fc.constantFrom('{"title":"x"}', '[1]', '{"title":{"a":1}}', 'title=a&tags=1&tags=2', '--b\r\nContent-Disposition: form-data; name="t"\r\n\r\nv\r\n--b--\r\n', '{"__proto__":1}', 'null'),
  );
  const accept = fc.constantFrom(undefined, 'application/json', 'text/html', '*/*', 'application/json;q=0, text/html');
  const allowed = new Set([200, 204, 302, 304, 308, 400, 404, 405, 413]);

  await fc.assert(
    fc.asyncProperty(method, path, query, contentType, body, accept, async (m, p, q, ct, b, acc) => {
      const headers: Record<string, string> = {};
      if (ct) headers['content-type'] = ct;
      if (acc) headers.accept = acc;
      const sendBody = m !== 'GET' && m !== 'HEAD' && m !== 'OPTIONS' ? b : undefined;
      const r = await s.request(m, p + q, headers, sendBody);
      assert.ok(allowed.has(r.status), `${m} ${p}${q} (${ct}) ${JSON.stringify(sendBody)} → ${r.status} ${r.text.slice(0, 200)}`);
    }),
    { numRuns: 300 },
  );
  assert.equal((await s.get('/?name=still')).text, '<p>still</p>');
  await s.close();
});
