/**
 * Views read fields through links (docs/views.md "Links and path parameters"), on both engines:
 * `{{board.name}}` of a path parameter backed by a model, `{{task.project.name}}` through a link
 * field, `{{board}}` alone prints the id, and a form view given a parameter's link shows its values.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { serve, type Served } from '../helpers.js';
import { ENGINES } from '../support/engines.js';

const J = { accept: 'application/json' };
const FORM = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
const json = (r: { body: Buffer }) => JSON.parse(r.body.toString());
const M = '<!--TEMPLATE mustache-->\n';

const APP = {
  '📦/🌐Board.yaml': 'name: string\n',
  '📦/🌐Project.yaml': 'name: string\n',
  '📦/🌐Task.yaml': 'title: string\nproject:\n  type: Project\n  optional: true\n',
  '📤/⏳EditTask.yaml': '📦.Task: [title]\n',
  'setup/POST.js':
    "import {Board, Project, Task} from '📦';\nconst b = new Board().name('Main <board>');\nconst p = new Project().name('Apollo');\nconst q = new Project().name('Gemini');\n" +
    "const t = new Task().title('First').project(p);\n({board: b.id, task: t.id, project: p.id, other: q.id});\n",
  'more/POST.js':
    "import {Task, Project} from '📦';\nimport {from, p, q} from 'form';\nconst a = Project.get(p), b = Project.get(q);\n" +
    "Array.from({length: 50}, (_, i) => new Task().title('t' + (Number(from) + i)).project((Number(from) + i) % 2 ? a : b));\n({});\n",
  'boards/{board}/🔗.yaml': 'field: 📦.Board.id\n',
  'boards/{board}/index.html': M + "{{% import {board} from '🔗' }}<h1>{{board.name}}</h1><p id=\"id\">{{board}}</p>{{#board}}<i>{{name}}</i>{{/board}}",
  'tasks/{task}/🔗.yaml': 'field: 📦.Task.id\n',
  'tasks/{task}/index.html':
    M + "{{% import {task} from '🔗' }}{{% import {EditTask} from '📤' }}<h1>{{task.title}} in {{task.project.name}}</h1><b>{{task.project}}</b>" +
    '{{#EditTask.view task as form}}<input name="{{form.title.path}}" value="{{form.title.value}}">{{/EditTask.view}}',
  'list/index.html': M + "{{% import {Task} from '📦' }}<ul>{{#Task.all as t}}<li>{{t.title}}:{{t.project.name}}</li>{{/Task.all}}</ul>",
};

for (const engine of ENGINES) {
  describe(`views read through links on ${engine.name}`, () => {
    let s: Served;
    let ids: { board: string; task: string; project: string; other: string };
    before(async () => {
      s = await serve(APP, { data: await engine.data() });
      ids = json(await s.request('POST', '/setup', FORM, ''));
      for (let from = 0; from < 200; from += 50) {
        assert.equal((await s.request('POST', '/more', FORM, `from=${from}&p=${ids.project}&q=${ids.other}`)).status, 200);
      }
    });
    after(() => s.close());

    it('a path parameter\'s record: {{board.name}}, {{board}} is its id, a section on it', async () => {
      const r = await s.request('GET', `/boards/${ids.board}/`);
      assert.equal(r.status, 200);
      const html = r.body.toString();
      assert.match(html, /<h1>Main &lt;board&gt;<\/h1>/);
      assert.match(html, new RegExp(`<p id="id">${ids.board}</p>`));
      assert.match(html, /<i>Main &lt;board&gt;<\/i>/);
    });

    it('a link field: {{task.project.name}}; a form view given the link shows the record\'s values', async () => {
      const r = await s.request('GET', `/tasks/${ids.task}/`);
      assert.equal(r.status, 200);
      const html = r.body.toString();
      assert.match(html, /<h1>First in Apollo<\/h1>/);
      assert.match(html, new RegExp(`<b>${ids.project}</b>`));
      assert.match(html, /<input name="Task_title" value="First">/);
    });

    it('a list of 201 rows reads each row\'s link', async () => {
      const r = await s.request('GET', '/list/');
      assert.equal(r.status, 200);
      const html = r.body.toString();
      assert.equal(html.match(/<li>/g)?.length, 201);
      assert.match(html, /<li>First:Apollo<\/li>/);
      assert.match(html, /<li>t0:Gemini<\/li><li>t1:Apollo<\/li>/);
    });
  });
}
