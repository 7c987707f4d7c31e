/** Every diagnostic code has a meaning in the catalogue and a heading in docs/errors.md. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { CODES } from '../../src/diag/index.js';

test('every code of the catalogue is documented in docs/errors.md', () => {
  const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
  const missing = Object.keys(CODES).filter((code) => !doc.includes(`\n### ${code}\n`));
  assert.deepEqual(missing, []);
  for (const [code, meaning] of Object.entries(CODES)) assert.ok(meaning.length > 10, code);
});

test('codes follow LW_<AREA>_<WHAT>', () => {
  for (const code of Object.keys(CODES)) assert.match(code, /^LW_[A-Z]+_[A-Z0-9_]+$/);
});
