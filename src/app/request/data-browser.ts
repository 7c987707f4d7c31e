/**
 * The data browser of development (`laneway dev`, `serve --dev`; docs/data-browser.md): pages under
 * `/__/dev/data/` listing the models with their counts, a model's records (paged, filtered on a
 * field with a database index), one record with its links and children, and a form that edits or
 * removes it. The routes exist in development mode (load.ts adds them with `dev`), and, at
 * `/__/data/`, in production when the operator enables them (`LANEWAY_DATA_BROWSER_SECRET`,
 * docs/data-browser.md "In production"): then only a signed-in user holding the configured role,
 * who has given the secret once (a short-lived cookie bound to the user's sign-in), gets in, and
 * reads go through that user's permissions too.
 *
 * Reading in development is the browser's own (every record, through a read session of the store). Writing is
 * not: each model has a script made here at load, compiled and run as any POST script of the app
 * is (script/, request/endpoints.ts) — in its transaction, as the signed-in visitor (a test user of
 * the development sign-in), through the model's default form (`Model.Form.submit`) and the
 * record's setters. So every check of the model and every permission of the app's root area
 * applies, and a refused value comes back as the form's messages.
 *
 * Pages are built here from fixed markup with every value escaped, and carry a strict policy: no
 * script, their one style by hash, forms to this site only.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { permissionScope, RequestPermissions } from '../../auth/index.js';
import { DiagnosticList } from '../../diag/index.js';
import { formView, type FormFieldView, type FormType } from '../../forms/index.js';
import type { FieldDefinition, ModelDefinition } from '../../models/index.js';
import type { RouteSpec } from '../../router/index.js';
import type { SourceTree } from '../../shared/index.js';
import type { DataSession, QuerySpec } from '../../store/index.js';
import type { ClassifiedFile } from '../definitions/classify.js';
import { clientOf, type Endpoint, type Reply, type RequestInfo } from '../endpoint/endpoint.js';
import { notFound } from '../endpoint/answers.js';
import { parseCookies } from '../endpoint/request-data.js';
import type { AppData } from '../services/data.js';
import { compileRouteEndpoint, type CompileContext } from './endpoints.js';
import { checkLimit } from './limits.js';
import { RequestScope } from './scope.js';

export const DATA_BROWSER_PATH = '/__/dev/data/';
/** Where the data browser answers in production, when enabled (docs/data-browser.md "In production"). */
export const DATA_BROWSER_PRODUCTION_PATH = '/__/data/';

/** The production data browser's switch, given by the embedding code (the CLI reads it from the environment). */
export interface DataBrowserAccess {
  /** `LANEWAY_DATA_BROWSER_SECRET`: what a visitor types once to unlock the browser. */
  secret: string;
  /** `LANEWAY_DATA_BROWSER_ROLE` (default `Admin`): the role a signed-in user must hold on a top-level profile. */
  role: string;
}

/** How long the unlock cookie lasts: 30 minutes. */
const UNLOCK_SECONDS = 30 * 60;
const UNLOCK_COOKIE = 'lw_data';

/** What one data browser serves with: development's, or production's with its gate. */
interface Browser {
  data: AppData;
  writers: Map<string, Endpoint>;
  ctx: CompileContext;
  /** `/__/dev/data/` or `/__/data/`. */
  base: string;
  /** Production: the role and the secret's hash (compared in constant time). */
  production?: { role: string; secretHash: Buffer };
}

/** One request of the production browser: who, and the permissions reads are filtered through. */
interface Reader {
  permissions: RequestPermissions;
}

/** Records per page. */
const PAGE = 25;

/** Field types with a database index, which a list can be filtered on (docs/models.md "Field types"). */
const INDEXED = new Set(['string', 'boolean', 'integer', 'double', 'timestamp', 'date', 'options', 'country', 'hierarchy', 'uid', 'link']);

