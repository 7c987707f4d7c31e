/**
 * Values that are ready now (SQLite) or later (PostgreSQL): `then` applies `f` at once to a value,
 * or after a Promise settles, so that the synchronous path makes no Promise.
 */
export const then = <T, R>(v: T | Promise<T>, f: (x: T) => R | Promise<R>): R | Promise<R> => (v instanceof Promise ? v.then(f) : f(v));
