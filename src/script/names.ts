/**
 * The names the subset grants, forbids, or treats specially. Shared by the validator (build time)
 * and, through the realm source (realm/), by the run-time checks.
 */

/** Globals a script may use without importing them. */
export const GRANTED_GLOBALS: ReadonlySet<string> = new Set([
  'Redirect',
  'Messages',
  'Cookie',
  'Math',
  'JSON',
  'Date',
  'Number',
  'String',
  'Boolean',
  'Array',
  'Object',
  'parseInt',
  'parseFloat',
  'isNaN',
  'isFinite',
  'encodeURIComponent',
  'decodeURIComponent',
  'encodeURI',
  'decodeURI',
  'console',
  'undefined',
  'NaN',
  'Infinity',
]);

/** Members no script may name: each reaches JavaScript internals (prototypes, constructors, stack frames). */
export const FORBIDDEN_MEMBERS: ReadonlySet<string> = new Set([
  'constructor',
  '__proto__',
  'prototype',
  '__defineGetter__',
  '__defineSetter__',
  '__lookupGetter__',
  '__lookupSetter__',
  'caller',
  'callee',
  'arguments',
]);

/**
 * Members a script may read but never define on its own objects: JavaScript itself calls functions
 * stored under these names (Promise adoption, coercion, JSON), outside the script's control.
 */
export const HOOK_MEMBERS: ReadonlySet<string> = new Set(['then', 'toString', 'valueOf', 'toJSON', 'toLocaleString']);

/** Prefix of the names generated code uses; scripts may not declare names with it. */
export const RESERVED_PREFIX = '$lw_';

/** Calls of granted globals that never wait and never call back into the script. */
export const SYNC_GLOBAL_CALLS: ReadonlySet<string> = new Set([
  'String',
  'Number',
  'Boolean',
  'parseInt',
  'parseFloat',
  'isNaN',
  'isFinite',
  'encodeURIComponent',
  'decodeURIComponent',
  'encodeURI',
  'decodeURI',
]);

/** `Global.member(...)` calls that never wait (Array.from is missing on purpose: its map callback may). */
export const SYNC_STATIC_CALLS: ReadonlySet<string> = new Set([
  ...[
    'abs', 'acos', 'acosh', 'asin', 'asinh', 'atan', 'atan2', 'atanh', 'cbrt', 'ceil', 'clz32', 'cos', 'cosh', 'exp',
    'expm1', 'floor', 'fround', 'hypot', 'imul', 'log', 'log10', 'log1p', 'log2', 'max', 'min', 'pow', 'random',
    'round', 'sign', 'sin', 'sinh', 'sqrt', 'tan', 'tanh', 'trunc',
  ].map((m) => `Math.${m}`),
  'JSON.parse',
  'JSON.stringify',
  'Object.keys',
  'Object.values',
  'Object.entries',
  'Object.assign',
  'Object.fromEntries',
  'Object.freeze',
  'Object.isFrozen',
  'Object.hasOwn',
  'Array.isArray',
  'Array.of',
  'Number.isInteger',
  'Number.isFinite',
  'Number.isNaN',
  'Number.isSafeInteger',
  'Number.parseFloat',
  'Number.parseInt',
  'String.fromCharCode',
  'String.fromCodePoint',
  'Date.now',
  'Date.parse',
  'Date.UTC',
  ...['home', 'dir', 'name', 'index', 'params', 'hash', 'success', 'info', 'warning', 'error'].map((m) => `Redirect.${m}`),
  ...['success', 'info', 'warning', 'error', 'fieldSuccess', 'fieldInfo', 'fieldWarning', 'fieldError', 'now', 'data'].map((m) => `Messages.${m}`),
  'Cookie.name',
]);

/** Host globals a script might reach for, each with what to write instead. */
export const FORBIDDEN_GLOBALS: ReadonlyMap<string, string> = new Map([
  ['eval', '`eval` is not available: write the code directly'],
  ['Function', '`Function` is not available: write an arrow function, `(a, b) => …`'],
  ['arguments', '`arguments` is not available: name the parameters, or use a rest parameter `(...args) => …`'],
  ['globalThis', 'there is no global object: use imported values and the granted globals (Math, JSON, Date, …)'],
  ['window', 'there is no global object: use imported values and the granted globals (Math, JSON, Date, …)'],
  ['global', 'there is no global object: use imported values and the granted globals (Math, JSON, Date, …)'],
  ['self', 'there is no global object: use imported values and the granted globals (Math, JSON, Date, …)'],
  ['process', '`process` is not available in scripts: read request data with `import {…} from \'form\'`, `\'&\'` or `\'🔗\'`'],
  ['require', '`require` is not available: import values with `import {name} from \'module\'` at the top'],
  ['module', '`module` is not available: suppliers end with `export {a, b}`'],
  ['exports', '`exports` is not available: suppliers end with `export {a, b}`'],
  ['Buffer', '`Buffer` is not available: use strings, or `Encoding` from \'util\''],
  ['Proxy', '`Proxy` is not available: use plain objects'],
  ['Reflect', '`Reflect` is not available: use `Object.keys`, `Object.entries` and plain member access'],
  ['Symbol', '`Symbol` is not available: use string keys'],
  ['Promise', '`Promise` is not available: call functions directly; Laneway waits for results implicitly'],
  ['WeakMap', '`WeakMap` is not available: use a plain object keyed by id'],
  ['WeakSet', '`WeakSet` is not available: use a plain object keyed by id'],
  ['WeakRef', '`WeakRef` is not available: hold the value directly'],
  ['Map', '`Map` is not available: use a plain object `{}` keyed by strings'],
  ['Set', '`Set` is not available: use an array with `includes`, or a plain object keyed by strings'],
  ['Error', '`Error` is not available: throw a string or an object, `throw ({error: \'…\'})`'],
  ['TypeError', '`TypeError` is not available: throw a string or an object, `throw ({error: \'…\'})`'],
  ['RangeError', '`RangeError` is not available: throw a string or an object, `throw ({error: \'…\'})`'],
  ['setTimeout', 'timers are not available: scripts run once per request'],
  ['setInterval', 'timers are not available: scripts run once per request'],
  ['setImmediate', 'timers are not available: scripts run once per request'],
  ['queueMicrotask', 'timers are not available: scripts run once per request'],
  ['fetch', '`fetch` is not available: call a connector module instead'],
  ['console', '`console` is not available: put the value in the response while debugging'],
  ['Intl', '`Intl` is not available: use `toLocaleString` methods of numbers and dates'],
  ['WebAssembly', '`WebAssembly` is not available in scripts'],
  ['Atomics', '`Atomics` is not available in scripts'],
  ['SharedArrayBuffer', '`SharedArrayBuffer` is not available in scripts'],
  ['ArrayBuffer', 'binary buffers are not available: use strings and arrays'],
  ['structuredClone', '`structuredClone` is not available: copy with `JSON.parse(JSON.stringify(value))`'],
]);

/** What to write instead of a forbidden member. */
export function forbiddenMemberAdvice(name: string): string {
  if (name === '__proto__' || name === 'prototype' || name.startsWith('__')) {
    return `the member \`${name}\` is not accessible from scripts: build objects with literals \`{…}\` and copy them with \`Object.assign\``;
  }
  if (name === 'constructor') {
    return 'the member `constructor` is not accessible from scripts: compare a field you set yourself, or use `Array.isArray` / `typeof`';
  }
  return `the member \`${name}\` is not accessible from scripts: pass what you need as a parameter`;
}
