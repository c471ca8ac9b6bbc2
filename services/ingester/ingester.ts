import { createHash } from 'node:crypto';
import type { ClickHouseClient } from '@clickhouse/client';
import type { Bus, BusMessage } from '../../shared/bus/bus.ts';
import { DEAD_LETTER_SUBJECT } from '../../shared/bus/bus.ts';
import { errorFields, type Logger } from '../../shared/logger.ts';
import type { EventRowBase, EventTable } from './event-tables.ts';

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
  /** Stops fetching, finishes (inserts and acks) the batch in hand, then resolves. */
  stop(): Promise<void>;
}

const decoder = new TextDecoder();
const encoder = new TextEncoder();
/** ~100 ids of ~70 characters keep a query's URL near 8 KB. */
const DUPLICATE_CHECK_CHUNK = 100;

interface Parsed<Row> {
  rows: Row[];
  bad: string[];
}

function parseMessage<Row extends EventRowBase>(kind: EventTable<Row>, message: BusMessage): Parsed<Row> {
  const rows: Row[] = [];
  const bad: string[] = [];
  for (const line of decoder.decode(message.data).split('\n')) {
    if (line === '') continue;
    let row: Row | null = null;
    try {
      row = kind.parse(JSON.parse(line));
    } catch {
      // not JSON: dead-lettered below
    }
    if (row) rows.push(row);
    else bad.push(line);
  }
  return { rows, bad };
}

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
export function startIngester<Row extends EventRowBase>(deps: {
  /** Which events: clickEvents or conversionEvents (event-tables.ts). */
  kind: EventTable<Row>;
  bus: Bus;
  clickhouse: ClickHouseClient;
  logger: Logger;
  consumerName: string;
  maxMessages: number;
  lingerMs: number;
}): Ingester {
  const { bus, clickhouse, logger } = deps;
  const stats: IngesterStats = { inserted: 0, skippedDuplicates: 0, deadLettered: 0, insertFailures: 0, lastBatchLagMs: 0 };
  let stopping = false;

  /**
   * Click ids among `rows` that ClickHouse already has. Query parameters travel in
   * the URL, which servers cap (HTTP header limits), so ids go in chunks.
   */
  const { kind } = deps;
  const idOf = (row: Row) => row[kind.idColumn] as unknown as string;

  async function alreadyStored(rows: Row[]): Promise<Set<string>> {
    const found = new Set<string>();
    for (let i = 0; i < rows.length; i += DUPLICATE_CHECK_CHUNK) {
      const chunk = rows.slice(i, i + DUPLICATE_CHECK_CHUNK);
      const result = await clickhouse.query({
        query: `SELECT ${kind.idColumn} AS id FROM ${kind.table} WHERE link_id IN {links:Array(String)} AND ${kind.idColumn} IN {ids:Array(String)}`,
        query_params: { links: [...new Set(chunk.map((r) => r.link_id))], ids: chunk.map(idOf) },
        format: 'JSONEachRow',
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

  /** Retries until it succeeds, or until stopping (then the batch stays unacked for redelivery). */
  async function untilDone(what: string, messages: BusMessage[], action: () => Promise<void>): Promise<boolean> {
    let backoffMs = 100;
    for (;;) {
      try {
        await action();
        return true;
      } catch (err) {
        stats.insertFailures++;
        logger.warn(`${what} failed; retrying`, { backoffMs, ...errorFields(err) });
        if (stopping) return false;
        for (const m of messages) m.working();
        await new Promise((r) => setTimeout(r, backoffMs));
        backoffMs = Math.min(5_000, backoffMs * 2);
      }
    }
  }

  interface Prepared {
    messages: BusMessage[];
    rows: Row[];
    parseMs: number;
  }

  /** Parses, drops what is stored already, dead-letters what never can be. Null: stopping mid-way. */
  async function prepare(messages: BusMessage[]): Promise<Prepared | null> {
    const started = performance.now();
    const parsed = messages.map((m) => parseMessage(kind, m));
    // A message and its redelivery can meet in one batch: keep each click id once.
    const seen = new Set<string>();
    let rows = parsed.flatMap((p) => p.rows).filter((r) => !seen.has(idOf(r)) && seen.add(idOf(r)));
    const bad = parsed.flatMap((p) => p.bad);
    const parseMs = performance.now() - started;
    const redeliveredRows = parsed.filter((_, i) => messages[i]!.deliveries > 1).flatMap((p) => p.rows);
    if (redeliveredRows.length > 0) {
      let stored = new Set<string>();
      if (!(await untilDone('duplicate check', messages, async () => void (stored = await alreadyStored(redeliveredRows))))) return null;
      if (stored.size > 0) {
        rows = rows.filter((r) => !stored.has(idOf(r)));
        stats.skippedDuplicates += stored.size;
      }
    }
    if (bad.length > 0 && !(await untilDone('dead-lettering', messages, () => deadLetter(bad)))) return null;
    return { messages, rows, parseMs };
  }

  /** Inserts, then acknowledges: a message is acked only once its events are stored. */
  async function store({ messages, rows, parseMs }: Prepared): Promise<void> {
    const started = performance.now();
    if (rows.length > 0) {
      const token = createHash('sha256').update(rows.map(idOf).join(',')).digest('hex');
      const inserted = await untilDone('insert', messages, async () => {
        await clickhouse.insert({ table: kind.table, values: rows, format: 'JSONEachRow', clickhouse_settings: { insert_deduplication_token: token } });
      });
      if (!inserted) return;
      stats.inserted += rows.length;
      let oldest = Number.POSITIVE_INFINITY;
      for (const r of rows) if (r.ts < oldest) oldest = r.ts;
      stats.lastBatchLagMs = Date.now() - oldest;
    }
    for (const m of messages) m.ack();
    logger.debug('batch stored', { kind: kind.name, messages: messages.length, rows: rows.length, parseMs: Math.round(parseMs), storeMs: Math.round(performance.now() - started) });
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
  const done = (async () => {
    const consumer = await bus.eventConsumer(deps.consumerName, kind.subject);
    let storing: Promise<void> = Promise.resolve();
    while (!stopping) {
      let messages: BusMessage[];
      try {
        messages = await consumer.fetch(deps.maxMessages, deps.lingerMs);
      } catch (err) {
        logger.warn('fetch failed; retrying', errorFields(err));
        await new Promise((r) => setTimeout(r, 500));
        continue;
      }
      if (messages.length === 0) continue;
      let prepared: Prepared | null = null;
      await guarded(messages, (async () => void (prepared = await prepare(messages)))());
      await storing;
      if (prepared) storing = guarded(messages, store(prepared));
    }
    await storing;
    consumer.close();
  })().catch((err) => logger.error('ingester stopped on an unexpected error', errorFields(err)));

  return {
    stats: () => ({ ...stats }),
    async stop() {
      stopping = true;
      await done;
    },
  };
}
