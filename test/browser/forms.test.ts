/**
 * A form in a real browser (docs/forms.md "Forms in views"): headless Chromium opens a page with a model's
 * default form, submits it empty (the page comes back with the message and `?_form=`), then
 * with a value (the record is listed and the success message shows once) — the session cookie
 * kept by the browser, zero CSP violations on every page.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { serve, type Served } from '../helpers.js';
import { launch, skip, violationRecordingPage, type Browser, type Page } from './chromium.js';

declare const window: { __violations: string[] };
declare const document: { querySelector(s: string): { textContent: string | null } | null; querySelectorAll(s: string): ArrayLike<{ textContent: string | null }> };

const APP = {
  '📦/🌐Note.yaml': 'title: string\n',
  'index.html':
    '<!--TEMPLATE mustache-->\n<!doctype html><html><head><title>Notes</title>{{% import {Note} from \'📦\' }}</head><body>\n' +
    '{{#Messages.all}}<p class="msg {{this.type}}">{{this.value}}</p>{{/Messages.all}}\n' +
    '{{#Note.Form.view as form}}<form action="/notes?_form={{form.id}}" method="POST">' +
    '{{#form.title}}<input name="{{path}}" {{{input.attributes}}} formnovalidate>{{#message}}<p class="err">{{value}}</p>{{/message}}{{/form.title}}' +
    '<button formnovalidate>Add</button></form>{{/Note.Form.view}}\n' +
    '<ul>{{#Note.all as n}}<li>{{n.title}}</li>{{/Note.all}}</ul></body></html>\n',
  'notes/POST.js':
    "import {Note} from '📦';\nconst note = new Note();\ntry {\n  Note.Form.submit(note);\n  Redirect.home().success('Added ' + note.title);\n} catch ($ModelInvalid) {\n  Redirect.home().invalid($ModelInvalid);\n}\n",
};

describe('a form in Chromium', { skip }, () => {
  let s: Served;
  let browser: Browser;
  let page: Page;
  before(async () => {
    s = await serve(APP);
    browser = await launch();
    page = await violationRecordingPage(browser);
  });
  after(async () => {
    await browser?.close();
    await s?.close();
  });

  test('invalid, then valid: messages, values, one record, zero violations', async () => {
    await page.goto(`${s.url}/`);
    await page.click('button');
    await page.waitForURL(/_form=s/);
    assert.match((await page.textContent('p.err')) ?? '', /Title is required/);
    await page.fill('input[name="Note_title"]', 'Tea & <biscuits>');
    await page.click('button');
    await page.waitForURL((u) => !u.search.includes('_form'));
    assert.equal(await page.textContent('p.msg.success'), 'Added Tea & <biscuits>');
    assert.deepEqual(await page.evaluate(() => Array.from(document.querySelectorAll('li'), (li) => li.textContent)), ['Tea & <biscuits>']);
    await page.reload();
    assert.equal(await page.$('p.msg'), null, 'the message shows once');
    assert.deepEqual(await page.evaluate(() => window.__violations), []);
  });
});
