/**
 * The plain Mustache API (`laneway/template`): the official specification, inheritance and
 * dynamic names included, with no Laneway rules. This is also what the spec suite runs.
 */
import { locate } from '../diag/index.js';
import { generate } from './codegen.js';
import { parseTemplate } from './parse.js';
import { isStackOverflow, RenderError, RenderState, type Body } from './runtime.js';
import { DEFAULT_DELIMS } from './tokenize.js';

/** A malformed template. The message ends with `(line:column)`. */
export class TemplateSyntaxError extends Error {
  readonly line: number;
  readonly column: number;
  readonly offset: number;
  constructor(message: string, source: string, offset: number) {
    const { line, column } = locate(source, offset);
    super(`${message} (${line}:${column})`);
    this.name = 'TemplateSyntaxError';
    this.line = line;
    this.column = column;
    this.offset = offset;
  }
}

export interface CompileOptions {
  /** Partials by name, as template source. */
  partials?: Record<string, string>;
  /** Plain text (an e-mail body, a subject): values print as they are, never HTML-escaped. */
  text?: boolean;
}

export interface Template {
  /** Renders with `data` as the context; `partials` add to (and override) the compile-time ones. */
  render(data: unknown, partials?: Record<string, string>): string;
}

// Compiled bodies by delimiters and source: partials and lambda results compile once.
const CACHE_LIMIT = 1000;
const cache = new Map<string, Body>();

function compileBody(source: string, delims: [string, string]): Body {
  const key = `${delims[0]} ${delims[1]}\n${source}`;
  const hit = cache.get(key);
  if (hit !== undefined) return hit;
  const parsed = parseTemplate(source, {
    from: 0,
    view: false,
    delims,
    report: (_code, message, offset) => {
      throw new TemplateSyntaxError(message, source, offset);
    },
  });
  const code = generate(parsed.nodes, {
    view: false,
    file: '',
    source,
    fallback: () => ({ kind: 'page' }),
    partial: () => null,
    table: () => ({}),
    choice: () => undefined,
  });
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(key, code.top);
  return code.top;
}

/**
 * Compiles a Mustache template. Throws a TemplateSyntaxError for a malformed one (unclosed or
 * mismatched sections, unclosed tags, bad delimiters). Partials are compiled on first use.
 */
export function compile(source: string, options: CompileOptions = {}): Template {
  const top = compileBody(source, DEFAULT_DELIMS);
  const base = options.partials ?? {};
  return {
    render(data: unknown, partials?: Record<string, string>): string {
      const all = partials === undefined ? base : { ...base, ...partials };
      const S = new RenderState([data]);
      S.sync = true;
      S.text = options.text === true;
      S.compile = compileBody;
      S.partial = (name: string): Body | undefined => {
        const src = Object.hasOwn(all, name) ? all[name] : undefined;
        return typeof src === 'string' ? compileBody(src, DEFAULT_DELIMS) : undefined;
      };
      try {
        top(S, data, '', 0);
      } catch (e) {
        if (isStackOverflow(e)) throw new RenderError('sections and partials nest too deeply: the call stack ran out (a partial that includes itself?)');
        throw e;
      }
      return S.s;
    },
  };
}
