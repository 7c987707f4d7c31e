/**
 * The CommonMark specification examples (commonmark-spec 0.31.2), twice:
 * - markdown-it's own output (CommonMark preset, nothing sanitised) against each example's HTML,
 *   normalised as markdown-it's test-suite does, so a markdown-it upgrade that changes the
 *   dialect shows here;
 * - the whole Laneway pipeline (`renderMarkdown`, with every option on) on each example's source:
 *   it never throws and never emits a script, an event-handler attribute or a `javascript:` link.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import MarkdownIt from 'markdown-it';
import { DomUtils, parseDocument } from 'htmlparser2';
import { renderMarkdown } from '../../src/content/markdown.js';

interface SpecExample {
  markdown: string;
  html: string;
  section: string;
  number: number;
}

// commonmark-spec is CommonJS: `tests` is the list of examples, read from its spec.txt.
const spec = createRequire(import.meta.url)('commonmark-spec') as { tests: SpecExample[] };

/** The spec writes tabs as `→` (its own test runner puts them back). */
const tabs = (text: string): string => text.replace(/→/g, '\t');

/** The one normalisation markdown-it's test-suite applies: an empty block quote is written on one line in the spec. */
const normalise = (html: string): string => html.replace(/<blockquote>\n<\/blockquote>/g, '<blockquote></blockquote>');

/**
 * Examples markdown-it 15.0.3 renders differently from spec 0.31.2, by number, with the reason.
 * Empty: every example matches. An entry here must say why, and a fixed one fails the test below
 * so that the list cannot go stale.
 */
const KNOWN_DIFFERENCES = new Map<number, string>([]);

const EVERY_OPTION = {
  autolink: 'blank',
  minimumHeaderLevel: 2,
  generateHeaderId: true,
  typography: true,
  classes: { p: 'lead', a: 'link', h2: 'title', code: 'code', pre: 'pre', li: 'item', br: 'break' },
} as const;

describe('CommonMark spec examples', () => {
  const commonmark = new MarkdownIt('commonmark');

  it('loads the examples of spec 0.31.2', () => assert.equal(spec.tests.length, 652));

  for (const example of spec.tests) {
    const name = `example ${example.number} (${example.section})`;
    const known = KNOWN_DIFFERENCES.get(example.number);
    it(`renders ${name} as the spec says`, () => {
      const actual = commonmark.render(tabs(example.markdown));
      const expected = normalise(tabs(example.html));
      if (known === undefined) assert.equal(actual, expected);
      else assert.notEqual(actual, expected, `example ${example.number} now matches; remove it from KNOWN_DIFFERENCES (${known})`);
    });
  }
});

/** Scripts, event-handler attributes and `javascript:` links in parsed HTML. */
function dangersIn(html: string): string[] {
  const dangers: string[] = [];
  if (/<script/i.test(html)) dangers.push('<script in the text');
  for (const element of DomUtils.findAll(() => true, parseDocument(html).children)) {
    if (element.name === 'script') dangers.push('script element');
    for (const [name, value] of Object.entries(element.attribs)) {
      if (/^on/i.test(name)) dangers.push(`${name} attribute on ${element.name}`);
      if (/^\s*j\s*a\s*v\s*a\s*s\s*c\s*r\s*i\s*p\s*t\s*:/i.test(value.replace(/[\u0000-\u001f]/g, ''))) dangers.push(`${name}=${JSON.stringify(value)}`);
    }
  }
  return dangers;
}

describe('CommonMark spec examples through renderMarkdown', () => {
  for (const example of spec.tests) {
    it(`renders example ${example.number} safely`, () => {
      const source = tabs(example.markdown);
      for (const options of [undefined, EVERY_OPTION]) {
        const html = renderMarkdown(source, options, { resolveLink: (path) => `/pages${path}` });
        assert.deepEqual(dangersIn(html), [], JSON.stringify(html));
      }
    });
  }
});
