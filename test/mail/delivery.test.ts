/**
 * The outbox and its worker against a real SMTP server on 127.0.0.1 (smtp-server, messages read
 * back with mailparser), on SQLite and on PostgreSQL: delivery, permanent refusals, refused
 * credentials, a server that is down then up, giving up, rolled-back requests, two workers on one
 * database, a worker that died mid-send, clean-up of old rows, and stop() during a send.
 *
 * Time is a clock the tests move; `kick()` answers when its pass is over, so nothing here waits
 * for a duration.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { LanewayError } from '../../src/diag/index.js';
import { DEFAULT_MAIL_TIMINGS, enqueueMail, mailTransportFromEnv, MailWorker, type MailMessage, type MailTransport } from '../../src/mail/index.js';
import { closedPort, ENGINE_KINDS, outboxRows, queue, startSmtp, testClock, testLog, until, type TestDb, type TestSmtp } from './helpers.js';

const HOUR = 3_600_000;
const MSG: MailMessage = { to: ['ann@example.com'], from: 'shop@example.com', subject: 'Your order', text: 'Thank you.' };

/** A transport to the test server on `port` (optionally with credentials), through the environment as in production. */
function smtpTo(port: number, credentials = ''): MailTransport {
  return mailTransportFromEnv({ LANEWAY_SMTP_URL: `smtp://${credentials}127.0.0.1:${port}`, LANEWAY_MAIL_FROM: '"Example Shop" <shop@example.com>' }, '/nonexistent');
}

