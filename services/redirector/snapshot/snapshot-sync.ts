import type { Bus, KvWatch } from '../../../shared/bus/bus.ts';
import { blobBuckets, kvBuckets } from '../../../shared/bus/bus.ts';
import { errorFields, type Logger } from '../../../shared/logger.ts';
import { decodeSnapshotEntryLazily } from '../../../shared/snapshot/snapshot-entry.ts';
import { loadSnapshotBlob } from './snapshot-blob-load.ts';
import type { SnapshotStore } from './snapshot-store.ts';

export interface SnapshotSync {
  /** Resolves when every entry present at start has been applied. */
  readonly initialized: Promise<void>;
  stop(): void;
}

/**
 * Keeps the store in step with the snapshot bucket: the full state first, then
 * each change. The full state comes from the compacted snapshot blob when there is
 * a usable one (then the watch starts after the revision it covers), else from a
 * replay of the whole bucket. The bus replays what a reconnect missed; the store
 * ignores entries older than what it holds, so replays, duplicates and an overlap
 * between blob and watch are harmless. While the bus is down the store keeps
 * serving what it has.
 */
export async function syncSnapshot(deps: { bus: Bus; store: SnapshotStore; logger: Logger }): Promise<SnapshotSync> {
  const kv = await deps.bus.kv(kvBuckets.snapshot);
  const covered = await loadSnapshotBlob({ kv, openBlobs: () => deps.bus.blobs(blobBuckets.snapshot), store: deps.store, logger: deps.logger });
  const watch: KvWatch = await kv.watch(
    (entry) => {
      if (entry.value === null) return; // entries are never deleted, only replaced by `link: null`
      try {
        deps.store.applyLazy(decodeSnapshotEntryLazily(entry.value));
      } catch (err) {
        deps.logger.error('bad snapshot entry skipped', { key: entry.key, revision: entry.revision, ...errorFields(err) });
      }
    },
    covered > 0 ? { fromRevision: covered + 1 } : {},
  );
  return watch;
}
