/**
 * What a value check answers (values.ts, and checkHtml in rich.ts): the value to store, or a
 * message that completes a sentence about the field.
 */
export type ValueResult<T = unknown> = { ok: true; value: T } | { ok: false; message: string };
