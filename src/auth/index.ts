/**
 * Users (docs/users.md; `👤:` of endpoints: docs/permissions.md "Endpoint configuration"): the pure
 * part. `readAuthConfig` reads every 👤.yaml of an app into a checked AuthConfig (users on or off,
 * auth mode per directory, providers, roles, grants checked against the models); `readEndpointAuth`
 * reads the `👤:` key of an endpoint configuration; and `permissionScope` / `permissionsFor` compile
 * the grants into the effective permissions a request checks. Sign-in, sessions of users and
 * profiles live elsewhere.
 */
export {
  readAuthConfig,
  readEndpointAuth,
  OPERATIONS,
  type AuthConfig,
  type AuthFile,
  type AuthFileSource,
  type AuthMode,
  type AuthProvider,
  type DeclaredAuthMode,
  type EndpointAuth,
  type Grant,
  type Operation,
  type ReadAuthOptions,
  type Resource,
  type RoleDeclaration,
} from './config.js';
export {
  permissionScope,
  permissionsFor,
  isStateField,
  STATE_FIELDS,
  PermissionScope,
  type PermissionTarget,
  type Permissions,
  type RoleSet,
} from './permissions.js';
export { UserStore, SIGNIN_TTL_MS, ATTEMPT_TTL_MS, type SignedInUser, type ProviderAccount, type SignInAttempt } from './users.js';
export { createOidcClient, createGoogleClient, GOOGLE_ISSUER, type OidcClient, type OidcClientOptions } from './oidc.js';
export { createGitHubClient, type GitHubClient, type GitHubClientOptions } from './github.js';
export { AuthError, type AuthErrorCode, type AuthProfile, type SignInChecks, type SignInClient, type SignInStep } from './errors.js';
export { RequestPermissions, type ContainerKey, type ProfileRoles } from './request.js';
export { parseDevUsers, DEV_USERS_ENV, DEV_PROVIDER, DEV_PATH_PREFIX, type DevUser } from './dev.js';
export { providerEndpoints, type ProviderEndpoints } from './endpoints.js';
