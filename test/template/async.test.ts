// Rendering with values that are Promises: synchronous while values are at hand, asynchronous
// from the first Promise on, with output in template order wherever the Promise appears.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { WebSafe } from '../../src/shared/index.js';
import type { RenderInput } from '../../src/template/index.js';
import { build, MARKER, page } from './helpers.js';

/** Resolves after a macrotask, so later Promises really wait. */
function later<T>(value: T, ms = 1): Promise<T> {
  return new Promise((resolve) => setTimeout(() => resolve(value), ms));
}

function input(values: Record<string, unknown>): RenderInput {
  return { importValue: (_m, n) => values[n], dev: true };
}

async function render(files: Record<string, string>, values: Record<string, unknown>, thisValue?: unknown): Promise<{ html: string; sync: boolean }> {
  const { view, messages } = build(files);
  assert.ok(view, messages.join('\n'));
  const out = view.render(input(values), thisValue);
  const sync = !(out instanceof Promise);
  return { html: (await out).html, sync };
}

const layoutFiles = (body: string): Record<string, string> => ({
  '/page.html': `${MARKER}{{% partial /_layout }}{{% partial /_p/ }}{{% import {Tasks, Title} from '📦' }}{{<layout}}{{$main}}${body}{{/main}}{{/layout}}`,
  '/_layout.html': `${MARKER}{{% import {Site} from '📦' }}<h1>{{Site}}</h1>{{$main}}{{/main}}<footer>{{Site}}</footer>`,
  '/_p/task.html': `${MARKER}{{% import {Owner} from '📦' }}<li>{{title}} ({{Owner}})</li>`,
});

describe('async rendering', () => {
  it('stays synchronous when every value is at hand', async () => {
    const r = await render(page("{{% import {a} from '📤' }}{{a}}"), { a: 'x' });
    assert.deepEqual(r, { html: 'x', sync: true });
  });

  it('waits for an interpolated Promise', async () => {
    const r = await render(page("{{% import {a, b} from '📤' }}[{{a}}|{{b}}]"), { a: later('A'), b: 'B' });
    assert.deepEqual(r, { html: '[A|B]', sync: false });
  });

  it('waits for a section value and for Promises inside the section', async () => {
    const r = await render(page("{{% import {user} from '📤' }}{{#user}}<b>{{name}}</b>{{/user}}{{^user}}none{{/user}}"), {
      user: later({ name: later('Ada') }),
    });
    assert.equal(r.html, '<b>Ada</b>');
  });

  it('iterates a Promise of a list whose items hold Promises, in order', async () => {
    const items = [{ n: later('1', 5) }, { n: '2' }, { n: later('3', 1) }];
    const r = await render(page("{{% import {L} from '📤' }}{{#L}}{{n}}{{#$last}}.{{/$last}}{{^$last}},{{/$last}}{{/L}}"), { L: later(items) });
    assert.equal(r.html, '1,2,3.');
  });

  it('iterates a list of Promises', async () => {
    const r = await render(page("{{% import {L} from '📤' }}{{#L as x}}<{{x}}>{{/L}}"), { L: [later('a', 3), 'b', later('c')] });
    assert.equal(r.html, '<a><b><c>');
  });

  it('iterates an async iterable (a stream of records)', async () => {
    async function* stream(): AsyncGenerator<{ id: number }> {
      yield { id: 1 };
      await later(0);
      yield { id: 2 };
    }
    const r = await render(page("{{% import {Rows} from '📤' }}{{#Rows}}#{{id}}{{/Rows}}{{^Empty}}!{{/Empty}}"), { Rows: stream(), Empty: (async function* () {})() });
    assert.equal(r.html, '#1#2!');
  });

  it('groups a Promise of a list with by', async () => {
    const r = await render(page("{{% import {L} from '📤' }}{{#L by 2 as g}}({{#g}}{{.}}{{/g}}){{/L}}"), { L: later([1, 2, 3]) });
    assert.equal(r.html, '(12)(3)');
  });

  it('waits inside partials and layouts', async () => {
    const files = layoutFiles('<ul>{{#Tasks}}{{>task}}{{/Tasks}}</ul>');
    const r = await render(files, {
      Site: later('Shop'),
      Owner: later('me'),
      Tasks: later([{ title: later('a') }, { title: 'b' }]),
    });
    assert.equal(r.html, '<h1>Shop</h1><ul><li>a (me)</li><li>b (me)</li></ul><footer>Shop</footer>');
  });

  it('awaits Promise receivers and arguments of method calls', async () => {
    const Task = later({ byOwner: async (o: string) => [`${o}-1`, `${o}-2`], count: (n: number, o: { k: string }) => `${n}${o.k}` });
    const r = await render(page("{{% import {Task, owner, n, k} from '📦' }}{{#Task.byOwner owner}}{{.}} {{/Task.byOwner}}{{Task.count n k=k}}"), {
      Task,
      owner: later('ada'),
      n: later(3),
      k: later('!'),
    });
    assert.equal(r.html, 'ada-1 ada-2 3!');
  });

  it('calls a method found behind a Promise along a path', async () => {
    const article = later({ get: async () => ({ content: { html: () => later('<p>') } }) });
    const r = await render(page("{{% import {article} from '📦' }}{{article.get.content.html}}"), { article });
    assert.equal(r.html, '&lt;p&gt;');
  });

  it('emits a web-safe value from an async HTML supplier raw', async () => {
    const ItemDIV = async (a: { id: number }): Promise<WebSafe> => new WebSafe(`<div>${a.id}</div>`);
    const r = await render(page("{{% import {ItemDIV, item} from '📤' }}{{{ItemDIV item}}}"), { ItemDIV, item: later({ id: 7 }) });
    assert.equal(r.html, '<div>7</div>');
  });

  it('evaluates Render-If, const and Cache-Control-Seconds from Promises', async () => {
    const files = page("{{% import {Show, Age, Name} from '📤' }}{{% Render-If Show }}{{% Cache-Control-Seconds Age }}{{% const who = Name }}hi {{who}}");
    const { view } = build(files);
    assert.deepEqual(await view!.render(input({ Show: later(true), Age: later(9), Name: later('Ada') })), { html: 'hi Ada', empty: false, cacheSeconds: 9 });
    assert.deepEqual(await view!.render(input({ Show: later(false), Age: 9, Name: 'x' })), { html: '', empty: true });
  });

  it('asks for an imported value once even when it is a Promise', async () => {
    let calls = 0;
    const { view } = build(page("{{% import {a} from '📤' }}{{a}}{{a}}{{#a}}{{.}}{{/a}}"));
    const out = await view!.render({
      dev: false,
      importValue: () => {
        calls++;
        return later('x');
      },
    });
    assert.equal(out.html, 'xxx');
    assert.equal(calls, 1);
  });

  it('renders concurrent requests of one view independently', async () => {
    const { view } = build(page("{{% import {id} from '📤' }}<{{id}}>{{#id}}{{.}}{{/id}}"));
    const outs = await Promise.all([1, 2, 3].map((i) => view!.render(input({ id: later(i, 4 - i) }))));
    assert.deepEqual(
      outs.map((o) => o.html),
      ['<1>1', '<2>2', '<3>3'],
    );
  });
});
