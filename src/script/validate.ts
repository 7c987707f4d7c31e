/**
 * Phase 2: validates a parsed script against the subset and resolves every name.
 *
 * The walk reports every problem (never only the first) with a message that says what to write
 * instead, and records what code generation needs: the imports and exports, which arrow functions
 * may wait (and so compile to async functions), and which calls certainly do not wait.
 *
 * A call "may wait" unless its callee is a granted global that never calls back (Math.max,
 * JSON.parse, String(x), …) or an arrow bound by `const` (or by a `let` that is never assigned
 * again) that itself never waits. Everything else — imported
 * capabilities, member calls on unknown values, callbacks — may return a Promise from the host,
 * and the enclosing arrow becomes async so the compiled code can await it.
 */
import type * as acorn from 'acorn';
import type { Code, DiagnosticList } from '../diag/index.js';
import type { ScriptKind } from './types.js';
import { cookieNameProblem } from '../shared/index.js';
import {
  FORBIDDEN_GLOBALS,
  FORBIDDEN_MEMBERS,
  GRANTED_GLOBALS,
  HOOK_MEMBERS,
  RESERVED_PREFIX,
  SYNC_GLOBAL_CALLS,
  SYNC_STATIC_CALLS,
  forbiddenMemberAdvice,
} from './names.js';

// The acorn AST is walked generically: node shapes are the ESTree ones acorn documents.
export type AnyNode = any;

export type BindingKind = 'let' | 'const' | 'param' | 'catch' | 'import';

interface Binding {
  kind: BindingKind;
  /**
   * The arrow a `const` or `let` is initialised with, for the "never waits" analysis and function
   * supplier exports. A `let` counts only while `reassigned` is unset.
   */
  arrow?: AnyNode;
  /** For `let`: the first place the name is assigned again (`f = …`, `f++`, `[f] = …`). */
  reassigned?: AnyNode;
}

class Scope {
  readonly names = new Map<string, Binding>();
  constructor(readonly parent: Scope | null) {}
  lookup(name: string): Binding | undefined {
    for (let s: Scope | null = this; s; s = s.parent) {
      const b = s.names.get(name);
      if (b) return b;
    }
    return undefined;
  }
}

/** A function body (an arrow, or the top level) and the calls made directly in it. */
export interface FunctionInfo {
  node: AnyNode | null;
  /** Calls that may wait, or that wait when the arrow they call waits. */
  calls: Array<'wait' | AnyNode>;
  async: boolean;
  /**
   * Nothing in the body changes state (no assignment, update, delete, call of a script function or
   * of a mutating helper, nested arrow): a waiting arrow that is pure also gets a synchronous
   * variant that is abandoned, and the call restarted in the waiting variant, before a call that
   * could wait (generate.ts), which is safe because nothing it did before can be seen.
   */
  pure: boolean;
}

export interface ImportInfo {
  module: string;
  name: string;
  local: string;
}

export interface ExportInfo {
  local: string;
  exported: string;
}

export interface Analysis {
  imports: ImportInfo[];
  exports: ExportInfo[];
  /** Arrow node → its info (`async` settled). */
  functions: Map<AnyNode, FunctionInfo>;
  /** Call and `new` nodes that certainly do not wait: compiled without an await. */
  syncCalls: Set<AnyNode>;
}

export interface ValidateOptions {
  file: string;
  source: string;
  kind: ScriptKind;
  diagnostics: DiagnosticList;
  checkImport?(module: string, name: string): true | string;
}

/** Granted static calls that change an object they are given (see FunctionInfo.pure). */
const MUTATING_STATIC_CALLS = new Set(['Object.assign', 'Object.freeze']);

const LOOP_MESSAGE =
  'loops are not allowed: iterate over values with forEach, map, filter, reduce, some, every or find (for a range, `Array.from({length: n}, (_, i) => …)`)';

/** Validates `program`; returns the analysis, or undefined when an error was reported. */
export function validateScript(program: acorn.Program, options: ValidateOptions): Analysis | undefined {
  return new Validator(options).run(program);
}

class Validator {
  readonly #o: ValidateOptions;
  #errors = 0;
  readonly #imports: ImportInfo[] = [];
  readonly #exports: ExportInfo[] = [];
  readonly #functions = new Map<AnyNode, FunctionInfo>();
  readonly #syncCalls = new Set<AnyNode>();
  /** Call sites whose waiting depends on an arrow bound to a name: call node → that binding. */
  readonly #arrowCalls = new Map<AnyNode, Binding>();
  /** Function supplier exports of `let` arrows, checked once every reassignment has been seen. */
  readonly #letExports: Array<{ local: string; binding: Binding }> = [];
  #fn: FunctionInfo = { node: null, calls: [], async: true, pure: false };

