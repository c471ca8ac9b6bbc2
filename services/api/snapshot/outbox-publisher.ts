import type { KvBucket } from '../../../shared/bus/bus.ts';
import { isLockTimeout, type Sql } from '../../../shared/db/postgres.ts';
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

/**
 * Fan-out rows (migration 0032: a campaign-wide rule's links, a domain's) a batch takes at
 * most after the direct rows queued: FAN_OUT_BATCH when there were none, FAN_OUT_BESIDE_DIRECT
 * beside some. A direct change made while a fan-out drains waits for the batch under way
 * and goes out in the next, so both are kept short; the share beside direct rows keeps a
 * fan-out draining under a steady stream of direct changes. Smaller batches cost a fan-out
 * more of them (a 20,000-link campaign drained in about the same time with 500 as with
 * 2,000: the cost is per row).
 */
const FAN_OUT_BATCH = MAX_BULK_LINKS / 2;
const FAN_OUT_BESIDE_DIRECT = MAX_BULK_LINKS / 10;

/** How long a pass waits for outbox rows another transaction holds (another instance's batch takes milliseconds). */
const WAIT_FOR_HELD_MS = 1_000;
/** After a wait ran out, how long held rows are not waited for (see stalledHolder()). */
const NOT_WAITING_AFTER_STALL_MS = 10_000;
const SAY_STALLED_EVERY_MS = 60_000;
/** Held rows a take reports (and a wait waits for): more than any pass of another instance holds at once. */
const MAX_HELD_REPORTED = 2 * BATCH;

export interface OutboxPublisher {
  /**
   * Publishes everything queued; concurrent callers share one run. Resolves when what was
   * queued before the call is in the bucket; `directOnly` (a caller that wrote links, no
   * rule or domain): when the direct rows queued before it are, though a campaign's or a
   * domain's fan-out queued before it may still be draining (see OutboxDrainer.flush).
   */
  flush(options?: { directOnly?: boolean }): Promise<void>;
  /** Queues every link (and every domain with a marker: verified, or ever verified) when the bucket has never been written (a new NATS, or first start). */
  seedIfEmpty(): Promise<number>;
  /** Publishes leftovers (from crashes, NATS outages, other writers) every `intervalMs`. */
  start(intervalMs?: number): void;
  stop(): Promise<void>;
  /** Waits for rows other transactions held, and those that ran out (a stalled holder), since start. */
  waits(): { forHeld: number; ranOut: number };
}

/**
 * Drains snapshot_outbox into the snapshot KV bucket. Several API instances may
 * run this at once: each takes outbox rows with SKIP LOCKED and holds them until
 * its KV puts are done and the rows deleted, so one link is never published by two
 * at a time, and a change committed meanwhile waits on the row lock and is published
 * after, with a higher version. A put that outlives its pass (acknowledged too late,
 * its rows let go) is not covered by the lock: each put is conditional on its key's
 * last KV sequence (snapshot_kv_sequences), so it lands before a newer one or not at all. A flush whose pass passed by rows another instance
 * held waits for that instance to let them go (and publishes any it left), so a
 * change is in the bucket when the API answers whichever instance's pass took it.
 */
