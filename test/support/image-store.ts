/** Reading an image store in tests: an upload's bytes whole (the server never reads one so). */
import type { ImageStore } from '../../src/images/index.js';

/** The bytes of the upload `id`, or undefined when the store has none (whole) under it. */
export async function readUpload(store: ImageStore, id: string): Promise<Buffer | undefined> {
  const upload = await store.openUpload(id);
  if (!upload) return undefined;
  const parts: Buffer[] = [];
  for await (const part of upload.read()) parts.push(part);
  return Buffer.concat(parts);
}
