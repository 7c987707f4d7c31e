/**
 * The limits per visitor of `limits:` in /🎛.yaml (docs/security.md "Limits per visitor"): a rate
 * per kind of request, on by default, and overrides per path prefix. Pure: read at load.
 *
 * ```yaml
 * limits:
 *   cpu-ms: 200            # a script limit (docs/scripting.md): not read here
 *   writes: 300/minute
 *   emails: 20/hour
 *   app-emails: off
 *   paths:
 *     /contact/: {writes: 5/hour, emails: 5/hour}
 * ```
 */

/** What is counted. */
export type LimitKind = 'writes' | 'emails' | 'app-emails' | 'sign-ins' | 'uploads' | 'upload-mb' | 'streams';

/** The kinds a `paths:` entry may set: those whose requests are the app's own files. */
export type PathLimitKind = 'writes' | 'emails' | 'streams';

/** At most `max` in each window of `windowMs` (a fixed window: the clock's minute, hour…). */
export interface Rate {
  max: number;
  windowMs: number;
}

/** `off` is null. */
export type RateSetting = Rate | null;

export interface VisitorLimits {
  /** The rate of each kind; a kind not set has its default (LIMIT_DEFAULTS). */
  rates: Partial<Record<LimitKind, RateSetting>>;
  /** Per path prefix, longest first: what the app's files under it count against. */
  paths: Array<{ prefix: string; rates: Partial<Record<PathLimitKind, RateSetting>> }>;
}

const MINUTE = 60_000;
const HOUR = 3_600_000;

/** Generous defaults: a person never meets them; a loop from outside does. */
export const LIMIT_DEFAULTS: Readonly<Record<LimitKind, Rate>> = Object.freeze({
  writes: { max: 300, windowMs: MINUTE },
  emails: { max: 20, windowMs: HOUR },
  'app-emails': { max: 2000, windowMs: HOUR },
  'sign-ins': { max: 30, windowMs: MINUTE },
  uploads: { max: 300, windowMs: HOUR },
  'upload-mb': { max: 1000, windowMs: HOUR },
  streams: { max: 120, windowMs: MINUTE },
});

export const LIMIT_KINDS = Object.keys(LIMIT_DEFAULTS) as LimitKind[];
const PATH_KINDS: readonly PathLimitKind[] = ['writes', 'emails', 'streams'];

/** The keys of `limits:` read here (`paths` and every kind). */
export const VISITOR_LIMIT_KEYS: ReadonlySet<string> = new Set([...LIMIT_KINDS, 'paths']);

const UNITS: Record<string, number> = { second: 1000, minute: MINUTE, hour: HOUR, day: 24 * HOUR };
const RATE = /^(\d{1,10})\s*\/\s*(second|minute|hour|day)$/;
const MAX = 1_000_000_000;

/** `300/minute` → a Rate; `off` → null; anything else → a message. */
export function parseRate(value: unknown, key: string): RateSetting | { problem: string } {
  if (value === 'off' || value === false) return null;
  const m = typeof value === 'string' ? RATE.exec(value.trim()) : null;
  const n = m ? Number(m[1]) : NaN;
  if (!m || n < 1 || n > MAX) {
    return { problem: `\`${key}: ${String(value)}\` is not a rate: write a whole number from 1 to ${MAX} per second, minute, hour or day, as \`${key}: ${LIMIT_DEFAULTS[key as LimitKind]?.max ?? 100}/${unitOf(key)}\`, or \`off\`` };
  }
  return { max: n, windowMs: UNITS[m[2]!]! };
}

function unitOf(key: string): string {
  const ms = LIMIT_DEFAULTS[key as LimitKind]?.windowMs ?? MINUTE;
  return Object.keys(UNITS).find((u) => UNITS[u] === ms) ?? 'minute';
}

/**
 * Reads the entries of `limits:` that are visitor limits (VISITOR_LIMIT_KEYS). `report` gets each
 * problem with the YAML path of the value it is about (`['paths', '/api/', 'writes']`), for its
 * line and column.
 */
export function readVisitorLimits(entries: ReadonlyArray<[string, unknown]>, report: (message: string, path: string[]) => void): VisitorLimits {
  const limits: VisitorLimits = { rates: {}, paths: [] };
  for (const [key, value] of entries) {
    if (key === 'paths') {
      readPaths(value, limits, report);
      continue;
    }
    const rate = parseRate(value, key);
    if (rate && 'problem' in rate) report(rate.problem, [key]);
    else limits.rates[key as LimitKind] = rate;
  }
  limits.paths.sort((a, b) => b.prefix.length - a.prefix.length);
  return limits;
}

