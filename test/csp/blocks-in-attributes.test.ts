/**
 * Blocks inside attribute values (`<div id="{{$id}}{{/id}}">`, a partial whose users name each
 * copy): allowed when the block sits inside one quoted value of an attribute that takes text, and
 * every text that can fill it is attribute text — no quotes, `<`, `>` or backticks, only escaped
 * values. The default content is checked in the partial, each override where it is written (the
 * page, or a layout between them), with file:line:column.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { serve, writeApp, type AppFiles, type Served } from '../helpers.js';
import { browserHash, diagnosticsOf, M, parsePolicy } from './helpers.js';

const codes = (lines: string[]): string[] => lines.map((l) => l.replace(/: [^[]*\[/, ' ['));

/** `file:line:column` of an offset of `text`. */
function at(file: string, text: string, offset: number): string {
  const before = text.slice(0, offset);
  return `${file}:${before.split('\n').length}:${offset - before.lastIndexOf('\n')}`;
}

// A catalogue in the shape of a feature list: a page wrapper, groups with an id, entries with an
// id (and a data-kind), each copy named by its user.
const WRAPPER = `${M}<!doctype html>
<html>
<head><title>Catalogue</title></head>
<body>
{{$content}}{{/content}}
</body>
</html>
`;
const GROUP = `${M}
<section id="{{$id}}{{/id}}" class="group">
    <h2>{{$heading}}{{/heading}}</h2>
    {{$entries}}{{/entries}}
</section>`;
const ENTRY = `${M}
<div class="row" id="{{$id}}entry{{/id}}" data-kind="{{$kind}}plain{{/kind}}">
    <span class="icon">{{$icon}}{{/icon}}</span>
    <b>{{$name}}{{/name}}</b>
    <p>{{$text}}{{/text}}</p>
</div>`;

/** The catalogue page; `greenId` is the text of the first entry's id override. */
function catalogPage(greenId = 'green'): string {
  return `${M}
{{% partial /_wrap/ as wrap }}
{{% partial /_parts/ as part }}
{{% svg /_icons/ as icon }}
{{% import {kind, strong} from '&' }}

{{< wrap-page}}
{{$content}}
<h1>Our teas</h1>
{{< part-group}}
    {{$id}}brewing{{/id}}
    {{$heading}}Brewing{{/heading}}
    {{$entries}}<p>Steep, wait, pour.</p>{{/entries}}
{{/ part-group}}
{{< part-group}}
    {{$heading}}Leaves{{/heading}}
    {{$entries}}
    {{< part-entry}}
        {{$id}}${greenId}{{/id}}
        {{$kind}}k-{{kind}}{{/kind}}
        {{$icon}}{{> icon-leaf}}{{/icon}}
        {{$name}}Green &amp; fresh{{/name}}
        {{$text}}
        Picked in <em>spring</em>, steeped for two minutes.
        {{/text}}
    {{/ part-entry}}
    {{< part-entry}}
        {{$id}}black{{#strong}}-strong{{/strong}}{{/id}}
        {{$name}}Black{{/name}}
        {{$text}}Malty.{{/text}}
    {{/ part-entry}}
    {{< part-entry}}
        {{$name}}Mystery{{/name}}
    {{/ part-entry}}
    {{/entries}}
{{/ part-group}}
{{/content}}
{{/ wrap-page}}
`;
}

function catalog(greenId?: string): AppFiles {
  return {
    '/_wrap/page.html': WRAPPER,
    '/_parts/group.html': GROUP,
    '/_parts/entry.html': ENTRY,
    '/_icons/leaf.svg': '<svg viewBox="0 0 8 8"><path d="M1 7C1 3 3 1 7 1C7 5 5 7 1 7Z"/></svg>',
    '/catalog.html': catalogPage(greenId),
  };
}

