/** Laneway's programmatic surface: load an app, serve it. */
export { loadApp, checkApp, type App, type AppOptions, type Endpoint, type RouteRow } from './app/index.js';
export { createServer, createLogger, type LanewayServer, type ServerOptions, type LogFormat } from './http/index.js';
export { LanewayError, BuildError, formatDiagnostic, type Diagnostic } from './diag/index.js';
