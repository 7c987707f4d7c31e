/**
 * The mark of a fresh form view (src/forms/view.ts `freshFormView`): the view of a new form
 * instance, which differs from every other fresh view of the same form by its `id` only. Its value
 * is the object of field views shared by all of them. The template runtime renders a section over
 * such a view once and then puts each request's id into the markup (src/template/runtime.ts
 * "Fresh forms"; docs/architecture.md "Fresh forms in views").
 *
 * Not a registered symbol: nothing a script or a data file makes can carry it.
 */
export const FRESH_FORM: unique symbol = Symbol('laneway.freshForm');
