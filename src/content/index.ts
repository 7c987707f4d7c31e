/**
 * Content sites (issue 10): static models under `/🗄/` with their documents, read and checked at
 * load (documents.ts), and the in-memory backend of the query API (query.ts).
 */
export { readStaticContent, dateFromPath, STATIC_ROOT, type StaticContent, type StaticDocument } from './documents.js';
export { DocumentIndex, type DocumentQuery } from './query.js';
export { renderMarkdown, markdownText, markdownSections, parseRenderOptions, type MarkdownOptions, type MarkdownSection, type RenderContext } from './markdown.js';
export { RichText, RichTextRenderer } from './rich-text.js';