const STYLE = `
body { margin: 0; font: 15px/1.5 system-ui, sans-serif; color: #1d1d1f; }
main { max-width: 70rem; margin: 0 auto; padding: 1.5rem; }
h1 { font-size: 1.4rem; margin: 0 0 .75rem; }
nav { margin: 0 0 1rem; color: #555; }
table { border-collapse: collapse; width: 100%; margin: .5rem 0 1rem; }
th, td { text-align: left; border-bottom: 1px solid #ddd; padding: .3rem .5rem; vertical-align: top; }
td.value { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; white-space: pre-wrap; word-break: break-word; }
form.inline { display: inline; }
label { display: block; font-weight: 600; margin: .5rem 0 .1rem; }
.message { color: #b00020; margin: .1rem 0; }
.error { background: #fff5f5; border-left: 4px solid #b00020; padding: .5rem 1rem; }
.user { background: #f5f5f7; padding: .5rem 1rem; margin: 0 0 1rem; }
`;
const STYLE_HASH = `'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`;
/** No script at all, the style by hash, forms to this site only (the test users' sign-in is here too). */
export const DATA_BROWSER_POLICY = `default-src 'none'; style-src ${STYLE_HASH}; form-action 'self'; base-uri 'none'; frame-ancestors 'none'`;

function esc(s: unknown): string {
  return String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A path segment of a link, escaped for the attribute. */
const seg = (s: string) => esc(encodeURIComponent(s));

/** The generated write script of a model: the record by id, then the default form, or its removal. */
function writeScript(model: string): string {
  return [
    `import {${model}} from '📦';`,
    `import {lw_id, lw_action} from 'form';`,
    `const record = ${model}.get(lw_id);`,
    `const removing = lw_action == 'remove';`,
    `if (removing) {`,
    `  record.remove();`,
    `} else {`,
    `  ${model}.Form.submit(record);`,
    `}`,
    `({id: lw_id, removed: removing})`,
    '',
  ].join('\n');
}

/**
 * The routes of the data browser: GET and POST of `/__/dev/data/…`. `route` gives an endpoint the
 * steps of a file of the app's root area (sign-in gate, permissions; load.ts `routed`).
 */
export function dataBrowserRoutes(data: AppData, ctx: CompileContext, route: (endpoint: Endpoint) => Endpoint, access?: DataBrowserAccess): Array<{ spec: RouteSpec; value: Endpoint }> {
  const base = access ? DATA_BROWSER_PRODUCTION_PATH : DATA_BROWSER_PATH;
  const writers = new Map<string, Endpoint>();
  for (const model of data.schema.models.values()) {
    const path = `${base}${model.name}/POST.js`;
    const source = writeScript(model.name);
    const tree: SourceTree = Object.create(ctx.tree, { read: { value: (p: string) => (p === path ? source : ctx.tree.read(p)) } });
    const file: ClassifiedFile = { path, dir: `${base}${model.name}`, name: 'POST.js', kind: 'script', hidden: false };
    const spec: RouteSpec = { method: 'POST', segments: [], trailingSlash: false, kind: 'script', file: path };
    // Its own diagnostics: a model the script cannot name (none should) leaves the model read-only here.
    const diagnostics = new DiagnosticList();
    const endpoint = compileRouteEndpoint(file, spec, { ...ctx, tree, diagnostics, units: undefined }, () => {
      throw new Error('a script has no asset');
    });
    if (endpoint && !diagnostics.items.some((d) => d.severity === 'error')) writers.set(model.name, endpoint);
  }
  const b: Browser = { data, writers, ctx, base, ...(access && { production: { role: access.role, secretHash: sha256(access.secret) } }) };
  const file = base;
  const literals = base.split('/').filter(Boolean).map((value) => ({ type: 'literal' as const, value }));
  return (['GET', 'POST'] as const).map((method) => {
    const spec: RouteSpec = { method, segments: [...literals, { type: 'rest' }], trailingSlash: false, kind: 'service', file };
    const endpoint: Endpoint = { kind: 'service', method, pattern: base, file, dir: '', handle: (req) => answer(b, req) };
    return { spec, value: route(endpoint) };
  });
}

/** What the path names: the models, a model's records, or one record. */
function parsePath(base: string, path: string): { model?: string; id?: string } | undefined {
  if (!path.startsWith(base)) return path === base.slice(0, -1) ? {} : undefined;
  const parts = path.slice(base.length).split('/');
  if (parts.length === 1 && parts[0] === '') return {};
  if (parts.length === 2 && parts[1] === '') return { model: parts[0]! };
  if (parts.length === 2) return { model: parts[0]!, id: parts[1]! };
  return undefined;
}

async function answer(b: Browser, req: RequestInfo): Promise<Reply> {
  const { data } = b;
  const where = parsePath(b.base, req.path);
  const model = where?.model === undefined ? undefined : data.schema.models.get(where.model);
  if (!where || (where.model !== undefined && !model)) return notFound();
  if (!data.store) return page(b, 503, 'The database is not open', '<p>The database is not open.</p>');
  let reader: Reader | undefined;
  if (b.production) {
    const gate = await admitted(b, b.production, req, where.model === undefined && req.method === 'POST');
    if ('reply' in gate) return gate.reply;
    reader = gate.reader;
  }
  if (where.model === undefined || !model) {
    if (req.method !== 'GET') return notAllowed();
    return modelsPage(b, req, reader);
  }
  if (where.id === undefined) {
    if (req.method !== 'GET') return notAllowed();
    return listPage(b, model, req, reader);
  }
  if (req.method === 'POST') return write(b, model, where.id, req, reader);
  return recordPage(b, model, where.id, req, undefined, reader);
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/**
 * The production gate (docs/data-browser.md "In production"): a signed-in user (the sign-in gate
 * before this answered a visitor who is not), holding the role on a top-level profile, with a
 * valid unlock cookie — or, posting the secret to the browser's root, getting one. `unlocking`:
 * the request is that post.
 */
async function admitted(b: Browser, production: NonNullable<Browser['production']>, req: RequestInfo, unlocking: boolean): Promise<{ reader: Reader } | { reply: Reply }> {
  const { data } = b;
  const user = req.user;
  const signer = data.visitors?.signer;
  const config = data.authConfig;
  if (!user || !signer || !config) return { reply: denied(b, 'Sign in first: the data browser is for signed-in users who hold its role.') };
  let session: ReturnType<NonNullable<AppData['store']>['read']> | undefined;
  const permissions = new RequestPermissions(permissionScope(config, '/'), user.id, [], data.profileRoles(() => (session ??= data.store!.read('the data browser'))));
  await permissions.prepare();
  if (!permissions.holds([production.role])) return { reply: denied(b, `The data browser is for users who hold the role ${production.role}; you are signed in as ${user.name}, who does not.`) };
  // Bound to the user and to this sign-in (the session cookie): signing out ends it.
  const sid = signer.readSid(parseCookies(req.headers.cookie).get('sid')) ?? '';
  const bound = `${user.id}\0${sid}`;
  const now = Math.floor(Date.now() / 1000);
  const cookie = parseCookies(req.headers.cookie).get(UNLOCK_COOKIE) ?? '';
  const dot = cookie.indexOf('.');
  const until = Number(cookie.slice(0, dot));
  const unlocked = dot > 0 && Number.isInteger(until) && until > now && until <= now + UNLOCK_SECONDS && signer.check('data-browser', `${until}\0${bound}`, cookie.slice(dot + 1));
  if (unlocking) {
    // Each try counts as a sign-in started (docs/security.md "Limits per visitor"): guessing is slow.
    const rule = data.limiter.rule('sign-ins');
    const over = rule && (await checkLimit(data.limiter, rule, req));
    if (over) return { reply: over };
    const texts = new URLSearchParams((await req.readBody()).toString('utf8'));
    const given = sha256(texts.get('lw_secret') ?? '');
    if (!timingSafeEqual(given, production.secretHash)) {
      b.ctx.modules.log('data browser: a wrong secret was given', { level: 'info', user: user.id, request: req.id });
      return { reply: unlockPage(b, 403, 'That is not the secret. Nothing was unlocked.') };
    }
    const end = now + UNLOCK_SECONDS;
    const secure = clientOf(req).proto === 'https';
    const set = `${UNLOCK_COOKIE}=${end}.${signer.mac('data-browser', `${end}\0${bound}`)}; Path=${b.base}; Max-Age=${UNLOCK_SECONDS}; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
    b.ctx.modules.log('data browser: unlocked', { level: 'info', user: user.id, request: req.id });
    return { reply: { type: 'redirect', status: 303, location: b.base, headers: { 'Set-Cookie': set } } };
  }
  if (!unlocked) return { reply: unlockPage(b, 403, '') };
  return { reader: { permissions } };
}

/** 403 with why, under the browser's policy. */
function denied(b: Browser, why: string): Reply {
  return page(b, 403, 'Not allowed', `<p class="error">${esc(why)} [LW_AUTH_DATA_BROWSER_DENIED]</p>`);
}

/** The form that takes the secret (403: the browser is locked until it is given). */
function unlockPage(b: Browser, status: number, problem: string): Reply {
  const body =
    (problem ? `<p class="error">${esc(problem)} [LW_AUTH_DATA_BROWSER_DENIED]</p>` : '') +
    `<p>This data browser is locked. Type the secret its operator set (<code>LANEWAY_DATA_BROWSER_SECRET</code>) to unlock it for ${UNLOCK_SECONDS / 60} minutes.</p>` +
    `<form method="POST" action="${b.base}"><label for="lw-secret">Secret</label><input id="lw-secret" type="password" name="lw_secret" autocomplete="off" required> <button>Unlock</button></form>`;
  return page(b, status, 'Unlock the data browser', body);
}

function notAllowed(): Reply {
  return { type: 'error', status: 405, code: 'LW_HTTP_METHOD_NOT_ALLOWED', message: 'This address does not answer this method; see the Allow header.', headers: { Allow: 'GET' } };
}

function page(b: Browser, status: number, title: string, body: string, headers: Record<string, string | string[]> = {}): Reply {
  const html =
    `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">` +
    `<title>${esc(title)} · data</title><style>${STYLE}</style></head>\n<body><main>\n` +
    `<nav><a href="${b.base}">Models</a> · ${b.production ? 'laneway: data browser (production)' : 'laneway dev: data browser'}</nav>\n<h1>${esc(title)}</h1>\n${body}\n</main></body></html>\n`;
  return { type: 'body', status, contentType: 'text/html; charset=utf-8', body: html, headers: { 'Content-Security-Policy': DATA_BROWSER_POLICY, 'Cache-Control': 'no-store', ...headers } };
}

/** Who the writes run as, and the test users to sign in as (the development sign-in). */
function userBlock(b: Browser, req: RequestInfo): string {
  const data = b.data;
  if (b.production && req.user) {
    const out = `<form class="inline" method="POST" action="/__/auth/provider/logout"><button>Sign out</button></form>`;
    return `<div class="user"><p>You are signed in as <strong>${esc(req.user.name)}</strong> (${esc(req.user.id)}), who holds the role ${esc(b.production.role)}: you see what this user may read, and writes run as this user. ${out}</p></div>`;
  }
  if (req.user === undefined) return `<p class="user">The app has no users: writes run as a visitor.</p>`;
  const next = req.path + (req.query ? `?${req.query}` : '');
  const tests = (data.auth?.providers(next) ?? []).filter((p) => p.type === 'dev');
  const who = req.user === null ? 'not signed in (writes run as a visitor)' : `signed in as <strong>${esc(req.user.name)}</strong> (${esc(req.user.id)}); writes run as this user`;
  const buttons = tests.map((p) => `<form class="inline" method="POST" action="${esc(p.authPath)}"><button>Sign in as ${esc(p.name)}</button></form>`).join(' ');
  const out = req.user === null ? '' : ` <form class="inline" method="POST" action="/__/auth/provider/logout"><button>Sign out</button></form>`;
  const none = tests.length === 0 ? ' (no test users: set LANEWAY_AUTH_DEV_USERS, docs/users.md "Development sign-in")' : '';
  return `<div class="user"><p>You are ${who}.${out}</p><p>${buttons}${none}</p></div>`;
}

async function modelsPage(b: Browser, req: RequestInfo, reader: Reader | undefined): Promise<Reply> {
  const data = b.data;
  const session = data.store!.read('the data browser');
  const rows: string[] = [];
  for (const m of data.schema.models.values()) {
    // Production: the number only of a model the user may list everywhere (else it would tell what the records cannot).
    const count = reader && !reader.permissions.can('list', { model: m.name }) ? '–' : await session.aggregate({ m: m.name, w: [] }, 'count');
    const container = m.container === undefined ? '' : ` (in ${esc(m.container)})`;
    rows.push(`<tr><td><a href="${b.base}${seg(m.name)}/">${esc(m.name)}</a>${container}</td><td class="count">${esc(count)}</td></tr>`);
  }
  const body = userBlock(b, req) + `<table><thead><tr><th>Model</th><th>Records</th></tr></thead><tbody>\n${rows.join('\n')}\n</tbody></table>`;
  return page(b, 200, 'Models', body);
}

/** A filter value as the field's type stores it (what a script's query would compare). */
function filterValue(f: FieldDefinition, text: string): unknown {
  if (f.type === 'integer' || f.type === 'double' || f.type === 'timestamp') return text.trim() === '' ? NaN : Number(text);
  if (f.type === 'boolean') return text === 'true' || text === 'on' || text === '1';
  return text;
}

/** A stored value as text for a table cell. */
function shown(f: FieldDefinition | undefined, v: unknown): string {
  if (v === null || v === undefined) return '';
  if (f?.type === 'timestamp' && typeof v === 'number') return new Date(v).toISOString();
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/** A record's row as `{field: value}` (the built-ins by name, then the fields in layout order). */
function rowValues(model: ModelDefinition, row: readonly unknown[]): { id: string; created: number; modified: number; container: string | null; values: Map<string, unknown> } {
  const own = model.fields.filter((f) => !f.builtIn);
  const values = new Map<string, unknown>();
  own.forEach((f, i) => values.set(f.name, row[4 + i]));
  return { id: String(row[0]), created: Number(row[1]), modified: Number(row[2]), container: (row[3] as string | null) ?? null, values };
}

async function listPage(b: Browser, model: ModelDefinition, req: RequestInfo, reader: Reader | undefined): Promise<Reply> {
  const data = b.data;
  const query = new URLSearchParams(req.query);
  const session = data.store!.read('the data browser');
  const own = model.fields.filter((f) => !f.builtIn);
  const indexed = model.fields.filter((f) => INDEXED.has(f.type) && f.list === undefined && !f.builtIn);
  const spec: QuerySpec = { m: model.name, w: [] };
  const fieldName = query.get('field') ?? '';
  const filterText = query.get('value') ?? '';
  const field = indexed.find((f) => f.name === fieldName);
  let problem = '';
  if (fieldName !== '' && !field) problem = `${model.name} has no indexed field "${fieldName}" to filter on.`;
  // Production: a filter on a field the user may not read would tell its values by what matches.
  if (field && reader && !reader.permissions.can('read', { model: model.name, field: field.name })) problem = `You may not read the field ${field.name} of ${model.name}, so it cannot be filtered on.`;
  if (field) spec.w.push([field.name, 'eq', filterValue(field, filterText)]);
  const container = query.get('in');
  if (container) spec.c = container;
  let rows: unknown[][] = [];
  let total: unknown = 0;
  // Production: the total only where the user may list every record (else the page's records are counted).
  const counted = !reader || reader.permissions.can('list', { model: model.name });
  if (!problem) {
    try {
      if (counted) total = await session.aggregate({ ...spec }, 'count');
      const after = query.get('after');
      if (after) {
        const from = await session.select({ m: model.name, w: [['id', 'eq', after]], l: 1 });
        if (from[0]) spec.a = from[0];
      }
      rows = await session.select({ ...spec, l: PAGE + 1 });
    } catch (e) {
      problem = `The filter cannot be read: ${(e as Error).message}`;
    }
  }
  const more = rows.length > PAGE;
  rows = rows.slice(0, PAGE);
  const last = rows.length ? rowValues(model, rows[rows.length - 1]!).id : '';
  // Production: only the records the user may list, and of them only the fields the user may read.
  const readable = new Map<unknown[], (field: string) => boolean>();
  if (reader) {
    const p = reader.permissions;
    const listed: unknown[][] = [];
    for (const row of rows) {
      const containers = data.containersOf(model.name, row);
      await p.prepare(containers);
      if (!p.can('list', { model: model.name }, containers)) continue;
      listed.push(row);
      readable.set(row, (field) => p.can('read', { model: model.name, field }, containers));
    }
    rows = listed;
    if (!counted) total = rows.length;
  }
  const shownFields = own.slice(0, 6);
  const head = `<tr><th>id</th>${model.container ? '<th>in</th>' : ''}${shownFields.map((f) => `<th>${esc(f.name)}</th>`).join('')}</tr>`;
  const body = rows.map((row) => {
    const r = rowValues(model, row);
    const may = readable.get(row);
    const cells = shownFields.map((f) => (may && !may(f.name) ? '<td class="hidden"></td>' : `<td class="value">${esc(shown(f, r.values.get(f.name)).slice(0, 80))}</td>`)).join('');
    const inCell = model.container ? `<td><a href="${b.base}${seg(model.container)}/${seg(r.container ?? '')}">${esc(r.container ?? '')}</a></td>` : '';
    return `<tr><td><a class="record" href="${b.base}${seg(model.name)}/${seg(r.id)}">${esc(r.id)}</a></td>${inCell}${cells}</tr>`;
  });
  const options = indexed.map((f) => `<option value="${esc(f.name)}"${f === field ? ' selected' : ''}>${esc(f.name)}</option>`).join('');
  const filter =
    `<form method="GET" action="${b.base}${seg(model.name)}/"><label for="lw-field">Filter on an indexed field</label>` +
    `<select id="lw-field" name="field"><option value="">(none)</option>${options}</select> = <input name="value" value="${esc(filterText)}">` +
    (container ? `<input type="hidden" name="in" value="${esc(container)}">` : '') +
    ` <button>Filter</button></form>`;
  const keep = new URLSearchParams();
  if (field) {
    keep.set('field', field.name);
    keep.set('value', filterText);
  }
  if (container) keep.set('in', container);
  if (more) keep.set('after', last);
  const next = more ? `<p><a class="next" href="${b.base}${seg(model.name)}/?${esc(keep.toString())}">Next ${PAGE} records</a></p>` : '';
  const first = query.get('after') ? `<p><a href="${b.base}${seg(model.name)}/">First page</a></p>` : '';
  const html =
    userBlock(b, req) +
    filter +
    (problem ? `<p class="error">${esc(problem)}</p>` : `<p class="total">${esc(total)} record${total === 1 ? '' : 's'}${counted ? '' : ' you may list on this page'}${field ? ` with ${esc(field.name)} = ${esc(filterText)}` : ''}${container ? ` in ${esc(container)}` : ''}.</p>`) +
    `<table><thead>${head}</thead><tbody>\n${body.join('\n')}\n</tbody></table>` +
    first +
    next;
  return page(b, 200, `${model.name} records`, html);
}

/** The model's default form, as scripts submit it (`Model.Form`). */
function formOf(data: AppData, model: ModelDefinition): FormType | undefined {
  return data.form(`📦.${model.name}`)?.form;
}

async function recordPage(
  b: Browser,
  model: ModelDefinition,
  id: string,
  req: RequestInfo,
  failed: { status: number; messages: Array<{ type: 'error'; field: string; value: string }>; texts?: URLSearchParams; error?: string } | undefined,
  reader: Reader | undefined,
): Promise<Reply> {
  const { data, ctx } = b;
  const session: DataSession = data.store!.read('the data browser');
  const found = await session.select({ m: model.name, w: [['id', 'eq', id]], l: 1 });
  // Production: a record the user may not find is not found, as for a missing one.
  let may = (_field: string) => true;
  if (found[0] && reader) {
    const p = reader.permissions;
    const containers = data.containersOf(model.name, found[0]);
    await p.prepare(containers);
    if (!p.can('access', { model: model.name }, containers) && !p.can('read', { model: model.name, field: 'id' }, containers)) found.length = 0;
    may = (field) => p.can('read', { model: model.name, field }, containers);
  }
  if (!found[0]) return page(b, 404, `No ${model.name} ${id}`, `<p>No record of ${esc(model.name)} has the id ${esc(id)}.</p>`);
  const r = rowValues(model, found[0]);
  const link = (m: string, to: string) => `<a class="link" href="${b.base}${seg(m)}/${seg(to)}">${esc(to)}</a>`;
  const rows = [
    `<tr><th>id</th><td class="value">${esc(r.id)}</td></tr>`,
    `<tr><th>created</th><td class="value">${esc(new Date(r.created).toISOString())}</td></tr>`,
    `<tr><th>modified</th><td class="value">${esc(new Date(r.modified).toISOString())}</td></tr>`,
  ];
  if (model.container && r.container) rows.push(`<tr><th>in ${esc(model.container)}</th><td>${link(model.container, r.container)}</td></tr>`);
  for (const f of model.fields) {
    if (f.builtIn || !may(f.name)) continue;
    const v = r.values.get(f.name);
    const cell = f.type === 'link' && f.model && typeof v === 'string' && v !== '' ? link(f.model, v) : `<span>${esc(shown(f, v))}</span>`;
    rows.push(`<tr><th>${esc(f.name)}</th><td class="value">${cell}</td></tr>`);
  }
  // Children: the records of models this one contains.
  const children: string[] = [];
  for (const m of data.schema.models.values()) {
    if (m.container !== model.name) continue;
    if (reader) {
      const inside = data.containersOf(m.name, ['', 0, 0, r.id]);
      await reader.permissions.prepare(inside);
      if (!reader.permissions.can('list', { model: m.name }, inside)) continue;
    }
    const n = await session.aggregate({ m: m.name, w: [], c: r.id }, 'count');
    children.push(`<li><a class="children" href="${b.base}${seg(m.name)}/?in=${seg(r.id)}">${esc(m.name)}: ${esc(n)}</a></li>`);
  }
  // The edit form: the default form with a fresh form state of this visitor, as a page's form view has.
  const scope = new RequestScope(ctx.modules, req);
  const form = formOf(data, model);
  const visitor = form ? scope.visitor() : undefined;
  let editor = '<p>This model has no form to edit it with.</p>';
  // Production: a form would show (and its save would overwrite) the fields the user may not read.
  const hidden = form?.fields.find((f) => !may(f.name));
  if (hidden) editor = `<p>You may not read the field ${esc(hidden.name)} of this record, so it cannot be edited here.</p>`;
  else if (form && visitor) {
    const values: Record<string, unknown> = {};
    const texts = failed?.texts;
    if (texts) for (const f of form.fields) values[f.name] = f.definition.list !== undefined ? texts.getAll(f.path) : texts.get(f.path);
    else for (const f of form.fields) values[f.name] = r.values.get(f.name);
    const view = formView(form, { id: visitor.formToken(`📦.${model.name}`), values, ...(failed && { messages: failed.messages }), invalid: failed !== undefined, ready: false });
    const controls = form.fields.map((f) => controlHtml((view as unknown as Record<string, FormFieldView>)[f.name]!)).join('\n');
    editor =
      // novalidate: the model's checks on the server decide, and say why (the browser's would stop the post).
      `<form method="POST" action="${b.base}${seg(model.name)}/${seg(r.id)}?_form=${seg(String(view.id))}" novalidate>` +
      `<input type="hidden" name="lw_id" value="${esc(r.id)}"><input type="hidden" name="lw_action" value="save">\n${controls}\n<p><button>Save</button></p></form>`;
  }
  const remove =
    `<form method="POST" action="${b.base}${seg(model.name)}/${seg(r.id)}"><input type="hidden" name="lw_id" value="${esc(r.id)}">` +
    `<input type="hidden" name="lw_action" value="remove"><button>Remove this record</button></form>`;
  const error = failed?.error ? `<div class="error"><p>${esc(failed.error)}</p></div>` : failed?.messages.length ? `<div class="error"><p>Nothing was saved: the values below were refused.</p></div>` : '';
  const html =
    userBlock(b, req) +
    error +
    `<table><tbody>\n${rows.join('\n')}\n</tbody></table>` +
    (children.length ? `<h2>Children</h2><ul>${children.join('')}</ul>` : '') +
    `<h2>Edit</h2>${editor}<h2>Remove</h2>${remove}`;
  const reply = page(b, failed?.status ?? 200, `${model.name} ${r.id}`, html);
  const cookies = scope.visitorTouched() ? scope.visitor()?.setCookieHeaders() : undefined;
  return cookies && reply.type === 'body' ? { ...reply, headers: { ...reply.headers, 'Set-Cookie': cookies } } : reply;
}

/** One control of the edit form, from the form's view model (attributes escaped by forms/view.ts). */
function controlHtml(f: FormFieldView): string {
  const id = `lw-${esc(f.path)}`;
  const label = `<label for="${id}">${esc(f.label)}${f.required ? ' *' : ''}</label>`;
  const message = f.message ? `<p class="message">${esc(f.message.value)}</p>` : '';
  let control = '';
  if (f.input) control = `<input id="${id}" name="${esc(f.path)}" ${String(f.input.attributes)}>`;
  else if (f.textarea) control = `<textarea id="${id}" name="${esc(f.path)}" ${String(f.textarea.attributes)}>${esc(f.textarea.value)}</textarea>`;
  else if (f.toggle) control = `<input type="hidden" name="${esc(f.path)}" value="false"><input id="${id}" type="checkbox" name="${esc(f.path)}" value="true"${f.toggle.on.selected ? ' checked' : ''}>`;
  else if (f.selectOne || f.selectMany) {
    const s = (f.selectOne ?? f.selectMany)!;
    control = `<select id="${id}" name="${esc(f.path)}" ${String(s.attributes)}><option value=""></option>${s.options.map((o) => `<option value="${esc(o.value)}"${o.selected ? ' selected' : ''}>${esc(o.label)}</option>`).join('')}</select>`;
  }
  return `<div class="field">${label}${control}${message}</div>`;
}

/** A save or a removal: the model's generated script, run as the app's scripts run. */
async function write(b: Browser, model: ModelDefinition, id: string, req: RequestInfo, reader: Reader | undefined): Promise<Reply> {
  const writer = b.writers.get(model.name);
  if (!writer) return page(b, 500, `${model.name} cannot be written here`, '<p>The data browser could not make the script that writes this model.</p>');
  const texts = new URLSearchParams((await req.readBody()).toString('utf8'));
  const removing = texts.get('lw_action') === 'remove';
  const reply = await writer.handle(req);
  const status = reply.type === 'body' || reply.type === 'error' ? reply.status : reply.type === 'redirect' ? reply.status : 500;
  // Production: every write attempt is logged, with who made it and the request's id.
  if (b.production) b.ctx.modules.log(`data browser: ${removing ? 'remove' : 'save'} of ${model.name} ${id} by ${req.user?.id ?? 'nobody'}: ${status}`, { level: 'info', user: req.user?.id ?? null, request: req.id, model: model.name, record: id, action: removing ? 'remove' : 'save', status });
  if (reply.type === 'body' && reply.status < 300) {
    const to = removing ? `${b.base}${encodeURIComponent(model.name)}/` : `${b.base}${encodeURIComponent(model.name)}/${encodeURIComponent(id)}`;
    return { type: 'redirect', status: 303, location: to, ...(reply.headers?.['Set-Cookie'] !== undefined && { headers: { 'Set-Cookie': reply.headers['Set-Cookie'] } }) };
  }
  // Refused values (422 with the messages), a conflict (409), a permission (403), anything else.
  let messages: Array<{ type: 'error'; field: string; value: string }> = [];
  let error: string | undefined;
  if (reply.type === 'body') {
    try {
      const parsed = JSON.parse(String(reply.body)) as { messages?: typeof messages; error?: string };
      messages = parsed.messages ?? [];
      error = parsed.error;
    } catch {
      error = `The write failed (${reply.status}).`;
    }
  } else if (reply.type === 'error') {
    error = reply.message;
  } else if (reply.type === 'redirect') {
    return reply;
  }
  return recordPage(b, model, id, req, { status, messages, ...(!removing && { texts }), ...(error !== undefined && { error: `${removing ? 'Not removed' : 'Not saved'} (${status}): ${error}` }) }, reader);
}
