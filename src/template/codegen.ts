/**
 * The code generator: one parsed file → JavaScript render functions, built once with
 * `new Function` at load time.
 *
 * Every list of nodes (the file, a section body, a block) becomes one function
 * `(S, c, ind, at)`: `S` the render state, `c` the current context value, `ind` the indentation
 * of a standalone partial, `at` the resume point. The function appends to `S.s` and returns
 * undefined, unless it meets a Promise: then it returns a Promise that waits for it and calls the
 * same function again with `at` set to the next node (a `switch` with fall-through cases), so
 * a render stays synchronous exactly as long as its values are.
 *
 * Names are looked up on `c` directly when possible (the fast path), else through the context
 * stack (`look`), else — in views — through the file's imports, data files and page variables.
 */
import type { Expr, Node, PathExpr, TextNode } from './ast.js';
import * as R from './runtime.js';
import type { Body, Link, Pos } from './runtime.js';

/** Where a root name comes from when no context frame has it (views). */
export type Fallback =
  | { kind: 'import'; key: string; module: string; name: string }
  | { kind: 'data'; value: unknown }
  | { kind: 'page' };

export interface GenScope {
  /** Views (Laneway rules) or the plain Mustache API. */
  view: boolean;
  file: string;
  source: string;
  /** Views: where a root name not found on the stack comes from. */
  fallback(name: string): Fallback;
  /** Views: the link of a partial or SVG name declared by the file (null when unknown). */
  partial(name: string): Link | null;
  /** Views: every partial and SVG name of the file, for `{{>*name}}`. */
  table(): Record<string, Link>;
  /** Views: a choose-string map. */
  choice(name: string): ReadonlyMap<string, string> | undefined;
}

/** A file's `const` and `default` lines. */
export interface Declaration {
  kind: 'const' | 'default';
  name: string;
  expr: Expr;
  at: number;
}

export interface UnitCode {
  /** Renders the file. */
  top: Body;
  /** Runs the file's `const`/`default` lines now, unless they already ran in this render. */
  declare(S: R.RenderState): void | Promise<void>;
  /** Evaluates extra expressions (Render-If, Cache-Control-Seconds variable) in the file's scope. */
  exprs: Array<(S: R.RenderState, c: unknown) => unknown>;
  /** The generated source, for debugging. */
  source: string;
}

const J = (v: unknown): string => JSON.stringify(v);
const NO_SEGS: readonly string[] = [];
/** Runtime helpers the generated code uses, bound to local constants (faster than `R.x`). */
const HELPERS = [
  'aliasEdge', 'block', 'call0', 'choose', 'current', 'declare', 'dynamicPartial', 'edge', 'escapeHtml', 'follow',
  'followPlain', 'imported', 'inverted', 'invoke', 'isThenable', 'lambdaSection', 'lambdaValue', 'look', 'lookPlain',
  'MISS', 'out', 'outAttributes', 'outJson', 'outPlain', 'pageValue', 'parent', 'partial', 'section', 'sectionPlain', 'setVar', 'str', 'test',
];

interface Fn {
  name: string;
  lines: string[];
  resumes: number;
  temps: number;
}

class Generator {
  readonly fns: string[] = [];
  readonly consts: unknown[] = [];
  private constIndex = new Map<unknown, number>();
  private count = 0;

  constructor(private readonly scope: GenScope) {}

  /** A constant made visible to the generated code; returns its name. */
  k(value: unknown): string {
    let i = this.constIndex.get(value);
    if (i === undefined) {
      i = this.consts.length;
      this.consts.push(value);
      this.constIndex.set(value, i);
    }
    return `k${i}`;
  }

  pos(offset: number): string {
    const p: Pos = { file: this.scope.file, source: this.scope.source, offset };
    const i = this.consts.length;
    this.consts.push(p);
    return `k${i}`;
  }

  newFn(): Fn {
    return { name: `f${this.count++}`, lines: [], resumes: 0, temps: 0 };
  }

  finish(fn: Fn, params = 'S, c, ind, at'): string {
    const temps: string[] = ['v', 'r', 'f'];
    for (let i = 0; i < fn.temps; i++) temps.push(`t${i}`, `s${i}`);
    let body: string;
    if (fn.resumes > 0) body = `switch (at) {\ncase 0:\n${fn.lines.join('\n')}\n}`;
    else body = fn.lines.join('\n');
    this.fns.push(`function ${fn.name}(${params}) {\nlet ${temps.join(', ')};\n${body}\n}`);
    return fn.name;
  }

