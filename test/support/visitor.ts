/**
 * A visitor for black-box tests: a cookie jar in front of the raw HTTP helper, so that a test
 * drives an app as one browser would (the `sid` session cookie, cookies written by scripts), with
 * same-origin headers on writes.
 */
import { rawRequest, type Response } from '../helpers.js';

export class TestVisitor {
  readonly jar = new Map<string, string>();
  constructor(readonly port: number, readonly host = `localhost:${port}`) {}

  get cookieHeader(): string {
    return [...this.jar].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  async request(method: string, path: string, body?: string | Buffer, headers: Record<string, string> = {}): Promise<Response> {
    const h: Record<string, string> = { Host: this.host, ...headers };
    if (this.jar.size) h.Cookie = this.cookieHeader;
    if (method !== 'GET' && method !== 'HEAD') {
      h.Origin = `http://${this.host}`;
      if (body !== undefined && !h['Content-Type']) h['Content-Type'] = 'application/x-www-form-urlencoded';
    }
    const res = await rawRequest(this.port, method, path, h, body);
    for (const line of [res.headers['set-cookie'] ?? []].flat()) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      if (/;\s*max-age=0/i.test(line) || value === '') this.jar.delete(name);
      else this.jar.set(name, value);
    }
    return res;
  }

  get(path: string, headers?: Record<string, string>): Promise<Response> {
    return this.request('GET', path, undefined, headers);
  }

  post(path: string, form: Record<string, string> = {}, headers?: Record<string, string>): Promise<Response> {
    return this.request('POST', path, new URLSearchParams(form).toString(), headers);
  }
}

/** The Set-Cookie lines of a response. */
export function setCookies(res: Response): string[] {
  return [res.headers['set-cookie'] ?? []].flat();
}
