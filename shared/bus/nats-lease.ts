import { randomBytes } from 'node:crypto';
import type { KV } from 'nats';
import type { Lease } from './bus.ts';

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
  } catch {
    const current = await kv.get(name);
    if (current === null) return null; // taken and let go between our two calls: next time
    if (current.operation === 'PUT') {
      const held = JSON.parse(decoder.decode(current.value)) as Claim;
      if (held.expiresAt > Date.now()) return null;
    }
    try {
      revision = await kv.update(name, claim(), current.revision);
    } catch {
      return null; // another taker won
    }
  }
  return {
    async renew() {
      try {
        revision = await kv.update(name, claim(), revision);
        return true;
      } catch {
        return false; // taken over after it expired, or unreachable: either way not provably ours
      }
    },
    async release() {
      await kv.delete(name, { previousSeq: revision }).catch(() => {});
    },
  };
}
