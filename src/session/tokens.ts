/**
 * Signed values: the `sid` cookie and fresh form-state ids. Both are HMAC-SHA256 of the app's
 * secret over a purpose and the value, so a value made for one purpose never passes for another,
 * and a forged or altered one is recognised without a database read.
 */
import { createHash, hash, randomFillSync, timingSafeEqual } from 'node:crypto';

// Random bytes are taken from a pool filled 4 KiB at a time: a page with a form and a form POST
// each need some, and one call into the system's generator per 4 KiB costs far less than one per value.
const pool = Buffer.alloc(4096);
let used = pool.length;

/** `n` random bytes (n ≤ 64) as base64url. */
export function randomText(n: number): string {
  if (used + n > pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  const text = pool.toString('base64url', used, used + n);
  used += n;
  return text;
}

/** 144 random bits, 24 characters of base64url. */
export function randomId(): string {
  return randomText(18);
}

/** SHA-256's block size: HMAC pads the key to it (RFC 2104). */
const BLOCK = 64;
/** Room for the text of a value in the scratch buffer; a longer one gets a buffer of its own. */
const ROOM = 1024;

export class Signer {
  /**
   * HMAC-SHA256 (RFC 2104) as two one-shot hashes, with the key XORed into its two pads once: a
   * page with a form signs one value per render, and `createHmac` sets up a new OpenSSL context
   * for each (several µs; docs/architecture.md "Signed values"). `#inner` holds the inner pad, then
   * the value's bytes; `#outer` the outer pad, then the inner hash. The result is the same bytes
   * as `createHmac('sha256', secret)` (test/session/tokens.test.ts).
   */
  readonly #inner = Buffer.alloc(BLOCK + ROOM);
  readonly #outer = Buffer.alloc(BLOCK + 32);

  constructor(secret: Buffer) {
    const key = secret.length > BLOCK ? createHash('sha256').update(secret).digest() : secret;
    for (let i = 0; i < BLOCK; i++) {
      const k = i < key.length ? key[i]! : 0;
      this.#inner[i] = k ^ 0x36;
      this.#outer[i] = k ^ 0x5c;
    }
  }

  /** 32 characters of base64url (192 bits of the HMAC) of `purpose`, a NUL and `data`. */
  mac(purpose: string, data: string): string {
    const inner = this.#inner;
    let message: Buffer;
    if ((purpose.length + data.length) * 3 + 1 <= ROOM) {
      // At most 3 bytes per UTF-16 unit: the text fits whatever it holds.
      let end = BLOCK + inner.write(purpose, BLOCK, 'utf8');
      inner[end++] = 0;
      end += inner.write(data, end, 'utf8');
      message = inner.subarray(0, end);
    } else {
      message = Buffer.concat([inner.subarray(0, BLOCK), Buffer.from(purpose + '\0' + data, 'utf8')]);
    }
    // The inner hash as a 'binary' (latin1) string, one character per byte, written into place: `hash`
    // returning a Buffer costs twice as much as returning a string.
    this.#outer.write(hash('sha256', message, 'binary'), BLOCK, 'latin1');
    return hash('sha256', this.#outer, 'base64url').slice(0, 32);
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

  /** The last cookie value checked and its answer: a request checks its `sid` at the auth gate and again for its visitor. */
  #lastValue: string | undefined;
  #lastSid: string | undefined;

  /** The session id of a `sid` cookie value, or undefined when it is malformed or forged. */
  readSid(value: string | undefined): string | undefined {
    if (value === undefined || value.length !== 57) return undefined;
    if (value === this.#lastValue) return this.#lastSid;
    const id = value.slice(0, 24);
    const sid = value[24] === '.' && /^[A-Za-z0-9_-]{24}$/.test(id) && this.check('sid', id, value.slice(25)) ? id : undefined;
    this.#lastValue = value;
    this.#lastSid = sid;
    return sid;
  }

  /**
   * A fresh form-state id, `f<issued base36>.<nonce>.<mac>`: bound to the session and the form,
   * valid for `ttlMs`, made without a database write (a stored state gets an `s…` id instead).
   */
  formToken(sid: string, form: string, now = Date.now()): string {
    const head = `f${now.toString(36)}.${randomText(9)}`;
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
