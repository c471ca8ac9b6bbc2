import { useEffect, useRef, useState } from 'preact/hooks';
import { setQuery } from './router.ts';

/** Keys that move through a closed select's options, each firing change (Chrome and Firefox off macOS). */
const browsingKeys = new Set(['ArrowUp', 'ArrowDown', 'ArrowLeft', 'ArrowRight', 'Home', 'End', 'PageUp', 'PageDown']);
const SETTLE_MS = 400;

/**
 * Props for a <select>, given its committed value and what committing does. A
 * closed select changes on every arrow key (and on type-ahead): committing each
 * would act on every option passed. So a choice made by browsing with keys is
 * pending until the user settles on it (Enter, leaving the field, or, with
 * `settleMs`, that long without a key; Escape drops it); a pointer choice commits
 * at once. `commit` is told whether the choice was browsed to with keys.
 */
export function useDeliberateSelect(current: string, commit: (value: string, browsed: boolean) => void, settleMs: number | null) {
  const [pending, setPending] = useState<string | null>(null);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const browsing = useRef(false);
  const pendingRef = useRef<string | null>(null);
  useEffect(() => () => clearTimeout(timer.current), []);

  const settle = (value: string | null, browsed: boolean) => {
    clearTimeout(timer.current);
    timer.current = undefined;
    pendingRef.current = null;
    setPending(null);
    if (value !== null && value !== current) commit(value, browsed);
  };
  const flush = () => {
    if (pendingRef.current !== null) settle(pendingRef.current, true);
  };

  return {
    value: pending ?? current,
    onKeyDown(event: KeyboardEvent) {
      if (event.key === 'Enter') flush();
      if (event.key === 'Escape' && pendingRef.current !== null) {
        // The field goes back to what is committed (Preact sets only what changed).
        (event.currentTarget as HTMLSelectElement).value = current;
        settle(null, true);
      }
      browsing.current = browsingKeys.has(event.key) || (event.key.length === 1 && event.key !== ' ' && !event.ctrlKey && !event.metaKey);
    },
    onChange(event: Event) {
      const value = (event.currentTarget as HTMLSelectElement).value;
      if (!browsing.current) return settle(value, false);
      browsing.current = false;
      pendingRef.current = value;
      setPending(value);
      clearTimeout(timer.current);
      if (settleMs !== null) timer.current = setTimeout(flush, settleMs);
    },
    onBlur: flush,
  };
}

/**
 * Props for a <select> that sets one query parameter (WCAG 3.2.2): applying each
 * keyboard step would reload the view and push a history entry per option passed.
 * A choice browsed to with keys applies once the user settles on it (400 ms,
 * Enter, or leaving the field) and replaces the entry; a pointer choice, or one
 * committed with Enter, applies at once and is an entry Back undoes.
 */
export function useQuerySelect(name: string, current: string) {
  return useDeliberateSelect(current, (value, browsed) => setQuery({ [name]: value || undefined }, { replace: browsed }), SETTLE_MS);
}
