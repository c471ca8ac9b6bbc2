import { MAX_RETRY_DELAY_MS } from '../../shared/webhooks/failure-run.ts';

/**
 * When a failed delivery is tried again: exponential backoff with jitter, for a
 * window (24 h) after its first attempt. Attempt n failed -> wait about
 * base * 2^(n-1), up to `maxDelayMs`, each wait drawn from its upper half ("equal
 * jitter"), so retries of many deliveries spread out instead of arriving together.
 * The last attempt falls at the end of the window; after it the delivery has failed.
 */
export interface RetryPolicy {
  baseDelayMs: number;
  maxDelayMs: number;
  windowMs: number;
}

// Six hours at most between tries: some 15 attempts in 24 h at a 5 s base. Defined with
// the gap that ends an endpoint's run of failures, which the API reads too.
export { longestFailureGapMs, MAX_RETRY_DELAY_MS } from '../../shared/webhooks/failure-run.ts';

export const defaultRetryPolicy = (baseDelayMs: number, windowMs: number): RetryPolicy => ({
  baseDelayMs,
  maxDelayMs: Math.min(MAX_RETRY_DELAY_MS, windowMs / 4),
  windowMs,
});

/** Epoch ms of the next attempt after `attempts` failed ones, or null: give up. */
export function nextAttemptAt(policy: RetryPolicy, attempts: number, firstAttemptAt: number, now: number, random: () => number = Math.random): number | null {
  const end = firstAttemptAt + policy.windowMs;
  if (now >= end) return null;
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.min(attempts - 1, 40));
  const delay = ceiling / 2 + random() * (ceiling / 2);
  return Math.min(now + delay, end);
}
