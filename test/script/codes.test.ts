/** Every script code has a one-line meaning and a heading in docs/errors.md. */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { SCRIPT_CODES } from '../../src/diag/codes-script.js';

it('documents every LW_SCRIPT_ code in docs/errors.md', () => {
  const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
  for (const [code, meaning] of Object.entries(SCRIPT_CODES)) {
    assert.ok(meaning.length > 10, code);
    assert.ok(doc.includes(`\n### ${code}\n`), `docs/errors.md has no heading for ${code}`);
  }
});
