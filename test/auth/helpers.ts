/** Builds AuthConfigs for the auth tests from in-memory files: model definitions and 👤.yaml texts. */
import { DiagnosticList, formatDiagnostic } from '../../src/diag/index.js';
import { readModelDefinitions, type ModelSchema } from '../../src/models/index.js';
import { memoryTree } from '../models/tree.js';
import { readAuthConfig, type AuthConfig, type ReadAuthOptions } from '../../src/auth/index.js';

/** Reads `/📦/…` definitions from app-relative path → text. */
export function schemaOf(files: Record<string, string>): ModelSchema {
  const { tree, dirs } = memoryTree(files);
  const diagnostics = new DiagnosticList();
  const schema = readModelDefinitions(tree, diagnostics, { dirs });
  if (diagnostics.items.length) throw new Error(diagnostics.items.map(formatDiagnostic).join('\n'));
  return schema;
}

/** Reads 👤.yaml files (path → text); `problems` are `file:line:column CODE message`, sorted. */
export function authOf(
  users: Record<string, string>,
  schema: ModelSchema,
  options?: ReadAuthOptions,
): { config: AuthConfig; problems: string[] } {
  const diagnostics = new DiagnosticList();
  const config = readAuthConfig(Object.entries(users).map(([path, text]) => ({ path, text })), schema, diagnostics, options);
  return { config, problems: render(diagnostics) };
}

export function render(diagnostics: DiagnosticList): string[] {
  return diagnostics.sorted().map((d) => `${d.file}:${d.line}:${d.column} ${d.severity === 'warning' ? 'warning ' : ''}${d.code} ${d.message}`);
}

/** The models of the tests: a team container with a member profile and boards, a top-level profile, a note. */
export const MODELS = schemaOf({
  '/📦/🌐Team.yaml': 'name: string\nplan:\n  type: options\n  values: [free, paid]\n',
  '/📦/Team/👤TeamMember.yaml': 'nickname?: string\n',
  '/📦/Team/🌐Board.yaml': 'title: string\nstatus:\n  type: options\n  values: [open, closed]\naddress?:\n  type:\n    street: string\n    city: string\nowner?: Contact\n',
  '/📦/📎Contact.yaml': 'email: string\n',
  '/📦/👤Member.yaml': 'bio?: string\n',
  '/📦/🌐Note.yaml': 'text: string\n',
});
