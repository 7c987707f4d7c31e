/**
 * A partial between the attributes of a start tag (docs/views.md "Partials"): accepted at load
 * when its file holds only fixed attributes (`<input {{>disable-spell}}>`, as the platform's
 * console writes it), and rendered there; a partial holding a value tag, an element, an event
 * handler or an address stays refused, as does one glued to an attribute. And a two-word import
 * entry (`{A, B c}`) imports nothing, with a warning, as on the platform.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { diagnosticsOf, serve, type Served } from '../helpers.js';

const M = '<!--TEMPLATE mustache-->\n';
const SPELL = `${M}autocomplete="off" autocorrect="off" spellcheck='false' data-gramm=false\n`;

describe('a partial of literal attributes inside a start tag', () => {
  const APP = {
    '/_partials/_util/disable-spell.html': SPELL,
    '/index.html': `${M}{{% partial /_partials/_util/disable-spell }}<form method="post"><input class="input" type="text" name="title" required {{>disable-spell}}><textarea name="b" {{>disable-spell}}></textarea></form>\n`,
  };
  let s: Served;
  before(async () => {
    s = await serve(APP);
  });
  after(() => s.close());

  it('is accepted at load', () => {
    assert.deepEqual(diagnosticsOf(APP), []);
  });

  it('renders its attributes in the tag', async () => {
    const r = await s.get('/');
    assert.equal(r.status, 200);
    assert.match(r.text, /<input class="input" type="text" name="title" required autocomplete="off" autocorrect="off" spellcheck='false' data-gramm=false\s*>/);
    assert.match(r.text, /<textarea name="b" autocomplete="off" autocorrect="off" spellcheck='false' data-gramm=false\s*><\/textarea>/);
  });

  it('a partial with a value tag, an element, a handler, a style or an address is refused at its line', () => {
    const cases: Array<[string, RegExp]> = [
      [`${M}class="{{kind}}"\n`, /holds a template tag/],
      [`${M}<b>x</b>\n`, /holds an element or markup/],
      [`${M}data-x="1" onclick="go()"\n`, /holds the event handler onclick/],
      [`${M}style="color: red"\n`, /holds style=/],
      [`${M}href="https://example.com/"\n`, /holds href=/],
      [`${M}a="1"b="2"\n`, /without a space between them/],
    ];
    for (const [partial, why] of cases) {
      const lines = diagnosticsOf({ '/_p/x.html': partial, '/index.html': `${M}{{% partial /_p/ }}\n<input name="a" {{>x}}>\n` });
      assert.equal(lines.length, 1, lines.join('\n'));
      assert.match(lines[0]!, /^index\.html:3:17: a partial inside a start tag \(\/_p\/x\.html\) that /);
      assert.match(lines[0]!, why);
      assert.match(lines[0]!, /\[LW_CSP_TAG_IN_TAG\]$/);
    }
  });

  it('glued to an attribute, or inside a quoted value, it stays refused', () => {
    const glued = diagnosticsOf({ '/_p/x.html': SPELL, '/index.html': `${M}{{% partial /_p/ }}<input required{{>x}}>\n` });
    assert.equal(glued.length, 1);
    assert.match(glued[0]!, /glued to an attribute.*\[LW_CSP_TAG_IN_TAG\]$/);
    const quoted = diagnosticsOf({ '/_p/x.html': SPELL, '/index.html': `${M}{{% partial /_p/ }}<input name="a{{>x}}">\n` });
    assert.equal(quoted.length, 1, quoted.join('\n'));
  });
});

describe('a two-word import entry', () => {
  const APP = {
    '/📤/Starred.js': 'const starred = true;\nexport {starred as IsStarred};\n',
    '/index.html': `${M}{{% import {IsStarred, ProjectDeployment deployment} from '📤' }}<p>{{IsStarred}}</p>\n`,
  };
  it('imports nothing, with a warning at the entry; the other entries import', async () => {
    assert.deepEqual(diagnosticsOf(APP), [
      `index.html:2:24: warning: import entry "ProjectDeployment deployment" is two words; it imports nothing, as on the platform: write one exported name (ProjectDeployment), or remove the entry [LW_VIEW_IMPORT_TWO_WORDS]`,
    ]);
    const s = await serve(APP);
    try {
      assert.equal((await s.get('/')).text, '<p>true</p>\n');
    } finally {
      await s.close();
    }
  });
});
