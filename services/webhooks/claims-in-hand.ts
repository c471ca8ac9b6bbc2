import { errorFields, type Logger } from '../../shared/logger.ts';
import type { DeliveryStore } from './delivery-store.ts';

/**
 * Renewals come at least this often however long the claim (by default 62 s): a renewal
 * that fails or comes late (a slow Postgres, a busy event loop) leaves room for several more
 * before a claim runs out.
 */
const RENEW_AT_LEAST_EVERY_MS = 5_000;

/**
 * Claims on the deliveries this sender holds, kept alive. A claim is sized for a delivery's
 * wait in its lane and its attempt (claimMs), but a delivery can be held longer (a full
 * lane behind slow endpoints, a slow Postgres recording its outcome): past its claim
 * another sender, or this one's own retry sweep, would take it up while it is still held
 * here, and POST it a second time under the same webhook-id. So every third of a claim (at
 * most RENEW_AT_LEAST_EVERY_MS) one statement renews the claims set half a period ago or
 * more, to a claim from then, on Postgres's clock. Most deliveries are held well under
 * half a period (an attempt of a few milliseconds): their claims are left alone, so
 * a sender keeping up writes nothing more (renewing every claim held, some 1,400 at 10,000
 * deliveries a second, took 120-220 ms a statement here, its row locks in the way of the
 * outcomes' writes).
 *
 * Invariants: a delivery is held from the moment its claim is known until its outcome is
 * recorded, or it is handed back or given up (`release`), or a renewal finds it no longer
 * this sender's (`lost`: another sender took it up, say after this one stalled for a whole
 * claim); a renewal writes only rows still carrying the claim this sender last wrote. A
 * sender that dies stops renewing, so its deliveries are due again one claim after its last
 * renewal. A renewal that fails is logged and tried again at the next one.
 */
export interface ClaimsInHand {
  /** Keeps the delivery's claim alive; `claimUntil` is the claim as the store returned it. */
  hold(deliveryId: string, claimUntil: string): void;
  /** No longer kept alive: its outcome is recorded, or it was handed back or given up. */
  release(deliveryIds: Iterable<string>): void;
  /** Stops renewing (shutdown, once nothing is held); claims still held run out. */
  stop(): void;
}

export function claimsInHand(deps: {
  store: Pick<DeliveryStore, 'claimMs' | 'renewClaims'>;
  logger: Logger;
  /** Deliveries a renewal found no longer this sender's (no longer held here either). */
  lost(deliveryIds: string[]): void;
}): ClaimsInHand {
  const { store, logger } = deps;
  const everyMs = Math.min(store.claimMs / 3, RENEW_AT_LEAST_EVERY_MS);
  /** Delivery id -> the claim this sender last wrote, and when (performance.now()). */
  const held = new Map<string, { claimUntil: string; at: number }>();
  let timer: NodeJS.Timeout | null = null;
  let stopped = false;

  async function renew(): Promise<void> {
    // Claims set half a period ago or more: one set later is renewed at the next renewal,
    // by a period and a half of its age, well inside the claim (three periods or more).
    const due = performance.now() - everyMs / 2;
    const sent = new Map<string, { claimUntil: string; at: number }>();
    for (const [id, claim] of held) if (claim.at <= due) sent.set(id, claim);
    if (sent.size === 0) return;
    const renewedAt = performance.now();
    const { renewed, lost } = await store.renewClaims(new Map([...sent].map(([id, claim]) => [id, claim.claimUntil])));
    // A delivery released while the renewal ran (its outcome recorded, say) is not held again.
    const unchanged = (id: string) => held.get(id) === sent.get(id);
    for (const [id, claimUntil] of renewed) if (unchanged(id)) held.set(id, { claimUntil, at: renewedAt });
    const gone = lost.filter(unchanged);
    if (gone.length === 0) return;
    for (const id of gone) held.delete(id);
    deps.lost(gone);
  }

  // One renewal at a time, the next a period after the last one ended: a slow one is not
  // overtaken by another that would find its own claims already moved.
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      renew()
        .catch((err) => logger.warn('webhook delivery claims not renewed; trying again at the next renewal', { deliveries: held.size, ...errorFields(err) }))
        .finally(schedule);
    }, everyMs);
    timer.unref();
  };
  schedule();

  return {
    hold(deliveryId, claimUntil) {
      if (!stopped) held.set(deliveryId, { claimUntil, at: performance.now() });
    },
    release(deliveryIds) {
      for (const id of deliveryIds) held.delete(id);
    },
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      held.clear();
    },
  };
}
