/**
 * Notifications (docs/email.md "Notifications"): `/📡/Name.yaml` declares the fields of a message to
 * the site's owner (model syntax) and, in its `🎛:` block, the recipient (`default`) and a Mustache
 * subject over the fields; `/📡/Name/email.txt` is the Mustache body. Read and compiled at load,
 * every problem reported at its file and line; at run time a submitted notification is rendered
 * into a plain MailMessage and queued like any other e-mail.
 *
 *     🎛:
 *       default: sales@example.com
 *       subject: "Sales contact: {{firstName}} {{lastName}}"
 *     firstName: string
 *     content: {type: markdown, max: 2000}
 */
import type { Node } from 'yaml';
import { isScalar } from 'yaml';
import type { DiagnosticList } from '../diag/index.js';
import { parseDefinition, type ModelDefinition, type ModelKind } from '../models/index.js';
import type { SourceTree } from '../shared/index.js';
import { compile, TemplateSyntaxError, type Template } from '../template/index.js';
import { checkMailMessage, parseMailAddress, type MailMessage } from './message.js';

const ROOT = '/📡';
const NAME = /^[A-Z][A-Za-z0-9]*$/;

/** One notification type, compiled. */
export interface NotificationDefinition {
  name: string;
  file: string;
  /** The fields (model syntax; no id, created or modified). */
  model: ModelDefinition;
  /** `🎛: default:` — where the notification goes. */
  to: string;
  subject: Template;
  body: Template;
}

/**
 * Reads `/📡/`: every `<Name>.yaml` with its `<Name>/email.txt`. `known` are the app's model names
 * (a notification field may link to a record). Problems go to `diagnostics`; the map holds the
 * notifications that compiled.
 */
export function readNotifications(
  tree: SourceTree,
  diagnostics: DiagnosticList,
  known: ReadonlyMap<string, ModelKind>,
  dirs: readonly string[] = [],
): Map<string, NotificationDefinition> {
  const out = new Map<string, NotificationDefinition>();
  const names = (tree.list(ROOT + '/') ?? []).filter((n) => !n.startsWith('.'));
  for (const dir of dirs) {
    if (!dir.startsWith(ROOT + '/')) continue;
    const rest = dir.slice(ROOT.length + 1);
    if (rest.includes('/') || rest.startsWith('.')) continue;
    if (!names.includes(`${rest}.yaml`)) diagnostics.error('LW_MAIL_NOTIFICATION', `${dir}/ holds the message of a notification, but there is no ${dir}.yaml defining its fields: add it`, dir);
  }
  for (const entry of names) {
    const file = `${ROOT}/${entry}`;
    if (!entry.endsWith('.yaml')) {
      diagnostics.error('LW_MAIL_NOTIFICATION', `${entry} is not a notification: /📡/ holds <Name>.yaml definitions and their <Name>/email.txt messages`, file);
      continue;
    }
    const name = entry.slice(0, -'.yaml'.length);
    if (!NAME.test(name)) {
      diagnostics.error('LW_MAIL_NOTIFICATION', `a notification is named like a model, starting with a capital letter and using letters and digits only (ContactSales.yaml); rename ${entry}`, file);
      continue;
    }
    if (known.has(name)) {
      diagnostics.error('LW_MAIL_NOTIFICATION', `${name} is already a model in /📦/; give the notification another name`, file);
      continue;
    }
    const source = tree.read(file) ?? '';
    const settings: { to?: string; toBad?: boolean; subject?: string; subjectNode?: Node } = {};
    const definition = parseDefinition({ name, kind: 'content', file }, source, {
      diagnostics,
      known,
      inline: new Map(),
      setting: (key, value) => {
        const text = isScalar(value) && typeof value.value === 'string' ? value.value : undefined;
        if (key === 'default') {
          if (text === undefined || parseMailAddress(text) === undefined) {
            settings.toBad = true;
            return 'default: is the address the notification is sent to, such as `default: sales@example.com`';
          }
          settings.to = text;
          return undefined;
        }
        if (key === 'subject') {
          if (text === undefined) return 'subject: is a line of text, Mustache over the fields: `subject: "Contact: {{firstName}}"`';
          settings.subject = text;
          settings.subjectNode = value!;
          return undefined;
        }
        return `unknown setting "${key}" in the 🎛: block of a notification; it takes default: (the recipient) and subject:`;
      },
    });
    if (!definition) continue;
    const model: ModelDefinition = { ...definition, fields: definition.fields.filter((f) => !f.builtIn) };
    let ok = true;
    if (settings.to === undefined) {
      if (!settings.toBad) diagnostics.error('LW_MAIL_NOTIFICATION', `${name} has no recipient: add \`🎛: {default: you@example.com}\``, file, source, 0);
      ok = false;
    }
    const subjectText = settings.subject ?? name;
    let subject: Template | undefined;
    try {
      subject = compile(subjectText, { text: true });
    } catch (e) {
      if (!(e instanceof TemplateSyntaxError)) throw e;
      diagnostics.error('LW_MAIL_NOTIFICATION', `the subject of ${name} is not a valid template: ${e.message}`, file, source, settings.subjectNode?.range?.[0] ?? 0);
      ok = false;
    }
    const bodyFile = `${ROOT}/${name}/email.txt`;
    const bodySource = tree.read(bodyFile);
    let body: Template | undefined;
    if (bodySource === undefined) {
      diagnostics.error('LW_MAIL_NOTIFICATION', `${name} has no message: write its body in ${bodyFile} (Mustache over the fields, such as {{firstName}})`, file, source, 0);
      ok = false;
    } else {
      try {
        body = compile(bodySource, { text: true });
      } catch (e) {
        if (!(e instanceof TemplateSyntaxError)) throw e;
        diagnostics.error('LW_MAIL_NOTIFICATION', `the message of ${name} is not a valid template: ${e.message.replace(/ \(\d+:\d+\)$/, '')}`, bodyFile, bodySource, e.offset);
        ok = false;
      }
    }
    for (const other of tree.list(`${ROOT}/${name}/`) ?? []) {
      if (other !== 'email.txt' && !other.startsWith('.')) diagnostics.warn('LW_MAIL_NOTIFICATION', `${other} is not used: a notification's message is email.txt`, `${ROOT}/${name}/${other}`);
    }
    if (ok) out.set(name, { name, file, model, to: settings.to!, subject: subject!, body: body! });
  }
  return out;
}

/**
 * The message of a submitted notification: `values` are its fields' values (plain data), read by
 * the subject and body templates. The subject is one line (line breaks a value brings become
 * spaces). Throws LW_MAIL_INVALID for a message Laneway refuses.
 */
export function renderNotification(n: NotificationDefinition, values: Readonly<Record<string, unknown>>): MailMessage {
  const data: Record<string, unknown> = Object.create(null);
  for (const f of n.model.fields) data[f.name] = values[f.name] ?? null;
  const subject = n.subject.render(data).replace(/[\r\n]+/g, ' ').trim();
  return checkMailMessage({ to: [n.to], subject, text: n.body.render(data) });
}
