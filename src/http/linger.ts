/**
 * Lingering close (docs/request.md "Answers before the body ends"): an answer sent while the client
 * is still sending its body (a 413 past the body limit, an upload refused from its first bytes)
 * closes the connection. Closed at once, with the rest of the body unread, the kernel resets the
 * connection, and a client still writing may lose the answer it has not read yet: it sees a reset
 * instead of the 413. So such a connection ends its own side, reads and drops what still comes,
 * and closes once the client has ended its side (most clients end theirs when they see the
 * server's end), or after LINGER_MS.
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';

/** The longest wait for a client to stop sending after an answer that closes its connection. */
export const LINGER_MS = 2000;

/** Whether the request's body may still be arriving (it has one, and it has not ended). */
export function bodyPending(req: IncomingMessage): boolean {
  const h = req.headers;
  return !req.complete && (h['transfer-encoding'] !== undefined || (h['content-length'] !== undefined && h['content-length'] !== '0'));
}

/**
 * Makes the close that follows this request's answer (Node calls the socket's `destroySoon` once
 * an answer with `Connection: close` is written) a lingering one. An answer that keeps the
 * connection never calls it: Node reads the rest of the body and goes on.
 */
export function lingerAfterAnswer(req: IncomingMessage): void {
  const socket = req.socket as Socket | null;
  if (!socket || socket.destroyed) return;
  socket.destroySoon = function lingeringClose(this: Socket): void {
    if (this.writable) this.end();
    const close = (): void => {
      clearTimeout(timer);
      this.destroy();
    };
    // Unreferenced, and destroying a closed socket does nothing: no listener needed to cancel it.
    const timer = setTimeout(close, LINGER_MS);
    timer.unref();
    this.once('end', close);
    // What still arrives is read and dropped (Node's parser dumps the rest of the request's body).
    this.resume();
  };
}
