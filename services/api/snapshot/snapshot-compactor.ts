import type { Bus } from '../../../shared/bus/bus.ts';
import { blobBuckets, kvBuckets } from '../../../shared/bus/bus.ts';
import { errorFields, type Logger } from '../../../shared/logger.ts';
import { compactSnapshot, type CompactionResult } from '../../../shared/snapshot/compact-snapshot.ts';
import { SNAPSHOT_BLOB_NAME } from '../../../shared/snapshot/snapshot-blob.ts';
import { compactionDue, type CompactionPolicy } from './compaction-due.ts';

/** A holder that stops renewing (crashed, hung) is replaced after this; renewed every third of it. */
const LEASE_TTL_MS = 60_000;
const CHECK_EVERY_MS = 30_000;

export interface SnapshotCompactor {
  /**
   * Compacts when due (always with `force`) and no other instance is compacting.
   * Resolves with what was written, or null (not due, or another instance holds the
   * lease). Concurrent calls share one run.
   */
  runOnce(options?: { force?: boolean }): Promise<CompactionResult | null>;
  /** Checks now and every `checkEveryMs`, in the background. */
  start(): void;
  /** Stops checking; a compaction under way is abandoned (the previous blob stays). */
  stop(): Promise<void>;
}

/**
 * Keeps the compacted snapshot (shared/snapshot/snapshot-blob.ts) recent, from the
 * API. Every API instance runs one; a lease on the bus lets one compact at a time
 * (two would waste a full scan each and could leave one's chunks orphaned). The
 * checks are two metadata reads; a compaction scans the whole bucket, paced by its
 * own writes, on no request path and without holding anything the publisher needs.
 */
export function snapshotCompactor(deps: {
  bus: Bus;
  logger: Logger;
  policy: CompactionPolicy;
  checkEveryMs?: number;
  leaseTtlMs?: number;
  /** Tests use their own buckets. */
  buckets?: { kv: string; blobs: string };
}): SnapshotCompactor {
  const { bus, logger, policy } = deps;
  const buckets = deps.buckets ?? { kv: kvBuckets.snapshot, blobs: blobBuckets.snapshot };
  const leaseTtlMs = deps.leaseTtlMs ?? LEASE_TTL_MS;
  let running: Promise<CompactionResult | null> | null = null;
  let stopping = false;
  let timer: NodeJS.Timeout | null = null;

  async function attempt(force: boolean): Promise<CompactionResult | null> {
    const kv = await bus.kv(buckets.kv);
    const blobs = await bus.blobs(buckets.blobs);
    const due = async () => (force ? 'asked to' : compactionDue(await kv.status(), await blobs.info(SNAPSHOT_BLOB_NAME), policy));
    if (!(await due())) return null;
    const lease = await bus.tryLease(`snapshot-compactor.${buckets.kv}`, leaseTtlMs);
    if (!lease) return null;
    try {
      // Again under the lease: the instance that held it may have just written a blob.
      const reason = await due();
      if (!reason) return null;
      logger.info('compacting the snapshot', { reason });
      // On the monotonic clock, as takeovers are timed (nats-lease.ts): a wall clock stepped
      // back would put the renewal off past the ttl mid-compaction.
      let renewedAt = performance.now();
      const result = await compactSnapshot({
        kv,
        blobs,
        keepGoing: async () => {
          if (stopping) return false;
          if (performance.now() - renewedAt < leaseTtlMs / 3) return true;
          renewedAt = performance.now();
          return lease.renew();
        },
      });
      logger.info('snapshot compacted', { entries: result.entries, revision: result.revision, bytes: result.bytes, ms: Math.round(result.ms) });
      return result;
    } finally {
      await lease.release();
    }
  }

  const compactor: SnapshotCompactor = {
    runOnce(options = {}) {
      if (stopping) return Promise.resolve(null);
      running ??= attempt(options.force === true).finally(() => (running = null));
      return running;
    },
    start() {
      if (stopping || timer) return;
      const check = () => {
        compactor.runOnce().catch((err) => {
          if (stopping) logger.info('snapshot compaction abandoned: stopping');
          else logger.warn('snapshot compaction failed; will retry', errorFields(err));
        });
      };
      check();
      timer = setInterval(check, deps.checkEveryMs ?? Math.min(CHECK_EVERY_MS, policy.maxAgeMs));
      timer.unref();
    },
    async stop() {
      stopping = true;
      if (timer) clearInterval(timer);
      // Let a pass under way end (its failure is its own loop's to report).
      await Promise.allSettled([running]);
    },
  };
  return compactor;
}
