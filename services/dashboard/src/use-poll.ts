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
 * visible (a hidden tab spends no quota) and the quota is not running low; once
 * more when the page shows again, for what it missed. Returns the rate limit
 * state while the quota keeps polling paused, else null.
 */
export function usePoll(refresh: () => void, intervalMs: number, enabled = true): RateLimitState | null {
  const [rate, setRate] = useState(rateLimitState.get());
  const [visible, setVisible] = useState(document.visibilityState === 'visible');
  const low = quotaLow(rate);
  // What the visibility listener (added once) must call, as of the last render.
  const latest = useRef({ refresh, resume: false });
  latest.current = { refresh, resume: enabled && !low };
  useEffect(() => rateLimitState.subscribe(() => setRate(rateLimitState.get())), []);
  useEffect(() => {
    const onChange = () => {
      const shown = document.visibilityState === 'visible';
      setVisible(shown);
      // Shown again: one refresh now for what was missed, rather than a full interval of old figures.
      if (shown && latest.current.resume) latest.current.refresh();
    };
    document.addEventListener('visibilitychange', onChange);
    return () => document.removeEventListener('visibilitychange', onChange);
  }, []);

  const polling = enabled && visible && !low;
  useEffect(() => {
    if (!polling) return;
    const timer = setInterval(refresh, intervalMs);
    return () => clearInterval(timer);
  }, [polling, refresh, intervalMs]);

  return low ? rate : null;
}
