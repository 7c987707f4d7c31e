/**
 * Phase 3: generates the JavaScript that runs a validated script inside the realm.
 *
 * Shape of the output (one line of header so that source line N stays line N):
 *
 *   (function ($lw_G, $lw_K) { "use strict"; const {Math, …} = $lw_G; const {$lw_P, …} = $lw_K;
 *     return $lw_A(function* ($lw_r) { …imports… …body… return [completion]; var $lw_t, …; }); })
 *
 * - `$lw_r` is the run (budget counters, limits, request); each arrow starts with
 *   `if (++$lw_r.d > $lw_r.md || --$lw_r.n < 0) $lw_r.slow();` (depth, then CPU every N entries)
 *   and decrements the depth in a `finally`.
 * - The top level is a generator function (made once per script) that `$lw_A` runs synchronously,
 *   continuing asynchronously only from the first Promise it yields (realm/30-iteration.js `drive`): a
 *   run that waits for nothing gives its result without a Promise.
 * - An arrow without a call that may wait (validate.ts) is a plain arrow; one with such calls is an
 *   async arrow. When it is also pure (validate.ts FunctionInfo.pure: it changes nothing), it is
 *   compiled twice, `$lw_M(((s, a) => (x) => { …run s, on a restart ($lw_B) run a… })(sync, async))`:
 *   the synchronous variant makes each call that may wait only when the callee is a built-in that
 *   cannot wait ($lw_q), and otherwise restarts the call in the async variant ($lw_bail; see the SY
 *   comment in realm/30-iteration.js). The async copy is written on one line; GeneratedScript.sourceLine
 *   maps its positions back to script lines.
 * - A call that may wait compiles to `(($lw_t = f(x)) instanceof $lw_P ? $lw_b.q(await $lw_b.p($lw_t))
 *   : $lw_t)` (`yield` at the top level): only a real Promise is waited for; p pauses the CPU clock
 *   and q resumes it and makes the request's budget current again, whether the wait ended with a
 *   value or a rejection (which q then throws: see Budget.p in realm/20-budgets.js).
 * - Computed keys go through `$lw_key` (forbidden names), writes through `$lw_set` (forbidden names,
 *   hook functions, array length caps), `delete` through `$lw_del` (plain objects only).
 * - Top-level expression statements assign `$lw_cv`, so the completion value follows ECMAScript's
 *   rules (an `if` or `try` resets it to undefined; a `finally` block does not change it).
 * - The result is wrapped in an array so a thenable completion value is never adopted.
 */
import type { ScriptKind } from './types.js';
import type { Analysis, AnyNode, FunctionInfo } from './validate.js';
import { GRANTED_GLOBALS } from './names.js';

const KIT = ['$lw_fs', '$lw_out', '$lw_me', '$lw_A', '$lw_M', '$lw_Y', '$lw_B', '$lw_q', '$lw_bail', '$lw_P', '$lw_key', '$lw_set', '$lw_del', '$lw_pk', '$lw_cs', '$lw_ca', '$lw_S', '$lw_apply', '$lw_nt', '$lw_os'];

interface FnState {
  info: FunctionInfo;
  temps: number;
  top: boolean;
  /** The synchronous variant of a pure waiting arrow: calls that could wait are checked ($lw_q). */
  checked: boolean;
  /** This variant is an async function. */
  async: boolean;
}

export interface GeneratedScript {
  code: string;
  /**
   * The script position (1-based line and column) of a position in the generated code (1-based, as
   * V8 reports them in stack frames). Lines are kept aligned, except inside the second (async)
   * copy of an arrow compiled twice, which is written on one line; columns never are: every
   * expression leaves a mark, and a position maps to the last mark at or before it.
   */
  sourcePos(line: number, column: number): { line: number; column: number };
}

/**
 * `register(text)` stores the script's own text of each arrow and gives the id written into the
 * arrow's code, which Function.prototype.toString in the realm turns back into that text.
 */
export interface GenerateOptions {
  /**
   * Field names of the app's models: a call `o.title(x)` with one of these names compiles to
   * `$lw_fs(o, 'title', x)`, which sets the field when `o` is a record (fluent setters) and calls
   * the method otherwise.
   */
  fluent?: ReadonlySet<string>;
  /** The app has models: an endpoint's completion value goes through `$lw_out` (writes, then JSON data). */
  models?: boolean;
}

