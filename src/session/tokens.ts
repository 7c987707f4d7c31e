/**
 * Signed values: the `sid` cookie and fresh form-state ids. Both are HMAC-SHA256 of the app's
 * secret over a purpose and the value, so a value made for one purpose never passes for another,
 * and a forged or altered one is recognised without a database read.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** 144 random bits, 24 characters of base64url. */
export function randomId(): string {
  return randomBytes(18).toString('base64url');
}

export class Signer {
  readonly #secret: Buffer;
  constructor(secret: Buffer) {
    this.#secret = secret;
  }

  /** 32 characters of base64url (192 bits of the HMAC). */
  mac(purpose: string, data: string): string {
    return createHmac('sha256', this.#secret).update(purpose).update('\0').update(data).digest('base64url').slice(0, 32);
  }

  check(purpose: string, data: string, mac: string): boolean {
    if (mac.length !== 32) return false;
    const expected = Buffer.from(this.mac(purpose, data));
    const given = Buffer.from(mac);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  /** A new session: the id (kept in the store) and the cookie value `id.mac`. */
  newSid(): { id: string; cookie: string } {
    const id = randomId();
    return { id, cookie: `${id}.${this.mac('sid', id)}` };
  }

  /** The session id of a `sid` cookie value, or undefined when it is malformed or forged. */
  readSid(value: string | undefined): string | undefined {
    if (value === undefined || value.length !== 57) return undefined;
    const id = value.slice(0, 24);
    return value[24] === '.' && /^[A-Za-z0-9_-]{24}$/.test(id) && this.check('sid', id, value.slice(25)) ? id : undefined;
  }

  /**
   * A fresh form-state id, `f<issued base36>.<nonce>.<mac>`: bound to the session and the form,
   * valid for `ttlMs`, made without a database write (a stored state gets an `s…` id instead).
   */
  formToken(sid: string, form: string, now = Date.now()): string {
    const head = `f${now.toString(36)}.${randomBytes(9).toString('base64url')}`;
    return `${head}.${this.mac('form', `${sid}|${form}|${head}`)}`;
  }

  /** Whether `token` is a fresh form-state id of this session and form, issued within `ttlMs`. */
  checkFormToken(token: string, sid: string, form: string, ttlMs: number, now = Date.now()): boolean {
    const m = /^(f([0-9a-z]{1,11})\.[A-Za-z0-9_-]{12})\.([A-Za-z0-9_-]{32})$/.exec(token);
    if (!m) return false;
    const issued = parseInt(m[2]!, 36);
    if (!(issued <= now + 60_000 && now - issued <= ttlMs)) return false;
    return this.check('form', `${sid}|${form}|${m[1]}`, m[3]!);
  }
}
