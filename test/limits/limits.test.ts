/**
 * Limits per visitor (docs/security.md "Limits per visitor"), black-box on both engines: a flood
 * of POSTs over a small `writes:` limit gets 429 with Retry-After and writes exactly the limit; a
 * flood of a 📡 form over `emails:` queues and sends at most that many messages; event streams
 * count when they open; GET of pages never touches the counters; two instances on one PostgreSQL
 * and `serve --workers 2` on one SQLite file share one count (on PostgreSQL with a lease of k > 1
 * too: never more than the limit, at most (N − 1)·(k + ⌊(k − 1)/2⌋) early); a bad `limits:` is an error at
 * its line and column.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { rmSync } from 'node:fs';
import Database from 'better-sqlite3';
import pg from 'pg';
import { diagnosticsOf, rawRequest, serve, writeApp, type Served } from '../helpers.js';
import { ENGINES } from '../support/engines.js';
import { startPostgres } from '../support/postgres.js';
import { serve as serveProcess } from '../support/served-process.js';
import { TestVisitor } from '../support/visitor.js';
import { startSmtp, until, useSmtpEnv, type TestSmtp } from '../mail/helpers.js';

const APP = {
  '🎛.yaml': 'name: Limits\nlimits:\n  cpu-ms: 500\n  writes: 5/hour\n  emails: 3/hour\n  streams: 2/minute\n  paths:\n    /open/: {writes: off}\n    /contact-sales: {writes: 100/hour}\n',
  '📦/🌐Item.yaml': 'name: string\n',
  'items/POST.js': "import {Item} from '📦';\nimport {name} from 'form';\nnew Item().name(name);\n({ok: true});\n",
  'open/items/POST.js': "import {Item} from '📦';\nimport {name} from 'form';\nnew Item().name(name);\n({ok: true});\n",
  'index.html': '<!--TEMPLATE mustache-->\n{{% import {Item} from \'📦\' }}<!doctype html><html><head><title>Items</title></head><body><ul>{{#Item.all as i}}<li>{{i.name}}</li>{{/Item.all}}</ul></body></html>\n',
  'plain.html': '<!doctype html><html><head><title>Plain</title></head><body>plain</body></html>\n',
  '⏱feed.js': '(lastEventId) => [{n: 1, $event: {last: true}}]\n',
  '📡/Contact.yaml': '🎛:\n  default: sales@example.test\n  subject: "Contact: {{name}}"\n\nname: string\ncontent: string\n',
  '📡/Contact/email.txt': 'From {{name}}:\n{{content}}\n',
  'contact.html':
    "<!--TEMPLATE mustache-->\n{{% import {Contact} from '📡' }}\n<!doctype html><html><head><title>Contact</title></head><body>\n" +
    '{{#Contact.Form.view}}<form action="/contact-sales?_form={{id}}" method="POST"><input name="Contact_name"><textarea name="Contact_content"></textarea></form>{{/Contact.Form.view}}\n</body></html>\n',
  '📮contact-sales.js': "import {Contact} from '📡';\nconst n = new Contact();\nContact.Form.submit(n);\nn.submit();\nRedirect.home();\n",
};

const SAME_ORIGIN = (port: number) => ({ Host: `localhost:${port}`, Origin: `http://localhost:${port}`, 'Content-Type': 'application/x-www-form-urlencoded' });
const post = (port: number, path: string, body: string) => rawRequest(port, 'POST', path, SAME_ORIGIN(port), body);

/** Rows of a table, read straight from the database (SQLite file or PostgreSQL). */
async function rows(dir: string, databaseUrl: string | undefined, sql: string): Promise<number> {
  if (databaseUrl) {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      return Number((await client.query(sql)).rows[0].n);
    } finally {
      await client.end();
    }
  }
  const db = new Database(join(dir, '.laneway', 'laneway.db'), { readonly: true });
  try {
    return Number((db.prepare(sql).get() as { n: number }).n);
  } finally {
    db.close();
  }
}

