/**
 * Server-sent events: `⏱name.js` answers `GET /dir/name` as an event stream
 * (docs/scripting.md "⏱ Server-sent events"). For each connection:
 *
 *   1. the script's body runs once, as an endpoint's does: the request's budget, its imports, and
 *      (when the app has models) one write transaction, committed before the stream starts;
 *   2. its completion value must be a function `(lastEventId) => [elements]`; anything else is a
 *      500 naming the file (a build error already when the last expression plainly is not one);
 *   3. the stream calls that function right away, then `pollMs` after each call returned. Every
 *      call starts with a fresh CPU budget and memory allowance, reads models in a read session of
 *      its own, and cannot write;
 *   4. every element is one event: `data:` is its JSON, without its `$event` property, which
 *      shapes the event instead (`type` → `event:`, `id` → `id:`, `last: true` ends the stream);
 *   5. Laneway ends the stream itself with an event of its own: `exception` when a call fails,
 *      `timeout` after `idleTimeoutMs` without an event or `maxDurationMs` in all, `close` when the
 *      server stops; and silently, polling nothing more, when the client goes away.
 *
 * Event ids: an element's `$event.id`, else a sequence number. The numbers count the events of the
 * stream: the first is 1, or n + 1 when the client reconnects with `Last-Event-ID: n`. The polled
 * function receives the id of the last event the client has: the `Last-Event-ID` header (or null)
 * on the first call, then the id of the last event sent. Laneway's own events carry no id, so a
 * reconnection resumes after the last event of the script.
 */
import * as acorn from 'acorn';
import { LanewayError, type Code, type DiagnosticList } from '../../diag/index.js';
import { compileScript, outcomeToResponse, ScriptThrownError, serializeScriptValue, type RunOutcome, type ScriptBudget } from '../../script/index.js';
import type { SourceTree } from '../../shared/index.js';
import type { DataSession, Writer } from '../../store/index.js';
import { eventsNotAFunction, scriptError, scriptSite, storeUnavailableLogged } from '../endpoint/answers.js';
import { commitWrites } from './commit.js';
import { checkLimit } from './limits.js';
import type { Limiter, LimitRule } from '../../limits/index.js';
import type { ClassifiedFile } from '../definitions/classify.js';
import type { DataRequest } from '../services/data.js';
import { EVENT_DEFAULTS, type Endpoint, type EventSettings, type EventSink, type Reply, type RequestInfo } from '../endpoint/endpoint.js';
import { importChecker, paramsInScope, RequestScope, scriptModelOptions, type ModuleSystem } from './scope.js';
import { routeNameOf, type Consumer } from '../definitions/suppliers.js';
import type { UnitNeeds } from '../definitions/degrade.js';

/** What compiling a ⏱ file needs of the loader (a part of endpoints.ts's CompileContext). */
export interface EventsContext {
  tree: SourceTree;
  diagnostics: DiagnosticList;
  modules: ModuleSystem;
  needs?: UnitNeeds | undefined;
  /** `dev`: development mode (a failure's answer says where it failed). */
  options?: { dev?: boolean };
}

const JSON_TYPE = 'application/json; charset=utf-8';

/** HEAD: the head of a stream, without running the script (it may write). */
const HEAD_REPLY: Reply = { type: 'events', status: 200, open: () => () => {} };

type PolledFunction = (lastEventId: string | null) => unknown;

