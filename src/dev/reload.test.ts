/** The live-reload client's place in a page and in its policy (reload.ts). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { CLIENT_HASH, CLIENT_SCRIPT, injectClient, withClientSources } from './reload.js';

test('the hash is the sha256 of exactly the text the browser hashes', () => {
  assert.equal(CLIENT_HASH, `'sha256-${createHash('sha256').update(CLIENT_SCRIPT).digest('base64')}'`);
  assert.doesNotMatch(CLIENT_SCRIPT, /\r|<\/script|<!--/i);
  assert.match(injectClient('<p>x</p>', 'ab:1'), /^<p>x<\/p><script data-build="ab:1">\n\(function/);
});

test('the client goes before the last </body>, else </html>, else at the end; data-build keeps only safe characters', () => {
  const element = (build: string) => `<script data-build="${build}">${CLIENT_SCRIPT}</script>`;
  assert.equal(injectClient('<body><p>a</p></BODY></html>', 'a:1'), `<body><p>a</p>${element('a:1')}</BODY></html>`);
  assert.equal(injectClient('<html><p>a</p></html>', 'a:1'), `<html><p>a</p>${element('a:1')}</html>`);
  assert.equal(injectClient('<p>a</p>', 'a"><x:1'), `<p>a</p>${element('ax:1')}`);
});

test('script-src gets the hash in place of none, connect-src gets self; nothing else changes', () => {
  assert.equal(
    withClientSources("default-src 'none'; script-src 'none'; style-src 'self'; connect-src 'self'; form-action 'self'"),
    `default-src 'none'; script-src ${CLIENT_HASH}; style-src 'self'; connect-src 'self'; form-action 'self'`,
  );
  assert.equal(
    withClientSources("default-src 'none'; script-src 'self' 'sha256-abc='; img-src 'self'"),
    `default-src 'none'; script-src 'self' 'sha256-abc=' ${CLIENT_HASH}; img-src 'self'; connect-src 'self'`,
  );
  assert.equal(withClientSources("default-src 'none'; connect-src https://api.example.com"), `default-src 'none'; connect-src https://api.example.com 'self'; script-src ${CLIENT_HASH}`);
});

test("script-src with 'unsafe-inline' and no hash stays as it is: a hash would turn 'unsafe-inline' off", () => {
  assert.equal(withClientSources("default-src 'self'; script-src 'self' 'unsafe-inline'"), "default-src 'self'; script-src 'self' 'unsafe-inline'; connect-src 'self'");
  assert.equal(withClientSources("script-src 'unsafe-inline' 'sha256-x='"), `script-src 'unsafe-inline' 'sha256-x=' ${CLIENT_HASH}`);
});

test('without default-src, an absent directive allows everything already', () => {
  assert.equal(withClientSources("frame-ancestors 'self'"), "frame-ancestors 'self'");
  assert.equal(withClientSources('connect-src *; script-src https://cdn.example.com'), `connect-src *; script-src https://cdn.example.com ${CLIENT_HASH}`);
});
