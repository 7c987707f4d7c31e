/**
 * A code frame: the lines around a position, numbered, with a caret under the column. Used by
 * development error pages; never sent in production.
 */

/**
 * The lines `line - context … line + context` of `source`, each as `  12 | text`, the line of the
 * position marked `>` and followed by a caret line. `line` and `column` are 1-based; the column
 * counts code points, as `locate` gives it. Tabs are kept so the caret lines up.
 */
export function codeFrame(source: string, line: number, column: number, context = 2): string {
  const lines = source.split(/\r?\n|\r/);
  const first = Math.max(1, line - context);
  const last = Math.min(lines.length, line + context);
  const width = String(last).length;
  const out: string[] = [];
  for (let n = first; n <= last; n++) {
    const text = lines[n - 1] ?? '';
    const number = String(n).padStart(width);
    out.push(`${n === line ? '>' : ' '} ${number} | ${text}`);
    if (n === line) {
      // Blanks under the text before the column, tabs kept as tabs.
      const before = Array.from(text).slice(0, Math.max(0, column - 1));
      const pad = before.map((ch) => (ch === '\t' ? '\t' : ' ')).join('');
      out.push(`  ${' '.repeat(width)} | ${pad}^`);
    }
  }
  return out.join('\n');
}
