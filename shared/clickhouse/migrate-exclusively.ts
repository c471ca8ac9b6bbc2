import type { Bus, Lease } from '../bus/bus.ts';
import { errorFields, type Logger } from '../logger.ts';
import { migrateClickHouseAt, MigrationLeaseLostError } from './clickhouse-migrate.ts';

/** The lease every process migrating the deployment's ClickHouse takes (the bus's leases are the deployment's). */
export const MIGRATION_LEASE = 'clickhouse-migrations';
/**
 * A holder that stops renewing (died, stalled, cut off from NATS) gives way once a
 * taker has seen its last renewal stand this long (nats-lease.ts: elapsed on the
 * taker's clock, so from its first ask when it comes later). Long: another process
 * taking it while this one still fills a table would empty that table under it, so a
 * holder must be gone, not just slow.
 */
const LEASE_TTL_MS = 10 * 60_000;
const RENEW_EVERY_MS = 15_000;
const RETRY_EVERY_MS = 1_000;
const SAY_STILL_WAITING_EVERY_MS = 60_000;

/**
 * migrateClickHouseAt, holding the migration lease throughout, so that one process at a
 * time migrates (each waits for the one before: migrations can take hours on a large
 * store, and its holder renews meanwhile). Holding it, a fill an earlier attempt left
 * unfinished can be started again (clickhouse-migrate.ts, `exclusive`): no other process
 * is running it. Before each migration and each such restart the lease is renewed at
 * once, and a lease found lost stops the migrations (MigrationLeaseLostError): another
 * process may be migrating now.
 *
 * The bus's leases reach every process of the deployment on NATS; on the in-process bus
 * only `npm start`'s own, which owns its embedded engine. Every process migrating one
 * ClickHouse database must share one NATS (README).
 */
export async function migrateClickHouseExclusively(url: string, deps: { bus: Bus; logger: Logger }): Promise<string[]> {
  const { bus, logger } = deps;
  const held = await takeLease(bus, logger);
  let lost = false;
  let renewing: Promise<void> = Promise.resolve();
  const renew = () => {
    renewing = held.renew().then(
      (kept) => {
        lost ||= !kept;
      },
      (err: unknown) => logger.warn('renewing the ClickHouse migration lease failed; trying again', errorFields(err)),
    );
    return renewing;
  };
  const timer = setInterval(() => void renew(), RENEW_EVERY_MS);
  const exclusive = {
    async confirm() {
      await renewing;
      // Renewed now, not by the timer: an error here (NATS away) stops the migrations too.
      lost ||= !(await held.renew());
      if (lost) throw new MigrationLeaseLostError();
    },
  };
  try {
    return await migrateClickHouseAt(url, { logger, exclusive });
  } finally {
    clearInterval(timer);
    // A renewal still in flight would otherwise land after the release.
    await renewing;
    await held.release().catch((err: unknown) => logger.warn('releasing the ClickHouse migration lease failed; it expires on its own', errorFields(err)));
  }
}

async function takeLease(bus: Bus, logger: Logger): Promise<Lease> {
  const since = Date.now();
  let saidAt = 0;
  for (;;) {
    const lease = await bus.tryLease(MIGRATION_LEASE, LEASE_TTL_MS).catch((err: unknown) => {
      logger.warn('asking for the ClickHouse migration lease failed; trying again', errorFields(err));
      return null;
    });
    if (lease) return lease;
    if (Date.now() - saidAt >= SAY_STILL_WAITING_EVERY_MS) {
      logger.info('another process is migrating ClickHouse; waiting for it to finish', { waitedSeconds: Math.round((Date.now() - since) / 1000) });
      saidAt = Date.now();
    }
    await new Promise((r) => setTimeout(r, RETRY_EVERY_MS));
  }
}
