/**
 * The properties file `/🎨.scss` (docs/properties.md), read once at load.
 *
 * The file is SCSS restricted to variables: `$name: value;` declarations, comments, and doc
 * comments whose `@category` (style, messages, options) applies to the declarations after it and
 * whose `@title` names the next one. A value is a quoted string (a backslash at the end of a line
 * continues it), `true`/`false`, a number (with or without a unit), a color (`#hex`, `rgb(…)`,
 * `hsl(…)`, a named color) or `url(/absolute/path.png)`. Anything else Sass accepts (a list, a
 * function call, another variable) is kept for Sass with a warning, and views and scripts see its
 * text.
 *
 * Every string is an ICU MessageFormat message in the manifest's locale, parsed here (a malformed
 * one is an error at its line and column in the file). Views and scripts receive one frozen
 * namespace: strings are functions formatting the message with positional arguments (`{0}`, `{1}`)
 * and, after them, one object of named arguments; other values are plain values. Each property is
 * there under its name as written (`success-add`) and in camelCase (`successAdd`).
 *
 * Sass reads the same view of the file (`scss`): one declaration per property, on the line where
 * it is written, so that a Sass error still points at the right line.
 */
import { createRequire } from 'node:module';
import type * as MessageFormat from 'intl-messageformat';
import { LanewayError, locate, type Code, type DiagnosticList } from '../diag/index.js';
import type { SourceTree } from '../shared/index.js';

/** The app path of the properties file. */
export const PROPERTIES_FILE = '/🎨.scss';

export type PropertyKind = 'string' | 'boolean' | 'number' | 'color' | 'url' | 'other';
export type PropertyCategory = 'style' | 'messages' | 'options';

/** One `$name: value;` declaration. */
export interface Property {
  /** The name as written, without `$` (`success-add`). */
  name: string;
  /** The name in camelCase (`successAdd`), as scripts write it. */
  key: string;
  kind: PropertyKind;
  /**
   * string: the message text (quotes and escapes removed, ICU syntax kept); boolean: the boolean;
   * number: the number, or its text when it carries a unit (`4px`); color: as written; url: the
   * path inside `url(…)`; other: the value as written.
   */
  value: string | number | boolean;
  category: PropertyCategory;
  /** `@title` of the doc comment just before it (a label for people who configure the app). */
  title?: string;
  /** Offset of the `$` in the file. */
  at: number;
  /** string: how many positional arguments the message uses (`{0}`…`{n-1}`). */
  arity: number;
  /** string: the named arguments the message uses (`{name}`), in order of first use. */
  named: readonly string[];
}

/** A call of a property in a view: positional arguments, and the names of `k=v` arguments. */
export interface PropertyCall {
  args: number;
  named: readonly string[];
}

/** A verdict of a build-time check: true, or the code and message to report. */
export type PropertyVerdict = true | { code: Code; message: string };

/** Names a property cannot take: they would act on the namespace object itself (`then` makes it a Promise). */
const RESERVED = new Set([...Object.getOwnPropertyNames(Object.prototype), 'then', 'toJSON', 'prototype', 'constructor', '__proto__']);

