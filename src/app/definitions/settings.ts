/**
 * The app's manifest `/🎛.yaml` (docs/manifest.md): the site's `name`, `locale` and `type`, and the
 * settings that change how Laneway serves it (docs/security.md, docs/scripting.md): `csp:` (policy
 * options), `limits:` (the request budget of scripts) and `trusted-origins:` (origins allowed to
 * send unsafe requests across sites).
 */
import { parseDocument } from 'yaml';
import { parseCspSettings, type CspSettings } from '../../csp/index.js';
import type { DiagnosticList } from '../../diag/index.js';
import type { ScriptLimits } from '../../script/index.js';
import { readVisitorLimits, NO_SETTINGS, VISITOR_LIMIT_KEYS, type VisitorLimits } from '../../limits/index.js';
import { yamlToJS, type SourceTree } from '../../shared/index.js';
import type { EventSettings } from '../endpoint/endpoint.js';

export interface AppSettings {
  csp: CspSettings;
  /** Overrides of the script limits (DEFAULT_LIMITS), for every script and view of the app. */
  limits: Partial<ScriptLimits>;
  /** The limits per visitor of `limits:` (docs/security.md "Limits per visitor"): what differs from the defaults. */
  visitorLimits: VisitorLimits;
  /** Origins (`https://example.com`) whose cross-site POST/PUT/PATCH/DELETE requests are accepted. */
  trustedOrigins: string[];
  /** `name:`, the site's name; without a /🎛.yaml, the app directory's name. */
  name: string;
  /** `locale:` (default `en`): the locale messages of /🎨.scss are formatted in. */
  locale: string;
  /** `type:`; undefined for an ordinary site. A `resource` site serves no pages of its own (docs/manifest.md). */
  type: SiteType | undefined;
  /** Whether the app has a /🎛.yaml. */
  manifest: boolean;
  /** `events:`, overrides of the timings of ⏱ event streams (EVENT_DEFAULTS in endpoint.ts). */
  events?: Partial<EventSettings>;
}

/** The site types of `type:` (docs/manifest.md "Site types"). */
export type SiteType = 'connector' | 'management' | 'resource';

/** `limits:` keys → ScriptLimits fields, with the largest value an app may set. */
const LIMIT_KEYS: Record<string, { field: keyof ScriptLimits; max: number }> = {
  'cpu-ms': { field: 'cpuMs', max: 60_000 },
  'string-length': { field: 'maxStringLength', max: 100_000_000 },
  'array-length': { field: 'maxArrayLength', max: 10_000_000 },
  depth: { field: 'maxDepth', max: 2_000 },
  'memory-mb': { field: 'memoryMb', max: 4_096 },
};

/**
 * Reads /🎛.yaml. Without one, every default applies and the site's name is `defaults.name` (the
 * loader passes the app directory's name): an app needs no manifest to run.
 */
