/**
 * outcomeToResponse: every row of docs/scripting.md "Completion value → response", and the model
 * errors of docs/queries.md "Errors".
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { LanewayError } from '../../src/diag/index.js';
import { WebSafe } from '../../src/shared/index.js';
import { ScriptRedirect, outcomeToResponse, type RunOutcome } from '../../src/script/index.js';
import { run } from './helpers.js';

const GET = { method: 'GET', path: '/app/here', acceptsJson: false, ajax: false };
const AJAX_POST = { method: 'POST', path: '/app/here', acceptsJson: true, ajax: true };
const value = (v: unknown): RunOutcome => ({ kind: 'value', value: v });
const thrown = (v: unknown): RunOutcome => ({ kind: 'thrown', value: v });

describe('outcomeToResponse', () => {
  it('answers an object with JSON 200', () => {
    assert.deepEqual(outcomeToResponse(value({ a: 1, b: [true, null] }), GET), { kind: 'json', status: 200, body: '{"a":1,"b":[true,null]}', failed: false });
  });

  it('answers an array (a mapped stream) with a JSON array', () => {
    assert.deepEqual(outcomeToResponse(value([{ n: 1 }]), GET), { kind: 'json', status: 200, body: '[{"n":1}]', failed: false });
  });

  it('serialises Dates as ISO strings, web-safe HTML as its text, Redirect builders as {path, messages}', () => {
    const redirect = new ScriptRedirect({ path: '/a/', messages: [{ type: 'success', value: 'Saved' }] });
    const body = (outcomeToResponse(value({ d: new Date(0), h: new WebSafe('<b>x</b>'), redirect }), GET) as { body: string }).body;
    assert.deepEqual(JSON.parse(body), { d: '1970-01-01T00:00:00.000Z', h: '<b>x</b>', redirect: { path: '/a/', messages: [{ type: 'success', value: 'Saved' }] } });
  });

  it('redirects a string starting with / within the app (302)', () => {
    assert.deepEqual(outcomeToResponse(value('/tasks/12?x=1'), GET), { kind: 'redirect', status: 302, location: '/tasks/12?x=1', failed: false });
  });

  it('redirects a string starting with http to that URL (302)', () => {
    assert.deepEqual(outcomeToResponse(value('https://example.org/a b'), GET), { kind: 'redirect', status: 302, location: 'https://example.org/a%20b', failed: false });
  });

  it('redirects a Redirect builder (302), failed when marked invalid', () => {
    const r = new ScriptRedirect({ path: '/a/1/', query: [['k', 'v w']], hash: 'top' });
    assert.deepEqual(outcomeToResponse(value(r), GET), { kind: 'redirect', status: 302, location: '/a/1/?k=v%20w#top', failed: false });
    const invalid = new ScriptRedirect({ path: '/form', failed: true });
    assert.deepEqual(outcomeToResponse(value(invalid), GET), { kind: 'redirect', status: 302, location: '/form', failed: true });
  });

  it('redirects a thrown Redirect (302), counted as a failure', () => {
    assert.deepEqual(outcomeToResponse(thrown(new ScriptRedirect({ path: '/login' })), GET), { kind: 'redirect', status: 302, location: '/login', failed: true });
  });

  it('answers a thrown string with 400 {"error": s}', () => {
    assert.deepEqual(outcomeToResponse(thrown('InvalidImageFileName'), GET), { kind: 'json', status: 400, body: '{"error":"InvalidImageFileName"}', failed: true });
  });

  it('answers a thrown object with 400 and the object as it is', () => {
    assert.deepEqual(outcomeToResponse(thrown({ error: 'Too short', field: 'title' }), GET), { kind: 'json', status: 400, body: '{"error":"Too short","field":"title"}', failed: true });
  });

  it('answers a limit with 503, leaving the words to the server (app/endpoint/answers.ts)', () => {
    const error = new LanewayError('LW_SCRIPT_CPU_LIMIT', '/a.js: used more than 100 ms of CPU', { status: 503 });
    assert.deepEqual(outcomeToResponse({ kind: 'limit', error }, GET), { kind: 'error', status: 503, code: 'LW_SCRIPT_CPU_LIMIT', limit: true });
  });

  it('answers an uncaught error with 500, without echoing its message', () => {
    const error = new LanewayError('LW_SCRIPT_RUNTIME', '/a.js:3: TypeError: secret detail', { status: 500 });
    assert.deepEqual(outcomeToResponse({ kind: 'error', error }, GET), { kind: 'error', status: 500, code: 'LW_SCRIPT_RUNTIME' });
  });

  it('keeps the status a host error carries (404 for a missing model)', () => {
    const error = new LanewayError('LW_HTTP_NOT_FOUND', 'Not found', { status: 404 });
    assert.deepEqual(outcomeToResponse({ kind: 'error', error }, GET), { kind: 'error', status: 404, message: 'Not found', code: 'LW_HTTP_NOT_FOUND' });
  });

  it('reroutes an AJAX POST/PUT/DELETE emitting an app path to GET of that path', () => {
    for (const method of ['POST', 'PUT', 'DELETE']) {
      assert.deepEqual(outcomeToResponse(value('/tasks/12#x'), { ...AJAX_POST, method }), { kind: 'reroute', path: '/tasks/12' });
    }
    assert.deepEqual(outcomeToResponse(value(new ScriptRedirect({ path: '/a/', query: [['p', '1']] })), AJAX_POST), { kind: 'reroute', path: '/a/?p=1' });
  });

  it('does not reroute a GET, a non-AJAX POST, an external URL, or a failure', () => {
    assert.equal(outcomeToResponse(value('/x'), { ...AJAX_POST, method: 'GET' }).kind, 'redirect');
    assert.equal(outcomeToResponse(value('/x'), { ...AJAX_POST, ajax: false }).kind, 'redirect');
    assert.equal(outcomeToResponse(value('https://example.org/'), AJAX_POST).kind, 'redirect');
    assert.equal(outcomeToResponse(thrown(new ScriptRedirect({ path: '/x' })), AJAX_POST).kind, 'redirect');
    assert.equal(outcomeToResponse(value(new ScriptRedirect({ path: '/x', failed: true })), AJAX_POST).kind, 'redirect');
  });

  it('refuses redirect targets that leave the origin or carry control characters', () => {
    for (const target of ['//evil.example/', '/\\evil.example', '/a\r\nSet-Cookie: x=1', '/a\nb', 'http://user:pw@evil.example/', 'https://', 'http:/x', 'httpx://a']) {
      const r = outcomeToResponse(value(target), GET);
      assert.deepEqual(r, { kind: 'error', status: 500, message: 'The script emitted a redirect target that is not a path of this app or an http(s) URL.', code: 'LW_SCRIPT_BAD_REDIRECT' }, JSON.stringify(target));
    }
    const r = outcomeToResponse(value(new ScriptRedirect({ path: '//evil.example/' })), GET);
    assert.equal(r.kind, 'error');
  });

  it('percent-encodes spaces and non-ASCII characters in app paths', () => {
    assert.deepEqual(outcomeToResponse(value('/ä b/📤'), GET), { kind: 'redirect', status: 302, location: '/%C3%A4%20b/%F0%9F%93%A4', failed: false });
  });

  it('answers no completion value with 204 and an empty body', () => {
    assert.deepEqual(outcomeToResponse(value(undefined), GET), { kind: 'json', status: 204, body: '', failed: false });
  });

  it('answers an emitted function with 500', () => {
    assert.deepEqual(outcomeToResponse(value(() => 1), GET), { kind: 'error', status: 500, message: 'The script emitted a function, which cannot be sent as a response.', code: 'LW_SCRIPT_BAD_OUTPUT' });
  });

  it('answers plain strings, numbers and booleans with JSON', () => {
    assert.deepEqual(outcomeToResponse(value('hello'), GET), { kind: 'json', status: 200, body: '"hello"', failed: false });
    assert.deepEqual(outcomeToResponse(value(3), GET), { kind: 'json', status: 200, body: '3', failed: false });
    assert.deepEqual(outcomeToResponse(value(null), GET), { kind: 'json', status: 200, body: 'null', failed: false });
  });

  it('works end to end from a script', async () => {
    const r = outcomeToResponse(await run(`Redirect.index().name('other').success('Done')`), GET);
    assert.deepEqual(r, { kind: 'redirect', status: 302, location: '/app/other', failed: false });
    const t = outcomeToResponse(await run(`throw Redirect.dir('login')`), GET);
    assert.deepEqual(t, { kind: 'redirect', status: 302, location: '/login/', failed: true });
    const j = outcomeToResponse(await run(`throw ({error: 'Nope', field: 'name'})`), GET);
    assert.deepEqual(j, { kind: 'json', status: 400, body: '{"error":"Nope","field":"name"}', failed: true });
  });
});
