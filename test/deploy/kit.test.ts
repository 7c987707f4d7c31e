/**
 * The deployment kit (Dockerfile, .dockerignore, compose.yaml, deploy/laneway.service,
 * deploy/laneway.env.example), checked offline: Docker and systemd are not run here, so these
 * tests read the files and hold them to what docs/deploy.md says of them and to the repository
 * they build from — the stages and the user of the image, the command every one of them runs
 * (a real bin, a real subcommand, real options), the files the image copies (present, and not
 * left out of the build context), the services, volumes and mounts of compose.yaml, and the
 * keys of the systemd unit.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { main } from '../../src/cli/index.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const pkg = JSON.parse(read('package.json')) as { bin: Record<string, string>; scripts: Record<string, string>; engines: { node: string }; dependencies: Record<string, string>; devDependencies: Record<string, string> };

/** `laneway <command> --help`, through the command's own entry point: exit code and text. */
async function help(command: string): Promise<{ code: number; text: string }> {
  let text = '';
  const code = await main([command, '--help'], { out: (l) => (text += l + '\n'), err: (l) => (text += l + '\n') });
  return { code, text };
}

/** Checks a `laneway …` command line: a real subcommand, and every option in its help. */
async function assertRealCommand(args: string[], where: string): Promise<void> {
  const [command, ...rest] = args;
  const h = await help(command!);
  assert.equal(h.code, 0, `${where}: laneway ${command} is not a command:\n${h.text}`);
  for (const a of rest) if (a.startsWith('--')) assert.ok(h.text.includes(a), `${where}: laneway ${command} has no option ${a}`);
}

// ---------------------------------------------------------------------------------------------
// Dockerfile

interface Instruction {
  op: string;
  args: string;
  line: number;
}

