/**
 * The parse tree of one Mustache file, as the parser builds it and the code generator reads it.
 *
 * Offsets (`start`, `end`) are UTF-16 offsets into the file's whole source text (marker line
 * included), so `locate(source, offset)` gives the line and column shown in diagnostics.
 * Standalone lines are already removed from text nodes, and block contents are already
 * de-indented, so a renderer only concatenates what it finds here.
 *
 * Indentation (partials and blocks used standalone): a node with `bol` starts a line, and a text
 * node lists in `marks` the indexes of `text` where a later line starts; the renderer writes the
 * current indentation there. This is how `{{> part}}` indented by two spaces indents every line
 * of the partial without re-parsing it.
 */

/** A tag expression: a path with optional call arguments, or a literal. */
export type Expr = PathExpr | LiteralExpr;

export interface PathExpr {
  kind: 'path';
  /** First segment: a name, `this` (also written `.`), `$first`, `$last`, `x$first`, `x$last`. */
  root: string;
  /** Further dotted segments. */
  segs: string[];
  /** Positional call arguments of the last segment (views only). */
  args: Expr[];
  /** `k=v` arguments, passed as one object after the positional ones (views only). */
  named: Array<{ key: string; value: Expr }>;
  /** Offset of the expression in the file. */
  start: number;
  /** The source text of the path (without arguments), e.g. `article.get.content`. */
  text: string;
}

export interface LiteralExpr {
  kind: 'literal';
  value: string | number | boolean | null;
  start: number;
}

interface NodeBase {
  start: number;
  end: number;
  /** The node starts a line: the current indentation is written before it. */
  bol: boolean;
}

/** Literal template text. */
export interface TextNode extends NodeBase {
  type: 'text';
  text: string;
  /** Indexes into `text` where a new (non-empty) line starts. */
  marks: number[];
}

/**
 * How a value is escaped inside a JSON data block (`<script type="application/json">`), as the
 * page pass (src/csp) finds it: between quotes, as the body of a JSON string; elsewhere, as a
 * whole JSON value. Absent: HTML escaping.
 */
export type JsonEscape = 'json-string' | 'json-value';

/** `{{x}}` (escaped), `{{{x}}}` / `{{&x}}` (raw). */
export interface VarNode extends NodeBase {
  type: 'var';
  expr: Expr;
  raw: boolean;
  escape?: JsonEscape;
  /**
   * Set by the page pass for `{{{input.attributes}}}` between the attributes of a start tag (a
   * form control's attribute text): only web-safe text made by Laneway is printed there.
   */
  attributes?: true;
}

/** `{{#x}}…{{/x}}` or `{{^x}}…{{/x}}`, with the view extensions. */
export interface SectionNode extends NodeBase {
  type: 'section';
  inverted: boolean;
  /** The name the closing tag repeats (`x`, `Note.list`, `$any`). */
  name: string;
  /** The value tested or iterated (absent for `$any` / `$all`). */
  expr?: Expr;
  /** `{{#$any a b}}` / `{{#$all a b}}`. */
  test?: { op: 'any' | 'all'; exprs: Expr[] };
  /** `as alias`. */
  alias?: string;
  /** `by N` (1..10). */
  by?: number;
  body: Node[];
  /** The unprocessed text between the tags (what a lambda receives). */
  rawBody: string;
  /** Delimiters in effect at the opening tag (a lambda's result is parsed with them). */
  delims: [string, string];
}

/** `{{> name}}`; `{{>*expr}}` names the partial dynamically. */
export interface PartialNode extends NodeBase {
  type: 'partial';
  name: string;
  dynamic?: Expr;
  /** Standalone tag: the indentation before it (re-applied to every line). Otherwise null. */
  indent: string | null;
}

/** `{{< parent}}{{$block}}…{{/block}}{{/parent}}`. */
export interface ParentNode extends NodeBase {
  type: 'parent';
  name: string;
  dynamic?: Expr;
  indent: string | null;
  /** The block overrides passed to the parent. */
  blocks: BlockNode[];
}

/** `{{$name}}default{{/name}}`: a block site, or (inside a parent) an override. */
export interface BlockNode extends NodeBase {
  type: 'block';
  name: string;
  /** Offset of the block name in the opening tag. */
  nameStart: number;
  /** Indentation the content is rendered with (standalone or intrinsic), or null. */
  indent: string | null;
  body: Node[];
  /** The content starts mid-line but must be indented when rendered with indentation. */
  lead: boolean;
}

/** An output pragma: `{{%year}}`, `{{% show x}}`, `{{% choose-string m x}}`, `{{% lorem-…}}`. */
export interface PragmaNode extends NodeBase {
  type: 'pragma';
  name: 'year' | 'show' | 'choose-string' | 'lorem-title' | 'lorem-paragraph';
  expr?: Expr;
  /** The choose-string map name. */
  map?: string;
  /** choose-string inside a JSON data block (see VarNode). */
  escape?: JsonEscape;
}

export type Node = TextNode | VarNode | SectionNode | PartialNode | ParentNode | BlockNode | PragmaNode;

/** Calls `visit` for every node of `nodes` in source order, descending into sections, parents and blocks. */
export function walkTemplate(nodes: readonly Node[], visit: (node: Node, depth: number) => void, depth = 0): void {
  for (const node of nodes) {
    visit(node, depth);
    if (node.type === 'section' || node.type === 'block') walkTemplate(node.body, visit, depth + 1);
    else if (node.type === 'parent') walkTemplate(node.blocks, visit, depth + 1);
  }
}
