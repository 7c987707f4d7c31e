/**
 * What each file of an app is (docs/routing.md "File → URL"), decided from its normalised path and, for
 * `.html`, its first line. Privacy is decided separately (`isPrivatePath`): a private file keeps
 * its kind (a private `.html` is a partial or layout) but is never routed.
 */
import { isScriptEndpointName, paramName } from '../../router/index.js';
import { isTemplate } from '../../template/index.js';

export type FileKind =
  | 'script' // server script endpoint (GET.js, 🖥name.js, …)
  | 'supplier' // 📤/Name.js
  | 'function-supplier' // 📤/{}Name.js
  | 'html-supplier' // 📤/Name.html
  | 'form-definition' // 📤/⏳Name.yaml
  | 'view' // public Mustache .html
  | 'partial' // private Mustache .html (partial, layout, import)
  | 'page' // plain .html
  | 'not-found' // ⚡NotFound.html (Mustache or plain)
  | 'svg'
  | 'data' // .yaml / .json used through pragmas (or served when public)
  | 'scss'
  | 'static' // any other asset, including client-side .js
  | 'endpoint-config' // 📮setup.yaml beside 📮setup.js
  | 'param-definition' // 🔗.yaml, {name}🔗.yaml
  | 'model' // /📦/…
  | 'static-model' // /🗄/…
  | 'notification' // /📡/…
  | 'manifest' // /🎛.yaml
  | 'properties' // /🎨.scss
  | 'users' // 👤.yaml
  | 'connectors' // /🔌.yaml
  | 'nested-site' // 🔌name.yaml, at any level (/docs/🔌api.yaml mounts at /docs/api/)
  | 'app-icon'; // /🎛.svg

export interface ClassifiedFile {
  path: string;
  dir: string;
  name: string;
  kind: FileKind;
  /** Never answers a URL by itself (private, configuration, definitions, suppliers). */
  hidden: boolean;
  /** For suppliers: `📌` pinned. */
  pinned?: boolean;
}


/**
 * Private by name: any segment (file or ancestor directory) starting with `_`, and dot-files
 * (`.env`, `.htpasswd`) except the `/.well-known/` directory. Any `_` ancestor, not only the
 * direct parent, makes a file private (docs/routing.md "Private and non-public files").
 */
export function isPrivatePath(path: string): boolean {
  return privateSegment(path.split('/'), true);
}

/** Whether a directory (`/a/_b`) is private: every file inside it is. */
export function isPrivateDir(dir: string): boolean {
  return privateSegment(dir.split('/'), false);
}

function privateSegment(parts: string[], lastIsFile: boolean): boolean {
  for (let i = 1; i < parts.length; i++) {
    const part = parts[i]!;
    if (part.startsWith('_')) return true;
    const wellKnownDir = i === 1 && part === '.well-known' && (!lastIsFile || i < parts.length - 1);
    if (part.startsWith('.') && !wellKnownDir) return true;
  }
  return false;
}

/** Directories whose whole content is definitions, never served (docs/routing.md "Private and non-public files"). */
const DEFINITION_ROOTS: Record<string, FileKind> = { '📦': 'model', '🗄': 'static-model', '📡': 'notification' };

export function classifyFile(path: string, readFirstLine: () => string): ClassifiedFile {
  const slash = path.lastIndexOf('/');
  const dir = path.slice(0, slash);
  const name = path.slice(slash + 1);
  const parts = path.split('/').slice(1, -1);
  const ext = name.includes('.') ? name.slice(name.lastIndexOf('.') + 1).toLowerCase() : '';
  const base = { path, dir, name };
  const hiddenByName = isPrivatePath(path);

  const root = parts[0];
  if (root !== undefined && root in DEFINITION_ROOTS) return { ...base, kind: DEFINITION_ROOTS[root]!, hidden: true };

  const supplierAt = parts.indexOf('📤');
  if (supplierAt !== -1) {
    // Only files directly inside 📤/ are suppliers; deeper ones are still never served.
    const direct = supplierAt === parts.length - 1;
    let bare = name;
    const pinned = bare.startsWith('📌');
    if (pinned) bare = bare.slice('📌'.length);
    if (direct && ext === 'js') return { ...base, kind: bare.startsWith('{}') ? 'function-supplier' : 'supplier', hidden: true, pinned };
    if (direct && ext === 'html') return { ...base, kind: 'html-supplier', hidden: true, pinned };
    if (direct && ext === 'yaml' && bare.startsWith('⏳')) return { ...base, kind: 'form-definition', hidden: true };
    return { ...base, kind: kindOfAsset(ext), hidden: true };
  }

  if (dir === '') {
    if (name === '🎛.yaml') return { ...base, kind: 'manifest', hidden: true };
    if (name === '🎛.svg') return { ...base, kind: 'app-icon', hidden: hiddenByName };
    if (name === '🎨.scss') return { ...base, kind: 'properties', hidden: true };
    if (name === '🔌.yaml') return { ...base, kind: 'connectors', hidden: true };
  }
  // Mount files: at the root or below (src/app/request/mounts.ts says where one may not be).
  if (name.startsWith('🔌') && ext === 'yaml' && name !== '🔌.yaml') return { ...base, kind: 'nested-site', hidden: true };
  if (name === '👤.yaml') return { ...base, kind: 'users', hidden: true };
  // Settings names are root files, but a copy elsewhere is never served either.
  if (name === '🎛.yaml' || name === '🎨.scss' || (name.startsWith('🔌') && (ext === 'yaml' || ext === 'yml'))) {
    return { ...base, kind: 'data', hidden: true };
  }
  if (name === '🔗.yaml' || (ext === 'yaml' && /^\{[^{}]*\}🔗\.yaml$/.test(name))) {
    return { ...base, kind: 'param-definition', hidden: true };
  }

  if (ext === 'js' && isScriptEndpointName(name)) return { ...base, kind: 'script', hidden: hiddenByName };
  if ((ext === 'yaml' || ext === 'yml') && isScriptEndpointName(name.slice(0, name.lastIndexOf('.')) + '.js')) {
    return { ...base, kind: 'endpoint-config', hidden: true };
  }
  if (ext === 'html') {
    const mustache = isTemplate(readFirstLine());
    if (name === '⚡NotFound.html') return { ...base, kind: 'not-found', hidden: true };
    if (mustache) return { ...base, kind: hiddenByName ? 'partial' : 'view', hidden: hiddenByName };
    return { ...base, kind: 'page', hidden: hiddenByName };
  }
  return { ...base, kind: kindOfAsset(ext), hidden: hiddenByName };
}

function kindOfAsset(ext: string): FileKind {
  if (ext === 'svg') return 'svg';
  if (ext === 'yaml' || ext === 'yml' || ext === 'json') return 'data';
  if (ext === 'scss') return 'scss';
  return 'static';
}

/** Whether a directory name is a `{param}` directory, and its name. */
export function dirParamName(dirName: string): string | undefined {
  return paramName(dirName);
}
