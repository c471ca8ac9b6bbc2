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
 * lane behind slow endpoints, a slow attempt): past its claim
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
 * to be written, or it is handed back (`take`) or given up (`release`), or a renewal finds
 * it no longer this sender's (`lost`: another sender took it up, say after this one stalled
 * for a whole claim); a renewal writes only rows still carrying the claim this sender last
 * wrote, and so do an outcome and a hand-back, with the claim `take` gives them. A sender
 * that dies stops renewing, so its deliveries are due again one claim after its last
 * renewal. A renewal that fails is logged and tried again at the next one.
 */
export interface ClaimsInHand {
  /** Keeps the delivery's claim alive; `claimUntil` is the claim as the store returned it. */
  hold(deliveryId: string, claimUntil: string): void;
  /**
   * No longer kept alive, for a write of their outcome or their hand-back, which is made
   * with the claims returned: resolves once no renewal of them is under way, as one ending
   * after the write began would move the claim the write compares, and the write would
   * take its own delivery for one another sender took over. A delivery not held here
   * (found taken up by another sender, even while its attempt ran here) has no claim.
   */
  take(deliveryIds: Iterable<string>): Promise<TakenClaims>;
  /** No longer kept alive: it was given up. */
  release(deliveryIds: Iterable<string>): void;
  /** Stops renewing (shutdown, once nothing is held); claims still held run out. */
  stop(): void;
}

export interface TakenClaims {
  /** Delivery id -> the claim this sender last wrote. */
  claims: ReadonlyMap<string, string>;
  /** The write failed: the claims are kept alive again, as they were, until it is made again. */
  putBack(): void;
}

interface HeldClaim {
  claimUntil: string;
  /** When it was set (performance.now()). */
  at: number;
}

export function claimsInHand(deps: {
  store: Pick<DeliveryStore, 'claimMs' | 'renewClaims'>;
  logger: Logger;
  /** Deliveries a renewal found no longer this sender's (no longer held here either). */
  lost(deliveryIds: string[]): void;
}): ClaimsInHand {
  const { store, logger } = deps;
  const everyMs = Math.min(store.claimMs / 3, RENEW_AT_LEAST_EVERY_MS);
  /** Delivery id -> the claim this sender last wrote. */
  const held = new Map<string, HeldClaim>();
  /** The renewal under way: the claims it sent, and its end (after its outcome is applied to `held`). */
  let renewal: { sent: ReadonlyMap<string, HeldClaim>; ended: Promise<void> } | null = null;
  let timer: NodeJS.Timeout | null = null;
  let stopped = false;

  function dueForRenewal(): Map<string, HeldClaim> {
    // Claims set half a period ago or more: one set later is renewed at the next renewal,
    // by a period and a half of its age, well inside the claim (three periods or more).
    const due = performance.now() - everyMs / 2;
    const sent = new Map<string, HeldClaim>();
    for (const [id, claim] of held) if (claim.at <= due) sent.set(id, claim);
    return sent;
  }

  async function renew(sent: ReadonlyMap<string, HeldClaim>): Promise<void> {
    const renewedAt = performance.now();
    const { renewed, lost } = await store.renewClaims(new Map([...sent].map(([id, claim]) => [id, claim.claimUntil])));
    // A delivery given up while the renewal ran is not held again (one taken waits for it).
    const unchanged = (id: string) => held.get(id) === sent.get(id);
    for (const [id, claimUntil] of renewed) if (unchanged(id)) held.set(id, { claimUntil, at: renewedAt });
    const gone = lost.filter(unchanged);
    if (gone.length === 0) return;
    for (const id of gone) held.delete(id);
    deps.lost(gone);
  }

  /** The end of the renewal under way if it sent any of these claims (it may move them). */
  function renewalOf(ids: readonly string[]): Promise<void> | null {
    const r = renewal;
    return r && ids.some((id) => r.sent.has(id)) ? r.ended : null;
  }

  // One renewal at a time, the next a period after the last one ended: a slow one is not
  // overtaken by another that would find its own claims already moved.
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      const sent = dueForRenewal();
      if (sent.size === 0) return schedule();
      const ended = renew(sent)
        .catch((err) => logger.warn('webhook delivery claims not renewed; trying again at the next renewal', { deliveries: held.size, ...errorFields(err) }))
        .finally(() => {
          renewal = null;
          schedule();
        });
      renewal = { sent, ended };
    }, everyMs);
    timer.unref();
  };
  schedule();

  return {
    hold(deliveryId, claimUntil) {
      if (!stopped) held.set(deliveryId, { claimUntil, at: performance.now() });
    },
    async take(deliveryIds) {
      const ids = [...deliveryIds];
      for (let ended = renewalOf(ids); ended; ended = renewalOf(ids)) await ended;
      // From here no renewal sends them: they are no longer held.
      const taken = new Map<string, HeldClaim>();
      for (const id of ids) {
        const claim = held.get(id);
        if (!claim) continue;
        taken.set(id, claim);
        held.delete(id);
      }
      return {
        claims: new Map([...taken].map(([id, claim]) => [id, claim.claimUntil])),
        putBack() {
          // As set then, so the next renewal renews one that is due; not over a claim held since.
          if (stopped) return;
          for (const [id, claim] of taken) if (!held.has(id)) held.set(id, claim);
        },
      };
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
