/**
 * Reads the text of a `{{% … }}` pragma into a `Pragma` (docs/views.md "Pragmas"). Only syntax is
 * checked here; files and names are resolved by view.ts.
 */
import { normalizeName } from '../shared/index.js';
import type { Expr, PathExpr } from './ast.js';
import { parseExpression, parsePath } from './expression.js';
import type { Reporter } from './tokenize.js';

export type Pragma =
  | { kind: 'partial' | 'svg'; path: string; alias?: string; at: number }
  | { kind: 'data'; format: 'yaml' | 'json'; path: string; name: string; at: number }
  | { kind: 'import'; module: string; names: Array<{ name: string; at: number }>; namespace?: string; at: number }
  | { kind: 'const' | 'default'; name: string; expr: Expr; at: number }
  | { kind: 'render-if'; expr: Expr; at: number }
  | { kind: 'cache'; seconds?: number; variable?: PathExpr; at: number }
  | { kind: 'choice'; name: string; map: Map<string, string>; at: number }
  | { kind: 'strategy'; name: string; at: number }
  | { kind: 'year'; at: number }
  | { kind: 'show'; expr: Expr; at: number }
  | { kind: 'choose-string'; map: string; mapAt: number; expr: Expr; at: number }
  | { kind: 'lorem'; which: 'lorem-title' | 'lorem-paragraph'; at: number };

