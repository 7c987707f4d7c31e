/** The app of the request panel's tests (test/dev/request-panel.test.ts, test/browser/request-panel.test.ts). */
export const PANEL_APP = {
  'api/🖥hello.js': "console.log('hello panel', {n: 1});\nconsole.warn('careful <b>');\n({ok: true})\n",
  '📤/Greeting.js': "console.info('greeting for the panel');\nconst Greeting = 'hi';\nexport {Greeting};\n",
  'index.html': "<!--TEMPLATE mustache-->\n{{% import {Greeting} from '📤' }}<!doctype html><html><head><title>home</title></head><body><p id=\"greeting\">{{Greeting}}</p></body></html>\n",
  'quiet.html': '<p>nothing logged</p>\n',
};
