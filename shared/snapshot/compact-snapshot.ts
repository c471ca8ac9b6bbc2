import type { BlobStore, KvBucket } from '../bus/bus.ts';
import { SNAPSHOT_BLOB_NAME, SnapshotFrameWriter, snapshotBlobMetadata, type SnapshotBlobMeta } from './snapshot-blob.ts';
import { SnapshotSegmentWriter } from './snapshot-segments.ts';

export interface CompactionResult extends SnapshotBlobMeta {
  bytes: number;
  ms: number;
}

/**
 * Writes the compacted snapshot: scans the snapshot bucket and streams its entries,
 * in compressed segments (snapshot-segments.ts), into the blob store, which replaces the previous blob only
 * once the new one is whole. Memory stays at a scan batch, a block and a few pieces
 * in flight, whatever the bucket holds; compression runs on the thread pool.
 *
 * `keepGoing` is asked between batches (renew a lease there, notice a shutdown); when
 * it answers false the compaction throws and the previous blob stays.
 */
export async function compactSnapshot(deps: { kv: KvBucket; blobs: BlobStore; keepGoing?: () => Promise<boolean> }): Promise<CompactionResult> {
  const started = performance.now();
  const { generation } = await deps.kv.status();
  // The highest revision scanned: by scan()'s invariant, every key's latest entry up to
  // it is in the blob (deletes are left out: a redirector starts empty).
  let revision = 0;
  const segments = new SnapshotSegmentWriter();

  async function* pieces(): AsyncGenerator<Uint8Array> {
    const writer = new SnapshotFrameWriter();
    for await (const batch of deps.kv.scan()) {
      for (const entry of batch) {
        if (entry.revision > revision) revision = entry.revision;
        if (entry.value === null) continue;
        for (const frame of await segments.add(entry.value)) yield* writer.add(frame);
      }
      if (deps.keepGoing && !(await deps.keepGoing())) throw new Error('snapshot compaction abandoned (lease lost or stopping)');
    }
    for (const frame of await segments.finish()) yield* writer.add(frame);
    const last = writer.finish();
    if (last) yield last;
  }

  const info = await deps.blobs.put(SNAPSHOT_BLOB_NAME, pieces(), () => snapshotBlobMetadata({ revision, generation, entries: segments.entries }));
  return { revision, generation, entries: segments.entries, bytes: info.size, ms: performance.now() - started };
}