export function readSettings(tree: SourceTree, diagnostics: DiagnosticList, defaults: { name?: string } = {}): AppSettings {
  const file = '/🎛.yaml';
  const source = tree.read(file);
  let data: unknown;
  let parsed = true;
  let doc: ReturnType<typeof parseDocument> | undefined;
  if (source !== undefined) {
    doc = parseDocument(source);
    parsed = doc.errors.length === 0;
    for (const err of doc.errors) {
      const pos = err.linePos?.[0];
      if (pos) diagnostics.at('error', 'LW_APP_YAML', `YAML: ${err.message.split('\n')[0]}`, file, { line: pos.line, column: pos.col });
      else diagnostics.error('LW_APP_YAML', `YAML: ${err.message}`, file);
    }
    if (parsed) {
      const js = yamlToJS(doc);
      if ('error' in js) {
        parsed = false;
        diagnostics.error('LW_APP_YAML', js.error, file, source, js.offset);
      } else data = js.value;
    }
  }
  const root = data !== null && typeof data === 'object' && !Array.isArray(data) ? (data as Record<string, unknown>) : {};
  const at = (key: string): number => (source === undefined ? 0 : Math.max(0, source.search(new RegExp(`^${key}\\s*:`, 'm'))));
  const csp = parseCspSettings(root.csp, (message, severity = 'error') => diagnostics.add(severity, 'LW_CSP_SETTINGS', message, file, source, at('csp')));

  const limits: Partial<ScriptLimits> = {};
  let visitorLimits = NO_SETTINGS;
  if (root.limits !== undefined) {
    // A problem is reported at the value it is about (the node's start in the YAML), else at `limits:`.
    const offsetOf = (path: string[]): number => {
      const node = doc?.getIn(['limits', ...path], true) as { range?: [number, number, number] } | undefined;
      return node?.range?.[0] ?? at('limits');
    };
    const report = (message: string, path: string[] = []): void => diagnostics.error('LW_APP_SETTINGS', message, file, source, path.length ? offsetOf(path) : at('limits'));
    if (root.limits === null || typeof root.limits !== 'object' || Array.isArray(root.limits)) {
      report('`limits:` takes keys and numbers, for example `limits: {cpu-ms: 200, string-length: 2000000}`');
    } else {
      const visitor: Array<[string, unknown]> = [];
      for (const [key, value] of Object.entries(root.limits)) {
        const spec = LIMIT_KEYS[key];
        if (VISITOR_LIMIT_KEYS.has(key)) {
          visitor.push([key, value]);
        } else if (!spec) {
          report(`\`limits: ${key}\` is not a limit: use ${[...Object.keys(LIMIT_KEYS), ...VISITOR_LIMIT_KEYS].join(', ')}`, [key]);
        } else if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > spec.max) {
          report(`\`limits: ${key}\` takes a whole number from 1 to ${spec.max}`, [key]);
        } else {
          limits[spec.field] = value;
        }
      }
      visitorLimits = readVisitorLimits(visitor, report);
    }
  }

  const trustedOrigins: string[] = [];
  const trusted = root['trusted-origins'];
  if (trusted !== undefined) {
    const report = (message: string): void => diagnostics.error('LW_APP_SETTINGS', message, file, source, at('trusted-origins'));
    if (!Array.isArray(trusted)) report('`trusted-origins:` takes a list of origins, for example `trusted-origins: [https://admin.example.com]`');
    else {
      for (const o of trusted) {
        let origin: string | undefined;
        try {
          const url = new URL(String(o));
          if ((url.protocol === 'http:' || url.protocol === 'https:') && !url.username && !url.password && url.pathname === '/' && !url.search && !url.hash) origin = url.origin;
        } catch {
          // reported below
        }
        if (origin === undefined || String(o).replace(/\/$/, '') !== origin) report(`\`trusted-origins:\` entry "${String(o)}" is not an origin: write scheme, host and port only, as \`https://admin.example.com\``);
        else trustedOrigins.push(origin);
      }
    }
  }
  const events = readEventSettings(root.events, (message) => diagnostics.error('LW_APP_SETTINGS', message, file, source, at('events')));
  const manifest = source !== undefined && parsed ? readManifest(data, root, source, diagnostics) : { name: undefined, locale: 'en', type: undefined };
  return { csp, limits, visitorLimits, trustedOrigins, name: manifest.name ?? defaults.name ?? 'app', locale: manifest.locale, type: manifest.type, manifest: source !== undefined, ...(events && { events }) };
}

/** Every top-level key of /🎛.yaml (docs/manifest.md says what each does). */
const MANIFEST_KEYS = new Set(['name', 'locale', 'app', 'domain', 'path', 'type', 'csp', 'limits', 'trusted-origins', 'events']);
const SITE_TYPES = new Set<SiteType>(['connector', 'management', 'resource']);
/** A language, an optional script and an optional region: `en`, `en-US`, `de-DE`, `zh-Hant-TW`, `es-419`. */
const LOCALE = /^[a-z]{2,3}(?:-[A-Z][a-z]{3})?(?:-(?:[A-Z]{2}|\d{3}))?$/;

/**
 * The manifest keys (docs/manifest.md "Keys"): `name` (required), `locale`, `type`; `app`, `domain` and
 * `path` are checked and otherwise ignored (no PWA, no deployment rules in Laneway). Unknown keys
 * are warnings.
 */
