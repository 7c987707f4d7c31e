/** Helpers for the policy tests: parse a CSP header, hash like a browser, find inline blocks. */
import { createHash } from 'node:crypto';
import { checkApp, type AppOptions } from '../../src/app/index.js';
import { formatDiagnostic } from '../../src/diag/index.js';
import { writeApp, type AppFiles } from '../helpers.js';

export const M = '<!--TEMPLATE mustache-->\n';

/** A header as directive → sources. */
export function parsePolicy(header: string | string[] | undefined): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const part of String(header ?? '').split(';')) {
    const [name, ...sources] = part.trim().split(/\s+/);
    if (name) out.set(name, sources);
  }
  return out;
}

/** The hash source a browser computes for an inline block's text. */
export function browserHash(text: string, algorithm: 'sha256' | 'sha384' | 'sha512' = 'sha256'): string {
  return `'${algorithm}-${createHash(algorithm).update(text.replace(/\r\n?/g, '\n')).digest('base64')}'`;
}

/** The texts of the inline `<script>` (without src) and `<style>` elements of a simple page. */
export function inlineBlocks(html: string): { scripts: string[]; styles: string[] } {
  const scripts = [...html.matchAll(/<script(?![^>]*\ssrc=)[^>]*>([\s\S]*?)<\/script>/gi)].map((m) => m[1]!);
  const styles = [...html.matchAll(/<style[^>]*>([\s\S]*?)<\/style>/gi)].map((m) => m[1]!);
  return { scripts, styles };
}

/** Diagnostics of an app as `file:line:column: message [CODE]` lines, filtered by code prefix. */
export function diagnosticsOf(files: AppFiles, prefix = 'LW_', options: AppOptions = {}): string[] {
  return checkApp(writeApp(files), options)
    .filter((d) => d.code.startsWith(prefix))
    .map(formatDiagnostic);
}