export function compileEventsEndpoint(file: ClassifiedFile, base: Pick<Endpoint, 'method' | 'pattern' | 'file' | 'dir'>, ctx: EventsContext): Endpoint | undefined {
  const source = ctx.tree.read(file.path) ?? '';
  const consumer: Consumer = { type: 'endpoint', dir: file.dir, route: routeNameOf(file.name), view: false, file: file.path };
  const script = compileScript(file.path, source, {
    kind: 'endpoint',
    diagnostics: ctx.diagnostics,
    checkImport: importChecker(ctx.modules, consumer, paramsInScope(file.dir), ctx.needs),
    // The body may write (docs/scripting.md "⏱ Server-sent events"); the polled function is refused
    // writes at run time.
    ...scriptModelOptions(ctx.modules),
  });
  if (!script) return undefined;
  const dev = ctx.options?.dev === true;
  const wrong = plainCompletion(source);
  if (wrong) {
    ctx.diagnostics.error(
      'LW_EVENTS_NOT_A_FUNCTION',
      `${file.name} must end with a function (lastEventId) => [events], which Laneway calls to poll the stream, but it ends with ${wrong.what}: ` +
        'make the last line an arrow function, such as (lastEventId) => [{step: 1}]',
      file.path,
      source,
      wrong.offset,
    );
    return undefined;
  }
  const modules = ctx.modules;
  const log = (req: RequestInfo, code: Code, message: string): void => modules.log(message.startsWith('/') ? message : `${file.path}: ${message}`, { id: req.id, code, file: file.path });

  // The visitor's limit of streams opened (docs/security.md "Limits per visitor"), counted in the body's transaction.
  const streamRule = modules.data?.limiter.rule('streams', base.pattern);
  // Upload addresses (`newPutUrl`) count against `uploads` as a script's do (endpoints.ts): the
  // body's in its transaction, a polled call's once it returned.
  const uploadRule = modules.data?.imageFields.size ? modules.data.limiter.rule('uploads') : undefined;
  return { ...base, kind: 'events', handle: (req) => (req.method === 'HEAD' ? HEAD_REPLY : setUp(req)) };

  /** Steps 1 and 2: the body, in its transaction; the stream once it gave a function. */
  /** A limit counted in the request's transaction; over it (or the store gone), the transaction is rolled back. */
  async function limitInTransaction(req: RequestInfo, limiter: Limiter, rule: LimitRule, n: number, writer: Writer): Promise<Reply | undefined> {
    let over: Reply | undefined;
    try {
      over = await checkLimit(limiter, rule, req, n, writer);
    } catch (e) {
      await writer.rollback();
      return storeUnavailableLogged(modules.log, req.id, file.path, (e as Error).message);
    }
    if (over) await writer.rollback();
    return over;
  }

  async function setUp(req: RequestInfo): Promise<Reply> {
    const scope = new RequestScope(modules, req);
    const data = modules.data;
    let tx: { session: DataSession; writer: Writer } | undefined;
    if (data) {
      if (!data.store) return storeUnavailableLogged(modules.log, req.id, file.path, 'the database is not open');
      try {
        tx = await data.store.begin();
      } catch (e) {
        return storeUnavailableLogged(modules.log, req.id, file.path, (e as Error).message);
      }
      scope.dataRequest().session = tx.session;
      if (streamRule) {
        const over = await limitInTransaction(req, data.limiter, streamRule, 1, tx.writer);
        if (over) return over;
      }
    }
    let outcome: RunOutcome;
    try {
      outcome = await script!.run({ importValue: (m, n) => scope.value(consumer, m, n), request: scope.scriptRequest(), budget: scope.budget() });
    } catch (e) {
      await tx?.writer.rollback();
      throw e;
    }
    if (outcome.kind !== 'value' || typeof outcome.value !== 'function') {
      await tx?.writer.rollback();
      return failure(req, outcome);
    }
    const urls = uploadRule ? scope.uploadUrls() : 0;
    if (urls && tx) {
      const over = await limitInTransaction(req, data!.limiter, uploadRule!, urls, tx.writer);
      if (over) return over;
    }
    if (tx) {
      const failed = await commitWrites(tx, modules.log, req.id, file.path);
      if (failed) return failed;
    }
    // From here on the script only reads: every call gets a read session of its own.
    let request: DataRequest | undefined;
    if (data) {
      request = scope.dataRequest();
      request.session = undefined;
      request.what = `the polled function of ${file.path}`;
    }
    const poll = outcome.value as PolledFunction;
    const budget = scope.budget();
    const countUrls = uploadRule && request ? (n: number) => pollUrls(req, n) : undefined;
    return {
      type: 'events',
      status: 200,
      open: (sink, settings) => new EventStream(sink, { ...EVENT_DEFAULTS, ...settings }, poll, budget, request, req, (code, message) => log(req, code, message), countUrls).stop,
    };
  }

  /**
   * The upload addresses a polled call made, against `uploads` (in a transaction of its own on
   * SQLite): the refusal's text when over the limit (the stream then ends, its batch unsent).
   */
  async function pollUrls(req: RequestInfo, n: number): Promise<string | undefined> {
    const over = await checkLimit(modules.data!.limiter, uploadRule!, req, n);
    if (!over || over.type !== 'error') return undefined;
    if (over.log) modules.log(over.log.message, over.log.fields);
    return over.message;
  }

  /** The answer when the body did not give a function: its throw, error or limit as for any script; a 500 otherwise. */
  function failure(req: RequestInfo, outcome: RunOutcome): Reply {
    if (outcome.kind === 'value') {
      const what = describeValue(outcome.value);
      log(req, 'LW_EVENTS_NOT_A_FUNCTION', `the script must end with a function (lastEventId) => [events]; it ended with ${what}`);
      return eventsNotAFunction(file.path, what, req.id);
    }
    const answer = outcomeToResponse(outcome, { method: 'GET', path: req.path, acceptsJson: req.acceptsJson, ajax: false });
    switch (answer.kind) {
      case 'json':
        return { type: 'body', status: answer.status, contentType: JSON_TYPE, body: answer.body, headers: { 'Cache-Control': 'no-store' } };
      case 'redirect':
        return { type: 'redirect', status: answer.status, location: answer.location };
      case 'reroute': // only POST, PUT and DELETE reroute
        return { type: 'redirect', status: 302, location: answer.path };
      case 'error': {
        if (answer.status >= 500) {
          const error = outcome.kind === 'error' || outcome.kind === 'limit' ? outcome.error : undefined;
          log(req, answer.code, error?.message ?? answer.message ?? 'the output went over a limit of the script');
        }
        const failed = scriptError(answer, req.id);
        if (dev) failed.site = scriptSite(outcome, answer, file.path);
        return failed;
      }
    }
  }

}

