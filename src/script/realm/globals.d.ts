// What the realm's code (the .js files of this folder) sees besides the realm's own intrinsics:
// the host values realm.ts passes to the realm's function, and the V8 hook it sets.
declare const host: import('../realm-host.js').RealmHost;

interface ErrorConstructor {
  /** V8's stack trace formatter (50-freeze.js sets it: traces name only the script's frames). */
  prepareStackTrace?: (error: Error, frames: Array<{ getFileName(): string | undefined; getLineNumber(): number | null; getColumnNumber(): number | null }>) => string;
}

// A hierarchy value's app is a non-enumerable, read-only property (41-models.js defines it).
interface Hierarchy { readonly app: App }

// Set on a record's state once it is removed, or written for the first time (41-models.js).
interface IState { wasStored?: boolean }

// The host's side of the model channel (41-models.js App#ch): its methods, as bridges.
type HostChannel = import('../channel.js').HostChannel;
// The plain data an app's models are built from (41-models.js App), and the layouts of rows and writes.
type ModelsDescriptor = import('../channel.js').ModelsDescriptor;
type WriteOp = import('../records.js').WriteOp;
