/**
 * The request panel of `laneway dev` (docs/scripting.md "Logging"): the last requests the app
 * answered, each with its status, path, time and the lines its scripts and views logged
 * (`console.log` and the rest, with their file and line), kept here in memory and shown by a small
 * panel that the live-reload client adds to every page (reload.ts).
 *
 * The panel reads `GET /__/dev/requests` once when a page opens (`{requests: [...]}`, the newest
 * first), then each new request as a `request` event of the live-reload stream. Nothing of it
 * exists outside development: the server has no development hooks there.
 */

/** The address of the list. */
export const REQUESTS_PATH = '/__/dev/requests';

/** How many requests are kept (the oldest go first). */
export const KEPT_IN_PANEL = 50;

/** One line a request logged, as the panel shows it. */
export interface PanelLine {
  /** `log`, `info`, `warn`, `error` (a run-time error logged by a script or a view is `error`). */
  level: string;
  text: string;
  file?: string;
  line?: number;
  column?: number;
}

/** One request as the panel shows it. */
export interface PanelRequest {
  id: string;
  method: string;
  path: string;
  status: number;
  /** When it was answered (ISO 8601). */
  time: string;
  lines: PanelLine[];
}

/** A logged line (the app's `log`) as a panel line: the position and the `console.log:` prefix taken off the text. */
function panelLine(message: string, fields: Record<string, unknown>): PanelLine {
  const level = typeof fields.console === 'string' ? fields.console : 'error';
  const text = message.replace(/^\/[^\n]*?:\d+:\d+: /, '').replace(/^console\.(log|info|warn|error): /, '');
  const line: PanelLine = { level, text };
  if (typeof fields.file === 'string') line.file = fields.file;
  if (typeof fields.line === 'number') line.line = fields.line;
  if (typeof fields.column === 'number') line.column = fields.column;
  return line;
}

/** The last requests, newest last. */
export class RequestLog {
  readonly #kept: PanelRequest[] = [];

  /** Keeps a request answered with `status`, with what it logged; returns it as the panel shows it. */
  record(request: { id: string; method: string; path: string }, status: number, logged: ReadonlyArray<{ message: string; fields: Record<string, unknown> }> = []): PanelRequest {
    const entry: PanelRequest = { id: request.id, method: request.method, path: request.path, status, time: new Date().toISOString(), lines: logged.map((l) => panelLine(l.message, l.fields)) };
    this.#kept.push(entry);
    if (this.#kept.length > KEPT_IN_PANEL) this.#kept.shift();
    return entry;
  }

  /** The body of `GET /__/dev/requests`. */
  json(): string {
    return JSON.stringify({ requests: [...this.#kept].reverse() });
  }
}

/**
 * The panel, a part of the live-reload client (reload.ts, inside its function: `me`, `events` and
 * `read` are the client's). It builds its elements with the DOM and sets their look through the
 * CSSOM (`element.style.…`), which a policy without `'unsafe-inline'` styles allows; every text is
 * `textContent`, never markup.
 */
export const PANEL_SCRIPT = `
  // This page's own request: the newest answer to its path when the panel first read the list.
  var page = '';
  var entries = [];
  var badge = null;
  var panel = null;
  var list = null;
  var make = function (tag, look, text) {
    var el = document.createElement(tag);
    for (var k in look) el.style[k] = look[k];
    if (text !== undefined) el.textContent = text;
    return el;
  };
  var row = function (r) {
    var li = make('li', { margin: '0 0 6px', listStyle: 'none' });
    li.className = 'lw-dev-request';
    var mine = r.id === page;
    li.appendChild(make('div', { fontWeight: mine ? '700' : '400' }, r.method + ' ' + r.path + ' ' + r.status + ' · ' + String(r.time).slice(11, 19) + ' · ' + r.id + (mine ? ' (this page)' : '')));
    for (var i = 0; i < r.lines.length; i++) {
      var l = r.lines[i];
      var at = l.file ? l.file + (l.line ? ':' + l.line : '') + (l.column ? ':' + l.column : '') + ' ' : '';
      var color = l.level === 'error' ? '#ff8a80' : l.level === 'warn' ? '#ffd180' : '#e0e0e0';
      var p = make('div', { paddingLeft: '12px', color: color, whiteSpace: 'pre-wrap', wordBreak: 'break-word' }, l.level + ' ' + at + l.text);
      p.className = 'lw-dev-line';
      li.appendChild(p);
    }
    return li;
  };
  var render = function () {
    if (!badge) return;
    var n = 0;
    for (var i = 0; i < entries.length; i++) n += entries[i].lines.length;
    badge.textContent = 'lw · ' + entries.length + ' requests' + (n ? ' · ' + n + (n === 1 ? ' log line' : ' log lines') : '');
    if (!list) return;
    while (list.firstChild) list.removeChild(list.firstChild);
    for (var j = 0; j < entries.length; j++) list.appendChild(row(entries[j]));
  };
  var add = function (r) {
    if (!r || !r.id || !r.lines) return;
    for (var i = 0; i < entries.length; i++) if (entries[i].id === r.id) return;
    entries.unshift(r);
    entries.sort(function (a, b) { return a.time < b.time ? 1 : a.time > b.time ? -1 : 0; });
    if (entries.length > ${KEPT_IN_PANEL}) entries.length = ${KEPT_IN_PANEL};
    render();
  };
  var toggle = function () {
    if (panel) {
      panel.remove();
      panel = null;
      list = null;
      return;
    }
    var box = { position: 'fixed', right: '8px', bottom: '36px', width: 'min(40rem, calc(100vw - 16px))', maxHeight: '50vh', overflow: 'auto', zIndex: '2147483647',
      background: '#1d1d1f', color: '#f5f5f7', font: '12px/1.4 ui-monospace, SFMono-Regular, Menlo, monospace', padding: '8px', borderRadius: '4px', textAlign: 'left' };
    panel = make('div', box);
    panel.id = 'lw-dev-requests';
    panel.appendChild(make('div', { margin: '0 0 6px', color: '#aaa' }, 'laneway dev: the last requests and what they logged'));
    list = make('ul', { margin: '0', padding: '0' });
    panel.appendChild(list);
    document.body.appendChild(panel);
    render();
  };
  var start = function () {
    if (!document.body) return;
    badge = make('button', { position: 'fixed', right: '8px', bottom: '8px', zIndex: '2147483647', font: '12px ui-monospace, SFMono-Regular, Menlo, monospace',
      background: '#1d1d1f', color: '#f5f5f7', border: '0', borderRadius: '4px', padding: '3px 8px', opacity: '0.85', cursor: 'pointer' });
    badge.type = 'button';
    badge.id = 'lw-dev-badge';
    badge.addEventListener('click', toggle);
    document.body.appendChild(badge);
    render();
    fetch('${REQUESTS_PATH}', { headers: { accept: 'application/json' } })
      .then(function (res) { return res.json(); })
      .then(function (data) {
        var rs = data.requests || [];
        for (var i = 0; i < rs.length && !page; i++) if (rs[i].method === 'GET' && rs[i].path === decode(location.pathname)) page = rs[i].id;
        for (var j = rs.length - 1; j >= 0; j--) add(rs[j]);
        render();
      })
      .catch(function () {});
  };
  events.addEventListener('request', function (e) { add(read(e)); });
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
`;
