import { BlobReadError } from '../../../shared/bus/blob-read-error.ts';
import type { BlobStore, KvBucket } from '../../../shared/bus/bus.ts';
import { isNatsFailure, isUnreachable } from '../../../shared/bus/jetstream-errors.ts';
import { errorFields, type Logger } from '../../../shared/logger.ts';
import { blobMatchesBucket, parseSnapshotBlobMetadata, SNAPSHOT_BLOB_NAME, SnapshotFrameReader } from '../../../shared/snapshot/snapshot-blob.ts';
import { SnapshotBlobError } from '../../../shared/snapshot/snapshot-blob-error.ts';
import { SnapshotSegmentReader, type OnPackedEntry } from '../../../shared/snapshot/snapshot-segments.ts';
import type { SnapshotStore } from './snapshot-store.ts';

/** A read that failed because the blob was replaced under it is tried again with the new one, this often. */
const READS = 2;

/**
 * Applies the compacted snapshot to the store as its chunks arrive (never the whole
 * blob in memory next to the store it fills). Only the indexes of entry headers are
 * decompressed; the blocks of entries are kept as they came, and the store decodes a
 * link from its block when the link is first served.
 *
 * Returns the KV revision it covers: the caller watches the bucket from the next one.
 * Returns 0 when there is no usable blob (none yet, another format, made from another
 * incarnation of the bucket, cut short or corrupt): the caller replays the whole
 * bucket. The store must be empty (a starting redirector): a failed read empties it
 * again, as a damaged block would otherwise stay behind the same versions replayed.
 */
export async function loadSnapshotBlob(deps: { kv: KvBucket; openBlobs: () => Promise<BlobStore>; store: SnapshotStore; logger: Logger }): Promise<number> {
  const { logger } = deps;
  let blobs: BlobStore | null = null;
  for (let read = 1; ; read++) {
    const started = performance.now();
    let modifiedAt: number | null = null;
    try {
      blobs ??= await deps.openBlobs();
      const [blob, status] = await Promise.all([blobs.get(SNAPSHOT_BLOB_NAME), deps.kv.status()]);
      if (!blob) {
        logger.info('no compacted snapshot: replaying the snapshot bucket');
        return 0;
      }
      modifiedAt = blob.info.modifiedAt;
      const meta = parseSnapshotBlobMetadata(blob.info.metadata);
      if (!meta || !blobMatchesBucket(meta, status)) {
        logger.warn('compacted snapshot does not match the snapshot bucket: replaying the bucket', { metadata: blob.info.metadata, bucketRevision: status.revision });
        return 0;
      }
      const { entries, skipped } = await applyBlocks(blob.data, deps.store);
      if (entries !== meta.entries) throw new SnapshotBlobError('SNAPSHOT_BLOB_CORRUPT', `read ${entries} of ${meta.entries} entries`);
      logger.info('compacted snapshot loaded', { entries, skipped, revision: meta.revision, bytes: blob.info.size, ms: Math.round(performance.now() - started) });
      return meta.revision;
    } catch (err) {
      if (!isUnusableRead(err)) throw err;
      deps.store.clear();
      const replaced = modifiedAt !== null && blobs !== null && (await blobInfoIfReachable(blobs))?.modifiedAt !== modifiedAt;
      if (replaced && read < READS) {
        logger.info('compacted snapshot replaced while read: reading the new one', errorFields(err));
        continue;
      }
      logger.warn('compacted snapshot unreadable: replaying the snapshot bucket', errorFields(err));
      return 0;
    }
  }
}

/**
 * What makes this read of the blob unusable, a replay of the bucket being the way
 * then: its bytes (cut short, damaged, replaced during the read) or NATS failing the
 * read. Anything else is a bug, and fails the start.
 */
function isUnusableRead(err: unknown): boolean {
  return err instanceof SnapshotBlobError || err instanceof BlobReadError || isNatsFailure(err);
}

/** Indexes every entry into the store, leaving the blocks compressed; counts entries (skipped ones included). */
async function applyBlocks(data: AsyncIterable<Uint8Array>, store: SnapshotStore): Promise<{ entries: number; skipped: number }> {
  const frames = new SnapshotFrameReader();
  const segments = new SnapshotSegmentReader();
  const onEntry: OnPackedEntry = (header, block, start, end) => store.applyPacked(header, block, start, end);
  const onFrame = (frame: Uint8Array) => segments.push(frame, onEntry);
  for await (const chunk of data) frames.push(chunk, onFrame);
  frames.end();
  segments.end();
  return { entries: segments.entries, skipped: segments.skipped };
}

/** The blob's info to tell a replaced blob from a damaged one; null (not known to be replaced) when NATS does not answer. */
async function blobInfoIfReachable(blobs: BlobStore): Promise<{ modifiedAt: number } | null> {
  try {
    return await blobs.info(SNAPSHOT_BLOB_NAME);
  } catch (err) {
    if (isUnreachable(err)) return null;
    throw err;
  }
}
