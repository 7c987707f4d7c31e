/** Codes of the Mustache view compiler and renderer (src/template). */
export const TEMPLATE_CODES = {} as const;
