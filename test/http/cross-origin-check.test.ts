/**
 * The cross-site request rule (src/http/cross-origin.ts) as a table: method, Sec-Fetch-Site,
 * Origin and Host in, allowed or refused (and by which rule) out.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkCrossOrigin, type CrossOriginRule } from '../../src/http/cross-origin.js';

const TRUSTED = new Set(['https://admin.example.com', 'http://127.0.0.1:9999']);
const HOST = 'app.example.com';

type Row = [method: string, site: string | undefined, origin: string | undefined, host: string | undefined, allowed: boolean, rule: CrossOriginRule];

const rows: Row[] = [
  // 1. Safe methods pass whatever the headers say.
  ['GET', 'cross-site', 'https://evil.example', HOST, true, 'safe-method'],
  ['HEAD', 'cross-site', 'null', HOST, true, 'safe-method'],
  ['OPTIONS', 'same-site', 'https://evil.example', HOST, true, 'safe-method'],
  // 2. Sec-Fetch-Site decides when present.
  ['POST', 'same-origin', undefined, HOST, true, 'fetch-site-same-origin'],
  ['POST', 'none', undefined, HOST, true, 'fetch-site-same-origin'],
  ['POST', 'same-origin', 'https://evil.example', HOST, true, 'fetch-site-same-origin'], // the browser's word wins over Host
  ['POST', 'cross-site', 'https://evil.example', HOST, false, 'fetch-site-cross'],
  ['POST', 'cross-site', undefined, HOST, false, 'fetch-site-cross'],
  ['POST', 'same-site', 'https://other.example.com', HOST, false, 'fetch-site-cross'], // a sibling subdomain
  ['POST', 'same-site', 'http://127.0.0.1:4000', '127.0.0.1:3000', false, 'fetch-site-cross'], // another port of the host
  ['POST', 'cross-site', `https://${HOST}`, HOST, false, 'fetch-site-cross'], // a matching Origin does not overrule the browser
  ['PUT', 'cross-site', 'https://evil.example', HOST, false, 'fetch-site-cross'],
  ['PATCH', 'same-site', 'https://evil.example', HOST, false, 'fetch-site-cross'],
  ['DELETE', 'cross-site', 'https://evil.example', HOST, false, 'fetch-site-cross'],
  ['PROPFIND', 'cross-site', 'https://evil.example', HOST, false, 'fetch-site-cross'], // any method not known to be safe
  ['POST', 'same-origin, cross-site', undefined, HOST, false, 'fetch-site-cross'], // two headers joined: not a known value
  ['POST', 'SAME-ORIGIN', undefined, HOST, false, 'fetch-site-cross'], // values are exact tokens
  ['POST', 'bogus', undefined, HOST, false, 'fetch-site-cross'],
  // 4. A trusted origin passes in any case.
  ['POST', 'cross-site', 'https://admin.example.com', HOST, true, 'trusted-origin'],
  ['DELETE', 'same-site', 'http://127.0.0.1:9999', '127.0.0.1:3000', true, 'trusted-origin'],
  ['POST', undefined, 'https://admin.example.com', HOST, true, 'trusted-origin'],
  ['POST', 'cross-site', 'https://admin.example.com:8443', HOST, false, 'fetch-site-cross'], // another port is another origin
  ['POST', 'cross-site', 'http://admin.example.com', HOST, false, 'fetch-site-cross'], // another scheme too
  ['POST', 'cross-site', 'https://admin.example.com/', HOST, false, 'fetch-site-cross'], // compared as sent, exactly
  ['POST', 'cross-site', undefined, HOST, false, 'fetch-site-cross'],
  // 3. No Sec-Fetch-Site: Origin against Host.
  ['POST', undefined, undefined, HOST, true, 'no-origin'], // curl, server-to-server, old browsers
  ['POST', '', undefined, HOST, true, 'no-origin'], // an empty header counts as absent
  ['POST', undefined, '', HOST, true, 'no-origin'],
  ['POST', undefined, undefined, undefined, true, 'no-origin'],
  ['POST', undefined, `https://${HOST}`, HOST, true, 'same-host'],
  ['POST', undefined, `http://${HOST}`, HOST, true, 'same-host'], // Host carries no scheme (as in Go)
  ['POST', undefined, 'http://127.0.0.1:3000', '127.0.0.1:3000', true, 'same-host'],
  ['POST', undefined, 'http://[::1]:3000', '[::1]:3000', true, 'same-host'],
  ['POST', undefined, 'https://APP.example.com', 'app.EXAMPLE.com', true, 'same-host'], // host names ignore case
  ['POST', undefined, 'https://app.example.com:443', HOST, true, 'same-host'], // the default port is the same port
  ['POST', undefined, 'http://app.example.com', 'app.example.com:80', true, 'same-host'],
  ['POST', undefined, 'https://evil.example', HOST, false, 'origin-other-host'],
  ['POST', undefined, 'http://127.0.0.1:4000', '127.0.0.1:3000', false, 'origin-other-host'], // another port
  ['POST', undefined, 'http://app.example.com:8080', HOST, false, 'origin-other-host'],
  ['POST', undefined, 'https://app.example.com.evil.example', HOST, false, 'origin-other-host'],
  ['POST', undefined, `https://${HOST}`, undefined, false, 'origin-other-host'], // no Host to compare with
  ['POST', undefined, `https://${HOST}`, 'app.example.com/@evil', false, 'origin-other-host'], // a malformed Host matches nothing
  ['POST', undefined, 'null', HOST, false, 'origin-invalid'], // sandboxed frames, data: URLs, some redirects
  ['POST', undefined, 'null', undefined, false, 'origin-invalid'],
  ['POST', undefined, `https://user@${HOST}`, HOST, false, 'origin-invalid'], // user information
  ['POST', undefined, `https://user:pw@${HOST}`, HOST, false, 'origin-invalid'],
  ['POST', undefined, `https://${HOST}/path`, HOST, false, 'origin-invalid'], // an origin has no path
  ['POST', undefined, `https://${HOST}/`, HOST, false, 'origin-invalid'],
  ['POST', undefined, `https://${HOST}?q`, HOST, false, 'origin-invalid'],
  ['POST', undefined, `https://${HOST}#f`, HOST, false, 'origin-invalid'],
  ['POST', undefined, `ftp://${HOST}`, HOST, false, 'origin-invalid'],
  ['POST', undefined, `chrome-extension://${HOST}`, HOST, false, 'origin-invalid'],
  ['POST', undefined, HOST, HOST, false, 'origin-invalid'], // no scheme
  ['POST', undefined, 'https://', HOST, false, 'origin-invalid'],
  ['POST', undefined, 'https://exa mple.com', 'exa mple.com', false, 'origin-invalid'],
  ['POST', undefined, 'https://[::1', '[::1', false, 'origin-invalid'],
  ['POST', undefined, `https://${HOST}, https://evil.example`, HOST, false, 'origin-invalid'], // two headers joined
  ['POST', undefined, `https://${HOST}:99999`, `${HOST}:99999`, false, 'origin-invalid'], // port out of range
];

for (const [method, site, origin, host, allowed, rule] of rows) {
  test(`${method} Sec-Fetch-Site=${site ?? '(none)'} Origin=${origin ?? '(none)'} Host=${host ?? '(none)'} → ${allowed ? 'allowed' : 'refused'} (${rule})`, () => {
    assert.deepEqual(checkCrossOrigin({ method, secFetchSite: site, origin, host }, TRUSTED), { allowed, rule });
  });
}

test('without trusted origins, an origin that would be trusted is refused like any other', () => {
  assert.deepEqual(checkCrossOrigin({ method: 'POST', secFetchSite: 'cross-site', origin: 'https://admin.example.com', host: HOST }, new Set()), { allowed: false, rule: 'fetch-site-cross' });
  assert.deepEqual(checkCrossOrigin({ method: 'POST', secFetchSite: undefined, origin: 'https://admin.example.com', host: HOST }, new Set()), { allowed: false, rule: 'origin-other-host' });
});
