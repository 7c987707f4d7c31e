/**
 * What a view renders rich text and images with belongs to the app that was loaded
 * (docs/architecture.md "Loading again after an edit"), on both engines:
 *
 * - an app with images, markdown and html fields of `📦` models and a static `🗄` model, reloaded
 *   200 times as `laneway dev`, `serve --watch` and SIGHUP do it (loadApp with the build cache
 *   after an edit, openAppData, the server's `replace`, closeAppData of the previous app), with a
 *   request to a page showing them each time: once collected, no replaced app's AppData,
 *   StaticData or renderers is left (each is watched through a WeakRef), where the process used to
 *   keep every load's renderers and, for an app with images, its whole AppData;
 * - two apps of one process (a parent and its nested site), with models and fields of the same
 *   names and different `render:` options, each render with their own options.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';
import sharp from 'sharp';
import { BuildCache, closeAppData, loadApp, openAppData, type App } from '../../src/app/index.js';
import { createServer } from '../../src/http/index.js';
import { serve, writeApp, type Served } from '../helpers.js';
import { ENGINES } from '../support/engines.js';
import { TestVisitor } from '../support/visitor.js';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

const QUIET = { info: () => {}, error: () => {} };

/** A model and a static model with rich text of the same names; `mark` sets their `render:` class. */
function richApp(mark: string): Record<string, string> {
  return {
    '📦/🌐Post.yaml': [
      'title: string',
      'body:',
      '  type: markdown',
      `  render: {p: ${mark}-md}`,
      'bio:',
      '  type: html',
      `  render: {p: ${mark}-html}`,
      '',
    ].join('\n'),
    '🗄/📄Doc.yaml': `title: string\nbody:\n  type: document-markdown\n  render: {p: ${mark}-doc}\n`,
    '🗄/Doc/intro.md': '---\ntitle: Intro\n---\nA document.\n',
    'seed/POST.js': "import {Post} from '📦';\nnew Post().title('first').body('Some *text*.').bio('<p>A bio.</p>');\n({ok: true});\n",
    'index.html':
      "<!--TEMPLATE mustache-->\n{{% import {Post} from '📦' }}{{% import {Doc} from '🗄' }}\n" +
      '{{#Post.all as post}}<div class="post">{{{post.body}}}{{{post.bio}}}</div>{{/Post.all}}\n' +
      '{{#Doc.all as doc}}<div class="doc">{{{doc.body}}}</div>{{/Doc.all}}\n',
  };
}

const IMAGES = {
  ...richApp('app'),
  '📦/🌐Post.yaml': 'title: string\nbody:\n  type: markdown\n  render: {p: app-md}\nbio:\n  type: html\n  render: {p: app-html}\nimage?:\n  type: image\n  public: true\n',
  '📮newImageUrl.js': "import {Post} from '📦';\n({url: Post.image.newPutUrl('photo.jpg')});\n",
  '📮store.js': "import {Post} from '📦';\nimport {url} from 'form';\nnew Post().title('pic').body('With a *picture*.').bio('<p>Pictured.</p>').image(url);\n({ok: true});\n",
  'index.html':
    "<!--TEMPLATE mustache-->\n{{% import {Post} from '📦' }}{{% import {Doc} from '🗄' }}\n" +
    '{{#Post.all as post}}<div class="post">{{{post.body}}}{{{post.bio}}}{{{post.image}}}</div>{{/Post.all}}\n' +
    '{{#Doc.all as doc}}<div class="doc">{{{doc.body}}}</div>{{/Doc.all}}\n',
  'about.html': '<p>about 0</p>\n',
};

/**
 * Objects watched until they are collected: a FinalizationRegistry, not WeakRefs (a WeakRef made
 * or read keeps its target alive until the runtime clears its kept objects).
 */
class Watched {
  readonly #collected = new Set<number>();
  readonly #registry = new FinalizationRegistry((i: number) => this.#collected.add(i));
  count = 0;

  add(o: object): void {
    this.#registry.register(o, this.count++);
  }

