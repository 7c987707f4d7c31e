// Benchmark: render one page (a layout + 3 partials + a 200-item loop) with Laneway's engine and
// with mustache.js, Hogan.js and wontache, in the same process. Every engine renders an
// equivalent template; outputs are compared (whitespace-insensitively) before timing.
//
// Run: npx tsc -p tsconfig.build.json && node bench/template-render.bench.mjs
// Uses the BUILT engine (dist/template/index.js). Total run time is bounded (< 20 s).
import { performance } from 'node:perf_hooks';
import Mustache from 'mustache';
import Hogan from 'hogan.js';
import wontache from 'wontache';
import { compileView } from '../dist/template/index.js';
import { DiagnosticList } from '../dist/diag/index.js';

const MARKER = '<!--TEMPLATE mustache-->\n';
const WARMUP_MS = 400;
const RUN_MS = 1800;

// --- data ---------------------------------------------------------------------------------------
const data = {
  title: 'Products & prices',
  user: { name: 'Ada <admin>' },
  links: [
    { href: '/', label: 'Home' },
    { href: '/products', label: 'Products' },
    { href: '/about', label: 'About us' },
    { href: '/blog', label: 'Blog' },
    { href: '/contact', label: 'Contact' },
  ],
  items: Array.from({ length: 200 }, (_, i) => ({
    id: i + 1,
    name: i % 7 === 0 ? `Widget "${i}" & co` : `Widget ${i}`,
    price: (i * 3.7).toFixed(2),
    inStock: i % 3 !== 0,
    tags: i % 4 === 0 ? ['new', 'sale'] : [],
    description: i % 5 === 0 ? 'Handmade <b>oak</b>, 2 years warranty' : 'A plain and simple widget',
  })),
  year: 2031,
};

// --- templates (shared pieces) ------------------------------------------------------------------
const NAV = `<nav>
  <ul>
  {{#links}}
    <li><a href="{{href}}">{{label}}</a></li>
  {{/links}}
  </ul>
  <span class="user">{{user.name}}</span>
</nav>
`;
const ITEM = `<tr id="item-{{id}}">
  <td>{{id}}</td>
  <td class="name">{{name}}</td>
  <td class="price">{{price}}</td>
  <td>{{#inStock}}in stock{{/inStock}}{{^inStock}}sold out{{/inStock}}</td>
  <td>{{#tags}}<span class="tag">{{.}}</span>{{/tags}}</td>
  <td>{{description}}</td>
</tr>
`;
const FOOTER = `<footer>
  <p>&copy; {{year}} Example shop · {{title}}</p>
</footer>
`;
const HEAD = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>{{title}}</title>
  <link rel="stylesheet" href="/css/site.css">
