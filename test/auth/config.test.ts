/**
 * 👤.yaml files read into an AuthConfig (src/auth/config.ts): users on or off, auth modes and their
 * inheritance, providers, roles and grants checked against the models — every mistake at its
 * line:column — and the `👤:` key of endpoint configurations.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DiagnosticList } from '../../src/diag/index.js';
import { readEndpointAuth, type AuthConfig } from '../../src/auth/index.js';
import { authOf, MODELS, render } from './helpers.js';
import { APP, ENDPOINT_AS, ENDPOINT_LIST, ENDPOINT_ONLY, PRIVATE_AREA, PUBLIC_ROOT, ROOT } from './examples.js';

const grantsOf = (config: AuthConfig, dir: string) =>
  config.files.find((f) => f.dir === dir)!.grants.map((g) => `${g.role} ${g.key}: ${g.ops.join(',')} @${g.at.line}:${g.at.column}`);

describe('👤.yaml', () => {
  it('reads the example app: providers, roles, grants with their positions', () => {
    const { config, problems } = authOf(APP, MODELS);
    assert.deepEqual(problems, []);
    assert.equal(config.enabled, true);
    assert.deepEqual(
      config.providers.map((p) => `${p.name} ${p.kind} @${p.at.line}:${p.at.column}`),
      ['google google @2:5', 'github github @3:5'],
    );
    assert.deepEqual([...config.roles.keys()], ['default', 'Admin', 'TeamOwner', 'Editor', 'Reviewer']);
    assert.deepEqual(config.roles.get('Editor')!.at, { file: '/👤.yaml', line: 21, column: 1 });
    assert.deepEqual(config.files.map((f) => f.dir), ['', '/assets', '/auth', '/teams/{team}', '/teams/{team}/boards']);
    assert.deepEqual(grantsOf(config, ''), [
      'default 📦.Member: access @8:3',
      'default 📦.TeamMember: access,list @9:3',
      'default 👤.User.name: read @10:3',
      'default 👤.User.picture: read @11:3',
      'default stripe.com: read @12:3',
      'Admin *: access,read,create,update,delete,state,list @14:8',
      'TeamOwner 📦.Team: access,read,create,update,delete,state,list @17:3',
      'TeamOwner 📦.TeamMember: access,read,create,update,delete,state,list @18:3',
      'TeamOwner 📦.Board: access,read,create,update,delete,state,list @19:3',
      'Reviewer 📦: read,list @24:3',
      'Reviewer 📦.Board.status: state @25:3',
      'Reviewer 📦.Board.Address: update @26:3',
    ]);
    assert.deepEqual(grantsOf(config, '/teams/{team}/boards'), ['Editor 📦.Board: access,read,update @2:3']);
    const kinds = config.files[0]!.grants.map((g) => g.resource);
    assert.deepEqual(kinds[0], { kind: 'model', model: 'Member' });
    assert.deepEqual(kinds[2], { kind: 'user', field: 'name' });
    assert.deepEqual(kinds[4], { kind: 'connector', name: 'stripe.com' });
    assert.deepEqual(kinds[5], { kind: 'all' });
    assert.deepEqual(kinds[11], { kind: 'embedded', model: 'Board', embedded: 'Address' });
  });

  it('accepts every resource form: 📦, models, fields, built-in and profile fields, embedded types, the user, connectors', () => {
    const root = [
      'Viewer:',
      '  📦: access',
      '  📦.Board: read',
      '  📦.Board.title: update',
      '  📦.Board.id: read',
      '  📦.TeamMember.role: read',
      '  📦.Member.user: read',
      '  📦.Board.Address: read',
      '  📦.Board.Contact: read',
      '  👤.User.picture: read',
      '  stripe.com.charges.list: list',
      '  "📦.Note": "read,list"',
      '',
    ].join('\n');
    const { config, problems } = authOf({ '/👤.yaml': root }, MODELS);
    assert.deepEqual(problems, []);
    assert.deepEqual(
      config.files[0]!.grants.map((g) => `${g.resource.kind} ${g.key}`),
      ['models 📦', 'model 📦.Board', 'field 📦.Board.title', 'field 📦.Board.id', 'field 📦.TeamMember.role', 'field 📦.Member.user', 'embedded 📦.Board.Address', 'embedded 📦.Board.Contact', 'user 👤.User.picture', 'connector stripe.com.charges.list', 'model 📦.Note'],
    );
  });

  it('an empty root file turns users on: default is none, the mode is none', () => {
    const { config, problems } = authOf({ '/👤.yaml': '# users on\n' }, MODELS);
    assert.deepEqual(problems, []);
    assert.equal(config.enabled, true);
    assert.deepEqual([...config.roles.keys()], ['default']);
    assert.equal(config.modeFor('/'), 'none');
  });

  it('the example layout of docs/users.md: a public site with a private area', () => {
    const { config, problems } = authOf({ '/👤.yaml': PUBLIC_ROOT, '/app/👤.yaml': PRIVATE_AREA }, MODELS);
    assert.deepEqual(problems, []);
    assert.deepEqual(config.providers.map((p) => `${p.name} ${p.kind}`), ['google google', 'corp oidc']);
    assert.equal(config.modeFor('/'), 'optional');
    assert.equal(config.modeFor('/app/settings'), 'required');
  });
});

describe('auth modes', () => {
  it('inherit resolves to the nearest file that sets a mode; the root inherits none', () => {
    const { config, problems } = authOf(APP, MODELS);
    assert.deepEqual(problems, []);
    assert.deepEqual(config.files.map((f) => `${f.dir || '/'} ${f.mode} ${f.effectiveMode}`), [
      '/ required required',
      '/assets none none',
      '/auth optional optional',
      '/teams/{team} inherit required',
      '/teams/{team}/boards inherit required',
    ]);
    const modes = ['/', '', '/index.html', '/auth', '/auth/', '/auth/index.html', '/auth/callback/x', '/assets/css/site.css', '/teams/{team}/boards/{board}', '/authors']
      .map((p) => `${p} ${config.modeFor(p)}`);
    assert.deepEqual(modes, [
      '/ required',
      ' required',
      '/index.html required',
      '/auth optional',
      '/auth/ optional',
      '/auth/index.html optional',
      '/auth/callback/x optional',
      '/assets/css/site.css none',
      '/teams/{team}/boards/{board} required',
      '/authors required',
    ]);
  });

  it('a root that inherits takes the parent site\'s mode, and a deeper inherit takes the nearest mode', () => {
    const files = { '/👤.yaml': 'auth: inherit\n', '/open/👤.yaml': 'auth: none\n', '/open/deeper/👤.yaml': 'default: all\n' };
    const alone = authOf(files, MODELS).config;
    assert.equal(alone.modeFor('/x'), 'none');
    assert.equal(alone.modeFor('/open/deeper/x'), 'none');
    const nested = authOf(files, MODELS, { parentMode: 'optional' }).config;
    assert.equal(nested.modeFor('/x'), 'optional');
    assert.equal(nested.modeFor('/open/deeper/x'), 'optional');
  });

  it('a nested site may make its parent\'s mode stricter, never looser; its own sign-in area stays open', () => {
    const files = {
      '/👤.yaml': 'auth: none\n',
      '/auth/👤.yaml': 'auth: optional\n',
      '/open/👤.yaml': 'auth: optional\n',
      '/closed/👤.yaml': 'auth: required\n',
    };
    const { config, problems } = authOf(files, MODELS, { parentMode: 'required' });
    const modes = ['/', '/x', '/open/x', '/closed/x', '/auth/', '/auth/index.html', '/authors'].map((p) => `${p} ${config.modeFor(p)}`);
    assert.deepEqual(modes, ['/ required', '/x required', '/open/x required', '/closed/x required', '/auth/ optional', '/auth/index.html optional', '/authors required']);
    assert.deepEqual(config.files.map((f) => `${f.dir || '/'} ${f.mode} ${f.effectiveMode}`), ['/ none required', '/auth optional optional', '/closed required required', '/open optional required']);
    assert.deepEqual(problems, [
      "/open/👤.yaml:1:7 warning LW_AUTH_NESTED_MODE auth: optional is looser than the site this one is mounted in allows here (required): a nested site may make its parent's mode stricter, never looser, so this directory is required",
      "/👤.yaml:1:7 warning LW_AUTH_NESTED_MODE auth: none is looser than the site this one is mounted in allows here (required): a nested site may make its parent's mode stricter, never looser, so this directory is required",
    ]);
    // Under an optional parent, none becomes optional and required stays.
    const optional = authOf(files, MODELS, { parentMode: 'optional' }).config;
    assert.deepEqual(['/x', '/closed/x', '/auth/'].map((p) => optional.modeFor(p)), ['optional', 'required', 'optional']);
    // Without users of its own, a sign-in area is just a directory: the parent's mode.
    assert.equal(authOf({}, MODELS, { parentMode: 'required' }).config.modeFor('/auth/'), 'required');
  });

  it('without a root 👤.yaml users are off: a sub-directory file is an error, the mode is the parent\'s or none', () => {
    const { config, problems } = authOf({ '/app/👤.yaml': 'auth: required\n' }, MODELS, { parentMode: 'optional' });
    assert.equal(config.enabled, false);
    assert.deepEqual(config.files, []);
    assert.deepEqual(problems, [
      '/app/👤.yaml:1:1 LW_AUTH_NO_ROOT /app/👤.yaml has no effect: users are turned on by a /👤.yaml at the root of the app; add one (it may hold just `auth: none`), or remove this file',
    ]);
    assert.equal(config.modeFor('/app/x'), 'optional');
    assert.equal(authOf({}, MODELS).config.modeFor('/app'), 'none');
  });
});

describe('👤.yaml mistakes, each at its line and column', () => {
  it('in the root file', () => {
    const text = [
      'auth: sometimes',
      'colour: blue',
      'owner: all',
      'Owner:',
      '  📦.Tsk: read',
      '  📦.Board.titel: read',
      '  📦.Team.Address: read',
      '  📦.Board.Adress: read',
      '  📦.Board: read, fetch',
      '  Board: read',
      '  👤.User.email: read',
      '  📦.Note: none, read',
      '  📦.Contact: read',
      '  📦.Board.title.x: read',
      '  📦.Member: get',
      '  📦.Team:',
      '  📦.Team.name: ["read"]',
      'Bad-Role: all',
      'Viewer: read, list',
      'Other:',
      '  📦Note: read',
      'Empty:',
    ];
    const { problems } = authOf({ '/👤.yaml': text.join('\n') + '\n' }, MODELS);
    assert.deepEqual(problems, [
      '/👤.yaml:1:7 LW_AUTH_MODE auth: takes one of inherit, none, required, optional, not "sometimes"',
      '/👤.yaml:2:1 LW_AUTH_UNKNOWN_KEY "colour" is not a key of 👤.yaml: the keys are auth, providers, default, and role names that start with an uppercase letter',
      '/👤.yaml:3:1 LW_AUTH_UNKNOWN_KEY "owner" is not a key of 👤.yaml (role names start with an uppercase letter: did you mean Owner?): the keys are auth, providers, default, and role names that start with an uppercase letter',
      '/👤.yaml:5:3 LW_AUTH_RESOURCE there is no model Tsk for "📦.Tsk": the models are Board, Member, Note, Team, TeamMember',
      '/👤.yaml:6:3 LW_AUTH_RESOURCE Board has no field "titel" (did you mean title?): its fields are id, created, modified, title, status, address, owner',
      '/👤.yaml:7:3 LW_AUTH_RESOURCE Team has no embedded type Address: Team has no embedded fields',
      '/👤.yaml:8:3 LW_AUTH_RESOURCE Board has no embedded type Adress (did you mean Address?): its embedded types are Address, Contact',
      '/👤.yaml:9:18 LW_AUTH_OPERATION "fetch" is not an operation: the operations are all, access, read, create, update, delete, state, list, none',
      '/👤.yaml:10:3 LW_AUTH_RESOURCE "Board" is not a resource (did you mean 📦.Board?): write 📦, 📦.Model, 📦.Model.field, 📦.Model.Embedded, 👤.User.name, 👤.User.picture, or a connector such as stripe.com (the models are Board, Member, Note, Team, TeamMember)',
      '/👤.yaml:11:3 LW_AUTH_RESOURCE "👤.User.email" is not a user resource: the user resources are 👤.User.name and 👤.User.picture',
      '/👤.yaml:12:11 LW_AUTH_OPERATION `none` stands alone: it grants nothing, so it cannot be listed with other operations',
      '/👤.yaml:13:3 LW_AUTH_RESOURCE Contact is an embedded type, not a model: write its rule under a model that holds it, as 📦.Board.Contact',
      '/👤.yaml:14:3 LW_AUTH_RESOURCE "📦.Board.title.x" is too deep: a model resource is 📦.Board, 📦.Board.field or 📦.Board.Embedded',
      '/👤.yaml:15:13 LW_AUTH_OPERATION "get" is not an operation; did you mean read?: the operations are all, access, read, create, update, delete, state, list, none',
      '/👤.yaml:16:3 LW_AUTH_OPERATION write the operations this role may do, comma-separated, such as `read, list`: the operations are all, access, read, create, update, delete, state, list, none',
      '/👤.yaml:17:16 LW_AUTH_OPERATION write the operations this role may do, comma-separated, such as `read, list`: the operations are all, access, read, create, update, delete, state, list, none',
      '/👤.yaml:18:1 LW_AUTH_ROLE_NAME "Bad-Role" is not a role name: use letters, digits and _, starting with an uppercase letter, such as BadRole',
      '/👤.yaml:19:9 LW_AUTH_ROLE_VALUE the role Viewer is `all`, `none` (in /👤.yaml only) or a map of resources to operations, such as `📦.Task: read, list`, not "read, list"; to grant read, list on every model, write `Viewer: {📦: read, list}`',
      '/👤.yaml:21:3 LW_AUTH_RESOURCE "📦Note" is not a resource (write a dot after 📦, as 📦.Note): write 📦, 📦.Model, 📦.Model.field, 📦.Model.Embedded, 👤.User.name, 👤.User.picture, or a connector such as stripe.com (the models are Board, Member, Note, Team, TeamMember)',
      '/👤.yaml:22:1 LW_AUTH_ROLE_VALUE the role Empty is `all`, `none` (in /👤.yaml only) or a map of resources to operations, such as `📦.Task: read, list`, not nothing',
    ]);
  });

  it('in a sub-directory file: undeclared roles, none, providers', () => {
    const sub = ['providers: [google]', 'Ghost:', '  📦: read', 'Reviewer: none', 'Editor:', '  📦.Board: none', 'Revewer: all', ''].join('\n');
    const { config, problems } = authOf({ '/👤.yaml': ROOT, '/teams/👤.yaml': sub }, MODELS);
    assert.deepEqual(problems, [
      '/teams/👤.yaml:1:1 LW_AUTH_PROVIDERS providers: belongs in /👤.yaml: sign-in is the same for the whole site; move the list there',
      '/teams/👤.yaml:2:1 LW_AUTH_ROLE_UNDECLARED the role Ghost is not declared in /👤.yaml: sub-directories only add permissions to roles the root file declares; declare it there, as `Ghost: none` to grant nothing outside this directory (the roles are default, Admin, TeamOwner, Editor, Reviewer)',
      '/teams/👤.yaml:4:11 LW_AUTH_OPERATION `none` is written only in /👤.yaml (to declare a role that grants nothing there); a sub-directory file only adds permissions: leave the role or resource out of this file',
      '/teams/👤.yaml:6:12 LW_AUTH_OPERATION `none` is written only in /👤.yaml (to declare a role that grants nothing there); a sub-directory file only adds permissions: leave the role or resource out of this file',
      '/teams/👤.yaml:7:1 LW_AUTH_ROLE_UNDECLARED the role Revewer is not declared in /👤.yaml (did you mean Reviewer?): sub-directories only add permissions to roles the root file declares; declare it there, as `Revewer: none` to grant nothing outside this directory (the roles are default, Admin, TeamOwner, Editor, Reviewer)',
    ]);
    assert.deepEqual(config.providers.map((p) => p.name), ['google', 'github']);
    assert.deepEqual(config.files[1]!.grants, []);
  });

  it('providers: not a list, a bad name, a name twice', () => {
    assert.deepEqual(authOf({ '/👤.yaml': 'providers: google\n' }, MODELS).problems, [
      '/👤.yaml:1:12 LW_AUTH_PROVIDERS providers: is a list of provider names, such as `providers: [google, github]`',
    ]);
    assert.deepEqual(authOf({ '/👤.yaml': 'providers:\n  - google\n  - My IdP\n  - google\n  - 7\n' }, MODELS).problems, [
      '/👤.yaml:3:5 LW_AUTH_PROVIDERS "My IdP" is not a provider name: use google, github, or a name of your own for an OpenID Connect provider (lowercase letters, digits and _, starting with a letter)',
      '/👤.yaml:4:5 LW_AUTH_PROVIDERS the provider google is listed twice',
      '/👤.yaml:5:5 LW_AUTH_PROVIDERS 7 is not a provider name: use google, github, or a name of your own for an OpenID Connect provider (lowercase letters, digits and _, starting with a letter)',
    ]);
  });

  it('YAML that does not parse, a file that is not a map, a duplicate key', () => {
    assert.deepEqual(authOf({ '/👤.yaml': 'auth: [required\n' }, MODELS).problems.map((p) => p.split(' ').slice(0, 2).join(' ')), ['/👤.yaml:2:1 LW_APP_YAML']);
    assert.deepEqual(authOf({ '/👤.yaml': '- auth\n' }, MODELS).problems, [
      '/👤.yaml:1:1 LW_AUTH_FILE a 👤.yaml is a map of keys, such as `auth: required` and roles like `Owner: all`',
    ]);
    const dup = authOf({ '/👤.yaml': 'Owner:\n  📦.Note: read\n  📦.Note: list\n' }, MODELS);
    assert.deepEqual(dup.problems.map((p) => p.split(' ').slice(0, 2).join(' ')), ['/👤.yaml:3:3 LW_APP_YAML']);
    assert.equal(dup.config.enabled, true);
    // A root that does not parse declares no roles: the sub-directories' roles are not reported as undeclared.
    const broken = authOf({ '/👤.yaml': 'Owner: [\n', '/a/👤.yaml': 'Owner:\n  📦.Note: read\n' }, MODELS);
    assert.deepEqual(broken.problems.map((p) => p.split(' ').slice(0, 2).join(' ')), ['/👤.yaml:2:1 LW_APP_YAML']);
  });

  it('auth and providers written with a capital are taken for roles, with a hint', () => {
    assert.deepEqual(authOf({ '/👤.yaml': 'Auth: required\n' }, MODELS).problems, [
      '/👤.yaml:1:7 LW_AUTH_ROLE_VALUE the role Auth is `all`, `none` (in /👤.yaml only) or a map of resources to operations, such as `📦.Task: read, list`, not "required"; did you mean `auth:`?',
    ]);
  });

  it('a resource given none while a broader one of the same role grants: a warning', () => {
    const { problems } = authOf({ '/👤.yaml': 'Viewer:\n  📦: read\n  📦.Member: none\n' }, MODELS);
    assert.deepEqual(problems, [
      '/👤.yaml:3:13 warning LW_AUTH_NONE_COVERED `📦.Member: none` grants nothing, but 📦 of the same role still applies to 📦.Member: permissions are only ever granted; to keep 📦.Member from this role, grant the narrower resources one by one instead of 📦',
    ]);
  });
});

describe('endpoint configuration 👤:', () => {
  const roles = authOf(APP, MODELS).config.roles;
  const read = (text: string) => {
    const diagnostics = new DiagnosticList();
    const auth = readEndpointAuth(text, '/teams/{team}/📮close.yaml', roles, diagnostics);
    return { auth: auth && { as: auth.as, only: auth.only, at: `${auth.at.line}:${auth.at.column}` }, problems: render(diagnostics) };
  };

  it('the apps\' short forms mean as; the documented map takes as and only', () => {
    assert.deepEqual(read(ENDPOINT_AS), { auth: { as: ['TeamOwner'], only: [], at: '1:1' }, problems: [] });
    assert.deepEqual(read(ENDPOINT_LIST), { auth: { as: ['TeamOwner', 'Reviewer'], only: [], at: '1:1' }, problems: [] });
    assert.deepEqual(read(ENDPOINT_ONLY), { auth: { as: [], only: ['TeamOwner'], at: '1:1' }, problems: [] });
    assert.deepEqual(read('# comment\n👤: {as: Reviewer, only: [TeamOwner, Editor]}\n'), {
      auth: { as: ['Reviewer'], only: ['TeamOwner', 'Editor'], at: '2:1' },
      problems: [],
    });
    assert.deepEqual(read(''), { auth: undefined, problems: [] });
  });

  it('roles that do not exist, wrong shapes, other keys', () => {
    assert.deepEqual(read('👤: Ghost\n').problems, [
      '/teams/{team}/📮close.yaml:1:4 LW_AUTH_ROLE_UNDECLARED the role Ghost is not declared in /👤.yaml: declare it there, or use one of default, Admin, TeamOwner, Editor, Reviewer',
    ]);
    assert.deepEqual(read('👤:\n  - TeamOwner\n  - Editr\n'), {
      auth: undefined,
      problems: ['/teams/{team}/📮close.yaml:3:5 LW_AUTH_ROLE_UNDECLARED the role Editr is not declared in /👤.yaml (did you mean Editor?): declare it there, or use one of default, Admin, TeamOwner, Editor, Reviewer'],
    });
    assert.deepEqual(read('👤:\n  run: TeamOwner\n').problems, [
      '/teams/{team}/📮close.yaml:2:3 LW_AUTH_ENDPOINT "run" is not a key of 👤:; the keys are as (run with the role\'s permissions) and only (answer 403 to visitors without the role)',
    ]);
    assert.deepEqual(read('👤: 3\n').problems, [
      '/teams/{team}/📮close.yaml:1:4 LW_AUTH_ENDPOINT 👤: takes a role name, a list of role names, or a map with as: and only:, not 3',
    ]);
    assert.deepEqual(read('👤: {}\n').problems, [
      '/teams/{team}/📮close.yaml:1:4 LW_AUTH_ENDPOINT 👤: names a role, as `👤: {as: Role}` or `👤: {only: Role}`',
    ]);
    assert.deepEqual(read('👤: {only: []}\n').problems, ['/teams/{team}/📮close.yaml:1:11 LW_AUTH_ENDPOINT 👤: only: names at least one role']);
    assert.deepEqual(read('cache: true\n👤: Editor\n'), {
      auth: { as: ['Editor'], only: [], at: '2:1' },
      problems: ['/teams/{team}/📮close.yaml:1:1 warning LW_AUTH_ENDPOINT_KEY "cache" is not an endpoint setting; it is ignored (the one setting is 👤:, as `👤: {as: Role}` or `👤: {only: Role}`)'],
    });
  });
});