for (const kind of ENGINE_KINDS) {
  describe(`mail delivery (${kind.name})`, () => {
    const open: Array<{ close(): Promise<void> }> = [];
    const workers: MailWorker[] = [];
    after(async () => {
      await Promise.all(workers.map((w) => w.stop()));
      await Promise.all(open.map((o) => o.close()));
    });

    async function setup(smtp: SmtpSetup = {}): Promise<{ db: TestDb; server: TestSmtp | undefined; clock: ReturnType<typeof testClock>; log: ReturnType<typeof testLog>; worker: MailWorker }> {
      const db = await kind.open();
      open.push(db);
      const server = smtp.server === false ? undefined : await startSmtp(smtp.server);
      if (server) open.push(server);
      const clock = testClock();
      const log = testLog();
      const worker = new MailWorker(db.engine, { dataDir: db.dir, transport: smtp.transport ?? smtpTo(server!.port, smtp.credentials), log, now: clock.now });
      workers.push(worker);
      return { db, server, clock, log, worker };
    }

    it('delivers a queued message: envelope and headers as given, Message-ID from the outbox id, no Bcc, nothing of the body in the log', async () => {
      const { db, server, clock, log, worker } = await setup();
      const message: MailMessage = {
        to: ['ann@example.com', '"Bob Smith" <bob@example.org>'],
        replyTo: '"Support" <help@example.com>',
        subject: 'Grüße: your order #42',
        text: 'Hello Ann,\n\nyour order ships today. Zoë\n',
      };
      await queue(db.engine, [message, { ...MSG, to: ['carol@example.net'], from: '"Carol\'s shop" <carol@example.com>' }], clock.now());
      await worker.kick();

      const got = server!.received;
      assert.equal(got.length, 2);
      const first = got.find((r) => r.to.length === 2)!;
      assert.equal(first.from, 'shop@example.com', 'the default sender, LANEWAY_MAIL_FROM');
      assert.deepEqual(first.to, ['ann@example.com', 'bob@example.org']);
      const p = first.parsed;
      assert.equal(p.from?.text, '"Example Shop" <shop@example.com>');
      assert.deepEqual(
        (Array.isArray(p.to) ? p.to : [p.to!]).flatMap((a) => a.value.map((v) => [v.name, v.address])),
        [['', 'ann@example.com'], ['Bob Smith', 'bob@example.org']],
      );
      assert.equal(p.replyTo?.value[0]?.address, 'help@example.com');
      assert.equal(p.subject, message.subject);
      assert.equal(p.text, message.text);
      assert.equal(p.bcc, undefined);
      assert.doesNotMatch(first.raw, /^bcc:/im);
      const rows = await outboxRows(db.engine);
      assert.equal(p.messageId, `<${rows.find((r) => r.subject === message.subject)!.id}@example.com>`);
      assert.ok(rows.every((r) => r.sentAt === clock.now() && r.attempts === 1 && r.leaseUntil === null && r.lastError === null));
      const second = got.find((r) => r.to[0] === 'carol@example.net')!;
      assert.equal(second.from, 'carol@example.com', "the message's own sender");
      assert.equal(second.parsed.from?.value[0]?.name, "Carol's shop");

      assert.match(log.text(), /^mail: message .* sent \(250/m);
      assert.doesNotMatch(log.text(), /ships today|Thank you|Grüße/);
      // Sent once: later passes find nothing to do.
      clock.advance(2 * HOUR);
      await worker.kick();
      assert.equal(server!.received.length, 2);
    });

    it('records a permanent 5xx refusal and never tries it again; a message refused for one recipient of two is delivered to the other', async () => {
      const { db, server, clock, log, worker } = await setup({ server: { rcpt: (a) => (a.startsWith('nobody') ? { code: 550, message: 'No such user here' } : undefined) } });
      await queue(db.engine, [{ ...MSG, to: ['nobody@example.com'], subject: 'refused' }, { ...MSG, to: ['nobody@example.com', 'ann@example.com'], subject: 'partly' }], clock.now());
      await worker.kick();

      const [partly, refused] = await outboxRows(db.engine);
      assert.equal(refused!.subject, 'refused');
      assert.equal(refused!.sentAt, null);
      assert.equal(refused!.failedAt, clock.now());
      assert.match(refused!.lastError!, /550.*No such user here/);
      assert.match(log.text(), /message .* was refused and will not be tried again: .*550 No such user here.*"code":"LW_MAIL_REFUSED"/);
      assert.equal(partly!.sentAt, clock.now());
      assert.match(partly!.lastError!, /the server refused 1 recipient\(s\): nobody@example\.com/);
      assert.deepEqual(server!.received.map((r) => [r.parsed.subject, r.to]), [['partly', ['ann@example.com']]]);

      const rcptBefore = server!.counts.rcpt;
      for (let i = 0; i < 3; i++) {
        clock.advance(2 * HOUR);
        await worker.kick();
      }
      assert.equal(server!.counts.rcpt, rcptBefore, 'no further attempt');
      assert.equal((await outboxRows(db.engine))[1]!.attempts, 1);
    });

    it('keeps messages queued when the server refuses the password, logs LW_MAIL_AUTH without the password, and delivers them once the credentials are right', async () => {
      const password = 'Right-Pa55word';
      const wrong = 'wr0ng:Pa55/w@rd';
      const { db, server, clock, log, worker } = await setup({ server: { auth: { user: 'app', pass: password } }, credentials: `app:${encodeURIComponent(wrong)}@` });
      await queue(db.engine, [MSG], clock.now());
      await worker.kick();

      let [row] = await outboxRows(db.engine);
      assert.equal(row!.sentAt, null);
      assert.equal(row!.failedAt, null);
      assert.equal(row!.attempts, 1);
      assert.equal(row!.nextAt, clock.now() + 5_000);
      assert.match(row!.lastError!, /EAUTH.*535/);
      assert.match(log.text(), /refused the credentials of LANEWAY_SMTP_URL.*"code":"LW_MAIL_AUTH"/);
      assert.equal(server!.counts.auth, 1);

      // Paused: kicks before the pause ends try nothing.
      await worker.kick();
      assert.equal(server!.counts.auth, 1);
      clock.advance(5_000);
      await worker.kick();
      assert.equal(server!.counts.auth, 2);
      [row] = await outboxRows(db.engine);
      assert.equal(row!.attempts, 2);
      assert.equal(row!.nextAt, clock.now() + 10_000);

      const secrets = [wrong, encodeURIComponent(wrong), Buffer.from(wrong).toString('base64'), Buffer.from(`\u0000app\u0000${wrong}`).toString('base64')];
      const everything = log.text() + (row!.lastError ?? '');
      for (const s of secrets) assert.ok(!everything.includes(s), `the log holds the password (${s})`);

      // The operator fixes LANEWAY_SMTP_URL and restarts: the queued message goes out, once.
      await worker.stop();
      const fixed = new MailWorker(db.engine, { dataDir: db.dir, transport: smtpTo(server!.port, `app:${password}@`), log, now: clock.now });
      workers.push(fixed);
      clock.advance(10_000);
      await fixed.kick();
      assert.equal(server!.received.length, 1);
      assert.equal((await outboxRows(db.engine))[0]!.attempts, 3);
      clock.advance(HOUR);
      await fixed.kick();
      assert.equal(server!.received.length, 1);
    });

    it('retries while the server is down and delivers exactly once when it is back', async () => {
      const port = await closedPort();
      const { db, clock, log, worker } = await setup({ server: false, transport: smtpTo(port) });
      await queue(db.engine, [MSG, { ...MSG, subject: 'second' }], clock.now());
      await worker.kick();

      let rows = await outboxRows(db.engine);
      // The first failure pauses the worker: the other message was not even tried.
      assert.deepEqual(rows.map((r) => r.attempts).sort(), [0, 1]);
      const tried = rows.find((r) => r.attempts === 1)!;
      assert.equal(tried.nextAt, clock.now() + 5_000);
      assert.match(tried.lastError!, /ESOCKET|ECONNECTION/);
      assert.match(log.text(), /cannot be reached\); next attempt in 5 s: .*ECONNREFUSED.*"code":"LW_MAIL_RETRY"/);

      clock.advance(5_000);
      await worker.kick();
      rows = await outboxRows(db.engine);
      assert.deepEqual(rows.map((r) => r.attempts), [1, 1], 'the message not tried yet probes the server (the other is not due)');

      const server = await startSmtp({ port });
      open.push(server);
      clock.advance(10_000);
      await worker.kick();
      assert.deepEqual(server.received.map((r) => r.parsed.subject).sort(), ['Your order', 'second']);
      for (let i = 0; i < 3; i++) {
        clock.advance(HOUR);
        await worker.kick();
      }
      assert.equal(server.received.length, 2, 'each message exactly once');
      assert.ok((await outboxRows(db.engine)).every((r) => r.sentAt !== null));
    });

    it('gives up after about 24 hours of 4xx replies (33 attempts), logs LW_MAIL_GAVE_UP, and tries no more', async () => {
      const { db, server, clock, log, worker } = await setup({ server: { rcpt: () => ({ code: 451, message: 'Try again later' }) } });
      await queue(db.engine, [MSG], clock.now());
      const started = clock.now();
      await worker.kick();
      const delays: number[] = [];
      for (let i = 0; i < 60; i++) {
        const [row] = await outboxRows(db.engine);
        if (row!.failedAt !== null) break;
        assert.match(row!.lastError!, /451 Try again later/);
        delays.push(row!.nextAt - clock.now());
        clock.advance(row!.nextAt - clock.now());
        await worker.kick();
      }
      const [row] = await outboxRows(db.engine);
      assert.notEqual(row!.failedAt, null);
      assert.equal(row!.attempts, 33);
      assert.deepEqual(delays.slice(0, 12), [5, 10, 20, 40, 80, 160, 320, 640, 1280, 2560, 3600, 3600].map((s) => s * 1000));
      assert.ok(clock.now() - started < DEFAULT_MAIL_TIMINGS.giveUpAfterMs && clock.now() - started > 23 * HOUR);
      assert.match(log.text(), /could not be delivered in 33 attempts over 24 h and is given up: .*451.*"code":"LW_MAIL_GAVE_UP"/);
      const rcpt = server!.counts.rcpt;
      clock.advance(2 * HOUR);
      await worker.kick();
      assert.equal(server!.counts.rcpt, rcpt);
    });

    it('sends nothing for a rolled-back transaction, and refuses an invalid message without writing it', async () => {
      const { db, server, clock, worker } = await setup();
      const w = await db.engine.begin();
      await enqueueMail(w, MSG, db.engine, clock.now());
      assert.throws(() => enqueueMail(w, { ...MSG, subject: 'x\r\nBcc: victim@example.com' }, db.engine), (e: unknown) => e instanceof LanewayError && e.code === 'LW_MAIL_INVALID');
      await w.rollback();
      assert.deepEqual(await outboxRows(db.engine), []);
      await worker.kick();
      assert.equal(server!.counts.connections, 0);

      const w2 = await db.engine.begin();
      assert.throws(() => enqueueMail(w2, { ...MSG, to: ['victim@example.com\nBcc: x@example.com'] }, db.engine));
      await enqueueMail(w2, MSG, db.engine, clock.now());
      await w2.commit();
      await worker.kick();
      assert.equal(server!.received.length, 1);
      assert.equal((await outboxRows(db.engine)).length, 1);
    });

    it('two workers on one database (two processes) send each message once', async () => {
      const { db, server, clock, log, worker: a } = await setup();
      // A second engine on the same file or database: its own connections, as another process has.
      const b = new MailWorker(await db.another(), { dataDir: db.dir, transport: smtpTo(server!.port), log, now: clock.now });
      workers.push(b);
      const messages = Array.from({ length: 45 }, (_, i) => ({ ...MSG, subject: `m${i}` }));
      await queue(db.engine, messages, clock.now());
      await until(async () => {
        await Promise.all([a.kick(), b.kick(), a.kick(), b.kick()]);
        return (await outboxRows(db.engine)).every((r) => r.sentAt !== null);
      }, 'every message is sent');
      const subjects = server!.received.map((r) => r.parsed.subject!).sort();
      assert.deepEqual(subjects, messages.map((m) => m.subject).sort());
      assert.ok((await outboxRows(db.engine)).every((r) => r.attempts === 1));
    });

    it('takes a message again once the lease of a worker that died mid-send has ended', async () => {
      const { db, server, clock, worker } = await setup();
      await queue(db.engine, [MSG], clock.now());
      // A worker claimed it, then its process died before recording anything.
      const lease = clock.now() + DEFAULT_MAIL_TIMINGS.leaseMs;
      const p = db.engine.dialect === 'sqlite' ? ['?', '?'] : ['$1', '$2'];
      const w = await db.engine.begin();
      await w.run(`UPDATE "lw__outbox" SET "lease_until" = ${p[0]}, "attempts" = 1 WHERE "id" = ${p[1]}`, [lease, (await outboxRows(db.engine))[0]!.id]);
      await w.commit();

      await worker.kick();
      assert.equal(server!.counts.connections, 0, 'not while the lease holds');
      clock.advance(DEFAULT_MAIL_TIMINGS.leaseMs + 1);
      await worker.kick();
      assert.equal(server!.received.length, 1);
      const [row] = await outboxRows(db.engine);
      assert.equal(row!.attempts, 2);
      assert.notEqual(row!.sentAt, null);
    });

    it('deletes delivered messages after a day and failed ones after 30 days', async () => {
      const { db, clock, worker } = await setup({ server: { rcpt: (a) => (a.startsWith('nobody') ? { code: 550, message: 'No such user' } : undefined) } });
      await queue(db.engine, [MSG, { ...MSG, to: ['nobody@example.com'] }], clock.now());
      await worker.kick();
      assert.equal((await outboxRows(db.engine)).length, 2);
      clock.advance(DEFAULT_MAIL_TIMINGS.keepSentMs + 1);
      await worker.kick();
      assert.deepEqual((await outboxRows(db.engine)).map((r) => r.failedAt !== null), [true]);
      clock.advance(DEFAULT_MAIL_TIMINGS.keepFailedMs);
      await worker.kick();
      assert.deepEqual(await outboxRows(db.engine), []);
    });

    it('stop() waits for the message being sent and records it; kicks after it do nothing', async () => {
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      const { db, server, clock, worker } = await setup({ server: { hold: () => gate } });
      await queue(db.engine, [MSG, { ...MSG, subject: 'second' }], clock.now());
      const pass = worker.kick();
      await until(() => server!.counts.data === 1, 'the server has the first message');
      let stopped = false;
      const stopping = worker.stop().then(() => (stopped = true));
      await new Promise((r) => setTimeout(r, 20));
      assert.equal(stopped, false, 'stop() waits for the send in flight');
      release();
      await stopping;
      await pass;
      const rows = await outboxRows(db.engine);
      assert.deepEqual(rows.map((r) => r.sentAt !== null).sort(), [false, true], 'the message in flight is recorded as sent; the other waits');
      await worker.kick();
      assert.equal(server!.counts.data, 1);
    });
  });
}