for (const engine of ENGINES) {
  describe(`limits per visitor (${engine.name})`, () => {
    let s: Served;
    let smtp: TestSmtp;
    let restoreEnv: () => void;
    let databaseUrl: string | undefined;
    before(async () => {
      smtp = await startSmtp();
      restoreEnv = useSmtpEnv(smtp.port);
      const data = await engine.data();
      databaseUrl = data.databaseUrl;
      s = await serve(APP, { data: { ...data, log: { info: () => {}, error: () => {} } } });
    });
    after(async () => {
      await s?.close();
      await smtp?.close();
      restoreEnv?.();
    });

    it('GET of pages and files does not touch the counters', async () => {
      for (const path of ['/', '/plain', '/', '/contact']) assert.equal((await s.get(path)).status, 200);
      assert.equal(await rows(s.dir, databaseUrl, 'SELECT count(*) AS n FROM "lw__counter"'), 0);
    });

    it('a flood of POSTs over writes: 5/hour: 429 with Retry-After, and exactly 5 records written', async () => {
      const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => post(s.port, '/items', `name=item${i}`)));
      const ok = answers.filter((a) => a.status === 200);
      const refused = answers.filter((a) => a.status === 429);
      assert.equal(ok.length, 5, answers.map((a) => a.status).join(' '));
      assert.equal(refused.length, 15);
      for (const r of refused) {
        const after = Number(r.headers['retry-after']);
        assert.ok(Number.isInteger(after) && after >= 1 && after <= 3600, `Retry-After ${r.headers['retry-after']}`);
        assert.match(r.headers['cache-control'] ?? '', /no-store/);
      }
      assert.equal(await rows(s.dir, databaseUrl, 'SELECT count(*) AS n FROM "lw_Item"'), 5);
      // A browser gets a short page, a JSON client JSON.
      const page = await post(s.port, '/items', 'name=x');
      assert.equal(page.status, 429);
      assert.match(page.text, /Too many changes were sent from here; try again in \d+ seconds?\./);
      const json = await rawRequest(s.port, 'POST', '/items', { ...SAME_ORIGIN(s.port), Accept: 'application/json' }, 'name=x');
      assert.equal(json.status, 429);
      assert.match(JSON.parse(json.text).error, /^Too many changes/);
      // A prefix set `off` is not counted.
      for (let i = 0; i < 3; i++) assert.equal((await post(s.port, '/open/items', 'name=open')).status, 200);
      assert.equal(await rows(s.dir, databaseUrl, 'SELECT count(*) AS n FROM "lw_Item"'), 8);
    });

    it('a flood of a 📡 form over emails: 3/hour queues and sends 3 messages', async () => {
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) {
        const v = new TestVisitor(s.port);
        const action = /action="(\/contact-sales\?_form=[^"]+)"/.exec((await v.get('/contact')).text)![1]!;
        statuses.push((await v.post(action.replace(/&amp;/g, '&'), { Contact_name: `Flood ${i}`, Contact_content: 'Buy now' })).status);
      }
      assert.deepEqual(statuses, [302, 302, 302, 429, 429, 429]);
      assert.equal(await rows(s.dir, databaseUrl, 'SELECT count(*) AS n FROM "lw__outbox"'), 3);
      await until(() => smtp.received.filter((m) => /Flood/.test(String(m.parsed.subject))).length === 3, 'three messages arrive');
      assert.deepEqual(smtp.received.map((m) => String(m.parsed.subject)).sort(), ['Contact: Flood 0', 'Contact: Flood 1', 'Contact: Flood 2']);
    });

    it('event streams count when they open: streams: 2/minute', async () => {
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) {
        const res = await rawRequest(s.port, 'GET', '/feed', { Accept: 'text/event-stream' });
        statuses.push(res.status);
      }
      assert.deepEqual(statuses, [200, 200, 429]);
    });
  });
}

describe('settings of limits per visitor', () => {
  it('a bad rate or kind is an error at its line and column', () => {
    const found = diagnosticsOf({ '🎛.yaml': 'name: x\nlimits:\n  cpu-ms: 200\n  writes: lots\n  paths:\n    /api/: {sign-ins: 5/minute}\n    api: {writes: 1/hour}\n  emails: 3/fortnight\n' }, 'LW_APP_SETTINGS');
    assert.deepEqual(
      found.map((d) => /^(\S+:\d+:\d+)/.exec(d)?.[1]),
      ['🎛.yaml:4:11', '🎛.yaml:6:23', '🎛.yaml:7:10', '🎛.yaml:8:11'],
      found.join('\n'),
    );
    assert.match(found[0]!, /`writes: lots` is not a rate/);
    assert.match(found[1]!, /cannot be set per path/);
  });
});

const SHARED = { '🎛.yaml': 'name: Shared\nlimits:\n  writes: 7/hour\n', '📦/🌐Item.yaml': 'name: string\n', 'items/POST.js': APP['items/POST.js'] };

