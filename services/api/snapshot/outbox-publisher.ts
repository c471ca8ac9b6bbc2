import type { KvBucket } from '../../../shared/bus/bus.ts';
import type { Sql } from '../../../shared/db/postgres.ts';
import type { Logger } from '../../../shared/logger.ts';
import { outboxDrainer, type PublishBatch } from '../outbox/outbox-drainer.ts';
import { takeFromQueue } from '../outbox/take-from-queue.ts';
import { hasPrefix } from '../../../shared/ids.ts';
import { encodeDomainEntry, encodeSnapshotEntry } from '../../../shared/snapshot/snapshot-entry.ts';
import { loadCompiledLinks } from './load-compiled-links.ts';
import { loadDomainMarkers } from './load-domain-markers.ts';
import { MAX_BULK_LINKS } from '../../../shared/schemas/link-bulk.ts';

/**
 * Outbox rows a pass publishes in one transaction: a bulk request's links (up to
 * MAX_BULK_LINKS) in one pass, with room to spare, as a full batch makes the drainer
 * look again (an empty pass the request would wait for too). At 500 a bulk create of
 * 1,000 took two passes of six statements each, one after the other, and an empty one,
 * while the request waited (issue 18).
 */
const BATCH = 2 * MAX_BULK_LINKS;

export interface OutboxPublisher {
  /** Publishes everything queued; concurrent callers share one run. Resolves when what was queued before the call is in the bucket (see OutboxDrainer.flush). */
  flush(): Promise<void>;
  /** Queues every link (and verified domain) when the bucket has never been written (a new NATS, or first start). */
  seedIfEmpty(): Promise<number>;
  /** Publishes leftovers (from crashes, NATS outages, other writers) every `intervalMs`. */
  start(intervalMs?: number): void;
  stop(): Promise<void>;
}

/**
 * Drains snapshot_outbox into the snapshot KV bucket. Several API instances may
 * run this at once: each takes outbox rows with SKIP LOCKED and holds them until
 * its KV puts are done and the rows deleted, so one link is never published by two
 * at a time, and a change committed meanwhile waits on the row lock and is published
 * after, with a higher version.
 */
export function outboxPublisher(deps: { sql: Sql; kv: KvBucket; logger: Logger }): OutboxPublisher {
  const { sql, kv, logger } = deps;

  const publishBatch: PublishBatch = async (live) => {
    return (await sql.begin(async (tx) => {
      const t = tx as unknown as Sql;
      // By index (take-from-queue.ts): the queue's order, 0021, for the take; the link id
      // for the delete, by key. The cost: re-queuing a link still queued (a change within
      // the moment before its pass) now updates an indexed column.
      const queued = await takeFromQueue(
        t,
        t<{ linkId: string; generation: string }[]>`
          SELECT link_id, generation FROM snapshot_outbox ORDER BY queued_at LIMIT ${BATCH} FOR UPDATE SKIP LOCKED`,
      );
      if (queued.length === 0) return 0;
      // Links, and the domains' markers (their ids share the outbox: migration 0012).
      const ids = queued.map((q) => q.linkId);
      const domainIds = ids.filter((id) => hasPrefix(id, 'domain'));
      // Sent together (postgres.js pipelines a transaction's queries): each waits on its own
      // answer, not on the others'. Versions are drawn while the rows are held, as before.
      const [compiled, markers, versions] = await Promise.all([
        loadCompiledLinks(t, ids.filter((id) => !hasPrefix(id, 'domain'))),
        loadDomainMarkers(t, domainIds),
        t<{ v: string }[]>`SELECT nextval('snapshot_version_seq') AS v FROM generate_series(1, ${ids.length})`,
      ]);
      await kv.putMany(
        ids.map((id, i) => {
          const version = Number(versions[i]!.v);
          const hostname = markers.get(id);
          const value = hostname === undefined ? encodeSnapshotEntry({ version, linkId: id, link: compiled.get(id) ?? null }) : encodeDomainEntry({ version, domainId: id, hostname });
          return { key: id, value };
        }),
      );
      live(queued.length);
      // By key: each id a probe of the primary key (a join with the pairs was planned as a
      // hash join over a full index scan for a bulk's 2,000). A row goes only if it still
      // holds a generation published here; generations are drawn once each from a
      // sequence, so a row holding one of them is the row it was published for.
      await t`
        DELETE FROM snapshot_outbox WHERE link_id = ANY(${ids}::text[]) AND generation = ANY(${queued.map((q) => q.generation)}::bigint[])`;
      return queued.length;
    })) as number;
  };

  const drainer = outboxDrainer(publishBatch, BATCH, logger, 'snapshot');
  const publisher: OutboxPublisher = {
    ...drainer,
    async seedIfEmpty() {
      if ((await kv.status()).entries > 0) return 0;
      const [row] = await sql<{ n: number }[]>`
        WITH queued AS (
          SELECT snapshot_enqueue(id) FROM links WHERE deleted_at IS NULL
          UNION ALL SELECT snapshot_enqueue(id) FROM domains WHERE status = 'verified' AND deleted_at IS NULL
        ) SELECT count(*)::int AS n FROM queued`;
      logger.info('snapshot bucket empty: queued every live link and verified domain', { entries: row!.n });
      return row!.n;
    },
    start(intervalMs = 1_000) {
      drainer.start(intervalMs);
    },
  };
  return publisher;
}