interface SmtpSetup {
  /** Options of the test server; false: none. */
  server?: Parameters<typeof startSmtp>[0] | false;
  /** `user:pass@` for the transport's URL. */
  credentials?: string;
  transport?: MailTransport | undefined;
}

describe('mail without configuration (.eml files)', () => {
  const dbs: TestDb[] = [];
  after(() => Promise.all(dbs.map((d) => d.close())));
  let db: TestDb;
  before(async () => {
    db = await ENGINE_KINDS[0]!.open();
    dbs.push(db);
  });

  it('writes each message as an .eml file in <dataDir>/outbox/ and logs where', async () => {
    const { readdir, readFile } = await import('node:fs/promises');
    const { join } = await import('node:path');
    const { simpleParser } = await import('mailparser');
    const clock = testClock();
    const log = testLog();
    const worker = new MailWorker(db.engine, { dataDir: db.dir, transport: mailTransportFromEnv({ LANEWAY_MAIL_FROM: '"Example" <hello@example.com>' }, db.dir), log, now: clock.now });
    worker.start();
    try {
      await queue(db.engine, [{ to: ['ann@example.com'], subject: 'Welcome', text: 'Hello Ann\n' }], clock.now());
      await worker.kick();
      const dir = join(db.dir, 'outbox');
      assert.match(log.lines[0]!, new RegExp(`^mail: writing messages as \\.eml files to ${dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(set LANEWAY_SMTP_URL`));
      const files = await readdir(dir);
      assert.equal(files.length, 1);
      assert.match(files[0]!, /^\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z-[0-9a-f-]{36}\.eml$/);
      assert.ok(log.lines.some((l) => l === `mail: message ${files[0]!.slice(25, -4)} written to ${join(dir, files[0]!)}`), log.text());
      const raw = await readFile(join(dir, files[0]!));
      assert.match(raw.toString('latin1'), /\r\n\r\n/, 'CRLF line ends (RFC 5322)');
      const parsed = await simpleParser(raw);
      assert.equal(parsed.from?.text, '"Example" <hello@example.com>');
      assert.equal(parsed.subject, 'Welcome');
      assert.equal(parsed.text, 'Hello Ann\n');
      assert.equal((await outboxRows(db.engine))[0]!.sentAt, clock.now());
    } finally {
      await worker.stop();
    }
  });

  it('uses <dataDir>/outbox/ when the worker is given no transport', async () => {
    const { readdir } = await import('node:fs/promises');
    const { join } = await import('node:path');
    const clock = testClock();
    const worker = new MailWorker(db.engine, { dataDir: db.dir, log: testLog(), now: clock.now });
    await queue(db.engine, [{ to: ['bob@example.com'], subject: 'Second', text: '.' }], clock.now());
    await worker.kick();
    await worker.stop();
    assert.equal((await readdir(join(db.dir, 'outbox'))).filter((f) => f.endsWith('.eml')).length, 2);
  });

  it("does not keep the process alive: a process that only started a worker exits by itself", async () => {
    const { spawnSync } = await import('node:child_process');
    const { fileURLToPath } = await import('node:url');
    const root = fileURLToPath(new URL('../..', import.meta.url));
    const code = [
      "import { openSqlite } from './src/store/index.js';",
      "import { ensureMailTables, MailWorker } from './src/mail/index.js';",
      `const engine = openSqlite(${JSON.stringify(db.dir + '/alive.db')});`,
      'await ensureMailTables(engine);',
      `new MailWorker(engine, { dataDir: ${JSON.stringify(db.dir)}, log: { info: (m) => console.log(m), error: (m) => console.log(m) } }).start();`,
    ].join('\n');
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { cwd: root, encoding: 'utf8', timeout: 60_000 });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^mail: writing messages as \.eml files to /);
  });
});
