import type { Bus, KvWatch } from '../../shared/bus/bus.ts';
import { kvBuckets } from '../../shared/bus/bus.ts';
import { errorFields, type Logger } from '../../shared/logger.ts';
import { decodeSnapshotEntryLazily } from '../../shared/snapshot/snapshot-entry.ts';
import type { SnapshotStore } from './snapshot-store.ts';

export interface SnapshotSync {
  /** Resolves when every entry present at start has been applied. */
  readonly initialized: Promise<void>;
  stop(): void;
}

/**
 * Keeps the store in step with the snapshot bucket: the full state first, then
 * each change. The bus replays what a reconnect missed; the store ignores entries
 * older than what it holds, so replays and duplicates are harmless. While the bus
 * is down the store keeps serving what it has.
 */
export async function syncSnapshot(deps: { bus: Bus; store: SnapshotStore; logger: Logger }): Promise<SnapshotSync> {
  const kv = await deps.bus.kv(kvBuckets.snapshot);
  const watch: KvWatch = await kv.watch((entry) => {
    if (entry.value === null) return; // entries are never deleted, only replaced by `link: null`
    try {
      deps.store.applyLazy(decodeSnapshotEntryLazily(entry.value));
    } catch (err) {
      deps.logger.error('bad snapshot entry skipped', { key: entry.key, revision: entry.revision, ...errorFields(err) });
    }
  });
  return watch;
}
