/**
 * A form submitted many times at once (a double click, a replayed POST) is accepted once; every
 * other copy is refused with the 400 of a sequential replay (LW_SESSION_FORM_STATE), on both
 * engines, never a 500 (docs/forms.md). On PostgreSQL the copies run in parallel transactions: the
 * ones that wait for the first claim of the form id must be refused like a replay, not fail on
 * the unique index of the used-form table.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { serve, type Served } from '../helpers.js';
import { ENGINES } from '../support/engines.js';
import { TestVisitor } from '../support/visitor.js';
import { openPostgres } from '../../src/store/postgres.js';
import type { Engine } from '../../src/store/index.js';

const APP = {
  '📦/🌐Note.yaml': 'title: string\n',
  'index.html':
    '<!--TEMPLATE mustache-->\n<!doctype html><html><head><title>Notes</title>{{% import {Note} from \'📦\' }}</head><body>\n' +
    '{{#Note.Form.view as form}}<form action="/notes?_form={{form.id}}" method="POST"></form>{{/Note.Form.view}}</body></html>\n',
  'notes/POST.js': "import {Note} from '📦';\nconst note = new Note();\nNote.Form.submit(note);\n({title: note.title});\n",
  'count/GET.js': "import {Note} from '📦';\n({count: Note.all().count()});\n",
};

const formId = (html: string) => /action="\/notes\?_form=([^"]+)"/.exec(html)?.[1];
const count = async (s: Served) => JSON.parse((await s.get('/count')).text).count as number;
const COPIES = 12;

for (const engine of ENGINES) {
  describe(`a form sent ${COPIES} times at once (${engine.name})`, () => {
    let s: Served;
    let url: string | undefined;
    before(async () => {
      const data = await engine.data();
      url = data.databaseUrl;
      s = await serve(APP, { data });
    });
    after(() => s?.close());

    it('one copy is accepted, every other one is refused with 400', async () => {
      const v = new TestVisitor(s.port);
      const id = formId((await v.get('/')).text)!;
      const before = await count(s);
      const answers = await Promise.all(Array.from({ length: COPIES }, (_, i) => v.post(`/notes?_form=${id}`, { Note_title: `copy ${i}` }, { accept: 'application/json' })));
      const statuses = answers.map((a) => a.status).sort();
      assert.deepEqual(statuses, [200, ...Array<number>(COPIES - 1).fill(400)], answers.map((a) => `${a.status} ${a.text.slice(0, 120)}`).join('\n'));
      for (const a of answers.filter((x) => x.status === 400)) assert.match(a.text, /expired or was sent already/);
      assert.equal(await count(s), before + 1);
    });

    if (engine.name !== 'postgres') return;

    it('copies waiting on another transaction holding the form id: one wins when it rolls back, the others get 400', async () => {
      // A transaction of the test's own holds the form id in the used-form table, uncommitted,
      // until every copy is waiting for it; then it rolls back. One copy then claims the id, and
      // the others wait for that one's commit: all of them must be refused as replays.
      const v = new TestVisitor(s.port);
      const id = formId((await v.get('/')).text)!;
      const before = await count(s);
      const db: Engine = await openPostgres(url!);
      try {
        const holder = await db.begin();
        await holder.all('INSERT INTO "lw__form_used" ("id", "expires") VALUES ($1, $2) RETURNING "id"', [id, Date.now() + 60_000]);
        const pending = Promise.all(Array.from({ length: COPIES }, (_, i) => v.post(`/notes?_form=${id}`, { Note_title: `copy ${i}` }, { accept: 'application/json' })));
        const waiting = async () => Number((await db.reader.all('SELECT count(*) FROM pg_locks WHERE NOT granted', []))[0]![0]);
        const end = Date.now() + 15_000;
        while ((await waiting()) < 2 && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
        assert.ok((await waiting()) >= 2, 'at least two copies wait for the uncommitted form id');
        await holder.rollback();
        const answers = await pending;
        const statuses = answers.map((a) => a.status).sort();
        assert.deepEqual(statuses, [200, ...Array<number>(COPIES - 1).fill(400)], answers.map((a) => `${a.status} ${a.text.slice(0, 120)}`).join('\n'));
        assert.equal(await count(s), before + 1);
      } finally {
        await db.close();
      }
    });
  });
}
