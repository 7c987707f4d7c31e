/**
 * Schema changes at start that concern indexes, on both engines: making a field unique over
 * records that share values refuses to start with a message naming the field (not the database's
 * own text); removing `unique: true` removes the constraint.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { serve, writeApp } from '../helpers.js';
import { ENGINES } from '../support/engines.js';

const FORM = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
const files = (unique: boolean) => ({
  '📦/🌐Person.yaml': `nick:\n  type: string\n  unique: ${unique}\n`,
  'people/POST.js': "import {Person} from '📦';\nimport {nick} from 'form';\nnew Person().nick(nick);\n({});\n",
});
const MODEL = '📦/🌐Person.yaml';

for (const engine of ENGINES) {
  describe(`unique indexes follow the definitions on ${engine.name}`, () => {
    it('unique: true added over duplicates refuses to start, naming the field; removed, duplicates are allowed', async () => {
      const data = await engine.data();
      const dir = writeApp(files(false));
      let s = await serve(dir, { data });
      assert.equal((await s.request('POST', '/people', FORM, 'nick=ann')).status, 200);
      assert.equal((await s.request('POST', '/people', FORM, 'nick=ann')).status, 200);
      await s.close();

      writeFileSync(join(dir, MODEL), files(true)[MODEL]);
      await assert.rejects(serve(dir, { data }), (e: Error) => {
        assert.match(e.message, /Person\.nick is now unique, but records already share values of it/);
        assert.doesNotMatch(e.message, /UNIQUE constraint|duplicate key/);
        return true;
      });

      // Back to not unique: starts, and duplicates are still accepted.
      writeFileSync(join(dir, MODEL), files(false)[MODEL]);
      s = await serve(dir, { data });
      assert.equal((await s.request('POST', '/people', FORM, 'nick=ann')).status, 200);
      await s.close();
    });

    it('unique: true removed drops the unique index', async () => {
      const data = await engine.data();
      const dir = writeApp(files(true));
      let s = await serve(dir, { data });
      assert.equal((await s.request('POST', '/people', FORM, 'nick=bo')).status, 200);
      assert.equal((await s.request('POST', '/people', FORM, 'nick=bo')).status, 409);
      await s.close();
      writeFileSync(join(dir, MODEL), files(false)[MODEL]);
      s = await serve(dir, { data });
      assert.equal((await s.request('POST', '/people', FORM, 'nick=bo')).status, 200);
      await s.close();
    });
  });
}