  /**
   * Emits `call` (an expression that may return a Promise): when it does, the function suspends
   * and resumes at the next case. `guard` prefixes a condition (`if (x) … else `).
   */
  resume(fn: Fn, call: string, guard = ''): void {
    const k = ++fn.resumes;
    fn.lines.push(`${guard}if ((r = ${call}) !== undefined) return r.then(() => ${fn.name}(S, c, ind, ${k}));`, `case ${k}:`);
  }

  /** Compiles a list of nodes into a function; returns its name. */
  body(nodes: readonly Node[], lead = false): string {
    const fn = this.newFn();
    if (lead) fn.lines.push('if (ind !== "") S.s += ind;');
    for (const node of nodes) this.node(fn, node);
    return this.finish(fn);
  }

  text(node: TextNode): string {
    const { text, marks, bol } = node;
    if (marks.length === 0 && !bol) return J(text);
    const parts: string[] = [];
    if (bol) parts.push('ind');
    let last = 0;
    for (const m of marks) {
      parts.push(J(text.slice(last, m)), 'ind');
      last = m;
    }
    parts.push(J(text.slice(last)));
    return `(ind === "" ? ${J(text)} : ${parts.join(' + ')})`;
  }

  /** The indentation a standalone partial or block is rendered with. */
  indent(indent: string | null): string {
    if (indent === null) return '""';
    return indent === '' ? 'ind' : `ind + ${J(indent)}`;
  }

  /**
   * Emits statements that leave the value of `expr` in `target`. Straight-line code: Promises
   * flow on as values, to be awaited by whatever consumes them.
   */
  value(fn: Fn, expr: Expr, target: string): string {
    const L = fn.lines;
    if (expr.kind === 'literal') {
      L.push(`${target} = ${J(expr.value)};`);
      return 'undefined';
    }
    const self = this.root(fn, expr, target);
    const view = this.scope.view;
    if (expr.args.length > 0 || expr.named.length > 0) {
      const args: string[] = [];
      for (const a of [...expr.args, ...expr.named.map((n) => n.value)]) {
        const t = `t${fn.temps++}`;
        this.value(fn, a, t);
        args.push(t);
      }
      const keys = expr.named.length > 0 ? this.k(expr.named.map((n) => n.key)) : 'null';
      L.push(`${target} = invoke(${target}, ${self}, ${this.k(expr.segs)}, [${args.join(', ')}], ${keys}, ${J(expr.text)});`);
      return 'undefined';
    }
    if (expr.segs.length > 0) {
      if (view) {
        L.push(`${target} = follow(${target}, ${self}, ${this.k(expr.segs)}, 0, ${expr.segs.length}, true);`);
        return 'undefined';
      }
      L.push(`${target} = followPlain(S, ${target}, ${self}, ${this.k(expr.segs)}); ${self} = S.f;`);
      return self;
    }
    if (view) {
      L.push(
        `if (typeof ${target} === "function") ${target} = call0(${target}, ${self}); else if (isThenable(${target})) ${target} = follow(${target}, ${self}, ${this.k(NO_SEGS)}, 0, 0, true);`,
      );
    }
    return self;
  }

  /** Emits the lookup of a path's first segment into `target`; returns the name holding its `this`. */
  private root(fn: Fn, expr: PathExpr, target: string): string {
    const L = fn.lines;
    const view = this.scope.view;
    const name = expr.root;
    const self = target === 'v' ? 'f' : `s${fn.temps++}`;
    if (name === 'this') {
      L.push(view ? `${target} = current(c); ${self} = undefined;` : `${target} = c; ${self} = undefined;`);
      return self;
    }
    if (view && (name === '$first' || name === '$last')) {
      L.push(`${target} = edge(S, ${name === '$last'}); ${self} = undefined;`);
      return self;
    }
    const lookup = (): string => {
      if (!view) return `${target} = lookPlain(S, ${J(name)}); ${self} = S.f;`;
      const fb = this.scope.fallback(name);
      let miss: string;
      if (fb.kind === 'import') miss = `imported(S, ${J(fb.key)}, ${J(fb.module)}, ${J(fb.name)})`;
      else if (fb.kind === 'data') miss = `(S.f = undefined, ${this.k(fb.value)})`;
      else miss = `pageValue(S, ${J(name)})`;
      return `${target} = look(S, ${J(name)}); if (${target} === MISS) ${target} = ${miss}; ${self} = S.f;`;
    };
    const edge = view ? /^(.+)\$(first|last)$/.exec(name) : null;
    if (edge) {
      L.push(`${target} = aliasEdge(S, ${J(edge[1])}, ${edge[2] === 'last'}); ${self} = undefined;`);
      L.push(`if (${target} === MISS) { ${lookup()} }`);
      return self;
    }
    if (R.BUILTIN_NAMES.has(name)) {
      L.push(lookup());
    } else {
      L.push(`if (c !== null && typeof c === "object" && (${target} = c[${J(name)}]) !== undefined) ${self} = c; else { ${lookup()} }`);
    }
    return self;
  }

