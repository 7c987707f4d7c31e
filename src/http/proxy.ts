/**
 * Trusted proxies (`--trust-proxy`, `LANEWAY_TRUST_PROXY`; docs/deploy.md "Behind a reverse
 * proxy"): who the client is, and which scheme and host it asked for, when a proxy stands in
 * between.
 *
 * By default nobody is trusted: the client is the peer of the connection, the scheme is that of
 * the connection (`http`: Laneway does not end TLS), the host is the `Host` header, and every
 * forwarding header is ignored, whoever sent it. With a list of trusted peers (addresses, CIDR
 * ranges, `loopback`), a request whose peer is on the list has its forwarding headers read:
 * `Forwarded` (RFC 7239) when present, else `X-Forwarded-For`, `-Proto` and `-Host`. The chain of
 * addresses is walked from the right (the hop nearest to Laneway) while each hop is trusted; the
 * first untrusted one is the client. The scheme and host are the ones the proxy that received the
 * request from that client recorded (the same position in the lists), else the nearest proxy's.
 *
 * The answer is computed once per request, and only when something asks for it (a script reading
 * `Request`, a cookie, the cross-site check of a write, the access log): a static file pays nothing.
 */
import { BlockList, isIP, isIPv4 } from 'node:net';
import type { IncomingMessage } from 'node:http';
import type { ClientInfo } from '../shared/index.js';


/** The peers whose forwarding headers are believed; `none` trusts nobody. */
export class TrustedProxies {
  /** The list as given, normalised (for messages and the start line). */
  readonly entries: readonly string[];
  readonly #list = new BlockList();

  private constructor(entries: string[]) {
    this.entries = entries;
  }

  static readonly none = new TrustedProxies([]);

  /**
   * Parses `a, b, …`: IPv4 or IPv6 addresses, CIDR ranges (`10.0.0.0/8`, `fd00::/8`) and the word
   * `loopback` (127.0.0.0/8 and ::1). Answers the list, or the message of what is wrong.
   */
  static parse(text: string): TrustedProxies | { error: string } {
    const entries: string[] = [];
    const trusted = new TrustedProxies(entries);
    for (const raw of text.split(',')) {
      const item = raw.trim();
      if (item === '') continue;
      if (item.toLowerCase() === 'loopback') {
        trusted.#list.addSubnet('127.0.0.0', 8, 'ipv4');
        trusted.#list.addAddress('::1', 'ipv6');
        entries.push('loopback');
        continue;
      }
      const slash = item.indexOf('/');
      const address = unbracket(slash === -1 ? item : item.slice(0, slash));
      const family = isIP(address);
      if (family === 0) return { error: `${JSON.stringify(item)} is not an address, a CIDR range (10.0.0.0/8, fd00::/8) or "loopback"` };
      const type = family === 4 ? 'ipv4' : 'ipv6';
      if (slash === -1) {
        trusted.#list.addAddress(address, type);
        if (family === 6 && mappedV4(address)) trusted.#list.addAddress(mappedV4(address)!, 'ipv4');
        entries.push(address);
        continue;
      }
      const bitsText = item.slice(slash + 1);
      const bits = Number(bitsText);
      const max = family === 4 ? 32 : 128;
      if (!/^\d{1,3}$/.test(bitsText) || bits > max) return { error: `${JSON.stringify(item)}: the prefix length after "/" must be a whole number from 0 to ${max}` };
      trusted.#list.addSubnet(address, bits, type);
      entries.push(`${address}/${bits}`);
    }
    return trusted;
  }

  /** Whether nobody is trusted (forwarding headers are never read). */
  get empty(): boolean {
    return this.entries.length === 0;
  }

  /** Whether `address` (IPv4, IPv6, IPv4-mapped IPv6) is a trusted proxy. */
  trusts(address: string): boolean {
    if (this.entries.length === 0) return false;
    const family = isIP(address);
    if (family === 0) return false;
    if (family === 4) return this.#list.check(address, 'ipv4');
    const v4 = mappedV4(address);
    return v4 !== undefined ? this.#list.check(v4, 'ipv4') : this.#list.check(address, 'ipv6');
  }

  /** Who sent `req` (see the top of this file). */
  client(req: IncomingMessage): ClientInfo {
    const socket = req.socket as IncomingMessage['socket'] | undefined;
    const peer = plainAddress(socket?.remoteAddress ?? '');
    const own: ClientInfo = { address: peer, proto: (socket as { encrypted?: boolean } | undefined)?.encrypted ? 'https' : 'http', host: hostOf(req.headers.host) ?? '' };
    if (!this.trusts(peer)) return own;
    return resolveForwarded(this, own, req.headers);
  }
}

/** One hop a proxy recorded: the address it received the request from, and what it saw. */
export interface Hop {
  address: string | undefined;
  proto: string | undefined;
  host: string | undefined;
}

/**
 * The hops of `Forwarded` (RFC 7239: `for=…;proto=…;host=…, …`), left to right; undefined when the
 * header is malformed (then nothing of it is believed).
 */
