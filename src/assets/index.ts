/**
 * Static assets: SCSS compilation, content fingerprints, `📌` pins and private-file inlining
 * (docs/assets.md). The loader builds one AssetCatalog per load and wires it to the page pass
 * of `src/csp` (rewrite and inline hooks).
 */
export {
  AssetCatalog,
  checkInlineText,
  contentHash8,
  fingerprintPath,
  IMMUTABLE,
  PIN,
  PIN_ORIGIN,
  PINNED,
  resolveReference,
  unpinnedPath,
  type CatalogFile,
  type CatalogOptions,
  type ServedAsset,
} from './catalog.js';
export { persistStylesheets, sassCompiles, ScssCompiler, type ScssSource } from './scss.js';
