import type { BusMessage } from './bus.ts';

/**
 * How often messages in hand are said to be still in work: a tenth of the ack wait (10 s;
 * tests shorten it to 3 s), so a timer that fires late still comes well before it.
 */
export const KEEP_ALIVE_MS = 1_000;

/**
 * Bus messages taken and not yet acknowledged, handed back or handed over. Handling them
 * may outlast the ack wait (backpressure: a full dispatcher, slow endpoints, a slow
 * Postgres), after which the bus would hand them to another consumer, or to this one
 * again, while they are still in hand: sent twice. So each one held is told `working()`
 * every KEEP_ALIVE_MS. Invariant: a message is held from its fetch until it is acked or
 * nak'ed through this (or released to a holder of its own), never after: a nak'ed one
 * must come back.
 */
export interface MessagesInHand {
  hold(messages: Iterable<BusMessage>): void;
  ack(messages: Iterable<BusMessage>): void;
  nak(messages: Iterable<BusMessage>, delayMs?: number): void;
  /** No longer this holder's to keep alive: handed over to another that keeps it alive. */
  release(messages: Iterable<BusMessage>): void;
  /** Stops keeping alive; what is still held is left to the ack wait. */
  stop(): void;
}

export function messagesInHand(): MessagesInHand {
  const held = new Set<BusMessage>();
  const timer = setInterval(() => {
    for (const m of held) m.working();
  }, KEEP_ALIVE_MS);
  timer.unref();
  return {
    hold(messages) {
      for (const m of messages) held.add(m);
    },
    ack(messages) {
      for (const m of messages) {
        held.delete(m);
        m.ack();
      }
    },
    nak(messages, delayMs) {
      for (const m of messages) {
        held.delete(m);
        m.nak(delayMs);
      }
    },
    release(messages) {
      for (const m of messages) held.delete(m);
    },
    stop() {
      clearInterval(timer);
      held.clear();
    },
  };
}
