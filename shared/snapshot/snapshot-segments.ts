import { FRAME_LENGTH_BYTES } from './snapshot-blob.ts';
import { SnapshotBlobError } from './snapshot-blob-error.ts';
import { compressBlock, decompressBlock, SnapshotBlockBuilder } from './snapshot-blocks.ts';
import { decodeSnapshotEntry, decodeSnapshotEntryHeader, encodeSnapshotEntry, isUnreadableEntry, type SnapshotEntryHeader } from './snapshot-entry.ts';

/**
 * The compacted snapshot's frames come in segments: up to BLOCKS_PER_SEGMENT block
 * frames (compressed entries, snapshot-blocks.ts), then one index frame listing, for
 * every entry of those blocks, its header line (the entry's own first line, byte for
 * byte) and where its link's JSON lies in its block. A redirector decompresses only
 * the indexes to load (a tenth of the bytes) and keeps the blocks as they came.
 *
 * A frame starts with its type byte. An index, decompressed, is a sequence of records:
 * block number in the segment (u32), link JSON start and end in the decompressed block
 * (u32 each, big-endian), then the header line including its newline.
 */

const BLOCK_FRAME = 1;
const INDEX_FRAME = 2;
/** 16 blocks of 32 KiB: an index of ~600 entries, decompressed in one call. */
const BLOCKS_PER_SEGMENT = 16;
const RECORD_FIELDS_BYTES = 12;
const NEWLINE = 10;

/** Turns entries into segment frames (the compactor's side). */
export class SnapshotSegmentWriter {
  private readonly block = new SnapshotBlockBuilder();
  private blocksInSegment = 0;
  private index: Uint8Array[] = [];
  /** Entries written (an entry no reader could decode is left out, not counted). */
  entries = 0;

  /** Adds an entry; resolves with the frames it completed, in order. */
  async add(wire: Uint8Array): Promise<Uint8Array[]> {
    const entry = currentForm(wire);
    if (entry === null) return [];
    const { bytes: data, linkStart } = entry;
    // Where the entry will sit in the block's frames: after its length.
    const at = this.block.size + FRAME_LENGTH_BYTES;
    const record = new Uint8Array(RECORD_FIELDS_BYTES + linkStart);
    const view = new DataView(record.buffer);
    view.setUint32(0, this.blocksInSegment);
    view.setUint32(4, at + linkStart);
    view.setUint32(8, at + data.length);
    record.set(data.subarray(0, linkStart), RECORD_FIELDS_BYTES);
    this.index.push(record);
    this.entries++;
    const full = this.block.add(data);
    return full ? this.closeBlock(full, false) : [];
  }

  /** The frames of what is left. */
  async finish(): Promise<Uint8Array[]> {
    const rest = this.block.finish();
    if (rest) return this.closeBlock(rest, true);
    return this.index.length > 0 ? [await this.indexFrame()] : [];
  }

  private async closeBlock(frames: Uint8Array, last: boolean): Promise<Uint8Array[]> {
    const out = [typed(BLOCK_FRAME, await compressBlock(frames))];
    this.blocksInSegment++;
    if (last || this.blocksInSegment === BLOCKS_PER_SEGMENT) out.push(await this.indexFrame());
    return out;
  }

  private async indexFrame(): Promise<Uint8Array> {
    const plain = concat(this.index);
    this.index = [];
    this.blocksInSegment = 0;
    return typed(INDEX_FRAME, await compressBlock(plain));
  }
}

/** What a segment reader hands over per entry: its header, and its link's JSON at [start, end) of `block` decompressed. */
export type OnPackedEntry = (header: SnapshotEntryHeader, block: Uint8Array, start: number, end: number) => void;

/** Reads segment frames back (a redirector's side), without decompressing blocks. */
export class SnapshotSegmentReader {
  private blocks: Uint8Array[] = [];
  entries = 0;
  /** Entries whose header could not be read (skipped, as the watch skips bad entries). */
  skipped = 0;

  push(frame: Uint8Array, onEntry: OnPackedEntry): void {
    const body = frame.subarray(1);
    if (frame[0] === BLOCK_FRAME) {
      // A copy: the store keeps it, and must not keep the whole chunk it arrived in.
      this.blocks.push(body.slice());
    } else if (frame[0] === INDEX_FRAME) {
      this.readIndex(decompressIndex(body), onEntry);
      this.blocks = [];
    } else {
      throw new SnapshotBlobError('SNAPSHOT_BLOB_CORRUPT', `unknown snapshot frame type ${frame[0]}`);
    }
  }

  /** Throws when blocks came without their index (a blob cut short). */
  end(): void {
    if (this.blocks.length > 0) throw new SnapshotBlobError('SNAPSHOT_BLOB_TRUNCATED', `${this.blocks.length} snapshot blocks without their index`);
  }

  private readIndex(index: Uint8Array, onEntry: OnPackedEntry): void {
    const view = new DataView(index.buffer, index.byteOffset, index.byteLength);
    let at = 0;
    while (at < index.length) {
      if (index.length - at < RECORD_FIELDS_BYTES) throw new SnapshotBlobError('SNAPSHOT_BLOB_CORRUPT', 'snapshot index ends inside a record');
      const block = this.blocks[view.getUint32(at)];
      const start = view.getUint32(at + 4);
      const end = view.getUint32(at + 8);
      if (block === undefined) throw new SnapshotBlobError('SNAPSHOT_BLOB_CORRUPT', 'snapshot index names a block it does not have');
      this.entries++;
      let decoded: ReturnType<typeof decodeSnapshotEntryHeader> = null;
      try {
        decoded = decodeSnapshotEntryHeader(index, at + RECORD_FIELDS_BYTES, index.length);
      } catch (err) {
        // Its line is not a header: skip to the next record.
        if (!isUnreadableEntry(err)) throw err;
      }
      if (decoded === null) {
        const newline = index.indexOf(NEWLINE, at + RECORD_FIELDS_BYTES);
        if (newline < 0) throw new SnapshotBlobError('SNAPSHOT_BLOB_CORRUPT', 'snapshot index ends inside a header line');
        this.skipped++;
        at = newline + 1;
        continue;
      }
      onEntry(decoded.header, block, start, end);
      at = decoded.linkStart;
    }
  }
}

/**
 * The entry with its header line, and where its link starts: as it is, or re-encoded
 * from the older single-document form. null for bytes that are no entry at all.
 */
function currentForm(wire: Uint8Array): { bytes: Uint8Array; linkStart: number } | null {
  try {
    const decoded = decodeSnapshotEntryHeader(wire);
    if (decoded) return { bytes: wire, linkStart: decoded.linkStart };
    const bytes = encodeSnapshotEntry(decodeSnapshotEntry(wire));
    return { bytes, linkStart: decodeSnapshotEntryHeader(bytes)!.linkStart };
  } catch (err) {
    if (isUnreadableEntry(err)) return null;
    throw err;
  }
}

/** An index frame's body, decompressed; bytes that are no brotli stream are a damaged blob. */
function decompressIndex(body: Uint8Array): Uint8Array {
  try {
    return decompressBlock(body);
  } catch (err) {
    // zlib's errors, and only they here, carry its errno: the data, not the code, is at fault.
    if (typeof (err as { errno?: unknown }).errno !== 'number') throw err;
    throw new SnapshotBlobError('SNAPSHOT_BLOB_CORRUPT', `snapshot index does not decompress: ${(err as Error).message}`);
  }
}

function typed(type: number, body: Uint8Array): Uint8Array {
  const frame = new Uint8Array(1 + body.length);
  frame[0] = type;
  frame.set(body, 1);
  return frame;
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
