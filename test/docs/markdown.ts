/**
 * Reading the examples of a documentation page: fenced code blocks with their info string, and
 * the sections (headings) they belong to. Shared by the tests of docs/tutorial.md, docs/request.md
 * and docs/suppliers.md, which follow the convention of docs/views.md and docs/forms.md: a block
 * whose info string holds `file=/path` is that file of the app, whole (`/path` from the app's
 * root).
 */
import { readFileSync } from 'node:fs';

export interface Block {
  /** The words of the info string after the language: `file=/index.html`, `request`, … */
  info: string[];
  lang: string;
  text: string;
  /** The line of the opening fence (1-based), for messages. */
  line: number;
}

export interface Section {
  /** The heading's text, without the `#`s. */
  title: string;
  level: number;
  blocks: Block[];
}

/** The sections of a Markdown page, in order; text before the first heading is a section titled "(top)". */
export function sections(markdown: string): Section[] {
  const out: Section[] = [];
  let current: Section = { title: '(top)', level: 0, blocks: [] };
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const heading = /^(#{1,6}) (.*)$/.exec(line);
    if (heading) {
      out.push(current);
      current = { title: heading[2]!.trim(), level: heading[1]!.length, blocks: [] };
    } else if (/^\s*```/.test(line)) {
      const indent = line.indexOf('`');
      const words = line.slice(indent + 3).trim().split(/\s+/).filter(Boolean);
      const body: string[] = [];
      const start = i + 1;
      while (++i < lines.length && !/^\s*```\s*$/.test(lines[i]!)) body.push(lines[i]!.slice(Math.min(indent, lines[i]!.length - lines[i]!.trimStart().length)));
      current.blocks.push({ lang: words[0] ?? '', info: words.slice(1), text: body.length === 0 ? '' : body.join('\n') + '\n', line: start });
    }
  }
  out.push(current);
  return out;
}

/** The app path of a `file=/path` block, or undefined. */
export function fileOf(block: Block): string | undefined {
  return block.info.find((i) => i.startsWith('file='))?.slice('file='.length);
}

export function readDoc(name: string): string {
  return readFileSync(new URL(`../../docs/${name}`, import.meta.url), 'utf8');
}
