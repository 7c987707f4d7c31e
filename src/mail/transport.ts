/**
 * Where messages go: an SMTP server (LANEWAY_SMTP_URL, or one of the platform's provider names as
 * a preset), or, without configuration, `.eml` files in the data directory, so that development
 * needs no mail server.
 *
 * A transport turns every failure into a MailSendError of one of four kinds, which decide what the
 * worker does (docs/email.md "Delivery"):
 *
 * - `permanent`: the server refused this message for good (a 5xx reply to MAIL FROM, RCPT TO or
 *   DATA, except 503): recorded, never tried again;
 * - `message`: this message failed for now (a 4xx reply to it, anything unclassified): tried again
 *   with backoff;
 * - `connection`: the server could not be reached or ended the session (refused, timed out, TLS,
 *   a 421 reply, a full disk for `.eml` files): tried again, and the worker pauses every message;
 * - `auth`: the server refused the credentials: like `connection` (the credentials are wrong for
 *   every message, and fixing them must not find the messages given up at once).
 *
 * Passwords never reach a log line or an error message: the URL is parsed here (never echoed in an
 * error), descriptions name the host and port only, and the text of every error is scrubbed of the
 * password in the forms it could take on the wire.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { createRequire } from 'node:module';
import type Nodemailer from 'nodemailer';
import type { SendMailOptions } from 'nodemailer';

// nodemailer is loaded when an app first makes a transport: apps that send no e-mail never load it.
const require = createRequire(import.meta.url);
const createTransport: typeof Nodemailer.createTransport = ((...args: unknown[]) => (require('nodemailer') as typeof Nodemailer).createTransport(...(args as [never]))) as typeof Nodemailer.createTransport;
import { LanewayError } from '../diag/index.js';
import { parseMailAddress, type MailAddress, type MailMessage } from './message.js';

/** A message ready to send: the sender decided, with the outbox row's id and time. */
export interface OutgoingMail extends MailMessage {
  from: string;
  /** The outbox row id: the Message-ID is `<id@sender's domain>` on every attempt. */
  id: string;
  /** When the message was queued (the Date header). */
  date: Date;
}

/** What a transport reports of a delivered message. */
export interface MailSent {
  /** Recipients the server refused while it accepted the message for the others. */
  rejected: string[];
  /** The server's final reply (SMTP). */
  response?: string;
  /** The file written (the `.eml` outbox). */
  file?: string;
}

export type MailFailureKind = 'permanent' | 'message' | 'connection' | 'auth';

/** A failed delivery attempt; `message` holds no password. */
export class MailSendError extends Error {
  readonly kind: MailFailureKind;
  /** The SMTP reply code, when the server answered. */
  readonly responseCode: number | undefined;
  constructor(kind: MailFailureKind, message: string, responseCode?: number) {
    super(message);
    this.name = 'MailSendError';
    this.kind = kind;
    this.responseCode = responseCode;
  }
}

/** Delivers messages one at a time (the worker never sends two at once through one transport). */
export interface MailTransport {
  /** Where messages go, for the log line at start: host and port, never credentials. */
  readonly description: string;
  /** The sender of messages that name none (LANEWAY_MAIL_FROM). */
  readonly defaultFrom: string | undefined;
  /** Resolves when the message was accepted (or written); rejects with a MailSendError. */
  send(message: OutgoingMail): Promise<MailSent>;
  /** Releases connections; no send is in flight when the worker calls it. */
  close(): void;
}

/** A connection that is slow to open, to greet or to answer ends the attempt (nodemailer waits minutes by default). */
export interface SmtpTimeouts {
  connectionMs: number;
  greetingMs: number;
  /** Longest silence of the server while a message is sent. */
  socketMs: number;
}

export const DEFAULT_SMTP_TIMEOUTS: SmtpTimeouts = { connectionMs: 20_000, greetingMs: 20_000, socketMs: 60_000 };

/** An SMTP server and how to reach it, parsed from LANEWAY_SMTP_URL. */
export interface SmtpTarget {
  /** The URL scheme: `smtp`, `smtps` or a provider name. */
  scheme: string;
  host: string;
  port: number;
  /** TLS from the first byte (port 465); otherwise STARTTLS. */
  secure: boolean;
  /** Refuse to go on (and to send credentials) when the server offers no STARTTLS. */
  requireTLS: boolean;
  user?: string;
  pass?: string;
}

