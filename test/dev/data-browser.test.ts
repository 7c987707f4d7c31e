/**
 * The data browser of development (docs/data-browser.md) over HTTP, on each engine: the models with
 * their counts, records paged and filtered, a record with its link and children, an edit refused
 * by the model's checks and one accepted, a removal, and nothing of it without development mode.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { serve, type Response, type Served } from '../helpers.js';
import { ENGINES } from '../support/engines.js';
import { BROWSER_APP } from './data-browser-app.js';


const SAME = { 'sec-fetch-site': 'same-origin' };
const FORM = { ...SAME, 'content-type': 'application/x-www-form-urlencoded' };

/** Links of a page with `class="…"`. */
const linksOf = (html: string, cls: string) => [...html.matchAll(new RegExp(`<a class="${cls}" href="([^"]+)"`, 'g'))].map((m) => m[1]!.replaceAll('&#38;', '&'));
const cookieOf = (r: Response) => ((r.headers['set-cookie'] as string[] | undefined) ?? []).map((c) => c.split(';')[0]).join('; ');

for (const engine of ENGINES) {
  describe(`the data browser over HTTP (${engine.name})`, () => {
    let s: Served;
    let ids: { first: string; ada: string; last: string };
    before(async () => {
      s = await serve(BROWSER_APP, { dev: true, data: await engine.data() });
      const seeded = await s.request('POST', '/seed', { ...SAME, accept: 'application/json' });
      assert.equal(seeded.status, 200, seeded.text);
      ids = JSON.parse(seeded.text);
    });
    after(() => s.close());

    it('lists the models with their counts, under a strict policy', async () => {
      const r = await s.get('/__/dev/data/');
      assert.equal(r.status, 200, r.text);
      assert.match(r.text, /<a href="\/__\/dev\/data\/Task\/">Task<\/a><\/td><td class="count">30</);
      assert.match(r.text, /Note<\/a> \(in Task\)<\/td><td class="count">1</);
      const policy = String(r.headers['content-security-policy']);
      assert.match(policy, /^default-src 'none'; style-src 'sha256-[^']+'; form-action 'self'/);
      assert.doesNotMatch(policy, /unsafe-inline|script-src/);
      assert.doesNotMatch(r.text, /<script/);
    });

    it('pages through the records, 25 at a time', async () => {
      const first = await s.get('/__/dev/data/Task/');
      assert.match(first.text, /30 records\./);
      assert.equal(linksOf(first.text, 'record').length, 25);
      const [next] = linksOf(first.text, 'next');
      assert.ok(next, first.text);
      const second = await s.get(next);
      const records = linksOf(second.text, 'record');
      assert.equal(records.length, 5);
      assert.ok(records.at(-1)!.endsWith(`/${ids.last}`));
      assert.deepEqual(linksOf(second.text, 'next'), []);
      // Together, every record once.
      assert.equal(new Set([...linksOf(first.text, 'record'), ...records]).size, 30);
    });

    it('filters on an indexed field, and refuses a field without an index', async () => {
      const done = await s.get('/__/dev/data/Task/?field=done&value=true');
      assert.match(done.text, /10 records with done = true\./);
      assert.equal(linksOf(done.text, 'record').length, 10);
      const one = await s.get('/__/dev/data/Task/?field=title&value=task%2012');
      assert.equal(linksOf(one.text, 'record').length, 1);
      const bad = await s.get('/__/dev/data/Task/?field=nothing&value=1');
      assert.match(bad.text, /Task has no indexed field &#34;nothing&#34; to filter on\./);
    });

    it('shows a record with its link and its children, every value escaped', async () => {
      const r = await s.get(`/__/dev/data/Task/${ids.first}`);
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(linksOf(r.text, 'link'), [`/__/dev/data/Person/${ids.ada}`]);
      const [children] = linksOf(r.text, 'children');
      assert.equal(children, `/__/dev/data/Note/?in=${ids.first}`);
      assert.match(r.text, /Note: 1<\/a>/);
      const person = await s.get(`/__/dev/data/Person/${ids.ada}`);
      assert.ok(person.text.includes('Ada &#60;b&#62;&#38;&#60;/b&#62;'), person.text);
      assert.ok(!person.text.includes('<b>&</b>'));
      const notes = await s.get(children!);
      assert.equal(linksOf(notes.text, 'record').length, 1);
    });

    it("an edit goes through the model's checks: a refused value is shown, a good one saved", async () => {
      const pageOf = await s.get(`/__/dev/data/Task/${ids.first}`);
      const action = /<form method="POST" action="([^"]+\?_form=[^"]+)" novalidate>/.exec(pageOf.text)![1]!.replaceAll('&#38;', '&');
      const cookie = cookieOf(pageOf);
      assert.ok(cookie.startsWith('sid='), 'the form state is the visitor’s');
      const long = await s.request('POST', action, { ...FORM, cookie }, new URLSearchParams({ lw_id: ids.first, lw_action: 'save', Task_title: 'x'.repeat(30), Task_done: 'false' }).toString());
      assert.equal(long.status, 422, long.text);
      assert.match(long.text, /<p class="message">Title must be at most 20 characters long \(it has 30\)<\/p>/);
      assert.match(long.text, /value="x{30}"/, 'the typed text is shown again');
      assert.match((await s.get(`/__/dev/data/Task/${ids.first}`)).text, /task 10/, 'nothing was saved');
      // The form state of the refused post was not used: a fresh page's form saves.
      const again = await s.get(`/__/dev/data/Task/${ids.first}`, { cookie });
      const fresh = /<form method="POST" action="([^"]+\?_form=[^"]+)" novalidate>/.exec(again.text)![1]!.replaceAll('&#38;', '&');
      const ok = await s.request('POST', fresh, { ...FORM, cookie }, new URLSearchParams({ lw_id: ids.first, lw_action: 'save', Task_title: 'renamed', Task_done: 'true' }).toString());
      assert.equal(ok.status, 303, ok.text);
      assert.equal(ok.headers.location, `/__/dev/data/Task/${ids.first}`);
      const shown = await s.get(`/__/dev/data/Task/${ids.first}`);
      assert.match(shown.text, /<span>renamed<\/span>/);
      // Without its form state, as any form of the app: refused.
      const stale = await s.request('POST', `/__/dev/data/Task/${ids.first}`, { ...FORM, cookie }, new URLSearchParams({ lw_id: ids.first, lw_action: 'save', Task_title: 'nope' }).toString());
      assert.equal(stale.status, 400);
      assert.match(stale.text, /Not saved \(400\): This form was sent without its form state/);
    });

    it('removes a record; one that contains records is refused, as a script is', async () => {
      const refused = await s.request('POST', `/__/dev/data/Task/${ids.first}`, FORM, `lw_id=${ids.first}&lw_action=remove`);
      assert.equal(refused.status, 409, refused.text);
      assert.match(refused.text, /Not removed \(409\)/);
      const gone = await s.request('POST', `/__/dev/data/Task/${ids.last}`, FORM, `lw_id=${ids.last}&lw_action=remove`);
      assert.equal(gone.status, 303, gone.text);
      assert.equal(gone.headers.location, '/__/dev/data/Task/');
      assert.match((await s.get('/__/dev/data/Task/')).text, /29 records\./);
      assert.equal((await s.get(`/__/dev/data/Task/${ids.last}`)).status, 404);
    });
  });
}

describe('the data browser is development only', () => {
  let s: Served;
  before(async () => {
    s = await serve(BROWSER_APP);
  });
  after(() => s.close());
  it('serve without --dev: /__/dev/data/ is not found, reading or writing', async () => {
    assert.equal((await s.get('/__/dev/data/')).status, 404);
    assert.equal((await s.get('/__/dev/data/Task/')).status, 404);
    assert.equal((await s.request('POST', '/__/dev/data/Task/x', FORM, 'lw_id=x&lw_action=remove')).status, 404);
  });
});
