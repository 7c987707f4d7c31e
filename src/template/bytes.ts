/**
 * The bytes of a page as it is rendered (views answering HTTP requests).
 *
 * Appending to one string builds a rope of many thousand pieces; turning a large rope into UTF-8
 * bytes at the end (`Buffer.from`) first flattens it, and that costs several times the encoding
 * itself (about 1.9 ms for a 480 KB page of 2000 table rows, against 0.4 ms in pieces, measured alone: see
 * bench/README.md "Where a page's time goes"). So the renderer writes its string into one Buffer
 * every `FLUSH_CHARS` characters, while the pieces are fresh, and starts again with an empty string.
 */
import { utf8Bytes } from '../shared/index.js';

/** Output characters gathered before they are written out as bytes. */
export const FLUSH_CHARS = 8192;

const EMPTY = Buffer.alloc(0);

/** A growing Buffer of UTF-8 bytes. */
export class ByteSink {
  buf: Buffer = EMPTY;
  off = 0;
  /** Characters written so far (the output length the render's meter is told). */
  chars = 0;

  private readonly hint: number;

  /** `hint`: the expected size in bytes (the size of the view's previous page). */
  constructor(hint: number) {
    // Room for the last piece written as if every character took 3 bytes: no copy when the page
    // is as large as the previous one.
    this.hint = hint === 0 ? 0 : hint + FLUSH_CHARS * 4;
  }

  /** Appends `s` as UTF-8. */
  write(s: string): void {
    // A UTF-16 code unit is at most 3 bytes of UTF-8.
    const need = this.off + s.length * 3;
    if (need > this.buf.length) {
      const grown = Buffer.allocUnsafe(Math.max(need, this.buf.length * 2, this.hint));
      this.buf.copy(grown, 0, 0, this.off);
      this.buf = grown;
    }
    this.off += this.buf.write(s, this.off);
    this.chars += s.length;
  }

  /** The bytes written and then `rest`, without more than a little unused room behind them. */
  end(rest: string): Buffer {
    // A page that never reached FLUSH_CHARS in a section: one small string, encoded at once.
    if (this.off === 0) return utf8Bytes(rest);
    this.write(rest);
    return this.bytes();
  }

  /** The bytes written, without more than a little unused room behind them. */
  bytes(): Buffer {
    if (this.off >= this.buf.length >> 1) return this.buf.subarray(0, this.off);
    return Buffer.from(this.buf.subarray(0, this.off));
  }
}
