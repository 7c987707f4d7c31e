/** Build errors for what no policy without 'unsafe-inline' allows: style=, on*=, javascript: URLs. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { diagnosticsOf, M } from './helpers.js';

const codes = (lines: string[]): string[] => lines.map((l) => l.replace(/: [^[]*\[/, ' ['));

describe('restrictions', () => {
  it('reports style=, on*= and javascript: in a view with file:line:column', () => {
    const lines = diagnosticsOf({ '/index.html': `${M}<p>ok</p>\n<p style="color:red">x</p>\n<button type="button" onClick="go()">go</button>\n<a href=" JavaScript:alert(1)">x</a>\n` }, 'LW_CSP');
    assert.deepEqual(lines, [
      "index.html:3:4: style=\"…\" attributes are not allowed: the policy has no 'unsafe-inline'; move the rules into a stylesheet or a <style> block and use a class [LW_CSP_STYLE_ATTRIBUTE]",
      "index.html:4:23: onclick=\"…\" event-handler attributes are not allowed: the policy has no 'unsafe-inline'; add a listener from a script (element.addEventListener('click', …)) [LW_CSP_EVENT_HANDLER]",
      'index.html:5:10: javascript: URLs are not allowed (href): the policy blocks them; use a button with a listener added from a script [LW_CSP_JAVASCRIPT_URL]',
    ]);
  });

  it('checks partials, layouts and block overrides, with positions in their own files', () => {
    const lines = diagnosticsOf(
      {
        '/_layout.html': `${M}{{% partial /_p/ }}\n<body onload="x()">{{$main}}{{/main}}{{> nav}}</body>\n`,
        '/_p/nav.html': `${M}<nav>\n  {{#items}}\n    <a href="java&#x09;script:go()">{{.}}</a>\n  {{/items}}\n</nav>\n`,
        '/index.html': `${M}{{% partial /_layout }}\n{{<layout}}\n{{$main}}\n    <div style="{{x}}">\n{{/main}}\n{{/layout}}\n`,
      },
      'LW_CSP',
    );
    assert.deepEqual(codes(lines), ['_layout.html:3:7 [LW_CSP_EVENT_HANDLER]', '_p/nav.html:4:14 [LW_CSP_JAVASCRIPT_URL]', 'index.html:5:10 [LW_CSP_STYLE_ATTRIBUTE]']);
  });

  it('checks plain pages, the not-found page and HTML suppliers', () => {
    const lines = diagnosticsOf(
      {
        '/plain.html': '<!doctype html>\n<img src="a.png" onerror="x()">\n',
        '/⚡NotFound.html': '<p style="x">lost</p>\n',
        '/📤/Card.html': `${M}<form action="javascript:void 0"></form>`,
      },
      'LW_CSP',
    );
    assert.deepEqual(codes(lines), ['plain.html:2:18 [LW_CSP_EVENT_HANDLER]', '⚡NotFound.html:1:4 [LW_CSP_STYLE_ATTRIBUTE]', '📤/Card.html:2:15 [LW_CSP_JAVASCRIPT_URL]']);
  });

  it('flags a javascript: URL with a literal prefix even when the rest is data', () => {
    assert.deepEqual(codes(diagnosticsOf({ '/a.html': `${M}<a href="javascript:{{code}}">x</a>` }, 'LW_CSP')), ['a.html:2:10 [LW_CSP_JAVASCRIPT_URL]']);
  });

  it('leaves text, comments, script code, data attributes and data-valued URLs alone', () => {
    const lines = diagnosticsOf(
      {
        '/a.html': `${M}<p>style="x" onclick="y"</p><!-- <p style="x"> -->\n<script>el.onclick = () => 1; const s = '<p style="x">';</script>\n<div data-onclick="x" data-style="y"></div><a href="{{url}}">x</a><textarea><b onclick=x></textarea>\n`,
      },
      'LW_CSP',
    );
    assert.deepEqual(lines, []);
  });

  it('makes loadApp fail', async () => {
    const { loadApp } = await import('../../src/app/index.js');
    const { writeApp } = await import('../helpers.js');
    assert.throws(() => loadApp(writeApp({ '/a.html': '<p style="x">' })), /LW_CSP_STYLE_ATTRIBUTE/);
  });
});