/** Overrides of the green entry's id that could leave the attribute, and where each is reported. */
const UNSAFE: Array<{ text: string; offending: string; what: RegExp }> = [
  { text: 'x" onclick="alert(1)', offending: '"', what: /the character "/ },
  { text: "x' title='y", offending: "'", what: /the character '/ },
  { text: '{{{kind}}}', offending: '{{{', what: /unescaped output/ },
  { text: '{{& kind}}', offending: '{{&', what: /unescaped output/ },
  { text: '{{% show kind }}', offending: '{{%', what: /unescaped output \(\{\{% show \}\}\)/ },
  { text: 'a<b>', offending: '<', what: /the character </ },
  { text: 'a>b', offending: '>', what: /the character >/ },
  { text: 'a`b', offending: '`', what: /the character `/ },
  { text: 'x{{> icon-leaf}}', offending: '{{>', what: /a partial/ },
  { text: 'x{{< part-group}}{{/ part-group}}', offending: '{{<', what: /a parent or layout/ },
  { text: 'x{{#strong}}<i>{{/strong}}', offending: '<i>', what: /the character </ },
  { text: 'x{{$inner}}a"b{{/inner}}', offending: '"', what: /the character "/ },
];

/** Where the offending part of an unsafe override is, in catalog.html. */
function offendingAt(u: (typeof UNSAFE)[number]): string {
  const page = catalogPage(u.text);
  const override = page.indexOf(`{{$id}}${u.text}{{/id}}`);
  return at('catalog.html', page, override + '{{$id}}'.length + u.text.indexOf(u.offending));
}

describe('blocks inside attribute values (build)', () => {
  it('accepts a block inside one quoted value, filled with text and escaped values', () => {
    assert.deepEqual(diagnosticsOf(catalog()), []);
  });

  it('refuses each override that could leave the value, at the override in the page, naming the block site', () => {
    for (const u of UNSAFE) {
      const lines = diagnosticsOf(catalog(u.text), 'LW_CSP');
      assert.deepEqual(codes(lines), [`${offendingAt(u)} [LW_CSP_TAG_IN_TAG]`], u.text);
      assert.match(lines[0]!, u.what, u.text);
      assert.match(lines[0]!, /fills block "id", which _parts\/entry\.html:3:22 writes inside id="…" of <div>/, u.text);
      assert.match(lines[0]!, /write plain text \(without " ' < > or `\) and \{\{value\}\} tags, which are escaped/, u.text);
    }
  });

  it('checks the default content in the partial that holds the block', () => {
    const lines = diagnosticsOf(
      {
        '/_p/row.html': `${M}<div id="{{$id}}it's{{/id}}" class="{{$c}}{{{x}}}{{/c}}" title="{{$t}}a {{#x}}b{{/x}} {{x}}{{/t}}"></div>`,
        '/index.html': `${M}{{% partial /_p/ }}{{> row}}`,
      },
      'LW_CSP',
    );
    assert.deepEqual(codes(lines), ['_p/row.html:2:19 [LW_CSP_TAG_IN_TAG]', '_p/row.html:2:43 [LW_CSP_TAG_IN_TAG]']);
    assert.match(lines[0]!, /the default content of block "id", written inside id="…" of <div>, holds the character '/);
  });

  it('follows overrides through layouts: the text is checked where it is written', () => {
    const files = {
      '/_p/row.html': `${M}<div id="{{$id}}row{{/id}}">{{$body}}{{/body}}</div>`,
      // The layout fills the row's id with a block of its own, which pages fill in turn.
      '/_p/card.html': `${M}{{% partial /_p/row }}\n{{<row}}{{$id}}card-{{$name}}x{{/name}}{{/id}}{{$body}}{{$main}}{{/main}}{{/body}}{{/row}}`,
      '/ok.html': `${M}{{% partial /_p/card }}\n{{<card}}{{$name}}tea{{/name}}{{$main}}<b>fine here</b>{{/main}}{{/card}}`,
      '/bad.html': `${M}{{% partial /_p/card }}\n{{<card}}{{$main}}<b>fine here</b>{{/main}}\n{{$name}}"><script>alert(1)</script>{{/name}}{{/card}}`,
      // An override given to the outer parent wins over the layout's own.
      '/outer.html': `${M}{{% partial /_p/card }}\n{{<card}}{{$id}}a<b{{/id}}{{/card}}`,
    };
    const lines = diagnosticsOf(files, 'LW_CSP');
    assert.deepEqual(codes(lines), ['bad.html:4:10 [LW_CSP_TAG_IN_TAG]', 'outer.html:3:18 [LW_CSP_TAG_IN_TAG]']);
    assert.match(lines[0]!, /fills block "id", which _p\/row\.html:2:10 writes inside id="…" of <div>/);
  });

  it('reports an override once, however many pages use it', () => {
    const lines = diagnosticsOf(
      {
        '/_p/row.html': `${M}<div id="{{$id}}row{{/id}}"></div>`,
        '/_p/card.html': `${M}{{% partial /_p/row }}{{<row}}{{$id}}a"b{{/id}}{{/row}}`,
        '/a.html': `${M}{{% partial /_p/card }}{{> card}}`,
        '/b.html': `${M}{{% partial /_p/card }}{{> card}}`,
        '/📤/Card.html': `${M}{{% partial /_p/card }}{{> card}}`,
      },
      'LW_CSP',
    );
    assert.deepEqual(codes(lines), ['_p/card.html:2:39 [LW_CSP_TAG_IN_TAG]']);
  });

  it('checks the overrides of an HTML supplier', () => {
    const lines = diagnosticsOf(
      {
        '/_p/row.html': `${M}<div id="{{$id}}row{{/id}}"></div>`,
        '/📤/Card.html': `${M}{{% partial /_p/row }}\n{{<row}}{{$id}}{{{x}}}{{/id}}{{/row}}`,
      },
      'LW_CSP',
    );
    assert.deepEqual(codes(lines), ['📤/Card.html:3:16 [LW_CSP_TAG_IN_TAG]']);
  });

  it('refuses a block that does not open and close inside one quoted value', () => {
    const lines = (tag: string): string[] => codes(diagnosticsOf({ '/_p/row.html': `${M}${tag}`, '/index.html': `${M}{{% partial /_p/ }}{{> row}}` }, 'LW_CSP'));
    const cases: Array<[string, string]> = [
      ['<div id="{{$id}}" title="{{/id}}"></div>', '_p/row.html:2:10 [LW_CSP_TAG_IN_TAG]'],
      ['<div id="{{$id}}"{{/id}}></div>', '_p/row.html:2:10 [LW_CSP_TAG_IN_TAG]'],
      ['<div id="{{$id}}">{{/id}}</div>', '_p/row.html:2:10 [LW_CSP_TAG_IN_TAG]'],
      ['<div {{$attrs}}{{/attrs}}></div>', '_p/row.html:2:6 [LW_CSP_TAG_IN_TAG]'],
      ['<div id={{$id}}x{{/id}}></div>', '_p/row.html:2:9 [LW_CSP_TAG_IN_TAG]'],
      ['<div da{{$n}}{{/n}}ta-x="1"></div>', '_p/row.html:2:8 [LW_CSP_TAG_IN_TAG]'],
      ['<d{{$n}}{{/n}}iv></div>', '_p/row.html:2:3 [LW_CSP_TAG_IN_TAG]'],
    ];
    for (const [tag, expected] of cases) assert.deepEqual(lines(tag), [expected], tag);
    const unquoted = diagnosticsOf({ '/_p/row.html': `${M}<div id={{$id}}x{{/id}}></div>`, '/index.html': `${M}{{% partial /_p/ }}{{> row}}` }, 'LW_CSP');
    assert.match(unquoted[0]!, /a block inside the unquoted value of id=: .*quote the value \(id="\{\{\$id\}\}\{\{\/id\}\}"\)/);
  });

  it('refuses a block in attributes where text is code, CSS, a document, a URL or a policy source', () => {
    const lines = (tag: string): string[] =>
      diagnosticsOf({ '/_p/row.html': `${M}${tag}`, '/index.html': `${M}{{% partial /_p/ }}{{> row}}` }, 'LW_CSP_TAG_IN_TAG');
    const cases: Array<[string, RegExp]> = [
      ['<a href="{{$u}}/tea{{/u}}">x</a>', /a block inside href="…" of <a>: a URL decides/],
      ['<img src="{{$u}}/a.png{{/u}}" alt="">', /src="…" of <img>/],
      ['<img src="/a.png" srcset="{{$u}}/a.png 2x{{/u}}" alt="">', /srcset="…"/],
      ['<form action="{{$u}}/go{{/u}}"><button formaction="/x{{$v}}{{/v}}">x</button></form>', /action="…"/],
      ['<meta http-equiv="refresh" content="{{$u}}0{{/u}}">', /content="…"/],
      ['<button onclick="{{$u}}{{/u}}">x</button>', /onclick="…" of <button>: an event handler holds code/],
      ['<p style="{{$u}}{{/u}}">x</p>', /style="…" of <p>: a style attribute holds CSS/],
      ['<iframe srcdoc="{{$u}}{{/u}}"></iframe>', /srcdoc="…" of <iframe>/],
      ['<script type="{{$u}}module{{/u}}"></script>', /type="…" of <script>: the attributes of <script> decide what runs/],
      ['<link rel="{{$u}}stylesheet{{/u}}" href="/a.css">', /rel="…" of <link>/],
      ['<style media="{{$u}}print{{/u}}">p{}</style>', /media="…" of <style>/],
      ['<link itemprop="content-security-policy" data-img-src-data="{{$v}}true{{/v}}">', /data-img-src-data="…" of <link>/],
    ];
    for (const [tag, expected] of cases) {
      const found = lines(tag);
      assert.ok(found.length >= 1, tag);
      assert.match(found[0]!, expected, tag);
      assert.ok(
        found.every((l) => /^_p\/row\.html:2:\d+: /.test(l)),
        `${tag}: ${found.join('\n')}`,
      );
    }
    // The same values through value tags stay as they were.
    assert.deepEqual(lines('<a href="{{u}}" title="{{t}}">x</a><img src="/a.png" alt="{{$alt}}tea{{/alt}}">'), []);
  });
});

