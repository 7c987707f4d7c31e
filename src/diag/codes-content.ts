/** Codes of static models under /🗄/, Markdown rendering and content sites (src/content). */
export const CONTENT_CODES = {
} as const;
