import { createHash } from 'node:crypto';
import type { ClickHouseClient } from '@clickhouse/client';
import type { Bus, BusMessage } from '../../shared/bus/bus.ts';
import { DEAD_LETTER_SUBJECT } from '../../shared/bus/bus.ts';
import { errorFields, type Logger } from '../../shared/logger.ts';
import { EventBatch, type BatchBody } from './event-batch.ts';
import type { EventRowBase, EventTable } from './event-tables.ts';
import { insertBatch } from './insert-batch.ts';
import { readMessage } from './read-message.ts';

export interface IngesterStats {
  /** Rows inserted into ClickHouse. */
  inserted: number;
  /** Events skipped because a redelivered message's event was already stored. */
  skippedDuplicates: number;
  /** Lines that could never be stored, sent to the dead-letter subject. */
  deadLettered: number;
  insertFailures: number;
  /** Milliseconds between the oldest event of the last batch and its insert. */
  lastBatchLagMs: number;
}

export interface Ingester {
  stats(): IngesterStats;
  /**
   * Stops fetching, finishes (inserts and acks) the batch in hand, then resolves. With
   * `drain`, it first goes on until a fetch finds nothing: for the in-process bus, whose
   * events would not outlive the process (NATS keeps them for the next ingester).
   */
  stop(options?: { drain?: boolean }): Promise<void>;
}

const encoder = new TextEncoder();

/**
 * Ids per duplicate check. They travel in the request body (multipart query
 * parameters, see alreadyStored), so a chunk is bounded by the query's cost,
 * not by URL limits.
 */
const DUPLICATE_CHECK_CHUNK = 10_000;

/** Well inside the bus's ack wait (10 s for NATS). */
const KEEP_ALIVE_MS = 2_000;

/**
 * Moves events (clicks, or conversions) from the bus into ClickHouse, exactly once as far as
 * ClickHouse can see:
 * - a message is acknowledged only after the insert holding its events succeeded;
 * - while ClickHouse is down the batch is retried with backoff, and its messages
 *   are kept alive (`working`) so no other ingester gets them meanwhile;
 * - a retried insert carries the same dedup token, so ClickHouse drops it if an
 *   earlier attempt landed; a message redelivered after a crash has its events
 *   checked against what is stored first;
 * - a line that can never be stored goes to the dead-letter subject and does not
 *   hold up the rest.
 * Several ingesters may share one durable consumer.
 */
