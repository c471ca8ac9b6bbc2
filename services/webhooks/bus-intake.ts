import type { BusMessage, EventConsumer } from '../../shared/bus/bus.ts';
import { messagesInHand } from '../../shared/bus/messages-in-hand.ts';
import { errorFields, type Logger } from '../../shared/logger.ts';
import type { Dispatcher } from './dispatcher.ts';

/** Batches one arrival-mode intake handles at once. */
const BATCHES_AT_ONCE = 4;

export interface BusIntake {
  /** Stops fetching; resolves once the batch in hand is handled (or handed back). */
  stop(): Promise<void>;
}

/**
 * A loop over a durable consumer: fetch, handle, acknowledge. `handle` stores what
 * the messages mean before it returns, so a crash before the ack only means the
 * messages come again (every store is idempotent). A failed batch is handed back
 * for redelivery after a pause. Fetching waits while the dispatcher is full. Messages
 * are kept alive while handled, however long that takes (waiting for the dispatcher,
 * for first attempts, for Postgres): past the ack wait the bus would hand them to
 * another sender meanwhile, and both would send them.
 */
export function startBusIntake(deps: {
  consumer: EventConsumer;
  handle(messages: BusMessage[]): Promise<void>;
  dispatcher: Pick<Dispatcher, 'freeCapacity'>;
  logger: Logger;
  name: string;
  maxMessages: number;
  /**
   * `arrival`: messages are handled as they come (a batch is what came meanwhile), for
   * latency, up to `BATCHES_AT_ONCE` batches at once, as a batch's handling waits for
   * its first attempts. `batches`: a batch waits up to a second to fill, so messages
   * close together on the bus are handled together by one sender, in order, one batch
   * at a time.
   */
  take: 'arrival' | 'batches';
}): BusIntake {
  let stopped = false;
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const atOnce = deps.take === 'arrival' ? BATCHES_AT_ONCE : 1;
  const handling = new Set<Promise<void>>();
  let backoffMs = 100;
  let pausedUntil = 0;
  const inHand = messagesInHand();

  async function handle(messages: BusMessage[]): Promise<void> {
    try {
      await deps.handle(messages);
      inHand.ack(messages);
      backoffMs = 100;
    } catch (err) {
      deps.logger.warn(`webhook ${deps.name} intake failed; retrying`, { messages: messages.length, ...errorFields(err) });
      inHand.nak(messages, backoffMs);
      pausedUntil = Date.now() + backoffMs;
      backoffMs = Math.min(5_000, backoffMs * 2);
    }
  }

  const loop = (async () => {
    while (!stopped) {
      if (handling.size >= atOnce) {
        await Promise.race(handling);
        continue;
      }
      if (Date.now() < pausedUntil) {
        await sleep(pausedUntil - Date.now());
        continue;
      }
      if (deps.dispatcher.freeCapacity() < deps.maxMessages) {
        await sleep(10);
        continue;
      }
      let messages: BusMessage[];
      try {
        messages = deps.take === 'arrival' ? await deps.consumer.fetchReady(deps.maxMessages, 1_000) : await deps.consumer.fetch(deps.maxMessages, 1_000);
      } catch (err) {
        deps.logger.warn(`webhook ${deps.name} intake failed; retrying`, { messages: 0, ...errorFields(err) });
        pausedUntil = Date.now() + backoffMs;
        backoffMs = Math.min(5_000, backoffMs * 2);
        continue;
      }
      if (messages.length === 0) continue;
      inHand.hold(messages);
      const handled: Promise<void> = handle(messages).finally(() => handling.delete(handled));
      handling.add(handled);
    }
    await Promise.all(handling);
  })();

  return {
    async stop() {
      stopped = true;
      await loop;
      inHand.stop();
      deps.consumer.close();
    },
  };
}
