/** Serving an App over HTTP. */
export { createServer, type LanewayServer, type ServerOptions } from './server.js';
export { normalizeAllowedHost } from './host-rule.js';
export { TrustedProxies } from './proxy.js';
export { createHandler, readBody, send, type ObservedRequest, type RequestHandler, type RequestObserver } from './handler.js';
export { dispatch, type Dispatched, type Exchange } from './dispatch.js';
export { inject, type InjectRequest, type InjectResponse } from './inject.js';
export { createLogger, type Logger, type LogFormat } from './log.js';
export { prefersJson } from './error-page.js';
export { HttpMetrics, mergeSnapshots, renderMetrics, requestCount, serveMetrics, type MetricFamily, type MetricsServer, type MetricsSnapshot } from './metrics.js';
