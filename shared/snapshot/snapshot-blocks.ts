import { promisify } from 'node:util';
import { brotliCompress, brotliDecompressSync, constants } from 'node:zlib';
import { FRAME_LENGTH_BYTES } from './snapshot-blob.ts';

/**
 * The compacted snapshot's entries travel and rest in compressed blocks: frames of
 * whole entries (snapshot-blob.ts), about BLOCK_BYTES of them, brotli-compressed, each
 * decompressible on its own. Compressed, a million links cross the bus as a few dozen
 * MB instead of ~800 (nats.js receives ~150 MB/s here), and a redirector can keep
 * the blocks instead of each link's JSON text (~750 bytes a link, ~80 % of its memory)
 * and decompress a block only when one of its links is first used.
 */

/**
 * Frames per block, before compression. Larger compresses better; a link's first use
 * decompresses its whole block: measured on the bench's links, 32 KiB blocks compress
 * 20:1 and take ~30 µs to decompress, 64 KiB ones 24:1 and ~65 µs.
 */
export const BLOCK_BYTES = 32 * 1024;
/** Quality 3 compresses at ~250+ MB/s, within a few % of the ratio of slower levels on link JSON. */
const QUALITY = 3;
/** A 128 KiB window covers a block: a larger one only makes every decompression allocate more. */
const WINDOW_BITS = 17;

const compress = promisify(brotliCompress);

/**
 * A block (or an index, snapshot-segments.ts), decompressed. A redirector decompresses
 * a link's block each time one of its links is first served: no cache, as a cached
 * block would outlive young-generation GCs and pile up as external memory, which costs
 * full GCs of the whole store (measured: a WeakRef cache made cold lookups slower).
 */
export function decompressBlock(compressed: Uint8Array): Uint8Array {
  return brotliDecompressSync(compressed);
}

/** Compressed on the thread pool: the compactor's event loop keeps serving the API meanwhile. */
export function compressBlock(frames: Uint8Array): Promise<Uint8Array> {
  return compress(frames, {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: QUALITY,
      [constants.BROTLI_PARAM_LGWIN]: WINDOW_BITS,
      [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
      [constants.BROTLI_PARAM_SIZE_HINT]: frames.length,
    },
  });
}

/** Gathers entries as frames until a block is full. */
export class SnapshotBlockBuilder {
  private parts: Uint8Array[] = [];
  private bytes = 0;

  /** Bytes gathered so far: where the next entry's frame will start. */
  get size(): number {
    return this.bytes;
  }

  /** Adds one entry; returns the block's frames once it holds BLOCK_BYTES or more (whole entries only). */
  add(entry: Uint8Array): Uint8Array | null {
    const length = new Uint8Array(FRAME_LENGTH_BYTES);
    new DataView(length.buffer).setUint32(0, entry.length);
    this.parts.push(length, entry);
    this.bytes += FRAME_LENGTH_BYTES + entry.length;
    return this.bytes >= BLOCK_BYTES ? this.take() : null;
  }

  /** What is gathered (null when nothing is). */
  finish(): Uint8Array | null {
    return this.bytes > 0 ? this.take() : null;
  }

  private take(): Uint8Array {
    const block = new Uint8Array(this.bytes);
    let at = 0;
    for (const part of this.parts) {
      block.set(part, at);
      at += part.length;
    }
    this.parts = [];
    this.bytes = 0;
    return block;
  }
}
