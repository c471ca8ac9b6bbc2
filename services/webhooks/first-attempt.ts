import type { AttemptResult } from './delivery-store.ts';

/**
 * The first attempt of a delivery that is not stored yet. The fan-out waits a moment for
 * it, then inserts the delivery once, holding the attempt's outcome when it came in time:
 * one write per delivery instead of an insert and an update. An attempt still running when
 * the fan-out stops waiting is stored as claimed by this sender, and its outcome is written
 * like any later attempt's, once that insert has landed.
 *
 * Invariant: exactly one of the two happens, decided synchronously: `offer` (from the
 * dispatcher) before `storeWithout` (from the fan-out) hands the outcome to the insert;
 * after it, `offer` is refused and the dispatcher waits for `stored`.
 */
export class FirstAttempt {
  #outcome: AttemptResult | null | undefined = undefined;
  #stored: Promise<boolean> | null = null;
  #finish!: () => void;
  /** Settles when the attempt has finished, or was not made. */
  readonly finished = new Promise<void>((resolve) => (this.#finish = resolve));

  /** The outcome if it came in time; null: not attempted (its endpoint is gone or disabled); undefined: still running. */
  get outcome(): AttemptResult | null | undefined {
    return this.#outcome;
  }

  /** The dispatcher's outcome. false: the delivery was stored without it; wait for `stored`, then record it as any attempt's. */
  offer(outcome: AttemptResult | null): boolean {
    if (this.#stored) return false;
    this.#outcome = outcome;
    this.#finish();
    return true;
  }

  /** The fan-out stops waiting: `insert` stores the delivery claimed, without an outcome (resolves false if it failed). */
  storeWithout(insert: Promise<boolean>): void {
    this.#stored = insert;
  }

  /** Whether the delivery's row exists (false: the insert failed, and the bus hands its event out again). */
  get stored(): Promise<boolean> {
    return this.#stored ?? Promise.resolve(true);
  }
}
