import type { BlobInfo, BlobStore } from './bus.ts';

interface Stored {
  info: BlobInfo;
  pieces: Uint8Array[];
}

/**
 * Blobs inside one process. A put collects copies of every piece (the writer may
 * reuse its buffers) and swaps them in at the end; a read keeps the pieces it
 * started with, so a replace never disturbs it.
 */
export function memoryBlobStore(): BlobStore {
  const blobs = new Map<string, Stored>();
  return {
    async put(name, data, describe) {
      const pieces: Uint8Array[] = [];
      let size = 0;
      for await (const piece of data) {
        pieces.push(piece.slice());
        size += piece.length;
      }
      const metadata = typeof describe === 'function' ? describe() : describe;
      const info: BlobInfo = { name, size, modifiedAt: Date.now(), metadata: { ...metadata } };
      blobs.set(name, { info, pieces });
      return { ...info, metadata: { ...metadata } };
    },
    async info(name) {
      const stored = blobs.get(name);
      return stored ? { ...stored.info, metadata: { ...stored.info.metadata } } : null;
    },
    async get(name) {
      const stored = blobs.get(name);
      if (!stored) return null;
      async function* data(): AsyncGenerator<Uint8Array> {
        for (const piece of stored!.pieces) yield piece;
      }
      return { info: { ...stored.info, metadata: { ...stored.info.metadata } }, data: data() };
    },
    async delete(name) {
      blobs.delete(name);
    },
  };
}
