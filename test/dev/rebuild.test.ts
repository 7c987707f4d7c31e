/**
 * Rebuilding after an edit (app/load/build-cache.ts, as `laneway dev` does): the app loaded with the
 * cache must answer exactly as a fresh load of the same files — every route, status, header and
 * byte, the route table and the diagnostics — while compiling only the views and scripts the edit
 * affects. Each step edits the files, tells the cache (as the watcher does), loads with the cache,
 * then compares with a fresh load. No timing is asserted.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BuildCache, closeAppData, loadApp, openAppData, type App } from '../../src/app/index.js';
import { BuildError, type Diagnostic } from '../../src/diag/index.js';
import { createServer } from '../../src/http/index.js';
import { rawRequest, writeApp, type AppFiles } from '../helpers.js';

const M = '<!--TEMPLATE mustache-->';

const layout = (extra = '') => `${M}
{{% partial /_parts/ }}
{{% default title = 'Shop' }}
<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{title}}</title>
<link rel="stylesheet" href="/css/site.css">
<link rel="stylesheet" href="/css/_inline.css">
</head>
<body>{{> header}}<main>{{$content}}{{/content}}</main>${extra}</body></html>
`;

const page = (n: number, more = '') => `${M}
{{% partial /_layout }}
{{% const title = 'Page ${n}' }}
{{<layout}}{{$content}}<h1>Page ${n}</h1>${more}{{/content}}{{/layout}}
`;

const BASE: AppFiles = {
  '/_layout.html': layout(),
  '/_parts/header.html': `${M}\n{{% yaml /_data/site as site }}\n<header>{{site.name}}</header>\n`,
  '/_parts/card.html': `${M}\n<div class="card">{{$body}}card{{/body}}</div>\n`,
  '/_data/site.yaml': 'name: The shop\n',
  '/_data/prices.yaml': 'items:\n  - { name: Tea, price: 3 }\n  - { name: Coffee, price: 4 }\n',
  '/css/site.css': 'body { margin: 0; }\n',
  '/css/_inline.css': 'main { padding: 1rem; }\n',
  '/index.html': page(0),
  '/a.html': page(1),
  '/b.html': page(2),
  // Uses the card partial (through the layout's partial directory) and the prices.
  '/cards.html': `${M}
{{% partial /_layout }}
{{% partial /_parts/ as p }}
{{% yaml /_data/prices as prices }}
{{<layout}}{{$content}}{{#prices.items as item}}{{<p-card}}{{$body}}{{item.name}}: {{item.price}}{{/body}}{{/p-card}}{{/prices.items}}{{/content}}{{/layout}}
`,
  '/prices.html': `${M}\n{{% yaml /_data/prices as prices }}\n<ul>{{#prices.items as i}}<li>{{i.name}}</li>{{/prices.items}}</ul>\n`,
  '/notes.txt': 'one\n',
  '/plain.html': '<!doctype html><title>Plain</title><link rel="stylesheet" href="/css/site.css"><p>plain</p>\n',
  '/📤/Shop.js': "const Shop = 'Tea & Co'\nconst Hours = [9, 17]\n\nexport {Shop, Hours}\n",
  '/shop.html': `${M}\n{{% import {Shop} from '📤' }}\n<p>{{Shop}}</p>\n`,
  '/api/🖥hours.js': "import {Hours} from '📤'\n\n({open: Hours[0], close: Hours[1]})\n",
  '/api/🖥echo.js': "import {q} from '&'\n\n({q: q ?? null})\n",
  '/⚡NotFound.html': `${M}\n{{% partial /_layout }}\n{{<layout}}{{$content}}<h1>Not here</h1>{{/content}}{{/layout}}\n`,
};

/** Paths every comparison requests, beyond the app's routes (answers that are not found, queries). */
const EXTRA_PATHS = ['/missing', '/api/echo?q=x', '/a/'];

const VOLATILE = new Set(['date', 'connection', 'keep-alive', 'x-request-id']);

interface Snapshot {
  routes: string;
  diagnostics: Diagnostic[];
  answers: Record<string, { status: number; headers: Record<string, unknown>; body: string }>;
}

