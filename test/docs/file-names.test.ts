/**
 * The documentation shows where each block goes: every code block that is a file of an app (its
 * info string holds `file=/path`) has the line `File: \`/path\`` right before it in the Markdown
 * source, so that GitHub, any renderer and `/__/dev/docs/` show the name; a block that names its
 * file only in a first-line comment (`# /📦/🌐Task.yaml`) is refused. Also: docs/conventions.md
 * lists every special emoji with its code point, the starters carry a short version, and the
 * tutorial's and the starters' pages name an icon that is served (no /favicon.ico 404).
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { docsPage } from '../../src/dev/docs.js';
import { SPECIAL_EMOJI, codePoints } from '../../src/app/definitions/special-names.js';
import { serve } from '../helpers.js';
import { fileOf, sections } from './markdown.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PAGES = [...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`), 'README.md'];
const read = (page: string) => readFileSync(join(ROOT, page), 'utf8');

/** Every fenced block of a page: its line, info words and the lines around it. */
function fences(page: string): Array<{ line: number; info: string[]; before: string; first: string }> {
  const lines = read(page).split('\n');
  const out = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^\s*```(.*)$/.exec(lines[i]!);
    if (!open) continue;
    out.push({ line: i + 1, info: open[1]!.trim().split(/\s+/).filter(Boolean), before: (lines[i - 1] ?? '').trim(), first: (lines[i + 1] ?? '').trim() });
    while (++i < lines.length && !/^\s*```\s*$/.test(lines[i]!));
  }
  return out;
}

describe('the docs name the file of every block that is one', () => {
  test('a File: line right before every file= block, naming the same file', () => {
    const missing: string[] = [];
    let count = 0;
    for (const page of PAGES) {
      for (const f of fences(page)) {
        const file = f.info.find((w) => w.startsWith('file='))?.slice('file='.length);
        if (file === undefined) continue;
        count++;
        if (!f.before.startsWith(`File: \`${file}\``)) missing.push(`${page}:${f.line}: ${file} (the line before is ${JSON.stringify(f.before)})`);
      }
    }
    assert.deepEqual(missing, []);
    assert.ok(count > 150, `only ${count} file blocks`);
  });

  test('no block names its file only in a first-line comment', () => {
    const hidden: string[] = [];
    for (const page of PAGES) {
      for (const f of fences(page)) {
        if (f.info.some((w) => w.startsWith('file='))) continue;
        if (/^(?:#|\/\/|<!--|\{\{!)\s*\/\S*\.[A-Za-z]+(?:\s|$)/.test(f.first)) hidden.push(`${page}:${f.line}: ${f.first}`);
      }
    }
    assert.deepEqual(hidden, [], 'write `File: \\`/path\\`` before the block and file=/path in its info string');
  });

  test('every File: line stands before the block of its file', () => {
    const stray: string[] = [];
    for (const page of PAGES) {
      const lines = read(page).split('\n');
      lines.forEach((l, i) => {
        const m = /^\s*File: `([^`]+)`/.exec(l);
        if (m && !new RegExp(`^\\s*\`\`\`\\S* .*file=${m[1]!.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?:\\s|$)`).test(lines[i + 1] ?? '')) stray.push(`${page}:${i + 1}: ${l}`);
      });
    }
    assert.deepEqual(stray, []);
  });

  test('/__/dev/docs/ renders the name before the block, as GitHub does', () => {
    const html = docsPage('tutorial.md')!.html;
    assert.match(html, /<p>File: <code>\/_layout\.html<\/code><\/p>\n<pre><code class="language-html">&lt;!--TEMPLATE mustache--&gt;/);
    assert.match(docsPage('conventions.md')!.html, /<title>Special names · Laneway<\/title>/);
  });

  test('the blocks the docs tests build apps from are still found whole', () => {
    const tutorial = sections(read('docs/tutorial.md')).flatMap((s) => s.blocks).filter((b) => fileOf(b) === '/📦/🌐Entry.yaml');
    assert.ok(tutorial.length > 0 && tutorial.every((b) => b.text.startsWith('name:')));
  });
});

describe('docs/conventions.md and the starters', () => {
  const conventions = read('docs/conventions.md');

  test('lists every special emoji Laneway knows, with its code point', () => {
    for (const { emoji } of SPECIAL_EMOJI.values()) {
      const row = conventions.split('\n').find((l) => l.startsWith('|') && l.includes(emoji) && l.includes(codePoints(emoji)));
      assert.ok(row, `${emoji} ${codePoints(emoji)} has no row`);
    }
    for (const module of ['🍪', '📧']) assert.ok(conventions.includes(`'${module}'`) && conventions.includes(codePoints(module)), module);
  });

  test('laneway new writes a short version into the app (private: never served)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'laneway-conventions-'));
    try {
      for (const template of ['app', 'minimal']) {
        const target = join(dir, template);
        const r = spawnSync(process.execPath, [join(ROOT, 'bin/laneway'), 'new', target, '--template', template], { encoding: 'utf8' });
        assert.equal(r.status, 0, r.stderr);
        const short = readFileSync(join(target, '_README.md'), 'utf8');
        for (const name of ['📦/🌐Name.yaml', '📤/⏳Name.yaml', '🖥name.js', '📮name.js', '🔗.yaml', '🎨.scss', 'U+1F4E4']) assert.ok(short.includes(name), `${template}: ${name}`);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('no favicon 404', () => {
  test('every tutorial page with a <head> names the icon, and the tutorial writes it', () => {
    const blocks = sections(read('docs/tutorial.md')).flatMap((s) => s.blocks);
    assert.ok(blocks.some((b) => fileOf(b) === '/🎛.svg'), 'the tutorial has no /🎛.svg');
    const heads = blocks.filter((b) => fileOf(b)?.endsWith('.html') && b.text.includes('<head>'));
    assert.ok(heads.length >= 2);
    for (const b of heads) assert.match(b.text, /<link rel="icon" href="\/🎛\.svg">/, `${fileOf(b)} at line ${b.line}`);
  });

  for (const template of ['app', 'minimal']) {
    test(`the ${template} starter's home page names an icon that is served`, async () => {
      const dir = join(mkdtempSync(join(tmpdir(), 'laneway-icon-')), template);
      assert.equal(spawnSync(process.execPath, [join(ROOT, 'bin/laneway'), 'new', dir, '--template', template]).status, 0);
      const served = await serve(dir, { data: { dataDir: mkdtempSync(join(tmpdir(), 'laneway-icon-data-')) } });
      try {
        const home = await served.get('/');
        const href = /<link rel="icon" href="([^"]+)">/.exec(home.text)?.[1];
        assert.ok(href, 'no icon link');
        assert.equal((await served.get(encodeURI(href))).status, 200);
      } finally {
        await served.close();
      }
    });
  }
});