  constructor(options: ValidateOptions) {
    this.#o = options;
  }

  run(program: acorn.Program): Analysis | undefined {
    const top = new Scope(null);
    const body = program.body as AnyNode[];
    // Imports are hoisted: declare them first so any statement may use them.
    for (const s of body) if (s.type === 'ImportDeclaration') this.#importDeclaration(s, top);
    this.#declareList(body, top);
    let sawExport = false;
    for (const s of body) {
      if (s.type === 'ImportDeclaration') continue;
      if (s.type === 'ExportNamedDeclaration' || s.type === 'ExportDefaultDeclaration' || s.type === 'ExportAllDeclaration') {
        sawExport = true;
        this.#exportDeclaration(s, top);
        continue;
      }
      if (sawExport && this.#o.kind !== 'endpoint') {
        this.#error('LW_SCRIPT_EXPORT', s, 'a supplier ends with its `export {…}` list: move this statement above the export');
      }
      this.#statement(s, top);
    }
    for (const { local, binding } of this.#letExports) {
      if (binding.reassigned) {
        this.#error('LW_SCRIPT_EXPORT', binding.reassigned, `\`${local}\` is exported by this function supplier, so it cannot be assigned again: function suppliers export arrow functions that never change; declare it with \`const\` and keep the other value in another variable`);
      }
    }
    if (this.#o.kind !== 'endpoint' && !sawExport) {
      this.#error('LW_SCRIPT_EXPORT', program, 'a supplier must end with `export {a, b as C}` listing the values it supplies');
    }
    this.#settleAsync();
    if (this.#errors > 0) return undefined;
    return { imports: this.#imports, exports: this.#exports, functions: this.#functions, syncCalls: this.#syncCalls };
  }

  // ---- diagnostics -------------------------------------------------------------------------

  #error(code: Code, node: AnyNode, message: string): void {
    this.#errors++;
    this.#o.diagnostics.error(code, message, this.#o.file, this.#o.source, node.start ?? 0);
  }

  // ---- module level ------------------------------------------------------------------------

  #importDeclaration(node: AnyNode, scope: Scope): void {
    const module = String(node.source.value);
    if (node.attributes?.length) this.#error('LW_SCRIPT_IMPORT', node, 'import attributes (`with {…}`) are not supported: remove them');
    if (node.specifiers.length === 0) {
      this.#error('LW_SCRIPT_IMPORT', node, `\`import '${module}'\` imports nothing: name the values, \`import {a, b} from '${module}'\``);
    }
    for (const spec of node.specifiers) {
      const local = spec.local.name as string;
      let name: string;
      if (spec.type === 'ImportDefaultSpecifier') {
        this.#error('LW_SCRIPT_IMPORT', spec, `default imports are not supported: write \`import {${local}} from '${module}'\` or \`import * as ${local} from '${module}'\``);
        continue;
      } else if (spec.type === 'ImportNamespaceSpecifier') {
        name = '*';
      } else {
        name = spec.imported.type === 'Identifier' ? spec.imported.name : String(spec.imported.value);
      }
      this.#checkDeclaredName(spec.local);
      if (this.#o.checkImport) {
        const verdict = this.#o.checkImport(module, name);
        if (verdict !== true) this.#error('LW_SCRIPT_IMPORT', spec, verdict);
      }
      scope.names.set(local, { kind: 'import' });
      this.#imports.push({ module, name, local });
    }
  }