/** Every answer of an app: its routes (GET), fingerprinted asset URLs included, and the extra paths. */
async function answersOf(app: App, extra: readonly string[]): Promise<Snapshot> {
  await openAppData(app, { dataDir: join(app.root, '.laneway') });
  const server = createServer(app, { log: 'off' });
  const { port } = await server.listen(0, '127.0.0.1');
  try {
    const paths = [...new Set([...app.routes().filter((r) => r.method === 'GET' && !r.pattern.includes('{')).map((r) => r.pattern), ...EXTRA_PATHS, ...extra])].sort();
    const answers: Snapshot['answers'] = {};
    for (const p of paths) {
      const res = await rawRequest(port, 'GET', encodeURI(p));
      const headers = Object.fromEntries(Object.entries(res.headers).filter(([k]) => !VOLATILE.has(k)).sort(([a], [b]) => (a < b ? -1 : 1)));
      answers[p] = { status: res.status, headers, body: res.text };
    }
    return { routes: JSON.stringify(app.routes()), diagnostics: app.diagnostics, answers };
  } finally {
    await server.close();
    await closeAppData(app);
  }
}

/** Loads `dir` with and without the cache (the edit told to the cache first); both must agree. */
async function rebuildAndCompare(dir: string, cache: BuildCache, changed: string[], extra: readonly string[] = []): Promise<{ compiled: string[]; kept: string[]; answers: Snapshot['answers'] }> {
  cache.changed(changed.map((p) => (p.startsWith('/') ? join(dir, p) : p)));
  const incremental = loadApp(dir, { cache });
  const report = cache.lastLoad(dir)!;
  const fresh = loadApp(dir);
  const [a, b] = [await answersOf(incremental, extra), await answersOf(fresh, extra)];
  assert.deepEqual(a.diagnostics, b.diagnostics, 'the same diagnostics');
  assert.equal(a.routes, b.routes, 'the same routes');
  assert.deepEqual(Object.keys(a.answers), Object.keys(b.answers));
  for (const p of Object.keys(b.answers)) assert.deepEqual(a.answers[p], b.answers[p], `the same answer to GET ${p}`);
  return { ...report, answers: b.answers };
}

