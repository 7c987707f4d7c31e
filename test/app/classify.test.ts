/** Classification of app files (docs/routing.md "File → URL") and the privacy rule ("Private and non-public files"). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { classifyFile, isPrivatePath } from '../../src/app/index.js';

const MARKER = '<!--TEMPLATE mustache-->';
const kind = (path: string, firstLine = '') => {
  const f = classifyFile(path, () => firstLine);
  return `${f.kind}${f.hidden ? ' hidden' : ''}${f.pinned ? ' pinned' : ''}`;
};

test('every kind of file is recognised', () => {
  const cases: Array<[string, string, string?]> = [
    ['/a/GET.js', 'script'],
    ['/a/🖥list.js', 'script'],
    ['/a/📮save.js', 'script'],
    ['/a/❌drop.js', 'script'],
    ['/🖱verify.js', 'script'],
    ['/a/⏱build.js', 'script'],
    ['/js/app.js', 'static'],
    ['/js/get.js', 'static'],
    ['/📤/Thing.js', 'supplier hidden'],
    ['/a/📤/{}Calc.js', 'function-supplier hidden'],
    ['/a/📤/📌page.js', 'supplier hidden pinned'],
    ['/📤/ItemDIV.html', 'html-supplier hidden'],
    ['/📤/⏳Signup.yaml', 'form-definition hidden'],
    ['/page.html', 'view', MARKER],
    ['/_layout.html', 'partial hidden', MARKER],
    ['/_p/nav.html', 'partial hidden', MARKER],
    ['/plain.html', 'page', '<!doctype html>'],
    ['/⚡NotFound.html', 'not-found hidden', MARKER],
    ['/i/x.svg', 'svg'],
    ['/_icons/x.svg', 'svg hidden'],
    ['/_data.yaml', 'data hidden'],
    ['/manifest.json', 'data'],
    ['/theme.scss', 'scss'],
    ['/a/📮save.yaml', 'endpoint-config hidden'],
    ['/a/{id}/🔗.yaml', 'param-definition hidden'],
    ['/a/{id}🔗.yaml', 'param-definition hidden'],
    ['/📦/🌐Task.yaml', 'model hidden'],
    ['/🗄/📄Doc.yaml', 'static-model hidden'],
    ['/🗄/Doc/intro.md', 'static-model hidden'],
    ['/📡/Note.yaml', 'notification hidden'],
    ['/🎛.yaml', 'manifest hidden'],
    ['/🎛.svg', 'app-icon'],
    ['/🎨.scss', 'properties hidden'],
    ['/area/👤.yaml', 'users hidden'],
    ['/🔌.yaml', 'connectors hidden'],
    ['/🔌shop.yaml', 'nested-site hidden'],
    ['/sub/🎛.yaml', 'data hidden'],
    ['/img/📌logo.png', 'static'],
  ];
  for (const [path, expected, line] of cases) assert.equal(kind(path, line), expected, path);
});

test('the template marker must be the whole first line (BOM and trailing blanks allowed)', () => {
  assert.equal(kind('/v.html', '\uFEFF' + MARKER + '  '), 'view');
  assert.equal(kind('/v.html', ' <!--TEMPLATE mustache--> x'), 'page');
  assert.equal(kind('/v.html', '<!--template mustache-->'), 'page');
});

test('private: any "_" segment, dot-files except /.well-known/', () => {
  assert.equal(isPrivatePath('/_x.css'), true);
  assert.equal(isPrivatePath('/_a/b/c.html'), true);
  assert.equal(isPrivatePath('/a/_b/c.html'), true);
  assert.equal(isPrivatePath('/a/b_c.html'), false);
  assert.equal(isPrivatePath('/.env'), true);
  assert.equal(isPrivatePath('/a/.git/config'), true);
  assert.equal(isPrivatePath('/.well-known/security.txt'), false);
  assert.equal(isPrivatePath('/.well-known'), true, 'a file named .well-known is a dot-file');
  assert.equal(isPrivatePath('/a/.well-known/x'), true, 'only the root .well-known is public');
});
