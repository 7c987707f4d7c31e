/** Loading an app directory into routes and compiled endpoints. */
export { loadApp, checkApp, type App, type RouteRow } from './load.js';
export type { AppOptions } from './options.js';
export { BuildCache } from './build-cache.js';
export { parseParamDefinition, type ParamDefinition } from './params.js';
export { classifyFile, isPrivatePath, isPrivateDir, type ClassifiedFile, type FileKind } from './classify.js';
export { Asset, contentTypeOf, takeFreshAssets, type Endpoint, type EndpointKind, type EventSettings, type Reply, type RequestInfo } from './endpoint.js';
export { EVENT_DEFAULTS } from './events.js';
export * as answers from './answers.js';
export type { ErrorReply } from './answers.js';
export type { ErrorPage } from './compile.js';
export type { DataOptions } from './data.js';
export { openAppData, closeAppData, appHasData } from './stores.js';
