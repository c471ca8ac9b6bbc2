import { useEffect, useRef, useState } from 'preact/hooks';
import { setQuery } from './router.ts';

/** Keys that move through a closed select's options, each firing change (Chrome and Firefox off macOS). */
const browsingKeys = new Set(['ArrowUp', 'ArrowDown', 'ArrowLeft', 'ArrowRight', 'Home', 'End', 'PageUp', 'PageDown']);
const SETTLE_MS = 400;

/**
 * Props for a <select> that sets one query parameter (WCAG 3.2.2). A closed select
 * changes on every arrow key: applying each would reload the view and push a
 * history entry per option passed. So a choice made by browsing with keys applies
 * once the user settles on it (400 ms, Enter, or leaving the field) and replaces
 * the entry; a pointer choice, or one committed with Enter, applies at once and
 * is an entry Back undoes.
 */
export function useQuerySelect(name: string, current: string) {
  const [pending, setPending] = useState<string | null>(null);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const browsing = useRef(false);
  const pendingRef = useRef<string | null>(null);
  useEffect(() => () => clearTimeout(timer.current), []);

  const apply = (value: string, replace: boolean) => {
    clearTimeout(timer.current);
    timer.current = undefined;
    pendingRef.current = null;
    setPending(null);
    setQuery({ [name]: value || undefined }, { replace });
  };
  const flush = () => {
    if (pendingRef.current !== null) apply(pendingRef.current, true);
  };

  return {
    value: pending ?? current,
    onKeyDown(event: KeyboardEvent) {
      if (event.key === 'Enter') flush();
      browsing.current = browsingKeys.has(event.key) || (event.key.length === 1 && event.key !== ' ' && !event.ctrlKey && !event.metaKey);
    },
    onChange(event: Event) {
      const value = (event.currentTarget as HTMLSelectElement).value;
      if (!browsing.current) return apply(value, false);
      browsing.current = false;
      pendingRef.current = value;
      setPending(value);
      clearTimeout(timer.current);
      timer.current = setTimeout(flush, SETTLE_MS);
    },
    onBlur: flush,
  };
}