const NAME = /^[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*$/;
const NUMBER = /^[+-]?(?:\d+(?:\.\d+)?|\.\d+)(?:e[+-]?\d+)?([a-z]+|%)?$/i;
const HEX_COLOR = /^#(?:[0-9a-f]{3,4}|[0-9a-f]{6}|[0-9a-f]{8})$/i;
const COLOR_FUNCTION = /^(?:rgba?|hsla?|hwb|lab|lch|oklab|oklch|color)\([^()]*\)$/i;
const URL_VALUE = /^url\(\s*(?:'([^'\\\n]*)'|"([^"\\\n]*)"|([^'"()\s\\]*))\s*\)$/i;
const FLAGS = /\s*!(default|global)\s*$/i;

/** The CSS named colors (CSS Color 4), `transparent` and `currentcolor`. */
const NAMED_COLORS = new Set(
  ('aliceblue antiquewhite aqua aquamarine azure beige bisque black blanchedalmond blue blueviolet brown burlywood ' +
    'cadetblue chartreuse chocolate coral cornflowerblue cornsilk crimson cyan darkblue darkcyan darkgoldenrod darkgray ' +
    'darkgreen darkgrey darkkhaki darkmagenta darkolivegreen darkorange darkorchid darkred darksalmon darkseagreen ' +
    'darkslateblue darkslategray darkslategrey darkturquoise darkviolet deeppink deepskyblue dimgray dimgrey dodgerblue ' +
    'firebrick floralwhite forestgreen fuchsia gainsboro ghostwhite gold goldenrod gray green greenyellow grey honeydew ' +
    'hotpink indianred indigo ivory khaki lavender lavenderblush lawngreen lemonchiffon lightblue lightcoral lightcyan ' +
    'lightgoldenrodyellow lightgray lightgreen lightgrey lightpink lightsalmon lightseagreen lightskyblue lightslategray ' +
    'lightslategrey lightsteelblue lightyellow lime limegreen linen magenta maroon mediumaquamarine mediumblue ' +
    'mediumorchid mediumpurple mediumseagreen mediumslateblue mediumspringgreen mediumturquoise mediumvioletred ' +
    'midnightblue mintcream mistyrose moccasin navajowhite navy oldlace olive olivedrab orange orangered orchid ' +
    'palegoldenrod palegreen paleturquoise palevioletred papayawhip peachpuff peru pink plum powderblue purple ' +
    'rebeccapurple red rosybrown royalblue saddlebrown salmon sandybrown seagreen seashell sienna silver skyblue slateblue ' +
    'slategray slategrey snow springgreen steelblue tan teal thistle tomato turquoise violet wheat white whitesmoke yellow ' +
    'yellowgreen transparent currentcolor').split(' '),
);

/** What the ICU parser's error codes mean, in words. */
const ICU_ERRORS: Record<string, string> = {
  EXPECT_ARGUMENT_CLOSING_BRACE: 'an argument is not closed: add }',
  EMPTY_ARGUMENT: 'an argument has no name: write {0} or {name}',
  MALFORMED_ARGUMENT: 'a malformed argument: write {0} or {name}',
  EXPECT_ARGUMENT_TYPE: 'expected an argument type after the comma: number, date, time, plural, select or selectordinal',
  INVALID_ARGUMENT_TYPE: 'unknown argument type: use number, date, time, plural, select or selectordinal',
  EXPECT_ARGUMENT_STYLE: 'expected a style after the second comma',
  INVALID_NUMBER_SKELETON: 'malformed number skeleton',
  INVALID_DATE_TIME_SKELETON: 'malformed date or time skeleton',
  EXPECT_NUMBER_SKELETON: 'expected a number skeleton after ::',
  EXPECT_DATE_TIME_SKELETON: 'expected a date or time skeleton after ::',
  UNCLOSED_QUOTE_IN_ARGUMENT_STYLE: "a ' quote in an argument style is not closed",
  EXPECT_SELECT_ARGUMENT_OPTIONS: 'a select argument needs cases: {x, select, a {…} other {…}}',
  EXPECT_PLURAL_ARGUMENT_OFFSET_VALUE: 'expected a number after offset:',
  INVALID_PLURAL_ARGUMENT_OFFSET_VALUE: 'the offset: of a plural argument is not a whole number',
  EXPECT_SELECT_ARGUMENT_SELECTOR: 'expected a case name in a select argument',
  EXPECT_PLURAL_ARGUMENT_SELECTOR: 'expected a case (zero, one, two, few, many, other or =N) in a plural argument',
  EXPECT_SELECT_ARGUMENT_SELECTOR_FRAGMENT: 'expected {…} after a select case',
  EXPECT_PLURAL_ARGUMENT_SELECTOR_FRAGMENT: 'expected {…} after a plural case',
  INVALID_PLURAL_ARGUMENT_SELECTOR: 'a plural case is zero, one, two, few, many, other or =N',
  DUPLICATE_PLURAL_ARGUMENT_SELECTOR: 'a plural case appears twice',
  DUPLICATE_SELECT_ARGUMENT_SELECTOR: 'a select case appears twice',
  MISSING_OTHER_CLAUSE: 'a plural or select argument needs an other {…} case',
};

/** The app's properties, ready for views, scripts and Sass. Made once per load. */
export class AppProperties {
  /** The locale messages are formatted in (the manifest's `locale`). */
  readonly locale: string;
  /** Whether the app has a `/🎨.scss`. */
  readonly exists: boolean;
  /** Every property, in file order. */
  readonly list: readonly Property[];
  /**
   * What views (`🎨`, `{{% import * as P from '🎨' }}`) and scripts (`import * as P from '🎨'`)
   * receive: frozen, without a prototype; strings are message functions.
   */
  readonly namespace: Readonly<Record<string, unknown>>;
  /** The text Sass reads for `@import '/🎨'` (undefined without a properties file). */
  readonly scss: string | undefined;
  readonly #byName: Map<string, Property>;

  constructor(init: { locale: string; exists: boolean; list: Property[]; values: Map<Property, unknown>; scss: string | undefined }) {
    this.locale = init.locale;
    this.exists = init.exists;
    this.list = init.list;
    this.scss = init.scss;
    this.#byName = new Map();
    const ns: Record<string, unknown> = Object.create(null);
    for (const p of init.list) {
      const value = init.values.get(p);
      this.#byName.set(p.name, p);
      this.#byName.set(p.key, p);
      ns[p.name] = value;
      ns[p.key] = value;
    }
    this.namespace = Object.freeze(ns);
  }

  /** The property named `name` as written (`success-add`) or in camelCase (`successAdd`). */
  lookup(name: string): Property | undefined {
    return this.#byName.get(name);
  }

  /** The value of `import {name} from '🎨'` (`*`: the namespace). */
  importValue(name: string): unknown {
    if (name === '*' || (name === 'Msg' && !this.#byName.has(name))) return this.namespace;
    return this.namespace[name];
  }

  /**
   * The build-time check of `import {name} from '🎨'` (views and scripts): true or why not.
   * `Msg`, when no property has that name, is the namespace (docs/properties.md "In scripts":
   * the platform's own examples import it by that name).
   */
  checkImport(name: string): true | string {
    if (name === '*' || this.#byName.has(name) || name === 'Msg') return true;
    return this.#unknown(name);
  }

  /**
   * The build-time check of a view path into the properties: `{{🎨.x}}` and `{{P.x}}` (name `*`,
   * segments `['x']`), or an imported property (`{{x}}`: name `x`, no segments), with the
   * arguments the tag passes.
   */
  checkViewPath(name: string, segs: readonly string[], call: PropertyCall): PropertyVerdict {
    let prop: Property | undefined;
    let rest = segs;
    let written = name;
    if (name === '*' || (name === 'Msg' && !this.#byName.has(name))) {
      if (segs.length === 0) return true;
      written = segs[0]!;
      prop = this.#byName.get(written);
      if (!prop) return { code: 'LW_SETTINGS_UNKNOWN_PROPERTY', message: this.#unknown(written) };
      rest = segs.slice(1);
    } else {
      prop = this.#byName.get(name);
      if (!prop) return true; // reported by the import check
    }
    if (rest.length > 0) {
      return { code: 'LW_SETTINGS_UNKNOWN_PROPERTY', message: `🎨.${written} is a ${prop.kind} property; it has no member "${rest[0]}"` };
    }
    return checkCall(prop, written, call);
  }

  #unknown(name: string): string {
    if (!this.exists) return `there is no property "${name}": the app has no /🎨.scss; define it there as $${kebab(name)}: …;`;
    const names = this.list.map((p) => p.name);
    const shown = names.length > 12 ? `${names.slice(0, 12).join(', ')}, …` : names.join(', ');
    return `/🎨.scss defines no property "${name}"${names.length ? `; it defines ${shown}` : ' (it is empty)'}`;
  }
}

/** A tag's arguments against what the property takes. */
function checkCall(prop: Property, written: string, call: PropertyCall): PropertyVerdict {
  const bad = (message: string): PropertyVerdict => ({ code: 'LW_SETTINGS_MESSAGE_ARGUMENTS', message });
  if (prop.kind !== 'string') {
    return call.args > 0 || call.named.length > 0 ? bad(`🎨.${written} is a ${prop.kind}, not a message: it takes no arguments`) : true;
  }
  if (call.args < prop.arity) {
    return bad(`the message 🎨.${written} takes ${plural(prop.arity, 'argument')} ({${[...Array(prop.arity).keys()].join('}, {')}}); ${call.args} given`);
  }
  if (call.args > prop.arity) {
    return bad(prop.arity === 0 ? `the message 🎨.${written} takes no arguments; ${call.args} given` : `the message 🎨.${written} takes ${plural(prop.arity, 'argument')}; ${call.args} given`);
  }
  const missing = prop.named.filter((n) => !call.named.includes(n));
  if (missing.length) return bad(`the message 🎨.${written} needs ${missing.map((n) => `${n}=…`).join(' ')}`);
  const extra = call.named.filter((n) => !prop.named.includes(n));
  if (extra.length) return bad(`the message 🎨.${written} has no argument "${extra[0]}"`);
  return true;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** `successAdd` → `success-add` (for hints). */
function kebab(name: string): string {
  return name.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase());
}

/** `success-add` → `successAdd`. */
export function camelCase(name: string): string {
  return name.replace(/-([A-Za-z0-9])/g, (_, c: string) => c.toUpperCase());
}

export interface PropertiesOptions {
  /** Locale of the messages (default `en`). */
  locale?: string;
  diagnostics: DiagnosticList;
  /**
   * Whether an app path names a file the app serves: `public`, `private` (never served) or
   * undefined (no such file). Absent: url() paths are not checked.
   */
  fileStatus?(path: string): 'public' | 'private' | undefined;
}

/** Reads the app's `/🎨.scss` (an app without one has no properties). */
export function readProperties(tree: SourceTree, options: PropertiesOptions): AppProperties {
  const source = tree.read(PROPERTIES_FILE);
  const locale = options.locale ?? 'en';
  if (source === undefined) return new AppProperties({ locale, exists: false, list: [], values: new Map(), scss: undefined });
  return parseProperties(source, options);
}

/** Parses the text of a properties file; problems go to `options.diagnostics` at their line and column. */
export function parseProperties(source: string, options: PropertiesOptions): AppProperties {
  const locale = options.locale ?? 'en';
  const report = (severity: 'error' | 'warning', code: Code, message: string, offset: number): void =>
    options.diagnostics.at(severity, code, message, PROPERTIES_FILE, locate(source, offset));
  const decls = scanDeclarations(source, report);
  const list: Property[] = [];
  const values = new Map<Property, unknown>();
  const byKey = new Map<string, Property>();
  const lines: string[] = source.split('\n').map(() => '');
  for (const d of decls) {
    const key = camelCase(d.name);
    if (RESERVED.has(d.name) || RESERVED.has(key)) {
      report('error', 'LW_SETTINGS_PROPERTY_NAME', `$${d.name} is a name properties cannot take (${key} belongs to every object); rename it`, d.at);
      continue;
    }
    const before = byKey.get(key) ?? byKey.get(d.name);
    if (before) {
      const where = locate(source, before.at);
      const same = before.name === d.name ? `is defined twice` : `and $${before.name} are the same name in scripts (${key})`;
      report('error', 'LW_SETTINGS_PROPERTY_DUPLICATE', `$${d.name} ${same}; the first is at line ${where.line}: keep one`, d.at);
      continue;
    }
    const read = readValue(d, source, locale, report, options.fileStatus);
    if (!read) continue;
    const prop: Property = {
      name: d.name,
      key,
      kind: read.kind,
      value: read.value,
      category: d.category,
      ...(d.title !== undefined && { title: d.title }),
      at: d.at,
      arity: read.arity,
      named: read.named,
    };
    list.push(prop);
    values.set(prop, read.runtime);
    byKey.set(key, prop);
    byKey.set(d.name, prop);
    const line = locate(source, d.at).line - 1;
    lines[line] += `$${d.name}: ${read.scss}${d.flags};`;
  }
  return new AppProperties({ locale, exists: true, list, values, scss: lines.join('\n') });
}

// ---- scanning ---------------------------------------------------------------------------------

type Report = (severity: 'error' | 'warning', code: Code, message: string, offset: number) => void;

/** A declaration as written: the value is the text between `:` and `;` (flags removed). */
interface Declaration {
  name: string;
  at: number;
  value: string;
  valueAt: number;
  flags: string;
  category: PropertyCategory;
  title?: string;
}

const CATEGORIES = new Set<PropertyCategory>(['style', 'messages', 'options']);

/**
 * Splits the file into declarations, reading comments on the way. After a problem it resumes at
 * the next line that starts a declaration or a comment, so each mistake is reported once.
 */
function scanDeclarations(source: string, report: Report): Declaration[] {
  const out: Declaration[] = [];
  let category: PropertyCategory = 'style';
  let title: string | undefined;
  let i = 0;
  const n = source.length;
  const resync = (): void => {
    for (;;) {
      const nl = source.indexOf('\n', i);
      if (nl === -1) {
        i = n;
        return;
      }
      i = nl + 1;
      const m = /^[ \t]*(\$|\/\*|\/\/)/.exec(source.slice(i, i + 64));
      if (m) {
        i += m[0].length - m[1]!.length;
        return;
      }
    }
  };
  while (i < n) {
    const c = source[i]!;
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '\uFEFF') {
      i++;
      continue;
    }
    if (source.startsWith('//', i)) {
      const nl = source.indexOf('\n', i);
      i = nl === -1 ? n : nl + 1;
      continue;
    }
    if (source.startsWith('/*', i)) {
      const end = source.indexOf('*/', i + 2);
      if (end === -1) {
        report('error', 'LW_SETTINGS_PROPERTIES_SYNTAX', 'a comment is not closed: end it with */', i);
        return out;
      }
      if (source.startsWith('/**', i) && end > i + 2) {
        const tags = readDocTags(source.slice(i + 3, end));
        if (tags.category !== undefined) {
          if (CATEGORIES.has(tags.category as PropertyCategory)) category = tags.category as PropertyCategory;
          else report('warning', 'LW_SETTINGS_PROPERTY_CATEGORY', `@category ${tags.category} is not style, messages or options; the properties after it keep the category ${category}`, i);
        }
        if (tags.title !== undefined) title = tags.title;
      }
      i = end + 2;
      continue;
    }
    if (c !== '$') {
      const word = /^[^\s;{}]{1,40}/.exec(source.slice(i))?.[0] ?? c;
      report('error', 'LW_SETTINGS_PROPERTIES_SYNTAX', `unexpected "${word}": the properties file holds $name: value; declarations and comments only (rules and imports belong in another .scss file)`, i);
      resync();
      continue;
    }
    const at = i;
    const name = /^\$([^\s:;]*)/.exec(source.slice(i))![1]!;
    i += 1 + name.length;
    if (!NAME.test(name)) {
      report('error', 'LW_SETTINGS_PROPERTY_NAME', `"$${name}" is not a property name: use letters, digits and single dashes, starting with a letter ($ui-home)`, at);
      resync();
      continue;
    }
    while (i < n && (source[i] === ' ' || source[i] === '\t')) i++;
    if (source[i] !== ':') {
      report('error', 'LW_SETTINGS_PROPERTIES_SYNTAX', `expected ":" after $${name}: write $${name}: value;`, i);
      resync();
      continue;
    }
    i++;
    const value = scanValue(source, i, name, report);
    i = value.next;
    if (value.error) {
      // After a missing ";" the scan already stands at the next declaration.
      if (value.error === 'resync') resync();
      title = undefined;
      continue;
    }
    let text = value.text;
    let flags = '';
    for (let m = FLAGS.exec(text); m; m = FLAGS.exec(text)) {
      flags = ` !${m[1]!.toLowerCase()}` + flags;
      text = text.slice(0, m.index);
    }
    const lead = text.length - text.trimStart().length;
    text = text.trim();
    if (text === '') {
      report('error', 'LW_SETTINGS_PROPERTIES_SYNTAX', `$${name} has no value: write $${name}: value;`, at);
      title = undefined;
      continue;
    }
    out.push({ name, at, value: text, valueAt: value.start + lead, flags, category, ...(title !== undefined && { title }) });
    title = undefined;
  }
  return out;
}

/** `@category x` and `@title Some label` of a doc comment's text. */
function readDocTags(body: string): { category?: string; title?: string } {
  const tags: { category?: string; title?: string } = {};
  for (const raw of body.split('\n')) {
    const line = raw.replace(/^\s*\*?\s?/, '').trim();
    const m = /^@(category|title)\b\s*(.*)$/.exec(line);
    if (!m) continue;
    if (m[1] === 'category') tags.category = m[2]!.trim().split(/\s+/)[0] ?? '';
    else tags.title = m[2]!.trim();
  }
  return tags;
}

/**
 * The text of a value from `start` to its `;` (outside quotes and parentheses). A missing `;`
 * before the next declaration, or a quote not closed on its line, is an error.
 */
function scanValue(source: string, start: number, name: string, report: Report): { text: string; start: number; next: number; error: false | 'resync' | 'next' } {
  const n = source.length;
  let depth = 0;
  let i = start;
  while (i < n) {
    const c = source[i]!;
    if (c === '"' || c === "'") {
      const end = stringEnd(source, i);
      if (end < 0) {
        report('error', 'LW_SETTINGS_PROPERTIES_SYNTAX', `the string of $${name} is not closed: end it with ${c} (a line of a longer string ends with \\)`, i);
        return { text: '', start, next: i, error: 'resync' };
      }
      i = end + 1;
      continue;
    }
    if (c === '(') depth++;
    else if (c === ')') depth = Math.max(0, depth - 1);
    else if (c === ';' && depth === 0) return { text: source.slice(start, i), start, next: i + 1, error: false };
    else if (c === '\n' && depth === 0 && /^[ \t\r]*\$[A-Za-z0-9-]*[ \t]*:/.test(source.slice(i + 1, i + 130))) {
      report('error', 'LW_SETTINGS_PROPERTIES_SYNTAX', `missing ";" after the value of $${name}`, lastNonSpace(source, start, i));
      return { text: source.slice(start, i), start, next: i + 1, error: 'next' };
    } else if (source.startsWith('//', i) && depth === 0 && (i === start || /\s/.test(source[i - 1]!))) {
      // A line comment after a value without ";": the value ends there.
      break;
    }
    i++;
  }
  if (source.slice(start, i).trim() !== '' && i < n) {
    report('error', 'LW_SETTINGS_PROPERTIES_SYNTAX', `missing ";" after the value of $${name}`, lastNonSpace(source, start, i));
    return { text: source.slice(start, i), start, next: i, error: 'resync' };
  }
  // The last declaration of the file may leave out its ";", as in Sass.
  return { text: source.slice(start, i), start, next: i, error: false };
}

function lastNonSpace(source: string, from: number, to: number): number {
  let j = to;
  while (j > from && /\s/.test(source[j - 1]!)) j--;
  return j;
}

/** Offset of the quote closing the string opened at `open`, or -1 (end of line or file first). */
function stringEnd(source: string, open: number): number {
  const q = source[open]!;
  for (let i = open + 1; i < source.length; i++) {
    const c = source[i]!;
    if (c === '\\') {
      i++;
      if (source[i] === '\r' && source[i + 1] === '\n') i++;
      continue;
    }
    if (c === q) return i;
    if (c === '\n' || c === '\r') return -1;
  }
  return -1;
}

/**
 * The text of a quoted string (CSS escapes: `\` at the end of a line continues the string, `\'`,
 * `\\`, `\66` hex code points) and, for each character, its offset in the file.
 */
function decodeString(source: string, open: number, close: number): { text: string; offsets: number[] } {
  let text = '';
  const offsets: number[] = [];
  for (let i = open + 1; i < close; i++) {
    const c = source[i]!;
    if (c !== '\\') {
      text += c;
      offsets.push(i);
      continue;
    }
    const next = source[i + 1];
    if (next === '\n') {
      i++;
      continue;
    }
    if (next === '\r') {
      i += source[i + 2] === '\n' ? 2 : 1;
      continue;
    }
    const hex = /^[0-9a-fA-F]{1,6}/.exec(source.slice(i + 1, i + 7));
    if (hex) {
      const cp = parseInt(hex[0], 16);
      const ch = cp === 0 || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) ? '\uFFFD' : String.fromCodePoint(cp);
      for (const unit of ch.split('')) {
        text += unit;
        offsets.push(i);
      }
      i += hex[0].length;
      if (source[i + 1] === ' ' || source[i + 1] === '\t' || source[i + 1] === '\n') i++;
      continue;
    }
    text += next ?? '';
    offsets.push(i);
    i++;
  }
  offsets.push(close);
  return { text, offsets };
}

// ---- values -----------------------------------------------------------------------------------

interface ReadValue {
  kind: PropertyKind;
  value: string | number | boolean;
  /** What views and scripts receive. */
  runtime: unknown;
  /** What Sass reads. */
  scss: string;
  arity: number;
  named: string[];
}

function readValue(
  d: Declaration,
  source: string,
  locale: string,
  report: Report,
  fileStatus: PropertiesOptions['fileStatus'],
): ReadValue | undefined {
  const text = d.value;
  const plain = (kind: PropertyKind, value: string | number | boolean): ReadValue => ({ kind, value, runtime: value, scss: text, arity: 0, named: [] });
  const q = text[0];
  if ((q === '"' || q === "'") && stringEnd(source, d.valueAt) === d.valueAt + text.length - 1) {
    const { text: message, offsets } = decodeString(source, d.valueAt, d.valueAt + text.length - 1);
    const compiled = compileMessage(d.name, message, locale);
    if ('error' in compiled) {
      const offset = offsets[Math.min(compiled.offset, offsets.length - 1)]!;
      report('error', 'LW_SETTINGS_MESSAGE', `$${d.name} is not a well-formed ICU message: ${compiled.error} (a straight ' quotes ICU syntax: write ’ for an apostrophe, or '' for a straight one)`, offset);
      return undefined;
    }
    return { kind: 'string', value: message, runtime: compiled.fn, scss: sassString(compiled.plain ?? message), arity: compiled.arity, named: compiled.named };
  }
  if (text === 'true' || text === 'false') return plain('boolean', text === 'true');
  const num = NUMBER.exec(text);
  if (num) return plain('number', num[1] === undefined ? Number(text) : text);
  if (HEX_COLOR.test(text) || COLOR_FUNCTION.test(text) || NAMED_COLORS.has(text.toLowerCase())) return plain('color', text);
  const url = URL_VALUE.exec(text);
  if (url) {
    const path = url[1] ?? url[2] ?? url[3] ?? '';
    if (!path.startsWith('/') || path.startsWith('//')) {
      report('error', 'LW_SETTINGS_PROPERTY_URL', `url(${path}) of $${d.name} is not an absolute path of the app: write url(/images/name.png)`, d.valueAt);
      return undefined;
    }
    const status = fileStatus?.(path.replace(/[?#].*$/, ''));
    if (fileStatus && status !== 'public') {
      const why = status === 'private' ? 'is private (a name starting with _ or .) and never served' : 'does not exist';
      report('error', 'LW_SETTINGS_PROPERTY_URL', `url(${path}) of $${d.name} ${why}: name a public file of the app`, d.valueAt);
      return undefined;
    }
    return { kind: 'url', value: path, runtime: path, scss: `url(${JSON.stringify(path)})`, arity: 0, named: [] };
  }
  report(
    'warning',
    'LW_SETTINGS_PROPERTY_VALUE',
    `$${d.name}: ${text.length > 40 ? text.slice(0, 40) + '…' : text} is not a string, boolean, number, color or url(); Sass reads it as written, views and scripts see its text (quote it to make it a string)`,
    d.valueAt,
  );
  return plain('other', text);
}

/** A Sass double-quoted string of `text`, with no interpolation. */
function sassString(text: string): string {
  return '"' + text.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\r?\n|\r/g, '\\a ').replace(/#\{/g, '\\#{') + '"';
}

// ---- messages ---------------------------------------------------------------------------------

/** The parts of the ICU parse tree we read (element types of @formatjs/icu-messageformat-parser). */
interface IcuElement {
  type: number;
  value?: unknown;
  options?: Record<string, { value: IcuElement[] }>;
  children?: IcuElement[];
}
const ICU_ARGUMENT = 1;
const ICU_DATE = 3;
const ICU_TIME = 4;

// intl-messageformat is loaded when the first message is parsed: apps whose properties have no
// messages never load it (an ES module, loaded by require as Node 20.19 allows: the Node that
// htmlparser2 and Sass need already).
let loadedFormat: typeof MessageFormat.IntlMessageFormat | undefined;
const messageFormat = (): typeof MessageFormat.IntlMessageFormat => (loadedFormat ??= (createRequire(import.meta.url)('intl-messageformat') as typeof MessageFormat).IntlMessageFormat);

type CompiledMessage =
  | { fn: (...args: unknown[]) => string; arity: number; named: string[]; plain: string | undefined }
  | { error: string; offset: number };

/**
 * Parses a message once and makes the function views and scripts call. A message without
 * arguments is formatted here, once.
 */
function compileMessage(name: string, message: string, locale: string): CompiledMessage {
  let format: MessageFormat.IntlMessageFormat;
  try {
    // ignoreTag: `<b>` is text here (views escape the result), not an ICU rich-text tag.
    format = new (messageFormat())(message, locale, undefined, { ignoreTag: true });
  } catch (e) {
    const err = e as { message?: string; location?: { start?: { offset?: number } } };
    const code = String(err.message ?? e);
    return { error: ICU_ERRORS[code] ?? code.toLowerCase().replace(/_/g, ' '), offset: err.location?.start?.offset ?? 0 };
  }
  let arity = 0;
  const named: string[] = [];
  const dates = new Set<string>();
  const visit = (elements: IcuElement[]): void => {
    for (const el of elements) {
      if (el.type >= ICU_ARGUMENT && el.type <= 6 && typeof el.value === 'string') {
        const arg = el.value;
        if (/^\d+$/.test(arg)) arity = Math.max(arity, Number(arg) + 1);
        else if (!named.includes(arg)) named.push(arg);
        if (el.type === ICU_DATE || el.type === ICU_TIME) dates.add(arg);
      }
      if (el.options) for (const o of Object.values(el.options)) visit(o.value);
      if (el.children) visit(el.children);
    }
  };
  visit(format.getAst() as unknown as IcuElement[]);
  if (arity === 0 && named.length === 0) {
    const text = String(format.format());
    return { fn: () => text, arity, named, plain: text };
  }
  const argValue = (key: string, v: unknown): unknown => {
    if (v === null || v === undefined) return '';
    if (dates.has(key) && (typeof v === 'string' || typeof v === 'number')) return new Date(v);
    if (typeof v === 'object' && !(v instanceof Date)) return String(v);
    return v;
  };
  const fn = (...args: unknown[]): string => {
    if (args.length < arity) {
      throw new LanewayError('LW_SETTINGS_MESSAGE_ARGUMENTS', `the message $${name} of /🎨.scss takes ${plural(arity, 'argument')}; ${args.length} given`, { status: 500 });
    }
    const values: Record<string, unknown> = Object.create(null);
    for (let i = 0; i < arity; i++) values[i] = argValue(String(i), args[i]);
    if (named.length) {
      const bag = args[arity];
      for (const key of named) {
        const has = bag !== null && typeof bag === 'object' && Object.hasOwn(bag, key);
        if (!has) throw new LanewayError('LW_SETTINGS_MESSAGE_ARGUMENTS', `the message $${name} of /🎨.scss needs the named argument ${key}`, { status: 500 });
        values[key] = argValue(key, (bag as Record<string, unknown>)[key]);
      }
    }
    return String(format.format(values as Record<string, string>));
  };
  return { fn, arity, named, plain: undefined };
}
