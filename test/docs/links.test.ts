/**
 * The links of the pages this suite owns (docs/tutorial.md, request.md, suppliers.md, status.md,
 * the deployment-kit part of deploy.md) and of the README's documentation list: every relative
 * link names a file that exists, and every `#anchor` a heading of that page (GitHub's rule: lower
 * case, punctuation and emoji dropped, spaces as `-`, `-1`, `-2` for repeats).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The anchors of a Markdown page's headings (outside code blocks). */
function anchors(markdown: string): Set<string> {
  const out = new Set<string>();
  const seen = new Map<string, number>();
  let fence = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*```/.test(line)) fence = !fence;
    const m = !fence && /^#{1,6} (.*)$/.exec(line);
    if (!m) continue;
    const base = m[1]!
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** Relative links of a page, outside code blocks and code spans. */
function links(markdown: string): string[] {
  const text = markdown.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!).filter((l) => !/^[a-z]+:/.test(l));
}

function part(path: string): string {
  const text = readFileSync(join(ROOT, path), 'utf8');
  if (path === 'docs/deploy.md') return text.slice(text.indexOf('<!-- BEGIN deployment kit'), text.indexOf('<!-- END deployment kit -->'));
  if (path === 'README.md') return text.slice(text.indexOf('## Documentation'), text.indexOf('## Status'));
  return text;
}

describe('links of the pages', () => {
  for (const page of ['docs/tutorial.md', 'docs/request.md', 'docs/suppliers.md', 'docs/status.md', 'docs/deploy.md', 'README.md']) {
    it(`${page}: every relative link and anchor exists`, () => {
      const found = links(part(page));
      assert.ok(found.length > 0);
      for (const link of found) {
        const [file, anchor] = link.split('#') as [string, string | undefined];
        const target = file === '' ? join(ROOT, page) : join(dirname(join(ROOT, page)), decodeURI(file));
        assert.ok(existsSync(target), `${page}: ${link}: no such file`);
        if (anchor !== undefined && target.endsWith('.md')) {
          assert.ok(anchors(readFileSync(target, 'utf8')).has(decodeURIComponent(anchor)), `${page}: ${link}: no such heading`);
        }
      }
    });
  }
});
