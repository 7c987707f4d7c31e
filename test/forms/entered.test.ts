/**
 * What a form state keeps of the texts sent for each field (docs/forms.md "What a form state
 * keeps"): what the field reads, cut to the field's own maximum.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { defaultForm, enteredTexts } from '../../src/forms/index.js';
import { schema } from './helpers.js';

const field = (name: string) => defaultForm(schema().models.get('Task')!).fields.find((f) => f.name === name)!;

describe('enteredTexts', () => {
  it('cuts a string and a Markdown text to their max in characters, counting code points', () => {
    assert.equal(enteredTexts(field('title'), ['x'.repeat(900_000)]), 'x'.repeat(40));
    assert.equal(enteredTexts(field('title'), ['😀'.repeat(50)]), '😀'.repeat(40));
    assert.equal(enteredTexts(field('notes'), ['a\r\n'.repeat(400)]), 'a\n'.repeat(250), 'text areas count a line break once');
  });
  it('cuts html to twice its max in bytes, between characters', () => {
    const kept = enteredTexts(field('body'), ['é'.repeat(5000)]) as string;
    assert.equal(kept, 'é'.repeat(2000));
    assert.equal(enteredTexts(field('body'), ['a' + 'é'.repeat(3000)]), 'a' + 'é'.repeat(1999), 'a character is never cut in two');
  });
  it('keeps the value a field reads: the first, every choice (one per option), the true text of a toggle', () => {
    assert.equal(enteredTexts(field('title'), ['first', 'second']), 'first');
    assert.deepEqual(enteredTexts(field('sizes'), ['s', 'm', 'l', 's', 'xxl']), ['s', 'm', 'l']);
    assert.deepEqual(enteredTexts(field('status'), ['in-progress-and-more']), 'in-progress');
    assert.equal(enteredTexts(field('done'), ['false', 'on']), 'on');
    assert.equal(enteredTexts(field('count'), ['9'.repeat(1000)]), '9'.repeat(100));
    assert.equal(enteredTexts(field('title'), []), undefined);
  });
});
