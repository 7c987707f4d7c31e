/**
 * Development sign-in (docs/users.md "Development sign-in"): named test users a developer signs in
 * as without any identity provider, for `laneway serve --dev` only.
 *
 * The test users are given to the server, never to the app: the environment variable
 * `LANEWAY_AUTH_DEV_USERS`, a comma-separated list of `Name` or `Name <e-mail>`:
 *
 *     LANEWAY_AUTH_DEV_USERS="Ada Lovelace <ada@example.test>, Bob"
 *
 * Each test user gets an id made of its name (`ada-lovelace`, `bob`): the account's subject at the
 * provider `dev` (accounts are keyed by provider and subject, as for real providers) and the last
 * segment of its sign-in path, `/__/auth/dev/ada-lovelace`. This file is pure: text in, test users
 * or a message out; the HTTP side is in src/app/services/auth.ts, the refusal without `--dev` in src/cli/.
 */

/** The environment variable that lists the test users. */
export const DEV_USERS_ENV = 'LANEWAY_AUTH_DEV_USERS';
/** The provider name test accounts are kept under (`lw__user.provider`). */
export const DEV_PROVIDER = 'dev';
/** Where a test user's sign-in starts: `POST /__/auth/dev/<id>?next=/page`. */
export const DEV_PATH_PREFIX = '/__/auth/dev/';

/** A test user. */
export interface DevUser {
  /** Made of the name: lowercase letters and digits, `-` between words (`ada-lovelace`). */
  id: string;
  name: string;
  /** The e-mail address written in `<…>`, or null. Taken as verified: nobody checks it. */
  email: string | null;
}

const EXAMPLE = `${DEV_USERS_ENV}="Ada Lovelace <ada@example.test>, Bob"`;
const NAME_MAX = 100;
const EMAIL = /^[^\s@<>,;"]+@[^\s@<>,;"]+$/;
/** `Name`, `Name <e-mail>` or `<e-mail>`. */
const ENTRY = /^([^<>]*?)\s*(?:<([^<>]*)>)?$/;

/**
 * Reads the value of `LANEWAY_AUTH_DEV_USERS`. Answers the test users, or a message saying what is
 * wrong and how to write it. Empty entries (a trailing comma) are skipped; a value with no test
 * user at all is a mistake (unset the variable instead).
 */
export function parseDevUsers(text: string): { users: DevUser[] } | { error: string } {
  const users: DevUser[] = [];
  for (const raw of text.split(',')) {
    const entry = raw.trim();
    if (entry === '') continue;
    const m = ENTRY.exec(entry);
    if (!m) return { error: `${DEV_USERS_ENV}: "${entry}" is not a test user: write a name, optionally followed by an e-mail address in <…>, and separate the test users with commas, as ${EXAMPLE}` };
    const email = m[2] === undefined ? null : m[2].trim();
    if (email !== null && !EMAIL.test(email)) return { error: `${DEV_USERS_ENV}: "${email}" in "${entry}" is not an e-mail address: write it as <name@example.test>, or leave it out` };
    const name = m[1]!.replace(/\s+/g, ' ') || email || '';
    if (/[\u0000-\u001f\u007f"]/.test(name) || name.length > NAME_MAX) return { error: `${DEV_USERS_ENV}: "${entry}" is not a test user name: use at most ${NAME_MAX} characters, without quotes or control characters` };
    const id = idOf(name);
    if (id === '') return { error: `${DEV_USERS_ENV}: the test user "${entry}" needs a name with letters or digits, as ${EXAMPLE}` };
    const twin = users.find((u) => u.id === id);
    if (twin) return { error: `${DEV_USERS_ENV}: "${twin.name}" and "${name}" are the same test user (${id}): give each test user a name of its own` };
    users.push({ id, name, email });
  }
  if (users.length === 0) return { error: `${DEV_USERS_ENV} is set but names no test user: list them, as ${EXAMPLE}, or unset it` };
  return { users };
}

/** `Ada Lovelace` → `ada-lovelace`; letters of any script are kept (`Zoë` → `zoë`). */
function idOf(name: string): string {
  return name
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '-')
    .replace(/^-+/, '')
    .slice(0, 64)
    .replace(/-+$/, '');
}
