/**
 * docs/deploy.md, the deployment-kit part (between its BEGIN and END marks): the commands it gives
 * are real (`laneway` subcommands and options; the files of the kit), the environment variables it
 * names are the ones Laneway reads, the proxy configurations set what the table says Laneway
 * reads, and the SQLite backup it shows works on a live database in WAL mode — where copying
 * the database file alone misses what was just written, as the page warns.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { main } from '../../src/cli/index.js';
import { serve } from '../helpers.js';
import { TestVisitor, setCookies } from '../support/visitor.js';
import { readDoc, sections } from './markdown.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const whole = readDoc('deploy.md');
const begin = whole.indexOf('<!-- BEGIN deployment kit');
const end = whole.indexOf('<!-- END deployment kit -->');
const part = whole.slice(begin, end);
const blocks = sections(part).flatMap((s) => s.blocks);
const shell = blocks.filter((b) => b.lang === 'sh').map((b) => b.text.replace(/\\\n\s*/g, ' '));

/** Every source file of src/, as one text (to check that a variable is read somewhere). */
function sourceText(dir = join(ROOT, 'src')): string {
  let out = '';
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out += sourceText(p);
    else if (name.endsWith('.ts') && !name.endsWith('.test.ts')) out += readFileSync(p, 'utf8');
  }
  return out;
}

