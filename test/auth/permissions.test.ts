/**
 * Effective permissions (src/auth/permissions.ts, docs/permissions.md): `default` plus the roles a
 * visitor holds, grants accumulated from the root down to the directory, a resource taking its own
 * grants and those of the broader resources, `all`, `none`, `state`, roles held only in a
 * container, user and connector resources. The example app is the one docs/permissions.md shows.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { permissionScope, permissionsFor, isStateField, type AuthConfig, type Operation, type PermissionTarget, type Permissions } from '../../src/auth/index.js';
import { authOf, MODELS } from './helpers.js';
import * as examples from './examples.js';

const app = (): AuthConfig => {
  const { config, problems } = authOf(examples.APP, MODELS);
  assert.deepEqual(problems, []);
  return config;
};

/** The operations `perms` allows on `target`, in catalogue order. */
const allowed = (perms: Permissions, target: PermissionTarget): string =>
  (['access', 'read', 'create', 'update', 'delete', 'state', 'list'] as Operation[]).filter((op) => perms.can(op, target)).join(',') || '-';

const board = (field?: string): PermissionTarget => (field === undefined ? { model: 'Board' } : { model: 'Board', field });

describe('effective permissions', () => {
  it('without /👤.yaml there are no users and default may do everything', () => {
    const { config } = authOf({}, MODELS);
    const perms = permissionsFor(config, '/any/where');
    assert.equal(allowed(perms, { model: 'Note' }), 'access,read,create,update,delete,state,list');
    assert.equal(perms.can('delete', { connector: 'stripe.com.charges' }), true);
    assert.equal(perms.can('read', { user: 'picture' }), true);
  });

  it('once /👤.yaml exists, default has only what it is given', () => {
    const empty = authOf({ '/👤.yaml': 'auth: none\n' }, MODELS).config;
    assert.equal(allowed(permissionsFor(empty, '/'), { model: 'Note' }), '-');
    const perms = permissionsFor(app(), '/');
    assert.equal(allowed(perms, { model: 'Member' }), 'access');
    assert.equal(allowed(perms, { model: 'TeamMember', field: 'nickname' }), 'access,list');
    assert.equal(allowed(perms, { model: 'Note' }), '-');
    assert.equal(allowed(perms, { model: 'Team' }), '-');
    assert.deepEqual(perms.roles, []);
  });

  it('sub-directory grants add to the ancestors\', for paths under them only', () => {
    const config = app();
    // default gains access, read on Team under /teams/{team}/ (and keeps it deeper down).
    assert.equal(allowed(permissionsFor(config, '/teams'), { model: 'Team' }), '-');
    assert.equal(allowed(permissionsFor(config, '/teams/{team}'), { model: 'Team' }), 'access,read');
    assert.equal(allowed(permissionsFor(config, '/teams/{team}/boards/{board}/index.html'), { model: 'Team', field: 'name' }), 'access,read');
    assert.equal(allowed(permissionsFor(config, '/teams/{team}/boards'), { model: 'TeamMember' }), 'access,list');
    // Editor is declared with none at the root and given permissions under /teams/{team}/boards/ only.
    const editor = { top: ['Editor'] };
    assert.equal(allowed(permissionsFor(config, '/', editor), board()), '-');
    assert.equal(allowed(permissionsFor(config, '/teams/{team}', editor), board()), '-');
    assert.equal(allowed(permissionsFor(config, '/teams/{team}/boards', editor), board('title')), 'access,read,update');
    assert.equal(allowed(permissionsFor(config, '/teams/{team}/boards/', editor), { model: 'Team' }), 'access,read');
  });

  it('a resource takes its own grants and the broader ones: the most specific rule is built on them', () => {
    const perms = permissionsFor(app(), '/', { top: ['Reviewer'] });
    // 📦: read, list reaches every model and field …
    assert.equal(allowed(perms, { model: 'Note' }), 'read,list');
    assert.equal(allowed(perms, board('title')), 'read,list');
    // … 📦.Board.status adds state to that field only (updating status is a change of state), and
    // 📦.Board.Address adds update to the field holding that embedded type.
    assert.equal(allowed(perms, board('status')), 'read,update,state,list');
    assert.equal(allowed(perms, board('address')), 'read,update,list');
    assert.equal(allowed(perms, board('Address')), 'read,update,list');
    assert.equal(allowed(perms, board('owner')), 'read,list');
    assert.equal(allowed(perms, board()), 'read,list');
    // A field-level grant stays on its field.
    const viewer = authOf({ '/👤.yaml': 'Viewer:\n  📦.Board.title: read\n' }, MODELS).config;
    const v = permissionsFor(viewer, '/', { top: ['Viewer'] });
    assert.equal(allowed(v, board('title')), 'read');
    assert.equal(allowed(v, board('status')), '-');
    assert.equal(allowed(v, board()), '-');
  });

  it('all is every operation; a role written `Name: all` reaches every resource', () => {
    const config = app();
    const owner = permissionsFor(config, '/', { top: ['TeamOwner'] });
    assert.equal(allowed(owner, board('status')), 'access,read,create,update,delete,state,list');
    assert.equal(allowed(owner, { model: 'Note' }), '-');
    const admin = permissionsFor(config, '/', { top: ['Admin'] });
    assert.equal(allowed(admin, { model: 'Note', field: 'text' }), 'access,read,create,update,delete,state,list');
    assert.equal(admin.can('delete', { connector: 'stripe.com.charges' }), true);
    assert.equal(admin.can('update', { user: 'name' }), true);
  });

  it('updating a field named state, status, stage or lifecycle takes state, not update', () => {
    const editor = permissionsFor(app(), '/teams/{team}/boards', { top: ['Editor'] });
    assert.equal(editor.can('update', board('title')), true);
    assert.equal(editor.can('update', board('status')), false);
    const reviewer = permissionsFor(app(), '/', { top: ['Reviewer'] });
    assert.equal(reviewer.can('update', board('status')), true);
    assert.equal(reviewer.can('update', board('title')), false);
    assert.deepEqual(['state', 'status', 'stage', 'lifecycle', 'statusText'].map(isStateField), [true, true, true, true, false]);
  });

  it('roles of the visitor\'s profile in a container count for that container\'s records only', () => {
    const scope = permissionScope(app(), '/teams/{team}');
    // The caller passes the roles of the visitor's TeamMember profile in the team the record is in.
    const inTheirTeam = scope.for({ inContainer: ['TeamOwner'] });
    const inAnotherTeam = scope.for({ inContainer: [] });
    assert.equal(inTheirTeam.can('update', { model: 'Team', field: 'name' }), true);
    assert.equal(inTheirTeam.can('delete', board()), true);
    assert.equal(inAnotherTeam.can('update', { model: 'Team', field: 'name' }), false);
    assert.equal(inAnotherTeam.can('read', { model: 'Team', field: 'name' }), true); // default, under /teams/{team}/
    // Top-level and container roles add up.
    const both = scope.for({ top: ['Reviewer'], inContainer: ['TeamOwner'] });
    assert.equal(allowed(both, { model: 'Note' }), 'read,list');
    assert.equal(allowed(both, { model: 'Team' }), 'access,read,create,update,delete,state,list');
    assert.deepEqual(both.roles, ['Reviewer', 'TeamOwner']);
  });

  it('unknown role names grant nothing; default given again changes nothing', () => {
    const scope = permissionScope(app(), '/');
    const perms = scope.for({ top: ['Ghost', 'default', 'A,Admin'] });
    assert.deepEqual(perms.roles, []);
    assert.equal(allowed(perms, { model: 'Note' }), '-');
    assert.equal(scope.for({ top: ['A,Admin'] }).can('read', { model: 'Note' }), false);
  });

  it('the user model and connector resources', () => {
    const perms = permissionsFor(app(), '/');
    assert.equal(allowed(perms, { user: 'name' }), 'read');
    assert.equal(allowed(perms, { user: 'picture' }), 'read');
    // stripe.com: read reaches every resource of the connector.
    assert.equal(allowed(perms, { connector: 'stripe.com' }), 'read');
    assert.equal(allowed(perms, { connector: 'stripe.com.charges.list' }), 'read');
    assert.equal(allowed(perms, { connector: 'example.org.items' }), '-');
    const narrow = authOf({ '/👤.yaml': 'default:\n  stripe.com.charges.list: list\n' }, MODELS).config;
    assert.equal(allowed(permissionsFor(narrow, '/'), { connector: 'stripe.com.charges.list' }), 'list');
    assert.equal(allowed(permissionsFor(narrow, '/'), { connector: 'stripe.com.charges' }), '-');
  });

  it('a model or field the schema does not know answers as the broader resource', () => {
    const perms = permissionsFor(app(), '/', { top: ['Reviewer'] });
    assert.equal(allowed(perms, { model: 'Later' }), 'read,list');
    assert.equal(allowed(perms, board('later')), 'read,list');
  });

  it('compiled once: one scope per 👤.yaml, one Permissions per role set whatever the order', () => {
    const config = app();
    assert.equal(permissionScope(config, '/teams/{team}/boards/{board}'), permissionScope(config, '/teams/{team}/boards'));
    assert.equal(permissionScope(config, '/teams/{team}/boards').dir, '/teams/{team}/boards');
    assert.equal(permissionScope(config, '/elsewhere/x').dir, '');
    const scope = permissionScope(config, '/');
    assert.equal(scope.for({ top: ['Reviewer'], inContainer: ['TeamOwner'] }), scope.for({ top: ['TeamOwner', 'Reviewer'] }));
    assert.equal(scope.for(), scope.for({ top: [] }));
    assert.notEqual(scope.for(), scope.for({ top: ['Reviewer'] }));
  });
});