export function outboxPublisher(deps: { sql: Sql; kv: KvBucket; logger: Logger; waitForHeldMs?: number }): OutboxPublisher {
  const { sql, kv, logger } = deps;
  const waitForHeldMs = deps.waitForHeldMs ?? WAIT_FOR_HELD_MS;
  const waits = { forHeld: 0, ranOut: 0 };
  /** Outbox rows this process's batches hold (taken, not yet committed): held, but not elsewhere. */
  const heldHere = new Set<string>();
  /** Until when held rows are not waited for, after a wait ran out (Date.now()). */
  let notWaitingUntil = 0;
  let saidStalledAt = 0;

  const publishBatch: PublishBatch = async (live, { waitFor }) => {
    if (waitFor.length > 0) await waitUntilLetGo(waitFor);
    let taken: string[] = [];
    try {
      return await sql.begin(async (tx) => {
        const t = tx as unknown as Sql;
        const queued = await take(t);
        taken = queued.rows.map((q) => q.linkId);
        for (const id of taken) heldHere.add(id);
        const held = Date.now() >= notWaitingUntil ? queued.held : [];
        const { more, directDone } = queued;
        if (taken.length === 0) return { count: 0, held, more, directDone };
        // Links, and the domains' markers (their ids share the outbox: migration 0012).
        const ids = taken;
        const domainIds = ids.filter((id) => hasPrefix(id, 'domain'));
        // Sent together (postgres.js pipelines a transaction's queries): each waits on its own
        // answer, not on the others'. Versions are drawn while the rows are held, as before,
        // and the keys' last KV sequences read (no other publisher writes them meanwhile).
        const [compiled, markers, versions, lastSeqs] = await Promise.all([
          loadCompiledLinks(t, ids.filter((id) => !hasPrefix(id, 'domain'))),
          loadDomainMarkers(t, domainIds),
          t<{ v: string }[]>`SELECT nextval('snapshot_version_seq') AS v FROM generate_series(1, ${ids.length})`,
          t<{ id: string; seq: string }[]>`SELECT id, seq FROM snapshot_kv_sequences WHERE id = ANY(${ids}::text[])`,
        ]);
        const lastSeq = new Map(lastSeqs.map((r) => [r.id, Number(r.seq)]));
        // Each put expects its key's last sequence: one of an earlier pass that timed out
        // (its transaction rolled back, its row left queued) may still reach NATS, after
        // another instance published a newer entry; it is refused then, instead of replacing
        // that entry for good (a redirector starting later, and the compacted snapshot, take
        // what the bucket holds). See migration 0026 and putMany.
        const acked = await kv.putMany(
          ids.map((id, i) => {
            const version = Number(versions[i]!.v);
            const hostname = markers.get(id);
            const value = hostname === undefined ? encodeSnapshotEntry({ version, linkId: id, link: compiled.get(id) ?? null }) : encodeDomainEntry({ version, domainId: id, hostname });
            return { key: id, value, expectedRevision: lastSeq.get(id) ?? 0 };
          }),
        );
        live({ count: ids.length, held, more, directDone });
        // Together, in this transaction: the sequences recorded are those of what is
        // published, and the rows go only with them. By key in the delete: each id a probe
        // of the primary key (a join with the pairs was planned as a hash join over a full
        // index scan for a bulk's 2,000). A row goes only if it still holds a generation
        // published here; generations are drawn once each from a sequence, so a row holding
        // one of them is the row it was published for.
        await Promise.all([
          t`
            INSERT INTO snapshot_kv_sequences (id, seq) SELECT * FROM unnest(${ids}::text[], ${acked}::bigint[])
            ON CONFLICT (id) DO UPDATE SET seq = EXCLUDED.seq`,
          t`
            DELETE FROM snapshot_outbox WHERE link_id = ANY(${ids}::text[]) AND generation = ANY(${queued.rows.map((q) => q.generation)}::bigint[])`,
        ]);
        return { count: ids.length, held, more, directDone };
      });
    } finally {
      for (const id of taken) heldHere.delete(id);
    }
  };

  /**
   * The batch's rows, not held by another transaction (SKIP LOCKED): the oldest of the
   * direct lane (up to BATCH), then the oldest of the fan-out lane (up to FAN_OUT_BATCH,
   * or FAN_OUT_BESIDE_DIRECT beside direct rows: migration 0032), so a direct change waits
   * for one short batch of a campaign's fan-out, never for all of it. `more`: a lane had
   * rows past what the batch took, so the drainer takes another; `directDone`: the direct
   * lane had none.
   *
   * `held`: the rows the batch passed by that a transaction other than this process's
   * batches held (another instance's batch publishing them, a change queuing them again,
   * or a stalled holder): those of the direct lane when it took all the others, and of the
   * fan-out lane too when it took all of that. A batch that left direct rows does not look
   * (another batch follows it anyway), nor does its look cost anything then: the one-time
   * filters come first. Take and look walk the queue's index by lane, the look past the
   * dead entries the take marks.
   */
  async function take(t: Sql): Promise<{ rows: Array<{ linkId: string; generation: string }>; held: string[]; more: boolean; directDone: boolean }> {
    // NOT IN a subquery is hashed: this process may hold a bulk's thousands of rows.
    const rows = await takeFromQueue(
      t,
      t<Array<{ linkId: string | null; generation: string | null; held: string[] | null; more: boolean | null; directDone: boolean | null }>>`
        WITH direct AS MATERIALIZED (
          SELECT link_id, generation FROM snapshot_outbox WHERE NOT fan_out ORDER BY queued_at LIMIT ${BATCH} FOR UPDATE SKIP LOCKED
        ), room AS MATERIALIZED (
          SELECT n AS direct, least(CASE WHEN n = 0 THEN ${FAN_OUT_BATCH}::bigint ELSE ${FAN_OUT_BESIDE_DIRECT}::bigint END, ${BATCH}::bigint - n) AS fan_out
          FROM (SELECT count(*) AS n FROM direct) d
        ), fanned AS MATERIALIZED (
          SELECT link_id, generation FROM snapshot_outbox WHERE fan_out ORDER BY queued_at LIMIT (SELECT fan_out FROM room) FOR UPDATE SKIP LOCKED
        ), taken AS (
          SELECT link_id, generation FROM direct UNION ALL SELECT link_id, generation FROM fanned
        ), said AS MATERIALIZED (
          SELECT direct = ${BATCH} OR (SELECT count(*) FROM fanned) = fan_out AS more, direct < ${BATCH} AS direct_done FROM room
        ), passed AS NOT MATERIALIZED (
          SELECT o.link_id, o.fan_out, o.queued_at FROM snapshot_outbox o
          WHERE o.link_id NOT IN (SELECT link_id FROM taken) AND o.link_id NOT IN (SELECT unnest(${[...heldHere]}::text[]))
        )
        SELECT link_id, generation, NULL::text[] AS held, NULL::boolean AS more, NULL::boolean AS direct_done FROM taken
        UNION ALL
        SELECT NULL, NULL, NULL, more, direct_done FROM said
        UNION ALL
        SELECT NULL, NULL, ARRAY(
          (SELECT link_id FROM passed WHERE NOT fan_out ORDER BY queued_at LIMIT ${MAX_HELD_REPORTED})
          UNION ALL
          (SELECT link_id FROM passed WHERE fan_out AND NOT (SELECT more FROM said) ORDER BY queued_at LIMIT ${MAX_HELD_REPORTED})
        ), NULL, NULL
        WHERE (SELECT direct_done FROM said)`,
    );
    const queued: Array<{ linkId: string; generation: string }> = [];
    let held: string[] = [];
    let more = false;
    let directDone = false;
    for (const r of rows) {
      if (r.held !== null) held = r.held;
      else if (r.more !== null) {
        more = r.more;
        directDone = r.directDone === true;
      } else if (r.linkId !== null && r.generation !== null) queued.push({ linkId: r.linkId, generation: r.generation });
    }
    return { rows: queued, held, more, directDone };
  }

  /**
   * Returns once no other transaction holds the rows of `ids` (for at most waitForHeldMs
   * a holder). It waits with FOR KEY SHARE, which only a publisher's take (FOR UPDATE) or
   * delete conflicts with: a change queuing a row again (ON CONFLICT DO UPDATE of non-key
   * columns) neither waits for it nor is waited for, and it holds nothing another waiter
   * or holder needs, so it cannot be part of a deadlock. The rows left (a holder that
   * failed) are taken by the batch that follows.
   */
  async function waitUntilLetGo(ids: readonly string[]): Promise<void> {
    waits.forHeld++;
    try {
      await sql.begin(async (tx) => {
        const t = tx as unknown as Sql;
        await Promise.all([
          t`SELECT set_config('lock_timeout', ${`${waitForHeldMs}ms`}, true)`,
          t`SELECT 1 FROM snapshot_outbox WHERE link_id = ANY(${ids}::text[]) FOR KEY SHARE`,
        ]);
      });
    } catch (err) {
      if (!isLockTimeout(err)) throw err;
      stalledHolder();
    }
  }

  /**
   * A wait for held rows ran out: they are not waited for again for
   * NOT_WAITING_AFTER_STALL_MS, so one stalled transaction (a frozen process, an open psql
   * session) costs each API instance one wait in that time, not one a pass.
   */
  function stalledHolder(): void {
    waits.ranOut++;
    notWaitingUntil = Date.now() + NOT_WAITING_AFTER_STALL_MS;
    if (Date.now() - saidStalledAt < SAY_STALLED_EVERY_MS) return;
    saidStalledAt = Date.now();
    logger.warn('snapshot outbox rows held by another transaction past the wait: for a while, changes are answered without waiting for rows others hold', {
      waitedMs: waitForHeldMs,
      notWaitingForMs: NOT_WAITING_AFTER_STALL_MS,
    });
  }

  const drainer = outboxDrainer(publishBatch, BATCH, logger, 'snapshot');
  const publisher: OutboxPublisher = {
    ...drainer,
    async seedIfEmpty() {
      if ((await kv.status()).entries > 0) return 0;
      // The sequences recorded are of a bucket that is gone (a new NATS, a bucket deleted):
      // with them every key's first put would be refused once and made again. Clearing one
      // a pass recorded meanwhile costs no more than that. Queued as a fan-out (migration
      // 0032): changes made while a large bucket is seeded go ahead of it.
      const [row] = await sql<{ n: number }[]>`
        WITH cleared AS (DELETE FROM snapshot_kv_sequences), queued AS (
          SELECT snapshot_enqueue_fan_out(id) FROM links WHERE deleted_at IS NULL
          UNION ALL SELECT snapshot_enqueue_fan_out(id) FROM domains WHERE status = 'verified' AND deleted_at IS NULL OR ever_verified
        ) SELECT count(*)::int AS n FROM queued`;
      logger.info('snapshot bucket empty: queued every live link and every verified domain, or one verified once', { entries: row!.n });
      return row!.n;
    },
    start(intervalMs = 1_000) {
      drainer.start(intervalMs);
    },
    waits: () => ({ ...waits }),
  };
  return publisher;
}
