/**
 * The shape of one outgoing message, and the checks it passes before it is queued (docs/email.md).
 *
 * Scripts build messages from values visitors typed (a contact form's address, a name): every
 * value that becomes a header is refused when it holds a line break, so that no value can add a
 * header (`Bcc:`) or end the headers early. Addresses are accepted in two forms only, a plain
 * address (`ann@example.com`) or a quoted display name (`"Ann Example" <ann@example.com>`), and
 * are handed to nodemailer already split, so that its own address parser never sees free text.
 */
import { LanewayError } from '../diag/index.js';

/** One message as scripts and notifications hand it over (stored as JSON in the outbox). */
export interface MailMessage {
  /** Recipients: plain addresses or `"Name" <addr>`; 1 to MAX_RECIPIENTS. */
  to: string[];
  /** The sender; absent: the transport's default (LANEWAY_MAIL_FROM). */
  from?: string;
  replyTo?: string;
  subject: string;
  /** The plain-text body. */
  text: string;
}

/** An address split into its display name (absent for a plain address) and the address itself. */
export interface MailAddress {
  name?: string;
  address: string;
}

/** Most recipients of one message. */
export const MAX_RECIPIENTS = 50;
/** Longest subject, in characters (RFC 5322 §2.1.1: a header line holds at most 998 characters). */
export const MAX_SUBJECT = 998;
/** Largest body, in bytes of UTF-8. */
export const MAX_TEXT_BYTES = 1024 * 1024;

// RFC 5321 limits: 64 octets of local part, 254 of address (a 256-octet path minus the brackets).
const MAX_LOCAL = 64;
const MAX_ADDRESS = 254;
// dot-atom (RFC 5322 §3.2.3): no quoted local parts, no leading, trailing or doubled dots.
const LOCAL_PART = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
// Host names, internationalised ones included (nodemailer sends them as punycode); no address
// literals. Checked label by label: one pattern over the dotted whole gave recheck's fuzzing a
// loop to back into (test/http/redos-guard.test.ts flagged it on some runs), one per label does not.
const LABEL = /^[\p{L}\p{N}](?:[\p{L}\p{N}-]{0,61}[\p{L}\p{N}])?$/u;
const isDomain = (domain: string): boolean => domain.split('.').every((label) => LABEL.test(label));
// `"Name" <addr>`: inside the quotes any character but a control, `"` and `\`, which may be escaped.
const NAMED = /^"((?:[^"\\\p{Cc}]|\\["\\])*)"\s*<([^<>]*)>$/u;
const LINE_BREAK = /[\r\n]/;
// Every control character but the tab: none has a place in a header.
const CONTROL = /[\u0000-\u0008\u000A-\u001F\u007F]/;

function invalid(message: string): LanewayError {
  return new LanewayError('LW_MAIL_INVALID', message, { status: 500 });
}

function plainAddress(text: string): string | undefined {
  if (text.length > MAX_ADDRESS) return undefined;
  const at = text.lastIndexOf('@');
  if (at <= 0) return undefined;
  const local = text.slice(0, at);
  const domain = text.slice(at + 1);
  return local.length <= MAX_LOCAL && LOCAL_PART.test(local) && isDomain(domain) ? text : undefined;
}

/**
 * Splits `ann@example.com` or `"Ann Example" <ann@example.com>` (surrounding spaces ignored);
 * undefined for anything else, a line break included.
 */
export function parseMailAddress(text: string): MailAddress | undefined {
  if (typeof text !== 'string' || LINE_BREAK.test(text) || CONTROL.test(text)) return undefined;
  const t = text.trim();
  const named = NAMED.exec(t);
  if (named) {
    const address = plainAddress(named[2]!.trim());
    if (!address) return undefined;
    const name = named[1]!.replace(/\\(["\\])/g, '$1').trim();
    return name ? { name, address } : { address };
  }
  const address = plainAddress(t);
  return address ? { address } : undefined;
}

/** Checks one address-bearing value; `what` names it in the error ("recipient 2", "from"). */
function checkAddress(value: unknown, what: string): string {
  if (typeof value !== 'string') throw invalid(`the ${what} of an email is not a string`);
  // The value is not repeated in the message: it may be long, or built to break a log line.
  if (LINE_BREAK.test(value)) throw invalid(`the ${what} of an email contains a line break (CR or LF); it is refused, as it could add headers to the message`);
  if (!parseMailAddress(value)) {
    const shown = value.length <= 100 && !CONTROL.test(value) ? ` ("${value}")` : '';
    throw invalid(`the ${what} of an email${shown} is not an address: write ann@example.com or "Ann Example" <ann@example.com>`);
  }
  return value.trim();
}

/**
 * Checks a message and returns a clean copy (addresses trimmed, unknown keys dropped). Throws a
 * LanewayError LW_MAIL_INVALID naming the first problem: an address of another form, a line break
 * in the subject or an address (header injection), a subject over 998 characters, a body over
 * 1 MB, no recipient or more than 50.
 */
export function checkMailMessage(m: unknown): MailMessage {
  if (m === null || typeof m !== 'object') throw invalid('an email message is not an object');
  const raw = m as Record<string, unknown>;
  const list: unknown = raw.to;
  if (!Array.isArray(list)) throw invalid('the recipients (to) of an email are not a list of addresses');
  if (list.length === 0) throw invalid('an email has no recipient: give at least one address');
  if (list.length > MAX_RECIPIENTS) throw invalid(`an email has ${list.length} recipients; at most ${MAX_RECIPIENTS} are allowed: send several messages`);
  const to = list.map((a: unknown, i) => checkAddress(a, list.length > 1 ? `recipient ${i + 1}` : 'recipient'));
  const out: MailMessage = { to, subject: '', text: '' };
  if (raw.from !== undefined) out.from = checkAddress(raw.from, 'sender (from)');
  if (raw.replyTo !== undefined) out.replyTo = checkAddress(raw.replyTo, 'reply-to address');
  if (typeof raw.subject !== 'string') throw invalid('the subject of an email is not a string');
  if (LINE_BREAK.test(raw.subject)) throw invalid('the subject of an email contains a line break (CR or LF); it is refused, as it could add headers to the message');
  if (CONTROL.test(raw.subject)) throw invalid('the subject of an email contains a control character');
  const subjectLength = [...raw.subject].length;
  if (subjectLength > MAX_SUBJECT) throw invalid(`the subject of an email is ${subjectLength} characters long; at most ${MAX_SUBJECT} are allowed`);
  out.subject = raw.subject;
  if (typeof raw.text !== 'string') throw invalid('the text of an email is not a string');
  const bytes = Buffer.byteLength(raw.text, 'utf8');
  if (bytes > MAX_TEXT_BYTES) throw invalid(`the text of an email is ${bytes} bytes long; at most ${MAX_TEXT_BYTES} (1 MB) are allowed`);
  out.text = raw.text;
  return out;
}
