/**
 * The compacted snapshot: every current entry of the snapshot KV bucket, in their
 * exact wire bytes (snapshot-entry.ts), as one blob. A redirector loads it (a few
 * hundred large messages) and then watches the bucket from the revision after the
 * one it covers, instead of replaying a million single-entry messages.
 *
 * Layout: a sequence of frames (a 4-byte big-endian length, then that many bytes),
 * running across the blob's chunks: compressed blocks of entries and the indexes of
 * their headers (snapshot-segments.ts). Inside a block, entries are framed the same
 * way (they contain a newline, so a separator cannot delimit them).
 * What the blob covers is in its metadata (SnapshotBlobMeta).
 */
import { SnapshotBlobError } from './snapshot-blob-error.ts';

/** The blob's name in blobBuckets.snapshot. */
export const SNAPSHOT_BLOB_NAME = 'snapshot';
const FORMAT = 'linkroute-snapshot-segments/1';
/** The length before each frame: 4 bytes, big-endian. */
export const FRAME_LENGTH_BYTES = 4;
/** Pieces handed to the blob store: its chunk size, so it never has to split or join them. */
const PIECE_BYTES = 256 * 1024;

export interface SnapshotBlobMeta {
  /**
   * For every key, its latest entry up to this KV revision is in the blob (or was a
   * delete). Anything written later has a higher revision: watching from revision + 1
   * completes the state. A lower value than the truth is safe (more is replayed); a
   * higher one would lose updates.
   */
  revision: number;
  /** KvStatus.generation of the bucket read: revisions of another incarnation mean nothing. */
  generation: string;
  /** Entries in the blob: a load that read fewer was cut short. */
  entries: number;
}

export function snapshotBlobMetadata(meta: SnapshotBlobMeta): Record<string, string> {
  return { format: FORMAT, revision: String(meta.revision), generation: meta.generation, entries: String(meta.entries) };
}

/** null for a blob this code cannot read (another format, missing fields). */
export function parseSnapshotBlobMetadata(metadata: Record<string, string>): SnapshotBlobMeta | null {
  const revision = Number(metadata.revision);
  const entries = Number(metadata.entries);
  if (metadata.format !== FORMAT || !metadata.generation || !Number.isSafeInteger(revision) || revision < 0 || !Number.isSafeInteger(entries) || entries < 0) return null;
  return { revision, generation: metadata.generation, entries };
}

/**
 * Whether a blob describes the bucket as it is now: the same incarnation, and no
 * revision past the bucket's last one (which would mean it was recreated since).
 */
export function blobMatchesBucket(meta: SnapshotBlobMeta, bucket: { generation: string; revision: number }): boolean {
  return meta.generation === bucket.generation && meta.revision <= bucket.revision;
}

/** Packs byte strings (compressed blocks) into frames, in pieces of PIECE_BYTES (the last one shorter). */
export class SnapshotFrameWriter {
  private piece = new Uint8Array(PIECE_BYTES);
  private used = 0;
  private readonly full: Uint8Array[] = [];

  /** Adds one frame; returns the pieces it completed (to be written out before more are added). */
  add(frame: Uint8Array): Uint8Array[] {
    const length = new Uint8Array(FRAME_LENGTH_BYTES);
    new DataView(length.buffer).setUint32(0, frame.length);
    this.copy(length);
    this.copy(frame);
    return this.full.splice(0);
  }

  /** The last, partial piece (null when empty). */
  finish(): Uint8Array | null {
    if (this.used === 0) return null;
    const last = this.piece.subarray(0, this.used);
    this.piece = new Uint8Array(PIECE_BYTES);
    this.used = 0;
    return last;
  }

  private copy(bytes: Uint8Array): void {
    let from = 0;
    while (from < bytes.length) {
      const n = Math.min(bytes.length - from, PIECE_BYTES - this.used);
      this.piece.set(bytes.subarray(from, from + n), this.used);
      this.used += n;
      from += n;
      if (this.used === PIECE_BYTES) {
        // A new buffer per piece: the blob store may still be sending the last one.
        this.full.push(this.piece);
        this.piece = new Uint8Array(PIECE_BYTES);
        this.used = 0;
      }
    }
  }
}

/**
 * Splits chunks back into frames, synchronously as each chunk arrives. A frame inside
 * one chunk is passed as a view of it (no copy); one running across chunks is joined.
 * `onFrame` must not keep the view (decoding copies what it keeps).
 */
export class SnapshotFrameReader {
  /** Bytes of an incomplete frame (length included) carried to the next chunk. */
  private carry: Uint8Array = new Uint8Array(0);
  frames = 0;

  push(chunk: Uint8Array, onFrame: (frame: Uint8Array) => void): void {
    let at = 0;
    if (this.carry.length > 0) {
      // Join only the frame that runs across, not the whole chunk.
      at = this.completeCarried(chunk, onFrame);
      if (at < 0) return;
    }
    const view = new DataView(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    while (chunk.length - at >= FRAME_LENGTH_BYTES) {
      const length = view.getUint32(at);
      if (chunk.length - at - FRAME_LENGTH_BYTES < length) break;
      onFrame(chunk.subarray(at + FRAME_LENGTH_BYTES, at + FRAME_LENGTH_BYTES + length));
      this.frames++;
      at += FRAME_LENGTH_BYTES + length;
    }
    // Copied: the carry must not pin a whole chunk for the sake of a few bytes.
    this.carry = chunk.slice(at);
  }

  /** Feeds the carried frame from the chunk: the offset after it, or -1 when the chunk did not complete it (all carried). */
  private completeCarried(chunk: Uint8Array, onFrame: (frame: Uint8Array) => void): number {
    const lengthFromChunk = Math.max(0, FRAME_LENGTH_BYTES - this.carry.length);
    if (chunk.length < lengthFromChunk) {
      this.carry = concat(this.carry, chunk);
      return -1;
    }
    const header = concat(this.carry.subarray(0, FRAME_LENGTH_BYTES), chunk.subarray(0, lengthFromChunk));
    const total = FRAME_LENGTH_BYTES + new DataView(header.buffer, header.byteOffset, FRAME_LENGTH_BYTES).getUint32(0);
    const needed = total - this.carry.length;
    if (chunk.length < needed) {
      this.carry = concat(this.carry, chunk);
      return -1;
    }
    const frame = concat(this.carry, chunk.subarray(0, needed));
    this.carry = new Uint8Array(0);
    onFrame(frame.subarray(FRAME_LENGTH_BYTES));
    this.frames++;
    return needed;
  }

  /** Throws when the data ended inside a frame (a truncated blob). */
  end(): void {
    if (this.carry.length > 0) throw new SnapshotBlobError('SNAPSHOT_BLOB_TRUNCATED', `snapshot blob ends inside a frame (${this.carry.length} bytes left over)`);
  }
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}
