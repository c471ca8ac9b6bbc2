import { afterEach, describe, expect, it } from 'vitest';
import type { Logger } from '../../shared/logger.ts';
import { claimsInHand, type ClaimsInHand, type TakenClaims } from './claims-in-hand.ts';
import type { RenewedClaims } from './delivery-store.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const logger = Object.fromEntries(['debug', 'info', 'warn', 'error'].map((level) => [level, () => {}])) as unknown as Logger;

/** Claims in hand over a store whose renewals end when the test says: claims of 30 ms, renewed every 10 ms. */
function withRenewals() {
  const renewals: Array<{ claims: ReadonlyMap<string, string>; end(result: RenewedClaims): void }> = [];
  const lost: string[] = [];
  const claims = claimsInHand({
    store: { claimMs: 30, renewClaims: (held) => new Promise<RenewedClaims>((end) => renewals.push({ claims: new Map(held), end })) },
    logger,
    lost: (ids) => lost.push(...ids),
  });
  /** The next renewal, once it has asked the store. */
  const nextRenewal = async (n: number) => {
    while (renewals.length < n) await sleep(2);
    return renewals[n - 1]!;
  };
  return { claims, renewals, lost, nextRenewal };
}

describe('claims in hand, taken for a write of outcomes or hand-backs', () => {
  let claims: ClaimsInHand | undefined;
  afterEach(() => claims?.stop());

  it('gives a write the claim a renewal under way sets, waiting for it; a claim no renewal is moving at once', async () => {
    const t = withRenewals();
    claims = t.claims;
    t.claims.hold('dlv_renewed', 'claim-1');
    const renewal = await t.nextRenewal(1);
    expect([...renewal.claims]).toEqual([['dlv_renewed', 'claim-1']]);
    // Held after the renewal began: not in it, so taken at once.
    t.claims.hold('dlv_fresh', 'claim-f');
    expect((await t.claims.take(['dlv_fresh'])).claims).toEqual(new Map([['dlv_fresh', 'claim-f']]));

    let taken: TakenClaims | undefined;
    const taking = t.claims.take(['dlv_renewed']).then((c) => (taken = c));
    await sleep(30);
    // Written with claim-1 now, it would find its own row moved by the renewal, and leave it.
    expect(taken).toBeUndefined();
    renewal.end({ renewed: new Map([['dlv_renewed', 'claim-2']]), lost: [] });
    expect((await taking).claims).toEqual(new Map([['dlv_renewed', 'claim-2']]));
    // Taken: no renewal sends it any more.
    await sleep(40);
    expect(t.renewals.slice(1).some((r) => r.claims.has('dlv_renewed'))).toBe(false);
  });

  it('keeps claims alive again after a failed write; one found taken over by another sender is dropped, and a write then has no claim for it', async () => {
    const t = withRenewals();
    claims = t.claims;
    t.claims.hold('dlv_a', 'claim-a');
    const taken = await t.claims.take(['dlv_a']);
    expect(taken.claims).toEqual(new Map([['dlv_a', 'claim-a']]));
    taken.putBack();
    // Renewed as before the failed write.
    const renewal = await t.nextRenewal(1);
    expect([...renewal.claims]).toEqual([['dlv_a', 'claim-a']]);
    renewal.end({ renewed: new Map(), lost: ['dlv_a'] });
    const again = await t.claims.take(['dlv_a']);
    expect(t.lost).toEqual(['dlv_a']);
    expect(again.claims).toEqual(new Map());
    // Nothing left held: no renewal asks for it.
    await sleep(40);
    expect(t.renewals).toHaveLength(1);
  });
});
