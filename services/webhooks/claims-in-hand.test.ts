import { afterEach, describe, expect, it } from 'vitest';
import type { Logger } from '../../shared/logger.ts';
import { claimsInHand, type ClaimsInHand } from './claims-in-hand.ts';
import type { RenewedClaims } from './delivery-store.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const logger = Object.fromEntries(['debug', 'info', 'warn', 'error'].map((level) => [level, () => {}])) as unknown as Logger;

/** Claims in hand over a store whose renewals end when the test says: claims of 30 ms, renewed every 10 ms. */
function withRenewals() {
  const renewals: Array<{ claims: ReadonlyMap<string, string>; end(result: RenewedClaims): void; fail(err: Error): void }> = [];
  const lost: string[] = [];
  const claims = claimsInHand({
    store: { claimMs: 30, renewClaims: (held) => new Promise<RenewedClaims>((end, fail) => renewals.push({ claims: new Map(held), end, fail })) },
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

  it('gives a write the claim at once, a renewal of it under way or not; a renewal ending after the take does not hold it again', async () => {
    const t = withRenewals();
    claims = t.claims;
    t.claims.hold('dlv_renewed', 'token-1');
    const renewal = await t.nextRenewal(1);
    expect([...renewal.claims]).toEqual([['dlv_renewed', 'token-1']]);
    // The renewal under way keeps the token: the write need not wait for it.
    expect(t.claims.take([['dlv_renewed', 'token-1']]).claims).toEqual(new Map([['dlv_renewed', 'token-1']]));
    renewal.end({ renewed: ['dlv_renewed'], lost: [] });
    // Taken: no renewal sends it any more.
    await sleep(40);
    expect(t.renewals.slice(1).some((r) => r.claims.has('dlv_renewed'))).toBe(false);
    expect(t.claims.take([['dlv_renewed', 'token-1']]).claims).toEqual(new Map());
  });

  it('a renewal that failed, or committed with its answer lost, leaves the claim held as it was: renewed again next time, and taken with the same token', async () => {
    const t = withRenewals();
    claims = t.claims;
    t.claims.hold('dlv_l', 'token-l');
    (await t.nextRenewal(1)).fail(new Error('connection reset'));
    const again = await t.nextRenewal(2);
    expect([...again.claims]).toEqual([['dlv_l', 'token-l']]);
    again.end({ renewed: ['dlv_l'], lost: [] });
    expect(t.claims.take([['dlv_l', 'token-l']]).claims).toEqual(new Map([['dlv_l', 'token-l']]));
    expect(t.lost).toEqual([]);
  });

  it('keeps claims alive again after a failed write; one found taken over by another sender is dropped, and a write then has no claim for it', async () => {
    const t = withRenewals();
    claims = t.claims;
    t.claims.hold('dlv_a', 'token-a');
    const taken = t.claims.take([['dlv_a', 'token-a']]);
    expect(taken.claims).toEqual(new Map([['dlv_a', 'token-a']]));
    taken.putBack();
    // Renewed as before the failed write.
    const renewal = await t.nextRenewal(1);
    expect([...renewal.claims]).toEqual([['dlv_a', 'token-a']]);
    renewal.end({ renewed: [], lost: ['dlv_a'] });
    await sleep(5);
    const again = t.claims.take([['dlv_a', 'token-a']]);
    expect(t.lost).toEqual(['dlv_a']);
    expect(again.claims).toEqual(new Map());
    // Nothing left held: no renewal asks for it.
    await sleep(40);
    expect(t.renewals).toHaveLength(1);
  });

  it('takes a claim only with its token: a delivery held with another (claimed again since) stays held, and renewed', async () => {
    const t = withRenewals();
    claims = t.claims;
    t.claims.hold('dlv_r', 'token-old');
    const first = t.claims.take([['dlv_r', 'token-old']]);
    // Its write's answer was lost: the old claim is put back, and the delivery is then claimed again here.
    first.putBack();
    t.claims.hold('dlv_r', 'token-new');
    // The old outcome written again takes nothing: the new claim is not its.
    const stale = t.claims.take([['dlv_r', 'token-old']]);
    expect(stale.claims).toEqual(new Map());
    // A failed write of it puts nothing back over the new claim.
    stale.putBack();
    const renewal = await t.nextRenewal(1);
    expect([...renewal.claims]).toEqual([['dlv_r', 'token-new']]);
    renewal.end({ renewed: ['dlv_r'], lost: [] });
    // Renewed, and still held: the next renewal due sends it again.
    await sleep(5);
    expect(t.claims.take([['dlv_r', 'token-old']]).claims).toEqual(new Map());
    const again = await t.nextRenewal(2);
    expect([...again.claims]).toEqual([['dlv_r', 'token-new']]);
    again.end({ renewed: ['dlv_r'], lost: [] });
    expect(t.claims.take([['dlv_r', 'token-new']]).claims).toEqual(new Map([['dlv_r', 'token-new']]));
    expect(t.lost).toEqual([]);
  });

  it('a failed write puts back only the claims it took', async () => {
    const t = withRenewals();
    claims = t.claims;
    t.claims.hold('dlv_p', 'token-p1');
    const taken = t.claims.take([['dlv_p', 'token-p1'], ['dlv_never', 'token-x']]);
    expect(taken.claims).toEqual(new Map([['dlv_p', 'token-p1']]));
    // Claimed again before the failed write puts the old claim back: the new one stays.
    t.claims.hold('dlv_p', 'token-p2');
    taken.putBack();
    const renewal = await t.nextRenewal(1);
    expect([...renewal.claims]).toEqual([['dlv_p', 'token-p2']]);
  });
});
