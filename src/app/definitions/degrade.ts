/**
 * What degrades instead of stopping the app (docs/status.md "What degrades"): a file that needs a
 * feature of the hosting platform Laneway does not have answers 501, with a warning at the line
 * that needs it, and the rest of the app runs. Real mistakes stay errors: a file is degraded only
 * when every error compiling it reported is one of the "not available" verdicts noted here.
 */
import type { Code, DiagnosticList } from '../../diag/index.js';
import { PLATFORM_FEATURE } from '../endpoint/answers.js';

/** The features, as docs/status.md "Not available" names them. */
export const FEATURES = {
  platform: PLATFORM_FEATURE,
  connector: "connectors' REST APIs",
  /** Not a feature: a page importing a name no supplier in scope exports (the platform served the rest of such an app). */
  unsupplied: 'a supplier value nothing exports',
} as const;

/** A module named like a connector's domain (`'stripe.com'`): its REST API, which Laneway does not have. */
export const CONNECTOR_MODULE = /^[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+(?:\/.*)?$/;

/**
 * The "not available" verdicts of one file's compilation: each message the import check gave,
 * with the feature it needs. The compilers print a verdict inside their own message.
 */
export class UnitNeeds {
  readonly #verdicts = new Map<string, string>();

  /** Notes `verdict` as needing `feature`, and gives it back. */
  note(verdict: string, feature: string): string {
    this.#verdicts.set(verdict, feature);
    return verdict;
  }

  /** The feature a diagnostic's message says is missing, if it is one of the verdicts. */
  featureOf(message: string): string | undefined {
    for (const [verdict, feature] of this.#verdicts) if (message.endsWith(verdict)) return feature;
    return undefined;
  }
}

/**
 * Settles what compiling one file reported: the items of `list` from `start` on. When its errors
 * are all "not available" verdicts, they become warnings saying the file answers 501 (one per
 * line and feature) and the features are returned; else everything stays as it was and the
 * result is undefined. (The compilers report to the load's own list: a view's context, shared by
 * the views of a load, is kept per list.)
 */
export function settleUnit(list: DiagnosticList, start: number, needs: UnitNeeds, what = 'this file answers 501 Not Implemented'): string[] | undefined {
  const items = list.items.slice(start);
  const errors = items.filter((d) => d.severity === 'error');
  const features = errors.map((d) => needs.featureOf(d.message));
  if (errors.length === 0 || !features.every((f) => f !== undefined)) return undefined;
  list.items.length = start;
  const lines = new Set<string>();
  for (const d of items) {
    if (d.severity !== 'error') {
      list.items.push(d);
      continue;
    }
    const feature = needs.featureOf(d.message)!;
    // One warning per line and feature: `import {Build, Source} from '🔌'` says it once.
    const line = `${d.file}:${d.line}:${feature}`;
    if (lines.has(line)) continue;
    lines.add(line);
    const code: Code = feature === FEATURES.platform ? 'LW_SCRIPT_PLATFORM_MODULE' : 'LW_APP_NOT_AVAILABLE';
    const message =
      feature === FEATURES.unsupplied
        ? `${d.message}; until one does, ${what.replace('this file', 'this page')} (docs/status.md, "What degrades"), and the rest of the app runs`
        : `${d.message} (docs/status.md, "Not available": ${feature}): ${what}, and the rest of the app runs`;
    list.at('warning', code, message, d.file, { line: d.line, column: d.column });
  }
  return [...new Set(features as string[])];
}
