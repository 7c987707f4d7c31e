/**
 * The catalogue of diagnostic and error codes, `LW_<AREA>_<WHAT>`, each with a one-line meaning.
 * Every code here has a heading in docs/errors.md (a test checks it). Each area keeps its codes in
 * its own file so the areas can grow independently.
 */
import { APP_CODES } from './codes-app.js';
import { TEMPLATE_CODES } from './codes-template.js';
import { SCRIPT_CODES } from './codes-script.js';
import { CSP_CODES } from './codes-csp.js';
import { MODEL_CODES } from './codes-models.js';
import { CONTENT_CODES } from './codes-content.js';
import { EVENTS_CODES } from './codes-events.js';
import { SETTINGS_CODES } from './codes-settings.js';
import { FORM_CODES } from './codes-forms.js';
import { SESSION_CODES } from './codes-session.js';
import { MAIL_CODES } from './codes-mail.js';
import { IMAGE_CODES } from './codes-images.js';
import { AUTH_CODES } from './codes-auth.js';
import { DEV_CODES } from './codes-dev.js';
import { SERVE_CODES } from './codes-serve.js';

export const CODES = { ...APP_CODES, ...TEMPLATE_CODES, ...SCRIPT_CODES, ...CSP_CODES, ...MODEL_CODES, ...CONTENT_CODES, ...EVENTS_CODES, ...SETTINGS_CODES, ...SESSION_CODES, ...FORM_CODES, ...MAIL_CODES, ...IMAGE_CODES, ...AUTH_CODES, ...DEV_CODES, ...SERVE_CODES } as const;

export type Code = keyof typeof CODES;
