import { describe, expect, it } from 'vitest';
import { parseSnapshotBlobMetadata, snapshotBlobMetadata, SnapshotFrameReader, SnapshotFrameWriter } from './snapshot-blob.ts';

const encode = (s: string) => new TextEncoder().encode(s);
const decode = (b: Uint8Array) => new TextDecoder().decode(b);

function written(entries: Uint8Array[]): Uint8Array {
  const writer = new SnapshotFrameWriter();
  const pieces = entries.flatMap((e) => writer.add(e));
  const last = writer.finish();
  if (last) pieces.push(last);
  const all = new Uint8Array(pieces.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of pieces) (all.set(p, at), (at += p.length));
  return all;
}

function read(data: Uint8Array, chunkSizes: number[]): string[] {
  const reader = new SnapshotFrameReader();
  const out: string[] = [];
  let at = 0;
  for (let i = 0; at < data.length; i++) {
    const size = chunkSizes[i % chunkSizes.length]!;
    reader.push(data.subarray(at, at + size), (frame) => out.push(decode(frame)));
    at += size;
  }
  reader.end();
  expect(reader.frames).toBe(out.length);
  return out;
}

describe('snapshot blob frames', () => {
  // Entries hold a newline (header line + link JSON): framing is by length, never by separator.
  const entries = ['{"version":1}\n{"a":1}', '', '{"version":2}\n', 'x'.repeat(20_000), 'é\nü', ...Array.from({ length: 2_000 }, (_, i) => `{"version":${i}}\n${'y'.repeat(i % 300)}`)];

  it('reads back every entry whatever the chunk boundaries (inside the length, the body, between frames)', () => {
    const data = written(entries.map(encode));
    for (const sizes of [[data.length], [1], [2, 3, 5], [4], [7, 4096], [262_144], [65_536, 3]]) {
      expect(read(data, sizes)).toEqual(entries);
    }
  });

  it('writes pieces of 256 KiB, a new buffer each, the last one shorter', () => {
    const writer = new SnapshotFrameWriter();
    const pieces = Array.from({ length: 1_000 }, () => writer.add(new Uint8Array(1_000).fill(7))).flat();
    const last = writer.finish()!;
    expect(pieces.every((p) => p.length === 256 * 1024)).toBe(true);
    expect(new Set(pieces.map((p) => p.buffer)).size).toBe(pieces.length);
    expect(pieces.length * 256 * 1024 + last.length).toBe(1_000 * 1_004);
    expect(writer.finish()).toBeNull();
  });

  it('a blob cut inside a frame is an error, not a silently shorter snapshot', () => {
    const data = written([encode('first'), encode('second entry')]);
    const reader = new SnapshotFrameReader();
    const seen: string[] = [];
    reader.push(data.subarray(0, data.length - 3), (f) => seen.push(decode(f)));
    expect(seen).toEqual(['first']);
    expect(() => reader.end()).toThrow(expect.objectContaining({ name: 'SnapshotBlobError', code: 'SNAPSHOT_BLOB_TRUNCATED', message: expect.stringMatching(/inside a frame/) }));
  });

  it('metadata round-trips; other formats and broken fields read as unusable', () => {
    const meta = { revision: 123, generation: '2026-01-01T00:00:00Z', entries: 45 };
    expect(parseSnapshotBlobMetadata(snapshotBlobMetadata(meta))).toEqual(meta);
    expect(parseSnapshotBlobMetadata({ ...snapshotBlobMetadata(meta), format: 'other/1' })).toBeNull();
    expect(parseSnapshotBlobMetadata({ ...snapshotBlobMetadata(meta), revision: 'x' })).toBeNull();
    expect(parseSnapshotBlobMetadata({})).toBeNull();
  });
});
