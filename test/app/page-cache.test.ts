/**
 * Content pages rendered once per path (src/app/request/page-cache.ts): which views qualify, what is kept,
 * what never is; and, over HTTP, that a cached page answers the same bytes and ETag and a 304.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cachedByPath, isContentPage } from '../../src/app/request/page-cache.js';
import type { Reply, RequestInfo } from '../../src/app/endpoint/endpoint.js';
import type { ParamDefinition } from '../../src/app/definitions/params.js';
import type { CompiledView } from '../../src/template/index.js';
import { serve, type Served } from '../helpers.js';

const view = (imports: Array<[string, string]>, usesMessages = false) =>
  ({ imports: imports.map(([module, name]) => ({ module, name, file: '/x.html' })), usesMessages }) as unknown as CompiledView;

const request = (path: string, params: RequestInfo['params'] = []) => ({ path, params }) as unknown as RequestInfo;

describe('page cache', () => {
  it('a view is a content page when it imports only static data and path parameters by name', () => {
    assert.equal(isContentPage(view([])), true);
    assert.equal(isContentPage(view([['🗄', 'Article'], ['🔗', 'article'], ['🎨', '*'], ['🎛', 'Manage'], ['util', 'format']])), true);
    assert.equal(isContentPage(view([['🔗', 'Request']])), false, 'the request (url, headers)');
    assert.equal(isContentPage(view([['🔗', '*']])), false);
    assert.equal(isContentPage(view([['📦', 'Task']])), false, 'database models');
    assert.equal(isContentPage(view([['📤', 'Items']])), false, 'suppliers run per request');
    assert.equal(isContentPage(view([['&', 'q']])), false, 'the query string');
    assert.equal(isContentPage(view([['🍪', 'theme']])), false, 'cookies');
    assert.equal(isContentPage(view([['🗄', 'Article']], true)), false, 'flash messages');
  });

  it('renders a path once; other paths, failures and database-backed parameters are rendered each time', async () => {
    const calls: string[] = [];
    let fail = false;
    const render = (req: RequestInfo): Reply => {
      calls.push(req.path);
      return fail ? { type: 'error', status: 500, code: 'LW_VIEW_RENDER', message: 'x' } : { type: 'body', status: 200, contentType: 'text/html', body: `page ${req.path}`, etag: true };
    };
    const params = new Map<string, ParamDefinition>([
      ['/doc', { form: 'field', field: '🗄.Article.uid' } as ParamDefinition],
      ['/task', { form: 'field', field: '📦.Task.id' } as ParamDefinition],
    ]);
    const handle = cachedByPath(render, params);
    const a1 = handle(request('/a')) as Extract<Reply, { type: 'body' }>;
    const a2 = handle(request('/a')) as Extract<Reply, { type: 'body' }>;
    assert.deepEqual(calls, ['/a']);
    assert.equal(a1, a2);
    assert.ok(Buffer.isBuffer(a1.body) && a1.body.toString() === 'page /a');
    assert.match(String(a1.etag), /^"[A-Za-z0-9_-]{27}"$/, 'the ETag is computed once, kept as text');
    handle(request('/b'));
    assert.deepEqual(calls, ['/a', '/b']);
    fail = true;
    handle(request('/c'));
    handle(request('/c'));
    assert.deepEqual(calls, ['/a', '/b', '/c', '/c'], 'failures are not kept');
    fail = false;
    const doc = { name: 'doc', dir: '', value: 'x' };
    handle(request('/x', [doc]));
    handle(request('/x', [doc]));
    assert.equal(calls.filter((c) => c === '/x').length, 1, 'static-backed parameters are cached');
    const task = { name: 'task', dir: '', value: 'y' };
    handle(request('/y', [task]));
    handle(request('/y', [task]));
    assert.equal(calls.filter((c) => c === '/y').length, 2, 'database-backed parameters are not');
  });
});

describe('a cached content page over HTTP', () => {
  let s: Served;
  before(async () => {
    s = await serve({
      '🗄/📄Doc.yaml': 'title: string\nuid:\n  type: document-uid\n  path: true\nbody: document-markdown\n',
      '🗄/Doc/a/one.md': '---\ntitle: One\n---\n# Hi\n',
      '{doc}🔗.yaml': 'field: 🗄.Doc.uid\n',
      '{doc}.html': "<!--TEMPLATE mustache-->\n{{% import {doc} from '🔗' }}\n<h1>{{doc.title}}</h1>{{{doc.get.body}}}\n",
      'where.html': "<!--TEMPLATE mustache-->\n{{% import {Request} from '🔗' }}\n<p>{{Request.url}}</p>\n",
    });
  });
  after(() => s.close());

  it('answers the same bytes and ETag each time, and 304 to If-None-Match', async () => {
    const r1 = await s.get('/a/one');
    const r2 = await s.get('/a/one');
    assert.equal(r1.status, 200);
    assert.match(r1.text, /<h1>One<\/h1><h1>Hi<\/h1>/);
    assert.equal(r2.text, r1.text);
    assert.equal(r2.headers.etag, r1.headers.etag);
    const r3 = await s.get('/a/one', { 'if-none-match': String(r1.headers.etag) });
    assert.equal(r3.status, 304);
  });

  it('a page reading the request is rendered per request', async () => {
    const a = await s.get('/where', { host: 'a.example' });
    const b = await s.get('/where', { host: 'b.example' });
    assert.match(a.text, /a\.example/);
    assert.match(b.text, /b\.example/);
  });
});
