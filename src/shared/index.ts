/**
 * Types shared by the compilers (template, script, csp) and the app loader that wires them.
 * Leaves import only this folder and `diag`.
 */
export { type SourceTree, normalizeName, normalizePath } from './source-tree.js';
export { WebSafe, isWebSafe, SAFE_HTML, safeMarkup, PLAIN_TEXT, plainText } from './web-safe.js';
export { then } from './maybe-async.js';
export { cookieNameProblem } from './cookie-name.js';
export { Passes } from './passes.js';
export { slots, bare, BARE, type Slots } from './slots.js';
export { yamlToJS, YAML_MAX_ALIASES } from './yaml.js';
export { type ClientInfo } from './client.js';
export { strongEtag, bodyDigest } from './etag.js';
export { FRESH_FORM } from './fresh-form.js';
export { utf8Bytes, ownBytes } from './utf8.js';
