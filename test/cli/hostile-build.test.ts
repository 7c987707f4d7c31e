/**
 * Bounds on building an app (docs/security.md, "Bounds on building an app"): `bin/laneway check`
 * and `serve` on apps whose files would hold or crash the build — SCSS loops that never end or run
 * for hours, YAML whose aliases stand for billions of values — end within a bound, with an `LW_`
 * error at the file, line and column, and no stack trace.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { runLaneway } from '../support/laneway.js';

/** Far above what a bounded build takes, far below "hangs" (the loops below run for hours). */
const BOUND_MS = 90_000;

const made: string[] = [];
after(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

function writeApp(files: Record<string, string>): string {
  const dir = join(mkdtempSync(join(tmpdir(), 'laneway-hostile-')), 'app');
  made.push(dirname(dir));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

/** Runs `laneway …` without the cache of compiled stylesheets; fails when it still runs after BOUND_MS. */
function run(args: string[], env: Record<string, string> = {}) {
  return runLaneway(args, { env: { LANEWAY_CACHE_DIR: '', ...env }, boundMs: BOUND_MS });
}

/** An alias bomb: nine values, then eight levels of nine aliases each (9⁹ values expanded). */
function aliasBomb(): string {
  let text = 'a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]\n';
  let previous = 'a';
  for (const name of 'bcdefghi') {
    text += `${name}: &${name} [${Array(9).fill(`*${previous}`).join(', ')}]\n`;
    previous = name;
  }
  return text;
}

const NO_STACK = /\n\s+at |ReferenceError|RangeError/;

describe('hostile build inputs', () => {
  test('an endless @while: check ends with LW_ASSET_SCSS_TIME at the stylesheet (default bound, 10 s)', async () => {
    const dir = writeApp({
      'index.html': '<!doctype html><title>t</title>\n',
      'css/loop.scss': '$i: 0;\n@while true {\n  $i: $i + 1;\n}\nbody { color: red; }\n',
    });
    const r = await run(['check', dir]);
    assert.equal(r.code, 1, r.out + r.err);
    assert.match(r.out, /^css\/loop\.scss:1:1: Sass: the stylesheet did not compile within 10 s .*\[LW_ASSET_SCSS_TIME\]$/m);
    assert.doesNotMatch(r.out + r.err, NO_STACK);
  });

  test('a @for to 100 million and a loop in an imported partial: each reported, the other stylesheets compiled', async () => {
    const dir = writeApp({
      'css/for.scss': '@for $i from 1 through 100000000 {\n  .c#{$i} { width: $i * 1px; }\n}\n',
      'css/_spin.scss': '$n: 0;\n@while $n >= 0 { $n: $n + 1; }\n',
      'css/site.scss': "@import 'spin';\nmain { color: blue; }\n",
      'css/fine.scss': '$w: 3;\n.x { width: $w * 2px; }\n',
      'css/broken.scss': '.y {\n  color: $missing;\n}\n',
    });
    const r = await run(['check', dir], { LANEWAY_SCSS_TIMEOUT_MS: '1500' });
    assert.equal(r.code, 1, r.out + r.err);
    assert.match(r.out, /^css\/for\.scss:1:1: Sass: the stylesheet did not compile within 1\.5 s .*\[LW_ASSET_SCSS_TIME\]$/m);
    assert.match(r.out, /^css\/site\.scss:1:1: Sass: the stylesheet did not compile within 1\.5 s .*\[LW_ASSET_SCSS_TIME\]$/m);
    // The compiler still answers after a stylesheet ran out of time: other errors stay exact.
    assert.match(r.out, /^css\/broken\.scss:2:10: Sass: Undefined variable\. \[LW_ASSET_SCSS\]$/m);
    assert.doesNotMatch(r.out, /fine\.scss/);
    assert.match(r.out, /^3 errors, 0 warnings$/m);
    assert.doesNotMatch(r.out + r.err, NO_STACK);
  });

  test('YAML alias bombs in a data file, /🎛.yaml and a 🔗.yaml: located errors, no ReferenceError', async () => {
    const bomb = aliasBomb();
    const dir = writeApp({
      '🎛.yaml': bomb,
      '_data/bomb.yaml': bomb,
      'index.html': '<!--TEMPLATE mustache-->\n{{% yaml /_data/bomb as bomb }}\n<!doctype html><title>t</title><p>{{bomb.a.0}}</p>\n',
      '{kind}/🔗.yaml': `values: &v [a, b]\n${bomb.replace(/^a: &a/, 'x: &a')}`,
      '{kind}/index.html': '<!doctype html><title>t</title>\n',
    });
    const r = await run(['check', dir]);
    assert.equal(r.code, 1, r.out + r.err);
    const message = "YAML: its aliases \\(\\*name\\) stand for more values than Laneway expands \\(at most 100 aliases' worth in one file\\)";
    assert.match(r.out, new RegExp(`^🎛\\.yaml:2:8: ${message}.*\\[LW_APP_YAML\\]$`, 'm'));
    assert.match(r.out, new RegExp(`^_data/bomb\\.yaml:2:8: ${message}.*\\[LW_VIEW_DATA_PARSE\\]$`, 'm'));
    assert.match(r.out, /^index\.html:2:\d+: \/_data\/bomb\.yaml \(imported here as "bomb"\) does not parse \[LW_VIEW_DATA_PARSE\]$/m);
    assert.match(r.out, new RegExp(`^\\{kind\\}/🔗\\.yaml:3:8: ${message}.*\\[LW_APP_YAML\\]$`, 'm'));
    assert.doesNotMatch(r.out + r.err, NO_STACK);
  });

  test('serve on the same inputs exits 1 with the located errors', async () => {
    const dir = writeApp({ '🎛.yaml': aliasBomb(), 'css/loop.scss': '@while 1 == 1 { }\n' });
    const r = await run(['serve', dir, '--port', '0'], { LANEWAY_SCSS_TIMEOUT_MS: '1500' });
    assert.equal(r.code, 1, r.out + r.err);
    const all = r.out + r.err;
    assert.match(all, /🎛\.yaml:2:8: YAML: its aliases .*\[LW_APP_YAML\]/);
    assert.match(all, /css\/loop\.scss:1:1: Sass: the stylesheet did not compile within 1\.5 s .*\[LW_ASSET_SCSS_TIME\]/);
    assert.doesNotMatch(all, NO_STACK);
  });
});
