/**
 * Mistakes in special names (docs/conventions.md, docs/errors.md "LW_APP_SPECIAL_NAME"), as a user
 * meets them: `laneway check` (bin/laneway, needs `npm run build`) prints a warning naming what was
 * probably meant, and the server answers 404 for the file instead of publishing it.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { serve, writeApp, type AppFiles } from '../helpers.js';

const BIN = fileURLToPath(new URL('../../bin/laneway', import.meta.url));
const dirs: string[] = [];
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function check(dir: string): { status: number | null; lines: string[] } {
  const env = { ...process.env };
  for (const name of ['FORCE_COLOR', 'LANEWAY_SOURCES', 'npm_command']) delete env[name];
  const r = spawnSync(process.execPath, [BIN, 'check', dir], { encoding: 'utf8', env, timeout: 60_000 });
  return { status: r.status, lines: (r.stdout + r.stderr).split('\n').filter(Boolean) };
}

const PAGE = '<!doctype html><title>t</title><p>home</p>\n';

/** Each mistake: the file, the URL it would be served at, what the warning must say. */
const CASES: Array<{ file: string; url: string; content?: string; says: RegExp; code?: string }> = [
  { file: '/📥/⏳NewTask.yaml', url: '/📥/⏳NewTask.yaml', content: 'model: 📦.Task\n', says: /^📥:.*📥 \(U\+1F4E5\) is not an emoji Laneway knows; 📤 \(U\+1F4E4\) is a suppliers and forms directory.*did you mean \/📤\/\?.*not served/ },
  { file: '/models/🌐Note.yaml', url: '/models/🌐Note.yaml', content: 'title: string\n', says: /^models\/🌐Note\.yaml:.*belongs in \/📦\/.*did you mean \/📦\/🌐Note\.yaml\?/ },
  { file: '/notes/⏳NewNote.yaml', url: '/notes/⏳NewNote.yaml', content: 'model: 📦.Note\n', says: /did you mean \/notes\/📤\/⏳NewNote\.yaml\?/ },
  { file: '/api/GET.JS', url: '/api/GET.JS', content: '({a: 1})\n', says: /^api\/GET\.JS:.*neither run as a script.*rename it to GET\.js/, code: 'LW_ROUTE_VERB_NAME_CASE' },
  { file: '/notes/📨save.js', url: '/notes/📨save.js', content: "'/'\n", says: /did you mean \/notes\/📮save\.js\?/ },
  { file: '/tasks/🔗.yml', url: '/tasks/🔗.yml', content: 'values: [a]\n', says: /did you mean \/tasks\/🔗\.yaml\?/ },
  { file: '/⚡notfound.html', url: '/⚡notfound.html', content: PAGE, says: /did you mean \/⚡NotFound\.html\?/ },
  { file: '/🎉party.html', url: '/🎉party', content: PAGE, says: /🎉 \(U\+1F389\) is not an emoji Laneway knows/ },
  { file: '/docs/📦/🌐Post.yaml', url: '/docs/📦/🌐Post.yaml', content: 'title: string\n', says: /^docs\/📦:.*read only at the app's root: did you mean \/📦\/\?/ },
  { file: '/api/🖥notes.JS', url: '/api/🖥notes.JS', content: '({a: 1})\n', says: /did you mean \/api\/🖥notes\.js\?/ },
];

describe('special names that are not quite right', () => {
  for (const c of CASES) {
    test(`${c.file}: a warning from laneway check naming the intended name, and 404`, async () => {
      const files: AppFiles = { '/index.html': PAGE, [c.file]: c.content ?? 'x\n' };
      const dir = writeApp(files);
      dirs.push(dir);
      const r = check(dir);
      assert.equal(r.status, 0, r.lines.join('\n'));
      const code = c.code ?? 'LW_APP_SPECIAL_NAME';
      const warnings = r.lines.filter((l) => l.includes(`[${code}]`));
      assert.equal(warnings.length, 1, r.lines.join('\n'));
      assert.match(warnings[0]!, c.says);
      assert.match(r.lines.at(-1)!, /^0 errors, 1 warning$/);
      const served = await serve(dir);
      try {
        assert.equal((await served.get('/')).status, 200);
        assert.equal((await served.get(encodeURI(c.url))).status, 404, `${c.url} is served`);
      } finally {
        await served.close();
      }
    });
  }

  test('the special names themselves, and emoji inside names, are not flagged', () => {
    const dir = writeApp({
      '/index.html': PAGE,
      '/📌logo.svg': '<svg xmlns="http://www.w3.org/2000/svg"/>',
      '/notes/🖥list.js': '({a: 1})\n',
      '/notes/📮save.js': "'/notes/'\n",
      '/notes/📮save.yaml': 'body-limit: 1000\n',
      '/notes/📤/📌Pinned.js': 'const A = 1\nexport {A}\n',
      '/notes/📤/Shared.js': 'const B = 1\nexport {B}\n',
      '/⚡NotFound.html': PAGE,
      '/a-🎉.html': PAGE,
      '/img/cat😀.png': 'png',
    });
    dirs.push(dir);
    const r = check(dir);
    assert.deepEqual(r.lines.filter((l) => l.includes('LW_APP_SPECIAL_NAME')), []);
  });
});
