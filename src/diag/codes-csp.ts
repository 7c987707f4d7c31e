/** Codes of the Content-Security-Policy builder and static assets (src/csp, src/assets). */
export const CSP_CODES = {} as const;
