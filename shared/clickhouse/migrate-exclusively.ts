import type { Bus, Lease } from '../bus/bus.ts';
import { errorFields, type Logger } from '../logger.ts';
import { migrateClickHouseAt } from './clickhouse-migrate.ts';

/** The lease every process migrating the deployment's ClickHouse takes (the bus's leases are the deployment's). */
export const MIGRATION_LEASE = 'clickhouse-migrations';
/** A holder that stops renewing (died, stalled) gives way after this long. */
const LEASE_TTL_MS = 60_000;
const RENEW_EVERY_MS = 10_000;
const RETRY_EVERY_MS = 1_000;

/**
 * migrateClickHouseAt, holding the migration lease throughout, so that one process at a
 * time migrates (each waits for the one before: migrations can take hours on a large
 * store, and its holder renews meanwhile). Holding it, a fill an earlier attempt left
 * unfinished can safely be started again (clickhouse-migrate.ts, `exclusive`): no other
 * process is running it. The bus's leases reach every process of the deployment on NATS;
 * on the in-process bus only `npm start`'s own, which owns its embedded engine.
 */
export async function migrateClickHouseExclusively(url: string, deps: { bus: Bus; logger: Logger }): Promise<string[]> {
  const { bus, logger } = deps;
  let lease: Lease | null = null;
  for (let waited = false; (lease = await bus.tryLease(MIGRATION_LEASE, LEASE_TTL_MS)) === null; waited = true) {
    if (!waited) logger.info('another process is migrating ClickHouse; waiting for it to finish');
    await new Promise((r) => setTimeout(r, RETRY_EVERY_MS));
  }
  const held = lease;
  const renewing = setInterval(() => {
    held.renew().then(
      (kept) => {
        // Taken by another process after this one stalled past the ttl: it may now empty
        // a table this one is filling. Said loudly; the statement under way cannot be stopped.
        if (!kept) logger.error('the ClickHouse migration lease was lost while migrating', { lease: MIGRATION_LEASE });
      },
      (err: unknown) => logger.warn('renewing the ClickHouse migration lease failed; trying again', errorFields(err)),
    );
  }, RENEW_EVERY_MS);
  try {
    return await migrateClickHouseAt(url, { logger, exclusive: true });
  } finally {
    clearInterval(renewing);
    await held.release();
  }
}
