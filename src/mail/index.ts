/**
 * Outgoing email (docs/email.md): the message shape and its checks, the outbox table in the app's
 * store, the transports (SMTP from LANEWAY_SMTP_URL, or `.eml` files without configuration), and
 * the worker that delivers what requests queued.
 *
 * Wiring, for the server: at start `ensureMailTables(engine)`, then
 * `new MailWorker(engine, { dataDir, transport: mailTransportFromEnv(process.env, dataDir), log }).start()`;
 * in a write request, `enqueueMail(writer, message, engine)` before the commit, and `worker.kick()`
 * after it; at shutdown `await worker.stop()` before closing the engine.
 */

// The message
export { checkMailMessage, parseMailAddress, MAX_RECIPIENTS, MAX_SUBJECT, MAX_TEXT_BYTES, type MailMessage, type MailAddress } from './message.js';

// Notifications (/📡/)
export { readNotifications, renderNotification, type NotificationDefinition } from './notification.js';

// The outbox in the store
export { ensureMailTables, enqueueMail, OUTBOX_TABLE } from './outbox.js';

// Transports
export {
  mailTransportFromEnv,
  createFileTransport,
  MailSendError,
  SMTP_PRESETS,
  type MailTransport,
  type OutgoingMail,
  type MailSent,
  type MailFailureKind,
} from './transport.js';

// Delivery
export { MailWorker, DEFAULT_MAIL_TIMINGS, type MailWorkerOptions, type MailTimings, type MailLog } from './worker.js';