/** Instructions of a Dockerfile: comments dropped, `\` continuations joined. */
function dockerInstructions(text: string): Instruction[] {
  const out: Instruction[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const start = i;
    let line = lines[i]!;
    if (/^\s*(#|$)/.test(line)) continue;
    while (line.trimEnd().endsWith('\\') && i + 1 < lines.length) {
      line = line.trimEnd().slice(0, -1);
      i++;
      if (/^\s*#/.test(lines[i]!)) continue;
      line += ' ' + lines[i]!.trim();
    }
    const m = /^\s*([A-Za-z]+)\s+(.*)$/.exec(line);
    assert.ok(m, `Dockerfile:${start + 1}: not an instruction: ${line}`);
    out.push({ op: m[1]!.toUpperCase(), args: m[2]!.trim(), line: start + 1 });
  }
  return out;
}

interface Stage {
  from: string;
  name: string | undefined;
  steps: Instruction[];
}

function stagesOf(instructions: Instruction[]): { args: Record<string, string>; stages: Stage[] } {
  const args: Record<string, string> = {};
  const stages: Stage[] = [];
  for (const ins of instructions) {
    if (ins.op === 'ARG' && stages.length === 0) {
      const [k, v] = ins.args.split('=');
      args[k!] = v ?? '';
    } else if (ins.op === 'FROM') {
      const m = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(ins.args);
      assert.ok(m, `Dockerfile:${ins.line}: FROM image [AS name]`);
      stages.push({ from: m[1]!.replace(/\$\{(\w+)\}/g, (_, k: string) => args[k] ?? ''), name: m[2], steps: [] });
    } else {
      assert.ok(stages.length > 0, `Dockerfile:${ins.line}: ${ins.op} before FROM`);
      stages.at(-1)!.steps.push(ins);
    }
  }
  return { args, stages };
}

/** Whether .dockerignore keeps `path` in the build context (Docker's rules: the last matching pattern wins; a pattern also matches everything under a matched directory). */
function inContext(ignore: string, path: string): boolean {
  const patterns = ignore
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  const toRegExp = (p: string) =>
    new RegExp(
      '^' +
        p
          .replace(/\/+$/, '')
          .split('/')
          .map((seg) => (seg === '**' ? '(?:.*)' : seg.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*').replace(/\?/g, '[^/]')))
          .join('/')
          .replace(/\(\?:\.\*\)\//g, '(?:.*/)?') +
        '(?:/.*)?$',
    );
  let included = true;
  for (const p of patterns) {
    const negate = p.startsWith('!');
    if (toRegExp(negate ? p.slice(1) : p).test(path)) included = negate;
  }
  return included;
}

describe('Dockerfile', () => {
  const { args, stages } = stagesOf(dockerInstructions(read('Dockerfile')));
  const [build, deps, final] = stages;
  const runs = (stage: Stage) => stage.steps.filter((s) => s.op === 'RUN').map((s) => s.args);

  it('has three stages (build, deps, final) on the same Node.js major and Debian release (bookworm)', () => {
    assert.equal(stages.length, 3);
    assert.equal(build!.name, 'build');
    assert.equal(deps!.name, 'deps');
    assert.equal(final!.name, undefined);
    const node = args.NODE_VERSION;
    assert.ok(node && Number(node) >= Number(/\d+/.exec(pkg.engines.node)![0]), `NODE_VERSION ${node} meets engines.node ${pkg.engines.node}`);
    assert.match(build!.from, new RegExp(`^node:${node}-bookworm$`));
    assert.match(deps!.from, new RegExp(`^node:${node}-bookworm$`), 'the native module is built on the release the final stage runs');
    assert.match(final!.from, new RegExp(`^node:${node}-bookworm(-slim)?$`));
  });

  it('the build stage installs with npm ci and compiles with npm run build', () => {
    const r = runs(build!);
    const at = (re: RegExp) => r.findIndex((x) => re.test(x));
    assert.ok(at(/\bnpm ci\b/) >= 0, 'npm ci');
    assert.ok(at(/\bnpm run build\b/) > at(/\bnpm ci\b/), 'npm run build after npm ci');
    assert.ok(pkg.scripts.build, 'package.json has a build script');
    assert.ok('typescript' in pkg.devDependencies, 'the build needs the dev dependencies, which npm ci installs');
    assert.doesNotMatch(r.join('\n'), /--omit=dev/);
  });

  it('the deps stage installs the production dependencies only, and builds better-sqlite3 there', () => {
    const r = runs(deps!).join('\n');
    assert.match(r, /\bnpm ci --omit=dev --ignore-scripts\b/);
    assert.match(r, /\bnpm rebuild better-sqlite3\b/);
    assert.ok('better-sqlite3' in pkg.dependencies);
    // It is the only dependency of the app whose install script matters (sharp ships prebuilt packages).
    const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, { hasInstallScript?: boolean; dev?: boolean; optional?: boolean }> };
    const scripted = Object.entries(lock.packages).filter(([, v]) => v.hasInstallScript && !v.dev && !v.optional).map(([k]) => k);
    assert.deepEqual(scripted, ['node_modules/better-sqlite3']);
  });

  it('copies only files that exist and that .dockerignore keeps in the build context; leaves tests and secrets out', () => {
    const ignore = read('.dockerignore');
    const sources = [...build!.steps, ...deps!.steps]
      .filter((s) => s.op === 'COPY' && !s.args.startsWith('--from'))
      .flatMap((s) => s.args.split(/\s+/).slice(0, -1));
    assert.ok(sources.length >= 5);
    for (const s of sources) {
      assert.ok(existsSync(join(ROOT, s)), `COPY ${s}: no such file`);
      assert.ok(inContext(ignore, s), `.dockerignore leaves ${s} out of the build context`);
    }
    for (const p of ['src/app/index.ts', 'bin/laneway', 'tsconfig.build.json', 'scripts/bundle.mjs']) assert.ok(inContext(ignore, p), p);
    for (const p of ['node_modules', 'node_modules/yaml/package.json', 'dist/index.js', '.git/config', 'test/helpers.ts', 'src/app/suppliers.test.ts', 'laneway.env', '.env', 'examples/site/.laneway/laneway.db', 'scratch/x.ts']) {
      assert.ok(!inContext(ignore, p), `${p} must not be in the build context`);
    }
  });

  it('the final stage copies the build, runs as a non-root user, keeps data in the /data volume and exposes 3000', () => {
    const steps = final!.steps;
    const copied = steps.filter((s) => s.op === 'COPY').map((s) => s.args);
    for (const what of ['package.json', 'bin', 'dist']) assert.ok(copied.some((c) => c.startsWith('--from=build') && c.includes(`/opt/laneway/${what} `)), `copies ${what} from the build stage`);
    assert.ok(copied.some((c) => c.startsWith('--from=deps') && c.includes('/opt/laneway/node_modules ')), 'node_modules from the deps stage');
    // What the package ships (package.json "files"), but the documentation.
    const pkgFiles = (JSON.parse(read('package.json')) as { files: string[] }).files.filter((f) => f !== 'docs');
    for (const f of pkgFiles) assert.ok(copied.some((c) => c.startsWith('--from=build') && c.includes(`/opt/laneway/${f} `)), `the image has ${f} (package.json files)`);
    assert.equal(copied.length, pkgFiles.length + 2, 'nothing else: no sources, no dev dependencies');
    const users = steps.filter((s) => s.op === 'USER');
    assert.equal(users.length, 1);
    assert.ok(!['root', '0', '0:0'].includes(users[0]!.args), 'not root');
    const userAt = steps.indexOf(users[0]!);
    assert.ok(steps.slice(userAt).every((s) => s.op !== 'RUN'), 'nothing runs as root after USER… and nothing runs after it at all');
    assert.match(steps.filter((s) => s.op === 'RUN').map((s) => s.args).join('\n'), /chown node:node \/data/);
    assert.match(steps.find((s) => s.op === 'ENV')!.args, /LANEWAY_DATA=\/data/);
    assert.equal(steps.find((s) => s.op === 'VOLUME')?.args, '["/data"]');
    assert.equal(steps.find((s) => s.op === 'EXPOSE')?.args, '3000');
  });

  it('CMD runs `laneway serve /app --host 0.0.0.0 --port 3000` through the real bin', async () => {
    const cmd = final!.steps.filter((s) => s.op === 'CMD');
    assert.equal(cmd.length, 1);
    const argv = JSON.parse(cmd[0]!.args) as string[];
    assert.deepEqual(argv, ['laneway', 'serve', '/app', '--host', '0.0.0.0', '--port', '3000']);
    // `laneway` on the PATH is a link to bin/laneway, the bin package.json declares.
    assert.match(final!.steps.filter((s) => s.op === 'RUN').map((s) => s.args).join('\n'), /ln -s \/opt\/laneway\/bin\/laneway \/usr\/local\/bin\/laneway/);
    assert.equal(pkg.bin.laneway, 'bin/laneway');
    assert.ok(statSync(join(ROOT, 'bin/laneway')).mode & 0o111, 'bin/laneway is executable');
    assert.match(read('bin/laneway'), /^#!\/usr\/bin\/env node\n/);
    assert.match(read('bin/laneway'), /\.\.\/dist\/bundle\/index\.js/);
    await assertRealCommand(argv.slice(1), 'Dockerfile CMD');
  });

  it('HEALTHCHECK asks /__/health on the port the server listens on, with node (no curl in the slim image)', () => {
    const hc = final!.steps.find((s) => s.op === 'HEALTHCHECK');
    assert.ok(hc);
    const m = /CMD (\[.*\])$/.exec(hc.args);
    assert.ok(m);
    const argv = JSON.parse(m[1]!) as string[];
    assert.equal(argv[0], 'node');
    assert.equal(argv[1], '-e');
    assert.match(argv[2]!, /path: '\/__\/health'/);
    assert.match(argv[2]!, /port: 3000\b/);
    assert.match(argv[2]!, /process\.exit\(r\.statusCode === 200 \? 0 : 1\)/);
    // The check is a valid program.
    assert.doesNotThrow(() => new Function('require', 'process', argv[2]!));
  });
});

// ---------------------------------------------------------------------------------------------
// compose.yaml

describe('compose.yaml', () => {
  const compose = parseYaml(read('compose.yaml')) as {
    services: Record<string, Record<string, unknown>>;
    volumes: Record<string, unknown>;
  };
  const laneway = compose.services.laneway!;
  const postgres = compose.services.postgres!;

  it('parses as YAML, with the services laneway and postgres and their named volumes', () => {
    assert.deepEqual(Object.keys(compose.services).sort(), ['laneway', 'postgres']);
    assert.deepEqual(Object.keys(compose.volumes).sort(), ['laneway-data', 'postgres-data']);
  });

  it('postgres: postgres:16, data in a named volume, a pg_isready health check', () => {
    assert.equal(postgres.image, 'postgres:16');
    assert.deepEqual(postgres.volumes, ['postgres-data:/var/lib/postgresql/data']);
    const hc = postgres.healthcheck as { test: string[] };
    assert.match(hc.test.join(' '), /pg_isready -U laneway -d laneway/);
  });

  it('laneway: built from this Dockerfile, waits for a healthy database, gets DATABASE_URL for it and the secrets from an env file', () => {
    assert.equal(laneway.build, '.');
    assert.deepEqual(laneway.depends_on, { postgres: { condition: 'service_healthy' } });
    const env = laneway.environment as Record<string, string>;
    const pgEnv = postgres.environment as Record<string, string>;
    const url = new URL(env.DATABASE_URL!.replace(/\$\{POSTGRES_PASSWORD:\?[^}]*\}/, 'PASSWORD'));
    assert.equal(url.protocol, 'postgres:');
    assert.equal(url.hostname, 'postgres', 'the service name');
    assert.equal(url.port, '5432');
    assert.equal(url.username, pgEnv.POSTGRES_USER);
    assert.equal(url.pathname, '/' + pgEnv.POSTGRES_DB);
    assert.equal(pgEnv.POSTGRES_PASSWORD, env.DATABASE_URL!.match(/\$\{POSTGRES_PASSWORD:\?[^}]*\}/)![0], 'one password for both');
    assert.deepEqual(laneway.env_file, ['laneway.env']);
    assert.ok(!('LANEWAY_SECRET' in env), 'the secret comes from the env file, not from compose.yaml');
    assert.equal(env.LANEWAY_DATA, '/data');
  });

  it('laneway: the app mounted read-only at /app, the data volume at /data, port 3000 published on the loopback', () => {
    const volumes = laneway.volumes as string[];
    assert.ok(volumes.some((v) => /^\$\{LANEWAY_APP:-[^}]+\}:\/app:ro$/.test(v)), 'the app directory, read-only');
    assert.ok(volumes.includes('laneway-data:/data'));
    const app = /^\$\{LANEWAY_APP:-([^}]+)\}/.exec(volumes.find((v) => v.endsWith(':/app:ro'))!)![1]!;
    assert.ok(existsSync(join(ROOT, app)), `the default app ${app} exists`);
    assert.deepEqual(laneway.ports, ['127.0.0.1:3000:3000']);
    assert.equal(laneway.stop_grace_period, '15s');
  });

  it('laneway.env comes from deploy/laneway.env.example, which holds no secret', () => {
    const example = read('deploy/laneway.env.example');
    assert.match(example, /^LANEWAY_SECRET=$/m);
    for (const line of example.split('\n').filter((l) => l && !l.startsWith('#'))) {
      assert.match(line, /^[A-Z_]+=$/, `only empty settings: ${line}`);
    }
    assert.match(example, /LANEWAY_AUTH_DEV_USERS/);
  });
});

// ---------------------------------------------------------------------------------------------
// deploy/laneway.service

/** A unit file: section → key → every value given (keys may repeat). */
function unitFile(text: string): Map<string, Map<string, string[]>> {
  const sections = new Map<string, Map<string, string[]>>();
  let current: Map<string, string[]> | undefined;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#') || line.startsWith(';')) continue;
    const section = /^\[(\w+)\]$/.exec(line);
    if (section) {
      current = new Map();
      sections.set(section[1]!, current);
      continue;
    }
    const eq = line.indexOf('=');
    assert.ok(current && eq > 0, `not a key=value line in a section: ${line}`);
    const key = line.slice(0, eq);
    current.set(key, [...(current.get(key) ?? []), line.slice(eq + 1)]);
  }
  return sections;
}

describe('deploy/laneway.service', () => {
  const unit = unitFile(read('deploy/laneway.service'));
  const service = unit.get('Service')!;
  const one = (key: string) => {
    const v = service.get(key);
    assert.equal(v?.length, 1, `[Service] ${key}= once`);
    return v![0]!;
  };
  const environment = new Map((service.get('Environment') ?? []).map((e) => e.split('=', 2) as [string, string]));

  it('has [Unit], [Service] and [Install], and starts with the system', () => {
    assert.deepEqual([...unit.keys()], ['Unit', 'Service', 'Install']);
    assert.deepEqual(unit.get('Install')!.get('WantedBy'), ['multi-user.target']);
    assert.ok(unit.get('Unit')!.get('After')!.some((a) => a.includes('network-online.target')));
  });

  it('runs as a dedicated user, in its working directory, with its settings from /etc/laneway/laneway.env, restarted on failure', () => {
    assert.equal(one('User'), 'laneway');
    assert.equal(one('Group'), 'laneway');
    assert.ok(one('WorkingDirectory').startsWith('/'));
    assert.equal(one('EnvironmentFile'), '/etc/laneway/laneway.env');
    assert.equal(one('Restart'), 'on-failure');
    assert.equal(one('Type'), 'simple');
  });

  it('ExecStart runs the real bin: laneway serve with real options, the app outside the data directory', async () => {
    const argv = one('ExecStart').split(/\s+/);
    assert.match(argv[0]!, /^\/.*\/bin\/laneway$/, 'an absolute path to bin/laneway');
    assert.equal(argv[1], 'serve');
    await assertRealCommand(argv.slice(1), 'ExecStart');
    const app = argv[2]!;
    assert.ok(app.startsWith(one('WorkingDirectory') + '/'), 'the app is in the working directory');
    assert.ok(!app.startsWith(environment.get('LANEWAY_DATA')!), 'the app is not in the writable data directory');
    assert.deepEqual(argv.slice(3), ['--host', '127.0.0.1', '--port', '3000']);
  });

  it('hardening: no new privileges, the whole file system read-only but the data directory, a private /tmp', () => {
    assert.equal(one('NoNewPrivileges'), 'yes');
    assert.equal(one('ProtectSystem'), 'strict');
    assert.equal(one('PrivateTmp'), 'yes');
    assert.equal(one('ProtectHome'), 'yes');
    const data = environment.get('LANEWAY_DATA');
    assert.equal(data, '/var/lib/laneway');
    assert.deepEqual(one('ReadWritePaths').split(/\s+/), [data]);
    assert.equal(one('StateDirectory'), 'laneway', 'systemd makes /var/lib/laneway for the user');
    assert.equal(one('CapabilityBoundingSet'), '');
    // V8's JIT needs writable and executable memory: this option would stop Node.js.
    assert.ok(!service.has('MemoryDenyWriteExecute'));
    // os.cpus() reads /proc/cpuinfo, which ProcSubset=pid hides.
    assert.ok(!service.has('ProcSubset'));
  });

  it('stops as Laneway expects: SIGTERM to the main process, time to drain', () => {
    assert.equal(one('KillMode'), 'mixed');
    assert.ok(parseInt(one('TimeoutStopSec'), 10) > 10, 'more than the 10 s Laneway gives requests in flight');
  });
});