function readManifest(
  data: unknown,
  root: Record<string, unknown>,
  source: string,
  diagnostics: DiagnosticList,
): { name: string | undefined; locale: string; type: SiteType | undefined } {
  const file = '/🎛.yaml';
  const at = (key: string): number => Math.max(0, source.search(new RegExp(`^${key.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*:`, 'm')));
  // A manifest without a name is a warning, not an error: manifests written for earlier versions
  // of Laneway held only settings (limits:, csp:), and those apps must keep loading.
  const noName = 'the manifest has no `name:`; every /🎛.yaml names its site, as `name: My site` (meanwhile the site takes its directory\'s name)';
  if (data === null || data === undefined || typeof data !== 'object' || Array.isArray(data)) {
    if (data !== null && data !== undefined) diagnostics.error('LW_SETTINGS_MANIFEST', '/🎛.yaml is a map of keys, such as `name: My site`', file, source, 0);
    else diagnostics.warn('LW_SETTINGS_NAME', noName, file, source, 0);
    return { name: undefined, locale: 'en', type: undefined };
  }
  let name: string | undefined;
  if (root.name === undefined || root.name === null) {
    diagnostics.warn('LW_SETTINGS_NAME', noName, file, source, 0);
  } else if (typeof root.name !== 'string' || root.name.trim() === '') {
    diagnostics.error('LW_SETTINGS_NAME', '`name:` is the site\'s name as text, such as `name: My site` (quote it if it looks like a number)', file, source, at('name'));
  } else {
    name = root.name.trim();
  }

  let locale = 'en';
  if (root.locale !== undefined) {
    const value = typeof root.locale === 'string' ? root.locale.trim() : undefined;
    if (value === undefined || !LOCALE.test(value)) {
      let hint = '';
      try {
        const canonical = value === undefined ? undefined : Intl.getCanonicalLocales(value.replace(/_/g, '-'))[0];
        if (canonical && LOCALE.test(canonical)) hint = `; did you mean ${canonical}?`;
      } catch {
        // not a tag at all
      }
      diagnostics.error('LW_SETTINGS_LOCALE', `\`locale: ${String(root.locale)}\` is not a language tag: write a language, optionally with a region, as en, en-US or de-DE${hint}`, file, source, at('locale'));
    } else {
      locale = value;
      if (Intl.PluralRules.supportedLocalesOf([value]).length === 0) {
        diagnostics.warn('LW_SETTINGS_LOCALE', `this Node.js has no data for the locale ${value}: messages are formatted with its default locale`, file, source, at('locale'));
      }
    }
  }

  let type: SiteType | undefined;
  if (root.type !== undefined && root.type !== null) {
    if (typeof root.type === 'string' && SITE_TYPES.has(root.type as SiteType)) type = root.type as SiteType;
    else diagnostics.error('LW_SETTINGS_VALUE', `\`type: ${String(root.type)}\` is not a site type: leave it out for an ordinary site, or write connector, management or resource`, file, source, at('type'));
  }
  for (const key of ['app', 'domain', 'path']) {
    if (root[key] !== undefined && typeof root[key] !== 'boolean') {
      diagnostics.error('LW_SETTINGS_VALUE', `\`${key}:\` is true or false, not ${JSON.stringify(root[key])}`, file, source, at(key));
    }
  }
  for (const key of Object.keys(root)) {
    if (MANIFEST_KEYS.has(key) || (key === 'rest-api' && type === 'connector')) continue;
    diagnostics.warn('LW_SETTINGS_UNKNOWN_KEY', `\`${key}:\` is not a manifest key Laneway knows; it is ignored (the keys are ${[...MANIFEST_KEYS].join(', ')})`, file, source, at(key));
  }
  return { name, locale, type };
}

/** `events:` keys of /🎛.yaml → EventSettings fields, with the values an app may set. */
const SETTING_KEYS: Record<string, { field: keyof EventSettings; min: number; max: number }> = {
  'poll-ms': { field: 'pollMs', min: 10, max: 600_000 },
  'keep-alive-ms': { field: 'keepAliveMs', min: 10, max: 600_000 },
  'idle-timeout-ms': { field: 'idleTimeoutMs', min: 10, max: 86_400_000 },
  'max-duration-ms': { field: 'maxDurationMs', min: 10, max: 86_400_000 },
  'cpu-ms': { field: 'cpuMs', min: 1, max: 60_000 },
  'max-streams': { field: 'maxStreams', min: 1, max: 1_000_000 },
};

/** Reads the `events:` value of /🎛.yaml (undefined when absent); `report` gets each problem. */
export function readEventSettings(value: unknown, report: (message: string) => void): Partial<EventSettings> | undefined {
  if (value === undefined) return undefined;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    report('`events:` takes keys and numbers, for example `events: {poll-ms: 500, idle-timeout-ms: 60000}`');
    return undefined;
  }
  const settings: Partial<EventSettings> = {};
  for (const [key, v] of Object.entries(value)) {
    const spec = SETTING_KEYS[key];
    if (!spec) report(`\`events: ${key}\` is not an event-stream setting: use ${Object.keys(SETTING_KEYS).join(', ')}`);
    else if (typeof v !== 'number' || !Number.isInteger(v) || v < spec.min || v > spec.max) report(`\`events: ${key}\` takes a whole number of milliseconds from ${spec.min} to ${spec.max}`);
    else settings[spec.field] = v;
  }
  return settings;
}
