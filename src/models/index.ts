/**
 * Model definitions (`/📦/`, docs/models.md): read and checked into a ModelSchema at load,
 * with every problem reported at its YAML line and column; and the per-type value checks that
 * forms and scripts run before storing. Storage is src/store/; the scripting API and queries are
 * the realm's model runtime (docs/architecture.md "Models at run time").
 */
export { readModelDefinitions, type ReadModelOptions } from './read.js';
export { parseDefinition, type ModelHeader, type ParseContext } from './fields.js';
export {
  labelFromName,
  FIELDS_MAX,
  LIST_MAX,
  NAME_MAX,
  type FieldDefinition,
  type FieldType,
  type ModelDefinition,
  type ModelKind,
  type ModelSchema,
  type OptionValue,
  type SourcePosition,
  type ValueType,
} from './schema.js';
export {
  checkFieldValue,
  checkString,
  checkBoolean,
  checkInteger,
  checkDouble,
  checkTimestamp,
  checkDate,
  checkOption,
  checkCountry,
  checkMap,
  checkGeo,
  checkUid,
  checkHierarchy,
  checkSvgIcon,
  checkHtmlLength,
  checkMarkdownLength,
  type Bounds,
  type GeoValue,
  type MapValue,
} from './values.js';
export type { ValueResult } from './value-result.js';
export { COUNTRY_CODES } from './countries.js';
export { parseHierarchy, hierarchyNext, hierarchyPrevious, hierarchyParent, hierarchyHasParent, hierarchyBefore, hierarchyAfterLast, hierarchyCompare, hierarchySortKey } from './hierarchy.js';
export { sanitizeHtml, checkHtml, htmlInputLimit, renderMarkdown, readRichTree, writeRichTree, type RichElement, type RichNode } from './rich.js';
