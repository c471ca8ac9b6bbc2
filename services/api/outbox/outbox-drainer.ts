import { errorFields, type Logger } from '../../../shared/logger.ts';

/** What one batch took. */
export interface BatchTaken {
  count: number;
  /**
   * Keys of queued rows that another transaction held, which the take passed by (SKIP
   * LOCKED): another API instance's batch publishing them, or a change queuing them
   * again. They may not be on the bus yet, so the drainer has the next batch wait for
   * them first. Looked for only by a batch that is not full, or that took every direct
   * row (directDone: then those of the direct lane); empty where the outbox does not wait
   * for them.
   */
  held: readonly string[];
  /**
   * The batch left rows it could have taken: one of its lanes' bounds was reached (the
   * snapshot outbox's fan-out lane). Without it, a full batch (batchSize rows) means so.
   */
  more?: boolean;
  /**
   * The batch took every row of the direct lane but those in `held` (the snapshot outbox,
   * migration 0032), though it left fan-out rows: a flush({ directOnly }) made before its
   * take is answered once it is live (after a batch that waits for `held`), not at the end
   * of a fan-out's pass.
   */
  directDone?: boolean;
}

/**
 * One batch of an outbox: waits until the rows `waitFor` names are no longer held
 * (within a bound of the outbox's own), then takes up to a batch of rows (SKIP LOCKED),
 * publishes them, calls `live(taken)` once they are on the bus, then deletes them and
 * commits. Resolves with what it took (count 0: none were queued) once committed. A
 * rejection before `live` means its rows may not all be published (they stay queued).
 */
export type PublishBatch = (live: (taken: BatchTaken) => void, options: { waitFor: readonly string[] }) => Promise<BatchTaken>;

export interface OutboxDrainer {
  /**
   * Publishes everything queued; concurrent callers share one run. Resolves when what was
   * queued before the call is on the bus, rows another API instance was publishing included
   * (within what the publisher waits for them: see PublishBatch's `waitForHeld`).
   * `directOnly`: the caller's change queued direct rows only (a link written), so it is
   * answered once those are on the bus, not after a fan-out queued before it (see
   * BatchTaken.directDone); where batches say nothing of lanes, the same as a flush.
   */
  flush(options?: { directOnly?: boolean }): Promise<void>;
  /** Publishes leftovers (from crashes, bus outages, other writers) every `intervalMs`. */
  start(intervalMs: number): void;
  stop(): Promise<void>;
}

/**
 * Drains a transactional outbox (rows queued in Postgres with the change that made
 * them) by calling `publishBatch` until it takes less than a full batch (and says of no
 * more rows: see BatchTaken.more).
 * `publishBatch` takes its rows with SKIP LOCKED and deletes them once published, so
 * several API instances may drain at once. When a batch passed by rows another
 * transaction held, the pass ends with a batch that first waits for them, so a caller is
 * not answered while another instance's batch still holds its row unpublished.
 *
 * Flush calls are numbered. A pass reads the queue after every call numbered up to
 * `covers` had committed its change, so when the pass's last batch is live those
 * calls are done: a caller waits for at most the pass running now and the next one,
 * never for a whole busy period of passes triggered by later changes.
 *
 * A pass lasts until the queue is drained, a fan-out of thousands of rows included; a
 * directOnly call is answered within it, by the first batch taken after the call that
 * took every direct row (and once the rows it passed by are let go), so a change made
 * while a campaign's fan-out drains waits for one batch, not the fan-out.
 *
 * A batch's bookkeeping (deleting its rows, committing) is not waited for: callers are
 * answered once the rows are on the bus, and the next batch starts beside it. It cannot
 * take those rows, which stay locked until the commit; a change to one of their links
 * waits on that lock, so it is published after them, with a higher version. Batches
 * never publish at the same time, which is what lets a pass cover earlier calls.
 */
export function outboxDrainer(publishBatch: PublishBatch, batchSize: number, logger: Logger, what: string): OutboxDrainer {
  let timer: NodeJS.Timeout | null = null;
  let requested = 0;
  const waiters: Array<{ upTo: number; directOnly: boolean; resolve(): void; reject(err: unknown): void }> = [];
  let running: Promise<void> | null = null;
  /** Batches published whose bookkeeping is still under way. */
  const committing = new Set<Promise<void>>();

  /** Settles the waiters numbered up to `covers` (`directOnly`: only the directOnly ones). */
  function settle(covers: number, err?: unknown, directOnly = false): void {
    for (let i = waiters.length - 1; i >= 0; i--) {
      const w = waiters[i]!;
      if (w.upTo > covers || (directOnly && !w.directOnly)) continue;
      waiters.splice(i, 1);
      if (err === undefined) w.resolve();
      else w.reject(err);
    }
  }

  /** One batch, resolved with what it took as soon as its rows are live (or it ended without any). */
  function batchLive(waitFor: readonly string[]): Promise<BatchTaken> {
    return new Promise((resolve, reject) => {
      let published = false;
      const tail: Promise<void> = publishBatch(
        (taken) => {
          published = true;
          resolve(taken);
        },
        { waitFor },
      )
        .then(
          (taken) => resolve(taken),
          (err: unknown) => {
            if (!published) reject(err);
            // On the bus, but still queued: a later pass publishes them again (their current state, a higher version).
            else logger.warn(`${what} published, but its outbox rows were not cleared; they will be published again`, errorFields(err));
          },
        )
        .finally(() => committing.delete(tail));
      committing.add(tail);
    });
  }

  async function passes(): Promise<void> {
    let done = 0;
    try {
      while (done < requested) {
        const covers = requested;
        try {
          // One wait a pass: rows held elsewhere after it were queued after the wait began,
          // or their holder is stalled (the outbox bounds the wait).
          let waitFor: readonly string[] = [];
          let waited = false;
          /** DirectOnly calls up to this number are answered once the batch under way, which waited for their held rows, is live. */
          let directAfterWait = 0;
          for (;;) {
            // The batch's take reads the queue after every call made so far had committed its change.
            const batchCovers = requested;
            const taken = await batchLive(waitFor);
            waitFor = [];
            if (directAfterWait > 0) settle(directAfterWait, undefined, true);
            directAfterWait = 0;
            if (taken.count === batchSize || taken.more === true) {
              // A pass under way through a fan-out: the directOnly calls it covers need not wait for the rest.
              if (taken.directDone === true) {
                if (taken.held.length === 0) settle(batchCovers, undefined, true);
                else if (waiters.some((w) => w.directOnly && w.upTo <= batchCovers)) {
                  waitFor = taken.held;
                  directAfterWait = batchCovers;
                }
              }
              continue;
            }
            if (waited || taken.held.length === 0) break;
            waited = true;
            waitFor = taken.held;
          }
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
    flush(options) {
      const mine = ++requested;
      const directOnly = options?.directOnly === true;
      const published = new Promise<void>((resolve, reject) => waiters.push({ upTo: mine, directOnly, resolve, reject }));
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
      // Let a pass under way end (its failure is its own loop's to report), and its batches commit.
      await Promise.allSettled([running]);
      await Promise.allSettled([...committing]);
    },
  };
  return drainer;
}
