/** Codes of users: the 👤.yaml files, roles and permissions, and the `👤:` key of endpoint configurations (src/auth/). */
export const AUTH_CODES = {
  LW_AUTH_FILE: 'A 👤.yaml is not a map of keys (auth:, providers:, default: and role names).',
  LW_AUTH_UNKNOWN_KEY: 'A key of a 👤.yaml that is neither auth:, providers:, default: nor a role name (which starts with an uppercase letter).',
  LW_AUTH_NO_ROOT: 'A 👤.yaml in a sub-directory, but none at the root: users are turned on by /👤.yaml, so the file does nothing.',
  LW_AUTH_MODE: 'The auth: of a 👤.yaml is not inherit, none, required or optional.',
  LW_AUTH_PROVIDERS: 'providers: is not a list of lowercase provider names, names one twice, or is written outside /👤.yaml.',
  LW_AUTH_ROLE_NAME: 'A role name is not an identifier that starts with an uppercase letter (such as Owner).',
  LW_AUTH_ROLE_UNDECLARED: 'A sub-directory 👤.yaml or an endpoint configuration names a role that /👤.yaml does not declare.',
  LW_AUTH_ROLE_VALUE: 'A role is not `all`, `none` or a map of resources to operations.',
  LW_AUTH_RESOURCE: 'A permission names a resource that does not exist: a model, field or embedded type the definitions under /📦/ do not have, or a malformed name.',
  LW_AUTH_OPERATION: 'A permission names an operation other than all, access, read, create, update, delete, state, list and none, or uses none outside /👤.yaml.',
  LW_AUTH_NONE_COVERED: 'A resource of a role is given `none` while a broader resource of the same role grants operations, which still apply to it (permissions are only granted).',
  LW_AUTH_ENDPOINT: 'The 👤: key of an endpoint configuration is not a role name, a list of role names, or a map with as: and only:.',
  LW_AUTH_ENDPOINT_KEY: 'An endpoint configuration has a key other than 👤:; it is ignored.',
} as const;
