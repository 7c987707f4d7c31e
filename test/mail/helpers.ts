/**
 * What the mail tests share: a real SMTP server on 127.0.0.1 (smtp-server) that parses what it
 * receives (mailparser) and can refuse recipients, require a password, or hold a message back; a
 * clock the tests move by hand; a log that keeps its lines; and the two database engines.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SMTPServer, type SMTPServerAddress } from 'smtp-server';
import { simpleParser, type ParsedMail } from 'mailparser';
import { openSqlite, type Engine } from '../../src/store/index.js';
import { openPostgres } from '../../src/store/postgres.js';
import { ensureMailTables, enqueueMail, type MailLog, type MailMessage } from '../../src/mail/index.js';
import { startPostgres } from '../support/postgres.js';

/** A bound for "happens promptly" that a loaded machine still meets. */
export const SETTLES_MS = 15_000;

/** Resolves once `check()` holds (polled), or rejects after `ms`. */
export async function until(check: () => boolean | Promise<boolean>, what: string, ms = SETTLES_MS): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

export interface Received {
  from: string;
  to: string[];
  raw: string;
  parsed: ParsedMail;
}

export interface SmtpOptions {
  /** Listen on this port (a server that comes back after being down). */
  port?: number;
  /** Require AUTH with these credentials. */
  auth?: { user: string; pass: string };
  /** An SMTP error for a recipient (or for every one). */
  rcpt?: (address: string) => { code: number; message: string } | undefined;
  /** Called when a message's data arrives; the server answers when it resolves. */
  hold?: () => Promise<void>;
}

export interface TestSmtp {
  port: number;
  received: Received[];
  /** SMTP sessions opened, RCPT TO commands seen, AUTH attempts seen, DATA commands begun. */
  counts: { connections: number; rcpt: number; auth: number; data: number };
  close(): Promise<void>;
}

function smtpError(code: number, message: string): Error {
  return Object.assign(new Error(message), { responseCode: code });
}

