/** Codes of static models under /🗄/, Markdown rendering and content sites (src/content). */
export const CONTENT_CODES = {
  LW_CONTENT_DEFINITION: 'A file directly in /🗄/ is not a static model definition, or a static model has two document fields of one kind.',
  LW_CONTENT_DOCUMENT: 'A document under /🗄/<Model>/ breaks its definition: an unknown or missing field, a wrong value, a path that is not a date, a uid claimed twice.',
} as const;
