/**
 * Reading YAML within bounds (docs/security.md, "Bounds on building an app"). An alias (`*name`)
 * repeats the value of its anchor, so a few lines of aliases of aliases stand for billions of
 * values (a "YAML bomb"). Every value Laneway takes out of a YAML document goes through `yamlToJS`,
 * which expands at most YAML_MAX_ALIASES aliases' worth (the yaml package's `maxAliasCount`) and
 * answers where the document went past it, for a located error, instead of throwing. Files read as
 * syntax trees (models, forms, users…) never expand aliases: a node's `toJSON()` without a
 * document leaves an alias as it is.
 */
import { visit, type Document, type ToJSOptions } from 'yaml';

/** How many aliases' worth of values one document may expand to (also the yaml package's default). */
export const YAML_MAX_ALIASES = 100;

const LIMITS: ToJSOptions = { maxAliasCount: YAML_MAX_ALIASES };

/** The value of a parsed document (without errors), or what stopped it: a message and the offset of the first alias. */
export function yamlToJS(doc: Document): { value: unknown } | { error: string; offset: number } {
  try {
    return { value: doc.toJS(LIMITS) };
  } catch (err) {
    let offset = 0;
    visit(doc, {
      Alias(_, node) {
        offset = node.range?.[0] ?? 0;
        return visit.BREAK;
      },
    });
    const message = (err as Error).message;
    const bomb = /excessive alias count/i.test(message);
    return {
      error: bomb
        ? `YAML: its aliases (*name) stand for more values than Laneway expands (at most ${YAML_MAX_ALIASES} aliases' worth in one file): write the values out, or repeat them with fewer aliases`
        : `YAML: ${message.split('\n')[0]}`,
      offset,
    };
  }
}
