/**
 * Runs the HTTP examples of a documentation page (docs/request.md, docs/suppliers.md).
 *
 * Conventions of those pages:
 * - a block whose info string holds `file=/path` is a file of the app, whole. The files of every
 *   section make up **one** app, except the sections holding a `diagnostics` block: their files
 *   form an app of their own, which must check with exactly those lines (formatted as
 *   `laneway check` prints them) and is never served;
 * - ```` ```http request ```` is a request: `METHOD /path` (optionally ` HTTP/1.1`), header lines,
 *   a blank line, the body. `Host: example.com` is sent unless the block gives a `Host`;
 * - the next ```` ```http response ```` is what it must answer: `HTTP/1.1 <status> <reason>`, the
 *   headers that must be there with exactly these values (others may be there too), a blank line,
 *   the body. A JSON body is compared as JSON (so it may be wrapped over lines), where a string
 *   holding `…` matches any string with the rest around it; any other body is compared as text,
 *   without the line breaks at its end; no body means the body is not compared.
 *
 * Requests are sent in the order of the page, to one server of the app, so a POST shown earlier
 * made the records a later GET reads.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { diagnosticsOf, serve, type Served } from '../helpers.js';
import { fileOf, readDoc, sections, type Block } from './markdown.js';

interface Exchange {
  section: string;
  request: Block;
  response: Block;
}

function parseMessage(text: string): { start: string; headers: Array<[string, string]>; body: string } {
  const lines = text.replace(/\n$/, '').split('\n');
  const start = lines.shift() ?? '';
  const headers: Array<[string, string]> = [];
  while (lines.length && lines[0] !== '') {
    const line = lines.shift()!;
    const colon = line.indexOf(':');
    headers.push([line.slice(0, colon).trim(), line.slice(colon + 1).trim()]);
  }
  lines.shift();
  return { start, headers, body: lines.join('\n') };
}

/** Whether `actual` is the JSON `expected` describes (`…` in a string of expected: any characters). */
function jsonMatches(actual: unknown, expected: unknown): boolean {
  if (typeof expected === 'string' && expected.includes('…')) {
    if (typeof actual !== 'string') return false;
    const pattern = expected.split('…').map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('[\\s\\S]*');
    return new RegExp(`^${pattern}$`).test(actual);
  }
  if (Array.isArray(expected)) return Array.isArray(actual) && actual.length === expected.length && expected.every((e, i) => jsonMatches(actual[i], e));
  if (expected !== null && typeof expected === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return false;
    const ek = Object.keys(expected);
    const ak = Object.keys(actual);
    return ek.length === ak.length && ek.every((k, i) => ak[i] === k && jsonMatches((actual as Record<string, unknown>)[k], (expected as Record<string, unknown>)[k]));
  }
  return Object.is(actual, expected);
}

export function runHttpExamples(page: string, options: { minExchanges?: number } = {}): void {
  const doc = sections(readDoc(page));
  const appFiles: Record<string, string> = {};
  const checks: Array<{ section: string; files: Record<string, string>; expected: string[] }> = [];
  const exchanges: Exchange[] = [];
  for (const section of doc) {
    const files: Record<string, string> = {};
    for (const b of section.blocks) {
      const f = fileOf(b);
      if (f !== undefined) files[f] = b.text;
    }
    const diagnostics = section.blocks.find((b) => b.info[0] === 'diagnostics');
    if (diagnostics) {
      checks.push({ section: section.title, files, expected: diagnostics.text.trimEnd().split('\n') });
    } else {
      for (const [path, text] of Object.entries(files)) {
        assert.ok(!(path in appFiles), `${page}: ${path} is shown twice (in "${section.title}")`);
        appFiles[path] = text;
      }
    }
    const blocks = section.blocks;
    for (let i = 0; i < blocks.length; i++) {
      if (blocks[i]!.lang !== 'http' || blocks[i]!.info[0] !== 'request') continue;
      const response = blocks.slice(i + 1).find((b) => b.lang === 'http' && (b.info[0] === 'response' || b.info[0] === 'request'));
      assert.ok(response?.info[0] === 'response', `${page}:${blocks[i]!.line}: a request without its response`);
      exchanges.push({ section: section.title, request: blocks[i]!, response });
    }
  }

  describe(`docs/${page} examples`, () => {
    it(`has its examples (${exchanges.length} requests, ${checks.length} build checks)`, () => {
      assert.ok(exchanges.length >= (options.minExchanges ?? 1));
    });

    for (const check of checks) {
      it(`"${check.section}": laneway check reports exactly what the page shows`, () => {
        assert.deepEqual(diagnosticsOf(check.files), check.expected);
      });
    }

    let server: Served;
    before(async () => {
      server = await serve(appFiles);
    });
    after(() => server?.close());

    for (const ex of exchanges) {
      const req = parseMessage(ex.request.text);
      const [method, target] = req.start.split(/\s+/);
      it(`"${ex.section}": ${method} ${target} (${page}:${ex.request.line})`, async () => {
        const headers: Record<string, string> = {};
        for (const [k, v] of req.headers) headers[k] = v;
        if (!Object.keys(headers).some((k) => k.toLowerCase() === 'host')) headers.Host = 'example.com';
        const body = req.body === '' ? undefined : req.body;
        if (body !== undefined) headers['Content-Length'] = String(Buffer.byteLength(body));
        const res = await server.request(method!, target!, headers, body);
        const expected = parseMessage(ex.response.text);
        const status = Number(/^HTTP\/1\.1 (\d{3})\b/.exec(expected.start)?.[1]);
        assert.ok(status, `${page}:${ex.response.line}: the response block starts with HTTP/1.1 <status>`);
        assert.equal(res.status, status, res.text);
        for (const [k, v] of expected.headers) assert.equal(res.headers[k.toLowerCase()], v, `header ${k}`);
        if (expected.body.trim() === '') return;
        if (String(res.headers['content-type'] ?? '').startsWith('application/json')) {
          const actual = JSON.parse(res.text) as unknown;
          const wanted = JSON.parse(expected.body) as unknown;
          assert.ok(jsonMatches(actual, wanted), `answered ${JSON.stringify(actual)}\nthe page shows ${JSON.stringify(wanted)}`);
        } else {
          assert.equal(res.text.replace(/\n+$/, ''), expected.body.replace(/\n+$/, ''));
        }
      });
    }
  });
}
