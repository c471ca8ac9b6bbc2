import type { PendingQuery, Row } from 'postgres';
import type { Sql } from '../../../shared/db/postgres.ts';

/**
 * Runs a queue table's take (snapshot_outbox, webhook_outbox) inside a pass's transaction
 * with sequential scans off for that transaction, sent with the take in one round trip.
 *
 * Why: a queue's rows come and go at the rate of writes, and until autovacuum cleans up
 * (a minute apart at the soonest, later while a long transaction holds it back) the table
 * holds every deleted row of that time. Its statistics say it is tiny, so Postgres read it
 * whole, twice a pass: the take sorted every row and the delete hash-joined them all.
 * Indexes reach the rows wanted instead, and mark dead entries to be skipped. Measured on
 * snapshot_outbox (npm run bench -- api, same machine, runs one after another): POST
 * /links 1,539-1,995 req/s against 1,193-1,339 (its index alone 1,402; this setting
 * alone, without the index, 378); Postgres CPU ~600 us a POST before. On webhook_outbox,
 * with a link.created subscriber: 1,671-1,743 against 1,372-1,438.
 */
export async function takeFromQueue<T extends readonly Row[]>(tx: Sql, take: PendingQuery<T>): Promise<T> {
  const [, rows] = await Promise.all([tx`SET LOCAL enable_seqscan = off`, take]);
  return rows;
}
