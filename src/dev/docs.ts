/**
 * Laneway's own documentation, served by `laneway dev` at `/__/dev/docs/<page>.md`, so that the
 * overlay's links to error codes (`/__/dev/docs/errors.md#lw_app_yaml`) work offline and match the
 * installed version. Only the Markdown files of the package's `docs/` directory are served, by
 * name; headings get GitHub's anchors (`### LW_APP_YAML` → `#lw_app_yaml`), so links between
 * the pages work as they do on GitHub.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type MarkdownIt from 'markdown-it';
import type { MarkdownIt as Converter } from 'markdown-it';

/** Where the pages are served. */
export const DOCS_PATH = '/__/dev/docs/';

/** The package's docs/ directory (two levels up from src/dev/ and from dist/dev/). */
const DOCS_DIR = new URL('../../docs/', import.meta.url);

const STYLE = `
body { margin: 0; font: 16px/1.6 system-ui, sans-serif; color: #1d1d1f; }
main { max-width: 50rem; margin: 0 auto; padding: 1.5rem; }
h3 { font: 600 15px ui-monospace, SFMono-Regular, Menlo, monospace; margin-top: 2rem; }
h3:target { background: #fff3c4; }
code, pre { font: 14px ui-monospace, SFMono-Regular, Menlo, monospace; }
pre { background: #f5f5f7; padding: .75rem; overflow-x: auto; }
table { border-collapse: collapse; } td, th { border: 1px solid #ddd; padding: .25rem .5rem; }
`;

const POLICY = `default-src 'none'; style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'; base-uri 'none'; form-action 'none'; frame-ancestors 'self'`;

/** GitHub's heading anchors: lower case, punctuation other than `-` and `_` dropped, spaces to `-`. */
function githubSlug(text: string): string {
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

let converter: Converter | undefined;

function markdown(): Converter {
  if (converter) return converter;
  // Loaded when the first page of the docs is asked for (the CommonJS build, as src/content/ loads it).
  const md = new (createRequire(import.meta.url)('markdown-it') as typeof MarkdownIt)('default', { html: false, linkify: false });
  md.core.ruler.push('laneway_heading_ids', (state) => {
    const taken = new Map<string, number>();
    const tokens = state.tokens;
    for (let i = 0; i < tokens.length; i++) {
      const token = tokens[i]!;
      if (token.type !== 'heading_open') continue;
      const base = githubSlug(tokens[i + 1]?.children?.map((c) => c.content).join('') ?? '');
      const n = taken.get(base) ?? 0;
      taken.set(base, n + 1);
      token.attrSet('id', n === 0 ? base : `${base}-${n}`);
    }
  });
  return (converter = md);
}

/**
 * The page for `name` (`errors.md`), or undefined when there is none. Links to other pages
 * (`nested-sites.md#…`) stay relative, and so stay under /__/dev/docs/.
 */
export function docsPage(name: string): { html: string; policy: string } | undefined {
  if (!/^[a-z0-9-]+\.md$/.test(name)) return undefined;
  let text: string;
  try {
    text = readFileSync(new URL(name, DOCS_DIR), 'utf8');
  } catch {
    return undefined;
  }
  const title = /^# (.*)$/m.exec(text)?.[1] ?? name;
  const escaped = title.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  const html =
    `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">` +
    `<title>${escaped} · Laneway</title><style>${STYLE}</style></head>\n<body><main>\n${markdown().render(text)}</main></body></html>\n`;
  return { html, policy: POLICY };
}