describe('a rebuild with the build cache answers as a fresh load', () => {
  const dirs: string[] = [];
  after(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  const start = (files: AppFiles = BASE) => {
    const dir = writeApp(files);
    dirs.push(dir);
    const cache = new BuildCache();
    loadApp(dir, { cache });
    return { dir, cache, write: (p: string, text: string) => writeFileSync(join(dir, p), text) };
  };

  test('nothing changed: every view and script is kept', async () => {
    const { dir, cache } = start();
    const r = await rebuildAndCompare(dir, cache, []);
    assert.deepEqual(r.compiled, []);
    assert.ok(r.kept.includes('/a.html') && r.kept.includes('/api/🖥hours.js') && r.kept.includes('/⚡NotFound.html'), r.kept.join(' '));
  });

  test('an edited view is compiled again, alone', async () => {
    const { dir, cache, write } = start();
    write('/a.html', page(1, '<p>edited</p>'));
    const r = await rebuildAndCompare(dir, cache, ['/a.html']);
    assert.deepEqual(r.compiled, ['/a.html']);
    assert.match(r.answers['/a']!.body, /<p>edited<\/p>/);
    // Same size, written at once: the watcher's word is what tells the cache.
    write('/a.html', page(1, '<p>EDITED</p>'));
    const again = await rebuildAndCompare(dir, cache, ['/a.html']);
    assert.deepEqual(again.compiled, ['/a.html']);
    assert.match(again.answers['/a']!.body, /<p>EDITED<\/p>/);
  });

  test('an edited script is compiled again, alone', async () => {
    const { dir, cache, write } = start();
    write('/api/🖥echo.js', "import {q} from '&'\n\n({q: q ?? null, edited: true})\n");
    const r = await rebuildAndCompare(dir, cache, ['/api/🖥echo.js']);
    assert.deepEqual(r.compiled, ['/api/🖥echo.js']);
    assert.equal(r.answers['/api/echo?q=x']!.body, '{"q":"x","edited":true}');
  });

  test('a partial used by several views: those views are compiled again, the others kept', async () => {
    const { dir, cache, write } = start();
    write('/_parts/card.html', `${M}\n<section class="card">{{$body}}card{{/body}}</section>\n`);
    const r = await rebuildAndCompare(dir, cache, ['/_parts/card.html']);
    // Only /cards uses it (the layout declares its directory too, but names only the header).
    assert.deepEqual(r.compiled, ['/cards.html']);
    assert.ok(r.kept.includes('/a.html') && r.kept.includes('/prices.html'));
    assert.match(r.answers['/cards']!.body, /<section class="card">Tea: 3<\/section>/);
  });

  test('a partial used by every page (through the layout) reaches all of them', async () => {
    const { dir, cache, write } = start();
    write('/_parts/header.html', `${M}\n{{% yaml /_data/site as site }}\n<header class="new">{{site.name}}</header>\n`);
    const r = await rebuildAndCompare(dir, cache, ['/_parts/header.html']);
    assert.deepEqual(r.compiled, ['/a.html', '/b.html', '/cards.html', '/index.html', '/⚡NotFound.html']);
    assert.match(r.answers['/b']!.body, /<header class="new">The shop<\/header>/);
  });

  test('a layout edit reaches every page that uses it', async () => {
    const { dir, cache, write } = start();
    write('/_layout.html', layout('<footer>new footer</footer>'));
    const r = await rebuildAndCompare(dir, cache, ['/_layout.html']);
    assert.deepEqual(r.compiled, ['/a.html', '/b.html', '/cards.html', '/index.html', '/⚡NotFound.html']);
    assert.match(r.answers['/missing']!.body, /new footer/);
  });

  test('a data file: the views that declare it are compiled again', async () => {
    const { dir, cache, write } = start();
    write('/_data/prices.yaml', 'items:\n  - { name: Tea, price: 5 }\n');
    const r = await rebuildAndCompare(dir, cache, ['/_data/prices.yaml']);
    assert.deepEqual(r.compiled, ['/cards.html', '/prices.html']);
    assert.match(r.answers['/cards']!.body, /Tea: 5/);
    assert.doesNotMatch(r.answers['/prices']!.body, /Coffee/);
  });

  test('a new file and a deleted file change the routes (everything is compiled again)', async () => {
    const { dir, cache, write } = start();
    write('/c.html', page(3));
    const added = await rebuildAndCompare(dir, cache, ['/c.html']);
    assert.equal(added.answers['/c']!.status, 200);
    assert.ok(added.compiled.length > 5);
    unlinkSync(join(dir, 'b.html'));
    const removed = await rebuildAndCompare(dir, cache, ['/b.html']);
    assert.equal(removed.answers['/b'], undefined);
    // Then a plain edit is incremental again.
    write('/c.html', page(3, '<p>third</p>'));
    const edited = await rebuildAndCompare(dir, cache, ['/c.html']);
    assert.deepEqual(edited.compiled, ['/c.html']);
  });

  test('a new partial in a partial directory is seen by the views that declare the directory', async () => {
    const { dir, cache, write } = start();
    write('/_parts/extra.html', `${M}\n<aside>extra</aside>\n`);
    write('/b.html', `${M}\n{{% partial /_layout }}\n{{% partial /_parts/ }}\n{{<layout}}{{$content}}{{> extra}}{{/content}}{{/layout}}\n`);
    const r = await rebuildAndCompare(dir, cache, ['/_parts/extra.html', '/b.html']);
    assert.match(r.answers['/b']!.body, /<aside>extra<\/aside>/);
  });

  test('a stylesheet pages name: its new fingerprinted URL, in the pages that name it', async () => {
    const { dir, cache, write } = start();
    const before = loadApp(dir).routes().map((r) => r.pattern).filter((p) => /^\/css\/site\.[0-9a-f]{8}\.css$/.test(p));
    write('/css/site.css', 'body { margin: 1px; }\n');
    const r = await rebuildAndCompare(dir, cache, ['/css/site.css']);
    const fingerprinted = Object.keys(r.answers).filter((p) => /^\/css\/site\.[0-9a-f]{8}\.css$/.test(p));
    assert.equal(fingerprinted.length, 1);
    assert.notDeepEqual(fingerprinted, before);
    assert.ok(r.answers['/a']!.body.includes(fingerprinted[0]!));
    assert.ok(r.compiled.includes('/a.html') && r.kept.includes('/prices.html'), `${r.compiled} / ${r.kept}`);
  });

  test('an inlined private stylesheet: the pages that inline it get the new text and policy', async () => {
    const { dir, cache, write } = start();
    write('/css/_inline.css', 'main { padding: 2rem; }\n');
    const r = await rebuildAndCompare(dir, cache, ['/css/_inline.css']);
    assert.match(r.answers['/a']!.body, /padding: 2rem/);
    assert.ok(r.kept.includes('/prices.html'));
  });

  test('a static file: its new bytes, the views kept', async () => {
    const { dir, cache, write } = start();
    write('/notes.txt', 'two\n');
    const r = await rebuildAndCompare(dir, cache, ['/notes.txt']);
    assert.equal(r.answers['/notes.txt']!.body, 'two\n');
    assert.deepEqual(r.compiled, []);
  });

  test('a supplier edit compiles everything again', async () => {
    const { dir, cache, write } = start();
    write('/📤/Shop.js', "const Shop = 'Tea & Coffee'\nconst Hours = [8, 18]\n\nexport {Shop, Hours}\n");
    const r = await rebuildAndCompare(dir, cache, ['/📤/Shop.js']);
    assert.deepEqual(r.kept, []);
    assert.equal(r.answers['/api/hours']!.body, '{"open":8,"close":18}');
  });

  test('a problem: the load fails as a fresh one does, and the fix is compiled again', async () => {
    const { dir, cache, write } = start();
    write('/a.html', `${M}\n{{#open}}\n<p>x</p>\n`);
    cache.changed([join(dir, 'a.html')]);
    const failed = (() => {
      try {
        loadApp(dir, { cache });
      } catch (e) {
        if (e instanceof BuildError) return e.diagnostics;
        throw e;
      }
      assert.fail('the load should fail');
    })();
    assert.deepEqual(failed, (() => {
      try {
        loadApp(dir);
      } catch (e) {
        return (e as BuildError).diagnostics;
      }
    })());
    write('/a.html', page(1, '<p>fixed</p>'));
    const r = await rebuildAndCompare(dir, cache, ['/a.html']);
    assert.match(r.answers['/a']!.body, /fixed/);
  });

  test('a view with a warning is compiled every time, so that the warning is reported every time', async () => {
    const files = { ...BASE, '/warned.html': `${M}\n{{% yaml /_data/site as site }}\n<p>{{{site.name}}}</p>\n` };
    const { dir, cache, write } = start(files);
    write('/a.html', page(1, '<p>x</p>'));
    const r = await rebuildAndCompare(dir, cache, ['/a.html']);
    assert.ok(r.compiled.includes('/warned.html'));
    assert.ok(loadApp(dir, { cache }).diagnostics.some((d) => d.code === 'LW_VIEW_RAW_NOT_WEB_SAFE' && d.file === '/warned.html'));
  });

  test('a nested site: an edit of one of its views is compiled again in the child alone', async () => {
    const child = writeApp({
      'index.html': `${M}\n{{% partial /_layout }}\n{{<layout}}{{$content}}<h1>Store</h1>{{/content}}{{/layout}}\n`,
      'about.html': `${M}\n<p>about <a href="/">home</a></p>\n`,
      '_layout.html': `${M}\n<!doctype html><title>Store</title><link rel="stylesheet" href="/css/site.css">{{$content}}{{/content}}\n`,
      'css/site.css': 'body { color: #333; }\n',
      'api/GET.js': "({store: true})\n",
    });
    dirs.push(child);
    const { dir, cache } = start({ ...BASE, '/🔌store.yaml': `source: ${child}\n` });
    const paths = ['/store/', '/store/about', '/store/api', '/store/css/site.css', '/store/missing'];
    writeFileSync(join(child, 'about.html'), `${M}\n<p>about us <a href="/">home</a></p>\n`);
    const r = await rebuildAndCompare(dir, cache, [join(child, 'about.html')], paths);
    assert.deepEqual(r.compiled, []);
    assert.deepEqual(cache.lastLoad(child, '/store')?.compiled, ['/about.html']);
    assert.match(r.answers['/store/about']!.body, /about us <a href="\/store\/">home<\/a>/);
    writeFileSync(join(child, 'css/site.css'), 'body { color: #444; }\n');
    const css = await rebuildAndCompare(dir, cache, [join(child, 'css/site.css')], paths);
    assert.equal(css.answers['/store/css/site.css']!.body, 'body { color: #444; }\n');
    assert.deepEqual(cache.lastLoad(child, '/store')?.compiled, ['/index.html']);
  });

  test('models and parameters: an edit of a page under a model-backed parameter', async () => {
    const files: AppFiles = {
      ...BASE,
      '/📦/🌐Note.yaml': 'text: string\n',
      '/notes/{note}/🔗.yaml': 'field: 📦.Note.id\n',
      '/notes/{note}/index.html': `${M}\n{{% import {note} from '🔗' }}\n<p>{{note.get.text}}</p>\n`,
      '/notes/🖥count.js': "import {Note} from '📦'\n\n({count: Note.all().count()})\n",
    };
    const { dir, cache, write } = start(files);
    write('/notes/{note}/index.html', `${M}\n{{% import {note} from '🔗' }}\n<p class="edited">{{note.get.text}}</p>\n`);
    const r = await rebuildAndCompare(dir, cache, ['/notes/{note}/index.html']);
    assert.deepEqual(r.compiled, ['/notes/{note}/index.html']);
    assert.equal(r.answers['/notes/count']!.body, '{"count":0}');
  });
});
