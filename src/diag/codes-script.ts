/** Codes of the script subset compiler and runtime (src/script). */
export const SCRIPT_CODES = {} as const;