  node(fn: Fn, node: Node): void {
    const L = fn.lines;
    const view = this.scope.view;
    if (node.type === 'text') {
      L.push(`S.s += ${this.text(node)};`);
      return;
    }
    if (node.bol) L.push('S.s += ind;');
    switch (node.type) {
      case 'var': {
        if (view) L.push(`S.p = ${this.pos(node.start)};`);
        this.value(fn, node.expr, 'v');
        if (view && node.attributes) {
          this.resume(fn, 'outAttributes(S, v)');
        } else if (view && node.escape !== undefined) {
          this.resume(fn, `outJson(S, v, ${node.escape === 'json-string'})`);
        } else if (view) {
          this.resume(fn, `out(S, v, ${node.raw})`, 'if (typeof v === "string") S.s += escapeHtml(v); else if (typeof v === "number") S.s += v; else ');
        } else {
          L.push('if (typeof v === "function") v = lambdaValue(S, v, f, c);');
          if (node.raw) L.push('S.s += typeof v === "string" ? v : str(v);');
          else L.push('if (typeof v === "string" && !S.text) S.s += escapeHtml(v); else outPlain(S, v, false);');
        }
        return;
      }
      case 'section': {
        const body = this.body(node.body);
        if (!view) {
          this.value(fn, node.expr!, 'v');
          if (node.inverted) L.push(`if (typeof v !== "function" && !isThenable(v)) inverted(S, v, ${body}, ind, c);`);
          else {
            L.push(
              `if (typeof v === "function") lambdaSection(S, v, f, c, ind, ${body}, ${J(node.rawBody)}, ${this.k(node.delims)}); else sectionPlain(S, v, ${body}, ind);`,
            );
          }
          return;
        }
        L.push(`S.p = ${this.pos(node.start)};`);
        if (node.test) {
          const temps: string[] = [];
          for (const e of node.test.exprs) {
            const t = `t${fn.temps++}`;
            this.value(fn, e, t);
            temps.push(t);
          }
          this.resume(fn, `test(S, [${temps.join(', ')}], ${node.test.op === 'all'}, ${node.inverted}, ${body}, ind, c)`);
        } else {
          this.value(fn, node.expr!, 'v');
          if (node.inverted) this.resume(fn, `inverted(S, v, ${body}, ind, c)`);
          else this.resume(fn, `section(S, v, ${body}, ind, ${J(node.alias ?? null)}, ${node.by ?? 0})`);
        }
        return;
      }
      case 'partial':
      case 'parent': {
        const ind = this.indent(node.indent);
        let own = 'null';
        if (node.type === 'parent') {
          const entries = node.blocks.map((b) => `[${J(b.name)}]: ${this.body(b.body, b.lead)}`);
          own = `Object.assign(Object.create(null), {${entries.join(', ')}})`;
          const name = `b${this.count++}`;
          this.fns.push(`const ${name} = ${own};`);
          own = name;
        }
        if (!view) {
          if (node.dynamic) {
            this.value(fn, node.dynamic, 'v');
            L.push(`v = str(v);`);
          } else {
            L.push(`v = ${J(node.name)};`);
          }
          L.push(node.type === 'parent' ? `parent(S, c, ${ind}, S.partial(v), ${own});` : `partial(S, c, ${ind}, S.partial(v));`);
          return;
        }
        L.push(`S.p = ${this.pos(node.start)};`);
        if (node.dynamic) {
          this.value(fn, node.dynamic, 'v');
          this.resume(fn, `dynamicPartial(S, c, ${ind}, v, ${this.k(this.scope.table())}, ${node.type === 'parent' ? own : 'null'})`);
          return;
        }
        const link = this.scope.partial(node.name);
        if (link === null) return;
        if (link.svg !== undefined) {
          // A standalone tag's line (break included) was cut: an SVG keeps its own line.
          L.push(`S.s += ${node.indent === null ? J(link.svg) : `${ind} + ${J(link.svg + '\n')}`};`);
          return;
        }
        const l = this.k(link);
        this.resume(fn, node.type === 'parent' ? `parent(S, c, ${ind}, ${l}.fn, ${own})` : `partial(S, c, ${ind}, ${l}.fn)`);
        return;
      }
      case 'block': {
        const dflt = this.body(node.body, node.lead);
        // A block that does not stand alone: its default content is part of this file, so its
        // lines take this file's indentation; an override comes from another file, unindented.
        const args = node.indent === null ? `"", ${J(node.name)}, ${dflt}, ind` : `${this.indent(node.indent)}, ${J(node.name)}, ${dflt}`;
        if (view) {
          this.resume(fn, `block(S, c, ${args})`);
        } else {
          L.push(`block(S, c, ${args});`);
        }
        return;
      }
      case 'pragma': {
        switch (node.name) {
          case 'year':
            L.push('S.s += S.year;');
            return;
          case 'lorem-title':
            L.push(`S.s += ${J(LOREM_TITLE)};`);
            return;
          case 'lorem-paragraph':
            L.push(`S.s += ${J(LOREM_PARAGRAPH)};`);
            return;
          case 'show':
            L.push(`S.p = ${this.pos(node.start)};`);
            this.value(fn, node.expr!, 'v');
            this.resume(fn, 'out(S, v, true)');
            return;
          case 'choose-string': {
            const map = this.scope.choice(node.map!);
            if (map === undefined) return;
            L.push(`S.p = ${this.pos(node.start)};`);
            this.value(fn, node.expr!, 'v');
            L.push(`v = choose(v, ${this.k(map)});`);
            if (node.escape !== undefined) this.resume(fn, `outJson(S, v, ${node.escape === 'json-string'})`);
            else this.resume(fn, 'out(S, v, false)', 'if (typeof v === "string") S.s += escapeHtml(v); else ');
            return;
          }
        }
      }
    }
  }