describe('docs', () => {
  /** The YAML blocks of a doc (```yaml, or ```yaml file=/path), as written. */
  const blocks = (doc: string): string[] => {
    const text = readFileSync(new URL(`../../docs/${doc}`, import.meta.url), 'utf8');
    return [...text.matchAll(/^```yaml[^\n]*\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
  };

  it('docs/permissions.md and docs/users.md show the tested examples verbatim', () => {
    const permissions = blocks('permissions.md');
    for (const [name, text] of Object.entries({ ROOT: examples.ROOT, TEAM: examples.TEAM, BOARDS: examples.BOARDS, ENDPOINT_AS: examples.ENDPOINT_AS, ENDPOINT_LIST: examples.ENDPOINT_LIST, ENDPOINT_ONLY: examples.ENDPOINT_ONLY })) {
      assert.ok(permissions.includes(text), `docs/permissions.md shows ${name}`);
    }
    const users = blocks('users.md');
    for (const [name, text] of Object.entries({ AUTH_AREA: examples.AUTH_AREA, ASSETS: examples.ASSETS, PUBLIC_ROOT: examples.PUBLIC_ROOT, PRIVATE_AREA: examples.PRIVATE_AREA })) {
      assert.ok(users.includes(text), `docs/users.md shows ${name}`);
    }
  });
});
