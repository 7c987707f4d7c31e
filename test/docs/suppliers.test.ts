/**
 * docs/suppliers.md: every request shown gets exactly the response shown, from one app made of the
 * page's files, and each build-error example reports exactly its lines (conventions in
 * test/docs/http-examples.ts). Then what the page says without an example of its own.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { diagnosticsOf, serve } from '../helpers.js';
import { runHttpExamples } from './http-examples.js';

runHttpExamples('suppliers.md', { minExchanges: 8 });

describe('docs/suppliers.md: what the page says besides its examples', () => {
  it('a pinned supplier is for views: a script of the same name does not see it', () => {
    assert.deepEqual(diagnosticsOf({ '/hello/📤/📌world.js': "const Planet = 'Earth'\nexport {Planet}\n", '/hello/🖥world.js': "import {Planet} from '📤'\n({Planet})\n" }), [
      'hello/🖥world.js:1:9: no supplier in scope exports "Planet": export it from a 📤/ file in this directory or a parent [LW_SCRIPT_IMPORT]',
    ]);
  });

  it('an endpoint-specific supplier serves a 📮 script and a page of the same route name, and no other supplier', async () => {
    assert.deepEqual(
      diagnosticsOf({ '/x/📤/index.js': "const Secret = 1\nexport {Secret}\n", '/x/index.html': '<!--TEMPLATE mustache-->\n<p></p>\n', '/x/📤/Other.js': "import {Secret} from '📤'\nconst O = Secret\nexport {O}\n" }),
      ['x/📤/Other.js:1:9: no supplier in scope exports "Secret": export it from a 📤/ file in this directory or a parent [LW_SCRIPT_IMPORT]'],
    );
    const s = await serve({
      '/📮save.js': "import {Target} from '📤'\nTarget\n",
      '/save.html': "<!--TEMPLATE mustache-->\n{{% import {Target} from '📤' }}\n<p>{{Target}}</p>\n",
      '/📤/save.js': "const Target = '/done'\nexport {Target}\n",
    });
    try {
      assert.equal((await s.request('POST', '/save', { Host: 'example.com' })).headers.location, '/done');
      assert.equal((await s.get('/save')).text.trim(), '<p>/done</p>');
    } finally {
      await s.close();
    }
  });

  it('a supplier sees the path parameters of its own directory only', () => {
    assert.deepEqual(
      diagnosticsOf({
        '/tasks/{task}/🔗.yaml': 'values: [a]\n',
        '/tasks/{task}/GET.js': "import {Here, Up} from '📤'\n({Here, Up})\n",
        '/tasks/{task}/📤/Here.js': "import {task} from '🔗'\nconst Here = task.$value\nexport {Here}\n",
        '/📤/Up.js': "import {task} from '🔗'\nconst Up = task\nexport {Up}\n",
      }),
      ['📤/Up.js:1:9: "task" is not a path parameter: there is no {task} directory above this file (Request is always there) [LW_SCRIPT_IMPORT]'],
    );
  });

  it('a request supplier may export a query (read as the view iterates it) and a redirect builder', async () => {
    const s = await serve({
      '/📦/🌐Post.yaml': 'title: string\n',
      '/📮add.js': "import {Post} from '📦'\nimport {title} from 'form'\nnew Post().title(title);\n'/'\n",
      '/📤/Recent.js': "import {Post} from '📦'\nconst Recent = Post.all().desc().limit(5)\nconst Back = Redirect.home().name('list')\nexport {Recent, Back}\n",
      '/list.html': "<!--TEMPLATE mustache-->\n{{% import {Recent} from '📤' }}\n<ul>{{#Recent as p}}<li>{{p.title}}</li>{{/Recent}}</ul>\n",
      '/📮go.js': "import {Back} from '📤'\nBack.success('Done')\n",
    });
    try {
      for (const t of ['a', 'b', 'c']) await s.request('POST', '/add', { Host: 'example.com', 'Content-Type': 'application/x-www-form-urlencoded' }, 'title=' + t);
      assert.equal((await s.get('/list')).text.trim(), '<ul><li>c</li><li>b</li><li>a</li></ul>');
      assert.equal((await s.request('POST', '/go', { Host: 'example.com' })).headers.location, '/list');
    } finally {
      await s.close();
    }
  });

  it('a supplier cannot write', () => {
    assert.deepEqual(diagnosticsOf({ '/📦/🌐Task.yaml': 'title: string\n', '/📤/S.js': "import {Task} from '📦'\nconst t = new Task().title('x')\nexport {t}\n" }), [
      '📤/S.js:2:11: a supplier cannot create records (new Task): write from a POST, PUT or DELETE script [LW_MODEL_READ_ONLY]',
    ]);
  });

  it('a function supplier exports arrow functions only', () => {
    assert.deepEqual(diagnosticsOf({ '/📤/{}F.js': 'const x = 1\nexport {x}\n' }), [
      '📤/{}F.js:2:9: function suppliers export arrow functions only: declare `const x = (…) => …` (or `let`, never assigned again) and export it [LW_SCRIPT_EXPORT]',
    ]);
  });

  it('values a script pushes to are seen by the scripts that import them after it, in the same request only', async () => {
    const s = await serve({
      '/📤/Log.js': "const Log = []\nexport {Log}\n",
      '/📤/Later.js': "import {Log} from '📤'\nconst Later = Log.length\nexport {Later}\n",
      '/📤/{}Read.js': "import {Later} from '📤'\nconst read = () => Later\nexport {read}\n",
      '/GET.js': "import {Log, read} from '📤'\nLog.push('x');\n({later: read(), log: Log})\n",
    });
    try {
      // Read.js (and so Later.js) ran when GET.js started: before the push.
      assert.deepEqual(JSON.parse((await s.get('/')).text), { later: 0, log: ['x'] });
      assert.deepEqual(JSON.parse((await s.get('/')).text), { later: 0, log: ['x'] }, 'a new request starts from scratch');
    } finally {
      await s.close();
    }
  });
});
