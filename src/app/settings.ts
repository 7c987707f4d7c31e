/**
 * The app's settings in `/🎛.yaml` that change how Laneway serves it (docs/security.md,
 * docs/scripting.md): `csp:` (policy options), `limits:` (the request budget of scripts) and
 * `trusted-origins:` (origins allowed to send unsafe requests across sites).
 */
import { parse as parseYaml } from 'yaml';
import { parseCspSettings, type CspSettings } from '../csp/index.js';
import type { DiagnosticList } from '../diag/index.js';
import type { ScriptLimits } from '../script/index.js';
import type { SourceTree } from '../shared/index.js';

export interface AppSettings {
  csp: CspSettings;
  /** Overrides of the script limits (DEFAULT_LIMITS), for every script and view of the app. */
  limits: Partial<ScriptLimits>;
  /** Origins (`https://example.com`) whose cross-site POST/PUT/PATCH/DELETE requests are accepted. */
  trustedOrigins: string[];
}

/** `limits:` keys → ScriptLimits fields, with the largest value an app may set. */
const LIMIT_KEYS: Record<string, { field: keyof ScriptLimits; max: number }> = {
  'cpu-ms': { field: 'cpuMs', max: 60_000 },
  'string-length': { field: 'maxStringLength', max: 100_000_000 },
  'array-length': { field: 'maxArrayLength', max: 10_000_000 },
  depth: { field: 'maxDepth', max: 2_000 },
  'memory-mb': { field: 'memoryMb', max: 4_096 },
};

export function readSettings(tree: SourceTree, diagnostics: DiagnosticList): AppSettings {
  const file = '/🎛.yaml';
  const source = tree.read(file);
  let data: unknown;
  if (source !== undefined) {
    try {
      data = parseYaml(source);
    } catch {
      // A manifest that does not parse is reported by whoever reads the manifest as a whole.
    }
  }
  const root = data !== null && typeof data === 'object' && !Array.isArray(data) ? (data as Record<string, unknown>) : {};
  const at = (key: string): number => (source === undefined ? 0 : Math.max(0, source.search(new RegExp(`^${key}\\s*:`, 'm'))));
  const csp = parseCspSettings(root.csp, (message, severity = 'error') => diagnostics.add(severity, 'LW_CSP_SETTINGS', message, file, source, at('csp')));

  const limits: Partial<ScriptLimits> = {};
  if (root.limits !== undefined) {
    const report = (message: string): void => diagnostics.error('LW_APP_SETTINGS', message, file, source, at('limits'));
    if (root.limits === null || typeof root.limits !== 'object' || Array.isArray(root.limits)) {
      report('`limits:` takes keys and numbers, for example `limits: {cpu-ms: 200, string-length: 2000000}`');
    } else {
      for (const [key, value] of Object.entries(root.limits)) {
        const spec = LIMIT_KEYS[key];
        if (!spec) {
          report(`\`limits: ${key}\` is not a limit: use ${Object.keys(LIMIT_KEYS).join(', ')}`);
        } else if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > spec.max) {
          report(`\`limits: ${key}\` takes a whole number from 1 to ${spec.max}`);
        } else {
          limits[spec.field] = value;
        }
      }
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
  return { csp, limits, trustedOrigins };
}
