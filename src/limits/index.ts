/**
 * Limits per visitor (docs/security.md "Limits per visitor"): the rules of `limits:` in /🎛.yaml
 * (rules.ts) and their counters in the app's store, shared by every process (limiter.ts).
 */
export { Limiter, visitorKey, type Refusal } from './limiter.js';
export { readVisitorLimits, ruleFor, LIMIT_DEFAULTS, LIMIT_KINDS, VISITOR_LIMIT_KEYS, NO_SETTINGS, type LimitKind, type LimitRule, type Rate, type VisitorLimits } from './rules.js';
