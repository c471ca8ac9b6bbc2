import { errorFields, type Logger } from '../../../shared/logger.ts';

export interface OutboxDrainer {
  /** Publishes everything queued; concurrent callers share one run. Resolves when the queue was empty once. */
  flush(): Promise<void>;
  /** Publishes leftovers (from crashes, bus outages, other writers) every `intervalMs`. */
  start(intervalMs: number): void;
  stop(): Promise<void>;
}

/**
 * Drains a transactional outbox (rows queued in Postgres with the change that made
 * them) by calling `publishBatch` until it returns less than a full batch.
 * `publishBatch` takes its rows with SKIP LOCKED and deletes them once published, so
 * several API instances may drain at once.
 *
 * Flush calls are numbered. A pass reads the queue after every call numbered up to
 * `covers` had committed its change, so when the pass ends those calls are done: a
 * caller waits for at most the pass running now and the next one, never for a
 * whole busy period of passes triggered by later changes.
 */
export function outboxDrainer(publishBatch: () => Promise<number>, batchSize: number, logger: Logger, what: string): OutboxDrainer {
  let timer: NodeJS.Timeout | null = null;
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
          while ((await publishBatch()) === batchSize);
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

  const drainer: OutboxDrainer = {
    flush() {
      const mine = ++requested;
      const published = new Promise<void>((resolve, reject) => waiters.push({ upTo: mine, resolve, reject }));
      running ??= passes();
      return published;
    },
    start(intervalMs) {
      timer = setInterval(() => {
        drainer.flush().catch((err) => logger.warn(`${what} publish failed; will retry`, errorFields(err)));
      }, intervalMs);
      timer.unref();
    },
    async stop() {
      if (timer) clearInterval(timer);
      // Let a pass under way end (its failure is its own loop's to report).
      await Promise.allSettled([running]);
    },
  };
  return drainer;
}
