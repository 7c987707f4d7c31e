// Indentation of standalone partials and re-indented blocks: the Mustache spec indents
// every line of a partial, whatever token starts the line. Each case below lost its indentation
// before the fix; the expected outputs are what wontache (which passes the whole official spec)
// renders. The property-based comparison is in fuzz.test.ts.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import wontache from 'wontache';
import { compile } from '../../src/template/index.js';

function both(template: string, partials: Record<string, string>, data: unknown = {}): { ours: string; reference: string } {
  const compiled = Object.fromEntries(Object.entries(partials).map(([k, v]) => [k, wontache(v)]));
  return { ours: compile(template, { partials }).render(data), reference: wontache(template)(data, { partials: compiled }) };
}

function check(template: string, partials: Record<string, string>, data: unknown, expected: string): void {
  const { ours, reference } = both(template, partials, data);
  assert.equal(reference, expected, 'the reference renders as the test says');
  assert.equal(ours, expected);
}

describe('indentation of every line of a standalone partial', () => {
  it('a line starting with a comment that does not stand alone', () => {
    check('\t{{>p}}\n', { p: 'a\n{{!c}}x\ny\n' }, {}, '\ta\n\tx\n\ty\n');
    check('\t{{>p}}\n', { p: 'a\n{{!c}}{{b}}\n' }, { b: 1 }, '\ta\n\t1\n');
    check('  {{>p}}\n', { p: 'a\n{{! multi\nline }}x\n' }, {}, '  a\n  x\n');
  });

  it('a line holding only tags that print nothing keeps its indentation', () => {
    check('  {{>p}}\n', { p: 'a\n{{!c}}{{!d}}\nb\n' }, {}, '  a\n  \n  b\n');
    check('  {{>p}}\n', { p: 'a\n{{!c}}{{=| |=}}\n|b|\n' }, { b: 1 }, '  a\n  \n  1\n');
  });

  it('a line starting with a delimiter change that does not stand alone', () => {
    check('\t{{>p}}\n', { p: 'a\n{{=| |=}}x\n|b|\n' }, { b: 1 }, '\ta\n\tx\n\t1\n');
    check('\t{{>p}}\n', { p: 'a\n{{=| |=}}|b|\n' }, { b: 1 }, '\ta\n\t1\n');
  });

  it('a line starting with a closing tag that does not stand alone, for every kind of section', () => {
    check('\t{{>p}}\n', { p: 'a\n{{#a}}\nb\n{{/a}}c\n' }, { a: true }, '\ta\n\tb\n\tc\n');
    check('\t{{>p}}\n', { p: 'a{{#a}}\nb\n{{/a}}c\n' }, { a: [1, 2] }, '\ta\n\tb\n\t\n\tb\n\tc\n');
    check('\t{{>p}}\n', { p: 'a{{#a}}\nb\n{{/a}}c\n' }, { a: false }, '\tac\n');
    check('\t{{>p}}\n', { p: 'a{{^a}}\nb\n{{/a}}c\n' }, { a: false }, '\ta\n\tb\n\tc\n');
    check('\t{{>p}}\n', { p: 'a\n{{#a}}x\n{{/a}}{{!c}}z\n' }, { a: true }, '\ta\n\tx\n\tz\n');
  });

  it('the default content of a block that does not stand alone is part of the partial', () => {
    check('  {{>p}}\n', { p: '{{$k}}a\nb\n{{/k}}c\n' }, {}, '  a\n  b\n  c\n');
    check('  {{>p}}\n', { p: 'x{{$k}}\n{{/k}}{{a}}\n' }, { a: 1 }, '  x\n  1\n');
  });

  it('the same lines in a block override re-indented at a standalone block site', () => {
    const q = 'Hi,\n  {{$k}}{{/k}}\n';
    check('{{<q}}{{$k}}\na\n{{!c}}x\n{{#a}}y\n{{/a}}z\n{{/k}}{{/q}}', { q }, { a: true }, 'Hi,\n  a\n  x\n  y\n  z\n\n');
    check('{{<q}}{{$k}}\n{{a}}\n{{/k}}{{/q}}', { q }, { a: '' }, 'Hi,\n  \n\n');
  });
});
