/**
 * Wrong-password throttle: at most `limit` failures per key in any sliding minute.
 *
 * Attempts are charged before the (slow) hash check and refunded when the password was
 * right, so a burst of concurrent guesses cannot all slip in before the first failure is
 * recorded. Memory is bounded (LRU over keys) whatever an attacker sends. One counter in
 * this process: the redirectors' counters agree by charging each other's failures as
 * they arrive (password-failure-share.ts), so `now` is always this process's clock.
 */
import { LRUCache } from 'lru-cache';

const WINDOW_MS = 60_000;
const MAX_KEYS = 100_000;

export class PasswordThrottle {
  readonly limit: number;
  /** Per key: times of charged attempts inside the window, oldest first. */
  readonly #attempts: LRUCache<string, number[]>;

  constructor(limit: number, maxKeys = MAX_KEYS) {
    this.limit = limit;
    this.#attempts = new LRUCache({ max: maxKeys });
  }

  #recent(key: string, now: number): number[] | undefined {
    const times = this.#attempts.get(key);
    if (times === undefined) return undefined;
    let expired = 0;
    while (expired < times.length && times[expired]! <= now - WINDOW_MS) expired++;
    if (expired > 0) times.splice(0, expired);
    return times;
  }

  /** Seconds until `key` may try again; 0 when it may try now. */
  retryAfter(key: string, now: number): number {
    const times = this.#recent(key, now);
    if (times === undefined || times.length < this.limit) return 0;
    // Allowed again once enough of the oldest attempts leave the window.
    const freedAt = times[times.length - this.limit]! + WINDOW_MS;
    return Math.max(1, Math.ceil((freedAt - now) / 1000));
  }

  /** Charges an attempt at `now`; refund(key, now) when it turns out right. */
  charge(key: string, now: number): void {
    const times = this.#recent(key, now);
    if (times === undefined) this.#attempts.set(key, [now]);
    else times.push(now);
  }

  refund(key: string, chargedAt: number): void {
    const times = this.#attempts.get(key);
    if (times === undefined) return;
    const at = times.lastIndexOf(chargedAt);
    if (at !== -1) times.splice(at, 1);
  }
}
