/** Codes of server-sent events ⏱ (src/app/request/events.ts). */
export const EVENTS_CODES = {
  LW_EVENTS_TOO_MANY: 'An event stream was refused (503): the app has `events: max-streams` streams open already.',
  LW_EVENTS_NOT_A_FUNCTION: 'A ⏱ script does not end with a function (lastEventId) => [events]: a build error when its last expression plainly is not one, else 500.',
  LW_EVENTS_BAD_RESULT: 'The polled function of a ⏱ script returned something other than an array, or an element with a malformed $event: the stream ends with an exception event.',
  LW_EVENTS_POLL_FAILED: 'The polled function of a ⏱ script threw or failed: the stream ends with an exception event.',
} as const;
