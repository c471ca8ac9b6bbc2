import type { Lease } from './bus.ts';

interface Claim {
  expiresAt: number;
}

/** Leases inside one process: the same rules as on NATS (expiry, renew, release), one clock. */
export function memoryLeases(): { tryLease(name: string, ttlMs: number): Lease | null } {
  const claims = new Map<string, Claim>();
  return {
    tryLease(name, ttlMs) {
      const current = claims.get(name);
      if (current && current.expiresAt > Date.now()) return null;
      // A fresh object per holder: a holder whose claim was replaced no longer finds its own.
      const mine: Claim = { expiresAt: Date.now() + ttlMs };
      claims.set(name, mine);
      return {
        async renew() {
          if (claims.get(name) !== mine) return false;
          mine.expiresAt = Date.now() + ttlMs;
          return true;
        },
        async release() {
          if (claims.get(name) === mine) claims.delete(name);
        },
      };
    },
  };
}
