/**
 * Notifications (docs/email.md "Notifications"), end to end in the shape of a marketing site's
 * contact form (own fixture): `/📡/Contact.yaml` (fields, `🎛: default` and a Mustache subject),
 * `/📡/Contact/email.txt`, a page rendering `{{#Contact.Form.view}}` through an HTML supplier
 * called with each field, and a POST script doing `Contact.Form.submit(n); n.submit()`. Invalid
 * submissions come back with their messages and send nothing; a valid one reaches a real SMTP
 * server once, as plain text (values never HTML-escaped, no header injection through a field).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { diagnosticsOf, serve, type Served } from '../helpers.js';
import { startSmtp, until, type TestSmtp, useSmtpEnv } from '../mail/helpers.js';
import { TestVisitor } from '../support/visitor.js';
import { ENGINES } from '../support/engines.js';

const APP = {
  '📡/Contact.yaml':
    '🎛:\n  default: sales@example.test\n  subject: "Contact: {{firstName}} {{lastName}}"\n\n' +
    'firstName:\n  type: string\n  label: First name\n  placeholder: Jane\nlastName: string\nemail:\n  type: string\n  label: Work email\n' +
    'website:\n  type: string\n  optional: true\ncontent:\n  type: markdown\n  max: 2000\n  min: 5\n',
  '📡/Contact/email.txt': 'Name: {{firstName}} {{lastName}}\nEmail: {{email}}\nWebsite: {{website}}\n\n{{content}}\n',
  '📤/Control.html':
    '<!--TEMPLATE mustache-->\n{{#updatable}}<label for="{{path}}">{{label}}</label>\n' +
    '{{#input as input}}<input id="{{path}}" name="{{path}}" value="{{value}}" {{{input.attributes}}}>{{/input}}' +
    '{{#textarea as textarea}}<textarea id="{{path}}" name="{{path}}" {{{textarea.attributes}}}>{{value}}</textarea>{{/textarea}}' +
    '{{#invalid}}<p class="err">{{message.value}}</p>{{/invalid}}\n{{/updatable}}\n',
  'contact.html':
    "<!--TEMPLATE mustache-->\n{{% import {Control} from '📤' }}\n{{% import {Contact} from '📡' }}\n" +
    '<!doctype html><html><head><title>Contact</title></head><body>\n{{#Contact.Form.view}}<form action="/contact-sales?_form={{id}}" method="POST">\n' +
    '{{{ Control firstName }}}{{{ Control lastName }}}{{{ Control email }}}{{{ Control website }}}{{{ Control content }}}\n' +
    '<input type="submit"></form>{{/Contact.Form.view}}\n</body></html>\n',
  'contact-result.html': '<!--TEMPLATE mustache-->\n<!doctype html><html><head><title>Thanks</title></head><body>Nice to meet you.</body></html>\n',
  '📮contact-sales.js':
    "import {Contact} from '📡';\ntry {\n  const n = new Contact();\n  Contact.Form.submit(n);\n  n.submit();\n  Redirect.home().name('contact-result');\n" +
    "} catch ($ModelInvalid) {\n  Redirect.home().name('contact').invalid($ModelInvalid);\n}\n",
  // A notification filled by hand, then failing after submit(): nothing is sent.
  '📮direct.js':
    "import {Contact} from '📡';\nimport {fail} from 'form';\nconst n = new Contact();\nn.firstName = 'Dora';\nn.lastName = 'Direct';\nn.email = 'dora@example.test';\n" +
    "n.content = 'Sent from a script';\nn.submit();\nn.submit();\nif (fail) throw 'refused';\n({sent: n.firstName});\n",
  '📮incomplete.js': "import {Contact} from '📡';\nconst n = new Contact();\nn.firstName = 'Ivy';\nn.submit();\n({sent: true});\n",
  'peek/GET.js': "import {Contact} from '📡';\nconst n = new Contact();\nn.firstName = 'x';\nn.lastName = 'y';\nn.email = 'e';\nn.content = 'hello';\nn.submit();\n({ok: true});\n",
};

const formAction = (html: string) => /action="(\/contact-sales\?_form=[^"]+)"/.exec(html)?.[1];

for (const engine of ENGINES) {
  describe(`notifications (${engine.name})`, () => {
    let smtp: TestSmtp;
    let s: Served;
    let restoreEnv: (() => void) | undefined;
    before(async () => {
      smtp = await startSmtp();
      restoreEnv = useSmtpEnv(smtp.port);
      s = await serve(APP, { data: { ...(await engine.data()), log: { info: () => {}, error: () => {} } } });
    });
    after(async () => {
      await s?.close();
      await smtp?.close();
      restoreEnv?.();
    });

    it('the form view renders each field through the supplier, on a single-user page', async () => {
      const v = new TestVisitor(s.port);
      const page = await v.get('/contact');
      assert.equal(page.status, 200);
      assert.match(page.headers['cache-control'] ?? '', /no-store/);
      assert.match(page.text, /<label for="Contact_firstName">First name<\/label>/);
      assert.match(page.text, /<input id="Contact_firstName" name="Contact_firstName" value="" type="text" required placeholder="Jane" maxlength="100">/);
      assert.match(page.text, /<input id="Contact_website" name="Contact_website" value="" type="text" maxlength="100">/, 'an optional field is not required');
      assert.match(page.text, /<textarea id="Contact_content" name="Contact_content" required maxlength="2000" minlength="5"><\/textarea>/);
      assert.ok(formAction(page.text));
    });

    it('an invalid submission comes back with its values and messages, and sends nothing', async () => {
      const v = new TestVisitor(s.port);
      const action = formAction((await v.get('/contact')).text)!;
      const res = await v.post(action, { Contact_firstName: 'Ann', Contact_content: 'hi' });
      assert.equal(res.status, 302);
      assert.match(res.headers.location ?? '', /^\/contact\?_form=/);
      const back = await v.get(res.headers.location!);
      assert.match(back.text, /<input id="Contact_firstName" name="Contact_firstName" value="Ann"/);
      assert.match(back.text, /<p class="err">Last Name is required<\/p>/);
      assert.match(back.text, /<p class="err">Work email is required<\/p>/);
      assert.match(back.text, />hi<\/textarea>\s*<p class="err">Content must be at least 5 characters/);
      // A second visitor sees a fresh form even with the first one's state id.
      const other = new TestVisitor(s.port);
      const theirs = await other.get(res.headers.location!);
      assert.doesNotMatch(theirs.text, /value="Ann"|class="err"/);
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(smtp.received.filter((m) => /Ann/.test(m.raw)).length, 0);
    });

    it('a valid submission sends one plain-text message to the default recipient', async () => {
      const v = new TestVisitor(s.port);
      const action = formAction((await v.get('/contact')).text)!;
      const fields = {
        Contact_firstName: 'Zoë & <b>',
        Contact_lastName: 'Lee\r\nBcc: x@evil.test',
        Contact_email: 'zoe@example.test',
        Contact_content: 'We need **fifty** seats.',
      };
      const res = await v.post(action, fields);
      assert.equal(res.status, 302);
      assert.equal(res.headers.location, '/contact-result');
      const replay = await v.post(action, fields);
      assert.equal(replay.status, 400, 'the form state is single-use');
      await until(() => smtp.received.some((m) => /Zo/.test(String(m.parsed.subject))), 'the notification arrives');
      await new Promise((r) => setTimeout(r, 300));
      const mine = smtp.received.filter((m) => /Zo/.test(String(m.parsed.subject)));
      assert.equal(mine.length, 1, 'sent once');
      const m = mine[0]!;
      assert.deepEqual(m.to, ['sales@example.test']);
      assert.equal(String(m.parsed.subject), 'Contact: Zoë & <b> Lee Bcc: x@evil.test', 'one line, not escaped');
      assert.doesNotMatch(m.raw.slice(0, m.raw.indexOf('\r\n\r\n')), /^Bcc:/m, 'no header injected');
      assert.equal(String(m.parsed.text).trim(), 'Name: Zoë & <b> Lee\nBcc: x@evil.test\nEmail: zoe@example.test\nWebsite: \n\nWe need **fifty** seats.'.replace(/\r/g, ''));
    });

    it('a script fills a notification by hand; a failing request sends nothing; a missing field is a 4xx', async () => {
      const v = new TestVisitor(s.port);
      const failed = await v.post('/direct', { fail: '1' });
      assert.equal(failed.status, 400);
      const incomplete = await v.post('/incomplete', {});
      assert.equal(incomplete.status, 422, incomplete.text);
      assert.match(incomplete.text, /Last Name is required/);
      const ok = await v.post('/direct', {});
      assert.equal(ok.status, 200, ok.text);
      await until(() => smtp.received.some((m) => /Dora/.test(m.raw)), 'the notification arrives');
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(smtp.received.filter((m) => /Dora/.test(m.raw)).length, 1, 'submit() twice queues it once; the failed request queued nothing');
      assert.ok(!smtp.received.some((m) => /Ivy/.test(m.raw)));
    });

    it('a GET script may not submit a notification', async () => {
      const res = await s.get('/peek');
      assert.equal(res.status, 500);
    });
  });
}

describe('notification definitions', () => {
  it('report problems at their file', () => {
    const d = diagnosticsOf({
      '📡/contact.yaml': 'a: string\n',
      '📡/NoRecipient.yaml': 'a: string\n',
      '📡/NoRecipient/email.txt': '{{a}}',
      '📡/BadSubject.yaml': '🎛:\n  default: a@example.test\n  subject: "{{#a}}"\n  color: red\na: string\n',
      '📡/BadSubject/email.txt': '{{a}}',
      '📡/NoBody.yaml': '🎛:\n  default: not-an-address\na: string\n',
      '📡/Orphan/email.txt': 'x',
      '📦/🌐Task.yaml': 'title: string\n',
      '📡/Task.yaml': '🎛:\n  default: a@example.test\na: string\n',
      '📡/Task/email.txt': 'x',
      '📡/Fine.yaml': '🎛:\n  default: a@example.test\na: string\n',
      '📡/Fine/email.txt': '{{a}}',
      'x/📮send.js': "import {Missing} from '📡';\n({});\n",
    });
    // Formatted as `file:line:column: message [CODE]`.
    const at = (file: string) => d.filter((x) => x.startsWith(file + ':')).join('\n');
    assert.match(at('📡/contact.yaml'), /capital letter.*\[LW_MAIL_NOTIFICATION\]/);
    assert.match(at('📡/NoRecipient.yaml'), /no recipient.*\[LW_MAIL_NOTIFICATION\]/);
    assert.match(at('📡/BadSubject.yaml'), /:4:\d+: unknown setting "color".*\[LW_MODEL_SETTINGS\]/);
    assert.match(at('📡/BadSubject.yaml'), /:3:\d+: the subject of BadSubject is not a valid template.*\[LW_MAIL_NOTIFICATION\]/);
    assert.match(at('📡/NoBody.yaml'), /:2:\d+: default: is the address.*\[LW_MODEL_SETTINGS\]/);
    assert.doesNotMatch(at('📡/NoBody.yaml'), /no recipient/, 'one message for a bad recipient');
    assert.match(at('📡/NoBody.yaml'), /no message: write its body in \/📡\/NoBody\/email.txt/);
    assert.match(at('📡/Orphan'), /there is no \/📡\/Orphan.yaml/);
    assert.match(at('📡/Task.yaml'), /already a model/);
    assert.match(at('x/📮send.js'), /no notification "Missing" in \/📡\/; the notifications are Fine/);
    assert.equal(at('📡/Fine.yaml'), '');
  });
});
