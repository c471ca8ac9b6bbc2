import type { Bus } from '../../../shared/bus/bus.ts';
import { kvBuckets } from '../../../shared/bus/bus.ts';
import type { Sql } from '../../../shared/db/postgres.ts';
import { errorFields, type Logger } from '../../../shared/logger.ts';
import type { ApiConfig } from '../config.ts';
import { snapshotCompactor, type SnapshotCompactor } from './snapshot-compactor.ts';
import { outboxPublisher, type OutboxPublisher } from './outbox-publisher.ts';

export interface SnapshotPublishing {
  publisher: OutboxPublisher;
  /** null where there is none to keep (the in-process bus). */
  compactor: SnapshotCompactor | null;
  /** Stops both; what is queued stays queued, a compaction under way is abandoned. */
  stop(): Promise<void>;
}

/**
 * The API's side of the snapshot: the outbox publisher (seeding an empty bucket) and,
 * on NATS, the compactor that keeps the compacted snapshot redirectors start from.
 * On the in-process bus there is no compactor: a redirector in the same process
 * replays the bucket at memory speed, and a blob would hold every entry a second time.
 */
export async function startSnapshotPublishing(deps: {
  sql: Sql;
  bus: Bus;
  logger: Logger;
  config: Pick<ApiConfig, 'SNAPSHOT_COMPACT_AFTER_CHANGES' | 'SNAPSHOT_COMPACT_MAX_AGE_MS'>;
}): Promise<SnapshotPublishing> {
  const { sql, bus, logger, config } = deps;
  const publisher = outboxPublisher({ sql, kv: await bus.kv(kvBuckets.snapshot), logger });
  const seeded = await publisher.seedIfEmpty();
  publisher.start();
  const compactor =
    bus.kind === 'nats' ? snapshotCompactor({ bus, logger, policy: { afterChanges: config.SNAPSHOT_COMPACT_AFTER_CHANGES, maxAgeMs: config.SNAPSHOT_COMPACT_MAX_AGE_MS } }) : null;
  if (compactor && seeded > 0) {
    // A bucket being seeded: compacted as soon as every link is in it. The periodic
    // checks start only then, as one while seeding would compact part of the links.
    void publisher
      .flush()
      .then(() => compactor.runOnce())
      .catch((err) => logger.warn('snapshot compaction after seeding failed; the periodic check retries', errorFields(err)))
      .finally(() => compactor.start());
  } else compactor?.start();
  return {
    publisher,
    compactor,
    async stop() {
      await compactor?.stop();
      await publisher.stop();
    },
  };
}
