/**
 * The development server's host rule (docs/security.md, "The development server's host rule"):
 * `laneway dev` and `serve --dev` answer only requests whose `Host` names this machine —
 * `localhost`, `*.localhost`, a loopback address (127.0.0.0/8, [::1]) — or a name given with
 * `--host` or `--allowed-host`. A page of another site that makes its own name resolve to
 * 127.0.0.1 (DNS rebinding) sends its own name as `Host`, and is refused before anything of the
 * app (the error overlay, its source, /__/dev/events) is read.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isIPv4 } from 'node:net';

export const HOST_RULE_CODE = 'LW_DEV_HOST';

/**
 * The host part of a `Host` header or of a name given on the command line, as the WHATWG URL
 * parser writes it (lower case, IPv4 in dotted form, IPv6 in brackets, compressed), without a
 * trailing dot; undefined when it is not a host (a path, user info, a bad port).
 * `port`: whether a `:port` may follow.
 */
export function normalizeHost(text: string, port: boolean): string | undefined {
  const m = /^(\[[0-9A-Fa-f:.]+\]|[^\s:[\]/\\@?#%]+)(?::(\d{1,5}))?$/.exec(text);
  if (!m || (!port && m[2] !== undefined)) return undefined;
  try {
    const host = new URL(`http://${m[1]}/`).hostname;
    return host.endsWith('.') ? host.slice(0, -1) : host;
  } catch {
    return undefined;
  }
}

/** A name given with `--host` or `--allowed-host`, normalised (`::1` is written `[::1]`); undefined when it is not one. */
export function normalizeAllowedHost(text: string): string | undefined {
  return normalizeHost(text.includes(':') && !text.startsWith('[') ? `[${text}]` : text, false);
}

/** Whether a normalised host names this machine: localhost, *.localhost, 127.0.0.0/8, [::1]. */
function isLocal(host: string): boolean {
  return host === 'localhost' || host.endsWith('.localhost') || (isIPv4(host) && host.startsWith('127.')) || host === '[::1]';
}

/** The rule for a set of allowed names (normalised by `normalizeAllowedHost`). */
export interface HostRule {
  /** Whether a request with this `Host` header is answered. */
  allows(given: string | undefined): boolean;
  /** Answers a refused request: 403 and what to do. */
  refuse(req: IncomingMessage, res: ServerResponse, id: string): void;
}

/** `command`: the name the refusal starts with (`laneway dev`). */
export function createHostRule(allowed: readonly string[], command: string): HostRule {
  const names = new Set(allowed);
  return {
    allows(given) {
      const host = given === undefined ? undefined : normalizeHost(given, true);
      return host !== undefined && (isLocal(host) || names.has(host));
    },
    refuse(req, res, id) {
      const given = req.headers.host;
      const host = given === undefined ? undefined : normalizeHost(given, true);
      const shown = given === undefined ? 'no Host header' : `the Host ${JSON.stringify(given.slice(0, 200))}`;
      const fix = host === undefined ? '' : ` If you opened this address yourself, start the server again with --allowed-host ${host.replace(/^\[|\]$/g, '')}.`;
      const body = Buffer.from(
        `${command}: this development server answers only requests for localhost, a loopback address or a name given with --host or --allowed-host; ` +
          `this request has ${shown} (a page of another site may be reaching the server through DNS rebinding).${fix} [${HOST_RULE_CODE}]\n`,
      );
      res.writeHead(403, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': body.length, 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff', 'X-Request-Id': id });
      res.end(req.method === 'HEAD' ? undefined : body);
    },
  };
}
