/**
 * Content sites (docs/content.md): static models under `/🗄/` with their documents, read and checked at
 * load (documents.ts), and the in-memory backend of the query API (query.ts); the Markdown
 * renderer (markdown.ts, slug.ts) and the rich-text values views read (rich-text.ts); the
 * properties of `/🎨.scss` (properties.ts).
 */
export { readStaticContent, dateFromPath, STATIC_ROOT, type StaticContent, type StaticDocument } from './documents.js';
export { DocumentIndex, type DocumentQuery } from './query.js';
export { renderMarkdown, markdownText, markdownSections, htmlMarkdown, parseRenderOptions, type MarkdownOptions, type MarkdownSection, type RenderContext } from './markdown.js';
export { RichText, RichTextRenderer } from './rich-text.js';
export { readProperties, camelCase, PROPERTIES_FILE, AppProperties, type Property, type PropertyCall, type PropertyVerdict, type PropertiesOptions } from './properties.js';
export { readConnectors, Connectors, CONNECTORS_FILE, type ConnectorOptions } from './connectors.js';
export { resolveSource, lookupSource, normalizeSourceUrl, sourceName, isSourceUrl, parseSourceArgument, parseSourcesVariable, sourcesFromCommandLine, parseSourcesFile, readSourcesFile, localSourceDirs, SOURCES_FILE, type SourcesMap, type SourceResolution } from './sources.js';
