/**
 * Trusted proxies (src/http/proxy.ts, docs/deploy.md "Behind a reverse proxy"): the parser of
 * `--trust-proxy`, the walk of the forwarding headers, and, black-box, what the client's spoofed
 * headers change when nobody is trusted (nothing) and what a trusted peer's headers change
 * (`Request` in scripts, `Secure` cookies, the cross-site check).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { TrustedProxies, parseForwarded, resolveForwarded } from '../../src/http/proxy.js';
import { serve } from '../helpers.js';
import { TestVisitor, setCookies } from '../support/visitor.js';

function trust(text: string): TrustedProxies {
  const t = TrustedProxies.parse(text);
  if ('error' in t) throw new Error(t.error);
  return t;
}

/** A request as the socket and headers give it (only what proxy.ts reads). */
function fakeRequest(peer: string, headers: Record<string, string>, encrypted = false): IncomingMessage {
  return { socket: { remoteAddress: peer, encrypted }, headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v])) } as unknown as IncomingMessage;
}

describe('--trust-proxy: the list', () => {
  it('takes IPv4 and IPv6 addresses, CIDR ranges and loopback', () => {
    const t = trust(' 10.0.0.0/8, 192.0.2.7 ,fd00::/8, 2001:db8::1, loopback');
    assert.deepEqual(t.entries, ['10.0.0.0/8', '192.0.2.7', 'fd00::/8', '2001:db8::1', 'loopback']);
    for (const a of ['10.1.2.3', '192.0.2.7', 'fd12::5', '2001:db8::1', '127.0.0.1', '127.9.9.9', '::1', '::ffff:10.0.0.1', '::ffff:127.0.0.1']) assert.ok(t.trusts(a), a);
    for (const a of ['11.0.0.1', '192.0.2.8', 'fe80::1', '2001:db8::2', '::2', '::ffff:11.0.0.1', 'not-an-address', '']) assert.ok(!t.trusts(a), a);
  });

  it('is empty by default and then trusts nobody, loopback included', () => {
    const t = trust('');
    assert.ok(t.empty);
    assert.ok(!t.trusts('127.0.0.1'));
    assert.ok(TrustedProxies.none.empty);
  });

  it('refuses what is not an address or a range, with the entry named', () => {
    for (const bad of ['10.0.0.0/33', 'fd00::/129', 'example.com', '10.0.0', '10.0.0.0/', '10.0.0.0/x', '1.2.3.4:80']) {
      const t = TrustedProxies.parse(bad);
      assert.ok('error' in t, bad);
      assert.match(t.error, new RegExp(bad.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')));
    }
  });
});

describe('the walk of the forwarding headers', () => {
  const t = trust('10.0.0.0/8');

  it('an untrusted peer: the connection alone, whatever it sends', () => {
    const c = t.client(fakeRequest('203.0.113.9', { Host: 'app.test', 'X-Forwarded-For': '1.1.1.1', 'X-Forwarded-Proto': 'https', 'X-Forwarded-Host': 'evil.test', Forwarded: 'for=2.2.2.2;proto=https;host=evil.test' }));
    assert.deepEqual(c, { address: '203.0.113.9', proto: 'http', host: 'app.test' });
  });

  it('X-Forwarded-For from the right, skipping trusted hops; a spoofed left part is never reached', () => {
    const c = t.client(fakeRequest('10.0.0.2', { Host: 'internal:3000', 'X-Forwarded-For': '6.6.6.6, 198.51.100.4, 10.0.0.9', 'X-Forwarded-Proto': 'https', 'X-Forwarded-Host': 'shop.example.com' }));
    assert.deepEqual(c, { address: '198.51.100.4', proto: 'https', host: 'shop.example.com' });
  });

  it('every hop trusted: the leftmost address', () => {
    assert.equal(t.client(fakeRequest('10.0.0.2', { 'X-Forwarded-For': '10.1.1.1, 10.0.0.9' })).address, '10.1.1.1');
  });

  it('a hop that is not an address ends the walk at the proxy before it', () => {
    assert.equal(t.client(fakeRequest('10.0.0.2', { 'X-Forwarded-For': '198.51.100.4, garbage' })).address, '10.0.0.2');
  });

  it('lists of schemes and hosts as long as the addresses: the client hop\'s values', () => {
    const c = t.client(fakeRequest('10.0.0.2', { 'X-Forwarded-For': '198.51.100.4, 10.0.0.9', 'X-Forwarded-Proto': 'https, http', 'X-Forwarded-Host': 'shop.example.com, inner' }));
    assert.deepEqual(c, { address: '198.51.100.4', proto: 'https', host: 'shop.example.com' });
  });

  it('a malformed scheme or host is ignored', () => {
    const c = t.client(fakeRequest('10.0.0.2', { Host: 'app.test', 'X-Forwarded-Proto': 'javascript', 'X-Forwarded-Host': 'a b/<c>' }));
    assert.deepEqual(c, { address: '10.0.0.2', proto: 'http', host: 'app.test' });
  });

  it('Forwarded (RFC 7239) wins over X-Forwarded-*, with quoted IPv6 and ports', () => {
    assert.deepEqual(parseForwarded('for="[2001:db8:cafe::17]:4711";proto=https;host="shop.example.com", for=10.0.0.9'), [
      { address: '2001:db8:cafe::17', proto: 'https', host: 'shop.example.com' },
      { address: '10.0.0.9', proto: undefined, host: undefined },
    ]);
    const c = t.client(fakeRequest('10.0.0.2', { Forwarded: 'for="[2001:db8:cafe::17]:4711";proto=https;host=shop.example.com, for=10.0.0.9', 'X-Forwarded-For': '6.6.6.6' }));
    assert.deepEqual(c, { address: '2001:db8:cafe::17', proto: 'https', host: 'shop.example.com' });
    assert.equal(t.client(fakeRequest('10.0.0.2', { Forwarded: 'for=unknown' })).address, '10.0.0.2');
    assert.equal(parseForwarded('for'), undefined);
    assert.equal(parseForwarded('for="unterminated'), undefined);
  });

  it('IPv4-mapped peers count as IPv4; the connection\'s own TLS gives https', () => {
    const c = trust('loopback').client(fakeRequest('::ffff:127.0.0.1', { 'X-Forwarded-For': '::ffff:198.51.100.4' }));
    assert.equal(c.address, '198.51.100.4');
    assert.equal(TrustedProxies.none.client(fakeRequest('::ffff:192.0.2.1', {}, true)).proto, 'https');
    assert.deepEqual(resolveForwarded(t, { address: '10.0.0.1', proto: 'http', host: 'h' }, {}), { address: '10.0.0.1', proto: 'http', host: 'h' });
  });
});

const APP = {
  '/📦/🌐Note.yaml': 'title: string\n',
  '/index.html': "<!--TEMPLATE mustache-->\n{{% import {Note} from '📦' }}\n{{#Note.Form.view as form}}<form action=\"/n?_form={{form.id}}\"></form>{{/Note.Form.view}}\n",
  '/where/GET.js': "import {Request} from '🔗'\n({url: Request.url, base: Request.base, domain: Request.domain})\n",
  '/📮write.js': '({ok: true})\n',
};

const SPOOFED = { 'X-Forwarded-For': '6.6.6.6', 'X-Forwarded-Proto': 'https', 'X-Forwarded-Host': 'evil.example', Forwarded: 'for=6.6.6.6;proto=https;host=evil.example' };

describe('black-box: spoofed forwarding headers from a peer that is not trusted change nothing', () => {
  for (const [label, trustProxy] of [
    ['nobody trusted (the default)', undefined],
    ['only 10.0.0.0/8 trusted (the test connects from 127.0.0.1)', '10.0.0.0/8,fd00::/8'],
  ] as const) {
    it(label, async () => {
      const s = await serve(APP, trustProxy === undefined ? {} : { trustProxy });
      try {
        const host = 'guestbook.example.com';
        const plain = await s.get('/where', { Host: host });
        const spoofed = await s.get('/where', { Host: host, ...SPOOFED });
        assert.deepEqual(JSON.parse(spoofed.text), JSON.parse(plain.text));
        assert.deepEqual(JSON.parse(spoofed.text), { url: `http://${host}/where`, base: `http://${host}`, domain: host });
        const sid = async (headers: Record<string, string>) => setCookies(await new TestVisitor(s.port, host).get('/', headers)).find((c) => c.startsWith('sid='))!;
        assert.doesNotMatch(await sid(SPOOFED), /; Secure/);
        // A page of evil.example posting here, its X-Forwarded-Host naming itself: refused.
        const write = await s.request('POST', '/write', { Host: host, Origin: 'https://evil.example', ...SPOOFED }, '');
        assert.equal(write.status, 403);
      } finally {
        await s.close();
      }
    });
  }
});

describe('black-box: a trusted peer (loopback) is believed', () => {
  it('Request, Secure cookies and the cross-site check use what the proxy says', async () => {
    const s = await serve(APP, { trustProxy: 'loopback' });
    try {
      const inner = `127.0.0.1:${s.port}`;
      const proxied = { Host: inner, 'X-Forwarded-For': '198.51.100.4', 'X-Forwarded-Proto': 'https', 'X-Forwarded-Host': 'shop.example.com' };
      assert.deepEqual(JSON.parse((await s.get('/where', proxied)).text), { url: 'https://shop.example.com/where', base: 'https://shop.example.com', domain: 'shop.example.com' });
      const viaForwarded = await s.get('/where', { Host: inner, Forwarded: 'for=198.51.100.4;proto=https;host=shop.example.com' });
      assert.equal(JSON.parse(viaForwarded.text).base, 'https://shop.example.com');
      const sid = setCookies(await new TestVisitor(s.port, 'shop.example.com').get('/', { 'X-Forwarded-Proto': 'https' })).find((c) => c.startsWith('sid='))!;
      assert.match(sid, /; Secure/);
      // The browser's Origin names the public host; the Host header names the inner address.
      const write = await s.request('POST', '/write', { ...proxied, Origin: 'https://shop.example.com', Accept: 'application/json' }, '');
      assert.equal(write.status, 200, write.text);
      const other = await s.request('POST', '/write', { ...proxied, Origin: 'https://evil.example', Accept: 'application/json' }, '');
      assert.equal(other.status, 403);
    } finally {
      await s.close();
    }
  });
});

describe('laneway serve --trust-proxy', () => {
  it('a malformed list, from the option or from LANEWAY_TRUST_PROXY, is a usage error before the app loads', async () => {
    const { spawnSync } = await import('node:child_process');
    const { BIN } = await import('../support/served-process.js');
    const { writeApp } = await import('../helpers.js');
    const dir = writeApp({ '/index.html': '<p>x</p>\n' });
    const run = (args: string[], env: Record<string, string> = {}) => spawnSync(process.execPath, [BIN, 'serve', dir, '--port', '0', ...args], { encoding: 'utf8', env: { ...process.env, PORT: '', NO_COLOR: '1', ...env } });
    const bad = run(['--trust-proxy', '10.0.0.0/40']);
    assert.equal(bad.status, 2, bad.stderr);
    assert.match(bad.stderr, /--trust-proxy: "10\.0\.0\.0\/40": the prefix length/);
    const fromEnv = run([], { LANEWAY_TRUST_PROXY: 'loopback, proxy.internal' });
    assert.equal(fromEnv.status, 2, fromEnv.stderr);
    assert.match(fromEnv.stderr, /\$LANEWAY_TRUST_PROXY: "proxy\.internal" is not an address/);
  });
});