describe('docs/deploy.md (deployment kit sections)', () => {
  it('has its part, marked, with the sections the kit needs', () => {
    assert.ok(begin > 0 && end > begin, 'the BEGIN and END marks');
    const titles = sections(part).map((s) => s.title);
    for (const t of ['Running with Docker', 'Running with Docker compose and PostgreSQL', 'Running with systemd', 'Behind a reverse proxy', 'Backups', 'SQLite', 'PostgreSQL', 'Upgrades', 'Secrets', 'Sizing']) {
      assert.ok(titles.includes(t), `a section "${t}"`);
    }
  });

  it('every laneway command it gives is a real subcommand with real options', async () => {
    const commands = shell.flatMap((text) => [...text.matchAll(/(?:^|[\s/])laneway (serve|check|migrate|routes)\b([^\n;&|]*)/g)]);
    assert.ok(commands.length >= 6);
    for (const m of commands) {
      let help = '';
      const code = await main([m[1]!, '--help'], { out: (l) => (help += l + '\n'), err: (l) => (help += l + '\n') });
      assert.equal(code, 0);
      for (const flag of m[2]!.match(/--[a-z][a-z-]*/g) ?? []) assert.ok(help.includes(flag), `laneway ${m[1]} has no option ${flag}`);
    }
  });

  it('the files of the kit it names exist, and its docker and compose commands use them as they are', () => {
    for (const f of ['Dockerfile', '.dockerignore', 'compose.yaml', 'deploy/laneway.service', 'deploy/laneway.env.example']) {
      assert.ok(existsSync(join(ROOT, f)), f);
      assert.ok(whole.includes('`' + f + '`'), `the page names ${f}`);
    }
    const all = shell.join('\n');
    assert.match(all, /docker build -t laneway \./);
    assert.match(all, /-v \/srv\/guestbook:\/app:ro -v guestbook-data:\/data/);
    assert.match(all, /cp deploy\/laneway\.env\.example laneway\.env/);
    assert.match(all, /cp deploy\/laneway\.service \/etc\/systemd\/system\/laneway\.service/);
    // The service's paths are the ones the page uses.
    const unit = readFileSync(join(ROOT, 'deploy/laneway.service'), 'utf8');
    for (const p of ['/etc/laneway/laneway.env', '/var/lib/laneway', '/srv/laneway/app', '/opt/laneway/bin/laneway']) {
      assert.ok(unit.includes(p), `the unit has ${p}`);
      assert.ok(part.includes(p), `the page has ${p}`);
    }
  });

  it('the environment variables it names are the ones Laneway (or compose.yaml) reads', () => {
    const src = sourceText();
    const names = new Set([...part.matchAll(/\b(LANEWAY_[A-Z_<>]+[A-Z]|DATABASE_URL|NODE_OPTIONS)\b/g)].map((m) => m[1]!));
    assert.ok(names.size >= 8);
    for (const name of names) {
      if (name === 'NODE_OPTIONS') continue;
      // compose.yaml's own variable: the app directory to mount.
      if (name === 'LANEWAY_APP') {
        assert.match(readFileSync(join(ROOT, 'compose.yaml'), 'utf8'), /\$\{LANEWAY_APP:-/);
        continue;
      }
      if (name.startsWith('LANEWAY_AUTH_<NAME>_')) {
        assert.ok(src.includes(`_${name.slice('LANEWAY_AUTH_<NAME>_'.length)}`), name);
        continue;
      }
      assert.ok(src.includes(name), `${name} is not read anywhere in src/`);
    }
  });

  it('the proxy configurations set Host and X-Forwarded-Proto, and allow the largest upload', () => {
    const nginx = blocks.find((b) => b.lang === 'nginx')!.text;
    assert.match(nginx, /proxy_pass http:\/\/127\.0\.0\.1:3000;/);
    assert.match(nginx, /proxy_set_header Host \$host;/);
    assert.match(nginx, /proxy_set_header X-Forwarded-Proto \$scheme;/);
    assert.match(nginx, /http2 on;/);
    assert.match(nginx, /client_max_body_size 11m;/);
    const caddy = blocks.find((b) => b.lang === 'caddyfile')!.text;
    assert.match(caddy, /reverse_proxy 127\.0\.0\.1:3000/);
    assert.match(caddy, /max_size 11MB/);
  });

  it('what it says Laneway takes from X-Forwarded-Proto: nothing from anyone by default; from a trusted proxy, its value', async () => {
    const files = {
      '/📦/🌐Note.yaml': 'title: string\n',
      '/index.html': "<!--TEMPLATE mustache-->\n{{% import {Note} from '📦' }}\n{{#Note.Form.view as form}}<form action=\"/n?_form={{form.id}}\"></form>{{/Note.Form.view}}\n",
    };
    for (const trustProxy of [undefined, '127.0.0.1']) {
      const s = await serve(files, trustProxy ? { trustProxy } : {});
      try {
        const sid = async (headers: Record<string, string>) => setCookies(await new TestVisitor(s.port, 'guestbook.example.com').get('/', headers)).find((c) => c.startsWith('sid='))!;
        assert.doesNotMatch(await sid({}), /; Secure/);
        if (trustProxy) assert.match(await sid({ 'X-Forwarded-Proto': 'https' }), /; Secure/);
        else assert.doesNotMatch(await sid({ 'X-Forwarded-Proto': 'https' }), /; Secure/, 'nobody is trusted by default');
        assert.doesNotMatch(await sid({ 'X-Forwarded-Proto': 'http' }), /; Secure/);
      } finally {
        await s.close();
      }
    }
  });

  it('the SQLite backup it shows copies a live WAL database whole; a copy of laneway.db alone misses the latest writes', async () => {
    const snippet = shell.find((t) => t.includes("require('better-sqlite3')"));
    assert.ok(snippet);
    const code = /node -e "([\s\S]*?)"/.exec(snippet)![1]!;
    const dir = mkdtempSync(join(tmpdir(), 'laneway-backup-'));
    const s = await serve(
      {
        '/📦/🌐Note.yaml': 'title: string\n',
        '/📮add.js': "import {Note} from '📦'\nimport {title} from 'form'\nnew Note().title(title);\n({ok: true})\n",
      },
      { data: { dataDir: dir } },
    );
    try {
      for (let i = 0; i < 5; i++) {
        const r = await s.request('POST', '/add', { Host: 'example.com', 'Content-Type': 'application/x-www-form-urlencoded' }, `title=n${i}`);
        assert.equal(r.status, 200, r.text);
      }
      const db = join(dir, 'laneway.db');
      assert.ok(existsSync(db + '-wal'), 'the database is in WAL mode, its latest writes in laneway.db-wal');
      // The page's command, while the server runs: node -e "<code>" <database> <backup>.
      const backup = join(dir, 'backup.db');
      const run = spawnSync(process.execPath, ['-e', code, db, backup], { cwd: ROOT, encoding: 'utf8' });
      assert.equal(run.status, 0, run.stderr);
      const copy = new Database(backup, { readonly: true });
      try {
        assert.equal((copy.prepare('SELECT count(*) AS n FROM "lw_Note"').get() as { n: number }).n, 5);
        assert.equal((copy.prepare('PRAGMA integrity_check').get() as { integrity_check: string }).integrity_check, 'ok');
      } finally {
        copy.close();
      }
      // What the page warns against: the main file alone, copied while Laneway runs.
      const plain = join(dir, 'plain-copy.db');
      copyFileSync(db, plain);
      const naive = new Database(plain, { readonly: true });
      try {
        const has = naive.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'lw_Note'").get() as { n: number };
        const rows = has.n === 0 ? 0 : (naive.prepare('SELECT count(*) AS n FROM "lw_Note"').get() as { n: number }).n;
        assert.ok(rows < 5, `the plain copy holds ${rows} of the 5 notes`);
      } finally {
        naive.close();
      }
    } finally {
      await s.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
