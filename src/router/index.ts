/** File-based routing: which URL a file answers, and the request-time lookup table. */
export {
  parseRouteFile,
  formatPattern,
  isScriptEndpointName,
  isMiscasedVerbName,
  scriptNamesFor,
  paramName,
  type Method,
  type RouteKind,
  type RouteSpec,
  type Segment,
} from './route-file.js';
export { splitPath, type SplitPath } from './request-path.js';
export { createRouter, allowHeader, type Router, type MatchResult, type ParamValue, type ParamAccepts } from './router.js';
