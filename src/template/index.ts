/**
 * Laneway's Mustache engine.
 *
 * - `compile` is plain Mustache (the official spec with inheritance, dynamic names and lambdas):
 *   the package's public `laneway/template` API.
 * - `compileView` compiles a Laneway view (marker line, pragmas, imports, partials, layouts) and
 *   reports problems to the load's DiagnosticList.
 */
export { compile, TemplateSyntaxError, type CompileOptions, type Template } from './plain.js';
export {
  compileView,
  isTemplate,
  markerEnd,
  TEMPLATE_MARKER,
  type CompiledView,
  type RenderInput,
  type RenderOutput,
  type TemplateFile,
  type ViewCompileOptions,
  type ViewRecords,
  type ViewRecordType,
  ViewRenderError,
} from './view.js';
export { escapeHtml, RenderError } from './runtime.js';
export {
  walkTemplate,
  type BlockNode,
  type Expr,
  type LiteralExpr,
  type Node,
  type ParentNode,
  type PartialNode,
  type PathExpr,
  type PragmaNode,
  type SectionNode,
  type TextNode,
  type VarNode,
} from './ast.js';