/** Steps 3 to 5 for one connection. */
class EventStream {
  readonly #sink: EventSink;
  readonly #settings: EventSettings;
  readonly #poll: PolledFunction;
  readonly #budget: ScriptBudget;
  readonly #request: DataRequest | undefined;
  readonly #req: RequestInfo;
  readonly #log: (code: Code, message: string) => void;
  /** Counts the upload addresses a call made (`newPutUrl`): the refusal's text when over `uploads`. */
  readonly #countUrls: ((n: number) => Promise<string | undefined>) | undefined;
  /** What the next call receives: the id of the last event the client has. */
  #lastId: string | null;
  /** The number of the last event (see the file comment). */
  #seq: number;
  #ended = false;
  #pollTimer: NodeJS.Timeout | undefined;
  readonly #keepAlive: NodeJS.Timeout;
  readonly #idle: NodeJS.Timeout;
  readonly #max: NodeJS.Timeout;

  constructor(
    sink: EventSink,
    settings: EventSettings,
    poll: PolledFunction,
    budget: ScriptBudget,
    request: DataRequest | undefined,
    req: RequestInfo,
    log: (code: Code, message: string) => void,
    countUrls?: (n: number) => Promise<string | undefined>,
  ) {
    this.#sink = sink;
    this.#settings = settings;
    this.#poll = poll;
    this.#budget = budget;
    this.#request = request;
    this.#req = req;
    this.#log = log;
    this.#countUrls = countUrls;
    const header = req.headers['last-event-id'];
    this.#lastId = typeof header === 'string' && header !== '' && header.length <= MAX_ID_LENGTH ? header : null;
    this.#seq = this.#lastId !== null && /^\d{1,15}$/.test(this.#lastId) ? Number(this.#lastId) : 0;
    // Timers never keep the process alive: the server ends every stream when it stops.
    this.#keepAlive = setTimeout(() => this.#comment(), settings.keepAliveMs).unref();
    this.#idle = setTimeout(() => this.#finish('timeout', '{"reason":"idle"}'), settings.idleTimeoutMs).unref();
    this.#max = setTimeout(() => this.#finish('timeout', '{"reason":"duration"}'), settings.maxDurationMs).unref();
    void this.#call();
  }

