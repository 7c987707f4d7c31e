/** Codes of outgoing email: the message checks, the outbox and its delivery worker (src/mail/). */
export const MAIL_CODES = {
  LW_MAIL_INVALID: 'An email was refused before it was queued: an address of another form, a line break in the subject or an address (header injection), a subject over 998 characters, a body over 1 MB, no recipient or more than 50: 500.',
  LW_MAIL_NOTIFICATION: 'A notification in /📡/ is malformed: a name that is not PascalCase or clashes with a model, no `🎛: default:` recipient, a subject or email.txt that is not a valid template, or a missing email.txt.',
  LW_MAIL_CONFIG: 'LANEWAY_SMTP_URL or LANEWAY_MAIL_FROM is malformed, names an unknown provider, or no sender can be found: Laneway does not start.',
  LW_MAIL_RETRY: 'A delivery attempt failed for now (a 4xx reply, the mail server unreachable, a timeout): the message stays queued and is tried again later.',
  LW_MAIL_AUTH: 'The mail server refused the user name or password of LANEWAY_SMTP_URL: messages stay queued and are tried again; fix the credentials.',
  LW_MAIL_REFUSED: 'The mail server refused a message (or some of its recipients) for good, with a 5xx reply: it is recorded in the outbox and not tried again.',
  LW_MAIL_GAVE_UP: 'A message could not be delivered after about 24 hours of attempts: it is recorded in the outbox as failed and not tried again.',
  LW_MAIL_OUTBOX: 'The delivery worker could not read or update the outbox table (the database is unavailable): it tries again at its next poll.',
} as const;
