/**
 * Mistakes in special names (docs/conventions.md, docs/routing.md "File names"): a file or
 * directory whose name starts with an emoji Laneway does not know (`📥/` for `📤/`), a known one
 * where it means nothing (`models/🌐Note.yaml` outside `/📦/`, `⏳NewNote.yaml` outside `📤/`,
 * `🖥notes.ts`), or a special name in the wrong case or extension (`🔗.yml`). Each is a warning
 * (`LW_APP_SPECIAL_NAME`) naming what was probably meant, and the files are not served until
 * they are renamed: a file that was meant to be a definition or a script must not be published
 * as a static file.
 *
 * The definition directories (`/📦/`, `/🗄/`, `/📡/`) are left to their readers, which report
 * every file they cannot read.
 */
import type { DiagnosticList } from '../../diag/index.js';
import type { ClassifiedFile } from './classify.js';

/** A special emoji: its code point and what it does (docs/conventions.md holds the same list). */
export interface SpecialEmoji {
  emoji: string;
  /** What it means, in a few words. */
  about: string;
}

const E = (emoji: string, about: string): [string, SpecialEmoji] => [emoji, { emoji, about }];

/** Every emoji Laneway gives a meaning to at the start of a file or directory name. */
export const SPECIAL_EMOJI: ReadonlyMap<string, SpecialEmoji> = new Map([
  E('📦', 'the models directory, /📦/'),
  E('🗄', 'the static models directory, /🗄/'),
  E('📡', 'the notifications directory, /📡/'),
  E('📤', 'a suppliers and forms directory, 📤/'),
  E('🖥', 'a GET script, 🖥name.js'),
  E('📮', 'a POST script, 📮name.js'),
  E('❌', 'a DELETE script, ❌name.js'),
  E('🖱', 'a click action, 🖱name.js'),
  E('⏱', 'an event stream, ⏱name.js'),
  E('📌', 'a pinned supplier or asset, 📌name'),
  E('⏳', 'a form, 📤/⏳Name.yaml'),
  E('⚡', 'the not-found page, ⚡NotFound.html'),
  E('🔗', 'path parameter values, 🔗.yaml'),
  E('👤', 'users and sign-in, 👤.yaml'),
  E('🎛', 'the manifest, /🎛.yaml (and the icon, /🎛.svg)'),
  E('🎨', 'the properties, /🎨.scss'),
  E('🔌', 'connectors, /🔌.yaml, or a nested site, 🔌name.yaml'),
  E('🌐', 'a Universal model, /📦/🌐Name.yaml'),
  E('📄', 'a Content model, /📦/📄Name.yaml'),
  E('📎', 'an embedded type, /📦/📎Name.yaml'),
]);

/** Emoji often typed for a special one: the one meant. */
const NEAR: Readonly<Record<string, string>> = {
  '📥': '📤', '📨': '📮', '📩': '📮', '📬': '📮', '📭': '📮', '📪': '📮', '📫': '📮', '✉': '📮', '📧': '📮',
  '💻': '🖥', '🖨': '🖥', '⌨': '🖥', '📺': '🖥', '🖲': '🖱', '👆': '🖱',
  '✖': '❌', '❎': '❌', '🗑': '❌', '🚫': '❌', '⛔': '❌',
  '⏰': '⏱', '⏲': '⏱', '⌚': '⏱', '⌛': '⏳',
  '📍': '📌', '🖇': '📎', '🔖': '📎',
  '🌍': '🌐', '🌎': '🌐', '🌏': '🌐', '🗺': '🌐',
  '📃': '📄', '📝': '📄', '📑': '📄', '🗒': '📄',
  '👥': '👤', '🧑': '👤', '🙂': '👤',
  '⛓': '🔗', '🔧': '🎛', '⚙': '🎛', '🎚': '🎛', '🕹': '🎛', '🖌': '🎨', '🖍': '🎨',
  '🔥': '⚡', '⚠': '⚡', '💥': '⚡', '📶': '📡', '📢': '📡', '🛰': '📡',
  '🗃': '🗄', '🗂': '🗄', '📁': '📦', '📂': '📦', '🎁': '📦',
};

/** The emoji (with its joiners and modifiers) a name starts with, or undefined. */
export function leadingEmoji(name: string): string | undefined {
  return /^(?:\p{Regional_Indicator}{2}|\p{Extended_Pictographic}(?:\u{200D}\p{Extended_Pictographic}|\p{Emoji_Modifier})*)/u.exec(name)?.[0];
}