export function generateScript(program: AnyNode, analysis: Analysis, kind: ScriptKind, source: string, register: (text: string) => number, options: GenerateOptions = {}): GeneratedScript {
  const g = new Generator(analysis, source, register, options);
  const code = g.program(program, kind);
  return { code, sourcePos: g.positionMapper() };
}

class Generator {
  readonly #a: Analysis;
  #out: string[] = [];
  #line = 1;
  /** 0-based column on the current output line. */
  #col = 0;
  /** > 0 while writing a copy whose lines are not aligned (see GeneratedScript.sourcePos). */
  #shadow = 0;
  /** [line, column (0-based), script line, script column (0-based)], in output order. */
  readonly #marks: Array<[number, number, number, number]> = [];
  #fn!: FnState;
  readonly #source: string;
  readonly #register: (text: string) => number;

  readonly #opts: GenerateOptions;

  constructor(analysis: Analysis, source: string, register: (text: string) => number, options: GenerateOptions) {
    this.#opts = options;
    this.#a = analysis;
    this.#source = source;
    this.#register = register;
  }

  program(program: AnyNode, kind: ScriptKind): string {
    const globals = [...GRANTED_GLOBALS].filter((g) => g !== 'undefined' && g !== 'NaN' && g !== 'Infinity');
    this.#emit(`(function ($lw_G, $lw_K) { "use strict"; const {${globals.join(', ')}} = $lw_G; const {${KIT.join(', ')}} = $lw_K; `);
    this.#emit('return $lw_A(function* ($lw_r) { const $lw_b = $lw_r.b; ');
    this.#fn = { info: { node: null, calls: [], async: true, pure: false }, temps: 0, top: true, checked: false, async: false };
    this.#a.imports.forEach((imp, i) => {
      this.#emit(`const ${imp.local} = `);
      this.#awaitCall(() => this.#emit(`$lw_r.imp(${i})`));
      this.#emit('; ');
    });
    for (const s of program.body) {
      if (s.type === 'ImportDeclaration' || s.type.startsWith('Export')) continue;
      this.#statement(s);
    }
    if (kind === 'endpoint' && this.#opts.models) {
      // Pending writes, then records and queries as JSON data (may wait for the database).
      this.#emit(' $lw_t = $lw_out($lw_cv); if ($lw_t instanceof $lw_P) $lw_t = $lw_b.q(yield $lw_b.p($lw_t)); return [$lw_t];');
    } else if (kind === 'endpoint') {
      this.#emit(' return [$lw_cv];');
    } else {
      const fields = this.#a.exports.map((e) => `${JSON.stringify(e.exported)}: ${e.local}`);
      this.#emit(` return [{${fields.join(', ')}}];`);
    }
    this.#emit(` var $lw_t, $lw_cv${this.#tempDeclarations()}; }); })`);
    return this.#out.join('');
  }

  // ---- output --------------------------------------------------------------------------------

  #emit(text: string): void {
    this.#out.push(text);
    let last = -1;
    for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) {
      this.#line++;
      last = i;
    }
    this.#col = last === -1 ? this.#col + text.length : text.length - last - 1;
  }

  /** Moves the output to the line a node starts on, so stack traces name the script's lines. */
  #sync(node: AnyNode): void {
    const target = node.loc?.start.line ?? this.#line;
    if (this.#shadow === 0 && target > this.#line) this.#emit('\n'.repeat(target - this.#line));
    this.#mark(node);
  }

  /** Records that the output here stands for the start of `node` (see GeneratedScript.sourcePos). */
  #mark(node: AnyNode): void {
    if (node.loc) this.#marks.push([this.#line, this.#col, node.loc.start.line, node.loc.start.column]);
  }

  positionMapper(): (line: number, column: number) => { line: number; column: number } {
    const marks = this.#marks;
    return (line, column) => {
      const col = column - 1;
      // The last mark at or before (line, col): marks are in output order.
      let lo = 0;
      let hi = marks.length - 1;
      let found = -1;
      while (lo <= hi) {
        const mid = (lo + hi) >> 1;
        const [l, c] = marks[mid]!;
        if (l < line || (l === line && c <= col)) {
          found = mid;
          lo = mid + 1;
        } else {
          hi = mid - 1;
        }
      }
      if (found === -1) return { line, column };
      return { line: marks[found]![2], column: marks[found]![3] + 1 };
    };
  }

  #temp(): string {
    return `$lw_${++this.#fn.temps}`;
  }

  #tempDeclarations(): string {
    let s = '';
    for (let i = 1; i <= this.#fn.temps; i++) s += `, $lw_${i}`;
    return s;
  }

  // ---- statements --------------------------------------------------------------------------

  #statement(node: AnyNode): void {
    this.#sync(node);
    const top = this.#fn.top;
    switch (node.type) {
      case 'ExpressionStatement':
        this.#emit(top ? '$lw_cv = (' : '(');
        this.#expression(node.expression);
        this.#emit('); ');
        return;
      case 'VariableDeclaration':
        this.#emit(`${node.kind} `);
        node.declarations.forEach((d: AnyNode, i: number) => {
          if (i) this.#emit(', ');
          this.#pattern(d.id);
          if (d.init) {
            const rest = d.id.type === 'ObjectPattern' && d.id.properties.some((p: AnyNode) => p.type === 'RestElement');
            this.#emit(rest ? ' = $lw_os(' : ' = ');
            this.#expression(d.init);
            if (rest) this.#emit(')');
          }
        });
        this.#emit('; ');
        return;
      case 'BlockStatement':
        this.#emit('{ ');
        for (const s of node.body) this.#statement(s);
        this.#emit('} ');
        return;
      case 'EmptyStatement':
        this.#emit('; ');
        return;
      case 'IfStatement':
        if (top) this.#emit('$lw_cv = undefined; ');
        this.#emit('if (');
        this.#expression(node.test);
        this.#emit(') { ');
        this.#statement(node.consequent);
        this.#emit('} ');
        if (node.alternate) {
          this.#emit('else { ');
          this.#statement(node.alternate);
          this.#emit('} ');
        }
        return;
      case 'TryStatement':
        this.#try(node, top);
        return;
      case 'ThrowStatement':
        this.#emit('throw (');
        this.#expression(node.argument);
        this.#emit('); ');
        return;
      case 'ReturnStatement':
        this.#emit('return ');
        if (node.argument) {
          // An async function's result is adopted when it has a then method: never a script's ($lw_nt).
          this.#emit(this.#fn.async ? '$lw_nt(' : '(');
          this.#expression(node.argument);
          this.#emit(')');
        }
        this.#emit('; ');
        return;
      default:
        throw new Error(`generate: unexpected statement ${node.type}`);
    }
  }

  #try(node: AnyNode, top: boolean): void {
    if (top) this.#emit('$lw_cv = undefined; ');
    // With a finally block, whatever leaves the try and catch blocks goes through chk first (with
    // a catch block too, through an inner try), so that a limit the engine raised (the call stack ran out) marks the request
    // dead before the finally block runs, and fin() raises it again there.
    const nested = node.finalizer && node.handler;
    if (nested) this.#emit('try { ');
    this.#emit('try { ');
    for (const s of node.block.body) this.#statement(s);
    this.#emit('} ');
    if (node.handler) {
      // Limits and forbidden accesses are not catchable: chk rethrows them.
      this.#emit('catch ($lw_e) { $lw_b.chk($lw_e); ');
      if (top) this.#emit('$lw_cv = undefined; ');
      const pname = node.handler.param?.type === 'Identifier' ? node.handler.param.name : '';
      // catch ($ModelNotFound) / catch ($ModelInvalid) catch only that error (docs/queries.md "Errors").
      if (pname === '$ModelNotFound' || pname === '$ModelInvalid') this.#emit(`if (!$lw_me($lw_e, ${pname === '$ModelNotFound' ? 1 : 2})) throw $lw_e; `);
      if (node.handler.param) {
        this.#emit('let ');
        this.#pattern(node.handler.param);
        this.#emit(' = $lw_e; ');
      }
      for (const s of node.handler.body.body) this.#statement(s);
      this.#emit('} ');
    }
    if (node.finalizer) {
      // (Without a catch block, the try block itself gets that catch.)
      this.#emit(`${nested ? '} ' : ''}catch ($lw_f) { $lw_b.chk($lw_f); throw $lw_f; } `);
      const saved = top ? this.#temp() : '';
      // A pending limit is raised again before the block runs: nothing in it can swallow the limit.
      this.#emit('finally { $lw_b.fin(); ');
      if (top) this.#emit(`${saved} = $lw_cv; `);
      for (const s of node.finalizer.body) this.#statement(s);
      if (top) this.#emit(`$lw_cv = ${saved}; `);
      this.#emit('} ');
    }
  }

  // ---- patterns ----------------------------------------------------------------------------

  #pattern(node: AnyNode): void {
    switch (node.type) {
      case 'Identifier':
        this.#emit(node.name);
        return;
      case 'ObjectPattern':
        this.#emit('{');
        node.properties.forEach((p: AnyNode, i: number) => {
          if (i) this.#emit(', ');
          if (p.type === 'RestElement') {
            this.#emit('...');
            this.#pattern(p.argument);
            return;
          }
          this.#emit(`${this.#keyCode(p.key)}: `);
          this.#pattern(p.value);
        });
        this.#emit('}');
        return;
      case 'ArrayPattern':
        this.#emit('[');
        node.elements.forEach((e: AnyNode, i: number) => {
          if (i) this.#emit(', ');
          if (e) this.#pattern(e);
        });
        if (node.elements.length && !node.elements[node.elements.length - 1]) this.#emit(',');
        this.#emit(']');
        return;
      case 'RestElement':
        this.#emit('...');
        this.#pattern(node.argument);
        return;
      case 'AssignmentPattern':
        this.#pattern(node.left);
        this.#emit(' = ');
        this.#expression(node.right);
        return;
      case 'MemberExpression':
        this.#expression(node);
        return;
      default:
        throw new Error(`generate: unexpected pattern ${node.type}`);
    }
  }

  #keyCode(key: AnyNode): string {
    if (key.type === 'Identifier') return key.name;
    return JSON.stringify(String(key.value));
  }

  // ---- expressions -------------------------------------------------------------------------

  #expression(node: AnyNode): void {
    this.#mark(node);
    switch (node.type) {
      case 'Identifier':
        this.#emit(node.name);
        return;
      case 'Literal':
        this.#emit(node.raw ?? JSON.stringify(node.value));
        return;
      case 'TemplateLiteral':
        this.#template(node);
        return;
      case 'ArrayExpression':
        this.#array(node);
        return;
      case 'ObjectExpression':
        this.#object(node);
        return;
      case 'ArrowFunctionExpression':
        this.#arrow(node);
        return;
      case 'UnaryExpression':
        if (node.operator === 'delete') {
          const m = node.argument;
          this.#emit('$lw_del(');
          this.#expression(m.object);
          this.#emit(', ');
          if (m.computed) this.#expression(m.property);
          else this.#emit(JSON.stringify(m.property.name));
          this.#emit(')');
          return;
        }
        this.#emit(`(${node.operator}${/^[a-z]/.test(node.operator) ? ' ' : ''}`);
        this.#expression(node.argument);
        this.#emit(')');
        return;
      case 'UpdateExpression':
        this.#update(node);
        return;
      case 'BinaryExpression': {
        const check = node.operator === '+' && node.left.type !== 'Literal' && node.right.type !== 'Literal';
        this.#emit(check ? '$lw_cs((' : '(');
        this.#expression(node.left);
        this.#emit(` ${node.operator} `);
        this.#expression(node.right);
        this.#emit(check ? '))' : ')');
        return;
      }
      case 'LogicalExpression':
        this.#emit('(');
        this.#expression(node.left);
        this.#emit(` ${node.operator} `);
        this.#expression(node.right);
        this.#emit(')');
        return;
      case 'ConditionalExpression':
        this.#emit('(');
        this.#expression(node.test);
        this.#emit(' ? ');
        this.#expression(node.consequent);
        this.#emit(' : ');
        this.#expression(node.alternate);
        this.#emit(')');
        return;
      case 'AssignmentExpression':
        this.#assignment(node);
        return;
      case 'SequenceExpression':
        this.#emit('(');
        node.expressions.forEach((e: AnyNode, i: number) => {
          if (i) this.#emit(', ');
          this.#expression(e);
        });
        this.#emit(')');
        return;
      case 'ParenthesizedExpression':
        this.#expression(node.expression);
        return;
      case 'MemberExpression':
        this.#operand(node.object);
        this.#memberAccess(node);
        return;
      case 'ChainExpression':
        this.#chain(node.expression);
        return;
      case 'CallExpression':
        this.#callExpression(node);
        return;
      case 'NewExpression':
        this.#newExpression(node);
        return;
      default:
        throw new Error(`generate: unexpected expression ${node.type}`);
    }
  }

  /** An operand of member access or a call: parenthesised unless it is a plain name or access. */
  #operand(node: AnyNode): void {
    if (node.type === 'Identifier' || node.type === 'MemberExpression' || node.type === 'CallExpression') {
      this.#expression(node);
    } else {
      this.#emit('(');
      this.#expression(node);
      this.#emit(')');
    }
  }

  /** `.name` or `[key]` of a member expression, with the run-time key check when computed. */
  #memberAccess(node: AnyNode, optional = false): void {
    this.#mark(node.property);
    if (!node.computed) {
      this.#emit(`${optional ? '?.' : '.'}${node.property.name}`);
      return;
    }
    this.#emit(optional ? '?.[' : '[');
    this.#key(node.property);
    this.#emit(']');
  }

  /** A computed key: literals (already checked at build) as they are, anything else through $lw_key. */
  #key(node: AnyNode): void {
    if (node.type === 'Literal' && (typeof node.value === 'number' || typeof node.value === 'string')) {
      this.#emit(node.raw);
      return;
    }
    this.#emit('$lw_key(');
    this.#expression(node);
    this.#emit(')');
  }

  #template(node: AnyNode): void {
    const check = node.expressions.length >= 2;
    if (check) this.#emit('$lw_cs(');
    this.#emit('`');
    node.quasis.forEach((q: AnyNode, i: number) => {
      this.#emit(q.value.raw);
      if (i < node.expressions.length) {
        this.#emit('${');
        this.#expression(node.expressions[i]);
        this.#emit('}');
      }
    });
    this.#emit('`');
    if (check) this.#emit(')');
  }

  #array(node: AnyNode): void {
    const spread = node.elements.some((e: AnyNode) => e?.type === 'SpreadElement');
    if (spread) this.#emit('$lw_ca(');
    this.#emit('[');
    node.elements.forEach((e: AnyNode, i: number) => {
      if (i) this.#emit(', ');
      if (!e) return;
      if (e.type === 'SpreadElement') {
        this.#emit('...');
        this.#expression(e.argument);
      } else {
        this.#expression(e);
      }
    });
    if (node.elements.length && !node.elements[node.elements.length - 1]) this.#emit(',');
    this.#emit(']');
    if (spread) this.#emit(')');
  }

  #object(node: AnyNode): void {
    this.#emit('({');
    node.properties.forEach((p: AnyNode, i: number) => {
      if (i) this.#emit(', ');
      if (p.type === 'SpreadElement') {
        // A string spreads one key per character: checked against the array limit ($lw_os).
        this.#emit('...$lw_os(');
        this.#expression(p.argument);
        this.#emit(')');
        return;
      }
      if (p.computed) {
        this.#emit('[$lw_pk(');
        this.#expression(p.key);
        this.#emit(')]');
      } else {
        this.#emit(this.#keyCode(p.key));
      }
      this.#emit(': ');
      this.#expression(p.value);
    });
    this.#emit('})');
  }

  #arrow(node: AnyNode): void {
    const info = this.#a.functions.get(node)!;
    // The id of the arrow's own text, written as a comment at the start of its parameters, where
    // Function.prototype.toString of the realm finds it (realm/50-freeze.js).
    const id = this.#register(this.#source.slice(node.start, node.end));
    if (!info.async || !info.pure) {
      this.#arrowVariant(node, info, info.async, false, id);
      return;
    }
    // A pure arrow that may wait (see the file comment): a wrapper of its own, so that the call of
    // the synchronous variant can be inlined; the async copy is written on the current line, its
    // positions mapped back (#mark).
    const rest = node.params.some((p: AnyNode) => p.type === 'RestElement');
    const params = rest ? '...$lw_as' : node.params.map((_: AnyNode, i: number) => `$lw_a${i}`).join(', ');
    const args = rest ? '...$lw_as' : params;
    this.#emit(
      `$lw_M((($lw_sv, $lw_av) => (/*#${id}*/${params}) => { if ($lw_Y.on) $lw_bail(); $lw_Y.on = true; ` +
        `try { return $lw_sv(${args}); } catch ($lw_x) { if ($lw_x !== $lw_B) throw $lw_x; } finally { $lw_Y.on = false; } ` +
        `return $lw_av(${args}); })(`,
    );
    this.#arrowVariant(node, info, false, true, id);
    this.#emit(', ');
    this.#shadow++;
    this.#arrowVariant(node, info, true, false, id);
    this.#shadow--;
    this.#emit('))');
  }

  #arrowVariant(node: AnyNode, info: FunctionInfo, isAsync: boolean, checked: boolean, id: number): void {
    const outer = this.#fn;
    this.#fn = { info, temps: 0, top: false, checked, async: isAsync };
    this.#emit(isAsync ? `(async (/*#${id}*/` : `((/*#${id}*/`);
    // Parameters that are plain names (or a rest name) stay in the list; any other pattern is
    // declared at the start of the body, where its default values may call functions that wait.
    const lowered: Array<[AnyNode, string]> = [];
    node.params.forEach((p: AnyNode, i: number) => {
      if (i) this.#emit(', ');
      const plain = p.type === 'Identifier' || (p.type === 'RestElement' && p.argument.type === 'Identifier');
      if (plain) {
        this.#pattern(p);
        return;
      }
      const name = `$lw_p${i}`;
      this.#emit(p.type === 'RestElement' ? `...${name}` : name);
      lowered.push([p.type === 'RestElement' ? p.argument : p, name]);
    });
    this.#emit(') => { if (++$lw_r.d > $lw_r.md || --$lw_r.n < 0) $lw_r.slow(); if ($lw_S.cur !== $lw_b) $lw_b.enter(); try { ');
    for (const [p, name] of lowered) {
      this.#emit('let ');
      if (p.type === 'AssignmentPattern') {
        // `(x = d) =>`: the default applies when the argument is undefined, as in a parameter list.
        this.#pattern(p.left);
        this.#emit(` = ${name} === undefined ? (`);
        this.#expression(p.right);
        this.#emit(`) : ${name}; `);
      } else {
        this.#pattern(p);
        this.#emit(` = ${name}; `);
      }
    }
    if (node.body.type === 'BlockStatement') {
      for (const s of node.body.body) this.#statement(s);
    } else {
      this.#sync(node.body);
      this.#emit(isAsync ? 'return $lw_nt(' : 'return (');
      this.#expression(node.body);
      this.#emit('); ');
    }
    this.#emit('} finally { $lw_r.d--; }');
    const temps = (isAsync ? ['$lw_t'] : []).concat(Array.from({ length: this.#fn.temps }, (_, i) => `$lw_${i + 1}`));
    if (temps.length) this.#emit(` var ${temps.join(', ')};`);
    this.#emit(' })');
    this.#fn = outer;
  }

  /** Wraps the call `emitCall` writes in a conditional await (see the file comment). */
  #awaitCall(emitCall: () => void): void {
    this.#emit('(($lw_t = ');
    emitCall();
    this.#emit(`) instanceof $lw_P ? $lw_b.q(${this.#fn.top ? 'yield' : 'await'} $lw_b.p($lw_t)) : $lw_t)`);
  }

  #arguments(args: AnyNode[]): void {
    this.#emit('(');
    args.forEach((a, i) => {
      if (i) this.#emit(', ');
      if (a.type === 'SpreadElement') {
        this.#emit('...');
        this.#expression(a.argument);
      } else {
        this.#expression(a);
      }
    });
    this.#emit(')');
  }

  #callExpression(node: AnyNode): void {
    const emitCall = (): void => {
      this.#sync(node);
      if (this.#isFluent(node)) {
        this.#emit('$lw_fs(');
        this.#operand(node.callee.object);
        this.#emit(`, ${JSON.stringify(node.callee.property.name)}`);
        for (const a of node.arguments) {
          this.#emit(', ');
          if (a.type === 'SpreadElement') this.#emit('...');
          this.#expression(a.type === 'SpreadElement' ? a.argument : a);
        }
        this.#emit(')');
        return;
      }
      this.#operand(node.callee);
      this.#arguments(node.arguments);
    };
    if (this.#a.syncCalls.has(node)) emitCall();
    else if (this.#fn.checked) this.#checkedCall(node);
    else this.#awaitCall(emitCall);
  }

  /** `o.name(…)` where name is a model field name (see GenerateOptions.fluent). */
  #isFluent(node: AnyNode): boolean {
    const c = node.callee;
    return !!this.#opts.fluent && c.type === 'MemberExpression' && !c.computed && !c.optional && c.property.type === 'Identifier' && this.#opts.fluent.has(c.property.name);
  }

  /**
   * A call that could wait, in a synchronous variant: made only when the callee is a built-in
   * that cannot wait or change anything ($lw_q), otherwise the variant is abandoned ($lw_bail):
   * `($lw_1 = o, $lw_2 = $lw_1.m, $lw_q($lw_2) ? $lw_2.call($lw_1, args) : $lw_bail())`.
   */
  #checkedCall(node: AnyNode): void {
    this.#sync(node);
    const callee = node.callee;
    const emitArgs = (): void => {
      for (const a of node.arguments) {
        this.#emit(', ');
        if (a.type === 'SpreadElement') {
          this.#emit('...');
          this.#expression(a.argument);
        } else {
          this.#expression(a);
        }
      }
    };
    const f = this.#temp();
    if (callee.type === 'MemberExpression') {
      const o = this.#temp();
      this.#emit(`((${o} = `);
      this.#operand(callee.object);
      this.#emit(`), ${f} = ${o}`);
      this.#memberAccess(callee);
      this.#emit(`, $lw_q(${f}) ? ${f}.call(${o}`);
    } else {
      this.#emit(`((${f} = `);
      this.#expression(callee);
      this.#emit(`), $lw_q(${f}) ? ${f}.call(undefined`);
    }
    emitArgs();
    this.#emit(') : $lw_bail())');
  }

  #newExpression(node: AnyNode): void {
    const emitNew = (): void => {
      this.#emit('new ');
      this.#operand(node.callee);
      this.#arguments(node.arguments);
    };
    if (this.#a.syncCalls.has(node)) {
      this.#emit('(');
      emitNew();
      this.#emit(')');
    } else {
      this.#awaitCall(emitNew);
    }
  }

  /**
   * An optional chain, lowered to explicit tests so that each call in it can be awaited:
   * `a?.b.c()` becomes `(($lw_1 = a) == null ? undefined : await?($lw_1.b.c()))`.
   */
  #chain(node: AnyNode): void {
    // Flatten: base, then links from the innermost outwards.
    const links: AnyNode[] = [];
    let base = node;
    while (base.type === 'MemberExpression' || base.type === 'CallExpression') {
      links.unshift(base);
      base = base.type === 'MemberExpression' ? base.object : base.callee;
    }
    this.#chainFrom(() => this.#operand(base), links, 0);
  }

  #chainFrom(emitHead: () => void, links: AnyNode[], from: number): void {
    // Find the next optional link; everything before it is emitted as a plain (awaited) chain.
    let i = from;
    for (; i < links.length; i++) if (links[i].optional) break;
    if (i === links.length) {
      this.#chainPlain(emitHead, links, from, links.length);
      return;
    }
    const link = links[i];
    if (link.type === 'CallExpression' && i > from && links[i - 1].type === 'MemberExpression') {
      // `o.m?.()`: keep `this` = o.
      const obj = this.#temp();
      const fn = this.#temp();
      this.#emit(`((${obj} = `);
      this.#chainPlain(emitHead, links, from, i - 1);
      this.#emit(`), (${fn} = ${obj}`);
      this.#memberAccess(links[i - 1]);
      this.#emit(`) == null ? undefined : `);
      this.#chainFrom(() => {
        const call = (): void => {
          this.#emit(`$lw_apply(${fn}, ${obj}, [`);
          link.arguments.forEach((a: AnyNode, k: number) => {
            if (k) this.#emit(', ');
            if (a.type === 'SpreadElement') this.#emit('...');
            this.#expression(a.type === 'SpreadElement' ? a.argument : a);
          });
          this.#emit('])');
        };
        this.#awaitCall(call);
      }, links, i + 1);
      this.#emit(')');
      return;
    }
    const t = this.#temp();
    this.#emit(`((${t} = `);
    this.#chainPlain(emitHead, links, from, i);
    this.#emit(`) == null ? undefined : `);
    this.#chainFrom(() => {
      if (link.type === 'MemberExpression') {
        this.#emit(t);
        this.#memberAccess(link);
      } else {
        this.#awaitCall(() => {
          this.#emit(t);
          this.#arguments(link.arguments);
        });
      }
    }, links, i + 1);
    this.#emit(')');
  }

  /** Emits head followed by links[from, to) without optional tests; calls are awaited. */
  #chainPlain(emitHead: () => void, links: AnyNode[], from: number, to: number): void {
    if (to === from) {
      emitHead();
      return;
    }
    const link = links[to - 1];
    if (link.type === 'MemberExpression') {
      this.#chainPlain(emitHead, links, from, to - 1);
      this.#memberAccess(link);
      return;
    }
    const emitCall = (): void => {
      this.#chainPlain(emitHead, links, from, to - 1);
      this.#arguments(link.arguments);
    };
    if (this.#a.syncCalls.has(link)) emitCall();
    else this.#awaitCall(emitCall);
  }

  // ---- assignment --------------------------------------------------------------------------

  #assignment(node: AnyNode): void {
    const { left, operator } = node;
    const logical = operator === '&&=' || operator === '||=' || operator === '??=';
    if (left.type !== 'MemberExpression') {
      if (left.type === 'Identifier' && operator === '+=') {
        this.#emit(`(${left.name} = $lw_cs(${left.name} + (`);
        this.#expression(node.right);
        this.#emit(')))');
        return;
      }
      this.#emit('(');
      this.#pattern(left);
      this.#emit(` ${operator} `);
      this.#expression(node.right);
      this.#emit(')');
      return;
    }
    const isLength = !left.computed && left.property.name === 'length';
    if (operator === '=' && !left.computed && !isLength) {
      this.#emit('(');
      this.#operand(left.object);
      this.#memberAccess(left);
      this.#emit(' = ');
      this.#expression(node.right);
      this.#emit(')');
      return;
    }
    if (operator === '=') {
      this.#emit('$lw_set(');
      this.#expression(left.object);
      this.#emit(', ');
      if (left.computed) this.#expression(left.property);
      else this.#emit(JSON.stringify(left.property.name));
      this.#emit(', ');
      this.#expression(node.right);
      this.#emit(')');
      return;
    }
    const o = this.#temp();
    const k = this.#temp();
    this.#emit(`(${o} = `);
    this.#expression(left.object);
    this.#emit(`, ${k} = `);
    if (left.computed) this.#key(left.property);
    else this.#emit(JSON.stringify(left.property.name));
    if (logical) {
      this.#emit(`, ${o}[${k}] ${operator.slice(0, 2)} $lw_set(${o}, ${k}, `);
      this.#expression(node.right);
      this.#emit('))');
      return;
    }
    const op = operator.slice(0, -1);
    this.#emit(`, $lw_set(${o}, ${k}, ${op === '+' ? '$lw_cs(' : '('}${o}[${k}] ${op} (`);
    this.#expression(node.right);
    this.#emit('))))');
  }

  #update(node: AnyNode): void {
    const arg = node.argument;
    const simple = arg.type === 'Identifier' || (!arg.computed && arg.property.name !== 'length');
    if (simple) {
      this.#emit('(');
      if (node.prefix) this.#emit(node.operator);
      if (arg.type === 'Identifier') this.#emit(arg.name);
      else {
        this.#operand(arg.object);
        this.#memberAccess(arg);
      }
      if (!node.prefix) this.#emit(node.operator);
      this.#emit(')');
      return;
    }
    const o = this.#temp();
    const k = this.#temp();
    const v = this.#temp();
    this.#emit(`(${o} = `);
    this.#expression(arg.object);
    this.#emit(`, ${k} = `);
    if (arg.computed) this.#key(arg.property);
    else this.#emit(JSON.stringify(arg.property.name));
    this.#emit(`, ${v} = ${o}[${k}], `);
    if (node.prefix) {
      this.#emit(`$lw_set(${o}, ${k}, ${node.operator}${v}))`);
    } else {
      const w = this.#temp();
      this.#emit(`${w} = ${v}${node.operator}, $lw_set(${o}, ${k}, ${v}), ${w})`);
    }
  }
}