function readPaths(value: unknown, limits: VisitorLimits, report: (message: string, path: string[]) => void): void {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    report('`limits: paths:` maps path prefixes to rates, for example `paths: {/contact/: {writes: 5/hour}}`', ['paths']);
    return;
  }
  for (const [prefix, rates] of Object.entries(value)) {
    if (!prefix.startsWith('/') || /[\s?#{}]/.test(prefix)) {
      report(`\`limits: paths:\` key "${prefix}" is not a path prefix: write the start of the app's paths it covers, as \`/contact/\``, ['paths', prefix]);
      continue;
    }
    if (rates === null || typeof rates !== 'object' || Array.isArray(rates)) {
      report(`\`limits: paths: ${prefix}\` takes kinds and rates, for example \`{writes: 5/hour}\``, ['paths', prefix]);
      continue;
    }
    const entry: VisitorLimits['paths'][number] = { prefix, rates: {} };
    for (const [kind, v] of Object.entries(rates)) {
      if (!PATH_KINDS.includes(kind as PathLimitKind)) {
        report(`\`limits: paths: ${prefix}: ${kind}\` cannot be set per path: use ${PATH_KINDS.join(', ')}`, ['paths', prefix, kind]);
        continue;
      }
      const rate = parseRate(v, kind);
      if (rate && 'problem' in rate) report(rate.problem, ['paths', prefix, kind]);
      else entry.rates[kind as PathLimitKind] = rate;
    }
    limits.paths.push(entry);
  }
}

/** The limits of an app without `limits:` of this kind: every default. */
export const NO_SETTINGS: VisitorLimits = Object.freeze({ rates: {}, paths: [] }) as VisitorLimits;

/** One counter an endpoint counts against, decided at load: its key in the store and its rate. */
export interface LimitRule {
  kind: LimitKind;
  /** The counter's key: the kind, and the prefix of a `paths:` entry (`writes /api/`). */
  key: string;
  /** The most per window, in what a hit counts (bytes for `upload-mb`). */
  max: number;
  windowMs: number;
  /** The rate is Laneway's default, not one `limits:` sets (defaults spare the machine itself: checkLimit). */
  byDefault?: true;
  /**
   * Units a process reserves at once on PostgreSQL (the quota lease, lease.ts): `leaseSize`. 1 is
   * one statement per hit.
   */
  lease: number;
}

/** A lease is at most this share of a rule's most (1/20: 5 %)… */
export const LEASE_SHARE = 20;
/** …and at most this many units. */
export const LEASE_MAX = 50;

/**
 * The units a process reserves at once for a rule (docs/security.md "Shared by every process"):
 * floor(max / 20), at least 1 and at most 50, so that units reserved by an instance and not
 * spent are at most 5 % of the limit per other instance; 1 for a rule of at most 39 (every default
 * of a kind a person meets: `emails`, `sign-ins`) and for `upload-mb`, whose hits are bytes.
 */
export function leaseSize(kind: LimitKind, max: number): number {
  return kind === 'upload-mb' ? 1 : Math.min(LEASE_MAX, Math.max(1, Math.floor(max / LEASE_SHARE)));
}

const rule = (kind: LimitKind, key: string, rate: Rate, byDefault = false): LimitRule => {
  const max = kind === 'upload-mb' ? rate.max * 1_048_576 : rate.max;
  return { kind, key, max, windowMs: rate.windowMs, lease: leaseSize(kind, max), ...(byDefault && { byDefault: true as const }) };
};

/**
 * The rule of `kind` for an endpoint at route `pattern` (`/api/items/{item}`): the longest `paths:`
 * prefix of it that sets the kind, else the app's rate, else the default. Undefined when `off`.
 */
export function ruleFor(limits: VisitorLimits, kind: LimitKind, pattern?: string): LimitRule | undefined {
  if (pattern !== undefined && (PATH_KINDS as readonly string[]).includes(kind)) {
    for (const p of limits.paths) {
      const rates = p.rates as Partial<Record<LimitKind, RateSetting>>;
      if (!Object.hasOwn(rates, kind) || !pattern.startsWith(p.prefix)) continue;
      const rate = rates[kind];
      return rate ? rule(kind, `${kind} ${p.prefix}`, rate) : undefined;
    }
  }
  const set = Object.hasOwn(limits.rates, kind);
  const rate = set ? limits.rates[kind] : LIMIT_DEFAULTS[kind];
  return rate ? rule(kind, kind, rate, !set) : undefined;
}