/** `U+1F4E4`. */
export function codePoints(emoji: string): string {
  return [...emoji].map((c) => 'U+' + c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')).join(' ');
}

const DEFINITION_ROOTS = new Set(['📦', '🗄', '📡']);
const SCRIPT_EMOJI = new Set(['🖥', '📮', '❌', '🖱', '⏱']);
const MODEL_EMOJI = new Set(['🌐', '📄', '📎']);

/** What is wrong with one name, and the name meant (relative to the name's directory, or from the root with `/`). */
interface Problem {
  why: string;
  meant?: string;
}

function described(emoji: string): string {
  return `${emoji} (${codePoints(emoji)})`;
}

/** A directory name outside the definition roots; `atRoot` when it is a child of the app's root. */
function directoryProblem(name: string, atRoot: boolean): Problem | undefined {
  const emoji = leadingEmoji(name);
  if (emoji === undefined) return undefined;
  if (emoji === '📤') return name === '📤' ? undefined : { why: `a suppliers directory is named 📤 alone`, meant: '📤' };
  if (DEFINITION_ROOTS.has(emoji)) {
    if (name !== emoji) return { why: `the ${SPECIAL_EMOJI.get(emoji)!.about.replace(/, .*/, '')} is named ${emoji} alone`, meant: `/${emoji}` };
    return atRoot ? undefined : { why: `${SPECIAL_EMOJI.get(emoji)!.about} is read only at the app's root`, meant: `/${emoji}` };
  }
  return unknownOrMisplaced(emoji, name, 'directory');
}

function unknownOrMisplaced(emoji: string, name: string, what: 'file' | 'directory'): Problem {
  const special = SPECIAL_EMOJI.get(emoji);
  const near = NEAR[emoji] ?? (special === undefined ? undefined : emoji);
  const rest = name.slice(emoji.length);
  if (special === undefined) {
    const meant = near === undefined ? undefined : SPECIAL_EMOJI.get(near)!;
    return {
      why: `${described(emoji)} is not an emoji Laneway knows` + (meant ? `; ${described(meant.emoji)} is ${meant.about}` : ''),
      ...(near !== undefined && { meant: what === 'directory' && near === '📤' ? '📤' : near + rest }),
    };
  }
  return { why: `${described(emoji)} names ${special.about}, not a ${what} like this one` };
}

/** A file name outside the definition roots and outside 📤/. */
function fileProblem(name: string, dir: string): Problem | undefined {
  const emoji = leadingEmoji(name);
  const dot = name.lastIndexOf('.');
  const stem = dot > 0 ? name.slice(0, dot) : name;
  const ext = dot > 0 ? name.slice(dot + 1) : '';
  if (emoji === undefined) {
    // Near misses in ASCII: a verb name in another case is reported by mistakes.ts (LW_ROUTE_VERB_NAME_CASE).
    return undefined;
  }
  const rest = name.slice(emoji.length);
  if (SCRIPT_EMOJI.has(emoji)) {
    if (name.endsWith('.js') || name.endsWith('.yaml')) return undefined;
    if (rest === '' || stem === emoji) return { why: `a script is named ${emoji}name.js` };
    return { why: `a script's name ends in .js`, meant: `${stem}.js` };
  }
  if (emoji === '📌') return undefined; // a pinned asset, anywhere
  const exact = (canonical: string[], root: boolean): Problem | undefined => {
    if (canonical.includes(name)) return undefined;
    const meant = canonical.find((c) => c.toLowerCase() === name.toLowerCase() || c.slice(0, c.lastIndexOf('.')) === stem);
    return { why: `${described(emoji)} names ${SPECIAL_EMOJI.get(emoji)!.about}`, ...(meant && { meant: root ? `/${meant}` : meant }) };
  };
  switch (emoji) {
    case '⚡':
      // Only a near miss of ⚡NotFound.html (`⚡notfound.html`, `⚡404.html`, `⚡Not-Found.html`);
      // another page may start with ⚡ (docs/routing.md "File names").
      return /notfound|404/.test(name.toLowerCase().replace(/[-_ .]/g, '')) ? exact(['⚡NotFound.html'], false) : undefined;
    case '🔗':
      return name === '🔗.yaml' ? undefined : exact(['🔗.yaml'], false);
    case '👤':
      if (name === '👤.yaml') return undefined;
      if (ext === 'yaml' && rest.length > 5) return { why: `a Profile model (👤) is defined in /📦/`, meant: `/📦/${name}` };
      return exact(['👤.yaml'], false);
    case '🎛':
      return exact(['🎛.yaml', '🎛.svg'], true);
    case '🎨':
      // `🎨.de.scss`: the platform's locale overlay, an ordinary stylesheet here (docs/status.md).
      return name === '🎨.scss' || /^🎨\.[a-z]{2,3}(?:-[A-Za-z0-9]+)*\.scss$/.test(name) ? undefined : exact(['🎨.scss'], true);
    case '🔌':
      if (ext === 'yaml') return undefined;
      return { why: `${described('🔌')} names ${SPECIAL_EMOJI.get('🔌')!.about}`, meant: `${stem}.yaml` };
    case '⏳':
      return { why: `a form (⏳) is defined in a 📤/ directory`, meant: `${dir}/📤/${name}` };
  }
  if (MODEL_EMOJI.has(emoji)) {
    if (ext === 'yaml' || ext === 'yml') return { why: `a model definition (${emoji}) belongs in /📦/ (or /🗄/ for a static model)`, meant: `/📦/${stem}.yaml` };
    return { why: `${described(emoji)} names ${SPECIAL_EMOJI.get(emoji)!.about}` };
  }
  if (DEFINITION_ROOTS.has(emoji) || emoji === '📤') return { why: `${described(emoji)} names ${SPECIAL_EMOJI.get(emoji)!.about}, a directory, not a file` };
  return unknownOrMisplaced(emoji, name, 'file');
}

/** A file directly in a 📤/ directory. */
function supplierFileProblem(name: string, dir: string): Problem | undefined {
  let bare = name;
  if (bare.startsWith('📌')) bare = bare.slice('📌'.length);
  const emoji = leadingEmoji(bare);
  if (emoji === undefined || emoji === '⏳') return undefined;
  if (MODEL_EMOJI.has(emoji)) return { why: `a model definition (${emoji}) belongs in /📦/, not in a suppliers directory`, meant: `/📦/${bare}` };
  const near = NEAR[emoji];
  if (near === '⏳') return { why: `${described(emoji)} is not ⏳ (${codePoints('⏳')}), the form prefix`, meant: `${dir}/${name.replace(emoji, '⏳')}` };
  return { why: `in 📤/, a name starts with 📌 (pinned), ⏳ (a form) or {} (a function supplier); ${described(emoji)} means nothing here` };
}

/**
 * Reports the special-name mistakes of `files` and marks the files concerned `hidden` (never
 * served). `skip`: files another check reported already.
 */
export function checkSpecialNames(files: ClassifiedFile[], diagnostics: DiagnosticList, skip: ReadonlySet<string> = new Set()): void {
  const reportedDirs = new Map<string, boolean>();
  for (const file of files) {
    const parts = file.path.split('/').slice(1);
    if (DEFINITION_ROOTS.has(parts[0]!) && parts.length > 1) continue;
    // The first directory with a mistake hides everything under it, reported once.
    let hiddenByDir = false;
    for (let i = 0; i < parts.length - 1 && !hiddenByDir; i++) {
      const dirPath = '/' + parts.slice(0, i + 1).join('/');
      const known = reportedDirs.get(dirPath);
      if (known !== undefined) {
        hiddenByDir = known;
        continue;
      }
      const problem = parts[i - 1] === '📤' ? undefined : directoryProblem(parts[i]!, i === 0);
      reportedDirs.set(dirPath, problem !== undefined);
      if (problem) {
        hiddenByDir = true;
        const meant = problem.meant === undefined ? '' : problem.meant.startsWith('/') ? problem.meant : '/' + [...parts.slice(0, i), problem.meant].join('/');
        diagnostics.warn('LW_APP_SPECIAL_NAME', `${parts[i]}/: ${problem.why}${meant ? `: did you mean ${meant}/?` : ''}; the files under it are not served until it is renamed (docs/conventions.md lists the special names)`, dirPath);
      }
    }
    if (hiddenByDir) {
      file.hidden = true;
      continue;
    }
    if (skip.has(file.path)) continue;
    const inSuppliers = parts[parts.length - 2] === '📤';
    const problem = inSuppliers ? supplierFileProblem(file.name, file.dir) : fileProblem(file.name, file.dir);
    if (!problem) continue;
    file.hidden = true;
    const meant = problem.meant === undefined ? '' : problem.meant.startsWith('/') ? problem.meant : `${file.dir}/${problem.meant}`;
    diagnostics.warn(
      'LW_APP_SPECIAL_NAME',
      `${file.name}: ${problem.why}${meant ? `: did you mean ${meant}?` : ''}; not served until it is renamed, or named without the emoji (docs/conventions.md lists the special names)`,
      file.path,
    );
  }
}