export async function startSmtp(options: SmtpOptions = {}): Promise<TestSmtp> {
  const received: Received[] = [];
  const counts = { connections: 0, rcpt: 0, auth: 0, data: 0 };
  const server = new SMTPServer({
    logger: false,
    // No TLS in tests: the client would refuse the server's self-signed certificate.
    disabledCommands: options.auth ? ['STARTTLS'] : ['STARTTLS', 'AUTH'],
    authOptional: !options.auth,
    allowInsecureAuth: true,
    closeTimeout: 1_000,
    onConnect(_session, callback) {
      counts.connections++;
      callback();
    },
    onAuth(auth, _session, callback) {
      counts.auth++;
      if (options.auth && auth.username === options.auth.user && auth.password === options.auth.pass) callback(null, { user: auth.username });
      else callback(smtpError(535, 'Authentication credentials invalid'));
    },
    onRcptTo(address: SMTPServerAddress, _session, callback) {
      counts.rcpt++;
      const refusal = options.rcpt?.(address.address);
      callback(refusal ? smtpError(refusal.code, refusal.message) : null);
    },
    onData(stream, session, callback) {
      counts.data++;
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks);
        void (async () => {
          await options.hold?.();
          const parsed = await simpleParser(raw);
          const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
          received.push({ from, to: session.envelope.rcptTo.map((r) => r.address), raw: raw.toString('utf8'), parsed });
          callback();
        })();
      });
    },
  });
  const port = await new Promise<number>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve((server.server.address() as { port: number }).port));
  });
  return {
    port,
    received,
    counts,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A port where nothing listens now (a server may be started on it later). */
export async function closedPort(): Promise<number> {
  const s = await startSmtp();
  await s.close();
  return s.port;
}

/** A clock the test moves; starts at the real time (so rows written by other means are due too). */
export function testClock(): { now: () => number; advance(ms: number): void } {
  let t = Date.now();
  return { now: () => t, advance: (ms) => void (t += ms) };
}

/** A log keeping every line (error fields appended as JSON). */
export function testLog(): MailLog & { lines: string[]; text(): string } {
  const lines: string[] = [];
  return {
    lines,
    info: (m) => void lines.push(m),
    error: (m, f) => void lines.push(`${m} ${JSON.stringify(f ?? {})}`),
    text: () => lines.join('\n'),
  };
}

/** A database for one test: its engine with the outbox table, and a way to open a second engine on it (another process). */
export interface TestDb {
  engine: Engine;
  dir: string;
  another(): Promise<Engine>;
  close(): Promise<void>;
}

export interface EngineKind {
  name: 'sqlite' | 'postgres';
  open(): Promise<TestDb>;
}

export const ENGINE_KINDS: EngineKind[] = [
  {
    name: 'sqlite',
    async open() {
      const dir = mkdtempSync(join(tmpdir(), 'laneway-mail-'));
      const file = join(dir, 'laneway.db');
      return withOutbox(openSqlite(file), dir, async () => openSqlite(file));
    },
  },
  {
    name: 'postgres',
    async open() {
      const url = await (await startPostgres()).createDatabase();
      const dir = mkdtempSync(join(tmpdir(), 'laneway-mail-'));
      return withOutbox(await openPostgres(url), dir, () => openPostgres(url));
    },
  },
];

async function withOutbox(engine: Engine, dir: string, open: () => Promise<Engine>): Promise<TestDb> {
  await ensureMailTables(engine);
  const others: Engine[] = [];
  return {
    engine,
    dir,
    async another() {
      const e = await open();
      others.push(e);
      return e;
    },
    async close() {
      await Promise.all([engine, ...others].map((e) => e.close()));
    },
  };
}

/** Queues messages in one committed transaction. */
export async function queue(engine: Engine, messages: MailMessage[], now: number): Promise<void> {
  const w = await engine.begin();
  for (const m of messages) await enqueueMail(w, m, engine, now);
  await w.commit();
}

export interface OutboxRow {
  id: string;
  attempts: number;
  nextAt: number;
  leaseUntil: number | null;
  sentAt: number | null;
  failedAt: number | null;
  lastError: string | null;
  subject: string;
}

/** Every row of the outbox, oldest first, then by subject (rows queued together have random ids). */
export async function outboxRows(engine: Engine): Promise<OutboxRow[]> {
  const rows = await engine.reader.all('SELECT "id", "attempts", "next_at", "lease_until", "sent_at", "failed_at", "last_error", "message" FROM "lw__outbox" ORDER BY "created"', []);
  const n = (v: unknown) => (v === null ? null : Number(v));
  return rows.map((r) => ({
    id: String(r[0]),
    attempts: Number(r[1]),
    nextAt: Number(r[2]),
    leaseUntil: n(r[3]),
    sentAt: n(r[4]),
    failedAt: n(r[5]),
    lastError: r[6] === null ? null : String(r[6]),
    subject: (JSON.parse(String(r[7])) as MailMessage).subject,
  })).sort((a, b) => (a.subject < b.subject ? -1 : a.subject > b.subject ? 1 : 0));
}

/**
 * Points the app's mail settings at a test SMTP server (`LANEWAY_SMTP_URL`, and `LANEWAY_MAIL_FROM`
 * `"Site" <site@example.test>`) before an app's store is opened; the function it answers puts the
 * environment back.
 */
export function useSmtpEnv(port: number): () => void {
  const saved = { LANEWAY_SMTP_URL: process.env.LANEWAY_SMTP_URL, LANEWAY_MAIL_FROM: process.env.LANEWAY_MAIL_FROM };
  process.env.LANEWAY_SMTP_URL = `smtp://127.0.0.1:${port}`;
  process.env.LANEWAY_MAIL_FROM = '"Site" <site@example.test>';
  return () => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
}
