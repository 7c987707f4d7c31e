/**
 * The message checks (header injection, address forms, limits) and the configuration from the
 * environment (LANEWAY_SMTP_URL, provider presets, LANEWAY_MAIL_FROM), without a mail server.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { LanewayError } from '../../src/diag/index.js';
import { checkMailMessage, mailTransportFromEnv, parseMailAddress, type MailMessage } from '../../src/mail/index.js';
import { parseSmtpUrl } from '../../src/mail/transport.js';

const OK: MailMessage = { to: ['ann@example.com'], subject: 'Hello', text: 'Hi Ann' };

function refused(m: unknown, pattern: RegExp): void {
  assert.throws(
    () => checkMailMessage(m),
    (e: unknown) => e instanceof LanewayError && e.code === 'LW_MAIL_INVALID' && pattern.test(e.message),
  );
}

describe('checkMailMessage', () => {
  it('accepts plain addresses and "Name" <addr>, and returns a clean copy', () => {
    const m = checkMailMessage({
      to: ['ann@example.com', ' "Bob \\"B\\" Smith" <bob.smith+tag@mail.example.org> ', '"Zoë Ångström" <zoe@exämple.de>'],
      from: '"Example" <hello@example.com>',
      replyTo: 'replies@example.com',
      subject: 'Grüße — 日本',
      text: 'line 1\r\nline 2\n',
      extra: 'dropped',
    });
    assert.deepEqual(m, {
      to: ['ann@example.com', '"Bob \\"B\\" Smith" <bob.smith+tag@mail.example.org>', '"Zoë Ångström" <zoe@exämple.de>'],
      from: '"Example" <hello@example.com>',
      replyTo: 'replies@example.com',
      subject: 'Grüße — 日本',
      text: 'line 1\r\nline 2\n',
    });
    assert.deepEqual(parseMailAddress('"Bob \\"B\\" Smith" <bob@example.com>'), { name: 'Bob "B" Smith', address: 'bob@example.com' });
    assert.deepEqual(parseMailAddress('root@localhost'), { address: 'root@localhost' });
  });

  it('refuses a line break in the subject (header injection)', () => {
    refused({ ...OK, subject: 'Hi\r\nBcc: victim@example.com' }, /subject .*line break \(CR or LF\).*add headers/);
    refused({ ...OK, subject: 'Hi\nBcc: victim@example.com' }, /subject .*line break/);
    refused({ ...OK, subject: 'Hi\rthere' }, /subject .*line break/);
    refused({ ...OK, subject: 'Hi\u0000there' }, /subject .*control character/);
  });

  it('refuses a line break in any address, without repeating the value', () => {
    refused({ ...OK, to: ['ann@example.com', 'bob@example.com\r\nBcc: victim@example.com'] }, /^the recipient 2 of an email contains a line break/);
    refused({ ...OK, from: 'a@example.com\nBcc: victim@example.com' }, /sender \(from\) .*line break/);
    refused({ ...OK, replyTo: '"Evil\r\nBcc: v@example.com" <a@example.com>' }, /reply-to .*line break/);
    assert.throws(() => checkMailMessage({ ...OK, to: ['x@example.com\r\nBcc: victim@example.com'] }), (e: Error) => !e.message.includes('victim'));
  });

  it('refuses addresses of other forms, naming the expected ones', () => {
    for (const bad of ['ann', 'ann@', '@example.com', 'a@b@c.com', 'Ann <ann@example.com>', '"Ann" ann@example.com', 'ann..x@example.com', '.ann@example.com', 'ann@-example.com', 'ann@example..com', 'ann@example.com.', 'ann@exa-.com', `ann@${'b'.repeat(64)}.com`, 'ann@example.com, bob@example.com', '"Ann" <>']) {
      refused({ ...OK, to: [bad] }, /is not an address: write ann@example\.com or "Ann Example" <ann@example\.com>/);
    }
    refused({ ...OK, to: ['a'.repeat(65) + '@example.com'] }, /not an address/);
    // A label may hold 63 characters, with inner hyphens.
    assert.doesNotThrow(() => checkMailMessage({ ...OK, to: [`ann@${'b'.repeat(61)}-c.x-y.example`] }));
  });

  it('refuses no recipient, more than 50, a subject over 998 characters and a body over 1 MB', () => {
    refused({ ...OK, to: [] }, /no recipient/);
    refused({ ...OK, to: 'ann@example.com' }, /not a list/);
    const fifty = Array.from({ length: 50 }, (_, i) => `r${i}@example.com`);
    assert.equal(checkMailMessage({ ...OK, to: fifty }).to.length, 50);
    refused({ ...OK, to: [...fifty, 'one-more@example.com'] }, /51 recipients; at most 50/);
    assert.equal(checkMailMessage({ ...OK, subject: '€'.repeat(998) }).subject.length, 998);
    refused({ ...OK, subject: 'x'.repeat(999) }, /999 characters long; at most 998/);
    assert.equal(checkMailMessage({ ...OK, text: 'x'.repeat(1024 * 1024) }).text.length, 1024 * 1024);
    refused({ ...OK, text: 'é'.repeat(512 * 1024 + 1) }, /1048578 bytes long; at most 1048576/);
    refused({ ...OK, subject: 3 }, /subject .*not a string/);
    refused(null, /not an object/);
  });
});

describe('mailTransportFromEnv', () => {
  const PASSWORD = 's3cret/p#ss@word';
  const url = (scheme: string, host = '') => `${scheme}://${encodeURIComponent('me@example.com')}:${encodeURIComponent(PASSWORD)}@${host}`;

  it('maps each provider name to its SMTP server', () => {
    const expected: Record<string, string> = {
      gmail: 'smtps://smtp.gmail.com:465 (gmail)',
      mailgun: 'smtp://smtp.mailgun.org:587 (mailgun) with STARTTLS required',
      mailjet: 'smtp://in-v3.mailjet.com:587 (mailjet) with STARTTLS required',
      'ses-us-east-1': 'smtp://email-smtp.us-east-1.amazonaws.com:587 (ses-us-east-1) with STARTTLS required',
      'ses-eu-west-1': 'smtp://email-smtp.eu-west-1.amazonaws.com:587 (ses-eu-west-1) with STARTTLS required',
    };
    for (const [scheme, where] of Object.entries(expected)) {
      const t = mailTransportFromEnv({ LANEWAY_SMTP_URL: url(scheme) }, '/tmp/unused');
      assert.equal(t.description, `sending through ${where}`);
      assert.equal(t.defaultFrom, 'me@example.com', 'the user name, an address, is the default sender');
      assert.ok(!t.description.includes(PASSWORD));
      t.close();
    }
  });

  it('parses user and password up to the last @, percent-decoded or not', () => {
    assert.deepEqual(parseSmtpUrl('gmail://me@gmail.com:p@ss/w#rd@'), { scheme: 'gmail', host: 'smtp.gmail.com', port: 465, secure: true, requireTLS: false, user: 'me@gmail.com', pass: 'p@ss/w#rd' });
    assert.deepEqual(parseSmtpUrl(url('smtp', 'mail.example.com')), { scheme: 'smtp', host: 'mail.example.com', port: 587, secure: false, requireTLS: true, user: 'me@example.com', pass: PASSWORD });
    assert.deepEqual(parseSmtpUrl('smtps://u:p@mail.example.com:2465/'), { scheme: 'smtps', host: 'mail.example.com', port: 2465, secure: true, requireTLS: false, user: 'u', pass: 'p' });
    // A local relay may take a password without TLS; without a password nothing is required.
    assert.equal(parseSmtpUrl('smtp://u:p@127.0.0.1:2525').requireTLS, false);
    assert.deepEqual(parseSmtpUrl('smtp://relay.internal:25'), { scheme: 'smtp', host: 'relay.internal', port: 25, secure: false, requireTLS: false });
  });

  it('takes LANEWAY_MAIL_FROM as the default sender, and refuses SMTP without any sender', () => {
    const t = mailTransportFromEnv({ LANEWAY_SMTP_URL: 'mailjet://APIKEY123:secret@', LANEWAY_MAIL_FROM: '"Example" <hello@example.com>' }, '/tmp/unused');
    assert.equal(t.defaultFrom, '"Example" <hello@example.com>');
    t.close();
    assert.throws(() => mailTransportFromEnv({ LANEWAY_SMTP_URL: 'mailjet://APIKEY123:secret@' }, '/tmp/unused'), (e: LanewayError) => e.code === 'LW_MAIL_CONFIG' && /set LANEWAY_MAIL_FROM/.test(e.message));
    assert.throws(() => mailTransportFromEnv({ LANEWAY_MAIL_FROM: 'Example <hello@example.com>' }, '/tmp/unused'), (e: LanewayError) => e.code === 'LW_MAIL_CONFIG' && /LANEWAY_MAIL_FROM is not an address/.test(e.message));
  });

  it('refuses malformed URLs with LW_MAIL_CONFIG, never repeating the password', () => {
    const cases: Array<[string, RegExp]> = [
      [`smtp://me:${encodeURIComponent(PASSWORD)}`, /host .* missing or malformed/],
      [`smtp://me:${PASSWORD}@mail.example.com/path`, /a path, query or fragment is not allowed/],
      [`sendgrid://me:${PASSWORD}@`, /"sendgrid:\/\/" is not a kind of mail server.*gmail, mailgun, mailjet, ses-us-east-1, ses-eu-west-1/],
      [`gmail://me:${PASSWORD}@smtp.example.com`, /gmail:\/\/ needs no host/],
      ['gmail://me@', /needs the user name and password/],
      [`me:${PASSWORD}@mail.example.com`, /not a URL/],
      [`smtp://me:${PASSWORD}@mail.example.com:99999`, /not a TCP port/],
    ];
    for (const [value, message] of cases) {
      assert.throws(
        () => mailTransportFromEnv({ LANEWAY_SMTP_URL: value, LANEWAY_MAIL_FROM: 'a@example.com' }, '/tmp/unused'),
        (e: unknown) => e instanceof LanewayError && e.code === 'LW_MAIL_CONFIG' && message.test(e.message) && !e.message.includes(PASSWORD) && !e.message.includes('s3cret'),
        value,
      );
    }
  });

  it('writes .eml files to <dataDir>/outbox/ when LANEWAY_SMTP_URL is not set', () => {
    const t = mailTransportFromEnv({ LANEWAY_SMTP_URL: '' }, '/srv/app/.laneway');
    assert.equal(t.description, 'writing messages as .eml files to /srv/app/.laneway/outbox (set LANEWAY_SMTP_URL to send them)');
    assert.equal(t.defaultFrom, 'laneway@localhost');
    t.close();
  });
});