export function parseForwarded(header: string): Hop[] | undefined {
  const hops: Hop[] = [];
  for (const element of splitOutsideQuotes(header, ',')) {
    const hop: Hop = { address: undefined, proto: undefined, host: undefined };
    for (const pair of splitOutsideQuotes(element, ';')) {
      const text = pair.trim();
      if (text === '') continue;
      const eq = text.indexOf('=');
      if (eq <= 0) return undefined;
      const name = text.slice(0, eq).trim().toLowerCase();
      let value = text.slice(eq + 1).trim();
      if (value.startsWith('"')) {
        if (value.length < 2 || !value.endsWith('"')) return undefined;
        value = value.slice(1, -1).replace(/\\(.)/g, '$1');
      }
      if (name === 'for') hop.address = nodeAddress(value);
      else if (name === 'proto') hop.proto = value;
      else if (name === 'host') hop.host = value;
    }
    hops.push(hop);
  }
  return hops;
}

/**
 * The client after the walk: `own` is what the connection says (its peer is trusted); the hops
 * come from `Forwarded`, else from the `X-Forwarded-*` headers.
 */
export function resolveForwarded(trust: TrustedProxies, own: ClientInfo, headers: IncomingMessage['headers']): ClientInfo {
  const hops = forwardedHops(headers);
  if (hops.length === 0) return own;
  // From the right: each trusted address hands over to the hop before it.
  let address = own.address;
  let i = hops.length - 1;
  let at = -1;
  for (; i >= 0; i--) {
    if (!trust.trusts(address)) break;
    const next = hops[i]!.address;
    if (next === undefined) break; // not an address ("unknown", "_hidden", garbage): the walk ends at the proxy
    address = next;
    at = i;
  }
  // The scheme and host recorded with the client's hop, else by the nearest proxy that gave one.
  const pick = (key: 'proto' | 'host'): string | undefined => {
    if (at !== -1 && hops[at]![key] !== undefined) return hops[at]![key];
    for (let j = hops.length - 1; j >= (at === -1 ? hops.length - 1 : at); j--) if (hops[j]![key] !== undefined) return hops[j]![key];
    return undefined;
  };
  const proto = pick('proto')?.toLowerCase();
  const host = hostOf(pick('host'));
  return {
    address,
    proto: proto === 'https' ? 'https' : proto === 'http' ? 'http' : own.proto,
    host: host ?? own.host,
  };
}

function forwardedHops(headers: IncomingMessage['headers']): Hop[] {
  const forwarded = headers.forwarded;
  if (typeof forwarded === 'string' && forwarded.trim() !== '') return parseForwarded(forwarded) ?? [];
  const list = (name: string): string[] => {
    const v = headers[name];
    const text = Array.isArray(v) ? v.join(',') : v;
    return typeof text === 'string' && text.trim() !== '' ? text.split(',').map((s) => s.trim()) : [];
  };
  const fors = list('x-forwarded-for');
  const protos = list('x-forwarded-proto');
  const hosts = list('x-forwarded-host');
  // Without X-Forwarded-For, one hop: the proxy's own scheme and host for the peer.
  const n = Math.max(fors.length, 1);
  const at = (values: string[], k: number): string | undefined => (values.length === n ? values[k] : k === n - 1 ? values[values.length - 1] : undefined);
  const hops: Hop[] = [];
  for (let k = 0; k < n; k++) {
    hops.push({ address: fors.length ? nodeAddress(fors[k]!) : undefined, proto: at(protos, k), host: at(hosts, k) });
  }
  if (!fors.length) {
    // No addresses: the scheme and host apply, the client stays the peer.
    hops[0]!.address = undefined;
  }
  return hops;
}

/** `"a,b";c` split on `sep` outside double quotes. */
function splitOutsideQuotes(text: string, sep: string): string[] {
  const parts: string[] = [];
  let quoted = false;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '\\' && quoted) i++;
    else if (c === '"') quoted = !quoted;
    else if (c === sep && !quoted) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts;
}

/** An address as a forwarding header writes it (`1.2.3.4`, `1.2.3.4:80`, `[::1]:80`, `::1`), or undefined. */
function nodeAddress(text: string): string | undefined {
  let t = text.trim();
  if (t.startsWith('[')) {
    const end = t.indexOf(']');
    if (end === -1) return undefined;
    t = t.slice(1, end);
  } else if (/^[0-9.]+:\d+$/.test(t)) {
    t = t.slice(0, t.lastIndexOf(':'));
  }
  return isIP(t) ? plainAddress(t) : undefined;
}

function unbracket(text: string): string {
  return text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
}

/** The IPv4 address inside an IPv4-mapped IPv6 address (`::ffff:127.0.0.1`). */
function mappedV4(address: string): string | undefined {
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return m && isIPv4(m[1]!) ? m[1] : undefined;
}

/** An address as logs and scripts show it: an IPv4-mapped IPv6 address as its IPv4 address. */
function plainAddress(address: string): string {
  // Only an IPv6 text can be a mapped IPv4 address (no pattern run on the usual IPv4 peer).
  return address.startsWith('::') ? (mappedV4(address) ?? address) : address;
}

/** A host header value, if it is one (letters, digits, `.-:[]` only). */
function hostOf(value: string | string[] | undefined): string | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (typeof v !== 'string') return undefined;
  const t = v.trim();
  return t !== '' && /^[A-Za-z0-9.:\[\]-]+$/.test(t) ? t : undefined;
}

/** A `ClientInfo` made on first use and kept (one per request). */
export function lazyClient(trust: TrustedProxies, req: IncomingMessage): () => ClientInfo {
  let info: ClientInfo | undefined;
  return () => (info ??= trust.client(req));
}
