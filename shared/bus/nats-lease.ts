import { randomBytes } from 'node:crypto';
import type { KV } from 'nats';
import type { Lease } from './bus.ts';
import { isJetStreamError, isUnreachable, jetStreamErrors } from './jetstream-errors.ts';

interface Claim {
  holder: string;
  /** Epoch ms: after this anyone may take the lease. */
  expiresAt: number;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * Leases as keys of one KV bucket, changed only by compare-and-set on the key's
 * revision: `create` when the key is absent (or deleted), otherwise an update
 * expecting the revision read, allowed only once the claim there has expired. Of
 * two processes racing for a free or expired lease, exactly one write succeeds.
 * The expiry is in the value (each lease has its own ttl), checked against the
 * taker's clock.
 */
export async function natsTryLease(kv: KV, name: string, ttlMs: number): Promise<Lease | null> {
  const holder = `${process.pid}-${randomBytes(6).toString('hex')}`;
  const claim = () => encoder.encode(JSON.stringify({ holder, expiresAt: Date.now() + ttlMs } satisfies Claim));
  let revision: number;
  try {
    revision = await kv.create(name, claim());
  } catch (err) {
    if (!isJetStreamError(err, jetStreamErrors.wrongLastSequence)) throw err; // not "the key exists"
    const current = await kv.get(name);
    if (current === null) return null; // taken and let go between our two calls: next time
    if (current.operation === 'PUT') {
      const held = JSON.parse(decoder.decode(current.value)) as Claim;
      if (held.expiresAt > Date.now()) return null;
    }
    try {
      revision = await kv.update(name, claim(), current.revision);
    } catch (err) {
      if (isJetStreamError(err, jetStreamErrors.wrongLastSequence)) return null; // another taker won
      throw err;
    }
  }
  return {
    async renew() {
      try {
        revision = await kv.update(name, claim(), revision);
        return true;
      } catch (err) {
        // Taken over after it expired, or NATS unreachable (a timeout, a closed connection): either way not provably ours.
        if (isJetStreamError(err, jetStreamErrors.wrongLastSequence) || isUnreachable(err)) return false;
        throw err;
      }
    },
    async release() {
      try {
        await kv.delete(name, { previousSeq: revision });
      } catch (err) {
        // Taken over meanwhile: not ours to delete; unreachable: it expires by itself.
        if (!isJetStreamError(err, jetStreamErrors.wrongLastSequence) && !isUnreachable(err)) throw err;
      }
    },
  };
}
