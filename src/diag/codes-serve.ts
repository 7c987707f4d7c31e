/** Codes of serving in production: workers and their supervisor, readiness (src/supervisor, src/http/health.ts). */
export const SERVE_CODES = {
  LW_SERVE_WORKER_CRASHED: 'A worker of `serve --workers N` exited unasked (or was killed after blocking): the supervisor starts another, after a growing wait while crashes go on.',
  LW_SERVE_WORKER_BLOCKED: "A worker's event loop stayed blocked longer than the watchdog's threshold (`--watchdog-ms`): the supervisor kills it; the log names the request it was running.",
  LW_SERVE_WORKER_START: 'The first workers of `serve --workers N` could not start (one exited before it was listening): the server stops with exit 1.',
  LW_SERVE_RELOAD_FAILED: 'A reload (SIGHUP) failed: the app does not compile or its database cannot be opened, or a new worker did not start; the workers keep serving the last build that did.',
  LW_LIMIT_EXCEEDED: 'A request was refused with 429 and Retry-After: its visitor is over one of the limits per visitor of `limits:` in /🎛.yaml; nothing was written or sent.',
  LW_SERVE_NOT_READY: '`/__/ready` answers 503: a store of the app does not answer (logged once when it stops answering).',
} as const;
