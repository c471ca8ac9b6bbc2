import { createHash } from 'node:crypto';
import type { ClickHouseClient } from '@clickhouse/client';
import type { Bus, BusMessage } from '../../shared/bus/bus.ts';
import { DEAD_LETTER_SUBJECT, FORGED_DEAD_LETTER_SUBJECT } from '../../shared/bus/bus.ts';
import { errorFields, type Logger } from '../../shared/logger.ts';
import type { EventOrigin } from '../../shared/click-id-origin.ts';
import { EventBatch, type BatchBody } from './event-batch.ts';
import type { EventRowBase, EventTable } from './event-tables.ts';
import { insertBatch, insertsUnderWayDone } from './insert-batch.ts';
import { readMessage } from './read-message.ts';
import { storedEventIds } from './stored-event-ids.ts';
import { NothingRecorded, unfinishedInserts } from './unfinished-inserts.ts';
import { openEventConsumer } from '../../shared/bus/open-event-consumer.ts';
import { messagesInHand } from '../../shared/bus/messages-in-hand.ts';

export interface IngesterStats {
  /** Rows inserted into ClickHouse. */
  inserted: number;
  /** Inserts that stored rows: inserted / inserts is the rows per insert the engine gets (its cost per row falls with it). */
  inserts: number;
  /** Events skipped because a redelivered message's event was already stored. */
  skippedDuplicates: number;
  /** Inserts another ingester left unfinished (failed, maybe in part), replayed here (unfinished-inserts.ts); their rows count in `inserted`. */
  replayedInserts: number;
  /** Lines that could never be stored, sent to the dead-letter subject. */
  deadLettered: number;
  /** Valid events that no redirector of this deployment sent (see shared/click-id-origin.ts), sent to the forged dead-letter subject. */
  forged: number;
  insertFailures: number;
  /** Milliseconds between the oldest event of the last batch and its insert. */
  lastBatchLagMs: number;
}

/** 'opening' its consumer (waiting out NATS), 'reading', or 'stopped' (asked to, or on an error it logged). */
export type IngesterState = 'opening' | 'reading' | 'stopped';

export interface Ingester {
  stats(): IngesterStats;
  state(): IngesterState;
  /**
   * Stops fetching, finishes (inserts and acks) the batch in hand, then resolves. With
   * `drain`, it first goes on until a fetch finds nothing: for the in-process bus, whose
   * events would not outlive the process (NATS keeps them for the next ingester).
   */
  stop(options?: { drain?: boolean }): Promise<void>;
}

const encoder = new TextEncoder();

