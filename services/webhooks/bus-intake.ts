import type { BusMessage, EventConsumer } from '../../shared/bus/bus.ts';
import { errorFields, type Logger } from '../../shared/logger.ts';
import type { Dispatcher } from './dispatcher.ts';

export interface BusIntake {
  /** Stops fetching; resolves once the batch in hand is handled (or handed back). */
  stop(): Promise<void>;
}

/**
 * A loop over a durable consumer: fetch, handle, acknowledge. `handle` stores what
 * the messages mean before it returns, so a crash before the ack only means the
 * messages come again (every store is idempotent). A failed batch is handed back
 * for redelivery after a pause. Fetching waits while the dispatcher is full.
 */
export function startBusIntake(deps: {
  consumer: EventConsumer;
  handle(messages: BusMessage[]): Promise<void>;
  dispatcher: Dispatcher;
  logger: Logger;
  name: string;
  maxMessages: number;
  /**
   * `arrival`: messages are handled as they come (a batch is what came meanwhile), for
   * latency. `batches`: a batch waits up to a second to fill, so messages close together
   * on the bus are handled together by one sender, in order.
   */
  take: 'arrival' | 'batches';
}): BusIntake {
  let stopped = false;
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  const loop = (async () => {
    let backoffMs = 100;
    while (!stopped) {
      if (deps.dispatcher.freeCapacity() < deps.maxMessages) {
        await sleep(10);
        continue;
      }
      let messages: BusMessage[] = [];
      try {
        messages = deps.take === 'arrival' ? await deps.consumer.fetchReady(deps.maxMessages, 1_000) : await deps.consumer.fetch(deps.maxMessages, 1_000);
        if (messages.length === 0) continue;
        await deps.handle(messages);
        for (const m of messages) m.ack();
        backoffMs = 100;
      } catch (err) {
        deps.logger.warn(`webhook ${deps.name} intake failed; retrying`, { messages: messages.length, ...errorFields(err) });
        for (const m of messages) m.nak(backoffMs);
        await sleep(backoffMs);
        backoffMs = Math.min(5_000, backoffMs * 2);
      }
    }
  })();

  return {
    async stop() {
      stopped = true;
      await loop;
      deps.consumer.close();
    },
  };
}
