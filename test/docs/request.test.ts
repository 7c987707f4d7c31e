/**
 * docs/request.md: every request shown gets exactly the response shown, from one app made of the
 * page's files; the build-error examples report exactly their lines (test/docs/http-examples.ts
 * has the conventions). Then the page's statements that have no example of their own: what
 * `Request` does not do yet, and the known problem of `{name}.html` pages inside a `{param}`
 * directory — when one of these changes, the page must change with it.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { serve, writeApp } from '../helpers.js';
import { runHttpExamples } from './http-examples.js';

runHttpExamples('request.md', { minExchanges: 15 });

describe('docs/request.md: what the page says besides its examples', () => {
  it('Request: http: from a peer not trusted (whatever it forwards), the decoded path, and in a nested site the path inside the site', async () => {
    const where = "import {Request} from '🔗'\n({url: Request.url, base: Request.base})\n";
    const child = writeApp({ '/about/GET.js': where });
    const s = await serve({ '/files/{name}/🔗.yaml': 'feature: any\n', '/files/{name}/GET.js': where, '/🔌store.yaml': `source: ${child}\n` });
    try {
      const https = await s.get('/files/x', { Host: 'shop.example.com', 'X-Forwarded-Proto': 'https' });
      assert.deepEqual(JSON.parse(https.text), { url: 'http://shop.example.com/files/x', base: 'http://shop.example.com' });
      const decoded = await s.get('/files/caf%C3%A9%20menu', { Host: 'shop.example.com' });
      assert.equal(JSON.parse(decoded.text).url, 'http://shop.example.com/files/café menu');
      const nested = await s.get('/store/about', { Host: 'shop.example.com' });
      assert.deepEqual(JSON.parse(nested.text), { url: 'http://shop.example.com/about', base: 'http://shop.example.com' });
    } finally {
      await s.close();
    }
  });

  it('a {name}.html page inside a {param} directory gets its own parameter’s switches', async () => {
    const s = await serve({
      '/shop/{category}/🔗.yaml': 'values: [tea, coffee]\n',
      '/shop/{category}/{size}🔗.yaml': 'values: [small, large]\n',
      '/shop/{category}/{size}.html': "<!--TEMPLATE mustache-->\n{{% import {size} from '🔗' }}\n<p>{{size.$value}} tea={{size.tea}} large={{#size.large}}yes{{/size.large}}</p>\n",
    });
    try {
      const res = await s.get('/shop/tea/large');
      assert.equal(res.status, 200);
      assert.equal(res.text.trim(), '<p>large tea= large=yes</p>');
      assert.equal((await s.get('/shop/tea/huge')).status, 404, 'the router still checks the page’s own values');
    } finally {
      await s.close();
    }
  });

  it('with two parameters of one name, the one nearer the file wins', async () => {
    const s = await serve({
      '/a/{x}/🔗.yaml': 'values: [one]\n',
      '/a/{x}/b/{x}/🔗.yaml': 'values: [two]\n',
      '/a/{x}/b/{x}/GET.js': "import {x} from '🔗'\n({x})\n",
    });
    try {
      assert.deepEqual(JSON.parse((await s.get('/a/one/b/two')).text), { x: { $value: 'two', two: true } });
    } finally {
      await s.close();
    }
  });
});
