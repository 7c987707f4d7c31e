import type { BuildCache } from './build-cache.js';

/** What the embedding code (the CLI, tests, benchmarks) chooses when it loads an app. */
export interface AppOptions {
  /** Development mode: a failing view's error shown on its 500 page (visible text), log more. */
  dev?: boolean;
  /** Largest request body accepted, in bytes (default 1 MiB). */
  bodyLimit?: number;
  /** Files up to this size are held in memory; larger ones are streamed (default 4 MiB). */
  memoryLimit?: number;
  /** Where run-time problems of scripts and views are logged (default: standard error). */
  log?: (message: string, fields: Record<string, unknown>) => void;
  /**
   * Content-Security-Policy headers on views and pages (default true). False is for measuring
   * the policy's cost only: pages are built the same (rewrites, inlining, build checks) but sent
   * without a policy.
   */
  csp?: boolean;
  /**
   * The local sources map (src/content/sources.ts): git URL of a connector or site → directory
   * holding a copy of it (absolute, or relative to the app directory). Laneway never fetches code;
   * a URL missing here is not available (docs/connectors.md).
   */
  sources?: Record<string, string>;
  /**
   * Results of earlier loads of the same directory (`laneway dev`, `serve --watch`: build-cache.ts):
   * files, views and scripts that did not change are not read or compiled again. The app is the
   * same as without it.
   */
  cache?: BuildCache;
}

/** The options of one load with their defaults, as the loader and the compilers read them. */
export type LoadOptions = Required<Omit<AppOptions, 'cache'>>;
