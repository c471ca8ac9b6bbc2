import type { AttemptResult } from './delivery-store.ts';

/**
 * The first attempt of a delivery that is not stored yet. The fan-out waits a moment for
 * it, then inserts the delivery once, holding the attempt's outcome when it came in time:
 * one write per delivery instead of an insert and an update. An attempt still running when
 * the fan-out stops waiting is stored as claimed by this sender, and its outcome is written
 * like any later attempt's, once that insert has landed; from then on its claim is kept
 * alive like any other (`claimToken`).
 *
 * Invariant: exactly one of the two happens, decided synchronously: `offer` (from the
 * dispatcher) before `storeWithout` (from the fan-out) hands the outcome to the insert;
 * after it, `offer` is refused and the dispatcher waits for `stored`.
 */
export class FirstAttempt {
  #outcome: AttemptResult | null | undefined = undefined;
  #stored: Promise<string | null> | null = null;
  #finish!: () => void;
  #settleClaim!: (claimToken: string | null | Promise<string | null>) => void;
  /** Settles when the attempt has finished, or was not made. */
  readonly finished = new Promise<void>((resolve) => (this.#finish = resolve));
  /**
   * The token of the claim the insert set, once it landed: null when there is none to keep
   * alive (the outcome went into the insert, the insert failed, or it stored no row for
   * this delivery).
   */
  readonly claimToken = new Promise<string | null>((resolve) => (this.#settleClaim = resolve));

  /** The outcome if it came in time; null: not attempted (its endpoint is gone or disabled); undefined: still running. */
  get outcome(): AttemptResult | null | undefined {
    return this.#outcome;
  }

  /** The dispatcher's outcome. false: the delivery was stored without it; wait for `stored`, then record it as any attempt's. */
  offer(outcome: AttemptResult | null): boolean {
    if (this.#stored) return false;
    this.#outcome = outcome;
    this.#finish();
    this.#settleClaim(null);
    return true;
  }

  /**
   * The fan-out stops waiting: `insert` stores the delivery claimed, without an outcome,
   * and resolves to the token of the claim it set (null: it failed, or stored no row for this delivery).
   */
  storeWithout(insert: Promise<string | null>): void {
    this.#stored = insert;
    this.#settleClaim(insert);
  }

  /**
   * Whether the delivery's row exists as stored here (false: the insert failed, and the bus
   * hands its event out again; or the delivery was stored before, under another id). Settles
   * after `claimToken`'s reactions registered before it: a claim is held before the outcome
   * is written (which carries that token, and takes the claim from claims-in-hand).
   */
  get stored(): Promise<boolean> {
    return this.#stored ? this.claimToken.then((claimToken) => claimToken !== null) : Promise.resolve(true);
  }
}
