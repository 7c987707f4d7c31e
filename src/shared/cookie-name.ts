/** The rule for names of cookies scripts write, shared by the script validator (literal names, at build) and the run time. */

/** Lower or camel case, not `_…`, not `sid` (docs/messages.md "Cookies"). */
export function cookieNameProblem(name: string): string | undefined {
  if (name === 'sid') return 'the cookie name "sid" is reserved for the visitor\'s session';
  if (name.startsWith('_')) return `the cookie name "${name}" starts with "_", which is reserved`;
  if (!/^[a-z][A-Za-z0-9]{0,63}$/.test(name)) return `"${name}" is not a cookie name: use lower or camel case letters and digits, such as "theme" or "lastVisit"`;
  return undefined;
}

