/** The HTML tokenizer: the states that decide where inline blocks start and end. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { tokenizeHtml, HOLE, type HtmlToken } from '../../src/csp/index.js';

function tokens(html: string, options?: { foreign?: boolean }): string[] {
  const out: string[] = [];
  tokenizeHtml(
    html,
    (t: HtmlToken) => {
      if (t.kind === 'start') out.push(`<${t.name}${t.attrs.map((a) => ` ${a.name}${a.value === null ? '' : `=${a.value}`}`).join('')}${t.selfClosing ? '/' : ''}>${t.foreign ? '(f)' : ''}`);
      else if (t.kind === 'end') out.push(`</${t.name}>`);
      else out.push(`raw(${JSON.stringify(html.slice(t.start, t.end))}${t.closed ? '' : ', open'})`);
    },
    options,
  );
  return out;
}

describe('tokenizeHtml', () => {
  it('reads tags and attributes in every quoting style, lower-casing names', () => {
    assert.deepEqual(tokens(`<A HREF="/x" data-y='1 2' z=3 hidden>t</a>`), ['<a href=/x data-y=1 2 z=3 hidden>', '</a>']);
    assert.deepEqual(tokens('<br/><img src=a.png />'), ['<br/>', '<img src=a.png/>']);
    assert.deepEqual(tokens('<p =x a=>'), ['<p =x a=>']);
  });
  it('skips comments, the doctype, processing instructions and bogus end tags', () => {
    assert.deepEqual(tokens('<!doctype html><!-- <script>x</script> --><?xml x?></ x><p>'), ['<p>']);
    assert.deepEqual(tokens('<!--><p><!---><b>'), ['<p>', '<b>']);
  });
  it('gives the raw content of script and style, ending at the first matching end tag', () => {
    assert.deepEqual(tokens('<script>if (a<b) x("</p>")</script><style>p{}</STYLE >'), [
      '<script>',
      'raw("if (a<b) x(\\"</p>\\")")',
      '</script>',
      '<style>',
      'raw("p{}")',
      '</style>',
    ]);
    assert.deepEqual(tokens('<script>x</scripty></script>'), ['<script>', 'raw("x</scripty>")', '</script>']);
  });
  it('follows the script data escape states: <!--<script> hides the next </script>', () => {
    assert.deepEqual(tokens('<script><!--<script>a</script>b--></script>'), ['<script>', 'raw("<!--<script>a</script>b-->")', '</script>']);
    assert.deepEqual(tokens('<script><!-- a </script>b'), ['<script>', 'raw("<!-- a ")', '</script>']);
    assert.deepEqual(tokens('<script><!-->a</script>'), ['<script>', 'raw("<!-->a")', '</script>']);
  });
  it('keeps textarea and title content as text', () => {
    assert.deepEqual(tokens('<textarea><script>x</script></textarea><p>'), ['<textarea>', '</textarea>', '<p>']);
  });
  it('reports an unclosed script as open to the end', () => {
    assert.deepEqual(tokens('<script>a<b'), ['<script>', 'raw("a<b", open)']);
  });
  it('treats style and script in svg as ordinary elements', () => {
    assert.deepEqual(tokens('<svg><style>a</style></svg><style>b</style>'), ['<svg>', '<style>(f)', '</style>', '</svg>', '<style>', 'raw("b")', '</style>']);
    assert.deepEqual(tokens('<svg/><style>b</style>'), ['<svg/>', '<style>', 'raw("b")', '</style>']);
  });
  it('splits attribute names at template holes but keeps them inside values', () => {
    assert.deepEqual(tokens(`<p ${HOLE}hidden${HOLE} class="a${HOLE}b">`), [`<p hidden class=a${HOLE}b>`]);
  });
  it('drops a tag cut off by the end of the text', () => {
    assert.deepEqual(tokens('<p><a href="x'), ['<p>']);
  });
});