/** The platform's providers (docs/email.md "Configuration") and their submission endpoints. */
export const SMTP_PRESETS: Readonly<Record<string, { host: string; port: number }>> = {
  gmail: { host: 'smtp.gmail.com', port: 465 },
  mailgun: { host: 'smtp.mailgun.org', port: 587 },
  mailjet: { host: 'in-v3.mailjet.com', port: 587 },
  'ses-us-east-1': { host: 'email-smtp.us-east-1.amazonaws.com', port: 587 },
  'ses-eu-west-1': { host: 'email-smtp.eu-west-1.amazonaws.com', port: 587 },
};

function configError(message: string): LanewayError {
  return new LanewayError('LW_MAIL_CONFIG', message);
}

const URL_FORMS = 'smtp://user:pass@host:port, smtps://user:pass@host:port, or <provider>://user:pass@ with a provider of ' + Object.keys(SMTP_PRESETS).join(', ');

function decode(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/**
 * Parses LANEWAY_SMTP_URL. Written by hand rather than with `new URL`: `gmail://user:pass@` has no
 * host, which WHATWG URLs refuse, and a password may hold characters (`/`, `#`, `@`) that would
 * otherwise need escaping. The user information ends at the last `@`; user and password are
 * percent-decoded. Errors never repeat the value (it holds the password).
 */
export function parseSmtpUrl(url: string): SmtpTarget {
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/(.*)$/s.exec(url.trim());
  if (!m) throw configError(`LANEWAY_SMTP_URL is not a URL: write ${URL_FORMS}`);
  const scheme = m[1]!.toLowerCase();
  const rest = m[2]!;
  const at = rest.lastIndexOf('@');
  const userinfo = at >= 0 ? rest.slice(0, at) : '';
  const hostport = (at >= 0 ? rest.slice(at + 1) : rest).replace(/\/$/, '');
  let user: string | undefined;
  let pass: string | undefined;
  if (userinfo) {
    const colon = userinfo.indexOf(':');
    user = decode(colon >= 0 ? userinfo.slice(0, colon) : userinfo);
    pass = colon >= 0 ? decode(userinfo.slice(colon + 1)) : undefined;
    if (!user) throw configError('LANEWAY_SMTP_URL has a password but no user name');
  }
  const preset = SMTP_PRESETS[scheme];
  if (preset) {
    if (hostport) throw configError(`LANEWAY_SMTP_URL: ${scheme}:// needs no host (it is ${preset.host}); write ${scheme}://user:pass@`);
    if (!user || !pass) throw configError(`LANEWAY_SMTP_URL: ${scheme}:// needs the user name and password of your ${scheme} SMTP account: ${scheme}://user:pass@`);
    // Port 465 is TLS from the start; on 587 the credentials wait for STARTTLS.
    return { scheme, host: preset.host, port: preset.port, secure: preset.port === 465, requireTLS: preset.port !== 465, user, pass };
  }
  if (scheme !== 'smtp' && scheme !== 'smtps') throw configError(`LANEWAY_SMTP_URL: "${scheme}://" is not a kind of mail server Laneway knows; write ${URL_FORMS}`);
  const hp = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(?::(\d{1,5}))?$/.exec(hostport);
  if (!hp) throw configError(`LANEWAY_SMTP_URL: the host of the ${scheme}:// URL is missing or malformed (a path, query or fragment is not allowed); write ${URL_FORMS}`);
  const host = hp[1]!;
  const secure = scheme === 'smtps';
  const port = hp[2] ? Number(hp[2]) : secure ? 465 : 587;
  if (port < 1 || port > 65535) throw configError(`LANEWAY_SMTP_URL: port ${port} is not a TCP port`);
  // A password goes to a remote server only over TLS; a local relay may speak plain SMTP.
  const requireTLS = !secure && pass !== undefined && !isLoopback(host);
  return { scheme, host, port, secure, requireTLS, ...(user !== undefined ? { user } : {}), ...(pass !== undefined ? { pass } : {}) };
}

/** The forms a password could take in a server's reply or a library's message. */
function scrubber(user: string | undefined, pass: string | undefined): (text: string) => string {
  if (!pass) return (t) => t;
  const forms = new Set([pass, encodeURIComponent(pass), Buffer.from(pass).toString('base64'), Buffer.from(`\u0000${user ?? ''}\u0000${pass}`).toString('base64')]);
  return (text) => {
    let out = text;
    for (const f of forms) out = out.split(f).join('***');
    return out;
  };
}

function nodemailerAddress(text: string): { name: string; address: string } {
  const a: MailAddress | undefined = parseMailAddress(text);
  // The outbox only holds checked messages; a row edited by hand is refused here.
  if (!a) throw new MailSendError('permanent', 'a stored address is not an address (the row was changed by hand?)');
  return { name: a.name ?? '', address: a.address };
}

/** nodemailer's fields for one message: split addresses, a Message-ID stable across attempts, no file or URL access. */
function mailOptions(m: OutgoingMail): SendMailOptions {
  const from = nodemailerAddress(m.from);
  const domain = from.address.slice(from.address.lastIndexOf('@') + 1);
  return {
    from,
    to: m.to.map(nodemailerAddress),
    ...(m.replyTo !== undefined ? { replyTo: nodemailerAddress(m.replyTo) } : {}),
    subject: m.subject,
    text: m.text,
    messageId: `<${m.id}@${domain}>`,
    date: m.date,
    disableFileAccess: true,
    disableUrlAccess: true,
  };
}

const CONNECTION_CODES = new Set(['ECONNECTION', 'ESOCKET', 'ETIMEDOUT', 'EDNS', 'ETLS', 'EREQUIRETLS', 'EPROTOCOL', 'EPROXY', 'ECONFIG']);

/** nodemailer's error → a MailSendError of the kind that decides what happens next. */
function classify(e: unknown, scrub: (t: string) => string): MailSendError {
  if (e instanceof MailSendError) return e;
  const err = (e ?? {}) as { code?: unknown; responseCode?: unknown; response?: unknown; message?: unknown };
  const code = typeof err.code === 'string' ? err.code : undefined;
  const rc = typeof err.responseCode === 'number' ? err.responseCode : undefined;
  const reply = typeof err.response === 'string' ? err.response : undefined;
  const text = String(err.message ?? e);
  const what = scrub([code, reply && !text.includes(reply) ? `${text} (${reply})` : text].filter(Boolean).join(': ')).replace(/\s+/g, ' ').slice(0, 500);
  let kind: MailFailureKind;
  if (code === 'EAUTH' || code === 'ENOAUTH' || code === 'EOAUTH2') kind = 'auth';
  else if (rc === 421 || (code !== undefined && CONNECTION_CODES.has(code))) kind = 'connection';
  // RFC 5321 §4.2.1: 5yz is a permanent refusal, except 503 (bad sequence: a fault of the session, not of the message).
  else if ((code === 'EENVELOPE' || code === 'EMESSAGE' || code === 'EMAXRECIPIENTS') && (rc === undefined || (rc >= 500 && rc < 600 && rc !== 503))) kind = 'permanent';
  else kind = 'message';
  return new MailSendError(kind, what, rc);
}

/** An SMTP transport (one connection per message: the outbox sends a few messages, not bulk mail). */
export function createSmtpTransport(target: SmtpTarget, options: { from?: string | undefined; timeouts?: SmtpTimeouts } = {}): MailTransport {
  const t = options.timeouts ?? DEFAULT_SMTP_TIMEOUTS;
  const scrub = scrubber(target.user, target.pass);
  const transporter = createTransport({
    host: target.host,
    port: target.port,
    secure: target.secure,
    requireTLS: target.requireTLS,
    ...(target.user !== undefined ? { auth: { user: target.user, pass: target.pass ?? '' } } : {}),
    connectionTimeout: t.connectionMs,
    greetingTimeout: t.greetingMs,
    socketTimeout: t.socketMs,
    logger: false,
    debug: false,
  });
  const preset = SMTP_PRESETS[target.scheme] ? ` (${target.scheme})` : '';
  const host = `${target.secure ? 'smtps' : 'smtp'}://${target.host}:${target.port}`;
  return {
    description: `sending through ${host}${preset}${target.requireTLS ? ' with STARTTLS required' : ''}`,
    defaultFrom: options.from,
    async send(m) {
      let info: { rejected?: unknown[]; accepted?: unknown[]; response?: string };
      try {
        info = await transporter.sendMail(mailOptions(m));
      } catch (e) {
        throw classify(e, scrub);
      }
      const rejected = (info.rejected ?? []).map((r) => (typeof r === 'string' ? r : (r as { address?: string }).address ?? String(r)));
      return { rejected, ...(info.response ? { response: scrub(info.response) } : {}) };
    },
    close() {
      transporter.close();
    },
  };
}

/**
 * The development outbox: each message is written as an RFC 5322 file `<time>-<id>.eml` in `dir`
 * (open it with any mail program), never sent. Written to a temporary name and renamed, so a
 * reader never sees half a message; a retried message overwrites its own file.
 */
export function createFileTransport(dir: string, options: { from?: string | undefined } = {}): MailTransport {
  const composer = createTransport({ streamTransport: true, buffer: true, newline: 'windows' });
  return {
    description: `writing messages as .eml files to ${dir} (set LANEWAY_SMTP_URL to send them)`,
    defaultFrom: options.from ?? 'laneway@localhost',
    async send(m) {
      let data: Buffer;
      try {
        const info = await composer.sendMail(mailOptions(m));
        data = Buffer.isBuffer(info.message) ? info.message : Buffer.from(String(info.message));
      } catch (e) {
        throw classify(e, (t) => t);
      }
      const file = path.join(dir, `${m.date.toISOString().replace(/[:.]/g, '-')}-${m.id}.eml`);
      const temp = path.join(dir, `.${randomUUID()}.tmp`);
      try {
        await fs.mkdir(dir, { recursive: true });
        await fs.writeFile(temp, data, { mode: 0o600 });
        await fs.rename(temp, file);
      } catch (e) {
        await fs.rm(temp, { force: true }).catch(() => {});
        // A full disk or a read-only directory holds back every message alike.
        throw new MailSendError('connection', `cannot write ${file}: ${(e as Error).message}`);
      }
      return { rejected: [], file };
    },
    close() {
      composer.close();
    },
  };
}

/**
 * The transport the environment configures:
 *
 * - `LANEWAY_SMTP_URL`: `smtp://user:pass@host:port` (STARTTLS; required when a password goes to a
 *   host other than this machine), `smtps://…` (TLS, port 465 by default), or a provider preset
 *   `gmail://user:pass@`, `mailgun://…`, `mailjet://…`, `ses-us-east-1://…`, `ses-eu-west-1://…`;
 * - `LANEWAY_MAIL_FROM`: the sender of messages that name none (`ann@example.com` or
 *   `"Example" <ann@example.com>`); with SMTP and no LANEWAY_MAIL_FROM, the user name when it is
 *   an address (Gmail, Mailgun), else a LW_MAIL_CONFIG error;
 * - neither: `.eml` files in `<dataDir>/outbox/`.
 *
 * Throws a LanewayError LW_MAIL_CONFIG (without the URL's password) for a malformed value.
 */
export function mailTransportFromEnv(env: Readonly<Record<string, string | undefined>>, dataDir: string, options: { timeouts?: SmtpTimeouts } = {}): MailTransport {
  const fromText = env.LANEWAY_MAIL_FROM?.trim() || undefined;
  if (fromText !== undefined && !parseMailAddress(fromText)) {
    throw configError('LANEWAY_MAIL_FROM is not an address: write ann@example.com or "Example" <ann@example.com>');
  }
  const url = env.LANEWAY_SMTP_URL?.trim();
  if (!url) return createFileTransport(path.join(dataDir, 'outbox'), { from: fromText });
  const target = parseSmtpUrl(url);
  const from = fromText ?? (target.user !== undefined && parseMailAddress(target.user) ? target.user : undefined);
  if (!from) throw configError('set LANEWAY_MAIL_FROM to the sender of the app\'s messages ("Example" <hello@example.com>): the user name of LANEWAY_SMTP_URL is not an address');
  return createSmtpTransport(target, { from, ...(options.timeouts ? { timeouts: options.timeouts } : {}) });
}
