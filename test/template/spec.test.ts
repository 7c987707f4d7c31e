// Runs every test of the official Mustache specification (test/data/mustache-spec, copied from
// github.com/mustache/spec with its LICENSE) against the plain `compile` API, and prints the
// pass count per file. Lambdas are given in JavaScript by the spec (`__tag__: 'code'`).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { compile } from '../../src/template/index.js';

interface SpecTest {
  name: string;
  desc: string;
  data: unknown;
  template: string;
  partials?: Record<string, string>;
  expected: string;
}

const dir = fileURLToPath(new URL('../data/mustache-spec/', import.meta.url));
const files = readdirSync(dir).filter((f) => f.endsWith('.json')).sort();

/** Replaces spec lambdas (`{__tag__: 'code', js: '…'}`) by JavaScript functions. */
function withLambdas(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withLambdas);
  if (value !== null && typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    if (obj.__tag__ === 'code') return new Function(`return ${obj.js as string}`)();
    return Object.fromEntries(Object.entries(obj).map(([k, v]) => [k, withLambdas(v)]));
  }
  return value;
}

test('the spec suite has all its files', () => {
  assert.deepEqual(files, [
    'comments.json',
    'delimiters.json',
    'interpolation.json',
    'inverted.json',
    'partials.json',
    'sections.json',
    '~dynamic-names.json',
    '~inheritance.json',
    '~lambdas.json',
  ]);
});

for (const file of files) {
  const spec = JSON.parse(readFileSync(dir + file, 'utf8')) as { tests: SpecTest[] };
  test(`mustache spec ${file}`, async (t) => {
    let passed = 0;
    for (const c of spec.tests) {
      await t.test(`${c.name}: ${c.desc}`, () => {
        const out = compile(c.template).render(withLambdas(c.data), c.partials ?? {});
        assert.equal(out, c.expected);
        passed++;
      });
    }
    console.log(`mustache spec ${file}: ${passed}/${spec.tests.length} passed`);
    assert.equal(passed, spec.tests.length);
  });
}
