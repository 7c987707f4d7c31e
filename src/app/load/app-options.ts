import type { ChosenOptions } from '../definitions/options.js';
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
}