describe('two instances on one PostgreSQL share the limit', () => {
  let a: Served;
  let b: Served;
  let dir: string;
  let url: string;
  before(async () => {
    url = await (await startPostgres()).createDatabase();
    dir = writeApp(SHARED);
    a = await serve(dir, { data: { databaseUrl: url } });
    b = await serve(dir, { data: { databaseUrl: url } });
  });
  after(async () => {
    await a?.close();
    await b?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('POSTs alternating between them: 7 written in all', async () => {
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => post((i % 2 ? a : b).port, '/items', `name=n${i}`)));
    assert.equal(answers.filter((r) => r.status === 200).length, 7, answers.map((r) => r.status).join(' '));
    assert.equal(answers.filter((r) => r.status === 429).length, 13);
    assert.equal(await rows(dir, url, 'SELECT count(*) AS n FROM "lw_Item"'), 7);
  });
});

/** Waits for the next window when the current one of `windowMs` ends within `marginMs` (windows are the clock's). */
async function clearOfWindowEnd(windowMs: number, marginMs: number): Promise<void> {
  const left = windowMs - (Date.now() % windowMs);
  if (left < marginMs) await new Promise((r) => setTimeout(r, left + 50));
}

describe('two instances on one PostgreSQL share a limit counted by leases (writes: 200/hour, k = 10)', () => {
  let a: Served;
  let b: Served;
  let dir: string;
  let url: string;
  before(async () => {
    url = await (await startPostgres()).createDatabase();
    dir = writeApp({ ...SHARED, '🎛.yaml': 'name: Leased\nlimits:\n  writes: 200/hour\n' });
    a = await serve(dir, { data: { databaseUrl: url, log: { info: () => {}, error: () => {} } } });
    b = await serve(dir, { data: { databaseUrl: url, log: { info: () => {}, error: () => {} } } });
  });
  after(async () => {
    await a?.close();
    await b?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('260 POSTs, 20 at a time alternating between them: 186 to 200 written, the rest 429 with Retry-After', async () => {
    await clearOfWindowEnd(3_600_000, 60_000);
    const answers = [];
    for (let round = 0; round < 13; round++) {
      answers.push(...(await Promise.all(Array.from({ length: 20 }, (_, i) => post((i % 2 ? a : b).port, '/items', `name=r${round}i${i}`)))));
    }
    const ok = answers.filter((r) => r.status === 200).length;
    const refused = answers.filter((r) => r.status === 429);
    // Never more than the limit; at most (N − 1)·(k + ⌊(k − 1)/2⌋) = 14 early (units b reserved and did not spend, or a).
    assert.ok(ok <= 200 && ok >= 186, `${ok} accepted: ${answers.map((r) => r.status).join(' ')}`);
    assert.equal(ok + refused.length, 260);
    for (const r of refused) {
      const after = Number(r.headers['retry-after']);
      assert.ok(Number.isInteger(after) && after >= 1 && after <= 3600, `Retry-After ${r.headers['retry-after']}`);
    }
    assert.equal(await rows(dir, url, 'SELECT count(*) AS n FROM "lw_Item"'), ok);
    // The row counts every unit reserved: at least what was accepted, and fewer than the requests,
    // since an instance that found the window exhausted refuses with no statement.
    const counted = await rows(dir, url, 'SELECT sum("count") AS n FROM "lw__counter"');
    assert.ok(counted >= ok && counted <= 220, `counted ${counted}`);
  });
});

describe('serve --workers 2 on one SQLite file shares the limit', () => {
  it('7 written in all, the refusals counted in /__/metrics and the first one logged', async () => {
    const dir = writeApp(SHARED);
    try {
      const server = await serveProcess(dir, ['--workers', '2', '--metrics']);
      await server.waitFor(() => server.listening().length === 2, 'two workers listening');
      // A new connection per request: the primary hands them to the workers in turn.
      const answers = [];
      for (let i = 0; i < 20; i++) answers.push(await post(server.port, '/items', `name=w${i}`));
      assert.equal(answers.filter((r) => r.status === 200).length, 7, answers.map((r) => r.status).join(' '));
      assert.equal(await rows(dir, undefined, 'SELECT count(*) AS n FROM "lw_Item"'), 7);
      const metrics = (await server.get('/__/metrics')).text;
      assert.match(metrics, /^laneway_limit_refusals_total\{kind="writes"\} 13$/m);
      const logged = server.lines.filter((l) => /^limit writes: addr:.* is over the limit/.test(String(l.message)));
      assert.ok(logged.length >= 1 && logged.length <= 2, `the first refusal is logged once per worker: ${logged.length}`);
      assert.equal(await server.stop(), 0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
