/**
 * E-mail from scripts (docs/email.md "Scripts"), end to end: a POST script's
 * `Email.to(…).subject(…).text(…).send()` joins the outbox in the request's transaction and
 * reaches a real SMTP server (smtp-server, parsed with mailparser) after the commit; a failed
 * request sends nothing; a GET script may not send.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { serve, type Served } from '../helpers.js';
import { startSmtp, until, type TestSmtp, useSmtpEnv } from '../mail/helpers.js';
import { TestVisitor } from '../support/visitor.js';

const APP = {
  '📮contact.js':
    "import {Email} from '📧';\nimport {name, fail} from 'form';\n" +
    "Email.to('owner@example.test').subject('Contact: ' + name).text('Hello from ' + name + '\\nBye').send();\n" +
    "if (fail) throw 'refused';\nRedirect.home().success('Sent');\n",
  'mail/GET.js': "import {Email} from '📧';\nEmail.to('a@example.test').subject('x').text('y').send();\n({ok: true});\n",
  'index.html': '<!--TEMPLATE mustache-->\n<p>home</p>\n',
};

describe('e-mail from scripts over SMTP', () => {
  let smtp: TestSmtp;
  let s: Served;
  let restoreEnv: (() => void) | undefined;
  before(async () => {
    smtp = await startSmtp();
    restoreEnv = useSmtpEnv(smtp.port);
    s = await serve(APP, { data: { log: { info: () => {}, error: () => {} } } });
  });
  after(async () => {
    await s?.close();
    await smtp?.close();
    restoreEnv?.();
  });

  it('a successful POST sends its message once; a failed one sends nothing', async () => {
    const v = new TestVisitor(s.port);
    const failed = await v.post('/contact', { name: 'Mallory', fail: '1' });
    assert.equal(failed.status, 400);
    const injected = await v.post('/contact', { name: 'Eve\r\nBcc: x@evil.test' });
    assert.equal(injected.status, 500, 'a line break in a header is refused, nothing is sent');
    const sent = await v.post('/contact', { name: 'Ann' });
    assert.equal(sent.status, 302);
    await until(() => smtp.received.length >= 1, 'the message arrives');
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(smtp.received.length, 1);
    const m = smtp.received[0]!;
    assert.deepEqual(m.to, ['owner@example.test']);
    assert.equal(m.parsed.from?.value[0]?.address, 'site@example.test');
    assert.match(String(m.parsed.subject), /^Contact: Ann/);
    assert.doesNotMatch(m.raw, /^Bcc:/m, 'a header cannot be injected through the subject');
    assert.match(String(m.parsed.text), /Hello from Ann/);
    assert.ok(!smtp.received.some((r) => /Mallory|Eve/.test(r.raw)));
  });

  it('a GET script may not send e-mail', async () => {
    const res = await s.get('/mail');
    assert.equal(res.status, 500);
  });
});