describe('blocks inside attribute values (over HTTP)', () => {
  let s: Served;
  before(async () => {
    s = await serve({
      ...catalog(),
      // One inline script next to blocks in attributes: the policy allows that script and nothing else.
      '/scripted.html': `${M}{{% partial /_parts/ as part }}\n<script>document.documentElement.dataset.ready = '1';</script>\n{{<part-entry}}{{$id}}one{{/id}}{{$kind}}script{{/kind}}{{/part-entry}}\n`,
    });
  });
  after(() => s.close());

  it('renders each copy with the id its user gave, and the defaults where none is given', async () => {
    const r = await s.get('/catalog?strong=1');
    assert.equal(r.status, 200);
    assert.match(r.text, /<section id="brewing" class="group">\s*<h2>Brewing<\/h2>\s*<p>Steep, wait, pour.<\/p>/);
    // No id given to the second group: the block's default (empty) content.
    assert.match(r.text, /<section id="" class="group">\s*<h2>Leaves<\/h2>/);
    assert.match(r.text, /<div class="row" id="green" data-kind="k-">\s*<span class="icon"><svg viewBox="0 0 8 8">/);
    assert.match(r.text, /<b>Green &amp; fresh<\/b>\s*<p>Picked in <em>spring<\/em>, steeped for two minutes\.\n\s*<\/p>/);
    assert.match(r.text, /<div class="row" id="black-strong" data-kind="plain">\s*<span class="icon"><\/span>\s*<b>Black<\/b>/);
    assert.match(r.text, /<div class="row" id="entry" data-kind="plain">\s*<span class="icon"><\/span>\s*<b>Mystery<\/b>/);
    const plain = await s.get('/catalog');
    assert.match(plain.text, /<div class="row" id="black" data-kind="plain">/);
  });

  it('escapes values inside an override, so data stays inside the attribute', async () => {
    const r = await s.get('/catalog?kind=' + encodeURIComponent('x" onmouseover="alert(1)"><script>alert(2)</script>'));
    assert.equal(r.status, 200);
    assert.match(r.text, /data-kind="k-x&quot; onmouseover=&quot;alert\(1\)&quot;&gt;&lt;script&gt;alert\(2\)&lt;\/script&gt;"/);
    assert.doesNotMatch(r.text, /<script|onmouseover="/);
  });

  it('adds nothing to the page policy: text in attributes makes no script or style', async () => {
    const p = parsePolicy((await s.get('/catalog')).headers['content-security-policy']);
    assert.deepEqual(p.get('script-src'), ["'none'"]);
    assert.deepEqual(p.get('style-src'), ["'none'"]);
    const r = await s.get('/scripted');
    assert.match(r.text, /<div class="row" id="one" data-kind="script">/);
    const q = parsePolicy(r.headers['content-security-policy']);
    assert.deepEqual(q.get('script-src'), [browserHash("document.documentElement.dataset.ready = '1';")]);
    assert.deepEqual(q.get('style-src'), ["'none'"]);
  });

  it('fails to load with each unsafe override, at the override in the page', async () => {
    for (const u of UNSAFE) {
      const dir = writeApp(catalog(u.text));
      try {
        await assert.rejects(serve(dir), (e: Error) => {
          assert.equal(e.name, 'BuildError', u.text);
          const errors = e.message.split('\n').slice(1);
          assert.deepEqual(codes(errors), [`${offendingAt(u)} [LW_CSP_TAG_IN_TAG]`], u.text);
          return true;
        });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
  });
});
