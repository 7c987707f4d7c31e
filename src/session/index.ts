/**
 * Visitors (docs/forms.md, docs/messages.md): sessions made lazily and kept in the store, flash
 * messages, cookies written by scripts, and form states bound to their visitor.
 */
export { Visitor, cookieNameProblem, secureContext, type VisitorContext, type ScriptCookie } from './visitor.js';
export { VisitorStore, FORM_TTL_MS, SESSION_TTL_MS, type Flash, type FlashMessage, type FormState, type MessageType } from './store.js';
export { Signer, randomId, randomText } from './tokens.js';
export { loadSecret } from './secret.js';