  #exportDeclaration(node: AnyNode, scope: Scope): void {
    if (this.#o.kind === 'endpoint') {
      this.#error('LW_SCRIPT_EXPORT', node, 'endpoints do not export: the response is the value of the last expression (write it as the last statement)');
      return;
    }
    if (node.type !== 'ExportNamedDeclaration' || node.declaration || node.source) {
      const what = node.source ? 're-exports (`export … from`) are not supported: import the value, then list it in `export {…}`'
        : 'suppliers export with a list at the end: declare the value, then write `export {name}`';
      this.#error('LW_SCRIPT_EXPORT', node, what);
      return;
    }
    for (const spec of node.specifiers) {
      const local = spec.local.type === 'Identifier' ? spec.local.name : String(spec.local.value);
      const exported = spec.exported.type === 'Identifier' ? spec.exported.name : String(spec.exported.value);
      const binding = scope.names.get(local);
      if (!binding) {
        this.#error('LW_SCRIPT_EXPORT', spec, `\`${local}\` is not declared in this supplier: declare it with \`const ${local} = …\` above the export`);
        continue;
      }
      if (this.#o.kind === 'function-supplier') {
        if (!((binding.kind === 'const' || binding.kind === 'let') && binding.arrow)) {
          this.#error('LW_SCRIPT_EXPORT', spec, `function suppliers export arrow functions only: declare \`const ${local} = (…) => …\` (or \`let\`, never assigned again) and export it`);
          continue;
        }
        if (binding.kind === 'let') this.#letExports.push({ local, binding });
      }
      if (this.#exports.some((e) => e.exported === exported)) {
        this.#error('LW_SCRIPT_EXPORT', spec, `\`${exported}\` is exported twice: export each name once`);
        continue;
      }
      this.#exports.push({ local, exported });
    }
  }

  // ---- declarations ------------------------------------------------------------------------

  /** Declares the `let`/`const` of one statement list before walking it (block hoisting). */
  #declareList(statements: AnyNode[], scope: Scope): void {
    for (const s of statements) {
      if (s.type !== 'VariableDeclaration' || s.kind === 'var') continue;
      for (const d of s.declarations) {
        const arrow = d.id.type === 'Identifier' && d.init?.type === 'ArrowFunctionExpression' ? d.init : undefined;
        this.#declarePattern(d.id, scope, s.kind, arrow);
      }
    }
  }

  #declarePattern(node: AnyNode, scope: Scope, kind: BindingKind, arrow?: AnyNode): void {
    for (const id of this.#patternNames(node)) {
      this.#checkDeclaredName(id);
      scope.names.set(id.name, { kind, arrow });
    }
  }

  #patternNames(node: AnyNode, out: AnyNode[] = []): AnyNode[] {
    switch (node.type) {
      case 'Identifier':
        out.push(node);
        break;
      case 'ObjectPattern':
        for (const p of node.properties) this.#patternNames(p.type === 'RestElement' ? p.argument : p.value, out);
        break;
      case 'ArrayPattern':
        for (const e of node.elements) if (e) this.#patternNames(e, out);
        break;
      case 'RestElement':
        this.#patternNames(node.argument, out);
        break;
      case 'AssignmentPattern':
        this.#patternNames(node.left, out);
        break;
    }
    return out;
  }

  #checkDeclaredName(id: AnyNode): void {
    const name = id.name as string;
    if (name.startsWith(RESERVED_PREFIX)) {
      this.#error('LW_SCRIPT_RESERVED_NAME', id, `names starting with \`${RESERVED_PREFIX}\` are reserved by Laneway: rename \`${name}\``);
    } else if (name === 'arguments' || name === 'eval') {
      this.#error('LW_SCRIPT_FORBIDDEN_GLOBAL', id, `\`${name}\` cannot be declared: choose another name`);
    }
  }

  /** Walks a declaration pattern's default values and checks its keys. */
  #pattern(node: AnyNode, scope: Scope): void {
    switch (node.type) {
      case 'Identifier':
        return;
      case 'ObjectPattern':
        for (const p of node.properties) {
          if (p.type === 'RestElement') {
            this.#pattern(p.argument, scope);
            continue;
          }
          if (p.computed) {
            this.#error('LW_SCRIPT_UNSUPPORTED', p.key, 'computed keys in destructuring are not supported: read the value with `obj[key]`');
          } else {
            this.#checkKey(p.key);
          }
          this.#pattern(p.value, scope);
        }
        return;
      case 'ArrayPattern':
        for (const e of node.elements) if (e) this.#pattern(e, scope);
        return;
      case 'RestElement':
        this.#pattern(node.argument, scope);
        return;
      case 'AssignmentPattern':
        this.#pattern(node.left, scope);
        this.#expression(node.right, scope);
        return;
      case 'MemberExpression':
        // Only in assignment patterns: a plain `obj.name` target, which defines `name` on `obj`
        // exactly like `obj.name = v` (so `[o.then] = [f]` is refused like `o.then = f`).
        if (node.computed || node.optional || (node.property.type === 'Identifier' && node.property.name === 'length')) {
          this.#error('LW_SCRIPT_UNSUPPORTED', node, 'this assignment target is not supported inside destructuring: assign it in its own statement');
          this.#expression(node, scope);
          return;
        }
        this.#assignTarget(node, scope);
        return;
      default:
        this.#error('LW_SCRIPT_UNSUPPORTED', node, 'this destructuring form is not supported: assign the values one by one');
    }
  }

  /** Checks a static key of an object literal, pattern or member. */
  #checkKey(key: AnyNode, defining = false): void {
    const name = key.type === 'Identifier' ? key.name : key.type === 'Literal' ? String(key.value) : undefined;
    if (name === undefined) return;
    if (FORBIDDEN_MEMBERS.has(name)) this.#error('LW_SCRIPT_FORBIDDEN_MEMBER', key, forbiddenMemberAdvice(name));
    else if (defining && HOOK_MEMBERS.has(name)) {
      this.#error('LW_SCRIPT_FORBIDDEN_MEMBER', key, `scripts cannot define \`${name}\`: JavaScript would call it behind the script's back; use another name, such as \`${name}Value\``);
    }
  }

  // ---- statements --------------------------------------------------------------------------

  #block(statements: AnyNode[], scope: Scope): void {
    const inner = new Scope(scope);
    this.#declareList(statements, inner);
    for (const s of statements) this.#statement(s, inner);
  }

  #statement(node: AnyNode, scope: Scope): void {
    switch (node.type) {
      case 'ExpressionStatement':
        this.#expression(node.expression, scope);
        return;
      case 'VariableDeclaration':
        if (node.kind === 'var') {
          this.#error('LW_SCRIPT_VAR', node, '`var` is not allowed: declare with `let` (or `const` when the value never changes)');
          return;
        }
        if (node.kind !== 'let' && node.kind !== 'const') {
          this.#error('LW_SCRIPT_UNSUPPORTED', node, `\`${node.kind}\` declarations are not supported: use \`let\` or \`const\``);
          return;
        }
        for (const d of node.declarations) {
          this.#pattern(d.id, scope);
          if (d.init) this.#expression(d.init, scope);
        }
        return;
      case 'BlockStatement':
        this.#block(node.body, scope);
        return;
      case 'EmptyStatement':
        return;
      case 'IfStatement':
        this.#expression(node.test, scope);
        this.#nested(node.consequent, scope);
        if (node.alternate) this.#nested(node.alternate, scope);
        return;
      case 'TryStatement': {
        this.#block(node.block.body, scope);
        if (node.handler) {
          const inner = new Scope(scope);
          if (node.handler.param) {
            this.#pattern(node.handler.param, inner);
            this.#declarePattern(node.handler.param, inner, 'catch');
          }
          this.#block(node.handler.body.body, inner);
        }
        if (node.finalizer) {
          this.#fn.pure = false; // a `return` or `throw` in it would swallow the synchronous variant's restart
          this.#block(node.finalizer.body, scope);
        }
        return;
      }
      case 'ThrowStatement':
        this.#expression(node.argument, scope);
        return;
      case 'ReturnStatement':
        if (node.argument) this.#expression(node.argument, scope);
        return;
      case 'FunctionDeclaration':
        this.#error('LW_SCRIPT_FUNCTION', node, this.#functionAdvice(node));
        return;
      case 'ClassDeclaration':
        this.#error('LW_SCRIPT_CLASS', node, 'classes are not allowed: build objects with literals `{…}` and behaviour with arrow functions');
        return;
      case 'SwitchStatement':
        this.#error('LW_SCRIPT_SWITCH', node, '`switch` is not allowed: use `if (…) {…} else if (…) {…} else {…}`, or look the value up in an object');
        return;
      case 'ForStatement':
      case 'ForInStatement':
      case 'ForOfStatement':
      case 'WhileStatement':
      case 'DoWhileStatement':
        this.#error('LW_SCRIPT_LOOP', node, LOOP_MESSAGE);
        return;
      case 'WithStatement':
        this.#error('LW_SCRIPT_WITH', node, '`with` is not allowed: name the object explicitly, `obj.x`');
        return;
      case 'LabeledStatement':
        this.#error('LW_SCRIPT_LABEL', node, 'labels are not allowed: split the code into arrow functions and `return` early');
        return;
      case 'BreakStatement':
      case 'ContinueStatement':
        this.#error('LW_SCRIPT_LABEL', node, '`break` and `continue` are not allowed: `return` from the arrow function, or use `some`/`find` to stop early');
        return;
      case 'DebuggerStatement':
        this.#error('LW_SCRIPT_UNSUPPORTED', node, '`debugger` is not allowed: remove it');
        return;
      case 'ImportDeclaration':
        return;
      default:
        this.#error('LW_SCRIPT_UNSUPPORTED', node, `\`${node.type}\` is not part of the script subset: see docs/scripting.md for what is allowed`);
    }
  }

  /** A statement in a position that may itself declare (an `if` branch): give it its own scope. */
  #nested(node: AnyNode, scope: Scope): void {
    if (node.type === 'BlockStatement') this.#block(node.body, scope);
    else this.#statement(node, new Scope(scope));
  }

  #functionAdvice(node: AnyNode): string {
    if (node.generator) return 'generators are not allowed: build an array and use map, filter or reduce';
    if (node.async) return '`async` functions are not allowed: write a plain arrow function; Laneway waits for results implicitly';
    const name = node.id?.name ?? 'name';
    return `the \`function\` keyword is not allowed: write an arrow function, \`const ${name} = (…) => { … }\``;
  }

  // ---- expressions -------------------------------------------------------------------------

  #expression(node: AnyNode, scope: Scope): void {
    switch (node.type) {
      case 'Identifier':
        this.#reference(node, scope);
        return;
      case 'Literal':
        if (node.regex) {
          this.#error('LW_SCRIPT_REGEXP', node, 'regular expressions are not allowed (they can make a request hang): use string methods such as includes, startsWith, endsWith, indexOf, split or replaceAll');
        }
        return;
      case 'TemplateLiteral':
        for (const e of node.expressions) this.#expression(e, scope);
        return;
      case 'ArrayExpression':
        for (const e of node.elements) {
          if (e) this.#expression(e.type === 'SpreadElement' ? e.argument : e, scope);
        }
        if (node.elements.includes(null)) {
          // Scripts have no arrays with holes (docs/scripting.md), so every method sees them as JavaScript does.
          this.#error('LW_SCRIPT_UNSUPPORTED', node, 'an array literal with an empty slot (`[1, , 3]`) makes a hole: write `undefined` in the slot');
        }
        return;
      case 'ObjectExpression':
        for (const p of node.properties) {
          if (p.type === 'SpreadElement') {
            this.#expression(p.argument, scope);
            continue;
          }
          if (p.kind !== 'init') {
            this.#error('LW_SCRIPT_ACCESSOR', p, `getters and setters are not allowed: store the value in a plain property, \`${this.#keyText(p.key)}: value\``);
            continue;
          }
          if (p.method) {
            this.#error('LW_SCRIPT_FUNCTION', p, `object methods are not allowed: write \`${this.#keyText(p.key)}: (…) => …\``);
            continue;
          }
          if (p.computed) this.#expression(p.key, scope);
          else this.#checkKey(p.key, true);
          this.#expression(p.value, scope);
        }
        return;
      case 'ArrowFunctionExpression':
        this.#fn.pure = false;
        this.#arrow(node, scope);
        return;
      case 'FunctionExpression':
        this.#error('LW_SCRIPT_FUNCTION', node, this.#functionAdvice(node));
        return;
      case 'ClassExpression':
        this.#error('LW_SCRIPT_CLASS', node, 'classes are not allowed: build objects with literals `{…}` and behaviour with arrow functions');
        return;
      case 'ThisExpression':
        this.#error('LW_SCRIPT_THIS', node, '`this` is not available in scripts: pass the value as a parameter');
        return;
      case 'Super':
        this.#error('LW_SCRIPT_THIS', node, '`super` is not available in scripts: there are no classes');
        return;
      case 'MetaProperty':
        this.#error('LW_SCRIPT_DYNAMIC_IMPORT', node, node.meta.name === 'import'
          ? '`import.meta` is not available: the request path comes from `import {Request} from \'🔗\'`'
          : '`new.target` is not available: scripts have no constructors');
        return;
      case 'ImportExpression':
        this.#error('LW_SCRIPT_DYNAMIC_IMPORT', node, 'dynamic `import()` is not allowed: write a static `import {…} from \'…\'` at the top');
        return;
      case 'AwaitExpression':
        this.#error('LW_SCRIPT_ASYNC', node, '`await` is not allowed: call the function directly; Laneway waits for results implicitly');
        return;
      case 'YieldExpression':
        this.#error('LW_SCRIPT_FUNCTION', node, 'generators are not allowed: build an array and use map, filter or reduce');
        return;
      case 'TaggedTemplateExpression':
        this.#error('LW_SCRIPT_TAGGED_TEMPLATE', node, 'tagged templates are not allowed: call the function with a template literal, `f(`…`)`');
        return;
      case 'UnaryExpression':
        if (node.operator === 'delete') {
          this.#fn.pure = false;
          const arg = node.argument.type === 'ChainExpression' ? undefined : node.argument;
          if (!arg || arg.type !== 'MemberExpression') {
            this.#error('LW_SCRIPT_DELETE', node, '`delete` works only on an object key: write `delete obj.key` or `delete obj[key]`');
            return;
          }
        }
        this.#expression(node.argument, scope);
        return;
      case 'UpdateExpression':
        this.#fn.pure = false;
        this.#assignTarget(node.argument, scope);
        return;
      case 'BinaryExpression':
        if (node.left.type === 'PrivateIdentifier') {
          this.#error('LW_SCRIPT_CLASS', node, 'private names belong to classes, which are not allowed');
          return;
        }
        this.#expression(node.left, scope);
        this.#expression(node.right, scope);
        return;
      case 'LogicalExpression':
        this.#expression(node.left, scope);
        this.#expression(node.right, scope);
        return;
      case 'ConditionalExpression':
        this.#expression(node.test, scope);
        this.#expression(node.consequent, scope);
        this.#expression(node.alternate, scope);
        return;
      case 'AssignmentExpression':
        this.#fn.pure = false;
        if (node.left.type === 'ObjectPattern' || node.left.type === 'ArrayPattern') {
          if (node.operator !== '=') this.#error('LW_SCRIPT_UNSUPPORTED', node, 'destructuring works only with `=`');
          this.#pattern(node.left, scope);
          for (const id of this.#patternNames(node.left)) this.#assignTarget(id, scope);
        } else {
          this.#assignTarget(node.left, scope);
        }
        this.#expression(node.right, scope);
        return;
      case 'SequenceExpression':
        for (const e of node.expressions) this.#expression(e, scope);
        return;
      case 'ChainExpression':
        // Calls in a chain are lowered with explicit tests (generate.ts #chain), not checked.
        for (let n = node.expression; n.type === 'MemberExpression' || n.type === 'CallExpression'; n = n.object ?? n.callee) {
          if (n.type === 'CallExpression') this.#fn.pure = false;
        }
        this.#expression(node.expression, scope);
        return;
      case 'ParenthesizedExpression':
        this.#expression(node.expression, scope);
        return;
      case 'MemberExpression':
        this.#member(node, scope);
        return;
      case 'CallExpression':
        this.#call(node, scope);
        return;
      case 'NewExpression':
        this.#new(node, scope);
        return;
      case 'SpreadElement':
        this.#expression(node.argument, scope);
        return;
      default:
        this.#error('LW_SCRIPT_UNSUPPORTED', node, `\`${node.type}\` is not part of the script subset: see docs/scripting.md for what is allowed`);
    }
  }

  #keyText(key: AnyNode): string {
    return key.type === 'Identifier' ? key.name : key.type === 'Literal' ? JSON.stringify(String(key.value)) : 'name';
  }

  #reference(id: AnyNode, scope: Scope): Binding | undefined {
    const name = id.name as string;
    const b = scope.lookup(name);
    if (b) return b;
    if (GRANTED_GLOBALS.has(name)) return undefined;
    if (name === 'RegExp') {
      this.#error('LW_SCRIPT_REGEXP', id, '`RegExp` is not available (regular expressions can make a request hang): use string methods such as includes, startsWith, endsWith, indexOf, split or replaceAll');
    } else if (FORBIDDEN_GLOBALS.has(name)) {
      this.#error('LW_SCRIPT_FORBIDDEN_GLOBAL', id, FORBIDDEN_GLOBALS.get(name)!);
    } else if (name.startsWith(RESERVED_PREFIX)) {
      this.#error('LW_SCRIPT_RESERVED_NAME', id, `names starting with \`${RESERVED_PREFIX}\` are reserved by Laneway: rename \`${name}\``);
    } else {
      this.#error('LW_SCRIPT_UNDECLARED', id, `\`${name}\` is not declared: declare it with \`let\`/\`const\`, import it with \`import {${name}} from '…'\`, or check the spelling (granted globals: ${[...GRANTED_GLOBALS].slice(0, 9).join(', ')})`);
    }
    return undefined;
  }

  #assignTarget(node: AnyNode, scope: Scope): void {
    if (node.type === 'Identifier') {
      const b = this.#reference(node, scope);
      if (b?.kind === 'let') b.reassigned ??= node;
      if (b && (b.kind === 'const' || b.kind === 'import')) {
        this.#error('LW_SCRIPT_ASSIGN_CONST', node, b.kind === 'import'
          ? `\`${node.name}\` is imported and cannot be assigned: copy it into a \`let\` first, \`let my${node.name[0]!.toUpperCase()}${node.name.slice(1)} = ${node.name}\``
          : `\`${node.name}\` is a constant and cannot be assigned: declare it with \`let\``);
      } else if (!b && GRANTED_GLOBALS.has(node.name)) {
        this.#error('LW_SCRIPT_ASSIGN_CONST', node, `\`${node.name}\` is a granted global and cannot be assigned: declare your own variable with \`let\``);
      }
      return;
    }
    if (node.type === 'MemberExpression' && !node.optional) {
      this.#member(node, scope, true);
      return;
    }
    this.#error('LW_SCRIPT_UNSUPPORTED', node, 'this cannot be assigned: assign a variable or an object member');
  }

  /** A member read, or with `defining` an assignment target (`o.name = v`, `[o.name] = …`). */
  #member(node: AnyNode, scope: Scope, defining = false): void {
    if (node.object.type === 'Super') {
      this.#error('LW_SCRIPT_THIS', node.object, '`super` is not available in scripts: there are no classes');
      return;
    }
    this.#expression(node.object, scope);
    if (node.property.type === 'PrivateIdentifier') {
      this.#error('LW_SCRIPT_CLASS', node.property, 'private names belong to classes, which are not allowed');
    } else if (!node.computed) {
      this.#checkKey(node.property, defining);
    } else if (node.property.type === 'Literal' || (node.property.type === 'TemplateLiteral' && node.property.expressions.length === 0)) {
      const key = node.property.type === 'Literal' ? node.property : { type: 'Literal', value: node.property.quasis[0].value.cooked };
      if (FORBIDDEN_MEMBERS.has(String(key.value))) this.#error('LW_SCRIPT_FORBIDDEN_MEMBER', node.property, forbiddenMemberAdvice(String(key.value)));
      else this.#expression(node.property, scope);
    } else {
      this.#expression(node.property, scope);
    }
    if (node.computed) this.#checkMultiline(node.object, node.property.start, '[');
  }

  /**
   * `a\n(b)` and `a\n[b]` continue the line above (JavaScript inserts no semicolon there), which is
   * almost never meant in a script whose lines end without semicolons.
   */
  #checkMultiline(before: AnyNode, limit: number, open: string): void {
    const between = this.#o.source.slice(before.end, limit);
    const i = between.indexOf(open);
    if (i > 0 && between.slice(0, i).includes('\n')) {
      const line = this.#o.source.slice(0, before.end).split('\n').length;
      this.#error('LW_SCRIPT_MULTILINE', { start: before.end + i }, `this \`${open}\` continues line ${line} (JavaScript inserts no semicolon before it): end line ${line} with \`;\` or start this line with \`;${open}\``);
    }
  }

  #call(node: AnyNode, scope: Scope): void {
    const callee = node.callee;
    this.#cookieName(node, scope);
    if (callee.type === 'Super') {
      this.#error('LW_SCRIPT_THIS', callee, '`super` is not available in scripts: there are no classes');
      return;
    }
    if (callee.type === 'Identifier' && (callee.name === 'eval' || callee.name === 'Function') && !scope.lookup(callee.name)) {
      this.#error('LW_SCRIPT_FORBIDDEN_GLOBAL', callee, FORBIDDEN_GLOBALS.get(callee.name)!);
    } else {
      this.#expression(callee, scope);
    }
    for (const a of node.arguments) this.#expression(a.type === 'SpreadElement' ? a.argument : a, scope);
    this.#checkMultiline(callee, node.arguments[0]?.start ?? node.end, '(');
    this.#classifyCall(node, scope);
  }

  /** `Cookie.name('sid')`, `new Cookie().name('_x')`: a literal name that can never be written is a build error. */
  #cookieName(node: AnyNode, scope: Scope): void {
    const callee = node.callee;
    if (callee.type !== 'MemberExpression' || callee.computed || callee.property.name !== 'name') return;
    const arg = node.arguments[0];
    if (arg?.type !== 'Literal' || typeof arg.value !== 'string') return;
    const target = callee.object;
    const isCookie =
      (target.type === 'Identifier' && target.name === 'Cookie' && !scope.lookup('Cookie')) ||
      (target.type === 'NewExpression' && target.callee.type === 'Identifier' && target.callee.name === 'Cookie' && !scope.lookup('Cookie'));
    if (!isCookie) return;
    const problem = cookieNameProblem(arg.value);
    if (problem) this.#error('LW_COOKIE_NAME', arg, problem);
  }

  #new(node: AnyNode, scope: Scope): void {
    const callee = node.callee;
    let root = callee;
    while (root.type === 'MemberExpression' && !root.computed) root = root.object;
    const binding = root.type === 'Identifier' ? scope.lookup(root.name) : undefined;
    const isDate = callee.type === 'Identifier' && (callee.name === 'Date' || callee.name === 'Cookie') && !binding;
    const isImported = binding?.kind === 'import';
    if (root.type === 'Identifier' && !binding && !GRANTED_GLOBALS.has(root.name)) {
      this.#reference(root, scope); // RegExp, Proxy, an undeclared name: say that, not "new"
      return;
    }
    if (!isDate && !isImported) {
      this.#error('LW_SCRIPT_NEW', node, '`new` works only on types Laneway provides (`Date`, `Cookie` and imported model types): write an object literal `{…}` or an array literal `[…]` instead');
      return;
    }
    this.#expression(callee, scope);
    for (const a of node.arguments) this.#expression(a.type === 'SpreadElement' ? a.argument : a, scope);
    if (isDate) this.#syncCalls.add(node);
    else {
      this.#fn.calls.push('wait');
      this.#fn.pure = false;
    }
  }

  /** Records whether a call may wait (see the file comment). */
  #classifyCall(node: AnyNode, scope: Scope): void {
    const callee = node.callee;
    if (node.optional || callee.optional) {
      this.#fn.calls.push('wait');
      this.#fn.pure = false;
      return;
    }
    if (callee.type === 'Identifier') {
      const b = scope.lookup(callee.name);
      if (!b && SYNC_GLOBAL_CALLS.has(callee.name)) {
        this.#syncCalls.add(node);
        return;
      }
      if ((b?.kind === 'const' || b?.kind === 'let') && b.arrow) {
        this.#fn.pure = false; // a script function may change state
        this.#arrowCalls.set(node, b);
        this.#fn.calls.push(node);
        return;
      }
    } else if (callee.type === 'MemberExpression' && !callee.computed && callee.object.type === 'Identifier' && !scope.lookup(callee.object.name)) {
      const name = `${callee.object.name}.${callee.property.name}`;
      if (SYNC_STATIC_CALLS.has(name)) {
        if (MUTATING_STATIC_CALLS.has(name)) this.#fn.pure = false;
        this.#syncCalls.add(node);
        return;
      }
    }
    this.#fn.calls.push('wait');
  }

  #arrow(node: AnyNode, scope: Scope): void {
    if (node.async) {
      this.#error('LW_SCRIPT_ASYNC', node, '`async` functions are not allowed: write a plain arrow function; Laneway waits for results implicitly');
      return;
    }
    const outer = this.#fn;
    const info: FunctionInfo = { node, calls: [], async: false, pure: true };
    this.#functions.set(node, info);
    this.#fn = info;
    const inner = new Scope(scope);
    for (const p of node.params) {
      this.#pattern(p, inner);
      this.#declarePattern(p, inner, 'param');
    }
    if (node.body.type === 'BlockStatement') this.#block(node.body.body, inner);
    else this.#expression(node.body, inner);
    this.#fn = outer;
  }

  /** Fixpoint: an arrow waits when one of its calls may wait or calls a waiting arrow. */
  #settleAsync(): void {
    let changed = true;
    while (changed) {
      changed = false;
      for (const info of this.#functions.values()) {
        if (info.async) continue;
        const waits = info.calls.some((c) => c === 'wait' || this.#callMayWait(c));
        if (waits) {
          info.async = true;
          changed = true;
        }
      }
    }
    for (const call of this.#arrowCalls.keys()) if (!this.#callMayWait(call)) this.#syncCalls.add(call);
  }

  /** A call of a named arrow waits when the arrow does, or when a `let` name may hold another value. */
  #callMayWait(call: AnyNode): boolean {
    const binding = this.#arrowCalls.get(call)!;
    return binding.reassigned !== undefined || this.#functions.get(binding.arrow)?.async !== false;
  }
}
