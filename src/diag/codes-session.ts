/** Codes of visitors: sessions, flash messages, cookies and form states (src/session/). */
export const SESSION_CODES = {
  LW_SESSION_SECRET: "The app's secret (LANEWAY_SECRET, or the generated `secret` file of the data directory) is missing, too short or unreadable.",
  LW_SESSION_UNAVAILABLE: "A visitor's session, messages or form state could not be read or written (the database is unavailable): 503.",
  LW_COOKIE_NAME: 'A cookie name a script writes is not allowed (`sid`, names starting with `_`, or not lower/camel case).',
  LW_SESSION_EFFECT_IN_GET: 'A GET script wrote a cookie or sent e-mail: those are effects of POST, PUT and DELETE scripts, applied when they succeed (500).',
  LW_SESSION_FORM_STATE: 'A form was posted without a valid form state of this visitor (missing, expired, of another visitor, or used already): 400, nothing written.',
} as const;
