// 2. Request budgets, runs, signals, helpers for generated code ---------------------------------
class Signal {
  constructor(code, message) { this.code = code; this.message = message; freeze(this); }
}
// What a rejected Promise gives through Budget.p; never reaches script code (Budget.q throws e).
class Rejected {
  constructor(e) { this.e = e; freeze(this); }
}
const rejected = (e) => new Rejected(e);
// The budget of the request whose script code is running now, or null while host code runs. Every
// way into script code sets it (a run's start, a host call of a script function, the resumption
// after a wait) and every way out restores it: per-request state is read from the budget, never
// from a slot that outlives the call.
/** @type {{ cur: Budget | null }} */
const S = { cur: null };
const lim = () => S.cur || DEF;
// A limit ends the whole request: the budget is marked dead first, so no catch or finally of any
// script of the request can go on (see Budget.chk and Budget.fin).
const signal = (code, message) => {
  const b = S.cur;
  if (b !== null) b.fail(code, message);
  throw new Signal(code, message);
};
const limitString = () => signal('LW_SCRIPT_STRING_LIMIT', 'built a string longer than ' + lim().ms + ' characters');
const limitArray = (what) => signal('LW_SCRIPT_ARRAY_LIMIT', 'built ' + (what || 'an array') + ' larger than ' + lim().ma + ' items');
const limitDepth = () => signal('LW_SCRIPT_DEPTH_LIMIT', 'nested values deeper than ' + lim().md);
const forbidden = (name) => signal('LW_SCRIPT_FORBIDDEN_ACCESS', 'the member "' + name + '" is not accessible from scripts');
const hook = (name) => signal('LW_SCRIPT_FORBIDDEN_ACCESS', 'scripts cannot define "' + name + '"');
const isStackOverflow = (e) => e instanceof ORangeError && e.message === 'Maximum call stack size exceeded';

// One request's budget, shared by every script, supplier, function call and view of the request.
// CPU: the clock runs while script code of the request runs (not while it waits). It reads the
// wall clock, which is cheap; only once that says the budget is spent does it read the process
// CPU time, and the run ends when the CPU time used from then on (the smaller of the two clocks)
// passes half the budget: a script that was merely descheduled, or paused by the machine, finishes
// before that, while one that really computes ends within 1.5x its budget.
// Memory: the strings and arrays the request's built-ins make are charged to one allowance.
class Budget {
  constructor(l, req) {
    this.cpu = l.cpuMs; this.ms = l.maxStringLength; this.ma = l.maxArrayLength; this.md = l.maxDepth;
    this.mem = l.memoryMb * 1048576; this.mb = l.memoryMb;
    this.used = 0; this.t0 = 0; this.on = false;
    this.v = false; this.vUsed = 0; this.vC = 0; this.vW = 0;
    this.dead = null; this.runs = []; this.req = req; this.org = null; this.n = TICKS; this.w = WORK;
  }
  // Start the clock (false when it was running already: the caller then leaves it running).
  enter() {
    S.cur = this;
    if (this.on) return false;
    this.on = true; this.t0 = now();
    if (this.v) { this.vC = cpuNow(); this.vW = this.t0; }
    return true;
  }
  // A fresh allowance for a new stretch of work of a long-lived request (each call of an event
  // stream's polled function): CPU and memory counters back to zero, the CPU limit set to cpuMs.
  // Refused while the clock runs or once the budget is dead.
  renew(cpuMs) {
    if (this.on || this.dead !== null) return false;
    this.cpu = cpuMs; this.used = 0; this.v = false; this.vUsed = 0; this.mem = this.mb * 1048576;
    return true;
  }
  // Stop the clock; host code runs next.
  leave() {
    if (this.on) {
      const t = now();
      this.used += t - this.t0;
      if (this.v) this.vUsed += OMath.min(cpuNow() - this.vC, t - this.vW);
      this.on = false;
    }
    if (S.cur === this) S.cur = null;
  }
  // Around a real await, as q(await p(promise)): p stops the clock and carries a rejection as a
  // fulfilment (Rejected), so that q runs after the wait whichever way it ended. q makes the budget
  // current again and restarts the clock before the code after the await runs, or the catch block
  // that receives the rejection (a caught $ModelNotFound, then more model calls); then it raises
  // the request's end if it died meanwhile, else the rejection, else gives the value.
  p(v) { this.leave(); return apply(then, v, [undefined, rejected]); }
  q(v) {
    this.enter();
    if (this.dead !== null) throw this.dead;
    if (v instanceof Rejected) throw v.e;
    return v;
  }
  check() {
    if (this.dead !== null) throw this.dead;
    if (!this.on) return;
    const t = now();
    if (this.used + (t - this.t0) <= this.cpu) return;
    const c = cpuNow();
    if (!this.v) { this.v = true; this.vUsed = 0; this.vC = c; this.vW = t; return; }
    if (this.vUsed + OMath.min(c - this.vC, t - this.vW) > this.cpu / 2) this.fail('LW_SCRIPT_CPU_LIMIT', 'used more than ' + this.cpu + ' ms of CPU');
  }
  alloc(bytes) {
    this.mem -= bytes;
    if (this.mem < 0) this.fail('LW_SCRIPT_MEMORY_LIMIT', 'built more than ' + this.mb + ' MiB of strings and arrays');
  }
  fail(code, message) {
    if (this.dead === null) {
      this.dead = new Signal(code, message);
      // Every run of the request takes the slow path at its next function entry.
      for (let i = 0; i < this.runs.length; i++) this.runs[i].md = -1;
    }
    throw this.dead;
  }
  // At every catch entry: limits and forbidden accesses are not catchable.
  chk(e) {
    if (e === BAIL) throw e;
    if (this.dead !== null) throw this.dead;
    if (e instanceof Signal) this.fail(e.code, e.message);
    if (isStackOverflow(e)) this.fail('LW_SCRIPT_DEPTH_LIMIT', 'nested calls too deep (the call stack ran out)');
  }
  // At every finally entry: a pending limit is raised again, whatever the finally block would do.
  fin() { if (this.dead !== null) throw this.dead; }
  origin() { if (this.org === null) this.org = OString(this.req.origin()); return this.org; }
}
// Heavy built-ins: after one that worked on n items, the clock is read (only when n is large, so
// small calls cost nothing); mem charges what a built-in made to the request's allowance.
// Work is counted in items: the clock is read once WORK items have been handled since the last
// reading, however they were split between calls.
const WORK = 4096;
const heavy = (n) => { const b = S.cur; if (b !== null && (b.w -= n) < 0) { b.w = WORK; b.check(); } };
const mem = (bytes) => { const b = S.cur; if (b !== null) b.alloc(bytes); };

