/**
 * Who sent a request, as the HTTP layer works it out (src/http/proxy.ts: the connection, or the
 * forwarding headers of a trusted proxy; docs/deploy.md "Behind a reverse proxy"). A type of its
 * own here because the request function makes it and the app, sessions and sign-in read it.
 */
export interface ClientInfo {
  /** The client's address ('' when the socket has none). */
  readonly address: string;
  /** The scheme the client used. */
  readonly proto: 'http' | 'https';
  /** The host (and port) the client asked for: `Host`, or a trusted proxy's ('' when none). */
  readonly host: string;
}
