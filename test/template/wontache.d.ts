// Types for the parts of wontache (a reference Mustache implementation, dev dependency) that the
// differential tests use; the package ships none.
declare module 'wontache' {
  interface Template {
    (data: unknown, options?: { partials?: Record<string, Template> }): string;
  }
  export default function mustache(source: string): Template;
}