</head>
<body>
{{>nav}}
<main>
`;
const TAIL = `</main>
{{>footer}}
</body>
</html>
`;
const CONTENT = `<h1>{{title}}</h1>
<table>
{{#items}}
{{>item}}
{{/items}}
</table>
`;
// Layout with a block (Laneway, Hogan.js, wontache support inheritance).
const LAYOUT = `${HEAD}{{$content}}{{/content}}
${TAIL}`;
const PAGE = `{{<layout}}
{{$content}}
${CONTENT}{{/content}}
{{/layout}}
`;
// mustache.js has no inheritance: the same page from head and tail partials.
const PAGE_NO_INHERITANCE = `{{>head}}${CONTENT}{{>tail}}`;

// --- engines ----------------------------------------------------------------------------------
/** The benchmark page compiled as a Laneway view (from an in-memory source tree). */
function compileLanewayPage() {
  const files = {
    '/page.html': `${MARKER}{{% partial /_layout }}\n{{% partial /_partials/ }}\n{{% import {title, user, links, items, year} from '📤' }}\n${PAGE}`,
    '/_layout.html': `${MARKER}{{% partial /_partials/ }}\n{{% import {title, user, links, year} from '📤' }}\n${LAYOUT}`,
    '/_partials/nav.html': `${MARKER}{{% import {links, user} from '📤' }}\n${NAV}`,
    '/_partials/item.html': MARKER + ITEM,
    '/_partials/footer.html': `${MARKER}{{% import {year, title} from '📤' }}\n${FOOTER}`,
  };
  const tree = {
    read: (p) => files[p],
    list: (dir) => {
      const names = Object.keys(files).filter((p) => p.startsWith(dir) && !p.slice(dir.length).includes('/')).map((p) => p.slice(dir.length));
      return names.length ? names : undefined;
    },
  };
  const diagnostics = new DiagnosticList();
  const view = compileView('/page.html', files['/page.html'], { tree, diagnostics });
  if (!view) throw new Error('Laneway view did not compile: ' + JSON.stringify(diagnostics.items));
  return view;
}

function laneway() {
  const view = compileLanewayPage();
  const input = { importValue: (_m, name) => data[name], dev: false };
  return () => view.render(input).html;
}

function lanewayAsync() {
  const view = compileLanewayPage();
  // The item list arrives as a Promise (as from a database); everything else is at hand.
  const input = { importValue: (_m, name) => (name === 'items' ? Promise.resolve(data.items) : data[name]), dev: false };
  return async () => (await view.render(input)).html;
}

function mustacheJs() {
  const partials = { head: HEAD, tail: TAIL, nav: NAV, item: ITEM, footer: FOOTER };
  Mustache.parse(PAGE_NO_INHERITANCE);
  for (const p of Object.values(partials)) Mustache.parse(p);
  return () => Mustache.render(PAGE_NO_INHERITANCE, data, partials);
}

function hogan() {
  const partials = {
    layout: Hogan.compile(LAYOUT),
    nav: Hogan.compile(NAV),
    item: Hogan.compile(ITEM),
    footer: Hogan.compile(FOOTER),
  };
  const page = Hogan.compile(PAGE);
  return () => page.render(data, partials);
}

function wontacheJs() {
  const partials = {
    layout: wontache(LAYOUT),
    nav: wontache(NAV),
    item: wontache(ITEM),
    footer: wontache(FOOTER),
  };
  const page = wontache(PAGE);
  return () => page(data, { partials });
}

// --- run --------------------------------------------------------------------------------------
// Engines differ in which extra characters they escape (mustache.js: / = `) and in the entity
// they use for the apostrophe; compare after normalising those and whitespace.
const squash = (s) =>
  s
    .replace(/&#x2F;|&#47;/g, '/')
    .replace(/&#x3D;|&#61;/g, '=')
    .replace(/&#x60;|&#96;/g, '`')
    .replace(/&#x27;|&#39;|&apos;/g, "'")
    .replace(/\s+/g, ' ')
    .trim();

function time(render) {
  let end = performance.now() + WARMUP_MS;
  while (performance.now() < end) render();
  let n = 0;
  const start = performance.now();
  end = start + RUN_MS;
  while (performance.now() < end) {
    for (let i = 0; i < 10; i++) render();
    n += 10;
  }
  return (n / (performance.now() - start)) * 1000;
}

async function timeAsync(render) {
  let end = performance.now() + WARMUP_MS;
  while (performance.now() < end) await render();
  let n = 0;
  const start = performance.now();
  end = start + RUN_MS;
  while (performance.now() < end) {
    for (let i = 0; i < 10; i++) await render();
    n += 10;
  }
  return (n / (performance.now() - start)) * 1000;
}

const engines = { laneway: laneway(), 'mustache.js': mustacheJs(), 'Hogan.js': hogan(), wontache: wontacheJs() };
const reference = squash(engines.laneway());
for (const [name, render] of Object.entries(engines)) {
  const out = squash(render());
  if (out !== reference) {
    let i = 0;
    while (i < out.length && out[i] === reference[i]) i++;
    console.error(`output of ${name} differs from Laneway's at ${i}:\n  laneway: ${reference.slice(i - 80, i + 80)}\n  ${name}: ${out.slice(i - 80, i + 80)}`);
    process.exit(1);
  }
}
const asyncRender = lanewayAsync();
if (squash(await asyncRender()) !== reference) {
  console.error('async Laneway output differs');
  process.exit(1);
}

console.log(`template render: layout + 3 partials + 200-item loop (${engines.laneway().length} bytes), Node ${process.version}`);
const results = {};
for (const [name, render] of Object.entries(engines)) {
  results[name] = time(render);
  console.log(`  ${name.padEnd(24)} ${results[name].toFixed(0).padStart(8)} ops/s  ${(1e6 / results[name]).toFixed(1).padStart(8)} µs/page`);
}
const asyncOps = await timeAsync(asyncRender);
console.log(`  ${'laneway (async items)'.padEnd(24)} ${asyncOps.toFixed(0).padStart(8)} ops/s  ${(1e6 / asyncOps).toFixed(1).padStart(8)} µs/page`);
const peers = Object.entries(results).filter(([name]) => name !== 'laneway');
const [fastestName, fastest] = peers.sort((a, b) => b[1] - a[1])[0];
console.log(`  ratio laneway / fastest peer (${fastestName}): ${(results.laneway / fastest).toFixed(2)}x (target >= 2x)`);