/** What a batch's record of its failed insert (unfinished-inserts.ts) may have left on the bus. */
type RecordState = 'none' | 'maybe' | 'written';

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
 *   hold up the rest; with `genuine`, so does a forged event (to its own subject),
 *   and neither is ever stored. Their messages are acknowledged like any other.
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
  /** Events failing it are forged: dead-lettered, never stored. Clicks: clickIdOrigin (startEventIngesters passes it). */
  genuine?: EventOrigin;
}): Ingester {
  const { bus, clickhouse, logger, kind } = deps;
  const stats: IngesterStats = { inserted: 0, inserts: 0, skippedDuplicates: 0, replayedInserts: 0, deadLettered: 0, forged: 0, insertFailures: 0, lastBatchLagMs: 0 };
  let stopping = false;
  let draining = false;
  const unfinished = unfinishedInserts(bus, kind.table);

  /** Publishes each line to `subject` and counts it; a line published twice (a retry) is dropped by the bus. */
  async function deadLetter(subject: string, lines: string[], counter: 'deadLettered' | 'forged'): Promise<void> {
    for (const line of lines) {
      const id = createHash('sha256').update(line).digest('hex').slice(0, 32);
      await bus.publishEvent(subject, encoder.encode(line), `dead-${id}`);
      stats[counter]++;
    }
    if (counter === 'forged') logger.warn('forged events dead-lettered (click id not issued by a redirector with this LINKROUTE_SECRET)', { count: lines.length, subject });
    else logger.warn('invalid events dead-lettered', { count: lines.length, subject });
  }

  /**
   * Retries until it succeeds, or until stopping (then the batch stays unacked for
   * redelivery). Its messages are in `inHand` meanwhile, which keeps them ours.
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

  /** The latest bus connection that any batch came on (see BusMessage.connection). */
  let latestConnection = 0;

  /** The batch's events, each once; the lines that can never be stored (invalid, forged). */
  function parse(messages: BusMessage[], bytes: number, stored: ReadonlySet<string>): { batch: EventBatch<Body>; bad: string[]; forged: string[] } {
    // Encoded rows are smaller than their JSON lines: the body rarely has to grow.
    // A message and its redelivery can meet in one batch: the batch keeps each event id once.
    const batch = new EventBatch(kind.newBody(bytes + 4096), { skip: stored });
    const bad: string[] = [];
    const forged: string[] = [];
    for (const m of messages) {
      const read = readMessage(kind, m.data, batch, deps.genuine);
      bad.push(...read.invalid);
      forged.push(...read.forged);
    }
    return { batch, bad, forged };
  }

  /**
   * Parses, drops what is stored already, dead-letters what never can be. Null: stopping mid-way.
   *
   * Exactly once, whatever `deliveries` says (a NATS server that crashed hands out again,
   * as first deliveries, messages it had delivered and even had acknowledged): every batch's
   * events are checked against what ClickHouse has, so an event is inserted only when it is
   * not stored. A check cannot see an insert still under way, so a batch that may hold
   * messages being inserted elsewhere right now waits for those inserts first: one with a
   * redelivered message (its earlier holder may still be storing it), and the first ones
   * after a reconnect (inserts that were under way when the connection was lost, here or in
   * other ingesters that lost theirs with it). A batch whose connection is lost before its
   * insert starts is not inserted at all (see store).
   */
  async function prepare(messages: BusMessage[], inFlight: Promise<void>): Promise<Prepared | null> {
    const started = performance.now();
    let bytes = 0;
    let connection = 0;
    let redelivered = false;
    for (const m of messages) {
      bytes += m.data.byteLength;
      connection = Math.max(connection, m.connection);
      redelivered ||= m.deliveries > 1;
    }
    if (redelivered || connection > latestConnection) {
      await inFlight;
      if (!(await untilDone('waiting for inserts under way', () => waitForInsertsUnderWay()))) return null;
      // Before the check: what an insert that failed in part left out of the rollups is
      // filled in by its replay, and the check then finds its events stored (unfinished-inserts.ts).
      if (!(await untilDone('finishing unfinished inserts', () => finishUnfinishedInserts()))) return null;
      latestConnection = Math.max(latestConnection, connection);
    }
    let { batch, bad, forged } = parse(messages, bytes, new Set());
    let stored: ReadonlySet<string> = new Set();
    if (batch.count > 0 && !(await untilDone('duplicate check', async () => void (stored = await storedEventIds(clickhouse, kind, batch))))) return null;
    if (stored.size > 0) {
      stats.skippedDuplicates += stored.size;
      ({ batch, bad, forged } = parse(messages, bytes, stored));
    }
    const parseMs = performance.now() - started;
    if (bad.length > 0 && !(await untilDone('dead-lettering', () => deadLetter(DEAD_LETTER_SUBJECT, bad, 'deadLettered')))) return null;
    if (forged.length > 0 && !(await untilDone('dead-lettering', () => deadLetter(FORGED_DEAD_LETTER_SUBJECT, forged, 'forged')))) return null;
    return { messages, batch, parseMs };
  }

  async function finishUnfinishedInserts(): Promise<void> {
    await unfinished.finishAll(
      (body, token) => insertBatch(clickhouse, kind, body, token),
      (rows) => {
        stats.replayedInserts++;
        stats.inserted += rows;
        logger.warn('replayed an insert that another ingester left unfinished', { kind: kind.name, rows });
      },
    );
  }

  async function waitForInsertsUnderWay(): Promise<void> {
    if (!(await insertsUnderWayDone(clickhouse, kind))) logger.warn('inserts under way did not finish within a minute; going on', { kind: kind.name });
  }

  /**
   * Inserts, then acknowledges: a message is acked only once its events are stored. A batch
   * whose bus connection was lost before an insert attempt starts goes back unstored: the
   * bus may have handed its messages to another ingester, whose check could not see this
   * insert; they come back and are checked again.
   */
  async function store({ messages, batch, parseMs }: Prepared): Promise<void> {
    const started = performance.now();
    const connectionLost = () => messages.some((m) => m.connectionLost());
    if (batch.count > 0) {
      // The same events give the same token, however often this insert is retried.
      const token = createHash('sha256').update(batch.ids.join(',')).digest('hex');
      const body = batch.body.bytes();
      let abandoned = false;
      let record: RecordState = 'none';
      const inserted = await untilDone('insert', async () => {
        if (connectionLost()) {
          abandoned = true;
          return;
        }
        try {
          await insertBatch(clickhouse, kind, body, token);
        } catch (err) {
          // It may have landed in part: kept for whoever gets these messages if this ingester lets them go.
          if (record !== 'written') {
            const attempt = await recordUnfinished(token, body, batch.count);
            if (attempt !== 'none') record = attempt;
          }
          throw err;
        }
      });
      if (!inserted) return;
      if (abandoned) {
        logger.info('bus connection lost before the insert: batch returned unstored, to be checked again', { kind: kind.name, messages: messages.length });
        inHand.nak(messages);
        return;
      }
      // Forgotten before the ack (unfinished-inserts.ts), a record whose write was reported
      // failed too (it may have landed): stopping first leaves the messages unacked, so it is replayed soon.
      if (record !== 'none' && !(await untilDone('forgetting a finished insert', () => unfinished.forget(token)))) return;
      stats.inserted += batch.count;
      stats.inserts++;
      stats.lastBatchLagMs = Date.now() - batch.oldestTs;
    }
    inHand.ack(messages);
    logger.debug('batch stored', { kind: kind.name, messages: messages.length, rows: batch.count, parseMs: Math.round(parseMs), storeMs: Math.round(performance.now() - started) });
  }

  /**
   * What a record attempt left on the bus: all of it, maybe some (a write failed or its reply
   * was lost: to be forgotten all the same), or nothing. A bus that cannot take it leaves the
   * batch as before (unfinished-inserts.ts: not covered).
   */
  async function recordUnfinished(token: string, body: Buffer, rows: number): Promise<RecordState> {
    try {
      await unfinished.record(token, body, rows);
      return 'written';
    } catch (err) {
      logger.warn('could not record a failed insert for replay; retrying it here', { kind: kind.name, ...errorFields(err) });
      return err instanceof NothingRecorded ? 'none' : 'maybe';
    }
  }

  /** A batch that failed for an unexpected reason goes back for redelivery; ingestion goes on. */
  const guarded = (messages: BusMessage[], work: Promise<void>) =>
    work.catch((err) => {
      logger.error('batch failed unexpectedly; returned for redelivery', { messages: messages.length, ...errorFields(err) });
      inHand.nak(messages, 1_000);
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
  const inHand = messagesInHand();

  let state: IngesterState = 'opening';
  const done = (async () => {
    const consumer = await openEventConsumer(bus, { name: deps.consumerName, subject: kind.subject }, { logger, stopped: () => stopping });
    if (consumer === null) return;
    state = 'reading';
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
      inHand.hold(messages);
      let prepared: Prepared | null = null;
      const previous = storing;
      await guarded(messages, (async () => void (prepared = await prepare(messages, previous)))());
      await storing;
      storing = (prepared ? guarded(messages, store(prepared)) : Promise.resolve()).finally(() => inHand.release(messages));
    }
    await storing;
    consumer.close();
  })()
    .catch((err) => logger.error('ingester stopped on an unexpected error', errorFields(err)))
    .finally(() => {
      state = 'stopped';
      inHand.stop();
    });

  return {
    stats: () => ({ ...stats }),
    state: () => state,
    async stop(options = {}) {
      draining = options.drain === true;
      stopping = true;
      await done;
    },
  };
}
