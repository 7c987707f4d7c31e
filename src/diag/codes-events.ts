/** Codes of server-sent events ⏱ (src/app/events.ts). */
export const EVENTS_CODES = {
} as const;
