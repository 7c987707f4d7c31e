/** Loading an app directory into routes and compiled endpoints. */
export { loadApp, checkApp, type App, type RouteRow } from './load/load.js';
export type { AppOptions } from './load/app-options.js';
export { BuildCache } from './load/build-cache.js';
export { parseParamDefinition, type ParamDefinition } from './definitions/params.js';
export { classifyFile, isPrivatePath, isPrivateDir, type ClassifiedFile, type FileKind } from './definitions/classify.js';
export { Asset, contentTypeOf, EVENT_DEFAULTS, takeFreshAssets, type Endpoint, type EndpointKind, type EventSettings, type FailureSite, type Reply, type RequestInfo } from './endpoint/endpoint.js';
export * as answers from './endpoint/answers.js';
export type { ErrorReply } from './endpoint/answers.js';
export type { ErrorPage } from './request/endpoints.js';
export type { DataOptions } from './services/data.js';
export { openAppData, closeAppData, appHasData, storeChanges, enableDevSignIn, pingStores, importAppImages } from './load/stores.js';