// One run of one script: its call depth and tick counter, its imports, and the request's budget.
class Run {
  constructor(b, imp) {
    this.b = b; this.d = 0; this.md = b.dead === null ? b.md : -1; this.maxD = b.md; this.n = TICKS; this.hostImp = imp;
    push(b.runs, this);
  }
  // Called at a function entry when the depth passed md or every TICKS entries. When it throws,
  // the entering frame's finally never runs, so it undoes that frame's depth itself.
  slow() {
    if (this.d > this.md) this.n--; // the prologue's || skipped the tick
    const b = this.b;
    if (b.dead !== null) { this.d--; throw b.dead; }
    if (this.d > this.maxD) { this.d--; b.fail('LW_SCRIPT_DEPTH_LIMIT', 'nested calls deeper than ' + this.maxD); }
    if (this.n < 0) {
      this.n = TICKS;
      try { b.check(); } catch (e) { this.d--; throw e; }
    }
  }
  imp(i) { return this.hostImp(i); }
  finish() { this.hostImp = null; }
}

const key = (k) => {
  if (typeof k === 'number') return k;
  if (typeof k !== 'string') k = OString(k);
  if (FORBID.has(k)) forbidden(k);
  return k;
};
const pk = (k) => {
  k = key(k);
  if (HOOKS.has(k)) hook(k);
  return k;
};
const checkIndex = (o, k, v) => {
  const c = lim().ma;
  if (k === 'length') {
    const n = ONumber(v);
    if (!(n <= c)) limitArray();
    if (n > o.length) throw new ORangeError('setting length past the end would leave holes in the array: push the values instead');
    return;
  }
  const i = typeof k === 'number' ? k : (k === '' ? -1 : ONumber(k));
  if (i >= c) limitArray();
  // Arrays never have holes, so every built-in visits them as JavaScript does (docs/scripting.md).
  if (i > o.length && ONumber.isInteger(i)) throw new ORangeError('index ' + i + ' is past the end of the array (length ' + o.length + '), which would leave holes: push the values instead');
};
const set = (o, k, v) => {
  k = key(k);
  if (typeof v === 'function' && HOOKS.has(k)) hook(k);
  if (isArray(o)) checkIndex(o, k, v);
  o[k] = v;
  return v;
};
const del = (o, k) => {
  k = key(k);
  const p = o !== null && typeof o === 'object' ? getProto(o) : undefined;
  if (p !== OP && p !== null) throw new OTypeError('delete works only on keys of plain objects');
  return delete o[k];
};
const cs = (v) => { if (typeof v === 'string' && v.length > lim().ms) limitString(); return v; };
/** @template {{ length: number }} T @param {T} v @returns {T} */
const ca = (v) => { if (v.length > lim().ma) limitArray(); return made(v); };
// An array a built-in made: charged to the memory allowance, and the clock read when it is large.
/** @template {{ length: number }} T @param {T} a @returns {T} */
const made = (a) => { const n = a.length; if (n > 64) { mem(n * 8); heavy(n); } return a; };
// A string a built-in made.
const madeS = (str) => { const n = str.length; if (n > 256) { if (n > lim().ms) limitString(); mem(n * 2); heavy(n); } return str; };
const callable = (f, what) => { if (typeof f !== 'function') throw new OTypeError(what + ' is not a function'); };
