import { useEffect, useRef, useState } from 'preact/hooks';
import { rateLimitState, type RateLimitState } from './api.ts';

/**
 * Below this share of the hour's requests left, automatic refreshes stop: the
 * quota is the whole workspace's, and its own integrations need it more than a
 * dashboard tab left open (a 15 s poll alone costs 240 requests an hour).
 */
export const POLL_QUOTA_SHARE = 0.25;

export const quotaLow = (rate: RateLimitState | null): boolean => rate !== null && rate.remaining < rate.limit * POLL_QUOTA_SHARE;

/**
 * Calls `refresh` every `intervalMs` while `enabled`, only while the page is
 * visible (a hidden tab spends no quota) and the quota is not running low, and never
 * while the last load is still `busy`: a poll slower than the interval would otherwise
 * be cancelled and sent again without end (each one already counted against the quota,
 * and never reaching the load's timeout). Shown again after a hidden spell, it refreshes
 * at once only if the last refresh is an interval old. Returns the rate limit state
 * while the quota keeps polling paused, else null.
 */
export function usePoll(refresh: () => void, intervalMs: number, options: { enabled?: boolean; busy: boolean }): RateLimitState | null {
  const enabled = options.enabled ?? true;
  const [rate, setRate] = useState(rateLimitState.get());
  const [visible, setVisible] = useState(document.visibilityState === 'visible');
  const low = quotaLow(rate);
  // What the timer and the visibility listener must read, as of the last render.
  const latest = useRef({ refresh, resume: false, busy: options.busy });
  latest.current = { refresh, resume: enabled && !low, busy: options.busy };
  // The view's own first load counts as a refresh.
  const lastAt = useRef(Date.now());
  const poll = () => {
    if (latest.current.busy) return;
    lastAt.current = Date.now();
    latest.current.refresh();
  };
  useEffect(() => rateLimitState.subscribe(() => setRate(rateLimitState.get())), []);
  useEffect(() => {
    const onChange = () => {
      const shown = document.visibilityState === 'visible';
      setVisible(shown);
      // Shown again after missing a refresh: one now, rather than a full interval of old figures.
      if (shown && latest.current.resume && Date.now() - lastAt.current >= intervalMs) poll();
    };
    document.addEventListener('visibilitychange', onChange);
    return () => document.removeEventListener('visibilitychange', onChange);
  }, [intervalMs]);

  const polling = enabled && visible && !low;
  useEffect(() => {
    if (!polling) return;
    const timer = setInterval(poll, intervalMs);
    return () => clearInterval(timer);
  }, [polling, intervalMs]);

  return low ? rate : null;
}
