import type { KvBucket } from '../../../shared/bus/bus.ts';
import type { Sql } from '../../../shared/db/postgres.ts';
import { errorFields, type Logger } from '../../../shared/logger.ts';
import { encodeSnapshotEntry } from '../../../shared/snapshot/snapshot-entry.ts';
import { loadCompiledLinks } from './load-compiled-links.ts';

const BATCH = 500;

export interface OutboxPublisher {
  /** Publishes everything queued; concurrent callers share one run. Resolves when the queue was empty once. */
  flush(): Promise<void>;
  /** Queues every link when the bucket has never been written (a new NATS, or first start). */
  seedIfEmpty(): Promise<number>;
  /** Publishes leftovers (from crashes, NATS outages, other writers) every `intervalMs`. */
  start(intervalMs?: number): void;
  stop(): Promise<void>;
}

/**
 * Drains snapshot_outbox into the snapshot KV bucket. Several API instances may
 * run this at once: each takes outbox rows with SKIP LOCKED and holds them until
 * its KV puts are done, so one link is never published by two at a time, and a
 * change committed meanwhile waits on the row lock and is published after, with
 * a higher version.
 */
export function outboxPublisher(deps: { sql: Sql; kv: KvBucket; logger: Logger }): OutboxPublisher {
  const { sql, kv, logger } = deps;
  let timer: NodeJS.Timeout | null = null;

  async function publishBatch(): Promise<number> {
    return (await sql.begin(async (tx) => {
      const t = tx as unknown as Sql;
      const queued = await t<{ linkId: string; generation: string }[]>`
        SELECT link_id, generation FROM snapshot_outbox ORDER BY queued_at LIMIT ${BATCH} FOR UPDATE SKIP LOCKED`;
      if (queued.length === 0) return 0;
      const ids = queued.map((q) => q.linkId);
      const compiled = await loadCompiledLinks(t, ids);
      const versions = await t<{ v: string }[]>`SELECT nextval('snapshot_version_seq') AS v FROM generate_series(1, ${ids.length})`;
      await Promise.all(
        ids.map((linkId, i) => kv.put(linkId, encodeSnapshotEntry({ version: Number(versions[i]!.v), linkId, link: compiled.get(linkId) ?? null }))),
      );
      await t`
        DELETE FROM snapshot_outbox o USING (SELECT unnest(${ids}::text[]) AS link_id, unnest(${queued.map((q) => q.generation)}::bigint[]) AS generation) p
        WHERE o.link_id = p.link_id AND o.generation = p.generation`;
      return queued.length;
    })) as number;
  }

  /**
   * Flush calls are numbered. A pass reads the queue after every call numbered up to
   * `covers` had committed its change, so when the pass ends those calls are done:
   * a caller waits for at most the pass running now and the next one, never for a
   * whole busy period of passes triggered by later changes.
   */
  let requested = 0;
  const waiters: Array<{ upTo: number; resolve(): void; reject(err: unknown): void }> = [];
  let running: Promise<void> | null = null;

  function settle(covers: number, err?: unknown): void {
    for (let i = waiters.length - 1; i >= 0; i--) {
      const w = waiters[i]!;
      if (w.upTo > covers) continue;
      waiters.splice(i, 1);
      if (err === undefined) w.resolve();
      else w.reject(err);
    }
  }

  async function passes(): Promise<void> {
    let done = 0;
    try {
      while (done < requested) {
        const covers = requested;
        try {
          while ((await publishBatch()) === BATCH);
          settle(covers);
        } catch (err) {
          // The rows stay queued; start()'s timer (or the next change) tries again.
          settle(covers, err);
        }
        done = covers;
      }
    } finally {
      // Cleared in the same step that saw no flush pending: a flush after this starts a new run.
      running = null;
    }
  }

  const publisher: OutboxPublisher = {
    flush() {
      const mine = ++requested;
      const published = new Promise<void>((resolve, reject) => waiters.push({ upTo: mine, resolve, reject }));
      running ??= passes();
      return published;
    },
    async seedIfEmpty() {
      if ((await kv.status()).entries > 0) return 0;
      const [row] = await sql<{ n: number }[]>`
        WITH queued AS (SELECT snapshot_enqueue(id) FROM links WHERE deleted_at IS NULL) SELECT count(*)::int AS n FROM queued`;
      logger.info('snapshot bucket empty: queued every live link', { links: row!.n });
      return row!.n;
    },
    start(intervalMs = 1_000) {
      timer = setInterval(() => {
        publisher.flush().catch((err) => logger.warn('snapshot publish failed; will retry', errorFields(err)));
      }, intervalMs);
      timer.unref();
    },
    async stop() {
      if (timer) clearInterval(timer);
      await running?.catch(() => {});
    },
  };
  return publisher;
}
