/** Supplier evaluation per request: lazy, at most once, shared by every consumer of the request. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DiagnosticList } from '../../src/diag/index.js';
import { RequestScope, type ModuleSystem } from '../../src/app/request/scope.js';
import { SupplierIndex, type SupplierFile } from '../../src/app/definitions/suppliers.js';
import type { RequestInfo } from '../../src/app/index.js';
import { DEFAULT_LIMITS, type CompiledScript, type RunContext } from '../../src/script/index.js';

function supplier(path: string, exports: string[], imports: string[] = []): SupplierFile {
  return { path, level: '', base: path.slice(4, -3), kind: 'supplier', pinned: false, endpointSpecific: false, exports, imports };
}

const request: RequestInfo = {
  id: 't',
  method: 'GET',
  path: '/',
  query: '',
  headers: { host: 'x.test' },
  params: [],
  acceptsJson: false,
  readBody: async () => Buffer.alloc(0),
};

test('a supplier runs only when one of its exports is imported, and at most once per request', async () => {
  const a = supplier('/📤/A.js', ['X', 'Y']);
  const b = supplier('/📤/B.js', ['Z'], ['X']);
  const unused = supplier('/📤/Unused.js', ['U']);
  const runs: string[] = [];
  const script = (file: SupplierFile, body: (ctx: RunContext) => Promise<Record<string, unknown>>): CompiledScript => ({
    file: file.path,
    kind: 'supplier',
    imports: [],
    exports: [],
    run: async (ctx) => {
      runs.push(file.path);
      return { kind: 'value', value: await body(ctx) };
    },
  });
  const diagnostics = new DiagnosticList();
  const system: ModuleSystem = {
    suppliers: new SupplierIndex([a, b, unused], diagnostics),
    code: new Map(),
    params: new Map(),
    dev: false,
    limits: DEFAULT_LIMITS,
    log: () => {},
  };
  system.code.set(a.path, { file: a, script: script(a, async () => ({ X: 1, Y: 2 })) });
  system.code.set(b.path, { file: b, script: script(b, async (ctx) => ({ Z: ((await ctx.importValue('📤', 'X')) as number) + 10 })) });
  system.code.set(unused.path, { file: unused, script: script(unused, async () => ({ U: 0 })) });
  assert.deepEqual(diagnostics.items, []);

  const scope = new RequestScope(system, request);
  const consumer = { type: 'endpoint' as const, dir: '', view: false, file: '/🖥x.js' };
  const values = await Promise.all([
    scope.value(consumer, '📤', 'X'),
    scope.value(consumer, '📤', 'Y'),
    scope.value(consumer, '📤', 'Z'),
    scope.value(consumer, '📤', 'X'),
  ]);
  assert.deepEqual(values, [1, 2, 11, 1]);
  assert.deepEqual(runs.sort(), ['/📤/A.js', '/📤/B.js']);

  // A new request runs them again.
  await new RequestScope(system, request).value(consumer, '📤', 'X');
  assert.equal(runs.filter((r) => r === '/📤/A.js').length, 2);
});
