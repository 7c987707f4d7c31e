/** The app of the data browser's tests (test/dev/data-browser.test.ts, test/browser/data-browser.test.ts). */
export const BROWSER_APP = {
  '📦/🌐Person.yaml': 'name: string\n',
  '📦/🌐Task.yaml': 'title:\n  type: string\n  max: 20\ndone: boolean\nowner?: Person\n',
  '📦/Task/🌐Note.yaml': 'text: string\n',
  'seed/POST.js': [
    "import {Person, Task, Note} from '📦';",
    "const ada = new Person().name('Ada <b>&</b>');",
    "const tasks = Array.from({length: 30}, (_, i) => new Task().title('task ' + (i + 10)).done(i % 3 == 0));",
    'tasks[0].owner = ada;',
    "const note = new Note(tasks[0]).text('a child');",
    '({first: tasks[0].id, ada: ada.id, last: tasks[29].id})',
    '',
  ].join('\n'),
  'index.html': '<p>home</p>\n',
};