  /** The numbers of the objects still reachable after full collections (their finalizers run in later tasks). */
  async survivors(): Promise<number[]> {
    for (let i = 0; i < 10 && this.#collected.size < this.count; i++) {
      gc();
      await new Promise((r) => setTimeout(r, 20));
    }
    return [...Array(this.count).keys()].filter((i) => !this.#collected.has(i));
  }
}

/** What a load made that its replacement must release: its AppData and the renderers of its rich text and images. */
function owned(app: App): object[] {
  const renderers = (app.data as { renderers?: object } | undefined)?.renderers;
  return [app.data!, ...(renderers ? [renderers] : [])];
}

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/**
 * Serves the app with images, then replaces it 200 times as a reload does (src/cli/index.ts
 * `rebuild`), with a request to its page after each; answers which objects of the replaced loads
 * are still reachable then, numbered in the order watched (two per load: its AppData, then its
 * renderers).
 */
async function reloadedTimes(engine: (typeof ENGINES)[number], cache?: BuildCache): Promise<{ watched: number; survivors: number[] }> {
  const dir = writeApp(IMAGES);
  dirs.push(dir);
  const data = { ...(await engine.data()), log: QUIET };
  const load = () => loadApp(dir, cache ? { cache } : {});
  let current = load();
  await openAppData(current, data);
  const server = createServer(current, { log: 'off' });
  const { port } = await server.listen(0, '127.0.0.1');
  const watched = new Watched();
  // One reload, in a function of its own: nothing of it stays in the caller's frame.
  const reload = async (i: number): Promise<void> => {
    // An edit, as the watcher reports it (with the build cache, that file alone is read again).
    writeFileSync(join(dir, 'about.html'), `<p>about ${i}</p>\n`);
    cache?.changed([join(dir, 'about.html')]);
    const next = load();
    await openAppData(next, data);
    const previous = current;
    current = next;
    await server.replace(next);
    await closeAppData(previous);
    for (const o of owned(previous)) watched.add(o);
  };
  try {
    const v = new TestVisitor(port);
    // One record with an image (an upload through the app's own address) and its rich text.
    const asked = await v.post('/newImageUrl', {}, { Accept: 'application/json' });
    assert.equal(asked.status, 200, asked.text);
    const url = JSON.parse(asked.text).url as string;
    const bytes = await sharp({ create: { width: 40, height: 30, channels: 3, background: { r: 10, g: 120, b: 200 } } }).jpeg().toBuffer();
    assert.equal((await v.request('PUT', url, bytes, { 'Content-Type': '' })).status, 200);
    assert.equal((await v.post('/store', { url }, { Accept: 'application/json' })).status, 200);
    for (let i = 1; i <= 200; i++) {
      await reload(i);
      const page = await v.get('/');
      assert.equal(page.status, 200, page.text);
      assert.match(page.text, /<p class="app-md">With a <em>picture<\/em>.<\/p>\s*<p class="app-html">Pictured.<\/p>/);
      assert.match(page.text, /<img [^>]*src="\/__\/images\/[A-Za-z0-9_-]{22}/);
      assert.match(page.text, /<div class="doc"><p class="app-doc">A document.<\/p>/);
    }
    return { watched: watched.count, survivors: await watched.survivors() };
  } finally {
    await server.close();
    await closeAppData(current);
  }
}

for (const engine of ENGINES) {
  describe(`reloading an app releases the loads it replaced (${engine.name})`, () => {
    it('200 fresh loads (SIGHUP; serve --watch after SIGHUP): every replaced AppData and its renderers is collected', { timeout: 240_000 }, async () => {
      const { watched, survivors } = await reloadedTimes(engine);
      assert.deepEqual(survivors, [], `of ${watched} objects of replaced loads, these are still reachable`);
      assert.equal(watched, 400, 'an AppData and its renderers per replaced load');
    });

    it('200 loads after an edit with the build cache (laneway dev, serve --watch): nothing accumulates', { timeout: 240_000 }, async () => {
      const { watched, survivors } = await reloadedTimes(engine, new BuildCache());
      // The views and scripts compiled by the first load are used again by every later one (no
      // edit touched them), and they keep what that load compiled them with; no other load stays.
      assert.deepEqual(survivors.filter((i) => i > 1), [], `of ${watched} objects of replaced loads, these are still reachable`);
      assert.equal(watched, 400);
    });
  });

  describe(`two apps of one process render with their own renderers (${engine.name})`, () => {
    let s: Served;
    after(() => s?.close());

    it('a parent and its nested site, same model and field names, each with its render: options', async () => {
      const child = writeApp(richApp('child'));
      dirs.push(child);
      s = await serve({ ...richApp('parent'), '🔌shop.yaml': `source: ${child}\nnamespace: shop\n` }, { data: { ...(await engine.data()), log: QUIET } });
      const v = new TestVisitor(s.port);
      assert.equal((await v.post('/seed', {}, { Accept: 'application/json' })).status, 200);
      assert.equal((await v.post('/shop/seed', {}, { Accept: 'application/json' })).status, 200);
      for (let i = 0; i < 2; i++) {
        const parent = (await v.get('/')).text;
        const nested = (await v.get('/shop/')).text;
        assert.match(parent, /<p class="parent-md">Some <em>text<\/em>.<\/p>\s*<p class="parent-html">A bio.<\/p>/);
        assert.match(parent, /<p class="parent-doc">A document.<\/p>/);
        assert.match(nested, /<p class="child-md">Some <em>text<\/em>.<\/p>\s*<p class="child-html">A bio.<\/p>/);
        assert.match(nested, /<p class="child-doc">A document.<\/p>/);
        assert.doesNotMatch(parent, /child-/);
        assert.doesNotMatch(nested, /parent-/);
      }
    });
  });
}
