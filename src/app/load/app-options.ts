import type { ChosenOptions } from '../definitions/options.js';
import type { DataBrowserAccess } from '../request/data-browser.js';
import type { BuildCache } from './build-cache.js';

/** What the embedding code (the CLI, tests, benchmarks) chooses when it loads an app. */
export interface AppOptions extends ChosenOptions {
  /**
   * Results of earlier loads of the same directory (`laneway dev`, `serve --watch`: build-cache.ts):
   * files, views and scripts that did not change are not read or compiled again. The app is the
   * same as without it.
   */
  cache?: BuildCache;
  /**
   * `--strict`: what degrades (docs/status.md "What degrades") is an error, not a warning, so
   * the app does not load with it.
   */
  strict?: boolean;
  /**
   * The data browser in production (docs/data-browser.md "In production"), at `/__/data/`: the
   * secret visitors give once, and the role they must hold. The CLI reads them from
   * `LANEWAY_DATA_BROWSER_SECRET` and `LANEWAY_DATA_BROWSER_ROLE`. Ignored in development mode,
   * which has its own browser.
   */
  dataBrowser?: DataBrowserAccess;
}
