/**
 * Compiled stylesheets kept between processes (src/assets/scss.ts `persistStylesheets`): a second
 * process compiling the same files answers the same CSS without loading Sass; a change to an
 * imported file, or a new file that an import now finds first, compiles again.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ScssCompiler } from '../../src/assets/index.js';
import { DiagnosticList } from '../../src/diag/index.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Compiles `/site.scss` of `files` in a fresh process keeping stylesheets in `dir`: its CSS, and whether Sass was loaded. */
function compileInChild(files: Record<string, string>, dir: string): { css: string | null; sass: boolean; problems: number } {
  const program = `
    import { persistStylesheets, sassCompiles, ScssCompiler } from './src/assets/index.ts';
    import { DiagnosticList } from './src/diag/index.ts';
    import { createRequire } from 'node:module';
    const files = ${JSON.stringify(files)};
    persistStylesheets(${JSON.stringify(dir)});
    const diagnostics = new DiagnosticList();
    const css = new ScssCompiler({ read: (p) => files[p] }, diagnostics).compile('/site.scss') ?? null;
    // Sass runs in a thread of its own (scss.ts), started only for a stylesheet it must compile.
    const sass = sassCompiles() > 0 || Object.keys(createRequire(import.meta.url).cache).some((f) => f.includes('/node_modules/sass/'));
    process.stdout.write(JSON.stringify({ css, sass, problems: diagnostics.items.length }));
  `;
  const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', program], { cwd: ROOT, encoding: 'utf8' });
  return JSON.parse(out) as { css: string | null; sass: boolean; problems: number };
}

test('a stylesheet compiled by one process is used by the next without Sass, until a file it read changes', () => {
  const dir = mkdtempSync(join(tmpdir(), 'laneway-scss-cache-'));
  try {
    const files = { '/site.scss': "@import '/theme';\nmain { color: $accent; }\n", '/theme.scss': '$accent: #123456;\n' };
    const first = compileInChild(files, dir);
    assert.equal(first.sass, true);
    assert.match(first.css!, /main\{color:#123456\}/);
    const second = compileInChild(files, dir);
    assert.deepEqual(second, { css: first.css, sass: false, problems: 0 });
    // An imported file changed: compiled again.
    const editedFiles = { ...files, '/theme.scss': '$accent: #654321;\n' };
    const edited = compileInChild(editedFiles, dir);
    assert.equal(edited.sass, true);
    assert.match(edited.css!, /main\{color:#654321\}/);
    assert.equal(compileInChild(editedFiles, dir).sass, false);
    // A file the import tried first now exists (`/_theme.scss` before `/theme.scss`): compiled again.
    const shadowed = compileInChild({ ...editedFiles, '/_theme.scss': '$accent: #abcdef;\n' }, dir);
    assert.equal(shadowed.sass, true);
    assert.match(shadowed.css!, /main\{color:#abcdef\}/);
    // A stylesheet with an error is not kept: the next process reports it again.
    const broken = { '/site.scss': 'main { color: $missing; }\n' };
    assert.equal(compileInChild(broken, dir).problems, 1);
    assert.deepEqual(compileInChild(broken, dir), { css: null, sass: true, problems: 1 });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('within one process, a new file that an import now finds first is seen', () => {
  const files: Record<string, string> = { '/a.scss': "@import '/b';\n", '/b.scss': 'p { color: red; }\n' };
  const compile = () => new ScssCompiler({ read: (p) => files[p] }, new DiagnosticList()).compile('/a.scss');
  assert.match(compile()!, /p\{color:red\}/);
  files['/_b.scss'] = 'p { color: blue; }\n';
  assert.match(compile()!, /p\{color:blue\}/);
});
