/**
 * Live reload for `laneway dev`: a server-sent event stream at `/__/dev/events`, and the small
 * client script that pages get, which listens to it.
 *
 * Events (each `data:` is JSON):
 *
 * | Event    | Data                        | The page                                             |
 * |----------|-----------------------------|------------------------------------------------------|
 * | `hello`  | `{build}`                   | reloads when `build` is not the build it was served by (a rebuild happened before it connected, or the server restarted) |
 * | `reload` | `{build, files}`            | reloads (a rebuild succeeded, or failed: the overlay shows) |
 * | `request` | `{id, method, path, status, time, lines}` | the request panel (requests.ts) lists a request the app answered |
 * | `css`    | `{build, files, urls}`      | swaps each same-origin `<link rel=stylesheet>` whose path, decoded, is in `urls` (also once its fingerprint `.1a2b3c4d` is taken out) for that path with a cache-busting query, without reloading |
 *
 * `build` is `<server instance>:<rebuild number>`; `files` are the changed paths relative to the
 * app directory (`/css/site.css`, `../shop/index.html`).
 *
 * The script is inline, and the same text on every page, so its hash is computed once: the page's
 * policy gets it in `script-src` and `'self'` in `connect-src` (`withClientSources`). The build a
 * page was served by travels in a `data-build` attribute, which is not part of what the hash covers.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { PANEL_SCRIPT } from './requests.js';

/** The path of the event stream. */
export const EVENTS_PATH = '/__/dev/events';

/**
 * The client. Plain ES2017 for any browser a developer uses; no eval, no inline handlers, no
 * style attributes: everything a strict policy allows once the script itself is allowed.
 */
export const CLIENT_SCRIPT = `
(function () {
  var me = document.currentScript;
  var build = me ? me.getAttribute('data-build') : '';
  var events = new EventSource('${EVENTS_PATH}');
  var read = function (e) { try { return JSON.parse(e.data); } catch (err) { return {}; } };
  var decode = function (s) { try { return decodeURIComponent(s); } catch (err) { return s; } };
  events.addEventListener('hello', function (e) { if (read(e).build !== build) location.reload(); });
  events.addEventListener('reload', function () { events.close(); location.reload(); });
  events.addEventListener('css', function (e) {
    var data = read(e);
    var urls = data.urls || [];
    build = data.build;
    // A link already being replaced is left to its replacement.
    var links = document.querySelectorAll('link[rel~="stylesheet"][href]:not([data-lw-replaced])');
    for (var i = 0; i < links.length; i++) {
      var link = links[i];
      var url = new URL(link.href, location.href);
      if (url.origin !== location.origin) continue;
      var path = url.pathname;
      var plain = path.replace(/\\.[0-9a-f]{8}(\\.[^./]+)$/, '$1');
      var target = urls.indexOf(decode(path)) !== -1 ? path : urls.indexOf(decode(plain)) !== -1 ? plain : null;
      if (target === null) continue;
      link.setAttribute('data-lw-replaced', '');
      var next = link.cloneNode(false);
      next.removeAttribute('data-lw-replaced');
      next.removeAttribute('integrity');
      next.href = target + '?lw-dev=' + encodeURIComponent(data.build);
      var done = (function (old) { return function () { old.remove(); }; })(link);
      next.addEventListener('load', done);
      next.addEventListener('error', done);
      link.after(next);
    }
  });
${PANEL_SCRIPT}})();
`;

/** The CSP source of the client script. */
export const CLIENT_HASH = `'sha256-${createHash('sha256').update(CLIENT_SCRIPT).digest('base64')}'`;

/** The client as an element, for the build `build`. */
export function clientElement(build: string): string {
  return `<script data-build="${build.replace(/[^A-Za-z0-9:_-]/g, '')}">${CLIENT_SCRIPT}</script>`;
}

/**
 * `html` with the client added: before the last `</body>`, else before the last `</html>`, else at
 * the end (a page written as a fragment is a whole document to the browser).
 */
