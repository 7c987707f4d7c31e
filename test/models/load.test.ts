/** The loader reads /📦/ once: definition errors fail the build at their line and column; the schema stays on the App. */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { checkApp, loadApp } from '../../src/app/index.js';
import { writeApp } from '../helpers.js';

it('keeps the checked definitions on the App', () => {
  const root = writeApp({
    'index.html': '<p>hi</p>\n',
    '📦/🌐List.yaml': 'title: string\n',
    '📦/List/🌐Note.yaml': 'title?: string\nhierarchy: hierarchy\n',
  });
  try {
    const app = loadApp(root);
    assert.deepEqual([...app.models.models.keys()].sort(), ['List', 'Note']);
    assert.equal(app.models.models.get('Note')!.container, 'List');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

it('reports definition errors through laneway check, with the YAML position', () => {
  const root = writeApp({
    'index.html': '<p>hi</p>\n',
    '📦/🌐Task.yaml': 'title: string\nstatus: enum\n',
    '📦/Orphan/🌐Line.yaml': '',
  });
  try {
    const found = checkApp(root).map((d) => `${d.file}:${d.line}:${d.column} ${d.code}`);
    assert.deepEqual(found, ['/📦/Orphan:1:1 LW_MODEL_CONTAINER', '/📦/🌐Task.yaml:2:9 LW_MODEL_FIELD_TYPE']);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
