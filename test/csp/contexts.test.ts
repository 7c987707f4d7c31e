/**
 * Contextual escaping (docs/views.md "Values for scripts and styles"): data never becomes code. A
 * template tag inside a script that runs or inside a <style> is a build error at the tag; a value
 * tag may not name an element or an attribute; a JSON data block may hold tags, escaped for JSON;
 * and a page's policy is made once, at load, from the text the developer wrote.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { serve, type Served } from '../helpers.js';
import { browserHash, diagnosticsOf, inlineBlocks, M, parsePolicy } from './helpers.js';

const codes = (lines: string[]): string[] => lines.map((l) => l.replace(/: [^[]*\[/, ' ['));

describe('template tags inside scripts that run and styles', () => {
  it('is a build error at each tag, with the fix in the message (the reported injection)', () => {
    const lines = diagnosticsOf({ '/index.html': `${M}{{% import {A, B} from '&' }}\n<script>var first = "{{A}}", second = "{{B}}";</script>\n` }, 'LW_CSP');
    assert.deepEqual(codes(lines), ['index.html:3:22 [LW_CSP_TAG_IN_SCRIPT]', 'index.html:3:40 [LW_CSP_TAG_IN_SCRIPT]']);
    assert.match(lines[0]!, /index\.html:3:22: template tag inside an inline <script> that runs: a value would change the code with data/);
    assert.match(lines[0]!, /data-\* attribute/);
    assert.match(lines[0]!, /<script type="application\/json"/);
  });

  it('covers template literals, every kind of tag, and every type that runs', () => {
    const lines = diagnosticsOf(
      {
        '/index.html': [
          M.trimEnd(),
          '{{% partial /_p/ }}',
          '<script>`Hello {{A}}`</script>',
          '<script type="module">import "{{m}}";</script>',
          '<script type=" Text/JavaScript ">{{{raw}}}</script>',
          '<script type="">{{#a}}x{{/a}}</script>',
          '<script language="javascript">{{> p}}</script>',
          '<script type="importmap">{"imports": {"a": "{{url}}"}}</script>',
          '<script type="{{t}}">{{x}}</script>',
          '<script>var year = {{%year}};</script>',
          '<svg><script>{{x}}</script></svg>',
          '<style>p { color: {{c}}; }</style>',
          '',
        ].join('\n'),
        '/_p/p.html': `${M}x`,
      },
      'LW_CSP',
    );
    assert.deepEqual(codes(lines), [
      'index.html:3:16 [LW_CSP_TAG_IN_SCRIPT]',
      'index.html:4:31 [LW_CSP_TAG_IN_SCRIPT]',
      'index.html:5:34 [LW_CSP_TAG_IN_SCRIPT]',
      'index.html:6:17 [LW_CSP_TAG_IN_SCRIPT]',
      'index.html:7:31 [LW_CSP_TAG_IN_SCRIPT]',
      'index.html:8:45 [LW_CSP_TAG_IN_SCRIPT]',
      'index.html:9:22 [LW_CSP_TAG_IN_SCRIPT]',
      'index.html:10:20 [LW_CSP_TAG_IN_SCRIPT]',
      'index.html:11:14 [LW_CSP_TAG_IN_SCRIPT]',
      'index.html:12:19 [LW_CSP_TAG_IN_SCRIPT]',
    ]);
    // One error per section (not one for its opening and one for its closing tag), a hint for partials.
    assert.match(lines[3]!, /a section would change the code/);
    assert.match(lines[4]!, /put the whole <script> element inside the partial or block/);
    assert.match(lines[9]!, /template tag inside a <style>: a value would change the CSS/);
  });

  it('reports a tag in a partial or layout in that file, and a block site in a script', () => {
    const lines = diagnosticsOf(
      {
        '/_layout.html': `${M}<html>\n<script>{{$js}}{{/js}}</script>\n{{$main}}{{/main}}</html>\n`,
        '/_p/row.html': `${M}<li>\n  <script>\n    track({{id}});\n  </script>\n</li>\n`,
        '/index.html': `${M}{{% partial /_p/ }}{{% partial /_layout }}{{<layout}}{{$main}}{{> row}}{{/main}}{{/layout}}\n`,
      },
      'LW_CSP',
    );
    assert.deepEqual(codes(lines), ['_layout.html:3:9 [LW_CSP_TAG_IN_SCRIPT]', '_p/row.html:4:11 [LW_CSP_TAG_IN_SCRIPT]']);
  });

  it('allows comments inside scripts, and tags inside data blocks of other types', () => {
    const lines = diagnosticsOf(
      { '/index.html': `${M}<script>{{! a note }}var a = 1;</script>\n<script type="text/template" id="row"><li>{{name}}</li></script>\n<script type="application/ld+json">{"name": "{{name}}"}</script>\n` },
      'LW_CSP',
    );
    assert.deepEqual(lines, []);
  });
});

describe('value tags inside start tags', () => {
  it('may stand only inside a quoted attribute value', () => {
    const lines = diagnosticsOf(
      {
        '/index.html': [
          M.trimEnd(),
          '<p {{attrs}}>a</p>',
          '<p on{{event}}="go()">b</p>',
          '<a href={{url}}>c</a>',
          '<h{{level}}>d</h1>',
          '<iframe srcdoc="<p>{{html}}</p>"></iframe>',
          '<input {{% choose-string m x }}>',
          '',
        ].join('\n'),
      },
      'LW_CSP',
    );
    assert.deepEqual(codes(lines), [
      'index.html:2:4 [LW_CSP_TAG_IN_TAG]',
      'index.html:3:6 [LW_CSP_TAG_IN_TAG]',
      'index.html:4:9 [LW_CSP_TAG_IN_TAG]',
      'index.html:5:3 [LW_CSP_TAG_IN_TAG]',
      'index.html:6:20 [LW_CSP_TAG_IN_TAG]',
      'index.html:7:8 [LW_CSP_TAG_IN_TAG]',
    ]);
    assert.match(lines[0]!, /quote its value/);
    assert.match(lines[4]!, /srcdoc/);
  });

  it('allows quoted values and sections choosing literal attributes', () => {
    const lines = diagnosticsOf({ '/index.html': `${M}<p class="a {{x}}" title='{{y}}'>x</p><input {{#on}}checked{{/on}} value="{{v}}"><p {{#c}}hidden{{/c}}>{{%year}}</p>\n` }, 'LW_CSP');
    assert.deepEqual(lines, []);
  });
});

describe('JSON data blocks', () => {
  it('refuse what cannot be escaped for JSON, at its position', () => {
    const lines = diagnosticsOf(
      {
        '/index.html': [
          M.trimEnd(),
          '{{% partial /_p/ }}',
          '<script type="application/json">{"a": {{> p}}}</script>',
          '<script type="application/json">{"a": "{{{raw}}}"}</script>',
          '<script type="application/json">{"a": {{#x}}"{{/x}}1"}</script>',
          '<script type="application/json">{"a": "\\{{x}}"}</script>',
          '<script type="application/json">{"a": "\\u00{{x}}"}</script>',
          '{{#s}}<script type="application/json">{"a": "{{x}}"}{{/s}}</script>',
          '<script type="application/json">{"ok": [{{#list}}"{{.}}", {{/list}}null], "s": "{{#x}}\\"{{/x}}"}</script>',
          '',
        ].join('\n'),
        '/_p/p.html': `${M}1`,
      },
      'LW_CSP',
    );
    assert.deepEqual(codes(lines), [
      'index.html:3:39 [LW_CSP_DATA_BLOCK]',
      'index.html:4:40 [LW_CSP_RAW_IN_INLINE]',
      'index.html:5:39 [LW_CSP_DATA_BLOCK]',
      'index.html:6:41 [LW_CSP_DATA_BLOCK]',
      'index.html:7:44 [LW_CSP_DATA_BLOCK]',
      'index.html:8:7 [LW_CSP_DATA_BLOCK]',
    ]);
  });
});

describe('JSON data blocks over HTTP', () => {
  let s: Served;
  const HOSTILE = ['</script><script>window.x=1</script>', '"}, "admin": true, "z": {"', '\\', '<!--', 'a&b>c', '\u2028\u2029', 'tab\tnew\nline', '😀'];
  before(async () => {
    s = await serve({
      '/📤/V.js': [
        "import {v} from '&'",
        'const S = v',
        'const N = 42',
        "const O = {name: v, list: [1, 'two', null], ok: true}",
        'const F = () => v',
        'const Nothing = null',
        'export {S, N, O, F, Nothing}',
      ].join('\n'),
      '/index.html': `${M}{{% import {S, N, O, F, Nothing} from '📤' }}<script type="application/json" id="d">{"s": "{{S}}", "sv": {{S}}, "n": {{N}}, "ns": "{{N}}", "o": {{O}}, "f": {{F}}, "nothing": {{Nothing}}, "missing": {{missing}}, "name": "{{O.name}}", "in": "a {{S}} b"}</script>\n<p>{{S}}</p>\n`,
      '/ld.html': `${M}{{% import {S} from '📤' }}<script type="application/ld+json">{"@type": "Thing", "name": "{{S}}"}</script>\n`,
    });
  });
  after(() => s.close());

  it('writes values JSON-escaped, so the block parses back to the values, whatever they hold', async () => {
    for (const v of HOSTILE) {
      const r = await s.get('/?v=' + encodeURIComponent(v));
      assert.equal(r.status, 200);
      const json = /<script type="application\/json" id="d">(.*?)<\/script>/s.exec(r.text)?.[1];
      assert.ok(json !== undefined, `the block ends where it was written, for ${JSON.stringify(v)}`);
      assert.doesNotMatch(json, /[<>&\u2028\u2029]/);
      assert.deepEqual(JSON.parse(json), {
        s: v,
        sv: v,
        n: 42,
        ns: '42',
        o: { name: v, list: [1, 'two', null], ok: true },
        f: v,
        nothing: null,
        missing: null,
        name: v,
        in: `a ${v} b`,
      });
      assert.equal(r.text.match(/<script/g)!.length, 1, 'no element was added');
    }
  });

  it('escapes <, >, &, U+2028 and U+2029 as \\u escapes', async () => {
    const r = await s.get('/?v=' + encodeURIComponent('</script>&\u2028\u2029'));
    assert.match(r.text, /"s": "\\u003c\/script\\u003e\\u0026\\u2028\\u2029"/);
    assert.match(r.text, /<p>&lt;\/script&gt;&amp;\u2028\u2029<\/p>/);
  });

  it('adds no hash for data blocks (they do not run), ld+json included', async () => {
    for (const path of ['/', '/ld']) {
      const r = await s.get(path + '?v=x');
      assert.deepEqual(parsePolicy(r.headers['content-security-policy']).get('script-src'), ["'none'"]);
    }
    const r = await s.get('/ld?v=' + encodeURIComponent('"</script>'));
    assert.deepEqual(JSON.parse(/<script type="application\/ld\+json">(.*?)<\/script>/.exec(r.text)![1]!), { '@type': 'Thing', name: '"</script>' });
  });
});

describe('a policy made once, at load', () => {
  let s: Served;
  before(async () => {
    s = await serve({
      '/📤/V.js': "import {v} from '&'\nconst V = v\nexport {V}",
      '/_p/tail.html': `${M}<script>\n  var tail = 1;\n</script>\n<style>\n  p { margin: 0; }\n</style>\n`,
      '/_p/outer.html': `${M}{{% partial /_p/ }}<div>\n    {{> tail}}\n</div>\n`,
      '/_layout.html': `${M}<body>\n  <main>\n    {{$main}}{{/main}}\n  </main>\n</body>\n`,
      '/index.html': [
        M.trimEnd(),
        "{{% partial /_p/ }}{{% partial /_layout }}{{% import {V} from '📤' }}",
        '{{<layout}}',
        '{{$main}}',
        '<p data-v="{{V}}">{{V}}</p>',
        '<script data-v="{{V}}">',
        '  document.title = document.currentScript.dataset.v;',
        '</script>',
        '{{> tail}}',
        '  {{> tail}}',
        '\t{{> outer}}',
        '{{/main}}',
        '{{/layout}}',
        '',
      ].join('\n'),
    });
  });
  after(() => s.close());

  it('is the same for every response, whatever the data', async () => {
    const headers = new Set<string>();
    for (const v of ['a', '</script><script>alert(1)</script>', '"\';', '']) {
      const r = await s.get('/?v=' + encodeURIComponent(v));
      assert.equal(r.status, 200);
      headers.add(String(r.headers['content-security-policy']));
    }
    assert.equal(headers.size, 1);
  });

  it('allows every inline block as rendered, at each indentation the page gives it, and nothing more', async () => {
    const r = await s.get('/?v=x');
    const policy = parsePolicy(r.headers['content-security-policy']);
    const { scripts, styles } = inlineBlocks(r.text);
    // The override is rendered at the layout's block site (4 spaces); there the tail partial is
    // included as is, indented by 2 more, and inside outer (a tab, then outer's own 4 spaces).
    assert.equal(scripts.length, 4);
    assert.equal(new Set(scripts).size, 4);
    for (const t of scripts) assert.ok(policy.get('script-src')!.includes(browserHash(t)), `${JSON.stringify(t)} allowed`);
    for (const t of styles) assert.ok(policy.get('style-src')!.includes(browserHash(t)), `${JSON.stringify(t)} allowed`);
    assert.ok(scripts.includes('\n    \t      var tail = 1;\n    \t    '), JSON.stringify(scripts));
    // Only text this page renders is allowed, and each block as written (its unindented form).
    assert.equal(policy.get('script-src')!.length, scripts.length + 2);
    assert.equal(policy.get('style-src')!.length, styles.length + 1);
  });
});

describe('indented blocks', () => {
  it('hashes a block reached through a dynamic partial at its indentation', async () => {
    const s = await serve({
      '/📤/V.js': "import {v} from '&'\nconst V = v ?? 'a'\nexport {V}",
      '/_p/a.html': `${M}<script>\n  var a = 1;\n</script>\n`,
      '/_p/b.html': `${M}<style>\n  p { color: red; }\n</style>\n`,
      '/index.html': `${M}{{% partial /_p/ }}{{% import {V} from '📤' }}<div>\n   {{>*V}}\n</div>\n`,
    });
    try {
      for (const v of ['a', 'b']) {
        const r = await s.get('/?v=' + v);
        const policy = parsePolicy(r.headers['content-security-policy']);
        const { scripts, styles } = inlineBlocks(r.text);
        assert.equal(scripts.length + styles.length, 1);
        for (const t of scripts) assert.ok(policy.get('script-src')!.includes(browserHash(t)), t);
        for (const t of styles) assert.ok(policy.get('style-src')!.includes(browserHash(t)), t);
        assert.match(r.text, /\n     (var a|p \{)/);
      }
    } finally {
      await s.close();
    }
  });

  it('refuses a block that one page would render at too many indentations (a partial including itself)', () => {
    const lines = diagnosticsOf(
      {
        '/_p/tree.html': `${M}{{% partial /_p/ }}<li>\n  <script>\n    x();\n  </script>\n  {{#children}}\n  {{> tree}}\n  {{/children}}\n</li>\n`,
        '/index.html': `${M}{{% partial /_p/ }}<ul>\n  {{> tree}}\n</ul>\n`,
      },
      'LW_CSP',
    );
    assert.deepEqual(codes(lines), ['_p/tree.html:3:3 [LW_CSP_INDENT_VARIANTS]']);
    assert.match(lines[0]!, /more than 64 different indentations/);
  });
});

describe('sections and partials inside start tags (second hostile pass)', () => {
  const lines = (body: string): string[] =>
    codes(diagnosticsOf({ '/index.html': `${M}{{% import {A, B} from '&' }}\n${body}\n`, '/_p/p.html': `${M}x` }, 'LW_CSP'));

  it('refuses every shape that lets the section move quotes, names or the element', () => {
    const cases: Array<[string, string]> = [
      ['<a id="l" title="x{{#B}}"{{/B}} class="{{A}}">link</a>', 'index.html:3:19 [LW_CSP_TAG_IN_TAG]'],
      ['<iframe title="x{{#B}}"{{/B}} class="{{A}}"></iframe>', 'index.html:3:17 [LW_CSP_TAG_IN_TAG]'],
      ['<a {{#B}}title="x">{{/B}}y</a>', 'index.html:3:4 [LW_CSP_TAG_IN_TAG]'],
      ['<a on{{#B}}{{/B}}click="x">y</a>', 'index.html:3:6 [LW_CSP_TAG_IN_TAG]'],
      ['<iframe src{{#B}}{{/B}}doc="{{A}}"></iframe>', 'index.html:3:12 [LW_CSP_TAG_IN_TAG]'],
      ['<scr{{#B}}{{/B}}ipt>x</script>', 'index.html:3:5 [LW_CSP_TAG_IN_TAG]'],
      ['<script {{#B}}type="application/json"{{/B}}>{"a": "{{A}}"}</script>', 'index.html:3:9 [LW_CSP_TAG_IN_TAG]'],
    ];
    for (const [body, expected] of cases) assert.deepEqual(lines(body), [expected], body);
    // Two sections glued to each other: rendered together they would make one name ("hiddeny").
    assert.deepEqual(lines('<p class="x" {{#B}}hidden{{/B}}{{#A}}y{{/A}}>z</p>'), ['index.html:3:14 [LW_CSP_TAG_IN_TAG]', 'index.html:3:32 [LW_CSP_TAG_IN_TAG]']);
  });

  it('reads script types as the browser does, and javascript: URLs across tags', () => {
    assert.deepEqual(lines('<script type="text&#47;javascript">var x = {{A}}</script>'), ['index.html:3:44 [LW_CSP_TAG_IN_SCRIPT]']);
    assert.deepEqual(lines('<a href="{{#B}}javascript:{{/B}}{{A}}">y</a>'), ['index.html:3:10 [LW_CSP_JAVASCRIPT_URL]']);
    assert.deepEqual(lines('<noscript><!--</noscript><script>{{A}}</script>--></noscript>'), ['index.html:3:34 [LW_CSP_TAG_IN_SCRIPT]']);
  });

  it('still accepts sections around whole attributes and inside one value', () => {
    assert.deepEqual(lines('<input {{#B}}checked{{/B}} value="{{A}}"><p class="a {{#B}}b{{/B}}">{{A}}</p><a href="/x"{{#B}} hidden{{/B}}>y</a>'), []);
  });
});
