/**
 * What the embedding code (the CLI, tests, benchmarks) chooses when it loads an app, but for the
 * build cache (load/app-options.ts `AppOptions`).
 */
export interface ChosenOptions {
  /** Development mode: error answers carry their details (the page, JSON fields; docs/errors.md "Error answers"). */
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
}

/** The options of one load with their defaults, as the loader and the compilers read them. */
export type LoadOptions = Required<ChosenOptions>;
