import { LRUCache } from 'lru-cache';
import { hashApiKey } from '../../../shared/auth/api-key.ts';
import type { Principal } from '../../../shared/db/workspaces.ts';

/** Default of API_KEY_CACHE_MS: how long an instance may go on admitting a key after it was revoked. */
export const API_KEY_CACHE_MS = 1_000;

/** Keys one instance keeps at once (a few hundred bytes each). */
const CACHE_ENTRIES = 50_000;

interface Kept {
  principal: Principal;
  /** When the lookup that found it was sent: its answer reflects Postgres at some time after this. */
  askedAt: number;
}

export interface KeyCache {
  /** The principal behind a presented key (looked up by its SHA-256), or null when unknown or revoked. */
  principal(presentedKey: string): Promise<Principal | null>;
}

/**
 * The principal behind a key, looked up in Postgres at most once per `ttlMs` per key
 * and instance, instead of once per request: the lookup was a round trip on every
 * authenticated request, as costly as the request's own statement (issue 18's
 * profile). Concurrent requests with a key not kept share one lookup.
 *
 * Bound: an answer is used only while `now() - askedAt < ttlMs`, `askedAt` being when
 * its lookup was sent (before Postgres read the row), so a key revoked at time R (or
 * a plan or scope changed then) is refused (or limited as changed) by every instance
 * from R + ttlMs on, whatever the number of instances. Unknown and revoked keys are
 * never kept: a key issued now works at once. ttlMs 0 looks every key up every time.
 * Keys are kept by their hash, as Postgres keeps them, never in clear.
 */
export function keyCache(lookup: (keyHash: string) => Promise<Principal | null>, options: { ttlMs: number; now?: () => number }): KeyCache {
  const { ttlMs } = options;
  const now = options.now ?? Date.now;
  const kept = new LRUCache<string, Kept>({ max: CACHE_ENTRIES });
  const asking = new Map<string, { answer: Promise<Principal | null>; askedAt: number }>();
  const fresh = (askedAt: number) => now() - askedAt < ttlMs;

  function ask(keyHash: string): Promise<Principal | null> {
    const askedAt = now();
    const answer = lookup(keyHash).then(
      (principal) => {
        if (principal && ttlMs > 0) kept.set(keyHash, { principal, askedAt });
        else kept.delete(keyHash);
        return principal;
      },
    );
    const mine = { answer, askedAt };
    asking.set(keyHash, mine);
    // A later lookup of the same key may have replaced this one meanwhile: it stays.
    const done = () => asking.get(keyHash) === mine && asking.delete(keyHash);
    answer.then(done, done);
    return answer;
  }

  return {
    principal(presentedKey) {
      const keyHash = hashApiKey(presentedKey);
      const hit = kept.get(keyHash);
      if (hit && fresh(hit.askedAt)) return Promise.resolve(hit.principal);
      // A lookup under way is shared while it is as fresh as a kept answer must be.
      const pending = asking.get(keyHash);
      return pending && fresh(pending.askedAt) ? pending.answer : ask(keyHash);
    },
  };
}
