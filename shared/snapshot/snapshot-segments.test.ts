import { describe, expect, it } from 'vitest';
import { makeLink } from '../routing/fixtures.ts';
import { compileLink } from '../routing/index.ts';
import { decompressBlock } from './snapshot-blocks.ts';
import { encodeSnapshotEntry, type SnapshotEntryHeader } from './snapshot-entry.ts';
import { SnapshotBlobError } from './snapshot-blob-error.ts';
import { SnapshotSegmentReader, SnapshotSegmentWriter } from './snapshot-segments.ts';

const decode = (b: Uint8Array) => new TextDecoder().decode(b);
const link = (i: number) => compileLink(makeLink({ id: `link_s${i}`, shortCode: `s${i}`, destinationUrl: `https://example.com/${i}/${'p'.repeat(i % 400)}` }), [], []);

async function framesOf(wires: Uint8Array[]): Promise<{ frames: Uint8Array[]; entries: number }> {
  const writer = new SnapshotSegmentWriter();
  const frames: Uint8Array[] = [];
  for (const wire of wires) frames.push(...(await writer.add(wire)));
  frames.push(...(await writer.finish()));
  return { frames, entries: writer.entries };
}

function readAll(frames: Uint8Array[]) {
  const reader = new SnapshotSegmentReader();
  const got: Array<{ header: SnapshotEntryHeader; json: string }> = [];
  for (const frame of frames) reader.push(frame, (header, block, start, end) => got.push({ header, json: decode(decompressBlock(block).subarray(start, end)) }));
  reader.end();
  return { got, reader };
}

describe('snapshot segments', () => {
  it('give back every entry header and its link JSON, over many blocks and segments', async () => {
    const count = 3_000; // > 16 blocks of 32 KiB: several segments
    const wires = Array.from({ length: count }, (_, i) => encodeSnapshotEntry({ version: i + 1, linkId: `link_s${i}`, link: i % 97 === 0 ? null : link(i) }));
    const { frames, entries } = await framesOf(wires);
    expect(entries).toBe(count);
    expect(frames.filter((f) => f[0] === 2).length).toBeGreaterThan(1);
    const { got, reader } = readAll(frames);
    expect(reader.entries).toBe(count);
    expect(reader.skipped).toBe(0);
    for (let i = 0; i < count; i++) {
      expect(got[i]!.header).toMatchObject({ version: i + 1, linkId: `link_s${i}`, shortCode: i % 97 === 0 ? null : `s${i}` });
      expect(got[i]!.json === '' ? null : JSON.parse(got[i]!.json)).toEqual(i % 97 === 0 ? null : JSON.parse(JSON.stringify(link(i))));
    }
  });

  it('re-encodes entries of the older single-document form, and leaves out bytes that are no entry', async () => {
    const legacy = new TextEncoder().encode(JSON.stringify({ version: 4, linkId: 'link_s4', link: link(4) }));
    const { frames, entries } = await framesOf([legacy, new TextEncoder().encode('garbage'), encodeSnapshotEntry({ version: 5, linkId: 'link_s5', link: link(5) })]);
    expect(entries).toBe(2);
    const { got } = readAll(frames);
    expect(got.map((g) => g.header.linkId)).toEqual(['link_s4', 'link_s5']);
    expect(JSON.parse(got[0]!.json)).toEqual(JSON.parse(JSON.stringify(link(4))));
  });

  it('a blob cut before an index, an unknown frame or an index that does not decompress is a SnapshotBlobError with its code', async () => {
    const { frames } = await framesOf([encodeSnapshotEntry({ version: 1, linkId: 'link_s1', link: link(1) })]);
    const failure = (read: () => unknown) => {
      try {
        read();
      } catch (err) {
        if (err instanceof SnapshotBlobError) return { code: err.code, message: err.message };
        throw err;
      }
      return null;
    };
    expect(failure(() => readAll(frames.slice(0, -1)))).toEqual({ code: 'SNAPSHOT_BLOB_TRUNCATED', message: expect.stringMatching(/without their index/) });
    expect(failure(() => readAll([Uint8Array.of(9, 1, 2)]))).toEqual({ code: 'SNAPSHOT_BLOB_CORRUPT', message: expect.stringMatching(/unknown snapshot frame type 9/) });
    const index = frames.at(-1)!;
    const damaged = Uint8Array.of(index[0]!, ...Buffer.from('no brotli stream at all'));
    expect(failure(() => readAll([...frames.slice(0, -1), damaged]))).toEqual({ code: 'SNAPSHOT_BLOB_CORRUPT', message: expect.stringMatching(/index does not decompress/) });
  });
});