  /** Called by the HTTP layer: the connection closed ('gone'), or the server stops. */
  readonly stop = (reason: 'gone' | 'shutdown'): void => {
    if (reason === 'shutdown') return this.#finish('close', '{"reason":"shutdown"}');
    if (this.#ended) return;
    this.#ended = true;
    this.#release();
  };

  /** One call of the polled function, then the events it gave, then the next call. */
  async #call(): Promise<void> {
    this.#pollTimer = undefined;
    if (this.#ended) return;
    let result: unknown;
    try {
      // The polled function is a closure of the body's run and charges that run's budget: each call
      // starts it afresh (a limit that ended the stream stays).
      if (!this.#budget.renew(this.#settings.cpuMs)) throw new Error('the request budget could not be renewed for the next call');
      // A new read session per call: each call sees the data as it is now.
      if (this.#request) this.#request.session = undefined;
      const urlsBefore = this.#request?.uploadUrls ?? 0;
      const r = this.#poll(this.#lastId);
      result = r instanceof Promise ? await r : r;
      // Upload addresses the call made: counted before its events (which carry them) are sent.
      const urls = (this.#request?.uploadUrls ?? 0) - urlsBefore;
      if (urls > 0 && this.#countUrls && !this.#ended) {
        const refused = await this.#countUrls(urls);
        if (refused !== undefined) return this.#finish('exception', JSON.stringify({ error: refused }));
      }
    } catch (e) {
      return this.#fail(e);
    }
    // The client went away, or the stream timed out, while the call waited: its events are dropped.
    if (this.#ended) return;
    let batch: Batch;
    try {
      batch = frameEvents(result, this.#seq);
    } catch (e) {
      return this.#fail(e);
    }
    if (batch.count > 0) {
      this.#seq = batch.seq;
      this.#lastId = batch.lastId;
      this.#idle.refresh();
      const flowing = this.#write(batch.text);
      if (batch.last) return this.#finish();
      if (!flowing) return this.#sink.onDrain(() => this.#schedule());
    }
    this.#schedule();
  }

  #schedule(): void {
    if (!this.#ended) this.#pollTimer = setTimeout(() => void this.#call(), this.#settings.pollMs).unref();
  }

  #write(text: string): boolean {
    this.#keepAlive.refresh();
    return this.#sink.write(text);
  }

  /** A comment line: proxies see traffic and keep the connection open. */
  #comment(): void {
    if (this.#ended) return;
    this.#write(': keep-alive\n\n');
  }

  /** Ends the stream with an `exception` event; its data never says more than the script chose to throw. */
  #fail(e: unknown): void {
    if (this.#ended) return;
    const id = this.#req.id;
    let data: string | undefined;
    if (e instanceof ScriptThrownError) {
      // The script threw a value of its own: sent as an endpoint's 400 would send it.
      data = serializeScriptValue(typeof e.value === 'string' ? { error: e.value } : e.value === undefined ? { error: null } : e.value);
    } else {
      const code: Code = e instanceof LanewayError ? e.code : 'LW_EVENTS_POLL_FAILED';
      // Errors of script functions called from the host name no file ("script: …"); the log line names it.
      this.#log(code, (e instanceof Error ? e.message : String(e)).replace(/^script: /, ''));
      const limit = e instanceof LanewayError && e.status === 503;
      const text = limit
        ? `The event stream needed more of the server than one call may use, and was stopped. The error was logged with id ${id}.`
        : code === 'LW_EVENTS_BAD_RESULT'
          ? `The event stream sent something that is not a list of events. The error was logged with id ${id}.`
          : `The event stream failed. The error was logged with id ${id}.`;
      data = JSON.stringify({ error: text });
    }
    this.#finish('exception', data ?? JSON.stringify({ error: `The event stream failed. The error was logged with id ${id}.` }));
  }

  /** Ends the stream, after one last event of Laneway's own when `type` is given. */
  #finish(type?: string, data?: string): void {
    if (this.#ended) return;
    this.#ended = true;
    if (type !== undefined) this.#sink.write(`event: ${type}\ndata: ${data}\n\n`);
    this.#sink.end();
    this.#release();
  }

  #release(): void {
    clearTimeout(this.#pollTimer);
    clearTimeout(this.#keepAlive);
    clearTimeout(this.#idle);
    clearTimeout(this.#max);
    if (this.#request) this.#request.session = undefined;
  }
}

/** Longest id Laneway takes from `Last-Event-ID` or `$event.id`. */
const MAX_ID_LENGTH = 256;
const MAX_TYPE_LENGTH = 100;
/** Characters that would end a line of the stream, or that the format refuses in an id (NUL). */
const CONTROL = /[\u0000-\u001f\u007f]/;

interface Batch {
  text: string;
  /** Events in the batch. */
  count: number;
  seq: number;
  lastId: string | null;
  /** An element said `$event.last`: the stream ends after it (later elements are not sent). */
  last: boolean;
}

/**
 * The event-stream text of one call's result (`seq`: the number of the last event so far). The
 * whole result is checked before anything is sent: a malformed element sends none of the batch.
 */
function frameEvents(result: unknown, seq: number): Batch {
  if (!Array.isArray(result)) {
    throw new LanewayError('LW_EVENTS_BAD_RESULT', `the polled function returned ${describeValue(result)}, not an array of events (return [] when there is nothing to send)`);
  }
  let text = '';
  let lastId: string | null = null;
  for (let i = 0; i < result.length; i++) {
    const element: unknown = result[i];
    let data = element;
    let meta: EventMeta | undefined;
    if (isPlainObject(element) && Object.hasOwn(element, '$event')) {
      const { $event, ...rest } = element;
      meta = checkMeta($event, i);
      data = rest;
    }
    const json = data === undefined ? undefined : serializeScriptValue(data);
    if (json === undefined) throw new LanewayError('LW_EVENTS_BAD_RESULT', `element ${i} of the polled function's array (${describeValue(data)}) cannot be sent as JSON`);
    seq++;
    lastId = meta?.id ?? String(seq);
    text += `id: ${lastId}\n${meta?.type === undefined ? '' : `event: ${meta.type}\n`}data: ${json}\n\n`;
    if (meta?.last) return { text, count: i + 1, seq, lastId, last: true };
  }
  return { text, count: result.length, seq, lastId, last: false };
}

interface EventMeta {
  type?: string;
  id?: string;
  last: boolean;
}

function checkMeta(meta: unknown, index: number): EventMeta {
  const bad = (message: string): never => {
    throw new LanewayError('LW_EVENTS_BAD_RESULT', `element ${index} of the polled function's array: ${message}`);
  };
  if (!isPlainObject(meta)) return bad('$event must be an object, such as {type: \'progress\'} or {type: \'done\', last: true}');
  const out: EventMeta = { last: false };
  for (const [key, v] of Object.entries(meta)) {
    if (key === 'type') {
      if (typeof v !== 'string' || v === '' || v.length > MAX_TYPE_LENGTH || CONTROL.test(v)) bad(`$event.type must be a name of 1 to ${MAX_TYPE_LENGTH} characters without line breaks`);
      out.type = v as string;
    } else if (key === 'id') {
      const id = typeof v === 'number' && Number.isFinite(v) ? String(v) : v;
      if (typeof id !== 'string' || id === '' || id.length > MAX_ID_LENGTH || CONTROL.test(id)) bad(`$event.id must be a number, or a text of 1 to ${MAX_ID_LENGTH} characters without line breaks`);
      out.id = id as string;
    } else if (key === 'last') {
      if (typeof v !== 'boolean') bad('$event.last must be true or false');
      out.last = v as boolean;
    } else {
      bad(`$event has no "${key}": it takes type, id and last`);
    }
  }
  return out;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype;
}

/** What a value is, for messages (never the value itself: messages do not echo data). */
function describeValue(v: unknown): string {
  if (v === undefined) return 'no value';
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  switch (typeof v) {
    case 'string':
      return 'a string';
    case 'number':
    case 'bigint':
      return 'a number';
    case 'boolean':
      return 'a boolean';
    case 'function':
      return 'a function';
  }
  return isPlainObject(v) ? 'an object' : 'a value that is not plain data';
}


/**
 * The completion value of a script, when it plainly is not a function (build time): the value of
 * the last expression statement, provided no statement that may change it (`if`, `try`, a block)
 * follows; otherwise the run-time check decides.
 */
function plainCompletion(source: string): { what: string; offset: number } | undefined {
  let program: acorn.Program;
  try {
    program = acorn.parse(source, { ecmaVersion: 'latest', sourceType: 'module' });
  } catch {
    return undefined; // compileScript reported it
  }
  let last: acorn.Expression | undefined;
  let known = true;
  for (const statement of program.body) {
    if (statement.type === 'ExpressionStatement') {
      last = statement.expression;
      known = true;
    } else if (statement.type !== 'ImportDeclaration' && statement.type !== 'VariableDeclaration' && statement.type !== 'EmptyStatement') {
      known = false;
    }
  }
  if (!known) return undefined;
  if (!last) {
    const end = program.body.at(-1);
    return { what: 'no value (there is no expression statement)', offset: end ? end.start : 0 };
  }
  const what = notAFunction(last);
  return what === undefined ? undefined : { what, offset: last.start };
}

/** What an expression gives when it can never be a function; undefined when it may be one. */
function notAFunction(e: acorn.Expression | acorn.SpreadElement | acorn.PrivateIdentifier | acorn.Super): string | undefined {
  switch (e.type) {
    case 'Literal':
      return e.value === null ? 'null' : typeof e.value === 'string' ? 'a string' : typeof e.value === 'boolean' ? 'a boolean' : 'a number';
    case 'TemplateLiteral':
      return 'a string';
    case 'ObjectExpression':
      return 'an object';
    case 'ArrayExpression':
      return 'an array';
    case 'UnaryExpression':
      return e.operator === 'void' ? 'no value' : e.operator === 'typeof' ? 'a string' : e.operator === '!' || e.operator === 'delete' ? 'a boolean' : 'a number';
    case 'UpdateExpression':
      return 'a number';
    case 'BinaryExpression':
      return 'the result of an operator';
    case 'Identifier':
      return e.name === 'undefined' ? 'no value' : e.name === 'NaN' || e.name === 'Infinity' ? 'a number' : undefined;
    case 'SequenceExpression':
      return notAFunction(e.expressions.at(-1)!);
    case 'AssignmentExpression':
      return e.operator === '=' ? notAFunction(e.right) : 'the result of an operator';
    case 'ConditionalExpression':
    case 'LogicalExpression': {
      const [a, b] = e.type === 'ConditionalExpression' ? [e.consequent, e.alternate] : [e.left, e.right];
      return notAFunction(a) !== undefined && notAFunction(b) !== undefined ? 'a value that is not a function' : undefined;
    }
    default:
      return undefined;
  }
}