const NAME = /^[^\s.'"=(){}[\]<>,;|!?*+\\^`~#@&%/]+$/;

/** The pragma names, lower-cased, with the usage shown in error messages. */
const USAGE: Record<string, string> = {
  partial: '{{% partial /_dir/ }}, {{% partial /_dir/ as prefix }} or {{% partial /_dir/name as alias }}',
  svg: '{{% svg /_icons/ as icon }} or {{% svg /_icons/name as alias }}',
  yaml: '{{% yaml /_data/file as name }}',
  json: '{{% json /_data/file as name }}',
  import: "{{% import {A, B} from '📤' }} or {{% import * as P from '🎨' }}",
  const: "{{% const name = path }} or {{% const name = 'text' }}",
  default: "{{% default name = path }} or {{% default name = 'text' }}",
  year: '{{%year}}',
  'render-if': '{{% Render-If name }}',
  'cache-control-seconds': '{{% Cache-Control-Seconds 60 }} or {{% Cache-Control-Seconds name }}',
  'choose-string-map': '{{% choose-string-map name in=out … *=out-* }}',
  'choose-string-json': '{{% choose-string-json name {"in": "out", "*": "out *"} }}',
  'choose-string': '{{% choose-string name value }}',
  show: '{{% show value }}',
  'lorem-title': '{{% lorem-title }}',
  'lorem-paragraph': '{{% lorem-paragraph }}',
  'network-first': '{{% Network-First }}',
  'stale-while-revalidate': '{{% Stale-While-Revalidate }}',
};

/** Parses pragma text (after `%`, trimmed) found at `at`. Returns null after reporting a problem. */
export function parsePragma(text: string, at: number, report: Reporter): Pragma | null {
  const m = /^(\S*)\s*([\s\S]*)$/.exec(text)!;
  const word = m[1]!;
  const rest = m[2]!;
  const restAt = at + text.length - rest.length;
  const key = word.toLowerCase();
  const usage = USAGE[key];
  if (usage === undefined) {
    report('LW_VIEW_UNKNOWN_PRAGMA', `unknown pragma "${word}"; known pragmas: ${Object.keys(USAGE).join(', ')}`, at);
    return null;
  }
  const bad = (detail: string, offset = at): null => {
    report('LW_VIEW_PRAGMA_SYNTAX', `malformed ${word} pragma: ${detail}; expected ${usage}`, offset);
    return null;
  };
  const words = rest === '' ? [] : rest.split(/\s+/);
  switch (key) {
    case 'partial':
    case 'svg': {
      if (words.length === 1 || (words.length === 3 && words[1] === 'as')) {
        if (words.length === 3 && !NAME.test(words[2]!)) return bad(`"${words[2]}" is not a plain name`, restAt);
        const p: Pragma = { kind: key, path: words[0]!, at: restAt };
        if (words.length === 3) p.alias = words[2]!;
        return p;
      }
      return bad('expected a path, optionally followed by "as name"', restAt);
    }
    case 'yaml':
    case 'json': {
      if (words.length === 3 && words[1] === 'as' && NAME.test(words[2]!)) {
        return { kind: 'data', format: key, path: words[0]!, name: words[2]!, at: restAt };
      }
      return bad('expected a path followed by "as name"', restAt);
    }
    case 'import': {
      const ns = /^\*\s+as\s+(\S+)\s+from\s+(['"])(.*)\2$/s.exec(rest);
      if (ns) {
        if (!NAME.test(ns[1]!)) return bad(`"${ns[1]}" is not a plain name`, restAt);
        return { kind: 'import', module: normalizeName(ns[3]!), names: [], namespace: normalizeName(ns[1]!), at: restAt };
      }
      const named = /^\{([^}]*)\}\s*from\s+(['"])(.*)\2$/s.exec(rest);
      if (!named) return bad('expected {A, B} from \'module\'', restAt);
      const names: Array<{ name: string; at: number }> = [];
      let offset = restAt + 1;
      for (const part of named[1]!.split(',')) {
        const name = part.trim();
        const nameAt = offset + (part.length - part.trimStart().length);
        offset += part.length + 1;
        if (name === '') continue;
        const words = name.split(/\s+/);
        if (words.length === 2 && words.every((w) => NAME.test(w))) {
          // The platform read a two-word entry as naming nothing (the console has one,
          // `ProjectDeployment deployment`, whose page uses neither word from this module): skipped.
          report('LW_VIEW_IMPORT_TWO_WORDS', `import entry "${name}" is two words; it imports nothing, as on the platform: write one exported name (${words[0]}), or remove the entry`, nameAt);
          continue;
        }
        if (!NAME.test(name)) {
          report('LW_VIEW_PRAGMA_SYNTAX', `malformed import entry "${name}": each entry is one exported name; expected ${usage}`, nameAt);
          continue;
        }
        names.push({ name: normalizeName(name), at: nameAt });
      }
      if (names.length === 0) return bad('no names between { }', restAt);
      return { kind: 'import', module: normalizeName(named[3]!), names, at: restAt };
    }
    case 'const':
    case 'default': {
      const d = /^(\S+?)\s*=\s*([\s\S]+)$/.exec(rest);
      if (!d || !NAME.test(d[1]!)) return bad('expected "name = value"', restAt);
      const exprAt = restAt + rest.length - d[2]!.length;
      const expr = parseExpression(d[2]!, exprAt, report);
      if (!expr) return null;
      return { kind: key, name: d[1]!, expr, at: restAt };
    }
    case 'year':
    case 'lorem-title':
    case 'lorem-paragraph':
    case 'network-first':
    case 'stale-while-revalidate': {
      if (rest !== '') return bad(`unexpected "${rest}"`, restAt);
      if (key === 'year') return { kind: 'year', at };
      if (key === 'lorem-title' || key === 'lorem-paragraph') return { kind: 'lorem', which: key, at };
      return { kind: 'strategy', name: word, at };
    }
    case 'render-if':
    case 'show': {
      if (rest === '') return bad('a value is missing', at);
      const expr = parseExpression(rest, restAt, report);
      if (!expr) return null;
      return key === 'show' ? { kind: 'show', expr, at: restAt } : { kind: 'render-if', expr, at: restAt };
    }
    case 'cache-control-seconds': {
      if (words.length !== 1) return bad('expected one number or name', restAt);
      if (/^\d+$/.test(words[0]!)) return { kind: 'cache', seconds: Number(words[0]), at: restAt };
      const variable = parsePath(words[0]!, restAt, report);
      if (!variable) return null;
      return { kind: 'cache', variable, at: restAt };
    }
    case 'choose-string-map': {
      if (words.length < 2 || !NAME.test(words[0]!)) return bad('expected a map name and in=out pairs', restAt);
      const map = new Map<string, string>();
      let offset = restAt + words[0]!.length;
      for (const pair of words.slice(1)) {
        const pairAt = rest.indexOf(pair, offset - restAt) + restAt;
        offset = pairAt + pair.length;
        const eq = pair.indexOf('=');
        if (eq <= 0) return bad(`"${pair}" is not an in=out pair`, pairAt);
        map.set(pair.slice(0, eq), pair.slice(eq + 1));
      }
      return { kind: 'choice', name: words[0]!, map, at: restAt };
    }
    case 'choose-string-json': {
      const j = /^(\S+)\s+([\s\S]+)$/.exec(rest);
      if (!j || !NAME.test(j[1]!)) return bad('expected a map name and a JSON object', restAt);
      const jsonAt = restAt + rest.length - j[2]!.length;
      let value: unknown;
      try {
        value = JSON.parse(j[2]!);
      } catch (e) {
        return bad(`the JSON does not parse (${(e as Error).message})`, jsonAt);
      }
      if (value === null || typeof value !== 'object' || Array.isArray(value)) return bad('the JSON must be an object', jsonAt);
      const map = new Map<string, string>();
      for (const [k, v] of Object.entries(value)) {
        if (typeof v !== 'string') return bad(`the value of "${k}" is not a string`, jsonAt);
        map.set(k, v);
      }
      return { kind: 'choice', name: j[1]!, map, at: restAt };
    }
    case 'choose-string': {
      const c = /^(\S+)\s+([\s\S]+)$/.exec(rest);
      if (!c || !NAME.test(c[1]!)) return bad('expected a map name and a value', restAt);
      const exprAt = restAt + rest.length - c[2]!.length;
      const expr = parseExpression(c[2]!, exprAt, report);
      if (!expr) return null;
      return { kind: 'choose-string', map: c[1]!, mapAt: restAt, expr, at: restAt };
    }
  }
  return null;
}

/** Applies a choose-string map: exact key, else `*` with `*` in the output replaced by the input, else ''. */
export function chooseString(map: ReadonlyMap<string, string>, input: string): string {
  const exact = map.get(input);
  if (exact !== undefined) return exact;
  const star = map.get('*');
  return star === undefined ? '' : star.split('*').join(input);
}
