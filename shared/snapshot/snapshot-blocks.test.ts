import { describe, expect, it } from 'vitest';
import { BLOCK_BYTES, compressBlock, decompressBlock, SnapshotBlockBuilder } from './snapshot-blocks.ts';
import { SnapshotFrameReader } from './snapshot-blob.ts';

const encode = (s: string) => new TextEncoder().encode(s);
const decode = (b: Uint8Array) => new TextDecoder().decode(b);

describe('snapshot blocks', () => {
  it('hold whole entries only, close once full, and compress to what they held', async () => {
    const entries = Array.from({ length: 500 }, (_, i) => `{"version":${i}}\n${'z'.repeat(i * 7)}`);
    const builder = new SnapshotBlockBuilder();
    const blocks = [...entries.map((e) => builder.add(encode(e))), builder.finish()].filter((b): b is Uint8Array => b !== null);
    expect(blocks.slice(0, -1).every((b) => b.length >= BLOCK_BYTES)).toBe(true);
    expect(builder.finish()).toBeNull();
    const read: string[] = [];
    for (const block of blocks) {
      const compressed = await compressBlock(block);
      expect(compressed.length).toBeLessThan(block.length / 4);
      const reader = new SnapshotFrameReader();
      reader.push(decompressBlock(compressed), (frame) => read.push(decode(frame)));
      reader.end(); // no entry runs past its block
    }
    expect(read).toEqual(entries);
  });
});
