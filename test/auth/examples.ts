/**
 * The example app of docs/permissions.md and docs/users.md. The tests read these texts, and a test
 * checks that the docs show them verbatim, so the examples in the docs are the ones tested.
 */

export const ROOT = `providers:
  - google
  - github

auth: required

default:
  📦.Member: access
  📦.TeamMember: access, list
  👤.User.name: read
  👤.User.picture: read
  stripe.com: read

Admin: all

TeamOwner:
  📦.Team: all
  📦.TeamMember: all
  📦.Board: all

Editor: none

Reviewer:
  📦: read, list
  📦.Board.status: state
  📦.Board.Address: update
`;

export const TEAM = `default:
  📦.Team: access, read
`;

export const BOARDS = `Editor:
  📦.Board: access, read, update
`;

export const AUTH_AREA = `auth: optional
`;

export const ASSETS = `auth: none
`;

/** The example app's 👤.yaml files. */
export const APP = {
  '/👤.yaml': ROOT,
  '/teams/{team}/👤.yaml': TEAM,
  '/teams/{team}/boards/👤.yaml': BOARDS,
  '/auth/👤.yaml': AUTH_AREA,
  '/assets/👤.yaml': ASSETS,
};

/** A public site with a private area (docs/users.md). */
export const PUBLIC_ROOT = `auth: optional

providers: [google, corp]
`;

export const PRIVATE_AREA = `auth: required

default:
  📦: read, list
`;

/** Endpoint configurations (docs/permissions.md). */
export const ENDPOINT_AS = `👤: TeamOwner
`;

export const ENDPOINT_LIST = `👤:
  - TeamOwner
  - Reviewer
`;

export const ENDPOINT_ONLY = `👤:
  only: TeamOwner
`;
