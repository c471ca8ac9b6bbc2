import type { Consumer, JsMsg } from 'nats';
import type { BusMessage } from './bus.ts';
import { messagesInHand } from './messages-in-hand.ts';

/** How long one pull request waits on the server for its batch (JetStream's least). */
const PULL_EXPIRES_MS = 1_000;

export interface ReadyReader {
  /** Up to `max` messages already here; waits up to `waitMs` only while none are. */
  take(max: number, waitMs: number): Promise<BusMessage[]>;
  /**
   * Stops pulling; what was read and not taken is handed back at once (nak), and so is
   * what the pull under way still brings (it ends within PULL_EXPIRES_MS).
   */
  close(): void;
}

/**
 * A durable consumer read as its messages arrive. A pull request is always open (one at
 * a time, the next as soon as one ends) and each message is handed over the moment it is
 * here, where `EventConsumer.fetch` holds its batch until it is full or its pull expires
 * (a second at least: a live trickle waited up to that, and a batch filling at 500
 * messages a second took a second). Bounded: a pull asks for at most `pullMax` messages
 * and for no more than the room left under `buffer`, so at most `buffer` messages are
 * held here unacknowledged, kept alive until taken: a caller busy for longer than the
 * ack wait (a full dispatcher) would otherwise find them handed out again meanwhile.
 */
export function natsReadyReader(consumer: Consumer, options: { buffer: number; pullMax: number }, wrap: (m: JsMsg) => BusMessage): ReadyReader {
  const { buffer, pullMax } = options;
  const queue: BusMessage[] = [];
  let closed = false;
  let arrived = null as (() => void) | null;
  let taken = null as (() => void) | null;
  let failure: unknown = null;
  const inHand = messagesInHand();

  void (async () => {
    while (!closed) {
      while (queue.length >= buffer && !closed) await new Promise<void>((r) => (taken = r));
      if (closed) break;
      const pull = await consumer.fetch({ max_messages: Math.min(pullMax, buffer - queue.length), expires: PULL_EXPIRES_MS });
      for await (const m of pull) {
        const message = wrap(m);
        if (closed) message.nak();
        else {
          queue.push(message);
          inHand.hold([message]);
          arrived?.();
        }
      }
    }
  })().catch((err: unknown) => {
    // Reported by the next take, whose caller backs off and replaces this reader.
    failure = err;
    arrived?.();
  });

  return {
    async take(max, waitMs) {
      if (queue.length === 0 && failure === null && !closed) {
        let timer: NodeJS.Timeout | undefined;
        await new Promise<void>((resolve) => {
          arrived = resolve;
          timer = setTimeout(resolve, waitMs);
        });
        clearTimeout(timer);
        arrived = null;
      }
      if (queue.length === 0 && failure !== null) throw failure;
      const out = queue.splice(0, max);
      // Handed over: keeping them alive is the caller's part from here, as after a fetch.
      inHand.release(out);
      taken?.();
      taken = null;
      return out;
    },
    close() {
      closed = true;
      inHand.nak(queue.splice(0));
      inHand.stop();
      taken?.();
      arrived?.();
    },
  };
}