  /** The function running a file's `const`/`default` lines. */
  declarations(decls: readonly Declaration[]): string {
    const fn = this.newFn();
    const L = fn.lines;
    for (const d of decls) {
      const lines = [`S.p = ${this.pos(d.at)};`];
      const inner = { ...fn, lines };
      this.value(inner, d.expr, 'v');
      fn.temps = inner.temps;
      if (d.kind === 'default') {
        L.push(`r = undefined; if (!S.vars.has(${J(d.name)})) { ${lines.join(' ')} r = setVar(S, ${J(d.name)}, v); }`);
        const k = ++fn.resumes;
        L.push(`if (r !== undefined) return r.then(() => ${fn.name}(S, c, ind, ${k}));`, `case ${k}:`);
      } else {
        L.push(...lines);
        this.resume(fn, `setVar(S, ${J(d.name)}, v)`);
      }
    }
    return this.finish(fn);
  }

  /** A function returning the value of `expr` in the file's scope. */
  expression(expr: Expr): string {
    const fn = this.newFn();
    this.value(fn, expr, 'v');
    fn.lines.push('return v;');
    return this.finish(fn, 'S, c');
  }
}

export const LOREM_TITLE = 'Lorem ipsum dolor sit amet';
export const LOREM_PARAGRAPH =
  'Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud exercitation ullamco laboris nisi ut aliquip ex ea commodo consequat.';

/** Generates and instantiates the render code of one file. */
export function generate(nodes: readonly Node[], scope: GenScope, decls: readonly Declaration[] = [], exprs: readonly Expr[] = []): UnitCode {
  const g = new Generator(scope);
  let top = g.body(nodes);
  let decl = 'undefined';
  const marker = { file: scope.file };
  if (decls.length > 0) {
    // The file's declarations run once per render, when the file is first entered.
    decl = g.declarations(decls);
    const m = g.k(marker);
    const inner = top;
    top = `fD${inner}`;
    g.fns.push(
      `function ${top}(S, c, ind, at) {\nif (!S.entered.has(${m})) {\nS.entered.add(${m});\nconst r = declare(S, ${decl});\nif (r !== undefined) return r.then(() => ${inner}(S, c, ind, 0));\n}\nreturn ${inner}(S, c, ind, 0);\n}`,
    );
  }
  const exprNames = exprs.map((e) => g.expression(e));
  const constLines = g.consts.map((_, i) => `const k${i} = K[${i}];`).join('\n');
  const helpers = `const { ${HELPERS.join(', ')} } = R;`;
  const source = `"use strict";\n${helpers}\n${constLines}\n${g.fns.join('\n')}\nreturn { top: ${top}, decl: ${decl}, exprs: [${exprNames.join(', ')}] };`;
  const factory = new Function('R', 'K', source) as (r: typeof R, k: unknown[]) => { top: Body; decl: Body | undefined; exprs: UnitCode['exprs'] };
  const made = factory(R, g.consts);
  const declFn = made.decl;
  return {
    top: made.top,
    exprs: made.exprs,
    declare(S: R.RenderState): void | Promise<void> {
      if (declFn === undefined || S.entered.has(marker)) return;
      S.entered.add(marker);
      return R.declare(S, declFn);
    },
    source,
  };
}
