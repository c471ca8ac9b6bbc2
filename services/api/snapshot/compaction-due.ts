import type { BlobInfo, KvStatus } from '../../../shared/bus/bus.ts';
import { blobMatchesBucket, parseSnapshotBlobMetadata } from '../../../shared/snapshot/snapshot-blob.ts';

export interface CompactionPolicy {
  /** Changes (KV revisions) since the blob that make it due at once: they bound a starting redirector's catch-up. */
  afterChanges: number;
  /** A blob with any change after it is replaced once it is this old, so catch-ups stay short when changes trickle. */
  maxAgeMs: number;
}

/** Why the compacted snapshot should be rewritten now, or null when it need not be. */
export function compactionDue(status: KvStatus, blob: BlobInfo | null, policy: CompactionPolicy, now = Date.now()): string | null {
  if (status.revision === 0) return null; // a bucket never written: nothing to compact
  const meta = blob && parseSnapshotBlobMetadata(blob.metadata);
  if (!meta) return blob ? 'the compacted snapshot is in an unknown format' : 'there is no compacted snapshot';
  if (!blobMatchesBucket(meta, status)) return 'the snapshot bucket was recreated';
  const changes = status.revision - meta.revision;
  if (changes >= policy.afterChanges) return `${changes} changes since the compacted snapshot`;
  if (changes > 0 && now - blob!.modifiedAt >= policy.maxAgeMs) return `${changes} changes and the compacted snapshot is ${Math.round((now - blob!.modifiedAt) / 1000)} s old`;
  return null;
}
