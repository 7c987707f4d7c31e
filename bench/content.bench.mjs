// Content sites (bench/README.md). A generated handbook of 1,000 Markdown documents (a static
// model with a document-markdown body, an order field and path uids; about 2 KB each, with
// headings, links between documents, lists and code) and a root `{article}.html` page per document
// (a two-level layout, the rendered body with per-call options, a table of contents from
// sections()).
//
//   load    wall time of loadApp() on the site, in-process (median of 3), and of
//           `bin/laneway check` on it (a fresh process: startup included). Target: < 3 s each.
//   page    GET /guides/section-7/page-427 through Laneway vs a bare node:http server sending the
//           same status, headers and bytes (captured from Laneway, checked before timing): a
//           document page must cost about what a static file costs. Target: ≥ 0.8×.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { loadApp } from '../dist/app/index.js';
import { BENCH_DIR, cannedResponse, checkTarget, compare, describeWorkload, fetchOnce, report, startServer } from './lib.mjs';

const DOCUMENTS = 1000;
const PAGE = '/guides/section-7/page-427';
const TARGET_PAGE = 0.8;
const TARGET_LOAD_MS = 3000;

const tmp = mkdtempSync(join(tmpdir(), 'laneway-bench-content-'));
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));
const site = join(tmp, 'site');

const write = (path, text) => {
  const abs = join(site, path);
  mkdirSync(dirname(abs), { recursive: true });
  writeFileSync(abs, text);
};
write('🎛.yaml', 'name: Bench handbook\n');
write('🗄/📄Article.yaml', 'title: string\nsummary?: string\norder:\n  type: integer\n  order: true\ncontent:\n  type: document-markdown\n  render:\n    generateHeaderId: true\n    autolink: blank\n    typography: true\nuid:\n  type: document-uid\n  path: true\n');
write('_nav/layout.html', '<!--TEMPLATE mustache-->\n{{% default title = \'Handbook\' }}\n<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>{{title}}</title><style>body { margin: 0 auto; max-width: 50rem; }</style></head>\n<body><header><a href="/">Handbook</a></header>{{$content}}{{/content}}</body></html>\n');
write('_nav/page.html', '<!--TEMPLATE mustache-->\n{{% partial /_nav/ as nav }}\n{{<nav-layout}}{{$content}}<div class="columns"><nav>{{$side}}{{/side}}</nav><main>{{$main}}{{/main}}</main></div>{{/content}}{{/nav-layout}}\n');
write('{article}🔗.yaml', 'field: 🗄.Article.uid\n');
write(
  '{article}.html',
  "<!--TEMPLATE mustache-->\n{{% partial /_nav/ as nav }}\n{{% import {article} from '🔗' }}\n{{% const title = article.title }}\n{{<nav-page}}\n{{$side}}<ol>{{#article.get.content.sections as s}}<li><a href=\"#{{s.id}}\">{{s.title}}</a></li>{{/article.get.content.sections}}</ol>{{/side}}\n{{$main}}<h1>{{article.title}}</h1>{{#article.summary}}<p>{{article.summary}}</p>{{/article.summary}}\n{{{article.get.content.html minimumHeaderLevel=2 h2='title'}}}{{/main}}\n{{/nav-page}}\n",
);
const paragraph = (i) => `Lorem ipsum *dolor* sit amet -- consectetur [adipiscing](https://example.com/${i}) elit, sed \`do\` eiusmod tempor incididunt ut labore et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud exercitation ullamco laboris nisi ut aliquip ex ea commodo consequat.`;
for (let i = 0; i < DOCUMENTS; i++) {
  const next = (i + 1) % DOCUMENTS;
  write(
    `🗄/Article/guides/section-${i % 20}/page-${i}.md`,
    `---\ntitle: Page ${i}\nsummary: What page ${i} is about.\norder: ${i}\n---\n\n# Overview {#overview}\n\n${paragraph(i)}\n\nNext: [page ${next}](/🗄/Article/guides/section-${next % 20}/page-${next}.md).\n\n## Details\n\n- one\n- two\n- three\n\n\`\`\`js\nconst page = ${i};\n\`\`\`\n\n${paragraph(i + 1)}\n\n# Reference\n\n${paragraph(i + 2)}\n\n${paragraph(i + 3)}\n`,
  );
}

// Load time: in-process, then `laneway check` as a user runs it.
const loads = [];
for (let i = 0; i < 3; i++) {
  const t = performance.now();
  loadApp(site);
  loads.push(performance.now() - t);
}
loads.sort((a, b) => a - b);
const checkStart = performance.now();
execFileSync(process.execPath, [join(BENCH_DIR, '..', 'bin', 'laneway'), 'check', site], { stdio: 'pipe' });
const checkMs = performance.now() - checkStart;

console.log(`content.bench: ${DOCUMENTS} Markdown documents; ${describeWorkload()}`);
console.log(`  load: loadApp ${Math.round(loads[1])} ms (runs ${loads.map(Math.round).join(', ')})  < ${TARGET_LOAD_MS} ${loads[1] < TARGET_LOAD_MS ? '✓' : '✗'}`);
console.log(`  laneway check: ${Math.round(checkMs)} ms (fresh process)  < ${TARGET_LOAD_MS} ${checkMs < TARGET_LOAD_MS ? '✓' : '✗'}\n`);

// A document page against the same bytes from a bare server.
const laneway = await startServer(join(BENCH_DIR, 'servers', 'laneway.mjs'), [site], { timeoutMs: 30_000 });
const page = await checkTarget('laneway', laneway.port, PAGE, { status: 200, bodyIncludes: '<h2 id="overview" class="title">Overview</h2>' });
if (!page.body.toString().includes('href="/guides/section-8/page-428"')) throw new Error('laneway: the link to the next document was not rewritten');
const missing = await checkTarget('laneway', laneway.port, '/guides/none', { status: 404 });
const table = join(tmp, 'responses.json');
writeFileSync(table, JSON.stringify({ routes: { [PAGE]: cannedResponse(page) }, fallback: cannedResponse(missing) }));
const bare = await startServer(join(BENCH_DIR, 'servers', 'bare-static.mjs'), [table]);
await checkTarget('bare node:http', bare.port, PAGE, { same: page });
await checkTarget('laneway', laneway.port, PAGE, { same: await fetchOnce(bare.port, PAGE) });
console.log(`  page: GET ${PAGE} (${page.body.length} bytes of HTML, ${page.headers['content-type']})\n`);

const result = await compare(`document page ${PAGE}`, { label: 'bare node:http', port: bare.port, path: PAGE }, { label: 'laneway', port: laneway.port, path: PAGE }, 200);
report(result, TARGET_PAGE);

await Promise.all([laneway.stop(), bare.stop()]);
if (process.env.BENCH_STRICT && (result.ratio < TARGET_PAGE || loads[1] >= TARGET_LOAD_MS || checkMs >= TARGET_LOAD_MS)) process.exitCode = 1;
