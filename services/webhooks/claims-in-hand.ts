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
 * for a whole claim). A claim is identified by its token, which renewals keep: what is held
 * for a delivery never changes but for when it was last renewed, so a renewal whose answer
 * was lost costs nothing but that time (the next renewal sends the claim again), and a write
 * needs no renewal to finish first. At most one claim is held per delivery: the latest one
 * this sender made (claimed again after its outcome was written, it holds the new claim).
 * An outcome is written with the token of the claim its attempt was made under, and takes
 * only that claim: a newer claim of the same delivery stays held, and no outcome but its
 * own attempt's is written with it. A renewal, an outcome and a hand-back each write only a
 * row still pending and carrying the token. A sender that dies stops renewing, so its
 * deliveries are due again one claim after its last renewal. A renewal that fails is logged
 * and tried again at the next one.
 */
export interface ClaimsInHand {
  /** Keeps the delivery's claim alive; `claimToken` is the claim's token as the store returned it. */
  hold(deliveryId: string, claimToken: string): void;
  /**
   * These claims (delivery id, token) no longer kept alive, for a write of their outcome or
   * their hand-back, which is made with those tokens; at once, whether or not a renewal of
   * them is under way (it leaves their tokens as they are, and does not hold them again
   * when it ends). Only a delivery held with that very token is taken: one held with
   * another (claimed again since: the claim asked for is spent) stays held, and renewed, as
   * it is; one not held at all (found taken up by another sender, even while its attempt
   * ran here, or released) has nothing to take.
   */
  take(claims: Iterable<readonly [deliveryId: string, claimToken: string]>): TakenClaims;
  /** No longer kept alive: it was given up. */
  release(deliveryIds: Iterable<string>): void;
  /** Stops renewing (shutdown, once nothing is held); claims still held run out. */
  stop(): void;
}

export interface TakenClaims {
  /** Delivery id -> token: the claims taken (those asked for that were held here with that token). */
  claims: ReadonlyMap<string, string>;
  /**
   * The write failed: the claims taken are kept alive again, as they were, until it is made
   * again; not over a claim of the same delivery held since.
   */
  putBack(): void;
}

interface HeldClaim {
  token: string;
  /** When it was set or last renewed (performance.now(), taken as the renewal was sent). */
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
  /**
   * Delivery id -> its claim. Each entry is replaced, never changed in place: a renewal
   * applies what it found only to an entry still the one it sent (the same object), so one
   * taken, released or held anew meanwhile is left as it is.
   */
  const held = new Map<string, HeldClaim>();
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
    const { renewed, lost } = await store.renewClaims(new Map([...sent].map(([id, claim]) => [id, claim.token])));
    // A delivery taken for its write or given up while the renewal ran is not held again
    // (after a failed write, putBack holds the very entry sent again: it is renewed or lost
    // as the renewal found it).
    const unchanged = (id: string) => held.has(id) && held.get(id) === sent.get(id);
    for (const id of renewed) if (unchanged(id)) held.set(id, { token: sent.get(id)!.token, at: renewedAt });
    const gone = lost.filter(unchanged);
    if (gone.length === 0) return;
    for (const id of gone) held.delete(id);
    deps.lost(gone);
  }

  // One renewal at a time, the next a period after the last one ended: a slow one is not
  // overtaken by another sending the same claims again.
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      const sent = dueForRenewal();
      if (sent.size === 0) return schedule();
      void renew(sent)
        .catch((err) => logger.warn('webhook delivery claims not renewed; trying again at the next renewal', { deliveries: held.size, ...errorFields(err) }))
        .finally(schedule);
    }, everyMs);
    timer.unref();
  };
  schedule();

  return {
    hold(deliveryId, claimToken) {
      if (!stopped) held.set(deliveryId, { token: claimToken, at: performance.now() });
    },
    take(claims) {
      const taken = new Map<string, HeldClaim>();
      for (const [id, token] of claims) {
        const claim = held.get(id);
        // Another token: the claim asked for is spent, and this one is the delivery's newer claim.
        if (!claim || claim.token !== token) continue;
        taken.set(id, claim);
        held.delete(id);
      }
      return {
        claims: new Map([...taken].map(([id, claim]) => [id, claim.token])),
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
