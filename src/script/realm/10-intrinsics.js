// 1. Intrinsics ------------------------------------------------------------------------------
const OObject = Object, OArray = Array, OString = String, ONumber = Number, OBoolean = Boolean, OJSON = JSON, ODate = Date;
const OPromise = Promise, OMath = Math, OTypeError = TypeError, ORangeError = RangeError, OError = Error;
const OSet = Set, OProxy = Proxy;
// Side tables keyed by objects (records, queries, builders, budgets: most live for one request).
// Not WeakMaps: an entry whose key dies young keeps its value through every minor collection in
// V8, so each cost more than a microsecond of garbage collection. The value lives in a private
// field stamped on the key by a constructor that returns it (nothing a script can read).
const SLOT_EMPTY = {};
/**
 * @template V
 * @typedef {{ get(o: unknown): V | undefined, has(o: unknown): boolean, set(o: object, v: V): void, delete(o: unknown): void }} SlotMap
 */
/** @template V @returns {SlotMap<V>} */
const slotMap = () => {
  const isObj = (o) => o !== null && (typeof o === 'object' || typeof o === 'function');
  const Slot = class extends /** @type {new (o: object) => object} */ (/** @type {unknown} */ (function (o) { return o; })) {
    #v;
    constructor(o, v) { super(o); this.#v = v; }
    static read(o) { return isObj(o) && #v in o ? o.#v : SLOT_EMPTY; }
    static write(o, v) { if (#v in o) o.#v = v; else new Slot(o, v); }
  };
  return {
    get: (o) => { const v = Slot.read(o); return v === SLOT_EMPTY ? undefined : v; },
    has: (o) => Slot.read(o) !== SLOT_EMPTY,
    set: (o, v) => { Slot.write(o, v); },
    delete: (o) => { if (Slot.read(o) !== SLOT_EMPTY) Slot.write(o, SLOT_EMPTY); },
  };
};
/** @returns {{ has(o: unknown): boolean, add(o: object): void, delete(o: unknown): void }} */
const slotSet = () => {
  /** @type {SlotMap<true>} */
  const m = slotMap();
  return { has: m.has, add: (o) => { m.set(o, true); }, delete: m.delete };
};
const apply = Reflect.apply, construct = Reflect.construct, ownKeys = Reflect.ownKeys;
const getDesc = OObject.getOwnPropertyDescriptor, defProp = OObject.defineProperty, getProto = OObject.getPrototypeOf;
const freeze = OObject.freeze, keys = OObject.keys, isArray = OArray.isArray, hasOwn = OObject.hasOwn;
const OP = OObject.prototype, AP = OArray.prototype, SP = OString.prototype, PP = OPromise.prototype;
const A = { push: AP.push, pop: AP.pop, slice: AP.slice, join: AP.join, sort: AP.sort, concat: AP.concat, splice: AP.splice,
  unshift: AP.unshift, includes: AP.includes, toSpliced: AP.toSpliced, map: AP.map, indexOf: AP.indexOf,
  lastIndexOf: AP.lastIndexOf, toReversed: AP.toReversed, with: AP.with, reverse: AP.reverse, fill: AP.fill };
const S_ = { indexOf: SP.indexOf, slice: SP.slice, repeat: SP.repeat, padStart: SP.padStart, padEnd: SP.padEnd,
  split: SP.split, concat: SP.concat, replace: SP.replace, replaceAll: SP.replaceAll, lastIndexOf: SP.lastIndexOf,
  charCodeAt: SP.charCodeAt };
const call = (f, self, ...args) => apply(f, self, args);
const push = (a, v) => apply(A.push, a, [v]);
const then = PP.then;
const noop = () => {};
const isP = (v) => v instanceof OPromise;
const AsyncFunctionPrototype = getProto(async function () {});
const SymIterator = Symbol.iterator, SymToPrimitive = Symbol.toPrimitive, SymHasInstance = Symbol.hasInstance;
const now = host.now, cpuNow = host.cpu;
const DEF = { ms: host.maxStringLength, ma: host.maxArrayLength, md: host.maxDepth };
const FORBID = new OSet(host.forbidden);
const HOOKS = new OSet(host.hooks);
const TICKS = 64;
