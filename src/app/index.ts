/** Loading an app directory into routes and compiled endpoints. */
export { loadApp, checkApp, parseParamDefinition, type App, type AppOptions, type RouteRow, type ParamDefinition } from './load.js';
export { classifyFile, isPrivatePath, isPrivateDir, type ClassifiedFile, type FileKind } from './classify.js';
export { Asset, contentTypeOf, type Endpoint, type EndpointKind, type Reply, type RequestInfo } from './endpoint.js';
export type { ErrorPage } from './compile.js';