export function startIngester<Row extends EventRowBase, Body extends BatchBody>(deps: {
  /** Which events: clickEvents or conversionEvents (event-tables.ts). */
  kind: EventTable<Row, Body>;
  bus: Bus;
  clickhouse: ClickHouseClient;
  logger: Logger;
  consumerName: string;
  maxMessages: number;
  lingerMs: number;
}): Ingester {
  const { bus, clickhouse, logger, kind } = deps;
  const stats: IngesterStats = { inserted: 0, skippedDuplicates: 0, deadLettered: 0, insertFailures: 0, lastBatchLagMs: 0 };
  let stopping = false;
  let draining = false;

  /**
   * Which of these events (ids with their link ids) ClickHouse already has. The
   * ids go as multipart query parameters, in the body: a redelivered batch of
   * 100k events is a handful of queries, not a thousand URL-sized ones.
   */
  async function alreadyStored(ids: string[], linkIds: string[]): Promise<Set<string>> {
    const found = new Set<string>();
    for (let i = 0; i < ids.length; i += DUPLICATE_CHECK_CHUNK) {
      const result = await clickhouse.query({
        query: `SELECT ${kind.idColumn} AS id FROM ${kind.table} WHERE link_id IN {links:Array(String)} AND ${kind.idColumn} IN {ids:Array(String)}`,
        query_params: { links: [...new Set(linkIds.slice(i, i + DUPLICATE_CHECK_CHUNK))], ids: ids.slice(i, i + DUPLICATE_CHECK_CHUNK) },
        format: 'JSONEachRow',
        use_multipart_params: true,
      });
      for (const r of await result.json<{ id: string }>()) found.add(r.id);
    }
    return found;
  }

  async function deadLetter(lines: string[]): Promise<void> {
    for (const line of lines) {
      const id = createHash('sha256').update(line).digest('hex').slice(0, 32);
      await bus.publishEvent(DEAD_LETTER_SUBJECT, encoder.encode(line), `dead-${id}`);
      stats.deadLettered++;
    }
    logger.warn('invalid events dead-lettered', { count: lines.length, subject: DEAD_LETTER_SUBJECT });
  }

  /**
   * Retries until it succeeds, or until stopping (then the batch stays unacked for
   * redelivery). Its messages are in `inHand` meanwhile, so keepAlive keeps them ours.
   */
  async function untilDone(what: string, action: () => Promise<void>): Promise<boolean> {
    let backoffMs = 100;
    for (;;) {
      try {
        await action();
        return true;
      } catch (err) {
        stats.insertFailures++;
        logger.warn(`${what} failed; retrying`, { backoffMs, ...errorFields(err) });
        if (stopping) return false;
        await new Promise((r) => setTimeout(r, backoffMs));
        backoffMs = Math.min(5_000, backoffMs * 2);
      }
    }
  }

  interface Prepared {
    messages: BusMessage[];
    batch: EventBatch<Body>;
    parseMs: number;
  }

  /** Parses, drops what is stored already, dead-letters what never can be. Null: stopping mid-way. */
  async function prepare(messages: BusMessage[], inFlight: Promise<void>): Promise<Prepared | null> {
    const started = performance.now();
    let bytes = 0;
    for (const m of messages) bytes += m.data.byteLength;
    // A redelivered message may have been stored before (its ingester died before acking):
    // its events that ClickHouse has are left out of the batch.
    let stored: ReadonlySet<string> = new Set();
    const redelivered = messages.filter((m) => m.deliveries > 1);
    if (redelivered.length > 0) {
      // Its first delivery may be in this ingester's insert still under way: checking
      // before that insert lands would miss its events and store them twice.
      await inFlight;
      const probe = new EventBatch(kind.newBody(redelivered.reduce((sum, m) => sum + m.data.byteLength, 0)), { keepLinkIds: true });
      for (const m of redelivered) readMessage(kind, m.data, probe);
      if (!(await untilDone('duplicate check', async () => void (stored = await alreadyStored(probe.ids, probe.linkIds!))))) return null;
      stats.skippedDuplicates += stored.size;
    }
    // Encoded rows are smaller than their JSON lines: the body rarely has to grow.
    // A message and its redelivery can meet in one batch: the batch keeps each event id once.
    const batch = new EventBatch(kind.newBody(bytes + 4096), { skip: stored });
    const bad: string[] = [];
    for (const m of messages) for (const line of readMessage(kind, m.data, batch)) bad.push(line);
    const parseMs = performance.now() - started;
    if (bad.length > 0 && !(await untilDone('dead-lettering', () => deadLetter(bad)))) return null;
    return { messages, batch, parseMs };
  }

  /** Inserts, then acknowledges: a message is acked only once its events are stored. */
  async function store({ messages, batch, parseMs }: Prepared): Promise<void> {
    const started = performance.now();
    if (batch.count > 0) {
      // The same events give the same token, however often this insert is retried.
      const token = createHash('sha256').update(batch.ids.join(',')).digest('hex');
      const body = batch.body.bytes();
      const inserted = await untilDone('insert', () => insertBatch(clickhouse, kind, body, token));
      if (!inserted) return;
      stats.inserted += batch.count;
      stats.lastBatchLagMs = Date.now() - batch.oldestTs;
    }
    for (const m of messages) m.ack();
    logger.debug('batch stored', { kind: kind.name, messages: messages.length, rows: batch.count, parseMs: Math.round(parseMs), storeMs: Math.round(performance.now() - started) });
  }

  /** A batch that failed for an unexpected reason goes back for redelivery; ingestion goes on. */
  const guarded = (messages: BusMessage[], work: Promise<void>) =>
    work.catch((err) => {
      logger.error('batch failed unexpectedly; returned for redelivery', { messages: messages.length, ...errorFields(err) });
      for (const m of messages) m.nak(1_000);
    });

  /**
   * Two stages: while ClickHouse stores one batch (in its own thread or server),
   * the next is fetched and parsed here. At most one insert is in flight.
   */
  /**
   * Messages fetched and not yet acked or returned. A slow batch (a big backlog on a
   * busy machine) can outlast the consumer's ack wait; without a sign of life the bus
   * would hand its messages to another ingester, or back to this one, while their
   * insert is still under way, and a duplicate check then could not see them yet.
   */
  const inHand = new Set<BusMessage[]>();
  const keepAlive = setInterval(() => {
    for (const messages of inHand) for (const m of messages) m.working();
  }, KEEP_ALIVE_MS);
  keepAlive.unref();

  const done = (async () => {
    const consumer = await bus.eventConsumer(deps.consumerName, kind.subject);
    let storing: Promise<void> = Promise.resolve();
    while (!stopping || draining) {
      let messages: BusMessage[];
      try {
        messages = await consumer.fetch(deps.maxMessages, deps.lingerMs);
      } catch (err) {
        logger.warn('fetch failed; retrying', errorFields(err));
        await new Promise((r) => setTimeout(r, 500));
        continue;
      }
      if (messages.length === 0) {
        if (stopping) break; // drained
        continue;
      }
      inHand.add(messages);
      let prepared: Prepared | null = null;
      const previous = storing;
      await guarded(messages, (async () => void (prepared = await prepare(messages, previous)))());
      await storing;
      storing = (prepared ? guarded(messages, store(prepared)) : Promise.resolve()).finally(() => inHand.delete(messages));
    }
    await storing;
    consumer.close();
  })()
    .catch((err) => logger.error('ingester stopped on an unexpected error', errorFields(err)))
    .finally(() => clearInterval(keepAlive));

  return {
    stats: () => ({ ...stats }),
    async stop(options = {}) {
      draining = options.drain === true;
      stopping = true;
      await done;
    },
  };
}