export function injectClient(html: string, build: string): string {
  const element = clientElement(build);
  const lower = html.toLowerCase();
  for (const tag of ['</body>', '</html>']) {
    const at = lower.lastIndexOf(tag);
    if (at !== -1) return html.slice(0, at) + element + html.slice(at);
  }
  return html + element;
}

/**
 * A policy (the value of `Content-Security-Policy` or its report-only twin) that also lets the
 * client run and connect: the client's hash in `script-src`, `'self'` in `connect-src`. A
 * directive that is absent falls back to `default-src`, so it is added from that list.
 * `script-src` with `'unsafe-inline'` and no hash or nonce is left alone: it allows the client
 * already, and a hash would turn `'unsafe-inline'` off for the page's own inline scripts.
 */
export function withClientSources(policy: string): string {
  const directives = policy
    .split(';')
    .map((d) => d.trim())
    .filter((d) => d !== '')
    .map((d) => {
      const [name = '', ...values] = d.split(/\s+/);
      return { name: name.toLowerCase(), values };
    });
  const find = (name: string) => directives.find((d) => d.name === name);
  const fallback = find('default-src');
  const add = (name: string, source: string, keep: (values: string[]) => boolean) => {
    let d = find(name);
    if (d === undefined) {
      // Without a default-src, the directive allows everything: nothing to add.
      if (fallback === undefined) return;
      d = { name, values: [...fallback.values] };
      directives.push(d);
    }
    if (keep(d.values) || d.values.includes(source)) return;
    d.values = [...d.values.filter((v) => v !== "'none'"), source];
  };
  add('script-src', CLIENT_HASH, (v) => v.includes("'unsafe-inline'") && !v.some((s) => /^'(sha(256|384|512)|nonce)-/.test(s)));
  add('connect-src', "'self'", (v) => v.includes('*'));
  return directives.map((d) => [d.name, ...d.values].join(' ')).join('; ');
}

/** The open event streams and what they are told. */
export class ReloadChannel {
  readonly #clients = new Set<ServerResponse>();
  #keepAlive: NodeJS.Timeout | undefined;

  /**
   * Answers `GET /__/dev/events`: the head, `hello` with the current build, then every event
   * until the client leaves or `close`. Settles with the status when the connection closes.
   */
  open(req: IncomingMessage, res: ServerResponse, build: string): Promise<number> {
    res.writeHead(200, {
      'Content-Type': 'text/event-stream',
      'Cache-Control': 'no-store',
      'X-Content-Type-Options': 'nosniff',
      'X-Accel-Buffering': 'no',
    });
    if (req.method === 'HEAD') {
      res.end();
      return Promise.resolve(200);
    }
    // A client that lost the server tries again after a second (EventSource's default is 3 s).
    res.write(`retry: 1000\n\n${frame('hello', { build })}`);
    this.#clients.add(res);
    // A comment now and then keeps proxies and idle timers from closing a quiet stream.
    this.#keepAlive ??= setInterval(() => {
      for (const c of this.#clients) c.write(': keep-alive\n\n');
    }, 15_000).unref();
    return new Promise((resolve) => {
      res.once('close', () => {
        this.#clients.delete(res);
        if (this.#clients.size === 0 && this.#keepAlive) {
          clearInterval(this.#keepAlive);
          this.#keepAlive = undefined;
        }
        resolve(200);
      });
    });
  }

  /** Sends an event to every open stream. */
  send(event: 'reload' | 'css' | 'request', data: object): void {
    const text = frame(event, data);
    for (const c of this.#clients) c.write(text);
  }

  /** Ends every open stream (the server stops). */
  close(): void {
    if (this.#keepAlive) clearInterval(this.#keepAlive);
    this.#keepAlive = undefined;
    for (const c of [...this.#clients]) c.end();
    this.#clients.clear();
  }
}

function frame(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}
