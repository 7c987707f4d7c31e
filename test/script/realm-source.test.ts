/**
 * The realm's code is read from the files of src/script/realm/ (src/script/realm-source.ts): every
 * file of the folder runs, in the listed order, as the body of one strict function.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import vm from 'node:vm';
import { REALM_FILES, REALM_SOURCE } from '../../src/script/realm-source.js';

const folder = new URL('../../src/script/realm/', import.meta.url);

describe('the realm source', () => {
  it('lists every .js file of src/script/realm/, in the order of their names', () => {
    const onDisk = readdirSync(folder).filter((name) => name.endsWith('.js')).sort();
    assert.deepEqual([...REALM_FILES], onDisk);
  });

  it('is the files, in order, inside one strict function of host', () => {
    assert.ok(REALM_SOURCE.startsWith("(function (host) {\n'use strict';\n"));
    let at = 0;
    for (const name of REALM_FILES) {
      const text = readFileSync(new URL(name, folder), 'utf8');
      const found = REALM_SOURCE.indexOf(text, at);
      assert.ok(found >= at, `${name} is in the source after the files before it`);
      at = found + text.length;
    }
    // One expression: the realm evaluates it and calls it with the host values.
    assert.equal(typeof new vm.Script(REALM_SOURCE).runInNewContext({}), 'function');
  });
});
